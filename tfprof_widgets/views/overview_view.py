"""The overview page: summary, step-time graph, top ops, environment and advice."""

from __future__ import annotations

import plotly.graph_objects as go

from ..analysis.overview import TOP_OPS_COLUMNS, OverviewSummary
from ..analysis.steps import CATEGORIES, CATEGORY_LABELS, overview_steps
from ._display import CATEGORY_COLORS, esc
from .base import View
from .tables import html_table


def step_time_figure(steps, title: str = "Step-time graph") -> go.Figure:
    """Stacked bars per step, one colour per category (input in red), milliseconds."""
    multi = steps["host"].nunique() > 1
    x = [f"{h} · {s}" if multi else str(s) for h, s in zip(steps["host"], steps["step"])]
    fig = go.Figure()
    for cat in CATEGORIES:
        ms = steps[cat].to_numpy() / 1e3
        if not (ms > 0).any():
            continue
        fig.add_bar(
            x=x,
            y=ms,
            name=CATEGORY_LABELS[cat],
            marker_color=CATEGORY_COLORS[cat],
            hovertemplate="step %{x}<br>" + CATEGORY_LABELS[cat] + ": %{y:.3f} ms<extra></extra>",
            uid=f"step-{cat}",
        )
    fig.update_layout(
        barmode="stack",
        title=title,
        xaxis_title="step",
        yaxis_title="milliseconds",
        height=360,
        margin=dict(t=40, b=40),
        legend=dict(orientation="h", y=-0.25),
        template="plotly_white",
    )
    fig.update_xaxes(type="category")
    return fig


class OverviewView(View):
    """TensorBoard's overview page for one run."""

    title = "Overview"

    def __init__(self, run) -> None:
        self.run = run
        self.summary: OverviewSummary = run.overview_summary
        self.steps = overview_steps(run.steps)

    def figures(self):
        return {"step_time": step_time_figure(self.steps)} if len(self.steps) else {}

    def header(self) -> str:
        o = self.summary
        rows = []
        if o.n_steps:
            rows.append(
                f"<b>Average step time</b> {o.step_time_ms_avg:.2f} ms "
                f"(σ {o.step_time_ms_std:.2f}, min {o.step_time_ms_min:.2f}, max "
                f"{o.step_time_ms_max:.2f}) over {o.n_steps} steps"
            )
            parts = ", ".join(
                f'<span style="color:{CATEGORY_COLORS[c]}">■</span> {CATEGORY_LABELS[c]} {v:.2f} ms'
                for c, v in o.breakdown_ms_avg.items()
                if v > 0
            )
            rows.append(f"<b>Breakdown</b> {parts}")
        if o.device_compute_16bit_percent or o.device_compute_32bit_percent:
            rows.append(
                f"<b>Device compute precision</b> 16-bit "
                f"{o.device_compute_16bit_percent:.1f} %, 32-bit "
                f"{o.device_compute_32bit_percent:.1f} %"
            )
        # NaN where TensorBoard's page alone does not say (a run of tool data only).
        if o.host_op_time_percent == o.host_op_time_percent:
            eager = (
                f"; eager: host {o.eager_host_op_percent:.1f} %, device "
                f"{o.eager_device_op_percent:.1f} %"
                if o.eager_host_op_percent == o.eager_host_op_percent
                else ""
            )
            rows.append(
                f"<b>Op time placement</b> host {o.host_op_time_percent:.1f} %, device "
                f"{o.device_op_time_percent:.1f} %{eager}"
            )
        rows.append(
            f"<b>Run environment</b> {len(o.hosts)} host(s): {esc(', '.join(o.hosts))}; "
            f"device type {esc(o.device_type)}"
            + (f", {o.device_core_count} device(s)" if o.device_core_count else "")
        )
        advice = "".join(f"<li>{esc(r)}</li>" for r in o.recommendations)
        rows.append(
            f"<b>Recommendation</b><ul style='margin:2px 0'>{advice}</ul>"
            f"<b>Next</b> {esc(o.summary_next_step)} Tools: "
            f"{esc(', '.join(o.tools))}"
        )
        body = "".join(f'<div style="margin:3px 0">{r}</div>' for r in rows)
        return f'<div style="font:13px/1.4 system-ui,sans-serif">{body}</div>'

    def footer(self) -> str:
        top = self.summary.top_ops
        if not len(top):
            return ""
        return html_table(top[TOP_OPS_COLUMNS], title="Top ops by self time")

    def text(self) -> str:
        return "Overview\n" + "\n".join(self.summary._repr_lines())


def overview(run) -> OverviewView:
    """The overview of a run: ``display(overview(run))`` or end a cell with it."""
    return OverviewView(run)
