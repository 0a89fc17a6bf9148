"""Per-event lookups into the run's lines and planes.

Assembly records each event's row in ``run.lines`` (``run.event_line_rows``) and each line's
row in ``run.planes`` (``run.line_plane_rows``), so an event's XLine id or its plane's device
kind is one integer lookup, never a search over (host, plane, line) names.
"""

from __future__ import annotations

import numpy as np

from ..schema import DEVICE_KINDS


def event_line_ids(run) -> np.ndarray:
    """XLine id of each event's line (int64)."""
    return run.lines["line_id"].to_numpy()[run.event_line_rows]


def event_plane_rows(run) -> np.ndarray:
    """Row of run.planes for each event."""
    return run.line_plane_rows[run.event_line_rows]


def on_device(run) -> np.ndarray:
    """True for events on accelerator planes (GPU, TPU, custom devices)."""
    kinds = run.planes["device_kind"].astype(str).to_numpy()
    return np.isin(kinds, DEVICE_KINDS)[run.line_plane_rows][run.event_line_rows]
