"""The input-pipeline analyzer: device-side waits per step, host-side input time, input ops."""

from __future__ import annotations

import plotly.graph_objects as go

from ..analysis.results import plural
from ..frameworks import rules_of
from ._common import quick_figure
from .base import Html, Plot, Plots, TableBlock, View
from .page.display import esc
from .tables import Column, Table

__all__ = ["InputPipelineView", "input_pipeline"]

EPS_US = 1e-3  # below a nanosecond is rounding, not input time


class InputPipelineView(View):
    title = "Input pipeline analysis"

    def __init__(self, run) -> None:
        self.run = run
        self.analysis = run.input_pipeline
        self.summary = run.overview_summary
        rules = rules_of(run)
        # The framework's input pipeline as the page names it (tf.data, DataLoader), or none.
        self.tool = rules.advice.input_tool
        # Whether the verdict is the framework's own (torch-tb-profiler's DataLoader share on
        # PyTorch), measured otherwise than this page's per-step input time.
        self.own_verdict = bool(self.summary.n_steps) and rules.overview_verdicts(run) is not None

    def waiting_for(self) -> str:
        """'waiting for tf.data', 'waiting for the DataLoader', or 'waiting for input'."""
        if not self.tool:
            return "waiting for input"
        return f"waiting for {self.tool}" if "." in self.tool else f"waiting for the {self.tool}"

    def has_device_input(self) -> bool:
        s = self.analysis.steps
        return bool(len(s)) and bool(
            ((s["host_wait_input_us"] + s["host_to_device_us"]) > EPS_US).any()
        )

    def device_figure(self) -> go.Figure:
        s = self.analysis.steps
        multi = s["host"].nunique() > 1
        if multi:
            s = s.sort_values(["step", "host"], kind="stable")
        x = [f"{st} · {h}" if multi else str(st) for st, h in zip(s["step"], s["host"])]
        data = [
            dict(
                type="bar",
                x=x,
                y=s[col] / 1e3,
                name=name,
                marker=dict(color=color),
                uid=uid,
                hovertemplate=f"step %{{x}}<br>{name} %{{y:,.3f}} ms<extra></extra>",
            )
            for col, name, color, uid in (
                ("host_wait_input_us", self.waiting_for(), "#d62728", "ip-wait"),
                ("host_to_device_us", "host-to-device copy", "#ff9896", "ip-h2d"),
            )
            if (s[col] > EPS_US).any()
        ]
        data.append(
            dict(
                type="scatter",
                x=x,
                y=s["input_percent"],
                yaxis="y2",
                name="input, % of step time",
                mode="lines+markers",
                line=dict(color="#7f7f7f"),
                uid="ip-pct",
                hovertemplate="step %{x}<br>input %{y:.1f} % of the step<extra></extra>",
            )
        )
        layout = dict(
            barmode="stack",
            title=dict(text="Device side: time waiting for input, per step"),
            height=340,
            margin=dict(t=70, b=40, l=10, r=10),
            legend=dict(
                orientation="h", x=0, xanchor="left", y=1.0, yanchor="bottom", traceorder="normal"
            ),
            xaxis=dict(title=dict(text="step · host" if multi else "step"), type="category"),
            yaxis=dict(title=dict(text="milliseconds"), rangemode="tozero"),
            yaxis2=dict(
                title=dict(text="% of step"),
                overlaying="y",
                side="right",
                range=[0, 100],
                tickvals=[0, 25, 50, 75, 100],
                showgrid=False,
                zeroline=False,
            ),
        )
        fig = quick_figure(data, layout)
        return fig

    def host_breakdown(self):
        hb = self.analysis.host_breakdown()
        return hb[hb > EPS_US]

    def host_figure(self) -> go.Figure:
        hb = self.host_breakdown()
        bar = dict(
            type="bar",
            x=hb.to_numpy() / 1e3,
            y=[s.replace("_", " ") for s in hb.index],
            orientation="h",
            marker=dict(color="#d62728"),
            uid="ip-host",
            hovertemplate="%{y}: %{x:,.3f} ms<extra></extra>",
        )
        layout = dict(
            title=dict(text="Host side: where input time goes"),
            height=120 + 32 * len(hb),
            margin=dict(t=40, b=40, l=10, r=10),
            xaxis=dict(title=dict(text="milliseconds"), rangemode="tozero"),
            yaxis=dict(autorange="reversed"),
        )
        fig = quick_figure([bar], layout)
        return fig

    def input_line(self) -> str:
        """The input share of step time, where the verdict above does not already give it: a
        framework's own verdict (PyTorch's, by torch-tb-profiler's rule) quotes the steps'
        input share, and a second figure (the mean of the steps' shares) on the next line
        would read as another."""
        a = self.analysis
        if not len(a.steps):
            return "No steps, so no input time per step."
        if self.own_verdict:  # its figure is the steps' input share: the chart's, summed
            if not self.has_device_input():
                return ""
            return (
                f"The chart shows each step's time {self.waiting_for()}, as the verdict counts it."
            )
        # Counted as the run's summary and the overview count steps (results.StepCount): step
        # numbers once, however many hosts ran them.
        n = a.steps["step"].nunique()
        hosts = a.steps["host"].nunique()
        on = f" on {plural(hosts, 'host')}" if hosts > 1 else ""
        if len(a.steps) == 1:
            return f"Input takes {a.input_percent_avg:.1f} % of the step's time (1 step)."
        return (
            f"Input takes {a.input_percent_avg:.1f} % (σ {a.input_percent_std:.1f}) of step "
            f"time on average over {plural(n, 'step')}{on}."
        )

    def blocks(self, **_) -> list:
        a = self.analysis
        out: list = [
            Html(f"<p>{esc(self.summary.input_statement)}</p><p>{esc(self.input_line())}</p>")
        ]
        plots = []
        if self.has_device_input():
            plots.append(Plot("device_side", self.device_figure()))
        else:
            out.append(
                Html(
                    "<p class='tf-muted'>Device side: no step waited for input (no time "
                    f"{esc(self.waiting_for())} or copying input to the device in these "
                    "steps).</p>"
                )
            )
        if len(self.host_breakdown()):
            plots.append(Plot("host_side", self.host_figure()))
        elif not len(a.input_ops):
            out.append(Html(f"<p class='tf-muted'>{esc(self.no_host_input())}</p>"))
        if plots:
            out.append(Plots(plots))
        if len(a.input_ops):
            out.append(
                TableBlock(
                    "input_ops",
                    Table(
                        a.input_ops,
                        [
                            Column("total_self_time_us", "self time (µs)", digits=1),
                            Column("self_time_percent", "self %", "pct", digits=1),
                            Column("total_time_us", "total (µs)", digits=1),
                            # The share of the host's input time the op's calls cover;
                            # XProf's total % (of the input ops' self time: a DataLoader
                            # batch with children passes 100 %, a share it is not) goes to
                            # the CSV only.
                            Column(
                                "time_percent",
                                "% of input time",
                                "pct",
                                digits=1,
                                missing="—",
                                title="Share of the host's input time in which this op ran "
                                "(its calls' time, each instant once, over all input ops')",
                            ),
                            Column(
                                "time_percent_xprof",
                                "XProf total % (of input self time)",
                                "num",
                                digits=1,
                                hidden=True,
                            ),
                            Column("occurrences", "count", "int"),
                            Column("category", "category"),
                            *(
                                [Column("host", "host")]
                                if a.input_ops["host"].nunique() > 1
                                else [Column("host", hidden=True)]
                            ),
                            Column("operation", "input op"),
                        ],
                        csv="input_ops.csv",
                        sort=("total_self_time_us", "desc"),
                    ),
                    "Input ops on the host",
                )
            )
        if a.recommendations:  # a framework without input advice gets no empty heading
            recs = "".join(f"<li>{esc(r)}</li>" for r in a.recommendations)
            out.append(Html(f"<b>What can be done</b><ul>{recs}</ul>"))
        return out

    def no_host_input(self) -> str:
        """Why the host side is empty, in the framework's words."""
        if self.tool == "tf.data":
            return (
                "Host side: no input-pipeline events on the host (no tf.data iterators, "
                "file reads or enqueue ops were traced)."
            )
        if self.tool:
            return f"Host side: no {self.tool} events were traced on the host."
        return (
            "Host side: this framework's input pipeline leaves no events the profiler can "
            "split (only TensorFlow's and PyTorch's input pipelines are traced)."
        )

    def findings(self) -> list[str]:
        lines = [self.summary.input_statement, self.input_line()]
        hb = self.host_breakdown()
        if len(hb):
            lines.append(
                "Host input time: "
                + ", ".join(f"{k.replace('_', ' ')} {v / 1e3:,.2f} ms" for k, v in hb.items())
            )
        return [s for s in lines if s]


def input_pipeline(run) -> InputPipelineView:
    """The input-pipeline analyzer: is the run waiting for its input, and where does the
    input time go?

    Shows the verdict, the time each step waited for input (tf.data, the DataLoader) or
    copied it to the device, where the host's input time goes (tf.data's reads,
    preprocessing and enqueue ops), the input ops table and what can be done.

    Args:
        run: a loaded :class:`~tfprof_widgets.Run`.

    Returns:
        An :class:`InputPipelineView` (end a cell with it); ``run.input_pipeline`` holds the
        numbers.
    """
    return InputPipelineView(run)
