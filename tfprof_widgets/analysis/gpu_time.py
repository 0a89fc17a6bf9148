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
* :func:`kernel_breakdown`: the time each kind of kernel runs (computation, communication,
  memory), overlaps counted once under the kinds running then ('COMPUTATION overlapping
  COMMUNICATION'), as HTA's ``get_gpu_kernel_breakdown`` with memory kernels.

Kinds by name, HTA's rules: communication ``^nccl.*Kernel``; memory ``^Memcpy``,
``^Memset`` or ``^dma``; computation any other name that has no 'Memcpy' or 'Sync' in it;
anything else is counted in the span only.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .. import schema
from .event_index import event_plane_rows, is_derived_line, on_device, timed, times_ps
from .frameworks import framework_of
from .nesting import interval_union

_COMMUNICATION = r"^nccl.*Kernel"
_MEMORY = r"^(?:Memcpy|Memset|dma)"
_NOT_COMPUTE = r"^(?:nccl.*Kernel|.*Memcpy|Memset|.*Sync)"
# The kinds in the order HTA names them when they overlap.
KINDS = ("COMPUTATION", "COMMUNICATION", "MEMORY")
_OTHER = len(KINDS)


def device_activity(run) -> np.ndarray:
    """Rows of run.events that are device activity of the profiled iterations."""
    line_ids = run.lines["line_id"].to_numpy()
    stream = ~is_derived_line(line_ids)[run.event_line_rows]
    rows = np.flatnonzero(on_device(run) & stream & timed(run))
    return framework_of(run).device_rows_in_steps(run, rows)


def kernel_kinds(names: pd.Series) -> np.ndarray:
    """Per name: its kind's index in KINDS (len(KINDS) where none)."""
    text = names.astype(str)
    kind = np.full(len(text), _OTHER, np.int8)
    kind[~text.str.match(_NOT_COMPUTE).to_numpy(dtype=bool)] = 0
    kind[text.str.match(_MEMORY).to_numpy(dtype=bool)] = 2
    kind[text.str.match(_COMMUNICATION).to_numpy(dtype=bool)] = 1
    return kind


def _groups(run):
    """Per (host, device plane) with activity: (host, device, start ps, end ps, kind)."""
    rows = device_activity(run)
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
    df = pd.DataFrame(
        out, columns=["host", "device", "span", "idle", "compute", "non_compute"]
    ).astype({c: np.float64 for c in ("span", "idle", "compute", "non_compute")})
    for c in ("idle", "compute", "non_compute"):
        df[f"{c}_us"] = df[c] / 1e6
        df[f"{c}_percent"] = np.where(
            df["span"] > 0, 100 * df[c] / df["span"].where(df["span"] > 0, 1), 0.0
        )
    df["span_us"] = df["span"] / 1e6
    df["host"] = pd.Categorical(df["host"])
    df["device"] = pd.Categorical(df["device"])
    return schema.conform(df, schema.TEMPORAL_BREAKDOWN)


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


__all__ = ["KINDS", "device_activity", "kernel_breakdown", "kernel_kinds", "temporal_breakdown"]
