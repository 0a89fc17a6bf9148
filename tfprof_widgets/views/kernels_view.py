"""GPU kernel stats: where kernel time goes (by kernel, by the framework op that launched it)
and the kernel table."""

from __future__ import annotations

import pandas as pd

from ..analysis.tool_data import no_trace_note
from ..frameworks import rules_of
from ._pies import NO_PIE_NOTE, pie_plot, pie_row, top_slices, worth_a_pie
from .base import Html, TableBlock, View
from .names import short_kernel_name, short_op_name
from .page.display import esc
from .tables import Column, Table

__all__ = ["KernelStatsView", "kernel_stats"]

TOP = 10


class KernelStatsView(View):
    title = "GPU kernel stats"

    def __init__(self, run) -> None:
        self.run = run
        self.kernels = run.kernels
        names = self.kernels["kernel_name"].astype(str)
        # One short name per distinct kernel (a kernel has a row per launch shape and op).
        short = {n: short_kernel_name(n) for n in names.unique()}
        self._short = names.map(short)

    def table(self) -> Table:
        k = self.kernels.assign(kernel=self._short.to_numpy())
        multi = k["host"].nunique() > 1
        cols = [
            Column("total_time_us", "total (µs)", digits=1),
            Column("occurrences", "count", "int"),
            Column("avg_time_us", "avg (µs)", digits=2),
            Column("min_time_us", "min (µs)", digits=2),
            Column("max_time_us", "max (µs)", digits=2),
            Column("occupancy_percent", "occup. %", "pct", digits=0),
            Column("registers_per_thread", "regs", "int", title="registers per thread"),
            Column("shmem_bytes", "smem (B)", "int", title="shared memory per block"),
            Column("block_dim", "block"),
            Column("grid_dim", "grid"),
            Column(
                "is_op_tensor_core_eligible",
                "TC eligible",
                "bool",
                title="the op could use Tensor Cores",
            ),
            Column(
                "is_kernel_using_tensor_core",
                "uses TC",
                "bool",
                title="the kernel uses Tensor Cores (by its name: XProf's list, and ours for "
                "Hopper's nvjet_*, sm90_xmma_* and CUTLASS TensorOp kernels)",
            ),
            *(
                [
                    Column(
                        "beyond_xprof",
                        "beyond XProf",
                        "bool",
                        title="ours, not XProf's: the op of a kernel inside a CUDA graph "
                        "(XProf: XlaModule), or Tensor Cores XProf's name list misses",
                    )
                ]
                if "beyond_xprof" in k and k["beyond_xprof"].any()
                else []
            ),
            *(
                [
                    Column(
                        "no_op_time_us",
                        "no op (µs)",
                        digits=1,
                        title="time of launches no op accounts for: kernel time the op "
                        "stats count as device IDLE (as XProf's do)",
                    )
                ]
                if k["no_op_time_us"].gt(0).any()
                else [Column("no_op_time_us", hidden=True)]
            ),
            *([Column("host", "host")] if multi else [Column("host", hidden=True)]),
            Column("operation", rules_of(self.run).op_label),
            Column("kernel", "kernel", full="kernel_name"),
        ]
        return Table(k, cols, csv="kernel_stats.csv", sort=("total_time_us", "desc"))

    def blocks(self, **_) -> list:
        k = self.kernels
        if not len(k):
            return [Html(f"<p class='tf-muted'>{esc(self.empty_text())}</p>")]
        plots = []
        by_kernel = top_slices(k.groupby("kernel_name")["total_time_us"].sum(), TOP)
        if worth_a_pie(by_kernel):
            plots.append(
                pie_plot(
                    "top_kernels",
                    by_kernel,
                    f"Kernel time by kernel (top {TOP})",
                    short_kernel_name,
                    click={"table": "kernels", "column": "kernel_name", "prefix": "kernel: "},
                    fallbacks=({"verbose": True},),
                )
            )
        ops = k[k["operation"].astype(str).str.len() > 0]
        label = rules_of(self.run).op_label  # "TF op", "operator" (PyTorch), "op" (XLA)
        by_op = top_slices(ops.groupby("operation")["total_time_us"].sum(), TOP)
        if len(ops) and worth_a_pie(by_op):
            plots.append(
                pie_plot(
                    "top_ops",
                    by_op,
                    f"Kernel time by {label}",
                    lambda s, **kw: short_op_name(s, kw.get("max_chars", 44)),
                    click={"table": "kernels", "column": "operation", "prefix": f"{label}: "},
                    fallbacks=({"max_chars": 80},),
                )
            )
        note = self.no_op_note()
        return [
            pie_row(plots) if plots else Html(f"<p class='tf-muted'>{NO_PIE_NOTE}</p>"),
            *([Html(f"<p class='tf-muted'>{esc(note)}</p>")] if note else []),
            TableBlock("kernels", self.table(), "Kernels (click a slice to filter)"),
        ]

    def no_op_note(self) -> str:
        """Why the kernel time here is more than the op stats' device op time, where it is:
        launches no op accounts for (``no_op_time_us``) are device IDLE there ('' where
        every launch is an op's)."""
        k = self.kernels
        no_op = float(k["no_op_time_us"].sum()) if len(k) else 0.0
        if no_op <= 0:
            return ""
        total = float(k["total_time_us"].sum())
        names = (
            k[k["no_op_time_us"] > 0]
            .groupby("kernel_name")["no_op_time_us"]
            .sum()
            .sort_values(ascending=False)
        )
        top = ", ".join(short_kernel_name(n) for n in names.index[:3])
        return (
            f"{no_op:,.1f} µs of the {total:,.1f} µs of kernel time ran in launches no op "
            f"accounts for ({top}{', ...' if len(names) > 3 else ''}; the 'no op' column): "
            f"the op stats count that time as device IDLE, as XProf's do, so the kernels' "
            f"time in them is {total - no_op:,.1f} µs."
        )

    def findings(self) -> list[str]:
        k = self.kernels
        if not len(k):
            return [self.empty_text()]
        total = k["total_time_us"].sum()
        by = k.groupby("kernel_name")["total_time_us"].sum().sort_values(ascending=False)
        tc = k.loc[k["is_kernel_using_tensor_core"], "total_time_us"].sum()
        lines = [
            f"{by.size:,} kernels, {k['occurrences'].sum():,} launches, {total:,.1f} µs in all; "
            f"{100 * tc / total if total else 0:.1f} % of kernel time on Tensor Cores",
            f"Largest: {short_kernel_name(by.index[0])}, {by.iloc[0]:,.1f} µs "
            f"({100 * by.iloc[0] / total if total else 0:.1f} %)",
        ]
        return lines + ([self.no_op_note()] if self.no_op_note() else [])

    def empty_text(self) -> str:
        return no_trace_note(self.run, "kernel-stats (<host>.kernel_stats.pb)") or (
            "No GPU kernels in this capture: it holds no device plane with kernel events "
            "(a CPU-only run, or a trace without device tracing)."
        )

    @property
    def short_names(self) -> pd.Series:
        """The kernel column as shown (short names), aligned with ``run.kernels``."""
        return self._short


def kernel_stats(run) -> KernelStatsView:
    """Kernel time pies and the kernel table; ``run.kernels`` holds the numbers."""
    return KernelStatsView(run)
