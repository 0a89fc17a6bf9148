"""XProf's Roofline Model for XLA runs: the device's roofs and one point per HLO op on a
log-log plot (``run.roofline`` and ``run.roofline_peaks``); a click on a point filters the
op table to that op."""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from ._common import quick_figure
from .base import Html, Panel, Plot, Plots, TableBlock, View
from .graph_viewer_view import graph_key, graph_panel
from .hlo_op_profile_view import LINKS, time_columns
from .names import short_op_name
from .page.display import esc
from .tables import Column, Table

__all__ = ["RooflineView", "roofline"]

HEIGHT = 420
# Point colour by what bounds the op (TPU ops can also be bound by CMEM or VMEM traffic).
COLORS = {
    "HBM": "#1f77b4",
    "Compute": "#d62728",
    "CMEM Read": "#2ca02c",
    "CMEM Write": "#98df8a",
    "VMEM Read": "#9467bd",
    "VMEM Write": "#c5b0d5",
    "Unknown": "#9e9e9e",
}


# Fraction columns of the roofline the table shows in percent.
PERCENT_OF_FRACTION = ("roofline_efficiency", "compute_efficiency", "max_mem_bw_utilization")


class RooflineView(View):
    title = "Roofline model"

    def __init__(self, run) -> None:
        self.run = run
        self.ops = run.roofline
        self.peaks = run.roofline_peaks

    def _keys(self) -> tuple[np.ndarray, np.ndarray]:
        """Each op's graph key and source line (views/graph_viewer_view, source_lines_view)."""
        from .source_lines_view import line_of_instruction

        pids = self.ops["program_id"].to_numpy(np.int64)
        names = self.ops["hlo_op_name"].astype(str).to_numpy(object)
        return graph_key(pids, names), line_of_instruction(self.run, pids, names)

    def panels(self) -> list[Panel]:
        from .source_lines_view import source_panel

        if not len(self.ops) or not len(self.peaks):
            return []
        pids = self.ops["program_id"].to_numpy(np.int64)
        names = self.ops["hlo_op_name"].astype(str).to_numpy(object)
        times = self.ops["total_self_time_us"].to_numpy(float)
        return [graph_panel(self.run, pids, names, times), source_panel(self.run, self._keys()[1])]

    def figure(self) -> go.Figure:
        """Roofs of the first device (HBM and shared memory slopes, the compute ceiling) and
        the ops with FLOPs and HBM bytes, coloured by what bounds them."""
        p = self.peaks.iloc[0]
        ops = self.ops[(self.ops["flops"] > 0) & (self.ops["hbm_bytes"] > 0)]
        oi = ops["hbm_operational_intensity"].to_numpy(float)
        lo = min(oi.min() if len(oi) else 1.0, 1.0) / 10
        hi = max(oi.max() if len(oi) else 1.0, p["hbm_ridge_point"]) * 10
        traces = _roof_traces(p, np.geomspace(lo, hi, 64)) + _op_traces(p, ops)
        # An op without FLOPs or HBM bytes has no place on a log-log plot: say how many are
        # left out (a TPU capture whose ops all read 0 HBM bytes drew bare roofs, unexplained).
        left_out = len(self.ops) - len(ops)
        note = (
            f" ({left_out} of {len(self.ops)} ops not drawn: no modelled FLOPs or HBM bytes)"
            if left_out
            else ""
        )
        layout = dict(
            title=dict(
                text=f"{p['device_type']}: peak {p['peak_gflops']:,.0f} GFLOP/s, "
                f"HBM ridge point {p['hbm_ridge_point']:,.1f} FLOP/B{note}"
            ),
            height=HEIGHT,
            margin=dict(t=40, b=40, l=60, r=10),
            xaxis=dict(
                type="log", title=dict(text="operational intensity (FLOP/B of HBM traffic)")
            ),
            yaxis=dict(type="log", title=dict(text="GFLOP/s")),
        )
        return quick_figure(traces, layout)

    def table(self) -> Table:
        keys, lines = self._keys()
        ops, time_cols = time_columns(
            self.ops.assign(graph_key=keys, source=lines), "total_self_time_us", "self"
        )
        # Fractions in the analysis (schema.ROOFLINE); shown and exported as the percent their
        # headers say (an HBM-bound op at 57 % of the roof read "0.6" under "(%)").
        ops = ops.assign(**{c: ops[c] * 100.0 for c in PERCENT_OF_FRACTION})
        cols = [
            *time_cols,
            Column("occurrences", "count", "int"),
            Column(
                "model_gflops_per_s",
                "GFLOP/s",
                digits=1,
                title="Modelled FLOPs over the self time (above the peak where 'above roof')",
            ),
            Column("hbm_bw_gibps", "HBM GiB/s", digits=1),
            Column("hbm_operational_intensity", "FLOP/B (HBM)", digits=2),
            Column(
                "roofline_efficiency",
                "roofline eff. (%)",
                "pct",
                digits=1,
                csv="roofline_efficiency_percent",
                title="The op's rate over the roof above it, at most 100 % (see 'above roof')",
            ),
            Column(
                "compute_efficiency",
                "FLOP util. (%)",
                "pct",
                digits=2,
                csv="compute_efficiency_percent",
                title="FLOP rate over the peak FLOP rate, at most 100 % (as the op profile)",
            ),
            Column(
                "max_mem_bw_utilization",
                "HBM BW util. (%)",
                "pct",
                digits=1,
                csv="max_mem_bw_utilization_percent",
                title="HBM bandwidth over its peak, at most 100 % (as the op profile)",
            ),
            Column("bound_by", "bound by"),
            Column(
                "above_roof",
                "above roof",
                "bool",
                title="The modelled FLOPs or bytes are more than the measured time allows: "
                "the point is drawn on the roof, and 'roof note' says why",
            ),
            # The note is a sentence: in the CSV and on the point's hover, not a column that
            # would push the op names out of a 1,050 px table.
            Column("roof_note", "roof note", hidden=True),
            Column(
                "flops_modeled",
                "as XProf",
                "bool",
                title="FLOPs and bytes as XProf counts them (not: cuBLAS GEMM calls, 0 in XProf)",
                hidden=bool(ops["flops_modeled"].all()),
            ),
            Column("category", "category"),
            Column("tf_op_name", "framework op"),
            Column("source", "source", title="file:line that made the op (click: its lines)"),
            Column("graph_key", internal=True),
            Column("hlo_op_name", "HLO op"),
        ]
        return Table(ops, cols, csv="roofline.csv", sort=(time_cols[0].name, "desc"))

    def blocks(self, **_) -> list:
        if not len(self.ops) or not len(self.peaks):
            return [Html(f"<p class='tf-muted'>{esc(self.empty_text())}</p>")]
        names = self.ops["hlo_op_name"].astype(str).unique().tolist()
        plot = Plot(
            "roofline",
            self.figure(),
            click={
                "table": "roofline_ops",
                "column": "hlo_op_name",
                "prefix": "HLO op: ",
                "others": names,
                "other": None,
            },
            link={"panel": "graph", "at": 6},
        )
        return [
            Plots([plot]),
            TableBlock(
                "roofline_ops",
                self.table(),
                "HLO ops (click a point to filter and see the graph around it; a row for "
                "its graph, its source cell for its line)",
                links=LINKS,
            ),
        ]

    def findings(self) -> list[str]:
        if not len(self.ops) or not len(self.peaks):
            return [self.empty_text()]
        p = self.peaks.iloc[0]
        t = self.ops.groupby("bound_by", observed=True)["total_self_time_us"].sum()
        total = t.sum()
        shares = ", ".join(f"{k} {100 * v / total:.1f} %" for k, v in t.items() if total)
        return [
            f"{p['device_type']}: peak {p['peak_gflops']:,.0f} GFLOP/s, HBM "
            f"{p['peak_hbm_gibps']:,.1f} GiB/s, ridge point {p['hbm_ridge_point']:,.1f} FLOP/B",
            f"Self time by bottleneck: {shares}",
            *self._above_roof(),
        ]

    def _above_roof(self) -> list[str]:
        """A line naming the ops above a roof, drawn on it (none: no line)."""
        if "above_roof" not in self.ops:
            return []
        above = self.ops[self.ops["above_roof"].to_numpy(bool)]
        if not len(above):
            return []
        names = ", ".join(above["hlo_op_name"].astype(str).tolist()[:4])
        more = f" and {len(above) - 4} more" if len(above) > 4 else ""
        return [
            f"{len(above)} ops above a roof ({names}{more}): their modelled FLOPs or bytes "
            "are more than their measured time allows; drawn on the roof, capped at 100 %, "
            "each row's note says why"
        ]

    def empty_text(self) -> str:
        return (
            "No roofline: the capture has no XLA ops on a device whose plane gives its peaks "
            "(GPU core count, clock and memory bandwidth, or a TPU's peak stats)."
        )


