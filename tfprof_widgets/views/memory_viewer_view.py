"""XLA memory viewer: one program's heap over program order (XProf's memory viewer), the peak
marked, and the largest buffers live at the peak with their op and shape.

The numbers are the analysis's (``frameworks/xla/memory_viewer.py``: the run's
``hlo_memory``, ``hlo_memory_peak`` and ``hlo_heap_timeline``); this view only draws them.
"""

from __future__ import annotations

import pandas as pd

from ..frameworks.xla import (
    SMALL_BUFFER_BYTES,
    NoBufferAssignmentError,
    hlo_heap_timeline,
)
from ._common import quick_figure, ranked_bars
from .base import Choice, Html, Plot, Plots, TableBlock, View
from .memory_view import downsample_minmax
from .page.display import esc
from .tables import Column, Table

__all__ = ["MemoryViewerView", "memory_viewer"]

MIB = 2**20
POINTS = 4000  # heap positions drawn at most (each bucket's min and max kept)
TOP_BARS = 20  # largest buffers at the peak drawn as bars
CHOICES = 12  # programs offered in the chooser (the largest peaks)


class MemoryViewerView(View):
    title = "XLA memory viewer"

    def __init__(self, run, program: int | str | None = None) -> None:
        self.run = run
        peaks = run.hlo_memory_peak
        self.peaks = peaks.sort_values("peak_heap_bytes", ascending=False, kind="stable")
        if program is not None:
            hit = self.peaks[
                (self.peaks["program_id"] == program) | (self.peaks["module"] == program)
            ]
            if not len(hit):
                raise NoBufferAssignmentError(
                    getattr(run, "path", "") or "run",
                    f"no XLA program {program!r} with a buffer assignment in this run "
                    f"(it has {self._names()})",
                )
            self.program = int(hit["program_id"].iloc[0])
        else:
            self.program = int(self.peaks["program_id"].iloc[0]) if len(self.peaks) else None

    def _names(self) -> str:
        if not len(self.peaks):
            return "none"
        shown = [f"{m} ({p})" for m, p in zip(self.peaks["module"], self.peaks["program_id"])]
        return ", ".join(shown[:8]) + (", ..." if len(shown) > 8 else "")

    def _row(self, program: int) -> pd.Series:
        return self.peaks[self.peaks["program_id"] == program].iloc[0]

    def choices(self) -> list[Choice]:
        if len(self.peaks) < 2:
            return []
        top = self.peaks.head(CHOICES)
        options = [
            (f"{m} ({p}): peak {b / MIB:,.2f} MiB", str(p))
            for m, p, b in zip(top["module"], top["program_id"], top["peak_heap_bytes"])
        ]
        if self.program not in set(top["program_id"]):
            r = self._row(self.program)
            options.insert(0, (f"{r['module']} ({self.program})", str(self.program)))
        return [Choice("program", "Program", str(self.program), options)]

    def buffers_at_peak(self, program: int | None = None) -> pd.DataFrame:
        """The program's buffers xprof lists at its peak, largest first."""
        program = self.program if program is None else program
        # The run keeps its table: the page asks for each program's buffers three times.
        mem = self.run.hlo_memory
        rows = mem[(mem["program_id"] == program) & mem["live_at_peak"]]
        return rows.sort_values("size_bytes", ascending=False, kind="stable")

    def heap_figure(self, program: int):
        """Heap (MiB) over heap-simulator positions, the peak marked."""
        t = hlo_heap_timeline(self.run, program)
        r = self._row(program)
        heap = t["heap_bytes"].to_numpy()
        keep = downsample_minmax(len(heap), heap, POINTS)
        x = t["position"].to_numpy()[keep]
        names = t["instruction"].to_numpy(object)[keep]
        peak_mib = r["peak_heap_bytes"] / MIB
        traces = [
            {
                "type": "scatter",
                "mode": "lines",
                "name": "heap",
                "x": x.tolist(),
                "y": (heap[keep] / MIB).tolist(),
                "line": {"shape": "hv"},
                "text": names.tolist(),
                "hovertemplate": "position %{x}: %{y:,.3f} MiB<br>%{text}<extra></extra>",
            },
            {
                "type": "scatter",
                "mode": "markers",
                "name": "peak",
                "x": [int(r["peak_position"])],
                "y": [peak_mib],
                "marker": {"size": 10, "symbol": "diamond", "color": "#d62728"},
                "hovertemplate": f"peak {peak_mib:,.3f} MiB at position %{{x}}<br>"
                + esc(r["peak_instruction"])
                + "<extra></extra>",
            },
        ]
        layout = {
            "title": {"text": f"{esc(r['module'])} ({program}): heap over program order"},
            "height": 380,
            "margin": {"l": 10, "r": 10, "t": 50, "b": 40},
            "hovermode": "closest",
            "showlegend": False,
            "xaxis": {"title": {"text": "heap simulator position (program order)"}},
            "yaxis": {"title": {"text": "MiB"}, "rangemode": "tozero"},
        }
        return quick_figure(traces, layout)

    def bars_figure(self, program: int):
        """The largest buffers at the peak, labelled by instruction and shape."""
        b = self.buffers_at_peak(program).head(TOP_BARS).iloc[::-1]
        labels = [
            f"{i}{s} {sh}"[:60] for i, s, sh in zip(b["instruction"], b["shape_index"], b["shape"])
        ]
        return ranked_bars(
            labels,
            (b["size_bytes"] / MIB).tolist(),
            [f"{o or '-'} ({k})" for o, k in zip(b["op_name"], b["allocation_kind"])],
            f"Largest buffers at the peak (top {min(TOP_BARS, len(b))})",
            "MiB",
            ",.3f",
            18,
        )

    def table(self, program: int) -> Table:
        return Table(
            self.buffers_at_peak(program),
            [
                Column("size_bytes", "size (MiB)", "bytes", digits=3),
                Column("unpadded_bytes", "unpadded (MiB)", "bytes", digits=3),
                Column("allocation_kind", "kind"),
                Column("instruction", "instruction"),
                Column("shape_index", "index", hidden=True),
                Column("opcode", "opcode"),
                Column("shape", "shape"),
                Column("op_name", "op"),
                Column("buffer_id", "buffer", "int"),
                Column("start_position", "from", "int"),
                Column("end_position", "to", "int"),
            ],
            csv=f"buffers_at_peak_{program}.csv",
            sort=("size_bytes", "desc"),
            empty="No buffer is live at the peak.",
        )

    def header(self, program: int | None = None) -> str:
        r = self._row(self.program if program is None else program)
        where = (
            f" at position {r['peak_position']:,} of {r['positions']:,} "
            f"({esc(r['peak_instruction'])})"
            if r["positions"]
            else ""
        )
        note = f"<br><span class='tf-muted'>{esc(r['note'])}</span>" if r["note"] else ""
        return (
            f"<div><b>{esc(r['module'])}</b> ({r['program_id']}) on {esc(r['host'])}: peak heap "
            f"<b>{r['peak_heap_bytes'] / MIB:,.2f} MiB</b>{where}; "
            f"{r['buffers_at_peak']:,} buffers live then "
            f"({r['small_bytes_at_peak'] / MIB:,.3f} MiB in buffers under "
            f"{SMALL_BUFFER_BYTES >> 10} KiB); parameters {r['entry_parameters_bytes'] / MIB:,.2f}"
            f" MiB, outputs {r['maybe_live_out_bytes'] / MIB:,.2f} MiB, all allocations "
            f"{r['total_allocation_bytes'] / MIB:,.2f} MiB.{note}</div>"
        )

    def blocks(self, program: str | None = None, **_) -> list:
        if self.program is None:
            return [Html(f"<p class='tf-muted'>{esc(self.empty_text())}</p>")]
        program = self.program if program is None else int(program)
        plots = [Plot("heap", self.heap_figure(program))]
        if len(self.buffers_at_peak(program)):
            plots.append(Plot("peak_buffers", self.bars_figure(program)))
        return [
            Html(self.header(program)),
            Plots(plots),
            TableBlock(f"peak-{program}", self.table(program), "Buffers live at the peak"),
        ]

    def empty_text(self) -> str:
        if not len(self.run.hlo_modules):
            return "No XLA programs in this capture: the memory viewer needs the HLO programs "\
                "JAX, TPU and TF-with-XLA captures carry on /host:metadata."  # fmt: skip
        return "The capture's XLA programs carry no buffer assignment (XLA wrote them "\
            "without one), so there is no heap to show."  # fmt: skip

    def findings(self) -> list[str]:
        if self.program is None:
            return [self.empty_text()]
        r = self._row(self.program)
        lines = [
            f"{len(self.peaks):,} XLA programs with a buffer assignment; showing "
            f"{r['module']} ({self.program}): peak heap {r['peak_heap_bytes'] / MIB:,.2f} MiB "
            f"at position {r['peak_position']:,} of {r['positions']:,}, "
            f"{r['buffers_at_peak']:,} buffers live then"
        ]
        for b in self.buffers_at_peak().head(5).itertuples():
            lines.append(
                f"  {b.size_bytes / MIB:10,.3f} MiB  {b.instruction}{b.shape_index} "
                f"{b.shape} ({b.allocation_kind}){'  ' + b.op_name if b.op_name else ''}"
            )
        return lines + ([r["note"]] if r["note"] else [])


def memory_viewer(run, program: int | str | None = None) -> MemoryViewerView:
    """XProf's memory viewer of one XLA program (by program id or module name; default the
    one with the largest peak heap): heap over program order, the peak, the buffers live
    then. Raises :class:`NoBufferAssignmentError` for a program the run does not have with
    a buffer assignment."""
    return MemoryViewerView(run, program)
