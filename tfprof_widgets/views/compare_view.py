"""Compare two runs: step time side by side and which ops got slower or faster, per step
when both runs have steps (their totals differ with the capture's length alone); and, where
both runs have iterations (step markers), HTA's trace diff of their first iterations (each
operator's and kernel's count and total time in each, :mod:`..analysis.trace_diff`)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from ..analysis.compare import op_diff
from ..analysis.steps import CATEGORIES
from ..analysis.trace_diff import compare_traces
from ._common import of_runs, quick_figure, run_label, step_bars
from .base import Html, Plot, Plots, TableBlock, View
from .names import short_op_name
from .page.display import esc
from .tables import Column, Table

__all__ = ["CompareView", "compare"]

TOP_CHANGED = 15
SLOWER, FASTER = "#d62728", "#2ca02c"


def _change(a: float, b: float, names: tuple[str, str]) -> str:
    if a <= 0 and b <= 0:
        return ""
    if a <= 0:
        return f"only in {names[1]}"
    if b <= 0:
        return f"only in {names[0]}"
    r = b / a
    if abs(r - 1) < 0.005:
        return "same"
    return f"{r:.2f}× slower" if r > 1 else f"{1 / r:.2f}× faster"


class CompareView(View):
    title = "Compare runs"

    def __init__(self, run_a, run_b, names: tuple[str, str] | None = None) -> None:
        self.a, self.b = run_a, run_b
        if names is None:
            names = (run_label(run_a), run_label(run_b))
            if names[0] == names[1]:
                names = (f"{names[0]} (A)", f"{names[1]} (B)")
        self.names = tuple(str(n) for n in names)
        self.sa, self.sb = run_a.overview_summary, run_b.overview_summary
        self.diff = of_runs(run_a, run_b, "op_diff", lambda: op_diff(run_a, run_b))
        self.counts = (run_a.step_count, run_b.step_count)
        # Per step only when both runs have steps and step time (see op_diff).
        self.per_step = all(c.steps for c in self.counts) and (
            self.sa.step_time_ms_avg > 0 and self.sb.step_time_ms_avg > 0
        )
        self.title = f"Compare runs: {self.names[0]} → {self.names[1]}"

    def _columns(self) -> tuple[str, str, str]:
        """The diff's columns the view reads: per step, or the totals without steps."""
        if self.per_step:
            return "self_time_a_per_step_us", "self_time_b_per_step_us", "delta_per_step_us"
        return "self_time_a_us", "self_time_b_us", "delta_us"

    def headline(self) -> str:
        ta, tb = self.sa.step_time_ms_avg, self.sb.step_time_ms_avg
        a, b = self.names
        if self.per_step:
            if abs(tb / ta - 1) < 0.005:
                change = f"{b} takes the same time per step as {a}"
            elif tb < ta:
                change = f"{b} is {ta / tb:.2f}x faster per step than {a}"
            else:
                change = f"{b} is {tb / ta:.2f}x slower per step than {a}"
            return f"{change} ({ta:,.2f} ms → {tb:,.2f} ms on average)."
        ops = "the ops below are compared by their total self time over each capture"
        with_steps = [n for n, c in zip(self.names, self.counts) if c.steps]
        if not with_steps:
            return (
                "Neither run has steps (no step markers), so there is no step time to "
                f"compare: {ops}."
            )
        other = b if with_steps[0] == a else a
        return (
            f"Only {with_steps[0]} has steps; {other} has none, so there is no step time "
            f"to compare: {ops}."
        )

    def step_figure(self) -> go.Figure:
        frame = pd.DataFrame(
            [
                {c: self.sa.breakdown_ms_avg[c] * 1e3 for c in CATEGORIES},
                {c: self.sb.breakdown_ms_avg[c] * 1e3 for c in CATEGORIES},
            ]
        )
        return step_bars(
            frame,
            list(self.names),
            title="Average step time",
            xaxis_title="run",
            height=340,
            uid="cmp",
        )

    def delta_figure(self) -> go.Figure | None:
        col_a, col_b, col_d = self._columns()
        d = self.diff[self.diff[col_d] != 0].head(TOP_CHANGED)
        if not len(d):
            return None
        per = " per step" if self.per_step else ""
        ops = d["operation"].astype(str).tolist()
        labels = [f"{short_op_name(o, 40)}" for o in ops]
        seen: dict[str, int] = {}
        for i, lab in enumerate(labels):  # the same op on host and device: keep both bars
            seen[lab] = seen.get(lab, 0) + 1
            if seen[lab] > 1:
                labels[i] = f"{lab} ({d['host_or_device'].iloc[i]})"
        delta_ms = d[col_d].to_numpy() / 1e3
        change = [_change(a, b, self.names) for a, b in zip(d[col_a], d[col_b])]
        bar = dict(
            type="bar",
            x=delta_ms,
            y=labels,
            orientation="h",
            marker=dict(color=np.where(delta_ms > 0, SLOWER, FASTER).tolist()),
            customdata=np.column_stack([ops, d[col_a] / 1e3, d[col_b] / 1e3, change]).tolist(),
            hovertemplate=(
                "%{customdata[0]}<br>"
                + esc(self.names[0])
                + " %{customdata[1]:,.3f} ms → "
                + esc(self.names[1])
                + f" %{{customdata[2]:,.3f}} ms{per}<br>%{{x:+,.3f}} ms, "
                "%{customdata[3]}<extra></extra>"
            ),
            uid="cmp-delta",
        )
        layout = dict(
            title=dict(
                text=f"Ops whose self time{per} changed most ({self.names[1]} − "
                f"{self.names[0]}; red: slower, green: faster)"
            ),
            height=140 + 24 * len(d),
            margin=dict(t=50, b=40, l=10, r=10),
            xaxis=dict(title=dict(text=f"change in self time{per} (ms)"), zeroline=True),
            yaxis=dict(autorange="reversed", automargin=True),
            showlegend=False,
        )
        fig = quick_figure([bar], layout)
        return fig

    def table(self) -> Table:
        """The op diff laid out, made and encoded once per pair of runs and names (438 KB on
        the BERT capture): every view of the pair, and its cell run again, reuse it."""
        key = "compare.table\x00" + "\x00".join(self.names)
        return of_runs(self.a, self.b, key, self._table)

    def _table(self) -> Table:
        a, b = self.names
        col_a, col_b, col_d = self._columns()
        d = self.diff.copy()
        d["ratio"] = d["ratio"].where((d[col_a] > 0) & (d[col_b] > 0))
        d["change"] = [_change(x, y, self.names) for x, y in zip(d[col_a], d[col_b])]
        per = [
            Column(
                "delta_per_step_us",
                "change per step (µs)",
                digits=1,
                color="sign",
                title=f"{b} − {a}, each run's self time divided by its steps: red is "
                "slower, green faster",
            ),
            Column("self_time_a_per_step_us", f"{a} per step (µs)", digits=1),
            Column("self_time_b_per_step_us", f"{b} per step (µs)", digits=1),
        ]
        totals = [
            Column(
                "delta_us",
                "change (µs)",
                digits=1,
                color=None if self.per_step else "sign",
                title=f"{b} − {a} over each whole capture"
                + ("" if self.per_step else ": red is slower, green faster"),
            ),
            Column("self_time_a_us", f"{a} (µs)", digits=1),
            Column("self_time_b_us", f"{b} (µs)", digits=1),
        ]
        return Table(
            d,
            [
                *((per + totals) if self.per_step else totals),
                Column(
                    "ratio",
                    f"{b} / {a}" + (" per step" if self.per_step else ""),
                    digits=3,
                    missing="—",
                ),
                Column("change", "change", colors=None),
                Column("occurrences_a", f"count {a}", "int"),
                Column("occurrences_b", f"count {b}", "int"),
                Column("host_or_device", "on"),
                Column("type", "type"),
                Column("operation", "operation"),
            ],
            csv="op_diff.csv",
        )

    def trace_diff(self) -> pd.DataFrame | None:
        """HTA's trace diff of the runs' first iterations (first host each), largest change
        in total time first; None where a run has no iteration to compare."""

        def make():
            try:
                d = compare_traces(self.a, self.b)
            except ValueError:  # a run without step markers: HTA has no iteration either
                return None
            if not len(d):  # runs without Kineto categories (not PyTorch): nothing HTA reads
                return None
            order = d["diff_us"].abs().sort_values(ascending=False, kind="stable").index
            return d.loc[order].reset_index(drop=True)

        return of_runs(self.a, self.b, "trace_diff", make)

    def _trace_diff_table(self, d: pd.DataFrame) -> Table:
        a, b = self.names
        return Table(
            d,
            [
                Column(
                    "diff_us",
                    "change (µs)",
                    digits=1,
                    color="sign",
                    title=f"{b} − {a}: total time of the name's events in each run's first "
                    "iteration",
                ),
                Column("control_total_us", f"{a} (µs)", digits=1),
                Column("test_total_us", f"{b} (µs)", digits=1),
                Column("diff_count", "count change", "int"),
                Column("control_count", f"count {a}", "int"),
                Column("test_count", f"count {b}", "int"),
                Column("change", "count", colors=None, title="'+' more, '-' fewer, '=' as many"),
                Column("name", "operator or kernel"),
            ],
            csv="trace_diff.csv",
        )

    def blocks(self, **_) -> list:
        verdict = self.headline()
        cls = ""
        ta, tb = self.sa.step_time_ms_avg, self.sb.step_time_ms_avg
        if self.per_step and abs(tb / ta - 1) >= 0.005:
            cls = "tf-good" if tb < ta else "tf-bad"
        # No step chart unless both runs have steps: a chart of zeros says nothing.
        plots = [Plot("step_time", self.step_figure())] if self.per_step else []
        delta = self.delta_figure()
        if delta is not None:
            plots.append(Plot("delta", delta))
        per = ", per step" if self.per_step else ""
        return [
            Html(f"<p><b class='{cls}'>{esc(verdict)}</b></p>"),
            *([Plots(plots)] if plots else []),
            TableBlock("diff", self.table(), f"Ops side by side{per}, largest change first"),
            *self._trace_diff_blocks(),
        ]

    def _trace_diff_blocks(self) -> list:
        d = self.trace_diff()
        if d is None:
            return []
        title = "Trace diff (HTA): operators and kernels of each run's first iteration"
        return [TableBlock("trace_diff", self._trace_diff_table(d), title)]

    def findings(self) -> list[str]:
        col_a, col_b, col_d = self._columns()
        per = " per step" if self.per_step else ""
        lines = [self.headline()]
        d = self.diff[self.diff[col_d] != 0]
        for label, rows in (("slower", d[d[col_d] > 0]), ("faster", d[d[col_d] < 0])):
            if len(rows):
                r = rows.iloc[0]
                lines.append(
                    f"Most {label}: {r['operation']} ({r[col_d]:+,.1f} µs{per}, "
                    f"{_change(r[col_a], r[col_b], self.names)})"
                )
        return lines

    def text(self) -> str:
        return "\n".join([self.title, *self.findings()])


def compare(run_a, run_b, names: tuple[str, str] | None = None) -> CompareView:
    """Two runs side by side: step time per category and the op-level diff table. The runs
    are called by ``names``, else by the notebook variables holding them (``slow``, ``fast``),
    else by their names."""
    return CompareView(run_a, run_b, names)
