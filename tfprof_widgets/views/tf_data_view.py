"""The tf.data input-pipeline graph: nodes with timings, critical path bold, bottleneck red."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from ..analysis.tf_data import tf_data_summary
from ..analysis.tool_data import no_trace_note
from ._display import esc
from .base import Control, View


class TfDataGraphView(View):
    title = "tf.data input pipeline"

    def __init__(
        self, run, host: str | None = None, pipeline: int | None = None, rank: int = 0
    ) -> None:
        self.run = run
        self.bottlenecks = run.tf_data_bottleneck
        self.stats = run.tf_data
        if host is None and len(self.bottlenecks):
            first = self.bottlenecks.iloc[0]
            host = first["host"]
            pipeline = int(
                self.stats.pipelines.loc[
                    self.stats.pipelines["pipeline_name"] == first["input_pipeline"], "pipeline"
                ].iloc[0]
            )
        self.host, self.pipeline, self.rank = host, pipeline, rank

    def executions(self):
        ex = self.stats.executions
        ex = ex[(ex["host"] == self.host) & (ex["pipeline"] == self.pipeline)]
        return ex.sort_values("dur_us", ascending=False)

    def nodes(self):
        """Iterators of the chosen execution (rank 0 = slowest call) with their layout."""
        ex = self.executions()
        if not len(ex):
            return None
        execution = int(ex.index[min(self.rank, len(ex) - 1)])
        its = self.stats.iterator_stats(execution=execution)
        its = its.sort_values(["depth", "start_us"]).reset_index(drop=True)
        its["x"] = its["depth"].astype(float)
        its["y"] = its.groupby("depth").cumcount().astype(float) * -1.0
        blocking = its[its["is_blocking"]]
        its["is_bottleneck"] = False
        if len(blocking):
            its.loc[blocking["self_us"].idxmax(), "is_bottleneck"] = True
        return its

    def figures(self):
        its = self.nodes()
        if its is None:
            return {}
        meta = self.stats.iterators[self.stats.iterators["host"] == self.host]
        parent = dict(zip(meta["iterator_id"], meta["parent_id"]))
        pos = {i: (x, y) for i, x, y in zip(its["iterator_id"], its["x"], its["y"])}
        fig = go.Figure()
        for i, blocking in zip(its["iterator_id"], its["is_blocking"]):
            p = parent.get(i)
            if p in pos:
                (x0, y0), (x1, y1) = pos[p], pos[i]
                fig.add_scatter(
                    x=[x0, x1],
                    y=[y0, y1],
                    mode="lines",
                    hoverinfo="skip",
                    line=dict(
                        color="#333" if blocking else "#999",
                        width=4 if blocking else 1.5,
                        dash="solid" if blocking else "dash",
                    ),
                    showlegend=False,
                )
        colors = np.where(
            its["is_bottleneck"], "#d62728", np.where(its["is_blocking"], "#1f77b4", "#bbbbbb")
        )
        text = [
            f"<b>{esc(n)}</b><br>start {s:,.1f} µs<br>total {t:,.1f} µs<br>self "
            f"{sf:,.1f} µs<br>calls {c}"
            for n, s, t, sf, c in zip(
                its["name"], its["start_us"], its["total_us"], its["self_us"], its["calls"]
            )
        ]
        fig.add_scatter(
            x=its["x"],
            y=its["y"],
            mode="markers+text",
            text=its["name"],
            textposition="top center",
            hovertext=text,
            hoverinfo="text",
            marker=dict(
                size=np.clip(8 + 40 * its["self_us"] / max(its["self_us"].max(), 1e-9), 8, 48),
                color=colors,
                line=dict(width=1, color="#333"),
            ),
            uid="tfdata-nodes",
            showlegend=False,
        )
        ex = self.executions()
        fig.update_layout(
            title=f"{self.title} on {esc(self.host)} (call {self.rank + 1} of {len(ex)} by "
            f"latency: {ex['dur_us'].iloc[min(self.rank, len(ex) - 1)]:,.1f} µs)",
            height=max(300, 90 * (its["y"].abs().max() + 2)),
            template="plotly_white",
            xaxis=dict(title="depth (root → source)", dtick=1),
            yaxis=dict(visible=False),
            margin=dict(t=50, b=40),
        )
        return {"graph": fig}

    def header(self) -> str:
        summary = esc(no_trace_note(self.run) or tf_data_summary(self.bottlenecks))
        b = (
            self.bottlenecks[self.bottlenecks["host"] == self.host]
            if self.host
            else self.bottlenecks
        )
        if not len(b):
            return f"<p style='font:13px sans-serif'>{summary}</p>"
        r = b.iloc[0]
        return (
            f"<div style='font:13px/1.4 system-ui,sans-serif'><p>{summary}</p>"
            f"<p><b>Bottleneck</b> <span style='color:#d62728'>{esc(r['iterator_name'])}"
            f"</span> ({esc(r['iterator_long_name'])}), {r['iterator_latency_us']:,.1f} µs "
            f"self time in the slowest call ({r['max_latency_us']:,.1f} µs).</p>"
            f"<p><b>Suggestion</b> {esc(r['suggestion'])}</p>"
            f"<p style='color:#666'>Bold: critical path; red: bottleneck; dashed: not "
            f"blocking the call.</p></div>"
        )

    def controls(self) -> list[list[Control]]:
        import ipywidgets as w

        pipes = self.stats.pipelines
        options = [
            (f"{h} · {n}", (h, int(p)))
            for h, n, p in zip(pipes["host"], pipes["pipeline_name"], pipes["pipeline"])
        ]
        chooser = w.Dropdown(
            options=options or [("none", None)],
            value=(self.host, self.pipeline) if options else None,
            description="Pipeline",
        )
        rank = w.BoundedIntText(
            value=1, min=1, max=max(1, len(self.executions())), description="Call rank"
        )

        def choose(value) -> None:
            if value:
                self.host, self.pipeline = value

        def set_rank(value) -> None:
            self.rank = value - 1

        return [[Control(chooser, choose), Control(rank, set_rank)]]

    def text(self) -> str:
        if not len(self.bottlenecks):
            return tf_data_summary(self.bottlenecks)
        r = self.bottlenecks.iloc[0]
        return f"tf.data bottleneck: {r['iterator_long_name']} ({r['iterator_latency_us']:,.1f} µs)"


def tf_data_graph(run, host: str | None = None, pipeline: int | None = None) -> TfDataGraphView:
    """The slowest input pipeline's graph with its bottleneck (or the one chosen)."""
    return TfDataGraphView(run, host, pipeline)


__all__ = ["TfDataGraphView", "tf_data_graph"]
