"""XLA graph viewer: the HLO instruction graph around one op (XProf's graph viewer), each node
with its measured device time, FLOPs and bytes, fusions drawn as boxes around their bodies.

The graph is the analysis's (``frameworks/xla/graph.py``: XLA's dumper's nodes and
edges, our layered layout); this view draws it offline with plotly: edges as line segments
(operands above their users), nodes as markers coloured by device time, the op a diamond.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..errors import ProfileError
from ..frameworks.xla import HloGraph, hlo_graph
from ._common import of_run, quick_figure
from .base import Html, Panel, Plot, Plots, TableBlock, View
from .page.display import esc
from .tables import Column, Table

__all__ = ["GraphViewerView", "graph_key", "graph_panel", "graph_viewer"]

LABELS = 120  # nodes labelled on the plot at most (hover names every node)
_FUSION_FILL = "rgba(120,120,120,0.10)"


def _fmt(v: float, unit: str) -> str:
    if not np.isfinite(v):
        return "n/a"
    for scale, prefix in ((1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(v) >= scale:
            return f"{v / scale:,.2f} {prefix}{unit}"
    return f"{v:,.0f} {unit}"


NO_PROGRAMS = (
    "No XLA programs in this capture: the graph viewer needs the HLO programs JAX, TPU and "
    "TF-with-XLA captures carry on /host:metadata."
)


class GraphViewerView(View):
    title = "XLA graph viewer"

    def __init__(self, run, op: str | None = None, depth: int = 2, program=None) -> None:
        self.run = run
        # A run without XLA programs shows why there is no graph, as the other XLA views do;
        # an op or program named that the run lacks is an error (UnknownHloOpError).
        self.graph: HloGraph | None = None
        if op is not None or program is not None or len(run.hlo_modules):
            key = ("graph_viewer", op, int(depth), None if program is None else str(program))
            self.graph = of_run(run, key, lambda: hlo_graph(run, op, depth, program))

    # -- the figure -------------------------------------------------------------------------
    def figure(self):
        g = self.graph
        nodes = g.nodes
        drawn = nodes[nodes["drawn"]].reset_index(drop=True)
        pos = {n: (x, y) for n, x, y in zip(drawn["instruction"], drawn["x"], drawn["y"])}
        xs: list = []
        ys: list = []
        for a, b in zip(g.edges["src"], g.edges["dst"]):
            if a in pos and b in pos:
                xs += [pos[a][0], pos[b][0], None]
                ys += [pos[a][1], pos[b][1], None]
        t = drawn["total_time_us"].to_numpy(float)
        hover = [
            f"<b>{esc(r.instruction)}</b> ({esc(r.opcode)})<br>{esc(r.shape)}"
            + (f"<br>in fusion {esc(r.fusion)}" if r.fusion else "")
            + f"<br>device time {r.total_time_us:,.2f} µs in {r.occurrences:,} runs"
            + f"<br>FLOPs {_fmt(r.flops, 'FLOP')}, bytes {_fmt(r.bytes_accessed, 'B')}"
            for r in drawn.itertuples()
        ]
        labels = list(drawn["instruction"]) if len(drawn) <= LABELS else [
            n if n == g.op or tt > 0 else "" for n, tt in zip(drawn["instruction"], t)
        ]  # fmt: skip
        data = [
            {
                "type": "scatter",
                "x": xs,
                "y": ys,
                "mode": "lines",
                "hoverinfo": "skip",
                "line": {"width": 1, "color": "rgba(120,120,120,0.7)"},
                "name": "edges",
                "showlegend": False,
            },  # fmt: skip
            {
                "type": "scatter",
                "x": drawn["x"].tolist(),
                "y": drawn["y"].tolist(),
                "mode": "markers+text",
                "text": labels,
                "textposition": "top center",
                "textfont": {"size": 10},
                "hovertext": hover,
                "hoverinfo": "text",
                "customdata": drawn["instruction"].tolist(),
                "marker": {
                    "size": 14,
                    "symbol": ["diamond" if n == g.op else "circle" for n in drawn["instruction"]],
                    "color": t.tolist(),
                    # Untimed nodes (a fused instruction, one that never ran) grey.
                    "colorscale": [
                        [0, "#d9d9d9"],
                        [1e-9, "#ffffb2"],
                        [0.5, "#fd8d3c"],
                        [1, "#bd0026"],
                    ],  # fmt: skip
                    "showscale": bool(t.max(initial=0) > 0),
                    "colorbar": {"title": {"text": "µs"}},
                    "line": {"width": 1, "color": "#444"},
                },
                "name": "instructions",
                "showlegend": False,
            },
        ]
        rows = int(drawn["layer"].to_numpy().max(initial=0)) + 1
        boxes, box_names = self._fusion_boxes(drawn)
        layout = {
            "title": {"text": f"{esc(g.module)}: {esc(g.op)}, {g.depth} hops"},
            "xaxis": {"visible": False},
            "yaxis": {"visible": False},
            "height": int(min(1400, max(360, 90 * rows))),
            "margin": {"l": 10, "r": 10, "t": 40, "b": 10},
            "hovermode": "closest",
            "shapes": boxes,
            "annotations": box_names,
        }
        return quick_figure(data, layout)

    def _fusion_boxes(self, drawn: pd.DataFrame) -> tuple[list[dict], list[dict]]:
        """A box around each expanded fusion's body (its instructions' extent), the op's in
        red, and its name at the box's corner."""
        boxes, names = [], []
        for name, body in drawn[drawn["fusion"] != ""].groupby("fusion", sort=False):
            x, y = body["x"].to_numpy(float), body["y"].to_numpy(float)
            mine = name == self.graph.op
            line = {"width": 2 if mine else 1, "dash": "dot",
                    "color": "#b71c1c" if mine else "#777"}  # fmt: skip
            boxes.append(
                {
                    "type": "rect",
                    "x0": x.min() - 0.4,
                    "x1": x.max() + 0.4,
                    "y0": y.min() - 0.4,
                    "y1": y.max() + 0.4,
                    "layer": "below",
                    "fillcolor": _FUSION_FILL,
                    "line": line,
                }  # fmt: skip
            )
            names.append(
                {
                    "x": x.min() - 0.4,
                    "y": y.max() + 0.4,
                    "text": esc(str(name)),
                    "showarrow": False,
                    "xanchor": "left",
                    "yanchor": "bottom",
                    "font": {"size": 9, "color": line["color"]},
                }  # fmt: skip
            )
        return boxes, names

    # -- the parts of the view --------------------------------------------------------------
    def table(self) -> Table:
        cols = [
            Column("instruction", "instruction"),
            Column("opcode", "opcode"),
            Column("shape", "shape"),
            Column("fusion", "in fusion", title="the fusion whose body holds it"),
            Column("hops", "hops", "int", title="hops from the op (-1: in a fusion body)"),
            Column("total_time_us", "time (µs)", digits=2),
            Column("occurrences", "runs", "int"),
            Column(
                "gflops",
                "GFLOP",
                digits=3,
                title="FLOPs per execution, in 10^9 (XLA's cost analysis; none inside a "
                "fusion body)",
            ),  # fmt: skip
            Column("bytes_accessed", "MiB", "bytes", title="bytes accessed per execution"),
            Column("status", "status", title="XLA's graph filter: what it left out around it"),
        ]
        nodes = self.graph.nodes.assign(gflops=self.graph.nodes["flops"] / 1e9)
        return Table(nodes, cols, csv="graph_nodes.csv", sort=("total_time_us", "desc"))

    def header(self) -> str:
        g = self.graph
        n = g.nodes
        return (
            f"<div>{esc(g.module)} (program {g.program_id}): {int(n['drawn'].sum()):,} "
            f"instructions within {g.depth} hops of <b>{esc(g.op)}</b>, "
            f"{len(g.edges):,} edges, {int(n['expanded'].sum()):,} fusions expanded."
            + (f" <span class='tf-bad'>{esc(g.note)}</span>" if g.note else "")
            + "</div>"
        )

    def blocks(self, **_) -> list:
        if self.graph is None:
            return [Html(f"<p class='tf-muted'>{esc(NO_PROGRAMS)}</p>")]
        return [
            Html(self.header()),
            Plots([Plot("graph", self.figure())]),
            TableBlock("graph-nodes", self.table(), "Instructions in the graph"),
        ]

    def findings(self) -> list[str]:
        if self.graph is None:
            return [NO_PROGRAMS]
        g = self.graph
        n = g.nodes[g.nodes["drawn"]]
        me = g.nodes[g.nodes["instruction"] == g.op].iloc[0]
        lines = [
            f"{g.module} (program {g.program_id}), around {g.op} ({me['opcode']}, "
            f"{me['total_time_us']:,.2f} µs in {me['occurrences']:,} runs), {g.depth} hops: "
            f"{len(n):,} instructions, {len(g.edges):,} edges"
        ]
        for r in n.sort_values("total_time_us", ascending=False).head(5).itertuples():
            if r.total_time_us > 0:
                lines.append(f"  {r.total_time_us:12,.2f} µs  {r.instruction} ({r.opcode})")
        lines += [f"{a} -> {b}" for a, b in zip(g.edges["src"], g.edges["dst"])][:20]
        return lines + ([g.note] if g.note else [])


