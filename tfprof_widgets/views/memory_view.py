"""Memory profile: heap and stack over time (MiB) with the peak marked, fragmentation, the
allocation under the cursor, and what was live at the peak; one allocator at a time."""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from ..analysis.memory import memory_breakdown, peak_events, peak_steps, steps_of_events
from ..analysis.results import plural
from ..analysis.tool_data import no_trace_note
from ..frameworks import rules_of
from ._common import legend_under_title, of_run, quick_figure
from .base import Choice, Html, Plot, Plots, TableBlock, View
from .page.display import esc
from .tables import Column, Table

__all__ = [
    "MemoryTimelineView",
    "activity_window",
    "downsample_minmax",
    "fragmentation_text",
    "memory_timeline",
]

MIB = 2**20
POINTS = 2000  # per allocator, after keeping each bucket's min and max
ACTIVITY_SHARE = 0.9  # "zoom to activity": the shortest window holding 90 % of the events


def activity_window(t_us: np.ndarray, must_hold: float | None = None) -> tuple[float, float]:
    """The shortest time window holding :data:`ACTIVITY_SHARE` of the events (and the
    ``must_hold`` time, e.g. the peak), padded by 5 % on each side."""
    t = np.sort(np.asarray(t_us, dtype=float))
    n = len(t)
    if n < 2:
        return (float(t[0]) - 1, float(t[0]) + 1) if n else (0.0, 1.0)
    k = max(2, int(np.ceil(ACTIVITY_SHARE * n)))
    spans = t[k - 1 :] - t[: n - k + 1]
    i = int(np.argmin(spans))
    a, b = float(t[i]), float(t[i + k - 1])
    if must_hold is not None:
        a, b = min(a, must_hold), max(b, must_hold)
    pad = 0.05 * max(b - a, 1e-3)
    return a - pad, b + pad


# downsample_minmax's default cap (the memory view asks for POINTS).
MAX_POINTS = 5000


def downsample_minmax(n: int, values: np.ndarray, max_points: int = MAX_POINTS) -> np.ndarray:
    """Indexes to keep so that each bucket's minimum and maximum survive (peaks stay peaks)."""
    if n <= max_points:
        return np.arange(n)
    buckets = max_points // 2
    edges = np.linspace(0, n, buckets + 1).astype(np.int64)
    keep = [0, n - 1]
    for a, b in zip(edges[:-1], edges[1:]):
        if b > a:
            seg = values[a:b]
            keep += [a + int(np.argmin(seg)), a + int(np.argmax(seg))]
    return np.unique(np.array(keep))


