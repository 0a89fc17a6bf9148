"""The timeline's level of detail in the kernel: lanes, windows of marks, search, details and
flows (the trace viewer draws what it answers), and the memory timeline's min/max downsampling.

Layout, as in TensorBoard's trace viewer and Perfetto: one *group* per host/plane, one *lane*
per line (thread or stream), and inside a lane rows packed by real overlap: each event on the
lowest row free when it starts, so nested events stack as a flame and a GPU stream whose
kernels overlap by a hair (CUDA graphs) takes two rows, as in XProf and Perfetto.

The model keeps every timed event in *sub-lanes*, one per (lane, row), each sorted by start.
Events arrive sorted by (host, plane, line, start) from every reader, so building it needs no
global sort: rows come from a running maximum of ends per row (:func:`_greedy_chain`), and
sub-lanes from a radix (counting) sort of the small (line, row) key. Inside a sub-lane events do not
overlap, so their ends are sorted as well, and any window is found with two binary searches
per sub-lane.

A window (:meth:`TraceModel.window`) never holds more than ``budget`` marks, and counts every
event in it exactly once:

* a sub-lane with few events in the window sends them as they are;
* a dense sub-lane is cut into pixel columns; an event crossing a column edge is sent as it is
  (it is at least about a column wide), the others of a column become one "n events" block
  that spans from its first start to its last end and is named after its first event.
  Columns are halved until the marks fit the budget.
"""

from __future__ import annotations

import dataclasses
import fnmatch
import re

import numpy as np
import pandas as pd
from pandas.api.types import union_categoricals

from ..analysis.kernels import parse_kernel_details
from ..frameworks.xla import derived_trace_lines as xla_trace_lines
from ..frameworks.xla import event_hlo
from ..schema import DEVICE_KINDS

MAX_MARKS = 8000
# Device-plane lines that TensorFlow derives, in the order TensorBoard shows them.
_DERIVED_ORDER = (
    "Steps",
    "XLA Modules",
    "XLA Ops",
    "TensorFlow Name Scope",
    "TensorFlow Ops",
    "Source code",
)
# Events XProf's trace viewer leaves out as internal (tsl's IsInternalEvent: the allocator's
# and tf.data's bookkeeping, read by the memory profile and the input pipeline instead): on a
# JAX H100 capture, 190 zero-length MemoryAllocation/MemoryDeallocation events of python3.
# Not drawn here either; they stay in run.events for the analyses and for search.
XPROF_INTERNAL_EVENTS = frozenset(
    {
        "MemoryAllocation",
        "MemoryDeallocation",
        "PrefetchProduce",
        "PrefetchConsume",
        "ParallelInterleaveProduce",
        "ParallelInterleaveConsume",
        "ParallelInterleaveInitializedInput",
        "ParallelMapProduce",
        "ParallelMapConsume",
        "MapAndBatchProduce",
        "MapAndBatchConsume",
        "ParseExampleProduce",
        "ParseExampleConsume",
    }
)


# -- marks ----------------------------------------------------------------------------------
@dataclasses.dataclass
class Marks:
    """What one window draws. Raw events and blocks share the columns: ``count`` is 1 and
    ``row`` the event's row in ``Run.events`` for a raw event; a block of N events has
    ``count`` N, ``row`` -1 and the name of its first event. ``hits`` (search matches in the
    mark) is present while a search is active."""

    start: np.ndarray  # float64 µs
    end: np.ndarray  # float64 µs
    row: np.ndarray  # int64
    lane: np.ndarray  # int32, index into TraceModel.lanes
    depth: np.ndarray  # uint16, row inside the lane
    name: np.ndarray  # int32, code into the run's name categories
    count: np.ndarray  # int64
    hits: np.ndarray | None
    x0: float
    x1: float
    cols: int  # the pixel columns used; 0 when every event in the window is raw
    req_cols: int = 0  # the columns asked for (the resolution the window was cut for)

    def __len__(self) -> int:
        return len(self.start)

    @property
    def n_events(self) -> int:
        return int(self.count.sum())

    @property
    def complete(self) -> bool:
        """True when every event of the window is sent as it is (zooming in needs no more)."""
        return bool(np.all(self.row >= 0))

    # Binary layout shared by the live messages and the offline payload: little-endian
    # columns, one after the other, 8-byte columns first so every column stays aligned.
    COLUMNS = (
        ("start", "<f8"),
        ("end", "<f8"),
        ("row", "<i4"),
        ("lane", "<i4"),
        ("name", "<i4"),
        ("count", "<u4"),
        ("hits", "<u4"),
        ("depth", "<u2"),
    )

    def pack(self) -> tuple[dict, bytes]:
        """(header, buffer): the header (JSON) says the window and each column's offset."""
        n = len(self)
        parts, layout, off = [], [], 0
        for field, dtype in self.COLUMNS:
            values = getattr(self, field)
            if values is None:
                continue
            a = np.ascontiguousarray(values, dtype=dtype)
            parts.append(a.tobytes())
            layout.append([field, dtype[1:], off])
            off += a.nbytes
        pad = (-off) % 8
        header = {
            "x0": self.x0,
            "x1": self.x1,
            "cols": self.cols,
            "req_cols": self.req_cols or self.cols,
            "n": n,
            "n_events": self.n_events,
            "complete": self.complete,
            "layout": layout,
        }
        return header, b"".join(parts) + b"\0" * pad

    @classmethod
    def concat(cls, parts: list[Marks], x0: float, x1: float, cols: int) -> Marks:
        with_hits = any(p.hits is not None for p in parts)
        cat = {
            f.name: np.concatenate([getattr(p, f.name) for p in parts])
            for f in dataclasses.fields(cls)
            if f.name not in ("hits", "x0", "x1", "cols", "req_cols")
        }
        hits = (
            np.concatenate(
                [p.hits if p.hits is not None else np.zeros(len(p), np.int64) for p in parts]
            )
            if with_hits
            else None
        )
        return cls(**cat, hits=hits, x0=x0, x1=x1, cols=cols)


# -- lane names -----------------------------------------------------------------------------
_THREAD_ID = re.compile(r"^(.+?)(?:/| )(-?\d+)$")
_STREAM = re.compile(r"^Stream #(\d+)(?:\((.*)\))?$")