def graph_viewer(run, op: str | None = None, depth: int = 2, program=None) -> GraphViewerView:
    """XProf's graph viewer: the HLO graph ``depth`` hops around ``op`` (default the heaviest
    instruction by device time) with each node's time, FLOPs and bytes; the numbers are
    :func:`~tfprof_widgets.frameworks.xla.graph.hlo_graph`'s. Raises
    :class:`~tfprof_widgets.frameworks.xla.graph.UnknownHloOpError` for an op or
    program the run lacks; a run without XLA programs gets a view that says so."""
    return GraphViewerView(run, op, depth, program)


# -- the graph around an op, opened by a click in the op profile and the roofline -------------
#: Graphs sent with the op profile and the roofline: those of their heaviest ops. Each is one
#: small figure (5 to 23 kB of JSON, 15 ms, on the JAX H100 capture's ops at 2 hops), so the
#: 20 heaviest cost 0.22 MB and 0.4 s; there they hold 90 % of the 45 ops' device time (the
#: op tables' long tail is ops of microseconds).
GRAPH_PANELS = 20
#: XLA's dumper walks its program's computations for each graph (~1 s per graph in a program
#: of 10^5 instructions): the graphs sent add up to at most this many instructions walked, so
#: a huge program sends fewer (5 of 10^5 instructions; none of one past this size, whose
#: one graph takes tens of seconds) and its view stays seconds.
GRAPH_WORK = 500_000


