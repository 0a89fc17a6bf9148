"""Compare two runs: step time side by side and which ops got slower or faster."""

from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go

from ..analysis.overview import overview_summary
from ..analysis.steps import CATEGORIES
from ._display import CATEGORY_COLORS, CATEGORY_LABELS, View, esc
from .tables import csv_link, html_table


def op_diff(ops_a: pd.DataFrame, ops_b: pd.DataFrame) -> pd.DataFrame:
    """Ops of two runs side by side (hosts combined), largest change in self time first.

    Columns: host_or_device, type, operation, self_time_a_us, self_time_b_us, delta_us
    (b − a), ratio (b / a), occurrences_a, occurrences_b.
    """
    key = ["host_or_device", "type", "operation"]

    def prep(ops):
        ops = ops[ops["type"] != "IDLE"]
        g = ops.groupby([ops[k].astype(str) for k in key])
        return g.agg(self_time_us=("total_self_time_us", "sum"), occurrences=("occurrences", "sum"))

    m = (
        prep(ops_a)
        .merge(prep(ops_b), how="outer", left_index=True, right_index=True, suffixes=("_a", "_b"))
        .fillna(0)
    )
    m[["occurrences_a", "occurrences_b"]] = m[["occurrences_a", "occurrences_b"]].astype("int64")
    m = m.rename(columns={"self_time_us_a": "self_time_a_us", "self_time_us_b": "self_time_b_us"})
    m["delta_us"] = m["self_time_b_us"] - m["self_time_a_us"]
    m["ratio"] = m["self_time_b_us"] / m["self_time_a_us"].where(m["self_time_a_us"] > 0)
    m = m.reset_index()
    m = m.reindex(m["delta_us"].abs().sort_values(ascending=False).index)
    return m[
        key
        + [
            "self_time_a_us",
            "self_time_b_us",
            "delta_us",
            "ratio",
            "occurrences_a",
            "occurrences_b",
        ]
    ].reset_index(drop=True)


class CompareView(View):
    title = "Compare runs"

    def __init__(self, run_a, run_b, names: tuple[str, str] = ("A", "B")) -> None:
        self.a, self.b, self.names = run_a, run_b, names
        self.sa, self.sb = overview_summary(run_a), overview_summary(run_b)
        self.diff = op_diff(run_a.ops, run_b.ops)

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

    def html_body(self, plot) -> str:
        return (
            f"<p style='font:13px sans-serif'>{esc(self.headline())}</p>"
            + "".join(plot(f) for f in self.figures().values())
            + f"<div>{csv_link(self.diff, 'op_diff.csv')}</div>"
            + html_table(self.diff, max_rows=25, title="Ops that changed most (self time)")
        )

    def widget(self):
        import ipywidgets as w

        from ._live import figure_widget

        return w.VBox(
            [w.HTML(f"<h3>{self.title}</h3><p>{esc(self.headline())}</p>")]
            + [figure_widget(f) for f in self.figures().values()]
            + [w.HTML(csv_link(self.diff, "op_diff.csv") + html_table(self.diff, max_rows=50))]
        )

    def text(self) -> str:
        return self.headline()


def compare(run_a, run_b, names: tuple[str, str] = ("A", "B")) -> CompareView:
    """Two runs side by side: step time per category and the op-level diff table."""
    return CompareView(run_a, run_b, names)