class MemoryTimelineView(View):
    title = "Memory profile"

    def __init__(self, run, allocator: str | None = None, host: str | None = None) -> None:
        self.run = run
        self.summary = run.memory_summary
        if allocator is None and len(self.summary):
            top = self.summary.sort_values("peak_in_use_bytes", ascending=False).iloc[0]
            allocator, host = top["allocator"], top["host"]
        elif allocator is not None and host is None and len(self.summary):
            rows = self.summary[self.summary["allocator"] == allocator]
            if not len(rows):
                raise KeyError(f"no allocator {allocator!r} in this run; it has {self.allocators}")
            host = rows["host"].iloc[0]
        self.allocator, self.host = allocator, host

    @property
    def allocators(self) -> list[str]:
        return [str(a) for a in self.summary["allocator"]] if len(self.summary) else []

    def _summary_row(self, allocator, host) -> pd.Series:
        return self.summary.iloc[self._index(allocator, host)]

    def series(self, allocator: str | None = None, host: str | None = None) -> pd.DataFrame:
        """The allocator's events (all of them), in time order."""
        allocator = self.allocator if allocator is None else allocator
        host = self.host if host is None else host
        # Once per allocator: the plot, the header and the hover all read it.
        cache = self.__dict__.setdefault("_series", {})
        if (allocator, host) not in cache:
            mem = self.run.memory
            rows = np.flatnonzero(_equals(mem["allocator"], allocator) & _equals(mem["host"], host))
            cache[allocator, host] = mem.take(rows).reset_index(drop=True)
        return cache[allocator, host]

    def choices(self) -> list[Choice]:
        if len(self.summary) < 2:
            return []
        multi = self.summary["host"].nunique() > 1
        options = [
            (
                f"{a}"
                + (f" on {h}" if multi else "")
                + f" (peak {p / MIB:,.2f} MiB)",  # as the header says it
                f"{i}",
            )
            for i, (a, h, p) in enumerate(
                zip(
                    self.summary["allocator"],
                    self.summary["host"],
                    self.summary["peak_in_use_bytes"],
                )
            )
        ]
        current = self._index(self.allocator, self.host)
        return [Choice("allocator", "Allocator", str(current), options)]

    def _index(self, allocator, host) -> int:
        """The allocator's row in the summary (0 where it has none)."""
        if "_rows" not in self.__dict__:  # the summary's few rows, read once per view
            self._rows = {
                (a, h): i
                for i, (a, h) in reversed(
                    list(
                        enumerate(
                            zip(
                                self.summary["allocator"].astype(str).tolist(),
                                self.summary["host"].astype(str).tolist(),
                            )
                        )
                    )
                )
            }
        return self._rows.get((str(allocator), str(host)), 0)

    def _pick(self, allocator: str | None) -> tuple[str, str]:
        if allocator is None:
            return self.allocator, self.host
        row = self.summary.iloc[int(allocator)]
        return row["allocator"], row["host"]

    def figure(self, allocator: str, host: str) -> tuple[go.Figure, list | None, dict]:
        """The allocator's plot, its x ranges ("zoom to activity") and hover columns."""
        s = self.series(allocator, host)
        peak = self._summary_row(allocator, host)
        keep = downsample_minmax(len(s), s["in_use_bytes"].to_numpy(), POINTS)
        d = s.iloc[keep]
        # float32 is plenty for a plot (0.2 µs at 3 s, 0.001 MiB at 8 GiB) and half the bytes.
        x = (d["time_us"].to_numpy() / 1e3).astype(np.float32)
        heap = (d["heap_allocated_bytes"].to_numpy() / MIB).astype(np.float32)
        stack = (d["stack_reserved_bytes"].to_numpy() / MIB).astype(np.float32)
        custom = _hover_columns(d, heap, stack, self._step_texts(d))
        traces: list[dict] = []
        _add_curves(traces, d, x, heap, stack)
        px, py = float(peak["peak_time_us"]) / 1e3, float(peak["peak_in_use_bytes"]) / MIB
        full = [float(x.min()) if len(x) else 0.0, float(x.max()) if len(x) else 1.0]
        a, b = activity_window(s["time_us"].to_numpy(), float(peak["peak_time_us"]))
        act = [a / 1e3, b / 1e3]
        zoom = (act[1] - act[0]) < 0.6 * (full[1] - full[0])
        _add_peak(traces, px, py, act if zoom else full)
        _add_fragmentation_at_peak(
            traces, px, float(peak["peak_fragmentation"]), act if zoom else full
        )
        top = max(float((heap + stack).max()) if len(heap) else 0.0, py) * 1.12 or 1.0
        title = f"{esc(allocator)} on {esc(host)}"
        x_range = act if zoom else None
        if full[1] - full[0] < 1e-3:
            # One instant (a single allocation): plotly's own range spans float32 rounding
            # and writes ten overlapping ticks of "19.9999995"; show a millisecond around it,
            # never before the capture began.
            lo = max(0.0, full[0] - 0.5)
            x_range = [lo, lo + 1.0]
        fig = quick_figure(traces, _layout(title, x_range, top, traces))
        ranges = [("Zoom to activity", act), ("Whole capture", full)] if zoom else None
        return fig, ranges, {1: custom}

    def breakdown(self, allocator: str, host: str) -> Table:
        # Once per run and allocator: the analysis and the table's encoding (a cell run
        # again, or another allocator's view, computes none of them again).
        return of_run(
            self.run,
            ("memory.breakdown", allocator, host),
            lambda: self._breakdown(allocator, host),
        )

    def _breakdown(self, allocator: str, host: str) -> Table:
        b = memory_breakdown(self.run, allocator=allocator, host=host)
        return Table(
            b,
            [
                Column("allocation_bytes", "allocated (MiB)", "bytes", digits=3),
                Column("requested_bytes", "requested (MiB)", "bytes", digits=3),
                Column("occurrences", "count", "int"),
                Column("region_type", "region"),
                # Left out where no allocation names one (XLA's allocators record none).
                Column("data_type", "dtype", hidden=_blank(b["data_type"])),
                Column("tensor_shape", "shape", hidden=_blank(b["tensor_shape"])),
                # The op column under the framework's word ("TF op", "operator", "op").
                Column("tf_op", rules_of(self.run).op_label),
                Column("group_id", hidden=True),
            ],
            csv=f"memory_at_peak_{allocator}.csv",
            sort=("allocation_bytes", "desc"),
            empty="Nothing was live at the peak.",
        )

    def header(self, allocator: str, host: str) -> str:
        s = self._summary_row(allocator, host)
        return (
            f"<div><b>{esc(allocator)}</b> on {esc(host)}: peak in use "
            f"<b>{s['peak_in_use_bytes'] / MIB:,.2f} MiB</b> at "
            f"{s['peak_time_us'] / 1e3:,.3f} ms ({self._step(s)}heap "
            f"{s['peak_heap_bytes'] / MIB:,.2f} MiB + stack {s['peak_stack_bytes'] / MIB:,.2f}"
            f" MiB, fragmentation {fragmentation_text(s['peak_fragmentation'])}"
            f"{self._range(allocator, host)}); capacity "
            f"{s['memory_capacity_bytes'] / MIB:,.1f} MiB; {self._lifetime(s)} "
            f"{s['num_allocations']:,} allocations, {s['num_deallocations']:,} deallocations "
            "in the capture.</div>"
        )

    def _step(self, s) -> str:
        """'step N; ' of the steps table's numbering where the peak's event is in a step
        (analysis.memory.steps_of_events: its step group's, else the step whose host
        activity spans it), 'outside the steps; ' where the run has steps but the peak is
        in none, '' where it has none (the profiler's group id is not that number, and a
        capture without steps has none)."""
        if not len(self.run.steps):
            return ""
        if "_peak_steps" not in self.__dict__:
            self._peak_steps = peak_steps(self.run), peak_events(self.run)
        steps, events = self._peak_steps
        i = self._index(s["allocator"], s["host"])
        if events[i] < 0:  # a memory profile without its trace (tool data): not known
            return ""
        return f"step {steps[i]}; " if steps[i] >= 0 else "outside the steps; "

    def _step_texts(self, d: pd.DataFrame) -> np.ndarray:
        """The hover's step of each plotted event: ', step N' in the steps table's
        numbering (not the memory profile's group id), ', outside the steps' where it is
        in none, '' on a run without steps."""
        if not len(self.run.steps):
            return np.full(len(d), "", object)
        event = d["event"].to_numpy(np.int64)
        step = steps_of_events(self.run, event)
        text = np.where(step >= 0, ", step " + step.astype(str).astype(object), "")
        # No event (a memory profile read from tool data): its step is not known.
        return np.where((step >= 0) | (event < 0), text, ", outside the steps").astype(object)

    @staticmethod
    def _lifetime(s) -> str:
        """The allocator's own lifetime peak, saying what it counts and, where it is below
        the heap at the capture's peak, why the two do not compare."""
        life, heap = s["peak_bytes_lifetime"], s["peak_heap_bytes"]
        if life <= 0:
            return "the allocator reports no lifetime peak."
        text = (
            f"the allocator's own lifetime peak of its heap (allocated bytes, stack not "
            f"counted) {life / MIB:,.2f} MiB"
        )
        xprof = s.get("peak_bytes_lifetime_xprof", life)
        if 0 < xprof < life:
            # XProf keeps the counter's reading on the last event of the file's last
            # thread, an earlier one; the counter never falls, so its latest is the larger.
            text += (
                f" (XProf shows {xprof / MIB:,.2f} MiB: the counter as the last event in "
                "the file's thread order read it, an earlier reading; the counter only "
                "rises, so the largest reading is its latest)"
            )
        if life < heap:
            text += (
                ", below the heap at the capture's peak: the allocator's counter is not of "
                "these bytes (it can be of one of several memories, or restart), so the "
                "capture's peak above is the one to read"
            )
        return text + "."

    def _range(self, allocator: str, host: str) -> str:
        """How far the fragmentation line goes over the capture, beside the peak's value
        (the marker on that line): where the line rises away from the peak it is not the
        same number."""
        f = self.series(allocator, host)["fragmentation"].to_numpy()
        f = f[np.isfinite(f)]
        if not len(f) or f.max() - f.min() < 0.001:
            return ""
        return (
            f"; over the capture {fragmentation_text(f.min())} to "
            f"{fragmentation_text(f.max())}, the dotted line"
        )

    def blocks(self, allocator: str | None = None, **_) -> list:
        if self.allocator is None:
            return [Html(f"<p class='tf-muted'>{esc(self.empty_text())}</p>")]
        allocator, host = self._pick(allocator)
        fig, ranges, custom = self.figure(allocator, host)
        key = f"breakdown-{self._index(allocator, host)}"
        return [
            Html(self.header(allocator, host)),
            Plots([Plot("memory", fig, ranges=ranges, custom=custom)]),
            TableBlock(key, self.breakdown(allocator, host), "What was live at the peak"),
        ]

    def empty_text(self) -> str:
        return no_trace_note(self.run, "memory-profile (<host>.memory_profile.json.gz)") or (
            no_memory_text(rules_of(self.run).names)
        )

    def findings(self) -> list[str]:
        if self.allocator is None:
            return [self.empty_text()]
        s = self._summary_row(self.allocator, self.host)
        return [
            f"{plural(len(self.summary), 'allocator')}; showing {self.allocator} on "
            f"{self.host}: peak "
            f"in use {s['peak_in_use_bytes'] / MIB:,.2f} MiB at {s['peak_time_us'] / 1e3:,.3f}"
            f" ms (heap {s['peak_heap_bytes'] / MIB:,.2f} MiB, stack "
            f"{s['peak_stack_bytes'] / MIB:,.2f} MiB), capacity "
            f"{s['memory_capacity_bytes'] / MIB:,.1f} MiB"
        ]


