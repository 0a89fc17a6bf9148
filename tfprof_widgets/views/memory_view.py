"""Memory profile: usage over time with hover details, summary above, peak breakdown below."""

from __future__ import annotations

import pandas as pd
from plotly.subplots import make_subplots

from ..analysis.memory import memory_breakdown
from ..analysis.tool_data import no_trace_note
from ._display import esc
from .base import Control, View
from .tables import html_table
from .timeline_lod import downsample_minmax


class MemoryTimelineView(View):
    title = "Memory profile"

    def __init__(self, run, allocator: str | None = None, host: str | None = None) -> None:
        self.run = run
        self.summary = run.memory_summary
        if allocator is None and len(self.summary):
            top = self.summary.sort_values("peak_in_use_bytes", ascending=False).iloc[0]
            allocator, host = top["allocator"], top["host"]
        self.allocator, self.host = allocator, host

    @property
    def allocators(self) -> list[str]:
        return [str(a) for a in self.summary["allocator"]] if len(self.summary) else []

    def series(self) -> pd.DataFrame:
        mem = self.run.memory
        sel = mem[
            (mem["allocator"] == self.allocator)
            & ((mem["host"] == self.host) if self.host is not None else True)
        ]
        return sel.reset_index(drop=True)

    def figures(self):
        if self.allocator is None:
            return {}
        s = self.series()
        keep = downsample_minmax(len(s), s["in_use_bytes"].to_numpy())
        s = s.iloc[keep]
        mib = 2**20
        hover = [
            f"{a} {esc(op)}<br>requested {rq:,} B, allocated {al:,} B<br>region {esc(rg)}, "
            f"{esc(dt)} {esc(sh)}<br>step {st}<br>heap {hp / mib:,.2f} MiB, stack "
            f"{sk / mib:,.2f} MiB, free {fr / mib:,.1f} MiB, fragmentation {fg:.3f}"
            for a, op, rq, al, rg, dt, sh, st, hp, sk, fr, fg in zip(
                s["activity"],
                s["tf_op"].astype(str),
                s["requested_bytes"],
                s["allocation_bytes"],
                s["region_type"].astype(str),
                s["data_type"].astype(str),
                s["tensor_shape"].astype(str),
                s["group_id"],
                s["heap_allocated_bytes"],
                s["stack_reserved_bytes"],
                s["free_memory_bytes"],
                s["fragmentation"],
            )
        ]
        fig = make_subplots(specs=[[{"secondary_y": True}]])
        for col, name, color in (
            ("heap_allocated_bytes", "heap", "#1f77b4"),
            ("stack_reserved_bytes", "stack", "#ff7f0e"),
            ("in_use_bytes", "in use (stack + heap)", "#2ca02c"),
        ):
            fig.add_scatter(
                x=s["time_us"],
                y=s[col] / mib,
                name=name,
                mode="lines",
                line=dict(shape="hv", color=color),
                hovertext=hover,
                hoverinfo="text+x",
                uid=f"mem-{col}",
                secondary_y=False,
            )
        fig.add_scatter(
            x=s["time_us"],
            y=s["fragmentation"],
            name="fragmentation",
            mode="lines",
            line=dict(shape="hv", color="#9467bd", dash="dot"),
            uid="mem-frag",
            secondary_y=True,
        )
        fig.update_layout(
            title=f"{self.title}: {esc(self.allocator)}",
            height=380,
            template="plotly_white",
            margin=dict(t=40, b=40),
            legend=dict(orientation="h", y=-0.2),
            xaxis_title="µs",
        )
        fig.update_yaxes(title_text="MiB", secondary_y=False)
        fig.update_yaxes(title_text="fragmentation", range=[0, 1], secondary_y=True)
        return {"memory": fig}

    def header(self) -> str:
        if self.allocator is None:
            note = no_trace_note(self.run, "memory-profile (<host>.memory_profile.json.gz)")
            return f"<i>{esc(note or 'No allocator events in this capture.')}</i>"
        s = self.summary[self.summary["allocator"] == self.allocator].iloc[0]
        mib = 2**20
        return (
            f'<div style="font:13px/1.4 system-ui,sans-serif">'
            f"<b>{esc(self.allocator)}</b> on {esc(s['host'])}: "
            f"{s['num_allocations']:,} allocations, {s['num_deallocations']:,} "
            f"deallocations; capacity {s['memory_capacity_bytes'] / mib:,.1f} MiB; peak "
            f"in use {s['peak_in_use_bytes'] / mib:,.2f} MiB at {s['peak_time_us']:,.1f} µs "
            f"(step {s['peak_group_id']}; heap {s['peak_heap_bytes'] / mib:,.2f}, stack "
            f"{s['peak_stack_bytes'] / mib:,.2f} MiB, fragmentation "
            f"{s['peak_fragmentation']:.3f}); lifetime peak "
            f"{s['peak_bytes_lifetime'] / mib:,.2f} MiB</div>"
        )

    def footer(self) -> str:
        if self.allocator is None:
            return ""
        b = memory_breakdown(self.run, allocator=self.allocator, host=self.host)
        return html_table(b, title="Memory breakdown at the peak")

    def controls(self) -> list[list[Control]]:
        import ipywidgets as w

        def choose(allocator) -> None:
            self.allocator = allocator
            row = self.summary[self.summary["allocator"] == allocator]
            self.host = row["host"].iloc[0] if len(row) else None

        chooser = w.Dropdown(options=self.allocators, value=self.allocator, description="Allocator")
        return [[Control(chooser, choose)]]

    def text(self) -> str:
        return f"Memory profile: {len(self.summary)} allocator(s), showing {self.allocator}"


def memory_timeline(run, allocator: str | None = None) -> MemoryTimelineView:
    """Memory in use over time for one allocator (default: the one with the largest peak)."""
    return MemoryTimelineView(run, allocator)
