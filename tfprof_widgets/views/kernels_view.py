"""GPU kernel stats: the top kernels by time and the kernel table."""

from __future__ import annotations

import plotly.graph_objects as go

from ..analysis.tool_data import no_trace_note
from ._display import esc
from .base import View
from .tables import csv_link, html_table

TOP = 10


class KernelStatsView(View):
    title = "GPU kernel stats"

    def __init__(self, run) -> None:
        self.run = run
        self.kernels = run.kernels

    def figures(self):
        k = self.kernels
        if not len(k):
            return {}
        top = k.nlargest(TOP, "total_time_us")
        labels = [n if len(n) < 60 else n[:57] + "..." for n in top["kernel_name"]]
        values = list(top["total_time_us"])
        rest = k["total_time_us"].sum() - top["total_time_us"].sum()
        if rest > 0:
            labels.append("Other")
            values.append(rest)
        fig = go.Figure(
            go.Pie(
                labels=labels,
                values=values,
                sort=False,
                hole=0.3,
                uid="kernel-pie",
                textinfo="percent",
            )
        )
        fig.update_layout(title="Kernel time (top 10)", height=360, margin=dict(t=40, b=10))
        return {"top_kernels": fig}

    def footer(self) -> str:
        return self._table(max_rows=50)

    def live_footer(self) -> str:
        return self._table(max_rows=200)

    def _table(self, max_rows: int) -> str:
        if not len(self.kernels):
            note = no_trace_note(self.run, "kernel-stats (<host>.kernel_stats.pb)")
            return f"<i>{esc(note or 'No GPU kernels in this capture (a CPU-only run).')}</i>"
        return csv_link(self.kernels, "kernel_stats.csv") + html_table(
            self.kernels, max_rows=max_rows
        )

    def text(self) -> str:
        return f"GPU kernel stats: {len(self.kernels):,} kernels"


def kernel_stats(run) -> KernelStatsView:
    """Top kernels pie and the kernel table; ``run.kernels`` holds the numbers."""
    return KernelStatsView(run)