def no_memory_text(frameworks: tuple[str, ...]) -> str:
    """Why a capture has no allocator events, and how the user's framework records them."""
    if "pytorch" in frameworks:
        return (
            "No memory events in this trace: PyTorch records them when the profiler runs "
            "with profile_memory=True (torch.profiler.profile(..., profile_memory=True))."
        )
    if "xla" in frameworks and "tensorflow" not in frameworks:
        return (
            "No allocator events in this capture: JAX's profiler records MemoryAllocation "
            "events with its host tracer at level 2 or more (the default of "
            "jax.profiler.trace; ProfileOptions.host_tracer_level if set lower)."
        )
    return (
        "No allocator events in this capture: the profiler records MemoryAllocation "
        "events only when memory tracing is on (TF 2.x with the default host tracer "
        "level 2 or more)."
    )


def memory_timeline(run, allocator: str | None = None) -> MemoryTimelineView:
    """Memory in use over time for one allocator (default: the one with the largest peak);
    the view's chooser shows the others."""
    return MemoryTimelineView(run, allocator)


_HOVER = (
    "<b>%{customdata[0]}</b> %{customdata[1]}<br>at %{x:,.3f} ms%{customdata[7]}"
    "<br>requested %{customdata[2]:,.3f} MiB, allocated %{customdata[3]:,.3f} MiB"
    "<br>%{customdata[4]} %{customdata[5]} %{customdata[6]}"
    "<br>in use %{y:,.2f} MiB (heap %{customdata[8]:,.2f}, stack "
    "%{customdata[9]:,.2f})<extra></extra>"
)


