"""XProf's Op Profile for XLA runs: the tree program -> HLO category -> HLO op
(``run.op_profile``) as a sortable table, expanded to the depth the chooser picks."""

from __future__ import annotations

import numpy as np

from .base import Choice, Html, Panel, TableBlock, View
from .graph_viewer_view import graph_key, graph_panel
from .names import short_op_name
from .page.display import esc
from .tables import Column, Table

__all__ = ["HloOpProfileView", "hlo_op_profile"]

# Chooser value -> the tree levels shown (a deeper value shows its parents too).
DEPTHS = {
    "program": ("program",),
    "category": ("program", "category"),
    "op": ("program", "category", "op"),
}


# Fraction columns of the op profile the table shows in percent.
PERCENT_OF_FRACTION = ("flop_utilization", "hbm_bw_utilization", "xprof_flop_utilization")


# A row click opens the graph around its op; a click on its source cell, that line.
LINKS = [
    {"panel": "graph", "column": "graph_key"},
    {"panel": "source", "column": "source", "cell": "source"},
]


class HloOpProfileView(View):
    title = "HLO op profile"

    def __init__(self, run) -> None:
        self.run = run
        self.tree = run.op_profile

    def _op_rows(self):
        """The op rows' program ids, names, device times and source lines."""
        from .source_lines_view import line_of_instruction

        ops = self.tree[(self.tree["level"] == "op").to_numpy()]
        pids = ops["program_id"].to_numpy(np.int64)
        names = ops["name"].astype(str).to_numpy(object)
        return ops.index, pids, names, line_of_instruction(self.run, pids, names)

    def panels(self) -> list[Panel]:
        from .source_lines_view import source_panel

        if not len(self.tree):
            return []
        at, pids, names, lines = self._op_rows()
        times = self.tree.loc[at, "time_us"].to_numpy(float)
        return [graph_panel(self.run, pids, names, times), source_panel(self.run, lines)]

    def choices(self) -> list[Choice]:
        return [
            Choice(
                "depth",
                "expand to",
                "category",
                [("programs", "program"), ("categories", "category"), ("ops", "op")],
            )
        ]

    def table(self) -> Table:
        t = self.tree
        indent = t["level"].astype(str).map({"program": "", "category": "  ", "op": "    "})
        t = t.assign(node=indent + t["name"].astype(str), gflops=t["flops"] / 1e9)
        at, pids, names, lines = self._op_rows()
        keys = np.full(len(t), "", object)
        where = np.full(len(t), "", object)
        pos = t.index.get_indexer(at)
        keys[pos], where[pos] = graph_key(pids, names), lines
        t = t.assign(graph_key=keys, source=where)
        t, time_cols = time_columns(t, "time_us", "time")
        # The utilisations are fractions (schema.OP_PROFILE); shown and exported as the
        # percent their headers say (0.6 under "(%)" read as 0.6 %, not 60 %).
        t = t.assign(**{c: t[c] * 100.0 for c in PERCENT_OF_FRACTION})
        cols = [
            *time_cols,
            Column("time_percent", "time (%)", "pct", digits=1),
            Column(
                "flop_utilization",
                "FLOP util. (%)",
                "pct",
                digits=2,
                csv="flop_utilization_percent",
                title="FLOPs over the node's time at the peak FLOP rate, at most 100 %: an "
                "op's is the roofline view's 'FLOP util.'",
            ),
            Column(
                "hbm_bw_utilization",
                "HBM BW util. (%)",
                "pct",
                digits=1,
                csv="hbm_bw_utilization_percent",
                title="HBM bytes over the node's time at the peak HBM bandwidth, at most "
                "100 %: an op's is the roofline view's 'HBM BW util.'",
            ),
            Column(
                "xprof_flop_utilization",
                "XProf FLOP share (%)",
                "pct",
                digits=2,
                csv="xprof_flop_utilization_percent",
                title="XProf's 'FLOPS utilization': FLOPs over the whole tree's time at the "
                "peak, so the children add up to their parent (not the node's own rate)",
            ),
            Column("occurrences", "count", "int"),
            Column("gflops", "GFLOP", digits=3, title="FLOPs of the node's ops, in 10^9 (XProf's)"),
            Column("flops", hidden=True),
            Column("hbm_bytes", "HBM (MiB)", "bytes", title="HBM bytes of the node's ops, MiB"),
            Column("level", "level"),
            Column("tf_op_name", "framework op"),
            Column(
                "source",
                "source",
                title="file:line of the user's program that made the op (click: its lines)",
            ),
            Column("graph_key", internal=True),
            Column("path", hidden=True),
            Column("parent", hidden=True),
            Column("node", "node", full="path"),
        ]
        # A header click sorts each node's children, not the rows: the tree stays a tree.
        return Table(t, cols, csv="hlo_op_profile.csv", tree=("path", "parent"))

    def blocks(self, depth: str = "category", **_) -> list:
        if not len(self.tree):
            return [Html(f"<p class='tf-muted'>{esc(self.empty_text())}</p>")]
        hidden = [lv for lv in ("program", "category", "op") if lv not in DEPTHS[depth]]
        return [
            TableBlock(
                "op_profile",
                self.table(),
                "Program → category → op (IDLE excluded; sort by any column; click an op "
                "for the graph around it, its source cell for its line)",
                preset={"exclude": {"level": hidden}} if hidden else None,
                links=LINKS,
            )
        ]

    def findings(self) -> list[str]:
        t = self.tree
        if not len(t):
            return [self.empty_text()]
        progs = t[t["level"] == "program"]
        cats = t[t["level"] == "category"].sort_values("time_us", ascending=False)
        ops = t[t["level"] == "op"].sort_values("time_us", ascending=False)
        top = ops.iloc[0]
        return [
            f"{len(progs)} programs, {len(cats)} categories, {len(ops)} HLO ops, "
            f"{duration_text(progs['time_us'].sum())} of device time (IDLE excluded)",
            f"Largest category: {cats.iloc[0]['name']} ({cats.iloc[0]['time_percent']:.1f} %); "
            f"largest op: {top['name']} ({top['time_percent']:.1f} %, "
            f"{short_op_name(str(top['tf_op_name']), 60) or 'no framework op'})",
        ]

    def empty_text(self) -> str:
        return (
            "No op profile: the capture has no XLA programs with device ops on a GPU or TPU "
            "whose peaks the device plane gives."
        )


def time_columns(df, column: str, label: str, digits: int = 1):
    """A µs column as a user can read it: in µs, or, where its largest value is a second or
    more (a TPU's copy-done summed over a capture: 77,773,215.7 µs), in ms under a header
    saying so, the µs kept for the CSV. Returns the frame and the columns to show."""
    values = df[column].to_numpy(float)
    if not len(values) or np.nanmax(values) < 1e6:
        return df, [Column(column, f"{label} (µs)", digits=digits)]
    ms = column.removesuffix("_us") + "_ms"
    df = df.assign(**{ms: values / 1e3})
    return df, [Column(ms, f"{label} (ms)", digits=digits), Column(column, hidden=True)]


def duration_text(us: float) -> str:
    """A duration in the unit that reads best: µs below a millisecond, ms below a second,
    else s."""
    if us < 1e3:
        return f"{us:,.1f} µs"
    if us < 1e6:
        return f"{us / 1e3:,.2f} ms"
    return f"{us / 1e6:,.3f} s"


def hlo_op_profile(run) -> HloOpProfileView:
    """XProf's op profile tree (program → category → op) with time and FLOP / HBM bandwidth
    utilisation; ``run.op_profile`` holds the numbers."""
    return HloOpProfileView(run)
