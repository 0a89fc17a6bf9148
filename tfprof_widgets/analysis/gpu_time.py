"""Where a GPU's time goes over a capture: HolisticTraceAnalysis (HTA)'s temporal breakdown
and GPU kernel breakdown, per host and device.

The device activity counted is every event on a device plane's stream lines (kernels, copies,
memsets; not derived lines such as GPU annotations), and, where the run's framework says which
activity belongs to the profiled iterations (HTA leaves out the kernels launched during the
last, usually cut, step), only that.

* :func:`temporal_breakdown`: from the first activity's start to the last one's end (the
  span), ``idle`` is the time no activity runs, ``compute`` the time some computation kernel
  runs, ``non_compute`` the rest (copies, memsets, collectives alone), as HTA's
  ``get_temporal_breakdown``.
* :func:`temporal_breakdown_steps`: the same inside each step's window of ``run.steps``
  ([start_us, start_us + step_time_us]), as HTA's ``get_temporal_breakdown`` on the trace cut
  to that window (each activity clipped to it). ``idle_us`` is the whole window less the time
  some activity runs; the shares are HTA's, over its span on the cut trace (``active_us``).
  Every stream activity counts here, the last step's too: each step is judged on its own
  window.
* :func:`kernel_breakdown`: the time each kind of kernel runs (computation, communication,
  memory), overlaps counted once under the kinds running then ('COMPUTATION overlapping
  COMMUNICATION'), as HTA's ``get_gpu_kernel_breakdown`` with memory kernels.

Kinds by name, HTA's rules: communication a collective library's kernel (the one rule of
:mod:`.collective_kinds`: 'nccl' or 'rccl' first, any case; HTA's ``^nccl.*Kernel`` and
``ncclDevKernel_*`` among them); memory ``^Memcpy``,
``^Memset`` or ``^dma``; computation any other name that has no 'Memcpy' or 'Sync' in it;
anything else is counted in the span only.
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd

from .. import schema
from ..frameworks import framework_of
from ..frameworks.base import name_texts
from .collective_kinds import is_collective_kernel
from .event_index import event_plane_rows, is_derived_line, on_device, timed, times_ps
from .memo import per_run
from .nesting import interval_union, to_ps

_MEMORY = r"^(?:Memcpy|Memset|dma)"
_NOT_COMPUTE = r"^(?:.*Memcpy|Memset|.*Sync)"
_MEMORY_RE, _NOT_COMPUTE_RE = (re.compile(p) for p in (_MEMORY, _NOT_COMPUTE))
# The kinds in the order HTA names them when they overlap.
KINDS = ("COMPUTATION", "COMMUNICATION", "MEMORY")
_OTHER = len(KINDS)


def stream_activity(run) -> np.ndarray:
    """Rows of run.events that are activity on a device's stream lines."""
    line_ids = run.lines["line_id"].to_numpy()
    stream = ~is_derived_line(line_ids)[run.event_line_rows]
    return np.flatnonzero(on_device(run) & stream & timed(run))


@per_run
def device_activity(run) -> np.ndarray:
    """Rows of run.events that are device activity of the profiled iterations (kept per run:
    every HTA analysis starts from them; not to be changed in place)."""
    return framework_of(run).device_rows_in_steps(run, stream_activity(run))


def kernel_kinds(names: pd.Series) -> np.ndarray:
    """Per name: its kind's index in KINDS (len(KINDS) where none)."""
    text = name_texts(names)
    return np.fromiter(map(_kind_of_name, text), np.int8, len(text))


def _kind_of_name(name: str) -> int:
    if is_collective_kernel(name):
        return 1
    if _MEMORY_RE.match(name):
        return 2
    return _OTHER if _NOT_COMPUTE_RE.match(name) else 0