def _hover_columns(d: pd.DataFrame, heap: np.ndarray, stack: np.ndarray, steps) -> list:
    """The hover's columns of each plotted memory event (customdata of the in-use curve);
    ``steps`` the text of each one's step (MemoryTimelineView._step_texts)."""
    op = _texts(d["tf_op"], "")
    op[op == ""] = "(no op)"
    return [
        _texts(d["activity"]),
        op,
        (d["requested_bytes"].to_numpy() / MIB).round(4),
        (d["allocation_bytes"].to_numpy() / MIB).round(4),
        _texts(d["region_type"]),
        _texts(d["data_type"]),
        _texts(d["tensor_shape"]),
        steps,
        heap.round(3),
        stack.round(3),
    ]


def _texts(col: pd.Series, missing: object = np.nan) -> np.ndarray:
    """A categorical column of run.memory as an object array of str (``missing`` where a
    row has none), from its categories: no Python string made per row."""
    names = np.append(np.asarray(col.cat.categories.astype(str), object), missing)
    return names[np.asarray(col.array.codes)]


def _add_curves(traces: list, d: pd.DataFrame, x, heap, stack) -> None:
    """Heap, in use (heap + stack), free memory and fragmentation, as step lines."""
    free = (d["free_memory_bytes"].to_numpy() / MIB).astype(np.float32)
    common = dict(x=x, mode="lines")
    traces.append(
        dict(
            type="scatter",
            **common,
            y=heap,
            name="heap",
            line=dict(shape="hv", width=1.5, color="#1f77b4"),
            fill="tozeroy",
            fillcolor="rgba(31,119,180,0.35)",
            hoverinfo="skip",
            uid="mem-heap_allocated_bytes",
        )
    )
    traces.append(
        dict(
            type="scatter",
            **common,
            y=heap + stack,
            name="in use",  # heap + stack (the hover says both)
            line=dict(shape="hv", width=1.5, color="#ff7f0e"),
            fill="tonexty",
            fillcolor="rgba(255,127,14,0.35)",
            hovertemplate=_HOVER,
            uid="mem-in_use_bytes",
        )
    )
    traces.append(
        dict(
            type="scatter",
            **common,
            y=free,
            name="free",
            line=dict(shape="hv", width=1, color="#2ca02c", dash="dash"),
            visible="legendonly",
            hovertemplate="free %{y:,.1f} MiB at %{x:,.3f} ms<extra></extra>",
            uid="mem-free_memory_bytes",
        )
    )
    traces.append(
        dict(
            type="scatter",
            **common,
            y=d["fragmentation"].to_numpy().astype(np.float32),
            name="fragmentation",
            yaxis="y2",
            line=dict(shape="hv", width=1, color="#9467bd", dash="dot"),
            hovertemplate="fragmentation %{y:.1%} at %{x:,.3f} ms<extra></extra>",
            uid="mem-frag",
        )
    )


