"""Per-event lookups into the run's lines and planes, computed once per run.

Assembly records each event's row in ``run.lines`` (``run.event_line_rows``) and each line's
row in ``run.planes`` (``run.line_plane_rows``), so an event's XLine id or its plane's device
kind is one integer lookup, never a search over (host, plane, line) names. Several analyses
start from the same per-event arrays; each is computed once per run (:func:`.memo.per_run`).
"""

from __future__ import annotations

import numpy as np

from ..schema import DEVICE_KINDS
from .memo import per_run
from .nesting import stack_nesting, to_ps


@per_run
def event_line_ids(run) -> np.ndarray:
    """XLine id of each event's line (int64)."""
    return run.lines["line_id"].to_numpy()[run.event_line_rows]


@per_run
def event_plane_rows(run) -> np.ndarray:
    """Row of run.planes for each event."""
    return run.line_plane_rows[run.event_line_rows]


def host_codes(run) -> np.ndarray:
    """Each event's host as its code in ``run.planes['host']``'s categories."""
    return np.asarray(run.planes["host"].astype("category").array.codes)[event_plane_rows(run)]


@per_run
def plane_kinds(run) -> np.ndarray:
    """Each plane's device kind ('CPU', 'GPU', 'TPU', 'metadata'...), as strings."""
    return np.asarray(run.planes["device_kind"].to_numpy(dtype=object), dtype=str)


@per_run
def on_device(run) -> np.ndarray:
    """True for events on accelerator planes (GPU, TPU, custom devices)."""
    return np.isin(plane_kinds(run), DEVICE_KINDS)[run.line_plane_rows][run.event_line_rows]


@per_run
def timed(run) -> np.ndarray:
    """True for timed events (not aggregated ones, which carry num_occurrences instead)."""
    return run.events["occurrences"].to_numpy() == 1


@per_run
def times_ps(run) -> tuple[np.ndarray, np.ndarray]:
    """Each event's start and end as integer picoseconds from the run's start."""
    ev = run.events
    return to_ps(ev["start_us"].to_numpy()), to_ps(ev["end_us"].to_numpy())


# XProf's derived lines (Steps, TF Ops, HLO Ops, ...) have ids from 0xdeadbeef as a C++
# int, i.e. -559038737, up to the host XLA regions' 289 ids above it (kThreadIdDerivedMin ..
# kThreadIdHostXlaRegionEnd in TSL's xplane_schema.h).
_DERIVED_MIN = 0xDEADBEEF - (1 << 32)
_DERIVED_SLOTS = 289
# The device 'Steps' line (kThreadIdStepInfo). XProf compares it with the 64-bit line id as
# is, so only -559038737 (what TensorFlow writes) marks steps; 0xdeadbeef stored unsigned
# is a derived line that marks none.
STEP_INFO_LINE_ID = _DERIVED_MIN


def is_derived_line(line_ids: np.ndarray) -> np.ndarray:
    """True for XProf's derived lines. Ids are compared as 32-bit ints, as XProf's
    ``IsDerivedThreadId(int)`` takes them, so both -559038737 and 0xdeadbeef stored in an
    int64 count; 64-bit thread ids do not."""
    low = np.asarray(line_ids, np.int64) & 0xFFFFFFFF
    signed = np.where(low >= 1 << 31, low - (1 << 32), low)
    return (signed >= _DERIVED_MIN) & (signed <= _DERIVED_MIN + _DERIVED_SLOTS)


def innermost_around(run, candidate: np.ndarray, calls: np.ndarray) -> np.ndarray:
    """Per row of ``calls`` (host events): the row of the innermost host event around it on
    its thread among those ``candidate`` marks (a bool per event), -1 where none is (nested
    among the candidates and the calls alone, so a call inside another call inside a
    candidate has none)."""
    ops = np.flatnonzero(candidate & ~on_device(run))
    out = np.full(len(calls), -1, np.int64)
    if not len(ops) or not len(calls):
        return out
    rows, back = np.unique(np.r_[ops, calls], return_inverse=True)
    start, end = times_ps(run)
    _, parent = stack_nesting(run.event_line_rows[rows], start[rows], end[rows])
    where = parent[back[len(ops) :]]
    found = where >= 0
    up = rows[where[found]]
    out[found] = np.where(candidate[up], up, -1)
    return out
