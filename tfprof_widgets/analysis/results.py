"""What the analyses' results share: ``to_frame()`` of the dataclass results, and
:class:`Analysis`, how a run exposes one.

``OverviewSummary``, ``InputPipelineSummary`` and ``TfDataSummary`` hold scalars and tables;
``to_frame()`` gives a summary's figures as a two-column (name, value) table
(schema.SUMMARY_FRAME), leaving out its tables, dicts and the lists of sentences it names in
``_not_in_frame``, which are fields of their own.
"""

from __future__ import annotations

import dataclasses
import importlib
from collections.abc import Callable

import pandas as pd

__all__ = ["Analysis", "Summary"]


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
