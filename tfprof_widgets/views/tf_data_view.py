"""The tf.data input-pipeline graph: nodes with timings, critical path bold, bottleneck red."""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from ..analysis.tool_data import no_trace_note
from ..frameworks.tensorflow import tf_data_summary
from ._common import quick_figure
from .base import Choice, Html, Plot, Plots, TableBlock, View
from .page.display import esc
from .tables import Column, Table

__all__ = ["TfDataGraphView", "tf_data_graph"]

RANKS = 5  # the slowest calls of each pipeline the chooser offers


class TfDataGraphView(View):
    title = "tf.data input pipeline"

    def __init__(
        self, run, host: str | None = None, pipeline: int | None = None, rank: int = 0
    ) -> None:
        self.run = run
        self.bottlenecks = run.tf_data_bottleneck
        self.stats = run.tf_data
        pipes = self.stats.pipelines
        if host is None and len(self.bottlenecks):
            first = self.bottlenecks.iloc[0]
            host = first["host"]
            pipeline = int(
                pipes.loc[
                    (pipes["pipeline_name"] == first["input_pipeline"]) & (pipes["host"] == host),
                    "pipeline",
                ].iloc[0]
            )
        elif host is None and len(pipes):
            host, pipeline = pipes["host"].iloc[0], int(pipes["pipeline"].iloc[0])
        self.host, self.pipeline, self.rank = host, pipeline, rank
        self._nodes: dict[tuple, pd.DataFrame | None] = {}

    def executions(self, host=None, pipeline=None) -> pd.DataFrame:
        """Calls of one pipeline's root iterator, slowest first."""
        host = self.host if host is None else host
        pipeline = self.pipeline if pipeline is None else pipeline
        ex = self.stats.executions
        ex = ex[(ex["host"] == host) & (ex["pipeline"] == pipeline)]
        return ex.sort_values("dur_us", ascending=False, kind="stable")

    def nodes(self, host=None, pipeline=None, rank: int | None = None) -> pd.DataFrame | None:
        """Iterators of one call (rank 0 = the slowest) with their layout and the
        bottleneck (the blocking iterator with the most self time). Each call's once: its
        graph and its table both read it."""
        host = self.host if host is None else host
        pipeline = self.pipeline if pipeline is None else pipeline
        rank = self.rank if rank is None else rank
        key = (host, pipeline, rank)
        if key not in self._nodes:
            self._nodes[key] = self._call_nodes(host, pipeline, rank)
        return self._nodes[key]

    def _call_nodes(self, host, pipeline, rank: int) -> pd.DataFrame | None:
        ex = self.executions(host, pipeline)
        if not len(ex):
            return None
        execution = int(ex.index[min(rank, len(ex) - 1)])
        its = self.stats.iterator_stats(execution=execution)
        its = its.sort_values(["depth", "start_us"]).reset_index(drop=True)
        its["x"] = its["depth"].astype(float)
        its["y"] = its.groupby("depth").cumcount().astype(float) * -1.0
        blocking = its[its["is_blocking"]]
        its["is_bottleneck"] = False
        if len(blocking):
            its.loc[blocking["self_us"].idxmax(), "is_bottleneck"] = True
        return its

    def figure(self, host, pipeline, rank) -> go.Figure | None:
        its = self.nodes(host, pipeline, rank)
        if its is None:
            return None
        meta = self.stats.iterators[self.stats.iterators["host"] == host]
        parent = dict(zip(meta["iterator_id"], meta["parent_id"]))
        traces = _edges(its, parent)
        colors = np.where(
            its["is_bottleneck"], "#d62728", np.where(its["is_blocking"], "#1f77b4", "#9e9e9e")
        )
        text = [
            f"<b>{esc(n)}</b><br>{esc(ln)}<br>start {s:,.1f} µs<br>total {t:,.1f} µs<br>self "
            f"{sf:,.1f} µs<br>calls {c}"
            for n, ln, s, t, sf, c in zip(
                its["name"],
                its["long_name"],
                its["start_us"],
                its["total_us"],
                its["self_us"],
                its["calls"],
            )
        ]
        traces.append(
            dict(
                type="scatter",
                x=its["x"],
                y=its["y"],
                mode="markers+text",
                text=its["name"].astype(str).tolist(),
                # Above and below by turns along a chain: side by side, names of neighbours
                # ran into each other in a narrow view.
                textposition=[
                    "top center" if int(d) % 2 else "bottom center" for d in its["depth"]
                ],
                hovertext=text,
                hoverinfo="text",
                marker=dict(
                    size=np.clip(
                        10 + 38 * its["self_us"] / max(its["self_us"].max(), 1e-9), 10, 48
                    ),
                    color=colors.tolist(),
                    line=dict(width=1, color="rgba(128,128,128,0.9)"),
                ),
                uid="tfdata-nodes",
                showlegend=False,
            )
        )
        ex = self.executions(host, pipeline)
        r = min(rank, len(ex) - 1)
        depth = int(its["depth"].max()) if len(its) else 1
        layout = dict(
            title=dict(
                text=f"Call {r + 1} of {len(ex)} by latency: {ex['dur_us'].iloc[r]:,.1f} µs"
            ),
            height=max(300, int(90 * (its["y"].abs().max() + 2))),
            xaxis=dict(
                title=dict(text="depth (root → source)"),
                dtick=1,
                range=[0.3, depth + 0.7],  # room for the end nodes' names
                showgrid=False,
                zeroline=False,
            ),
            yaxis=dict(visible=False, range=[float(its["y"].min()) - 0.6, 0.8]),
            margin=dict(t=50, b=40, l=30, r=30),
        )
        fig = quick_figure(traces, layout)
        return fig

    def iterator_table(self, host, pipeline, rank) -> Table:
        its = self.nodes(host, pipeline, rank)
        return Table(
            its,
            [
                Column("self_us", "self (µs)", digits=1),
                Column("total_us", "total (µs)", digits=1),
                Column("calls", "calls", "int"),
                Column("start_us", "start (µs)", digits=1),
                Column("is_blocking", "blocking", "bool"),
                Column("is_bottleneck", "bottleneck", "bool"),
                Column("name", "iterator"),
                Column("long_name", "path"),
            ],
            csv="tf_data_iterators.csv",
            sort=("self_us", "desc"),
        )

    def choices(self) -> list[Choice]:
        pipes = self.stats.pipelines
        out: list[Choice] = []
        if self.host is None:
            return out
        if len(pipes) > 1:
            multi = pipes["host"].nunique() > 1
            options = [
                (f"{h} · {n}" if multi else str(n), f"{k}")
                for k, (h, n) in enumerate(zip(pipes["host"], pipes["pipeline_name"]))
            ]
            current = int(
                np.flatnonzero(
                    (pipes["host"].astype(str) == str(self.host)).to_numpy()
                    & (pipes["pipeline"].to_numpy() == self.pipeline)
                )[0]
            )
            out.append(Choice("pipeline", "Pipeline", str(current), options))
        ex = self.stats.executions
        calls = int(ex.groupby(["host", "pipeline"]).size().max()) if len(ex) else 0
        ranks = min(RANKS, calls)
        if ranks > 1:
            rank = min(self.rank, ranks - 1)
            options = [
                (f"{r + 1}" + (" (slowest)" if r == 0 else ""), str(r)) for r in range(ranks)
            ]
            out.append(Choice("rank", "Call by latency", str(rank), options))
        return out

    def _pick(self, pipeline) -> tuple:
        if pipeline is None:
            return self.host, self.pipeline
        row = self.stats.pipelines.iloc[int(pipeline)]
        return row["host"], int(row["pipeline"])

    def blocks(self, pipeline=None, rank=None, **_) -> list:
        if self.host is None:
            return [Html(f"<p class='tf-muted'>{esc(self.empty_text())}</p>")]
        host, pipe = self._pick(pipeline)
        rank = self.rank if rank is None else int(rank)
        fig = self.figure(host, pipe, rank)
        out: list = [Html(self.header(host, pipe))]
        if fig is None:
            out.append(Html("<p class='tf-muted'>This pipeline has no recorded call.</p>"))
            return out
        out.append(Plots([Plot("graph", fig)]))
        out.append(
            TableBlock(
                f"iterators-{pipe}-{rank}",
                self.iterator_table(host, pipe, rank),
                "Iterators of this call",
            )
        )
        return out

    def empty_text(self) -> str:
        frameworks = getattr(self.run, "framework", None)
        if frameworks is not None and frameworks.found and "tensorflow" not in frameworks:
            # Asked for by name on a JAX or PyTorch run: this is TensorFlow's own tool.
            return (
                "This view shows TensorFlow's input pipelines (tf.data); this "
                f"{frameworks.title} capture has none."
            )
        return no_trace_note(self.run) or (
            "No tf.data iterator events in this capture: the model reads no tf.data "
            "pipeline, or the profiler did not trace it (host tracer level 2 or more traces "
            "tf.data)."
        )

    def header(self, host, pipe) -> str:
        summary = esc(tf_data_summary(self.bottlenecks))
        pipes = self.stats.pipelines
        name = pipes.loc[(pipes["host"] == host) & (pipes["pipeline"] == pipe), "pipeline_name"]
        b = self.bottlenecks[
            (self.bottlenecks["host"] == host)
            & (self.bottlenecks["input_pipeline"].isin(name.tolist()))
        ]
        legend = (
            "<p class='tf-muted'>Bold: the critical path; red: the bottleneck; dashed: not "
            "blocking the call. Hover a node for its times.</p>"
        )
        if not len(b):
            return f"<p>{summary}</p>{legend}"
        r = b.iloc[0]
        return (
            f"<p>{summary}</p>"
            f"<p><b>Bottleneck</b> <span class='tf-bad'>{esc(r['iterator_name'])}</span> "
            f"({esc(r['iterator_long_name'])}), {r['iterator_latency_us']:,.1f} µs self time "
            f"in the slowest call ({r['max_latency_us']:,.1f} µs).</p>"
            f"<p><b>Suggestion</b> {esc(r['suggestion'])}</p>{legend}"
        )

    def findings(self) -> list[str]:
        if self.host is None:
            return [self.empty_text()]
        if not len(self.bottlenecks):
            return [tf_data_summary(self.bottlenecks)]
        r = self.bottlenecks.iloc[0]
        return [
            f"Bottleneck: {r['iterator_long_name']} ({r['iterator_latency_us']:,.1f} µs of the "
            f"slowest call's {r['max_latency_us']:,.1f} µs)",
            str(r["suggestion"]),
        ]