def on_chip_memory(peaks) -> str:
    """The name of a device's second (on-chip) roof: a TPU's VMEM writes, an AMD GPU's LDS,
    an NVIDIA GPU's shared memory / L1."""
    device, kind = str(peaks.get("device", "")), str(peaks.get("device_type", ""))
    if device.startswith("/device:TPU:") or kind.startswith("TPU"):
        return "VMEM write"
    if kind.startswith("AMD"):
        return "LDS"
    return "shared memory / L1"


def roofline(run) -> RooflineView:
    """The roofline plot (device roofs, one point per HLO op) and the op table; a click on a
    point filters the table. ``run.roofline`` and ``run.roofline_peaks`` hold the numbers."""
    return RooflineView(run)


def _roof_traces(p: pd.Series, x: np.ndarray) -> list[dict]:
    """The device's memory roofs (HBM and the on-chip one) up to its compute ceiling."""
    traces: list[dict] = []
    gb = 2.0**30 / 1e9
    for uid, name, bw, dash in (
        ("hbm", "HBM", p["peak_hbm_gibps"], "solid"),
        ("shm", on_chip_memory(p), p["peak_shm_gibps"], "dot"),
    ):
        if bw > 0:
            traces.append(
                dict(
                    type="scatter",
                    x=x,
                    y=np.minimum(x * bw * gb, p["peak_gflops"]),
                    mode="lines",
                    name=f"{name} roof ({bw:,.0f} GiB/s)",
                    line=dict(dash=dash, color="#555"),
                    hoverinfo="skip",
                    uid=f"roof-{uid}",
                )
            )
    return traces


