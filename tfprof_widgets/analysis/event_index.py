"""Per-event lookups into the run's lines and planes, computed once per run.

Assembly records each event's row in ``run.lines`` (``run.event_line_rows``) and each line's
row in ``run.planes`` (``run.line_plane_rows``), so an event's XLine id or its plane's device
kind is one integer lookup, never a search over (host, plane, line) names. Several analyses
start from the same per-event arrays; each is computed once per run (:func:`.inputs.per_run`).
"""

from __future__ import annotations

import numpy as np

from ..schema import DEVICE_KINDS
from .inputs import per_run
from .nesting import to_ps


@per_run
def event_line_ids(run) -> np.ndarray:
    """XLine id of each event's line (int64)."""
    return run.lines["line_id"].to_numpy()[run.event_line_rows]


@per_run
def event_plane_rows(run) -> np.ndarray:
    """Row of run.planes for each event."""
    return run.line_plane_rows[run.event_line_rows]


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
