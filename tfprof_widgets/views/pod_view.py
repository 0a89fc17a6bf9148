"""The pod viewer: step time per host, stacked by category and sorted by the slowest, with the
straggler and what makes it slow named.

It reads a long table of steps — one row per (host, step) with the step-time category columns
in µs, the shape of ``run.steps`` (``schema.STEPS``) — through :func:`pod_summary`, so anything
that can produce that table (a Run, a pod-scale dataset's ``per_host_steps()``) feeds it.
"""

from __future__ import annotations

import pandas as pd

from ..analysis.steps import CATEGORIES, CATEGORY_LABELS, overview_steps
from ._common import slowest_first_bars
from .base import Choice, Html, Plot, Plots, TableBlock, View
from .page.display import esc
from .tables import Column, Table

__all__ = ["PodViewerView", "pod_summary", "pod_viewer", "straggler"]

MAX_STEP_CHOICES = 32
AVERAGE = "avg"
TIE = 0.01  # hosts within 1 % of the median host: no straggler


def pod_summary(steps: pd.DataFrame) -> pd.DataFrame:
    """Per host: its steps, their average time and category breakdown (µs), and how far it
    is from the median host; slowest host first.

    ``steps``: one row per (host, step) with ``host``, ``step`` and the step-time category
    columns (``schema.STEPS``: ``device_compute_us``, ``input_us``...), e.g. ``run.steps``.
    Columns out: ``host``, ``steps``, ``step_time_us``, each category, ``behind_median_us``
    (this host's average step time minus the median host's), ``rank`` (1 = slowest).
    """
    missing = [c for c in ("host", "step", *CATEGORIES) if c not in steps]
    if missing:
        raise ValueError(
            "the pod viewer needs one row per (host, step) with the step-time categories; "
            f"missing columns: {missing} (pass run.steps or a pod's per_host_steps())"
        )
    s = steps.copy()
    if "step_time_us" not in s:
        s["step_time_us"] = s[list(CATEGORIES)].sum(axis=1)
    s["host"] = s["host"].astype(str)
    g = s.groupby("host", sort=False)
    out = g[["step_time_us", *CATEGORIES]].mean()
    out.insert(0, "steps", g.size())
    out = out.reset_index()
    out["behind_median_us"] = out["step_time_us"] - out["step_time_us"].median()
    out = out.sort_values(["step_time_us", "host"], ascending=[False, True], kind="stable")
    out["rank"] = range(1, len(out) + 1)
    return out.reset_index(drop=True)


def straggler(summary: pd.DataFrame) -> dict | None:
    """The slowest host of a :func:`pod_summary` and its cause: the category in which it
    exceeds the median of the other hosts most. None with fewer than two hosts, or when the
    slowest is within :data:`TIE` of the others' median (no straggler)."""
    if len(summary) < 2:
        return None
    slow = summary.iloc[0]
    others = summary.iloc[1:]
    if slow["step_time_us"] <= (1 + TIE) * others["step_time_us"].median():
        return None
    excess = {c: float(slow[c] - others[c].median()) for c in CATEGORIES}
    cause = max(excess, key=excess.get)
    med = float(others["step_time_us"].median())
    return {
        "host": slow["host"],
        "step_time_us": float(slow["step_time_us"]),
        "median_us": med,
        "behind_us": float(slow["step_time_us"]) - med,
        "cause": cause,
        "cause_label": CATEGORY_LABELS[cause],
        "cause_excess_us": excess[cause],
    }


def _steps_of(source) -> pd.DataFrame:
    if isinstance(source, pd.DataFrame):
        return source
    if hasattr(source, "per_host_steps") and callable(source.per_host_steps):
        return source.per_host_steps()
    steps = getattr(source, "steps", None)
    if isinstance(steps, pd.DataFrame):
        return steps
    raise TypeError(
        f"pod_viewer takes a Run, a steps table or an object with per_host_steps(); got "
        f"{type(source).__name__}"
    )


