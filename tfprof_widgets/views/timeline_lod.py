"""Level of detail for the trace timeline: what to draw for a time window.

A browser stays smooth with a few thousand marks, not millions, so a window of time never
draws more than ``budget`` (5,000) marks. Events are laid out in lanes, one per
(thread/stream, nesting depth), sorted by start. For a window:

* if it holds at most ``budget`` events, they are all returned as they are;
* otherwise events at least one pixel column wide are kept, and the rest are counted per
  (lane, column) and returned as "n events" blocks; columns are widened until the total
  fits the budget.

Counting uses binary searches on each lane's sorted starts, so a zoomed-out window of ten
million events costs a few milliseconds of searching, not a pass over all events.

The memory timeline thins its points the same way: :func:`downsample_minmax` keeps each
bucket's minimum and maximum, so peaks stay peaks.
"""

from __future__ import annotations

import dataclasses
import warnings

import numpy as np
import pandas as pd

MAX_MARKS = 5000


@dataclasses.dataclass
class Marks:
    """What one window draws. Raw events and merged blocks share the columns; ``count`` is 1
    for a raw event and N for a block of N small events."""

    lane: np.ndarray  # int: index into TimelineModel.lane_labels
    start_us: np.ndarray
    end_us: np.ndarray
    count: np.ndarray
    row: np.ndarray  # row in Run.events for raw events, -1 for blocks
    name: np.ndarray  # object: event name, or "N events"
    x0: float
    x1: float

    def __len__(self) -> int:
        return len(self.lane)

    @property
    def raw(self) -> np.ndarray:
        return self.count == 1