def _op_traces(p: pd.Series, ops: pd.DataFrame) -> list[dict]:
    """The ops as points, one trace per bound; those above a roof in a hollow group."""
    traces: list[dict] = []
    gb = 2.0**30 / 1e9
    # An op above a roof (its modelled FLOPs or bytes more than its time allows) is drawn
    # on the roof, hollow, in a group of its own: never in the region no op can reach.
    above = ops["above_roof"].to_numpy(bool) if "above_roof" in ops else np.zeros(len(ops), bool)
    roof = np.minimum(
        ops["hbm_operational_intensity"].to_numpy(float) * p["peak_hbm_gibps"] * gb,
        p["peak_gflops"],
    )
    y_all = ops["model_gflops_per_s"].to_numpy(float)
    # The plot's rate is the model FLOP rate; on TPU the utilisations read the measured
    # FLOPs, so a point can be above the drawn roofs with no utilisation above 1.
    above = above | (y_all > roof * (1 + 1e-9))
    ops = ops.assign(_y=np.where(above, np.minimum(y_all, roof), y_all))
    groups = [
        (f"bound by {b}", str(b), False, g)
        for b, g in ops[~above].groupby("bound_by", observed=True, sort=True)
    ]
    if above.any():
        groups.append(("above a roof (drawn on it; see its note)", "above", True, ops[above]))
    for label, bound, hollow, g in groups:
        names = g["hlo_op_name"].astype(str).tolist()
        keys = graph_key(g["program_id"].to_numpy(np.int64), names)
        traces.append(
            dict(
                type="scatter",
                x=g["hbm_operational_intensity"],
                y=g["_y"],
                mode="markers",
                name=label,
                marker=dict(
                    color="#ff7f0e" if hollow else COLORS.get(bound, "#9e9e9e"),
                    symbol="circle-open" if hollow else "circle",
                    size=np.clip(np.sqrt(g["total_self_time_us"].to_numpy(float)), 5, 24),
                ),
                customdata=[
                    [n, c, short_op_name(str(t), 60), s, m, note, k]
                    for n, c, t, s, m, note, k in zip(
                        names,
                        g["category"].astype(str),
                        g["tf_op_name"],
                        g["total_self_time_us"],
                        g["model_gflops_per_s"],
                        g["roof_note"].astype(str) if "roof_note" in g else [""] * len(g),
                        keys,
                    )
                ],
                hovertemplate="%{customdata[0]} (%{customdata[1]})<br>%{customdata[2]}<br>"
                + (
                    "modelled %{customdata[4]:,.0f} GFLOP/s at %{x:,.2f} FLOP/B (HBM), "
                    "drawn on the roof<br>%{customdata[5]}<br>"
                    if hollow
                    else "%{y:,.0f} GFLOP/s at %{x:,.2f} FLOP/B (HBM)<br>"
                )
                + "self time %{customdata[3]:,.1f} µs<extra></extra>",
                uid=f"ops-{bound.lower().replace(' ', '-')}",
            )
        )
    return traces
