"""The trace viewer's model in the kernel: every timed event of a run in lanes and rows,
indexed so that any window, search or lookup is answered without a pass over all events.

Layout, as in TensorBoard's trace viewer and Perfetto: one *group* per host/plane, one *lane*
per line (thread or stream), and inside a lane rows packed by real overlap: each event on the
lowest row free when it starts, so nested events stack as a flame and a GPU stream whose
kernels overlap by a hair (CUDA graphs) takes two rows, as in XProf and Perfetto.

The model keeps every timed event in *sub-lanes*, one per (lane, row), each sorted by start.
Events arrive sorted by (host, plane, line, start) from every reader, so building it needs no
global sort: rows come from a running maximum of ends per row (:func:`.rows.greedy_chain`), and
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

from ...frameworks.xla import derived_trace_lines as xla_trace_lines
from ...schema import DEVICE_KINDS
from .lanes import DERIVED_ORDER, is_internal, natural_key, readable_line_names, stream_content
from .marks import MAX_MARKS, Marks
from .rows import greedy_chain


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
    # lines build_trace_model() derives, as XProf's trace viewer does; None when there are none.
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
        timed = (occ == 1) & ~np.isnan(start) & ~is_internal(events["name"])
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
        (:func:`.rows.greedy_chain`)."""
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
        left = np.flatnonzero(~greedy_chain(k_start, k_end))
        level = 1
        while len(left):
            depth[left] = level  # those left off this row are overwritten below
            left = left[~greedy_chain(k_start[left], k_end[left])]
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
                contents[i] = stream_content(self._names.iloc[self._lane_rows(i)[:5000]])
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
                        return (k, natural_key(h), natural_key(p))
                return (len(group_order), natural_key(h), 0 if g["device"] else 1, natural_key(p))
            return (natural_key(h), 0 if g["device"] else 1, natural_key(p))

        def lane_rank(i: int) -> tuple:
            ln = lanes["line"].iat[i]
            kind = ln.split(" - from #", 1)[0]  # XLA lines derived per stream
            if kind in DERIVED_ORDER:
                return (0, DERIVED_ORDER.index(kind), natural_key(ln))
            if ln.startswith("Stream #"):
                return (1, 0, natural_key(ln))
            return (2, 0, natural_key(lanes["label"].iat[i]))

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


def build_trace_model(run) -> TraceModel:
    """The trace model of a run (``run.trace_model`` caches it): its events and, on an
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