class TimelineModel:
    """Events arranged in lanes with the indexes needed to cut any window quickly.

    Built from a ``Run.events``-shaped frame (name, start_us, end_us, occurrences), each
    event's row in the lines table (``run.event_line_rows``; events sorted by line, then
    start) and the lines table (host, plane, line); aggregated events (no start time) are
    left out. Lanes follow the lines table's order.
    """

    def __init__(
        self,
        events: pd.DataFrame,
        line_rows: np.ndarray,
        lines: pd.DataFrame,
        max_depth: int = 6,
    ) -> None:
        timed = np.flatnonzero(
            (events["occurrences"].to_numpy() == 1) & ~np.isnan(events["start_us"].to_numpy())
        )
        start = events["start_us"].to_numpy()[timed]
        end = np.maximum(events["end_us"].to_numpy()[timed], start)
        line = np.asarray(line_rows, np.int64)[timed]
        depth = np.zeros(len(timed), np.int64)
        # Events arrive sorted by line then start; depth = events open at each start.
        cuts = np.flatnonzero(np.diff(line)) + 1
        bounds = np.r_[0, cuts, len(timed)]
        for a, b in zip(bounds[:-1], bounds[1:]):
            ends_sorted = np.sort(end[a:b])
            closed = np.searchsorted(ends_sorted, start[a:b], side="right")
            depth[a:b] = np.arange(b - a) - closed
        depth = np.clip(depth, 0, max_depth)
        # Lanes: one per (line, depth) that occurs, in line order then depth.
        lane_key = line * (max_depth + 1) + depth
        uniq, lane = np.unique(lane_key, return_inverse=True)
        order = np.lexsort((start, lane))
        self.lane = lane[order].astype(np.int32)
        self.start = start[order]
        self.end = end[order]
        self.row = timed[order]
        self.names = events["name"]
        self.name_codes = events["name"].cat.codes.to_numpy()[self.row]
        self.n_lanes = len(uniq)
        self.lane_labels = _lane_labels(lines, uniq // (max_depth + 1), uniq % (max_depth + 1))
        self.lane_offsets = np.searchsorted(self.lane, np.arange(self.n_lanes + 1))
        # Within a lane, the running maximum of end times is sorted even where nesting was
        # imperfect, so it can be binary-searched for "ends after x0".
        reach = self.end.copy()
        for a, b in zip(self.lane_offsets[:-1], self.lane_offsets[1:]):
            np.maximum.accumulate(reach[a:b], out=reach[a:b])
        self.reach = reach
        self.t_min = float(self.start.min()) if len(self.start) else 0.0
        self.t_max = float(self.end.max()) if len(self.end) else 0.0
        self._dur_order = np.argsort(-(self.end - self.start), kind="stable")
        self._dur_sorted = (self.end - self.start)[self._dur_order]

    def __len__(self) -> int:
        return len(self.start)

    def _window_ranges(self, x0: float, x1: float) -> tuple[np.ndarray, np.ndarray]:
        """Per lane, the index range of events overlapping [x0, x1]."""
        lo, hi = self.lane_offsets[:-1], self.lane_offsets[1:]
        i0 = np.empty(self.n_lanes, np.int64)
        i1 = np.empty(self.n_lanes, np.int64)
        for k in range(self.n_lanes):
            a, b = lo[k], hi[k]
            i0[k] = a + np.searchsorted(self.reach[a:b], x0, side="right")
            i1[k] = a + np.searchsorted(self.start[a:b], x1, side="left")
        return i0, np.maximum(i1, i0)

    def view(self, *args, **kwargs) -> Marks:
        """Deprecated: :meth:`window`."""
        warnings.warn(
            "TimelineModel.view() is deprecated and will be removed in the next release: "
            "use TimelineModel.window()",
            DeprecationWarning,
            stacklevel=2,
        )
        return self.window(*args, **kwargs)

    def window(
        self,
        x0: float | None = None,
        x1: float | None = None,
        px: int = 1200,
        budget: int = MAX_MARKS,
    ) -> Marks:
        """The marks to draw for the window [x0, x1] (µs) at ``px`` pixels of width."""
        x0 = self.t_min if x0 is None else float(x0)
        x1 = self.t_max if x1 is None else float(x1)
        if x1 <= x0:
            x1 = x0 + 1e-3
        i0, i1 = self._window_ranges(x0, x1)
        n = int((i1 - i0).sum())
        if n <= budget:
            idx = (
                np.concatenate([np.arange(a, b) for a, b in zip(i0, i1)])
                if n
                else np.zeros(0, np.int64)
            )
            # The running maximum of ends over-includes events that end before x0.
            return self._raw(idx[self.end[idx] > x0], x0, x1)
        cols = max(1, px)
        while True:
            width = (x1 - x0) / cols
            big = self._big_events(x0, x1, width, i0, i1)
            counts, edges = self._column_counts(x0, x1, cols, i0)
            # Events drawn as they are leave the count of the column where they start.
            big_col = np.clip(((self.start[big] - x0) / width).astype(np.int64), 0, cols - 1)
            np.subtract.at(counts, (self.lane[big], big_col), 1)
            n_blocks = int((counts > 0).sum())
            if len(big) + n_blocks <= budget or cols == 1:
                break
            cols = max(1, cols // 2)
        lanes_b, cols_b = np.nonzero(counts)
        blocks = Marks(
            lane=lanes_b.astype(np.int32),
            start_us=edges[cols_b],
            end_us=edges[cols_b + 1],
            count=counts[lanes_b, cols_b],
            row=np.full(len(lanes_b), -1, np.int64),
            name=np.array([f"{c:,} events" for c in counts[lanes_b, cols_b]], dtype=object),
            x0=x0,
            x1=x1,
        )
        raw = self._raw(big, x0, x1)
        return Marks(
            *(
                np.concatenate([getattr(blocks, f), getattr(raw, f)])
                for f in ("lane", "start_us", "end_us", "count", "row", "name")
            ),
            x0=x0,
            x1=x1,
        )

    def _raw(self, idx: np.ndarray, x0: float, x1: float) -> Marks:
        names = (
            self.names.cat.categories.to_numpy(dtype=object)[self.name_codes[idx]]
            if len(idx)
            else np.zeros(0, object)
        )
        return Marks(
            self.lane[idx],
            self.start[idx],
            self.end[idx],
            np.ones(len(idx), np.int64),
            self.row[idx],
            names,
            x0,
            x1,
        )

    def _big_events(self, x0, x1, width, i0, i1) -> np.ndarray:
        """Indexes of events in the window at least ``width`` long."""
        n_big_total = int(np.searchsorted(-self._dur_sorted, -width, side="right"))
        n_window = int((i1 - i0).sum())
        if n_big_total <= n_window:
            cand = self._dur_order[:n_big_total]
            keep = (self.start[cand] < x1) & (self.end[cand] > x0)
            return np.sort(cand[keep])
        idx = np.concatenate([np.arange(a, b) for a, b in zip(i0, i1)])
        return idx[(self.end[idx] - self.start[idx]) >= width]

    def _column_counts(self, x0, x1, cols, i0) -> tuple[np.ndarray, np.ndarray]:
        """Events starting in each (lane, column), plus those already running at x0 counted
        in the first column."""
        edges = np.linspace(x0, x1, cols + 1)
        counts = np.zeros((self.n_lanes, cols), np.int64)
        lo, hi = self.lane_offsets[:-1], self.lane_offsets[1:]
        for k in range(self.n_lanes):
            a, b = lo[k], hi[k]
            if a == b:
                continue
            pos = np.searchsorted(self.start[a:b], edges, side="left")
            c = np.diff(pos)
            c[0] += max(0, pos[0] - (i0[k] - a))  # started before x0, still running
            counts[k] = c
        return counts, edges


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


def timeline_model(run) -> TimelineModel:
    """The timeline model of a run (``run.timeline_model`` caches it)."""
    return TimelineModel(run.events, run.event_line_rows, run.lines)


def _lane_labels(lines: pd.DataFrame, lane_lines: np.ndarray, lane_depth: np.ndarray) -> list:
    """'host · plane · line [depth]', naming the host and plane only when lanes differ in it."""
    hosts = lines["host"].astype(str).to_numpy()[lane_lines]
    planes = lines["plane"].astype(str).to_numpy()[lane_lines]
    names = lines["line"].astype(str).to_numpy()[lane_lines]
    multi_host = len(set(hosts.tolist())) > 1
    multi_plane = len(set(zip(hosts.tolist(), planes.tolist()))) > 1
    return [
        (f"{h} · " if multi_host else "")
        + (f"{p} · " if multi_plane else "")
        + n
        + (f" [{d}]" if d else "")
        for h, p, n, d in zip(hosts, planes, names, lane_depth.tolist())
    ]
