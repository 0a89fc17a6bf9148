"""What one window of the trace viewer draws: :class:`Marks`, raw events and "n events"
blocks in columns, and their binary layout for the page (the live messages and the offline
payload share it).

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

import numpy as np

MAX_MARKS = 8000


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