def tf_data_graph(run, host: str | None = None, pipeline: int | None = None) -> TfDataGraphView:
    """A tf.data input pipeline's iterator graph, its critical path in bold and its
    bottleneck in red, with the calls that took longest.

    Args:
        run: a loaded :class:`~tfprof_widgets.Run` of a TensorFlow capture.
        host: the host whose pipeline to show (default: the slowest pipeline's).
        pipeline: the pipeline's id on that host (default: the slowest).

    Returns:
        A :class:`TfDataGraphView` (end a cell with it); its choosers show the other
        pipelines and the next-slowest calls.
    """
    return TfDataGraphView(run, host, pipeline)


def _edges(its: pd.DataFrame, parent: dict) -> list[dict]:
    """A line from each iterator to its parent: bold and solid where it blocks."""
    pos = {i: (x, y) for i, x, y in zip(its["iterator_id"], its["x"], its["y"])}
    traces: list[dict] = []
    for i, blocking in zip(its["iterator_id"], its["is_blocking"]):
        p = parent.get(i)
        if p in pos:
            (x0, y0), (x1, y1) = pos[p], pos[i]
            traces.append(
                dict(
                    type="scatter",
                    x=[x0, x1],
                    y=[y0, y1],
                    mode="lines",
                    hoverinfo="skip",
                    line=dict(
                        color="rgba(128,128,128,0.95)" if blocking else "rgba(128,128,128,0.6)",
                        width=4 if blocking else 1.5,
                        dash="solid" if blocking else "dash",
                    ),
                    showlegend=False,
                )
            )
    return traces