def _groups(run, rows: np.ndarray | None = None):
    """Per (host, device plane) with activity among ``rows`` (default: the profiled
    iterations' device activity): (host, device, start ps, end ps, kind)."""
    rows = device_activity(run) if rows is None else rows
    ev = run.events
    start, end = times_ps(run)
    names = ev["name"]
    kind_of_name = kernel_kinds(pd.Series(names.cat.categories))
    kind = kind_of_name[names.cat.codes.to_numpy()[rows]]
    plane = event_plane_rows(run)[rows]
    planes = run.planes
    for p in np.unique(plane):
        mine = plane == p
        r = rows[mine]
        yield (
            str(planes["host"].iloc[p]),
            str(planes["plane"].iloc[p]),
            start[r],
            end[r],
            kind[mine],
        )


def temporal_breakdown(run) -> pd.DataFrame:
    """Idle, compute and non-compute time of each device (schema.TEMPORAL_BREAKDOWN)."""
    out = []
    for host, device, start, end, kind in _groups(run):
        s, e = interval_union(start, end)
        span = int(e[-1] - s[0])
        busy = int((e - s).sum())
        cs, ce = interval_union(start[kind == 0], end[kind == 0])
        compute = int((ce - cs).sum())
        idle, non_compute = span - busy, busy - compute
        out.append((host, device, span, idle, compute, non_compute))
    # Columns made from the rows at once: a frame of a device or two costs more in pandas'
    # per-column steps than in what they compute.
    col = dict(zip(("host", "device"), (np.array(c, object) for c in zip(*out)))) if out else {}
    figures = np.array([r[2:] for r in out], np.float64).reshape(len(out), 4)
    span = figures[:, 0]
    df = {
        "host": pd.Categorical(col.get("host", np.array([], object))),
        "device": pd.Categorical(col.get("device", np.array([], object))),
        "span_us": span / 1e6,
    }
    for i, c in enumerate(("idle", "compute", "non_compute"), start=1):
        df[f"{c}_us"] = figures[:, i] / 1e6
        df[f"{c}_percent"] = np.where(
            span > 0, 100 * figures[:, i] / np.where(span > 0, span, 1), 0.0
        )
    return schema.conform(
        pd.DataFrame({c: df[c] for c in schema.TEMPORAL_BREAKDOWN}), schema.TEMPORAL_BREAKDOWN
    )


def _covered_before(s: np.ndarray, e: np.ndarray, t: np.ndarray) -> np.ndarray:
    """Per time in ``t``: how long the sorted, disjoint intervals [s, e) cover before it."""
    if not len(s):
        return np.zeros(len(t), np.int64)
    length = e - s
    done = np.r_[0, np.cumsum(length)]  # done[k]: covered by the first k intervals
    k = np.searchsorted(s, t, side="right")  # how many start at or before t
    last = np.maximum(k - 1, 0)
    part = np.clip(t - s[last], 0, length[last])
    return np.where(k > 0, done[last] + part, 0)


def _window_breakdown(start, end, kind, ws: np.ndarray, we: np.ndarray) -> tuple:
    """Per window [ws, we): the time some activity runs, some computation runs, and HTA's
    span on the window's cut trace (first clipped start to last clipped end; 0 if none)."""
    s, e = interval_union(start, end)
    busy = _covered_before(s, e, we) - _covered_before(s, e, ws)
    cs, ce = interval_union(start[kind == 0], end[kind == 0])
    compute = _covered_before(cs, ce, we) - _covered_before(cs, ce, ws)
    # The first union interval ending after ws and the last one starting before we.
    i = np.minimum(np.searchsorted(e, ws, side="right"), len(s) - 1)
    j = np.maximum(np.searchsorted(s, we, side="left") - 1, 0)
    first, last = np.maximum(s[i], ws), np.minimum(e[j], we)
    active = np.where(busy > 0, last - first, 0)
    return busy, compute, active


