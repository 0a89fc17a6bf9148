"""The pod viewer: step time per host, stacked by category and sorted by the slowest, with the
straggler and what makes it slow named; click a host to open it.

It reads a long table of steps — one row per (host, step) with the step-time category columns
in µs, the shape of ``run.steps`` (``schema.STEPS``) — so a Run and a pod dataset
(:class:`tfprof_widgets.scale.Pod`, whose ``steps`` has that shape over every host) feed it
alike. Clicking a host opens it (``pod.host(name)``, an in-memory Run) under the chart.
"""

from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go

from ..analysis.steps import CATEGORIES, CATEGORY_LABELS, overview_steps
from ._display import esc
from .base import View
from .tables import csv_link, html_table

__all__ = ["PodViewerView", "pod_summary", "pod_viewer", "straggler"]

# Static rendering: the chart shows this many hosts (slowest first); the table all of them.
MAX_BARS = 64


def pod_summary(steps: pd.DataFrame) -> pd.DataFrame:
    """Per host: its steps, their average time and category breakdown (µs), and how far it
    is from the median host; slowest host first.

    ``steps``: one row per (host, step) with ``host``, ``step`` and the step-time category
    columns (``schema.STEPS``), e.g. ``run.steps`` or ``pod.steps``. Columns out: ``host``,
    ``steps``, ``step_time_us``, each category, ``behind_median_us`` (this host's average
    step time minus the median host's), ``rank`` (1 = slowest).
    """
    missing = [c for c in ("host", "step", *CATEGORIES) if c not in steps]
    if missing:
        raise ValueError(
            "the pod viewer needs one row per (host, step) with the step-time categories; "
            f"missing columns: {missing} (pass run.steps or pod.steps)"
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
    exceeds the median of the other hosts most. None with fewer than two hosts."""
    if len(summary) < 2:
        return None
    slow = summary.iloc[0]
    others = summary.iloc[1:]
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


class PodViewerView(View):
    title = "Pod viewer: step time per host"

    def __init__(self, source) -> None:
        self.source = source
        steps = source if isinstance(source, pd.DataFrame) else source.steps
        self.steps = overview_steps(steps) if len(steps) else steps
        self.summary = pod_summary(self.steps)
        self.straggler = straggler(self.summary)

    def verdict(self) -> str:
        st = self.straggler
        if st is None:
            return "One host: nothing to compare." if len(self.summary) == 1 else "No steps."
        pct = 100 * st["behind_us"] / st["median_us"] if st["median_us"] else 0.0
        return (
            f"{st['host']} is the straggler: {st['step_time_us'] / 1e3:,.2f} ms per step, "
            f"{st['behind_us'] / 1e3:,.2f} ms ({pct:.1f} %) behind the median of the other "
            f"hosts; most of the extra time is {st['cause_label']} "
            f"(+{st['cause_excess_us'] / 1e3:,.2f} ms)."
        )

    def header(self) -> str:
        return f"<p><b>{esc(self.verdict())}</b></p>"

    def figures(self):
        top = self.summary.head(MAX_BARS)
        if not len(top):
            return {}
        hosts = top["host"].tolist()[::-1]  # slowest on top
        fig = go.Figure()
        for c in CATEGORIES:
            if (top[c] > 0).any():
                fig.add_bar(
                    y=hosts,
                    x=(top[c][::-1] / 1e3).tolist(),
                    name=CATEGORY_LABELS[c],
                    orientation="h",
                    customdata=[[h] for h in hosts],
                    hovertemplate="%{customdata[0]}: %{x:.3f} ms<extra>%{fullData.name}</extra>",
                )
        shown = "" if len(self.summary) <= MAX_BARS else f", slowest {MAX_BARS} hosts"
        fig.update_layout(
            barmode="stack",
            title=f"Average step time per host (ms{shown})",
            xaxis_title="ms",
            height=160 + 22 * len(hosts),
            margin=dict(l=10, r=10, t=40, b=30),
            legend=dict(orientation="h"),
        )
        return {"hosts": fig}

    def footer(self) -> str:
        if not len(self.summary):
            return "<i>No steps: no step markers in this capture.</i>"
        return csv_link(self.summary, "pod_viewer.csv") + html_table(self.summary, max_rows=200)

    def open_host(self, host: str):
        """The host's own Run, from a pod (``pod.host(name)``)."""
        opener = getattr(self.source, "host", None)
        if not callable(opener):
            raise TypeError("only a pod dataset opens a host (tfprof_widgets.open(...))")
        return opener(host)

    def attach(self, figure_widgets: dict[str, object]) -> list:
        if "hosts" not in figure_widgets or not callable(getattr(self.source, "host", None)):
            return []
        import ipywidgets as w
        from IPython.display import display

        from .overview_view import overview

        out = w.Output()

        def clicked(trace, points, state) -> None:
            if not points.point_inds:
                return
            host = trace.customdata[points.point_inds[0]][0]
            out.clear_output()
            with out:
                display(overview(self.open_host(host)))

        for trace in figure_widgets["hosts"].data:
            trace.on_click(clicked)
        return [out]

    def text(self) -> str:
        return f"Pod viewer: {len(self.summary)} hosts. {self.verdict()}"


def pod_viewer(source) -> PodViewerView:
    """Step time per host, the straggler and its cause. ``source``: a Run, a pod dataset
    (``tfprof_widgets.open(...)``; click a host to open it) or a steps table."""
    return PodViewerView(source)