def graph_key(program_ids, names) -> np.ndarray:
    """The key of the graph around each (program id, HLO instruction): 'name@program'."""
    ids = pd.Series(program_ids).astype("int64").astype(str)
    return (pd.Series(names, dtype=object).astype(str) + "@" + ids.to_numpy()).to_numpy(object)


def graph_panel(run, program_ids, names, weights, depth: int = 2) -> Panel:
    """The graph viewer (``depth`` hops) around each of the :data:`GRAPH_PANELS` heaviest
    (program id, instruction) of the arguments, by ``weights`` (their device time), keyed
    by :func:`graph_key`. An op the programs lack, or whose graph cannot be laid out, gets
    the reason instead of a graph."""
    program_ids = np.asarray(program_ids, np.int64)
    names = np.asarray(names, object)
    keys = graph_key(program_ids, names)
    order = np.argsort(-np.asarray(weights, float), kind="stable")
    sizes = _program_sizes(run)
    items: dict[str, list] = {}
    work = 0
    for i in order:
        size = sizes.get(int(program_ids[i]), 0)
        key = str(keys[i])
        if len(items) >= GRAPH_PANELS:
            break
        if key in items or work + size > GRAPH_WORK:
            continue  # a smaller program's op may still fit
        work += size
        try:
            view = GraphViewerView(run, str(names[i]), depth, int(program_ids[i]))
            items[key] = [Html(view.header()), Plots([Plot("graph", view.figure())])]
        except ProfileError as e:
            items[key] = [Html(f"<p class='tf-muted'>{esc(str(e))}</p>")]
    return Panel(
        "graph",
        "Graph viewer",
        items,
        f"Only the {len(items)} heaviest ops' graphs are sent with the page (none of a "
        f"program of more than {GRAPH_WORK:,} instructions): "
        "tw.views.graph_viewer(run, op=...) draws the graph around {key} (op@program).",
    )


def _program_sizes(run) -> dict[int, int]:
    """Instructions per program id (the largest where hosts share an id)."""
    sizes: dict[int, int] = {}
    for _host, pid, module in run.hlo_modules:
        n = sum(len(c.instructions) for c in module.computations)
        sizes[int(pid)] = max(sizes.get(int(pid), 0), n)
    return sizes