def temporal_breakdown_steps(run) -> pd.DataFrame:
    """Idle, compute and non-compute time of each device in each step of ``run.steps``
    (schema.TEMPORAL_BREAKDOWN_STEPS): one row per host, device with activity and step."""
    steps = run.steps
    step_host = steps["host"].astype(str).to_numpy(object)
    step_start = steps["start_us"].to_numpy()
    step_end = (steps["start_us"] + steps["step_time_us"]).to_numpy()
    step_number = steps["step"].array
    parts = []
    for host, device, start, end, kind in _groups(run, stream_activity(run)):
        mine = np.flatnonzero(step_host == host)
        if not len(mine):
            continue
        ws, we = to_ps(step_start[mine]), to_ps(step_end[mine])
        busy, compute, active = _window_breakdown(start, end, kind, ws, we)
        window = we - ws
        parts.append(
            {
                "host": np.full(len(mine), host, object),
                "device": np.full(len(mine), device, object),
                "step": mine,  # rows of run.steps: their numbers taken at once below
                "start_us": step_start[mine],
                "window_us": window / 1e6,
                "active_us": active / 1e6,
                "idle_us": (window - busy) / 1e6,
                "compute_us": compute / 1e6,
                "non_compute_us": (busy - compute) / 1e6,
            }
        )
    if not parts:
        return schema.empty(schema.TEMPORAL_BREAKDOWN_STEPS)
    # One frame from the parts' columns (not a frame per device, then concat and astype).
    df = {c: np.concatenate([p[c] for p in parts]) for c in parts[0]}
    df["step"] = step_number[df["step"]]
    # HTA's shares: over its span on the cut trace (active_us), whose idle part is the
    # active span less the busy time; steps whose GPU starts late differ by tens of points
    # from shares over the whole window.
    active = np.where(df["active_us"] > 0, df["active_us"], np.nan)
    idle_in_active = df["active_us"] - df["compute_us"] - df["non_compute_us"]
    df["idle_percent"] = 100 * idle_in_active / active
    df["compute_percent"] = 100 * df["compute_us"] / active
    df["non_compute_percent"] = 100 * df["non_compute_us"] / active
    df["host"] = pd.Categorical(df["host"])
    df["device"] = pd.Categorical(df["device"])
    return schema.conform(
        pd.DataFrame({c: df[c] for c in schema.TEMPORAL_BREAKDOWN_STEPS}),
        schema.TEMPORAL_BREAKDOWN_STEPS,
    )


def _overlaps(start: np.ndarray, end: np.ndarray, kind: np.ndarray) -> np.ndarray:
    """Time per set of kinds running at once (index: the set's bit mask), ps."""
    masks = np.zeros(1 << len(KINDS), np.int64)
    bounds, deltas = [], []
    for k in range(len(KINDS)):
        s, e = interval_union(start[kind == k], end[kind == k])
        bounds += [s, e]
        deltas += [np.full(len(s), 1 << k), np.full(len(e), -(1 << k))]
    t = np.concatenate(bounds)
    if not len(t):
        return masks
    d = np.concatenate(deltas)
    order = np.argsort(t, kind="stable")
    t, running = t[order], np.cumsum(d[order])
    np.add.at(masks, running[:-1], np.diff(t))
    return masks


def kernel_breakdown(run) -> pd.DataFrame:
    """Time of each kind of kernel, and of each overlap of kinds, per device
    (schema.KERNEL_BREAKDOWN), the largest first."""
    out = []
    for host, device, start, end, kind in _groups(run):
        masks = _overlaps(start, end, kind)
        total = masks[1:].sum()
        for m in np.flatnonzero(masks[1:]) + 1:
            label = " overlapping ".join(k for i, k in enumerate(KINDS) if m & (1 << i))
            out.append((host, device, label, masks[m] / 1e6, 100 * masks[m] / total))
    df = pd.DataFrame(out, columns=["host", "device", "kernel_type", "time_us", "percent"])
    df = df.sort_values(["host", "device", "time_us"], ascending=[True, True, False])
    df["host"] = pd.Categorical(df["host"])
    df["device"] = pd.Categorical(df["device"])
    return schema.conform(df.reset_index(drop=True), schema.KERNEL_BREAKDOWN)


__all__ = [
    "KINDS",
    "device_activity",
    "kernel_breakdown",
    "kernel_kinds",
    "stream_activity",
    "temporal_breakdown",
    "temporal_breakdown_steps",
]
