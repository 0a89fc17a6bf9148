"""What the analyses' results share: ``to_frame()`` of the dataclass results, and
:class:`Analysis`, how a run exposes one.

``OverviewSummary``, ``InputPipelineSummary`` and ``TfDataSummary`` hold scalars and tables;
``to_frame()`` gives a summary's figures as a two-column (name, value) table
(schema.SUMMARY_FRAME), leaving out its tables, dicts and the lists of sentences it names in
``_not_in_frame``, which are fields of their own.

:class:`StepCount` is the one way every text (the run's summary, the overview, the command
line, the report, compare) counts and names a run's steps.
"""

from __future__ import annotations

import dataclasses
import importlib
from collections.abc import Callable

import pandas as pd

from .step_edges import edge_steps_kept

__all__ = ["Analysis", "StepCount", "Summary", "plural"]


class Summary:
    """Mixin for the result dataclasses."""

    _not_in_frame: tuple[str, ...] = ()

    def to_frame(self) -> pd.DataFrame:
        """The figures, one row each: name, value."""
        rows = [
            (f.name, getattr(self, f.name))
            for f in dataclasses.fields(self)
            if f.name not in self._not_in_frame
            and not isinstance(getattr(self, f.name), (pd.DataFrame, pd.Series, dict))
        ]
        return pd.DataFrame(rows, columns=["name", "value"])


@dataclasses.dataclass(frozen=True)
class Analysis:
    """One analysis: ``run.<name>`` is ``<module>.<function>(run)``, computed once.

    ``function`` is ``"module:function"`` with the module relative to the analysis package;
    ``returns`` is a table of :mod:`tfprof_widgets.schema` (in capitals: a DataFrame with
    those columns) or the name of the result's type.
    """

    name: str
    function: str
    returns: str

    @property
    def table(self) -> str | None:
        """The schema table of a DataFrame result, else None."""
        return self.returns if self.returns.isupper() else None

    def resolve(self) -> Callable:
        module, _, func = self.function.partition(":")
        return getattr(importlib.import_module(module, __package__), func)


def plural(n: int, word: str, many: str | None = None) -> str:
    """``"1 step"``, ``"2 steps"``, ``"0 steps"``: a count and its noun, in English."""
    return f"{n:,} {word if n == 1 else (many or word + 's')}"


@dataclasses.dataclass(frozen=True)
class StepCount:
    """How many steps a run has, counted one way everywhere.

    A *step* is a step number in ``run.steps`` (XProf's step database: the steps whose
    time it can break down), counted once however many hosts ran it. The overview
    *averages* over the steps :func:`.steps.overview_steps` keeps: XProf leaves out each
    host's first and last step when the host has more than five (the capture window
    usually cuts them), so ``averaged`` can be two fewer than ``steps``.
    """

    steps: int  # distinct step numbers in run.steps
    first: int | None  # the lowest and highest step number (None without steps)
    last: int | None
    hosts: int  # hosts with at least one step
    averaged: int  # distinct step numbers the overview averages over
    averaged_first: int | None
    averaged_last: int | None
    compiling: int = 0  # steps left out as mostly compile (ours)
    edges: bool = True  # whether the first and last steps are left out (XProf's rule)

    @classmethod
    def of(cls, steps: pd.DataFrame, kept: pd.DataFrame) -> StepCount:
        """From a steps table (``run.steps``) and the rows of it the overview keeps."""

        def numbers(t: pd.DataFrame) -> tuple[int, int | None, int | None]:
            if not len(t):
                return 0, None, None
            s = pd.unique(t["step"].to_numpy())
            return len(s), int(s.min()), int(s.max())

        n, first, last = numbers(steps)
        k, kfirst, klast = numbers(kept)
        hosts = int(steps["host"].nunique()) if len(steps) else 0
        edge_kept = edge_steps_kept(steps) if len(steps) else steps
        compiling = max(len(edge_kept) - len(kept), 0)
        edges = len(edge_kept) < len(steps)
        return cls(n, first, last, hosts, k, kfirst, klast, compiling, edges)

    @staticmethod
    def _span(first: int | None, last: int | None) -> str:
        return str(first) if first == last else f"{first}..{last}"

    def _on(self) -> str:
        return f" on {self.hosts} hosts" if self.hosts > 1 else ""

    def numbers(self) -> str:
        """The count without its noun: ``"8 (0..7) on 2 hosts"``, ``"1 (0)"``, ``"0"``."""
        if not self.steps:
            return "0"
        return f"{self.steps:,} ({self._span(self.first, self.last)}){self._on()}"

    def __str__(self) -> str:
        """``"8 steps (0..7) on 2 hosts"``, ``"1 step (0)"``, ``"0 steps"``."""
        if not self.steps:
            return plural(0, "step")
        return f"{plural(self.steps, 'step')} ({self._span(self.first, self.last)}){self._on()}"

    EDGES = "XProf leaves out each host's first and last step"

    @property
    def DROPPED(self) -> str:  # noqa: N802 (read as the constant it was)
        """Why steps are left out of the averages: XProf's first and last per host, and
        (ours) the steps that are mostly XLA compile."""
        compiling = (
            f"{plural(self.compiling, 'step')} mostly compiling the program left out "
            "(ours; XProf averages them in)"
        )
        if self.compiling and self.edges:
            return f"{self.EDGES}; {compiling}"
        return compiling if self.compiling else self.EDGES

    def averaged_text(self) -> str:
        """Which steps the overview's averages cover: ``"all 4 steps"``, ``"the one
        step"``, ``"steps 1..6"`` (then :attr:`dropped` says why)."""
        if not self.averaged:
            return "no step"
        if self.averaged == self.steps:
            return "the one step" if self.steps == 1 else f"all {self.steps:,} steps"
        if self.averaged == 1:
            return f"step {self.averaged_first}"
        return f"{self.averaged:,} steps ({self._span(self.averaged_first, self.averaged_last)})"

    @property
    def dropped(self) -> bool:
        """Whether the overview leaves steps out (XProf's first and last per host)."""
        return 0 < self.averaged < self.steps

    def summary_line(self) -> str:
        """The run summary's line: ``"steps: 10 (0..9); the overview averages 8 steps
        (1..8): XProf leaves out each host's first and last step"``."""
        line = f"steps: {self.numbers()}"
        if self.dropped:
            line += f"; the overview averages {self.averaged_text()}: {self.DROPPED}"
        return line