class PodViewerView(View):
    title = "Pod viewer: step time per host"

    def __init__(self, source) -> None:
        self.source = source
        steps = _steps_of(source)
        if "step_time_us" not in steps and set(CATEGORIES) <= set(steps):
            steps = steps.assign(step_time_us=steps[list(CATEGORIES)].sum(axis=1))
        self.steps = overview_steps(steps) if "host" in steps and len(steps) else steps
        self.summary = pod_summary(self.steps)
        self.straggler = straggler(self.summary)

    def step_options(self) -> list:
        """The steps offered beside the average: those whose hosts differ most (read by
        :meth:`choices`, which the view asks once: ``View._choice_list``)."""
        if self.steps["step"].nunique() < 2:
            return []
        wide = self.steps.pivot_table(
            index="step", columns="host", values="step_time_us", aggfunc="max", observed=True
        )
        spread = (wide.max(axis=1) - wide.min(axis=1)).sort_values(ascending=False)
        picked = sorted(spread.index[:MAX_STEP_CHOICES].tolist())
        return [(f"step {s} (spread {spread[s] / 1e3:,.2f} ms)", str(s)) for s in picked]

    def choices(self) -> list[Choice]:
        opts = self.step_options()
        if not opts:
            return []
        return [Choice("step", "Show", AVERAGE, [("average over the steps", AVERAGE), *opts])]

    def figure(self, step: str = AVERAGE):
        if step == AVERAGE:
            frame, what = self.summary, "average step"
        else:
            sel = self.steps[self.steps["step"].astype(str) == step].copy()
            sel["host"] = sel["host"].astype(str)
            frame = sel.sort_values("step_time_us", ascending=False, kind="stable")
            what = f"step {step}"
        hosts = frame["host"].astype(str).tolist()
        return slowest_first_bars(frame, hosts, "host", what, "pod")

    def table(self) -> Table:
        cols = [
            Column("step_time_us", "step time (µs)", digits=1),
            Column("behind_median_us", "vs median host (µs)", digits=1, color="sign"),
            *[
                Column(
                    c,
                    c.removesuffix("_us").replace("_", " ") + " (µs)",
                    digits=1,
                    title=CATEGORY_LABELS[c],
                )
                for c in CATEGORIES
                if (self.summary[c] > 0).any()
            ],
            Column("steps", "steps", "int"),
            Column("rank", "rank", "int"),
            Column("host", "host"),
        ]
        return Table(self.summary, cols, csv="pod_viewer.csv", sort=("step_time_us", "desc"))

    def verdict(self) -> str:
        st = self.straggler
        if st is None:
            n = len(self.summary)
            if n == 1:
                return "One host: nothing to compare."
            if n == 0:
                return "No steps."
            spread = self.summary["step_time_us"].max() - self.summary["step_time_us"].min()
            return (
                f"No straggler: the {n} hosts' average step times are within "
                f"{100 * TIE:.0f} % of each other (spread {spread / 1e3:,.3f} ms)."
            )
        pct = 100 * st["behind_us"] / st["median_us"] if st["median_us"] else 0.0
        return (
            f"{st['host']} is the straggler: {st['step_time_us'] / 1e3:,.2f} ms per step, "
            f"{st['behind_us'] / 1e3:,.2f} ms ({pct:.1f} %) behind the median of the other "
            f"hosts; most of the extra time is {st['cause_label']} "
            f"(+{st['cause_excess_us'] / 1e3:,.2f} ms)."
        )

    def blocks(self, step: str = AVERAGE, **_) -> list:
        if not len(self.summary):
            return [Html("<p class='tf-muted'>No steps: no step markers in this capture.</p>")]
        plot = Plot(
            "hosts",
            self.figure(step),
            click={"table": "hosts", "column": "host", "prefix": "host: "},
        )
        cls = "tf-bad" if self.straggler else "tf-good"
        return [
            Html(f"<p><b class='{cls}'>{esc(self.verdict())}</b></p>"),
            Plots([plot]),
            TableBlock("hosts", self.table(), "Hosts, slowest first (click a bar to filter)"),
        ]

    def findings(self) -> list[str]:
        return [self.verdict()]

    def open_host(self, host: str):
        """The host's own Run, from a pod dataset (``pod.host(name)``): every view works on it."""
        opener = getattr(self.source, "host", None)
        if not callable(opener):
            raise TypeError("only a pod dataset opens a host (tfprof_widgets.open(...))")
        return opener(host)


def pod_viewer(source) -> PodViewerView:
    """Step time per host of a multi-host run, the straggler and its cause.

    Args:
        source: a :class:`~tfprof_widgets.Run`, a steps table (one row per host and step
            with the category columns) or an object whose ``per_host_steps()`` returns one
            (a pod dataset, ``tw.open(...)``).

    Returns:
        A :class:`PodViewerView` (end a cell with it).
    """
    return PodViewerView(source)
