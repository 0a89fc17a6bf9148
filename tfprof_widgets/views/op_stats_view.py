"""TF op stats: pies of self time by op and by type, host and device, and the op table."""

from __future__ import annotations

import re

import pandas as pd
import plotly.graph_objects as go

from ._display import esc
from .base import Control, View
from .tables import csv_link, html_table

PIE_SLICES = 10  # the largest slices shown; the rest is one "Other" slice


def pie_values(ops: pd.DataFrame, by: str, top: int = PIE_SLICES) -> pd.Series:
    """Self time (µs) per ``by`` (operation or type), the largest ``top`` and 'Other'."""
    s = ops.groupby(by, observed=True)["total_self_time_us"].sum().sort_values(ascending=False)
    s = s[s > 0]
    if len(s) > top:
        s = pd.concat([s.iloc[:top], pd.Series({"Other": s.iloc[top:].sum()})])
    s.index = s.index.astype(str)
    return s


class OpStatsView(View):
    """Pies and a filterable, sortable op table with CSV export; IDLE can be excluded."""

    title = "TensorFlow op stats"
    figure_layout = "row"
    TABLE_COLUMNS = [
        "host",
        "host_or_device",
        "type",
        "operation",
        "occurrences",
        "total_time_us",
        "avg_time_us",
        "total_self_time_us",
        "avg_self_time_us",
        "self_time_percent",
        "cumulative_self_time_percent",
        "is_eager",
    ]

    def __init__(self, run, include_idle: bool = False) -> None:
        from ..analysis.op_stats import op_stats

        self.run = run
        self.include_idle = include_idle
        self._with_idle = run.ops
        self._without_idle = op_stats(run, include_idle=False)
        # What the live view's filters ask for (see filtered()).
        self._filters: dict[str, object] = {}

    @property
    def ops(self) -> pd.DataFrame:
        return self._with_idle if self.include_idle else self._without_idle

    def filtered(
        self,
        name_regex: str = "",
        op_type: str | None = None,
        side: str | None = None,
        sort_by: str = "total_self_time_us",
        ascending: bool = False,
    ) -> pd.DataFrame:
        """The table as shown: ops whose name matches ``name_regex`` (case-insensitive),
        of ``op_type``, on ``side`` ('Host'/'Device'), sorted by ``sort_by``."""
        df = self.ops
        if name_regex:
            try:
                pat = re.compile(name_regex, re.IGNORECASE)
            except re.error as exc:
                raise ValueError(f"invalid name filter {name_regex!r}: {exc}") from None
            df = df[df["operation"].astype(str).map(lambda s: bool(pat.search(s)))]
        if op_type:
            df = df[df["type"].astype(str) == op_type]
        if side:
            df = df[df["host_or_device"].astype(str) == side]
        return df.sort_values(sort_by, ascending=ascending, kind="stable")[self.TABLE_COLUMNS]

    def figures(self):
        figs = {}
        for side in ("Host", "Device"):
            sub = self.ops[self.ops["host_or_device"] == side]
            if not len(sub):
                continue
            for by, label in (("operation", "op"), ("type", "op type")):
                vals = pie_values(sub, by)
                fig = go.Figure(
                    go.Pie(
                        labels=list(vals.index),
                        values=vals.to_numpy(),
                        sort=False,
                        textinfo="percent",
                        hole=0.3,
                        uid=f"pie-{side}-{by}",
                        hovertemplate="%{label}<br>%{value:,.1f} µs (%{percent})<extra></extra>",
                    )
                )
                # Legend below the pie: long op names would otherwise squeeze the pie.
                fig.update_layout(
                    title=f"{side} self time by {label}",
                    height=520,
                    width=520,
                    margin=dict(t=40, b=10, l=10, r=10),
                    legend=dict(font=dict(size=9), orientation="h", y=-0.05, yanchor="top"),
                )
                figs[f"{side.lower()}_{by}"] = fig
        return figs

    def footer(self) -> str:
        table = self.filtered()
        note = "IDLE included" if self.include_idle else "IDLE excluded"
        return (
            f"<div>{csv_link(table, 'tf_op_stats.csv')} "
            f'<span style="font:12px sans-serif;color:#666">({note})</span></div>'
            + html_table(table, max_rows=30)
        )

    def live_footer(self) -> str:
        try:
            df = self.filtered(**self._filters)
        except ValueError as exc:
            return f'<span style="color:#b00">{esc(exc)}</span>'
        return (
            f"{csv_link(df, 'tf_op_stats.csv')} "
            f"<span style='font:12px sans-serif'>{len(df):,} ops</span>"
            + html_table(df, max_rows=100)
        )

    def controls(self) -> list[list[Control]]:
        import ipywidgets as w

        def set_filter(key, all_value=None):
            def apply(value):
                self._filters[key] = None if value == all_value and all_value else value

            return apply

        def set_idle(value):
            self.include_idle = value

        types = sorted(self._with_idle["type"].astype(str).unique())
        sortable = [c for c in self.TABLE_COLUMNS if c != "host"]
        return [
            [Control(w.Checkbox(value=self.include_idle, description="Include IDLE"), set_idle)],
            [
                Control(
                    w.Text(placeholder="regex on op name", description="Name"),
                    set_filter("name_regex"),
                    "footer",
                ),
                Control(
                    w.Dropdown(options=["(all)", *types], description="Type"),
                    set_filter("op_type", "(all)"),
                    "footer",
                ),
                Control(
                    w.Dropdown(options=["(all)", "Host", "Device"], description="Host/device"),
                    set_filter("side", "(all)"),
                    "footer",
                ),
            ],
            [
                Control(
                    w.Dropdown(options=sortable, value="total_self_time_us", description="Sort by"),
                    set_filter("sort_by"),
                    "footer",
                ),
                Control(
                    w.ToggleButton(value=False, description="ascending"),
                    set_filter("ascending"),
                    "footer",
                ),
            ],
        ]

    def text(self) -> str:
        ops = self.ops
        return (
            f"TF op stats: {len(ops):,} rows "
            f"({(ops['host_or_device'] == 'Host').sum():,} host, "
            f"{(ops['host_or_device'] == 'Device').sum():,} device)"
        )


def op_stats(run, include_idle: bool = False) -> OpStatsView:
    """Pies, filters and the op table; ``run.ops`` holds the numbers as a DataFrame."""
    return OpStatsView(run, include_idle)
