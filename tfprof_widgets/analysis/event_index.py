"""Per-event lookups into the run's lines and planes, through categorical codes.

Analyses often need each event's XLine id or its plane's device kind. Mapping a million
(host, plane, line) tuples through a MultiIndex takes seconds; the events' categorical codes
give the same answer with one integer key and a binary search. Results are cached on the run.
"""

from __future__ import annotations

import numpy as np

DEVICE_KINDS = ("GPU", "TPU", "CUSTOM")


def _key(host, plane, line=None) -> np.ndarray:
    k = (host.cat.codes.to_numpy().astype(np.int64) << 42) | (
        plane.cat.codes.to_numpy().astype(np.int64) << 21
    )
    if line is not None:
        k |= line.cat.codes.to_numpy().astype(np.int64)
    return k


def _lookup(event_keys: np.ndarray, table_keys: np.ndarray) -> np.ndarray:
    order = np.argsort(table_keys, kind="stable")
    pos = np.searchsorted(table_keys[order], event_keys)
    return order[np.minimum(pos, len(order) - 1)]


def event_line_rows(run) -> np.ndarray:
    """Row of run.lines for each event."""

    def compute():
        ev, ln = run.events, run.lines
        return _lookup(
            _key(ev["host"], ev["plane"], ev["line"]), _key(ln["host"], ln["plane"], ln["line"])
        )

    return run.cached("_event_line_rows", compute)


def event_line_ids(run) -> np.ndarray:
    """XLine id of each event's line (int64)."""
    return run.lines["line_id"].to_numpy()[event_line_rows(run)]


def event_plane_rows(run) -> np.ndarray:
    """Row of run.planes for each event."""

    def compute():
        ev, pl = run.events, run.planes
        return _lookup(_key(ev["host"], ev["plane"]), _key(pl["host"], pl["plane"]))

    return run.cached("_event_plane_rows", compute)


def on_device(run) -> np.ndarray:
    """True for events on accelerator planes (GPU, TPU, custom devices)."""
    kinds = run.planes["device_kind"].astype(str).to_numpy()
    return np.isin(kinds, DEVICE_KINDS)[event_plane_rows(run)]
