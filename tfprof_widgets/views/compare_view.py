"""Compare two runs: step time side by side and which ops got slower or faster."""

from __future__ import annotations

import plotly.graph_objects as go

from ..analysis.compare import op_diff
from ..analysis.steps import CATEGORIES, CATEGORY_LABELS
from ._display import CATEGORY_COLORS, esc
from .base import View
from .tables import csv_link, html_table


class CompareView(View):
    title = "Compare runs"

    def __init__(self, run_a, run_b, names: tuple[str, str] = ("A", "B")) -> None:
        self.a, self.b, self.names = run_a, run_b, names
        self.sa, self.sb = run_a.overview_summary, run_b.overview_summary
        self.diff = op_diff(run_a, run_b)

    def figures(self):
        fig = go.Figure()
        labels = [f"{self.names[0]} ({self.a.name})", f"{self.names[1]} ({self.b.name})"]
        for cat in CATEGORIES:
            vals = [self.sa.breakdown_ms_avg[cat], self.sb.breakdown_ms_avg[cat]]
            if max(vals) > 0:
                fig.add_bar(
                    x=labels,
                    y=vals,
                    name=CATEGORY_LABELS[cat],
                    marker_color=CATEGORY_COLORS[cat],
                    uid=f"cmp-{cat}",
                )
        fig.update_layout(
            barmode="stack",
            title="Average step time (ms)",
            height=360,
            template="plotly_white",
            legend=dict(orientation="h", y=-0.2),
        )
        return {"step_time": fig}

    def headline(self) -> str:
        ta, tb = self.sa.step_time_ms_avg, self.sb.step_time_ms_avg
        if ta > 0 and tb > 0:
            change = (
                f"{self.names[1]} is {ta / tb:.2f}x faster per step"
                if tb < ta
                else f"{self.names[1]} is {tb / ta:.2f}x slower per step"
            )
            return (
                f"Average step time {ta:.2f} ms ({self.names[0]}) vs {tb:.2f} ms "
                f"({self.names[1]}): {change}."
            )
        return "Step time is unknown for at least one run (no step markers)."

    def header(self) -> str:
        return f"<p style='font:13px sans-serif'>{esc(self.headline())}</p>"

    def footer(self) -> str:
        return f"<div>{csv_link(self.diff, 'op_diff.csv')}</div>" + html_table(
            self.diff, max_rows=25, title="Ops that changed most (self time)"
        )

    def live_footer(self) -> str:
        return csv_link(self.diff, "op_diff.csv") + html_table(self.diff, max_rows=50)

    def text(self) -> str:
        return self.headline()


def compare(run_a, run_b, names: tuple[str, str] = ("A", "B")) -> CompareView:
    """Two runs side by side: step time per category and the op-level diff table."""
    return CompareView(run_a, run_b, names)