def _equals(col: pd.Series, value) -> np.ndarray:
    """Rows of a categorical column of run.memory equal to ``value`` (by its code)."""
    at = col.cat.categories.get_indexer([value])[0]
    return np.asarray(col.array.codes) == at if at >= 0 else np.zeros(len(col), bool)


def _blank(col: pd.Series) -> bool:
    """Whether a text column says nothing in any row ("unknown" is XProf's blank shape)."""
    return not (~col.astype(str).isin(["", "unknown", "INVALID"])).any()


def fragmentation_text(x: float) -> str:
    """The allocator's fragmentation (a fraction) as the header and the plot both say it:
    ``"12.5 %"``, ``"< 0.1 %"`` for a little above nothing, ``"0 %"`` for none."""
    if not x > 0:
        return "0 %"
    return "< 0.1 %" if x < 0.001 else f"{100 * x:.1f} %"


def _add_fragmentation_at_peak(traces: list, px: float, frag: float, view: list) -> None:
    """The fragmentation at the peak, on the fragmentation line: the number the header
    gives, labelled on the side of the view with room (centred on a peak near an edge, it
    was cut: "ntation at the peak")."""
    side = "left" if px > (view[0] + view[1]) / 2 else "right"
    traces.append(
        dict(
            type="scatter",
            x=[px],
            y=[frag],
            yaxis="y2",
            mode="markers+text",
            marker=dict(symbol="diamond", size=9, color="#9467bd"),
            text=[f"fragmentation at the peak {fragmentation_text(frag)}"],
            textposition=("bottom " if frag > 0.5 else "top ") + side,
            hovertemplate="fragmentation at the peak "
            + fragmentation_text(frag)
            + "<extra></extra>",
            uid="mem-frag-peak",
            showlegend=False,
        )
    )


def _add_peak(traces: list, px: float, py: float, view: list) -> None:
    """The peak's marker, labelled on the side of the view with room."""
    traces.append(
        dict(
            type="scatter",
            x=[px],
            y=[py],
            mode="markers+text",
            name="peak",
            marker=dict(symbol="triangle-down", size=12, color="#d62728"),
            text=[f"peak {py:,.1f} MiB"],
            textposition="top left" if px > (view[0] + view[1]) / 2 else "top right",
            hovertemplate=f"peak in use {py:,.2f} MiB at %{{x:,.3f}} ms<extra></extra>",
            uid="mem-peak",
            showlegend=False,
        )
    )


def _layout(title: str, x_range: list | None, top: float, traces: list[dict]) -> dict:
    """Titles, the legend above the plot under the title, MiB on the left and
    fragmentation on the right."""
    # Four short entries: rows for a view 480 px wide (JupyterLab beside a side panel).
    names = [t["name"] for t in traces if "name" in t and t.get("showlegend") is not False]
    above = legend_under_title(names, 320)
    xaxis = dict(title=dict(text="time since the capture began (ms)"), ticksuffix="")
    if x_range is not None:
        xaxis["range"] = x_range
    return dict(
        title=dict(text=title, **above["title"]),
        height=420,
        margin=dict(b=40, l=10, r=10, **above["margin"]),
        hovermode="closest",
        legend=dict(traceorder="normal", **above["legend"]),
        xaxis=xaxis,
        yaxis=dict(title=dict(text="MiB"), range=[0, top], rangemode="tozero"),
        yaxis2=dict(
            title=dict(text="fragmentation"),
            overlaying="y",
            side="right",
            range=[0, 1],
            tickvals=[0, 0.25, 0.5, 0.75, 1],
            tickformat=".0%",
            showgrid=False,
            zeroline=False,
        ),
    )