def _stream_content(names: pd.Series) -> str:
    """What a stream carries, from its event names: kernels and the kinds of copies."""
    kinds = names.astype(str).str.extract(r"^(Memcpy\w*|Memset\w*)", expand=False)
    kinds = kinds.fillna("kernels").value_counts()
    return ", ".join(kinds.index[:3])


def readable_line_names(lines: list[str], contents: list[str | None] | None = None) -> list[str]:
    """Short lane names for one plane's lines: ``tf_Compute/123`` becomes ``tf_Compute #3``
    (numbered in the order given, a number only when the prefix repeats), ``Stream #7(MemcpyH2D)``
    becomes ``Stream #7 · MemcpyH2D``, and a bare ``Stream #7`` gets ``contents[i]`` (what
    it carries) appended. The raw names belong in tooltips."""
    contents = contents or [None] * len(lines)
    prefixes = [
        m.group(1)
        if (m := _THREAD_ID.match(s)) and (s[len(m.group(1))] == "/" or len(m.group(2)) >= 6)
        else None
        for s in lines
    ]
    total: dict[str, int] = {}
    for p in prefixes:
        if p is not None:
            total[p] = total.get(p, 0) + 1
    seen: dict[str, int] = {}
    out = []
    for s, p, what in zip(lines, prefixes, contents):
        m = _STREAM.match(s)
        if m:
            carried = m.group(2) or what
            out.append(f"Stream #{m.group(1)}" + (f" · {carried}" if carried else ""))
        elif p is not None:
            seen[p] = seen.get(p, 0) + 1
            out.append(f"{p} #{seen[p]}" if total[p] > 1 else p)
        else:
            out.append(s)
    return out


def _internal(names: pd.Series) -> np.ndarray:
    """Which events are XProf's internal ones (:data:`XPROF_INTERNAL_EVENTS`), by name."""
    cats = names.cat.categories
    hit = np.asarray(cats.isin(XPROF_INTERNAL_EVENTS), dtype=bool)
    codes = names.cat.codes.to_numpy()
    return hit[codes] & (codes >= 0) if hit.any() else np.zeros(len(names), dtype=bool)


def _natural(s: str) -> list:
    return [int(t) if t.isdigit() else t.lower() for t in re.split(r"(\d+)", s)]


