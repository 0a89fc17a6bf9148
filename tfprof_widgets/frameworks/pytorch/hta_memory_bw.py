"""HolisticTraceAnalysis (HTA)'s memory bandwidth counters of a PyTorch (Kineto) trace, at
exact times: ``get_memory_bw_time_series`` and ``get_memory_bw_summary`` (HTA 0.5 with
``HTA_DISABLE_NS_ROUNDING=1``).

The activity counted is HTA's memory kernels (a name starting ``Memcpy``, ``Memset`` or
``dma``) among :func:`...analysis.gpu_time.device_activity` (what the host launched before
its last ``ProfilerStep#N``, HTA's default). Each has the bandwidth Kineto recorded for it
(its ``memory bandwidth (GB/s)`` arg; 0 where missing) and a memory kind, HTA's prefix of
its name: ``Memcpy HtoD``, ``Memcpy DtoH``, ``Memcpy DtoD``, ... (the first 11 characters),
``Memset``, or ``Memcpy Unknown`` (``dma...``).

A kind's bandwidth at a time is the sum of the bandwidths of its activities running then,
over the host's GPUs together (HTA: over the rank's): the series steps up by an activity's
bandwidth where it starts and down where it ends (a 0 µs activity lasts 1 µs, HTA's rule).
Changes at one time: the ends first, so that activities that merely touch never add up
(HTA leaves such ties as its unstable sort happens to order them).
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd

from ... import schema, stat_columns
from ...analysis.collective_kinds import host_ranks
from ...analysis.event_index import event_plane_rows, times_ps
from ...analysis.gpu_time import device_activity
from ...analysis.memo import per_run
from .hta import _describe, _host_codes, _names
from .schema import MEMORY_BW_SUMMARY, MEMORY_BW_TIME_SERIES

_MEMORY_RE = re.compile(r"^(?:Memcpy|Memset|dma)")
BANDWIDTH_STAT = "memory bandwidth (GB/s)"
# HTA's length of a 0 µs activity (its issue #20: a negative bandwidth otherwise), ps.
_ZERO_DURATION_PS = 1_000_000


def memory_kind(name: str) -> str:
    """HTA's memory kind of a memory activity's name (``get_memory_kernel_type``)."""
    if name[:6] == "Memset":
        return "Memset"
    return name[:11] if name[:6] == "Memcpy" else "Memcpy Unknown"


def _memory_rows(run) -> tuple[np.ndarray, np.ndarray]:
    """The counted memory activity (rows of run.events) and each one's memory kind."""
    rows = device_activity(run)
    names = run.events["name"].array
    cats = pd.Series(np.asarray(names.categories.astype(str), object))
    is_memory = cats.str.match(_MEMORY_RE).to_numpy(bool)
    rows = rows[is_memory[np.asarray(names.codes)[rows]]]
    kinds = np.array([memory_kind(n) for n in _names(run, rows)], object)
    return rows, kinds


@per_run
def memory_bw_time_series(run) -> pd.DataFrame:
    """Each memory kind's bandwidth over time per host (MEMORY_BW_TIME_SERIES), HTA's
    ``get_memory_bw_time_series``: one row per change (an activity starting or ending), in
    time order, with the kind's bandwidth after it; it holds until the next row (kept per
    run: the summary reads it too; not to be changed in place)."""
    rows, kinds = _memory_rows(run)
    if not len(rows):
        return schema.empty(MEMORY_BW_TIME_SERIES)
    n = len(run.events)
    bw, has = stat_columns.floats(run.stat_store, BANDWIDTH_STAT, n)
    bw = np.where(has[rows], bw[rows], 0.0)
    start, end = times_ps(run)
    s = start[rows]
    e = np.where(end[rows] == s, s + _ZERO_DURATION_PS, end[rows])
    host, hosts = _host_codes(run)
    kind_names, kind = np.unique(kinds.astype(str), return_inverse=True)
    key = np.r_[host[rows], host[rows]].astype(np.int64) * len(kind_names) + np.r_[kind, kind]
    t = np.r_[s, e]
    step = np.r_[bw, -bw]
    is_end = np.r_[np.zeros(len(rows), bool), np.ones(len(rows), bool)]
    order = np.lexsort((~is_end, t, key))
    key, t, step = key[order], t[order], step[order]
    plane = np.r_[event_plane_rows(run)[rows], event_plane_rows(run)[rows]][order]
    first = np.flatnonzero(np.r_[True, key[1:] != key[:-1]])
    # Each group's own running sum in order (as HTA's cumsum per kind): not a difference of
    # one running sum over all groups, which would carry the other groups' rounding.
    value = np.empty(len(step))
    for a, b in zip(first, np.r_[first[1:], len(step)]):
        value[a:b] = np.cumsum(step[a:b])
    h = hosts[key // len(kind_names)]
    planes = run.planes["plane"].astype(str).to_numpy(object)
    out = pd.DataFrame(
        {
            "host": pd.Categorical(h),
            "rank": host_ranks(run, h),
            "device": pd.Categorical(planes[plane]),
            "memory_kind": pd.Categorical(kind_names[key % len(kind_names)]),
            "start_us": t / 1e6,
            "memory_bw_gbps": value,
        }
    )
    return schema.conform(out, MEMORY_BW_TIME_SERIES)


def memory_bw_summary(run) -> pd.DataFrame:
    """Per host and memory kind, the statistics of the bandwidth series' values above 0
    (MEMORY_BW_SUMMARY), HTA's ``get_memory_bw_summary`` (pandas' ``describe``): the
    bandwidth while some activity of the kind runs, counted once per change, GB/s."""
    series = memory_bw_time_series(run)
    series = series[series["memory_bw_gbps"].to_numpy() > 0]
    if not len(series):
        return schema.empty(MEMORY_BW_SUMMARY)
    host = series["host"].astype(str).to_numpy(object)
    kind = series["memory_kind"].astype(str).to_numpy(object)
    groups = pd.MultiIndex.from_arrays([host, kind])
    codes, uniques = pd.factorize(groups, sort=True)
    order = np.argsort(codes, kind="stable")
    k = codes[order]
    first = np.flatnonzero(np.r_[True, k[1:] != k[:-1]])
    stats = _describe(series["memory_bw_gbps"].to_numpy()[order], k, first)
    h = np.asarray(uniques.get_level_values(0), object)
    out = pd.DataFrame({"host": pd.Categorical(h), "rank": host_ranks(run, h)})
    out["memory_kind"] = pd.Categorical(np.asarray(uniques.get_level_values(1), object))
    for c, v in stats.items():
        out[c] = v
    return schema.conform(out, MEMORY_BW_SUMMARY)


__all__ = ["memory_bw_summary", "memory_bw_time_series", "memory_kind"]
