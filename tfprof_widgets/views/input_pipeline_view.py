"""The input-pipeline analyzer: device-side waits per step, host-side input time, input ops."""

from __future__ import annotations

import plotly.graph_objects as go

from ._display import esc
from .base import View
from .tables import html_table


class InputPipelineView(View):
    title = "Input pipeline analysis"

    def __init__(self, run) -> None:
        self.run = run
        self.analysis = run.input_pipeline
        self.summary = run.overview_summary

    def figures(self):
        figs = {}
        s = self.analysis.steps
        if len(s):
            fig = go.Figure()
            fig.add_bar(
                x=s["step"].astype(str),
                y=s["host_wait_input_us"] / 1e3,
                name="waiting for tf.data",
                marker_color="#d62728",
                uid="ip-wait",
            )
            fig.add_bar(
                x=s["step"].astype(str),
                y=s["host_to_device_us"] / 1e3,
                name="host-to-device",
                marker_color="#ff9896",
                uid="ip-h2d",
            )
            fig.add_scatter(
                x=s["step"].astype(str),
                y=s["input_percent"],
                yaxis="y2",
                name="% of step time",
                mode="lines+markers",
                uid="ip-pct",
            )
            fig.update_layout(
                barmode="stack",
                title="Device-side: input time per step",
                yaxis=dict(title="ms"),
                yaxis2=dict(title="%", overlaying="y", side="right", range=[0, 100]),
                height=320,
                template="plotly_white",
                margin=dict(t=40),
                legend=dict(orientation="h", y=-0.25),
            )
            figs["device_side"] = fig
        hb = self.analysis.host_breakdown()
        if hb.sum() > 0:
            fig = go.Figure(
                go.Bar(
                    x=hb.to_numpy() / 1e3,
                    y=hb.index.str.replace("_", " "),
                    orientation="h",
                    marker_color="#d62728",
                    uid="ip-host",
                )
            )
            fig.update_layout(
                title="Host-side: where input time goes (ms)",
                height=260,
                template="plotly_white",
                margin=dict(t=40, l=10),
            )
            figs["host_side"] = fig
        return figs

    def header(self) -> str:
        a = self.analysis
        return (
            f"<div style='font:13px/1.4 system-ui,sans-serif'><p>"
            f"{esc(self.summary.input_statement)}</p><p>Input takes "
            f"{a.input_percent_avg:.1f} % (σ {a.input_percent_std:.1f}) of step time on "
            f"average. {esc(self.summary.summary_next_step)}</p></div>"
        )

    def footer(self) -> str:
        a = self.analysis
        recs = "".join(f"<li>{esc(r)}</li>" for r in a.recommendations)
        return (
            html_table(a.input_ops, title="Input ops (host)")
            + f"<div style='font:13px sans-serif'><b>What can be done</b><ul>{recs}</ul></div>"
        )

    def text(self) -> str:
        return f"Input pipeline: {self.summary.input_statement}"


def input_pipeline(run) -> InputPipelineView:
    """Input time per step on the device side, where the host's input time goes, the input
    ops and what can be done; ``run.input_pipeline`` holds the numbers."""
    return InputPipelineView(run)