# -- the model ------------------------------------------------------------------------------
class TraceModel:
    """Every timed event of a run in lanes and depth rows, indexed for fast windows.

    Build it with :meth:`from_run` (or from a ``Run.events``-shaped frame: host, plane,
    line, name, start_us, end_us, occurrences). Aggregated events (no start time) are left
    out of the drawing but still counted by :meth:`search`.

    Attributes:
        lanes: one row per lane (line): host, plane, line (raw name), label (readable),
            n_events, depth_rows, line_id, device; :meth:`arrange` orders them in groups.
        t_min, t_max: the span of the timed events (µs).
    """

    # Events drawn beyond the run's own (rows from len(run.events) on, in this order): the
    # lines timeline_model() derives, as XProf's trace viewer does; None when there are none.
    derived: pd.DataFrame | None = None

    def __init__(
        self,
        events: pd.DataFrame,
        lines: pd.DataFrame | None = None,
        planes: pd.DataFrame | None = None,
    ) -> None:
        self.n_rows = len(events)
        self._names = events["name"]
        self.name_categories = events["name"].cat.categories
        start = events["start_us"].to_numpy(dtype=np.float64)
        end = events["end_us"].to_numpy(dtype=np.float64)
        occ = events["occurrences"].to_numpy()
        timed = (occ == 1) & ~np.isnan(start) & ~_internal(events["name"])
        if timed.all():
            rows = np.arange(len(events), dtype=np.int64)
        else:
            rows = np.flatnonzero(timed)
            start, end = start[rows], end[rows]
        end = np.maximum(end, start)
        codes = [events[c].cat.codes.to_numpy() for c in ("host", "plane", "line")]
        if len(rows) != len(events):
            codes = [c[rows] for c in codes]
        seg = self._segments(codes, start)
        if seg is None:  # lines not contiguous or not sorted: sort once (rare)
            order = np.lexsort((start, codes[2], codes[1], codes[0]))
            start, end, rows = start[order], end[order], rows[order]
            codes = [c[order] for c in codes]
            seg = self._segments(codes, start)
        start, end, rows = self._order_ties(seg, start, end, rows)
        depth = self._depths(seg, start, end)
        self._build_sublanes(seg, depth, start, end, rows, events["name"].cat.codes.to_numpy())
        self._build_lanes(events, seg, codes, lines, planes)
        self.t_min = float(start.min()) if len(start) else 0.0
        self.t_max = float(end.max()) if len(end) else 0.0
        self._inverse = None
        self._name_counts = None
        self._searches: dict[str, SearchState] = {}

    @classmethod
    def from_run(cls, run) -> TraceModel:
        return cls(run.events, getattr(run, "lines", None), getattr(run, "planes", None))

    def __len__(self) -> int:
        return len(self.start)

    # -- building -----------------------------------------------------------------------------
    @staticmethod
    def _segments(codes, start) -> np.ndarray | None:
        """Boundaries of the runs of one (host, plane, line), or None when a line appears in
        two runs or its starts are not sorted."""
        n = len(start)
        if n == 0:
            return np.zeros(1, np.int64)
        change = np.zeros(n - 1, bool)
        for c in codes:
            change |= c[1:] != c[:-1]
        cuts = np.flatnonzero(change) + 1
        seg = np.r_[0, cuts, n].astype(np.int64)
        firsts = np.stack([c[seg[:-1]] for c in codes], axis=1)
        if len(np.unique(firsts, axis=0)) != len(firsts):
            return None
        backwards = np.diff(start) < 0
        backwards[cuts - 1] = False
        return None if backwards.any() else seg

    @staticmethod
    def _order_ties(seg, start, end, rows):
        """Among events of a line that start together, put the longer first (the parent)."""
        n = len(start)
        if n < 2:
            return start, end, rows
        same = start[1:] == start[:-1]
        same[seg[1:-1] - 1] = False
        if not (same & (end[1:] > end[:-1])).any():
            return start, end, rows
        member = np.zeros(n, bool)
        member[:-1] |= same
        member[1:] |= same
        pos = np.flatnonzero(member)
        new_group = np.r_[True, ~same[pos[1:] - 1]]
        gid = np.cumsum(new_group)
        order = np.lexsort((-end[pos], gid))
        perm = np.arange(n)
        perm[pos] = pos[order]
        return start[perm], end[perm], rows[perm]

    @staticmethod
    def _depths(seg, start, end) -> np.ndarray:
        """Rows by real overlap (greedy interval partitioning, as Perfetto packs slices): each
        event goes on the lowest row that is free when it starts. A lane then has as many
        rows as events ever overlap in it (a GPU stream whose kernels overlap by a hair is two
        rows, not a staircase), properly nested events get their nesting depth, and no two
        events on a row overlap. Row k is the chain of the events left after rows 0..k-1:
        from the first, each next is the first event starting at or after its end
        (:func:`_greedy_chain`)."""
        n = len(start)
        depth = np.zeros(n, np.int64)
        if n < 2:
            return depth
        # Lines laid end to end on one axis: one chain runs through every line (the event
        # after a line's last is the next line's first), comparisons within a line are exact.
        base = float(start.min())
        span = float(end.max()) - base + 1.0
        offset = np.repeat(np.arange(len(seg) - 1, dtype=np.float64) * span, np.diff(seg))
        k_start = (start - base) + offset
        k_end = (end - base) + offset
        left = np.flatnonzero(~_greedy_chain(k_start, k_end))
        level = 1
        while len(left):
            depth[left] = level  # those left off this row are overwritten below
            left = left[~_greedy_chain(k_start[left], k_end[left])]
            level += 1
        return depth

    def _build_sublanes(self, seg, depth, start, end, rows, name_codes) -> None:
        n = len(start)
        n_seg = len(seg) - 1
        lane_of = np.repeat(np.arange(n_seg, dtype=np.int64), np.diff(seg))
        max_depth = int(depth.max()) if n else 0
        key = lane_of * (max_depth + 1) + depth
        if max_depth == 0:
            order = None  # already in (lane, start) order
        else:
            dtype = np.uint16 if n_seg * (max_depth + 1) < 2**16 else np.int64
            order = np.argsort(key.astype(dtype), kind="stable")  # radix sort for uint16
            key = key[order]
            start, end, rows = start[order], end[order], rows[order]
        self.start, self.end = start, end
        self.row = rows.astype(np.int32 if self.n_rows < 2**31 else np.int64)
        self.name = name_codes[rows].astype(np.int32)
        cuts = np.flatnonzero(np.diff(key)) + 1 if n else np.zeros(0, np.int64)
        self.sub_offsets = np.r_[0, cuts, n].astype(np.int64)
        first = key[self.sub_offsets[:-1]] if n else np.zeros(0, np.int64)
        self.sub_lane = (first // (max_depth + 1)).astype(np.int32)
        self.sub_depth = (first % (max_depth + 1)).astype(np.int32)
        self._sub_index = {
            (int(ln), int(d)): i for i, (ln, d) in enumerate(zip(self.sub_lane, self.sub_depth))
        }
        self.lane_depth_rows = np.zeros(n_seg, np.int32)
        np.maximum.at(self.lane_depth_rows, self.sub_lane, self.sub_depth + 1)
        # Inside a sub-lane the ends are sorted unless nesting was imperfect; where not, the
        # running maximum of ends ("reach") is what can be binary-searched.
        backwards = np.flatnonzero(np.diff(end) < 0) + 1 if n else np.zeros(0, np.int64)
        inner = backwards[~np.isin(backwards, self.sub_offsets)]
        if len(inner):
            reach = end.copy()
            for s in np.unique(np.searchsorted(self.sub_offsets, inner, side="right") - 1):
                a, b = self.sub_offsets[s], self.sub_offsets[s + 1]
                np.maximum.accumulate(reach[a:b], out=reach[a:b])
            self.reach = reach
        else:
            self.reach = end

    def _build_lanes(self, events, seg, codes, lines, planes) -> None:
        cats = [events[c].cat.categories for c in ("host", "plane", "line")]
        firsts = seg[:-1]
        host = [str(cats[0][c]) for c in codes[0][firsts]] if len(firsts) else []
        plane = [str(cats[1][c]) for c in codes[1][firsts]] if len(firsts) else []
        line = [str(cats[2][c]) for c in codes[2][firsts]] if len(firsts) else []
        n_ev = np.diff(seg)
        line_ids: dict[tuple, int] = {}
        if lines is not None and len(lines):
            line_ids = {
                (str(h), str(p), str(ln)): int(i)
                for h, p, ln, i in zip(
                    lines["host"], lines["plane"], lines["line"], lines["line_id"]
                )
            }
        kinds: dict[tuple, str] = {}
        if planes is not None and len(planes) and "device_kind" in planes:
            kinds = {
                (str(h), str(p)): str(k)
                for h, p, k in zip(planes["host"], planes["plane"], planes["device_kind"])
            }
        lanes = pd.DataFrame(
            {
                "host": host,
                "plane": plane,
                "line": line,
                "n_events": n_ev.astype(np.int64),
                "depth_rows": self.lane_depth_rows,
            }
        )
        lanes["line_id"] = [line_ids.get(k, -1) for k in zip(host, plane, line)]
        lanes["device"] = [
            kinds.get((h, p), "GPU" if p.startswith("/device:") else "") in DEVICE_KINDS
            for h, p in zip(host, plane)
        ]
        # What each bare "Stream #N" carries, from its events' names.
        contents: list[str | None] = [None] * len(lanes)
        for i, ln in enumerate(line):
            if ln.startswith("Stream #") and "(" not in ln:
                contents[i] = _stream_content(self._names.iloc[self._lane_rows(i)[:5000]])
        labels = [""] * len(lanes)
        for idx in lanes.groupby(["host", "plane"], sort=False).groups.values():
            idx = list(idx)
            names = readable_line_names([line[i] for i in idx], [contents[i] for i in idx])
            for i, nm in zip(idx, names):
                labels[i] = nm
        lanes["label"] = labels
        lanes["group_key"] = [f"{h}\x00{p}" for h, p in zip(host, plane)]
        self.lanes = lanes
        self.multi_host = len(set(host)) > 1

    def arrange(self, group_order: list[str] | None = None) -> list[dict]:
        """Groups in display order, each with its lanes in display order.

        One group per (host, plane). By default devices come first on runs that have them
        (as the issue asks: the accelerator is what one looks at), then host planes, each
        host's groups together; ``group_order`` (glob patterns matched against the plane,
        the host, or "host · plane") puts matching groups first, in pattern order. Inside a
        device plane: Steps, XLA Modules/Ops, TensorFlow Name Scope/Ops, then streams by
        number; elsewhere lanes sort by their readable names."""
        lanes = self.lanes
        groups: dict[str, dict] = {}
        for i, (h, p, key) in enumerate(zip(lanes["host"], lanes["plane"], lanes["group_key"])):
            g = groups.setdefault(
                key, {"host": h, "plane": p, "lanes": [], "device": False, "n": 0}
            )
            g["lanes"].append(i)
            g["device"] = g["device"] or bool(lanes["device"].iat[i])
            g["n"] += int(lanes["n_events"].iat[i])

        def rank(g: dict) -> tuple:
            h, p = g["host"], g["plane"]
            if group_order:
                for k, pat in enumerate(group_order):
                    if any(fnmatch.fnmatchcase(v, pat) for v in (p, h, f"{h} · {p}")):
                        return (k, _natural(h), _natural(p))
                return (len(group_order), _natural(h), 0 if g["device"] else 1, _natural(p))
            return (_natural(h), 0 if g["device"] else 1, _natural(p))

        def lane_rank(i: int) -> tuple:
            ln = lanes["line"].iat[i]
            kind = ln.split(" - from #", 1)[0]  # XLA lines derived per stream
            if kind in _DERIVED_ORDER:
                return (0, _DERIVED_ORDER.index(kind), _natural(ln))
            if ln.startswith("Stream #"):
                return (1, 0, _natural(ln))
            return (2, 0, _natural(lanes["label"].iat[i]))

        out = []
        for g in sorted(groups.values(), key=rank):
            label = (f"{g['host']} · " if self.multi_host else "") + g["plane"]
            out.append(
                {
                    "label": label,
                    "host": g["host"],
                    "plane": g["plane"],
                    "device": g["device"],
                    "n": g["n"],
                    "lanes": sorted(g["lanes"], key=lane_rank),
                }
            )
        return out

    def _lane_rows(self, lane: int) -> np.ndarray:
        """Rows of Run.events drawn in one lane."""
        subs = np.flatnonzero(self.sub_lane == lane)
        if not len(subs):
            return np.zeros(0, np.int64)
        return np.concatenate(
            [self.row[self.sub_offsets[s] : self.sub_offsets[s + 1]] for s in subs]
        )

    # -- windows ------------------------------------------------------------------------------
    def _ranges(self, x0: float, x1: float) -> tuple[np.ndarray, np.ndarray]:
        """Per sub-lane, the index range of events that may overlap [x0, x1)."""
        off = self.sub_offsets
        S = len(off) - 1
        i0 = np.empty(S, np.int64)
        i1 = np.empty(S, np.int64)
        reach, start = self.reach, self.start
        for s in range(S):
            a, b = off[s], off[s + 1]
            i0[s] = a + np.searchsorted(reach[a:b], x0, side="right")
            i1[s] = a + np.searchsorted(start[a:b], x1, side="left")
        return i0, np.maximum(i1, i0)

    def view(self, x0: float, x1: float, *args, **kwargs) -> Marks:
        """Deprecated name of :meth:`window` (the plotly timeline's model called it so)."""
        import warnings

        warnings.warn(
            "TimelineModel.view() is deprecated and will be removed in the next release: "
            "use TimelineModel.window() (now TraceModel.window())",
            DeprecationWarning,
            stacklevel=2,
        )
        return self.window(x0, x1, *args, **kwargs)

    def window(
        self,
        x0: float | None = None,
        x1: float | None = None,
        cols: int = 1200,
        budget: int = MAX_MARKS,
        search: SearchState | None = None,
    ) -> Marks:
        """The marks to draw for [x0, x1) (µs) at ``cols`` pixel columns, at most ``budget``
        of them, every event overlapping the window counted once. With ``search``, each
        mark carries how many of its events match."""
        x0 = self.t_min if x0 is None else float(x0)
        x1 = float(np.nextafter(self.t_max, np.inf)) if x1 is None else float(x1)
        if not x1 > x0:
            x1 = x0 + 1e-3
        cols = max(1, int(cols))
        marks = self._window(x0, x1, cols, budget, search)
        marks.req_cols = cols
        return marks

    def _window(self, x0, x1, cols, budget, search) -> Marks:
        i0, i1 = self._ranges(x0, x1)
        n = i1 - i0
        if int(n.sum()) <= budget:
            return self._raw_marks(self._spans(i0, i1), x0, x1, 0, search)
        # Sub-lanes with fewer events than about a column in eight go raw, as long as they
        # leave half the budget; the rest is shared out as columns among the dense ones.
        thr = max(cols / 8, 4)
        if int(n[n <= thr].sum()) > budget // 2:
            sn = np.sort(n)
            thr = sn[max(0, int(np.searchsorted(np.cumsum(sn), budget // 2, side="right")) - 1)]
        dense = n > thr
        n_dense = max(1, int(dense.sum()))
        spare = budget - int(n[~dense].sum())
        per_lane = min(cols, max(1, int(spare / n_dense / 1.1)))
        while True:
            marks = self._binned(x0, x1, per_lane, i0, i1, dense, search)
            if len(marks) <= budget or per_lane == 1:
                return marks
            per_lane //= 2

    def _spans(self, i0: np.ndarray, i1: np.ndarray) -> np.ndarray:
        """The concatenated index ranges [i0, i1), without a Python loop."""
        lens = i1 - i0
        total = int(lens.sum())
        if total == 0:
            return np.zeros(0, np.int64)
        keep = lens > 0
        i0, lens = i0[keep], lens[keep]
        steps = np.ones(total, np.int64)
        heads = np.r_[0, np.cumsum(lens)[:-1]]
        steps[0] = i0[0]
        steps[heads[1:]] = i0[1:] - (i0[:-1] + lens[:-1] - 1)
        return np.cumsum(steps)

    def _sub_of(self, idx: np.ndarray) -> np.ndarray:
        return np.searchsorted(self.sub_offsets, idx, side="right") - 1

    def _raw_marks(
        self, idx: np.ndarray, x0: float, x1: float, cols: int, search: SearchState | None
    ) -> Marks:
        if len(idx):  # running at x0, or starting in the window
            idx = idx[(self.end[idx] > x0) | (self.start[idx] >= x0)]
        sub = self._sub_of(idx)
        hits = search.flag[idx].astype(np.int64) if search is not None else None
        return Marks(
            self.start[idx],
            self.end[idx],
            self.row[idx].astype(np.int64),
            self.sub_lane[sub],
            self.sub_depth[sub].astype(np.uint16),
            self.name[idx],
            np.ones(len(idx), np.int64),
            hits,
            x0,
            x1,
            cols,
        )

    def _binned(self, x0, x1, cols, i0, i1, dense, search) -> Marks:
        """Marks with each dense sub-lane cut into ``cols`` columns. An event at least a
        column long is sent as it is (in a sub-lane, where events do not overlap, it can only
        be the last to start in its column); the other events starting in a column make one
        block, from the first start to the last end, or stay themselves when alone."""
        width = (x1 - x0) / cols
        edges = x0 + width * np.arange(cols + 1)
        edges[-1] = x1
        raw = [self._spans(i0[~dense], i1[~dense])]
        blocks = []
        start, end = self.start, self.end
        for s in np.flatnonzero(dense):
            a, b = self.sub_offsets[s], self.sub_offsets[s + 1]
            pos = a + np.searchsorted(start[a:b], edges, side="left")
            raw.append(np.arange(i0[s], pos[0]))  # started before x0, still running
            counts = np.diff(pos)
            used = np.flatnonzero(counts)
            last = pos[used + 1] - 1
            big = (end[last] - start[last]) >= width
            raw.append(last[big])
            rest = counts[used] - big
            raw.append(pos[used[rest == 1]])  # alone in its column: itself, not a block
            keep = rest > 1
            first = pos[used[keep]]
            last_small = last[keep] - big[keep]
            hits = None
            if search is not None:
                hits = (search.cs[last_small + 1] - search.cs[first]).astype(np.int64)
            k = len(first)
            blocks.append(
                Marks(
                    start[first],
                    np.maximum(self.reach[last_small], start[first]),
                    np.full(k, -1, np.int64),
                    np.full(k, self.sub_lane[s], np.int32),
                    np.full(k, self.sub_depth[s], np.uint16),
                    self.name[first],
                    rest[keep].astype(np.int64),
                    hits,
                    x0,
                    x1,
                    cols,
                )
            )
        idx = np.concatenate(raw)
        parts = [self._raw_marks(idx, x0, x1, cols, search)] + blocks
        return Marks.concat(parts, x0, x1, cols)

    def count(self, x0: float, x1: float) -> int:
        """How many events [x0, x1) holds (those running at x0 included)."""
        i0, i1 = self._ranges(x0, x1)
        return int((i1 - i0).sum())

    def lane_counts(self, x0: float, x1: float) -> np.ndarray:
        """Events of [x0, x1) per lane."""
        i0, i1 = self._ranges(x0, x1)
        out = np.zeros(len(self.lanes), np.int64)
        np.add.at(out, self.sub_lane, i1 - i0)
        return out

    # -- where the events are -----------------------------------------------------------------
    def density(self, x0: float, x1: float, bins: int) -> np.ndarray:
        """Events starting in each of ``bins`` equal bins of [x0, x1] (plus those running at
        x0, in the first bin)."""
        edges = x0 + (x1 - x0) * (np.arange(bins + 1) / bins)
        out = np.zeros(bins, np.int64)
        i0, _ = self._ranges(x0, x1)
        for s in range(len(self.sub_offsets) - 1):
            a, b = self.sub_offsets[s], self.sub_offsets[s + 1]
            pos = np.searchsorted(self.start[a:b], edges, side="left")
            pos[-1] = np.searchsorted(self.start[a:b], x1, side="right")
            out += np.diff(pos)
            out[0] += max(0, a + pos[0] - i0[s])
        return out

    def activity_window(
        self, bins: int = 2048, gap: float = 0.02, share: float = 0.8, margin: float = 0.05
    ) -> tuple[float, float]:
        """Where the events are, for the first view: the busiest cluster of activity (idle
        stretches longer than ``gap`` of the capture split clusters), then inside it the
        shortest span holding ``share`` of its events, with a little margin."""
        t0, t1 = self.t_min, self.t_max
        if not len(self) or not t1 > t0:
            return t0, max(t1, t0 + 1.0)
        counts = self.density(t0, t1, bins)
        busy = np.flatnonzero(counts)
        breaks = np.flatnonzero(np.diff(busy) > max(1, int(gap * bins)))
        starts = np.r_[busy[0], busy[breaks + 1]]
        ends = np.r_[busy[breaks], busy[-1]]
        csum = np.r_[0, np.cumsum(counts)]
        k = int(np.argmax(csum[ends + 1] - csum[starts]))
        w = (t1 - t0) / bins
        c0, c1 = t0 + starts[k] * w, t0 + (ends[k] + 1) * w
        fine = np.r_[0, np.cumsum(self.density(c0, c1, bins))]
        need = share * fine[-1]
        stop = np.searchsorted(fine, fine[:-1] + need, side="left")
        ok = stop <= bins
        first = np.flatnonzero(ok)
        i = first[np.argmin(stop[first] - first)]
        fw = (c1 - c0) / bins
        x0, x1 = c0 + i * fw, c0 + stop[i] * fw
        pad = margin * (x1 - x0)
        return max(t0, x0 - pad), min(t1, x1 + pad)

    # -- single events --------------------------------------------------------------------------
    def _position_of(self, row: int) -> int:
        """Model position of a Run.events row (-1 when the event is not drawn)."""
        if self._inverse is None:
            inv = np.full(self.n_rows, -1, np.int32 if len(self.row) < 2**31 else np.int64)
            inv[self.row] = np.arange(len(self.row))
            self._inverse = inv
        return int(self._inverse[row]) if 0 <= row < self.n_rows else -1

    def locate(self, row: int) -> dict | None:
        """Lane, depth and span of one event (None for events that are not drawn)."""
        i = self._position_of(int(row))
        if i < 0:
            return None
        s = int(self._sub_of(np.array([i]))[0])
        return {
            "row": int(row),
            "lane": int(self.sub_lane[s]),
            "depth": int(self.sub_depth[s]),
            "start": float(self.start[i]),
            "end": float(self.end[i]),
            "name": str(self.name_categories[self.name[i]]),
        }

    def parents(self, row: int) -> list[dict]:
        """The events enclosing ``row`` on its line, innermost first."""
        here = self.locate(row)
        if here is None:
            return []
        out = []
        t, e = here["start"], here["end"]
        for d in range(here["depth"] - 1, -1, -1):
            s = self._sub_index.get((here["lane"], d))
            if s is None:
                continue
            a, b = self.sub_offsets[s], self.sub_offsets[s + 1]
            j = a + int(np.searchsorted(self.start[a:b], t, side="right")) - 1
            if j >= a and self.end[j] >= e:
                out.append(self.locate(int(self.row[j])))
        return out

    # -- search -----------------------------------------------------------------------------
    def name_counts(self) -> np.ndarray:
        """Events of the run (timed or not) per name category."""
        if self._name_counts is None:
            codes = self._names.cat.codes.to_numpy()
            self._name_counts = np.bincount(codes[codes >= 0], minlength=len(self.name_categories))
        return self._name_counts

    def search(self, regex: str) -> SearchState:
        """Events whose name matches ``regex`` (Python ``re.search``, as pandas'
        ``str.contains``). Raises ``re.error`` for a bad pattern."""
        if regex in self._searches:
            return self._searches[regex]
        re.compile(regex)
        name_match = np.asarray(self.name_categories.str.contains(regex, regex=True), dtype=bool)
        count = int(self.name_counts()[name_match].sum())
        flag = name_match[self.name]
        cs = np.zeros(len(flag) + 1, np.int32 if len(flag) < 2**31 else np.int64)
        np.cumsum(flag, out=cs[1:])
        state = SearchState(regex, name_match, flag, cs, count)
        if len(self._searches) >= 2:  # each costs 5 bytes an event
            self._searches.pop(next(iter(self._searches)))
        self._searches[regex] = state
        return state

    def next_match(
        self, state: SearchState, t: float, row: int = -1, direction: int = 1
    ) -> dict | None:
        """The matching event that starts next after (t, row), or before it for
        ``direction=-1``; wraps around at the ends."""
        if state.positions is None:
            state.positions = np.flatnonzero(state.flag)
        pos = state.positions
        if not len(pos):
            return None
        st = self.start[pos]
        rw = self.row[pos]
        if direction >= 0:
            after = (st > t) | ((st == t) & (rw > row))
            cand = np.flatnonzero(after)
            if not len(cand):
                cand = np.arange(len(pos))
            best = cand[np.lexsort((rw[cand], st[cand]))[0]]
        else:
            before = (st < t) | ((st == t) & (rw < row))
            cand = np.flatnonzero(before)
            if not len(cand):
                cand = np.arange(len(pos))
            best = cand[np.lexsort((-rw[cand], -st[cand]))[0]]
        return self.locate(int(rw[best]))


def _greedy_chain(ks: np.ndarray, ke: np.ndarray) -> np.ndarray:
    """Which events (sorted by start) the greedy chain from the first one takes: after each
    event, the first that starts at or after its end.

    An event that starts after every earlier one has ended (a *cut*: the running maximum of
    ends) is always on the chain, and the chain from a cut stays before the next cut. Where
    events nest properly the cuts are the whole chain (one pass, O(n)); only the stretches
    where an event starts after its cut ended but before the next cut (a partial overlap
    pushed the reach on) are walked by :func:`_chain_by_doubling`."""
    m = len(ks)
    reach = np.maximum.accumulate(ke)
    cut = np.empty(m, bool)
    cut[0] = True
    np.greater_equal(ks[1:], reach[:-1], out=cut[1:])
    if cut.all():
        return cut
    # Ends at cuts never decrease (a cut starts after every earlier end), so a running maximum
    # gives each event the end of its stretch's cut: one pass, no gathers.
    cut_end = np.where(cut, ke, -np.inf)
    np.maximum.accumulate(cut_end, out=cut_end)
    late = ks >= cut_end
    late &= ~cut
    if late.any():
        cuts = np.flatnonzero(cut)
        bad = np.unique(np.searchsorted(cuts, np.flatnonzero(late), side="right") - 1)
        a, b = cuts[bad], np.r_[cuts, m][bad + 1]
        lengths = b - a
        idx = np.repeat(a - np.r_[0, np.cumsum(lengths)[:-1]], lengths) + np.arange(lengths.sum())
        cut[idx[_chain_by_doubling(ks[idx], ke[idx])]] = True
    return cut


def _chain_by_doubling(ks: np.ndarray, ke: np.ndarray) -> np.ndarray:
    """:func:`_greedy_chain` on any events, vectorised: an event whose successor does not
    overlap it simply continues to it, so only the others ("jumps", found by binary search)
    form a graph, walked from the first with pointer doubling (log2 of the chain's jumps
    rounds); the chain is then runs of consecutive events between its jumps."""
    m = len(ks)
    jumps = np.empty(m, bool)
    np.less(ks[1:], ke[:-1], out=jumps[:-1])
    jumps[-1] = True
    at = np.flatnonzero(jumps)  # the end of each run of consecutive events
    nxt = np.maximum(np.searchsorted(ks, ke[at]), at + 1)  # m: the chain ends
    hop = np.searchsorted(at, nxt)  # the run that nxt starts in (len(at): none)
    q = len(at)
    seen = np.zeros(q + 1, bool)
    seen[0] = seen[q] = True  # the first run, and "the chain has ended"
    jump = np.r_[hop, q]
    while True:  # seen: runs at 0 .. 2**k - 1 hops; jump: 2**k hops
        to = jump[np.flatnonzero(seen[:q])]
        if seen[to].all():
            break
        seen[to] = True
        jump = jump[jump]
    runs = np.flatnonzero(seen[:q])
    runs = runs[nxt[runs] < m]
    first = np.r_[0, nxt[runs]]
    last = np.r_[at[0], at[hop[runs]]]
    cover = np.bincount(first, minlength=m + 1) - np.bincount(last + 1, minlength=m + 1)
    return np.cumsum(cover[:m]) > 0


@dataclasses.dataclass
class SearchState:
    """One regex search: which names match, a flag per model position and its prefix sums
    (matches in any index range in O(1)), and the count over all events of the run."""

    regex: str
    name_match: np.ndarray
    flag: np.ndarray
    cs: np.ndarray
    count: int
    positions: np.ndarray | None = None


# -- details and flows ----------------------------------------------------------------------
_KINETO_LAUNCH = (
    "grid",
    "block",
    "registers per thread",
    "shared memory",
    "blocks per SM",
    "warps per SM",
    "est. achieved occupancy %",
)


def _typed_stats(stats: pd.DataFrame) -> list[tuple[str, object]]:
    out = []
    for s, k, iv, fv, sv in zip(
        stats["stat"], stats["kind"], stats["int_value"], stats["float_value"], stats["str_value"]
    ):
        k = str(k)
        if k in ("str", "bytes"):
            v = sv
        elif k == "double":
            v = float(fv)
        elif k == "uint":
            v = int(np.int64(iv).view(np.uint64))
        else:
            v = int(iv)
        out.append((str(s), v))
    return out


def launch_arguments(kernel_details: str) -> list[tuple[str, str]]:
    """A kernel's launch arguments from its ``kernel_details`` stat (either format TF
    writes, parsed by the kernel stats analysis), named, in the order given."""
    p = parse_kernel_details(str(kernel_details))
    shown = {
        "regs": ("registers per thread", str(p["registers_per_thread"])),
        "shm": ("shared memory (bytes)", str(p["static_shmem"])),
        "static_shared": ("static shared memory (bytes)", str(p["static_shmem"])),
        "dynamic_shared": ("dynamic shared memory (bytes)", str(p["dynamic_shmem"])),
        "grid": ("grid", " × ".join(p["grid_dim"].split(","))),
        "block": ("block", " × ".join(p["block_dim"].split(","))),
        "occ_pct": ("occupancy (%)", f"{p['occupancy_percent']:g}"),
    }
    keys = [t.partition(":")[0] for t in str(kernel_details).split()]
    return [shown[k] for k in dict.fromkeys(keys) if k in shown]


class EventIndex:
    """Per-event stats and flow links of a run, looked up one event at a time.

    Flows: ``correlation_id`` (XPlane) or ``correlation`` (Kineto) joins a host launch to
    the device kernel or copy it started (same host, another plane); ``_p``/``_c`` join a
    producer to its consumers (XProf's producer/consumer ids). Only integer-valued stats
    take part."""

    FLOW_STATS = ("correlation_id", "correlation", "_p", "_c")

    def __init__(self, run) -> None:
        self.run = run
        stats = getattr(run, "event_stats", None)
        if stats is None:
            stats = pd.DataFrame(
                {
                    "event": np.zeros(0, np.int64),
                    "stat": pd.Categorical([]),
                    "kind": pd.Categorical([]),
                    "int_value": np.zeros(0, np.int64),
                    "float_value": np.zeros(0),
                    "str_value": pd.Categorical([]),
                }
            )
        self.stats = stats
        ev = stats["event"].to_numpy()
        self._sorted = bool(len(ev) < 2 or (np.diff(ev) >= 0).all())
        self._ev = ev
        self._flows = {}
        cats = stats["stat"].cat.categories if len(stats) else pd.Index([])
        codes = stats["stat"].cat.codes.to_numpy() if len(stats) else np.zeros(0, np.int8)
        kind = stats["kind"].astype("category")
        integer = np.isin(
            kind.cat.codes.to_numpy(), np.flatnonzero(kind.cat.categories.isin(["int", "uint"]))
        )
        for name in self.FLOW_STATS:
            if name in cats:
                sel = np.flatnonzero((codes == cats.get_loc(name)) & integer)
                vals = stats["int_value"].to_numpy()[sel]
                o = np.argsort(vals, kind="stable")
                self._flows[name] = (vals[o], ev[sel][o])
        events = run.events
        planes = getattr(run, "planes", None)
        pcats = events["plane"].cat.categories
        kinds = {}
        if planes is not None and "device_kind" in planes:
            kinds = {str(p): str(k) for p, k in zip(planes["plane"], planes["device_kind"])}
        device = np.array(
            [
                kinds.get(str(p), "GPU" if str(p).startswith("/device:") else "") in DEVICE_KINDS
                for p in pcats
            ],
            bool,
        )
        self._plane_is_device = device

    def stats_of(self, row: int) -> pd.DataFrame:
        if self._sorted:
            a = np.searchsorted(self._ev, row, side="left")
            b = np.searchsorted(self._ev, row, side="right")
            return self.stats.iloc[a:b]
        return self.stats[self._ev == row]

    def _on_device(self, row: int) -> bool:
        if row >= len(self.run.events):  # a derived event (timeline_model)
            return False
        code = self.run.events["plane"].cat.codes.iat[row]
        return bool(self._plane_is_device[code]) if code >= 0 else False

    def _partners(self, stat: str, value: int, row: int) -> list[int]:
        if stat not in self._flows:
            return []
        vals, evs = self._flows[stat]
        a = np.searchsorted(vals, value, side="left")
        b = np.searchsorted(vals, value, side="right")
        return [int(e) for e in evs[a:b][:64] if int(e) != row]

    def flows(self, row: int) -> list[dict]:
        """Flow links of one event, one per other event: kind ('launch' or
        'producer/consumer'), direction ('in': the other end comes first, 'out': it follows)
        and the other end's row."""
        if row >= len(self.run.events):  # a derived event has no flows of its own
            return []
        st = dict(self._flow_values(row))
        out = []
        ev = self.run.events
        hosts = ev["host"].cat.codes.to_numpy()
        planes = ev["plane"].cat.codes.to_numpy()
        here_dev = self._on_device(row)
        for key in ("correlation_id", "correlation"):  # XPlane's, Kineto's
            if key not in st:
                continue
            for r in self._partners(key, st[key], row):
                if hosts[r] != hosts[row] or planes[r] == planes[row]:
                    continue
                there_dev = self._on_device(r)
                if there_dev != here_dev:  # the device end is the kernel (or copy)
                    first = here_dev
                else:  # planes of unknown kind (Chrome traces): the launch comes first
                    first = ev["start_us"].iat[r] <= ev["start_us"].iat[row]
                out.append({"kind": "launch", "dir": "in" if first else "out", "row": r})
        if "_c" in st:  # this event consumes: its producers come first
            for r in self._partners("_p", st["_c"], row):
                out.append({"kind": "producer/consumer", "dir": "in", "row": r})
        if "_p" in st:
            for r in self._partners("_c", st["_p"], row):
                out.append({"kind": "producer/consumer", "dir": "out", "row": r})
        # One link per pair of events: a Kineto launch is recorded three times (its
        # ``correlation``, the ``correlation_id`` the reader adds to both ends, and the ``_p``/
        # ``_c`` link made from them), an XPlane launch can be a correlation id and a flow;
        # the first (the launch, as the loops above put launches first) names the pair.
        seen: set[int] = set()
        unique = []
        for f in out:
            if f["row"] not in seen:
                seen.add(f["row"])
                unique.append(f)
        return unique[:64]

    def _flow_values(self, row: int) -> list[tuple[str, int]]:
        s = self.stats_of(row)
        if not len(s):
            return []
        keep = (s["stat"].isin(self.FLOW_STATS) & s["kind"].isin(("int", "uint"))).to_numpy()
        return [(str(k), int(v)) for k, v in zip(s["stat"][keep], s["int_value"][keep])]


def _fmt(v) -> str:
    if v is None or (isinstance(v, float) and np.isnan(v)) or v is pd.NA:
        return "—"
    if isinstance(v, float):
        return f"{v:,.3f}"
    if isinstance(v, bytes):
        return v[:64].hex() + ("…" if len(v) > 64 else "")
    return str(v)


def event_details(run, model: TraceModel, index: EventIndex, row: int) -> dict:
    """Everything about one event, for the details panel: its columns, every stat, the
    kernel launch arguments, the events enclosing it, and its flow links (with where their
    other end is drawn and, for a launch, the op that launched it)."""
    row = int(row)
    if row >= len(run.events):
        return _derived_details(run, model, row)
    ev = run.events.iloc[row]
    fields = [[str(k), _fmt(v)] for k, v in ev.items()]
    stats = _typed_stats(index.stats_of(row))
    launch = []
    for k, v in stats:
        if k == "kernel_details":
            launch = [[a, b] for a, b in launch_arguments(v)]
    if not launch:  # Kineto names each launch argument as its own stat
        launch = [[k, _fmt(v)] for k, v in stats if k in _KINETO_LAUNCH]
    here = model.locate(row)
    flows = []
    for f in index.flows(row):
        where = model.locate(f["row"])
        if where is None:
            continue
        item = {**f, **where, "lane_label": str(model.lanes["label"].iat[where["lane"]])}
        if f["kind"] == "launch" and f["dir"] == "in":
            ops = model.parents(f["row"])
            item["launched_by"] = [p["name"] for p in ops]
        flows.append(item)
    return {
        "row": row,
        "name": str(ev["name"]),
        "fields": fields,
        "stats": [[k, _fmt(v)] for k, v in stats],
        "launch": launch,
        "where": here,
        "lane_label": (str(model.lanes["label"].iat[here["lane"]]) if here else ""),
        "parents": model.parents(row),
        "flows": flows,
        "hlo": [[k, v] for k, v in _hlo_of(run, row)],
    }


def _hlo_of(run, row: int) -> list[tuple[str, str]]:
    """The HLO instruction a device event ran (XLA captures), or nothing."""
    if getattr(run, "stat_store", None) is None or getattr(run, "lines", None) is None:
        return []
    return event_hlo(run, row)


def _derived_details(run, model: TraceModel, row: int) -> dict:
    """Details of a derived event (an XLA Modules/Ops event of timeline_model): its span,
    the first kernel it covers (a link) and, for an op, that kernel's HLO instruction."""
    d = model.derived.iloc[row - len(run.events)]
    here = model.locate(row)
    first = int(d["first_row"])
    fields = [
        ["line", str(d["line"])],
        ["name", str(d["name"])],
        ["start_us", _fmt(float(d["start_us"]))],
        ["dur_us", _fmt(float(d["dur_us"]))],
        ["derived", "from the stream's kernels, as XProf's trace viewer derives this line"],
    ]
    where = model.locate(first)
    flows = []
    if where is not None:
        lane = str(model.lanes["label"].iat[where["lane"]])
        flows.append({"kind": "derived", "dir": "out", **where, "lane_label": lane})
    ops = str(d["line"]).startswith("XLA Ops")
    return {
        "row": row,
        "name": str(d["name"]),
        "fields": fields,
        "stats": [],
        "launch": [],
        "where": here,
        "lane_label": (str(model.lanes["label"].iat[here["lane"]]) if here else ""),
        "parents": [],
        "flows": flows,
        "hlo": [[k, v] for k, v in _hlo_of(run, first)] if ops else [],
    }


# The memory timeline draws at most this many points of one allocator's series.
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


def timeline_model(run) -> TraceModel:
    """The timeline model of a run (``run.timeline_model`` caches it): its events and, on an
    XLA GPU capture, the XLA Modules/Ops lines XProf's trace viewer derives from its kernels
    (:mod:`..frameworks.xla.trace_lines`), drawn as rows ``len(run.events)`` on."""
    derived = _derived_lines(run)
    if derived is None or not len(derived):
        return TraceModel.from_run(run)
    events = run.events
    joined = {
        c: union_categoricals([events[c], derived[c]], ignore_order=True)
        for c in ("host", "plane", "line", "name")
    }
    for c in ("start_us", "end_us", "occurrences"):
        joined[c] = np.concatenate([events[c].to_numpy(), derived[c].to_numpy()])
    model = TraceModel(
        pd.DataFrame(joined), getattr(run, "lines", None), getattr(run, "planes", None)
    )
    model.derived = derived.reset_index(drop=True)
    return model


def _derived_lines(run) -> pd.DataFrame | None:
    """XProf's derived XLA lines of a run read from a capture (None for a run without stats or
    lines, as the benchmark's synthetic runs)."""
    if getattr(run, "stat_store", None) is None or getattr(run, "lines", None) is None:
        return None
    return xla_trace_lines(run)


def __getattr__(name: str):
    if name == "TimelineModel":  # the plotly timeline's model, replaced by TraceModel
        import warnings

        warnings.warn(
            "tfprof_widgets.views.timeline_lod.TimelineModel is deprecated and will be removed "
            "in the next release: use tfprof_widgets.views.timeline_lod.TraceModel",
            DeprecationWarning,
            stacklevel=2,
        )
        return TraceModel
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
