"""Collective communication on every framework: which device activity is a collective, which
collective it is, and the collectives table (``run.collectives``).

* One rule names a collective library's kernel (:mod:`.collective_kinds`): a device event
  whose name starts with 'nccl' or 'rccl', in any case (NCCL's ``ncclKernel_*``, the
  ``ncclDevKernel_*`` of NCCL 2.19 and later, RCCL's). XProf's ``ClassifyGpuEvent`` takes
  every name starting with 'nccl' as DEVICE_COLLECTIVES, HTA ``^nccl.*Kernel`` as
  COMMUNICATION: this rule holds both. The step breakdown's ``device_collectives``, the GPU
  time's COMMUNICATION kind and HTA's communication/computation overlap all read it.
* A framework adds the collectives it knows otherwise (XLA's collective HLO instructions on
  GPU and TPU) with the ``collective_ops`` hook: the device events, which collective each
  runs, its communicator (a process group, XLA's replica groups), group size and bytes.
* :func:`collectives`: one row per group of instances of one collective op (host, rank,
  device, collective, name, communicator, bytes), with its count, total time and bandwidths
  as nccl-tests defines them (its ``PERFORMANCE.md``): the algorithm bandwidth
  ``algbw = size / time`` and the bus bandwidth ``busbw = algbw * factor``, the factor
  2(n-1)/n for an all-reduce, (n-1)/n for an all-gather, reduce-scatter or all-to-all
  (``size`` their whole buffer: all ranks' parts), 1 for a broadcast, reduce, send/recv or
  collective permute, with n the group's size.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .. import schema
from ..frameworks import framework_of
from ..frameworks.base import name_texts
from .collective_kinds import bus_factor, collective_kernel_flags, collective_kind, host_ranks
from .event_index import (
    event_line_ids,
    event_plane_rows,
    is_derived_line,
    on_device,
    timed,
    times_ps,
)
from .nesting import interval_union

__all__ = ["collective_rows", "collectives", "overlap_table"]


def _device_rows(run) -> np.ndarray:
    """Rows of run.events that are timed activity on a device's own (not derived) lines."""
    own = on_device(run) & timed(run) & ~is_derived_line(event_line_ids(run))
    return np.flatnonzero(own)


def _kernel_instances(run) -> pd.DataFrame:
    """Device events the kernel-name rule finds, with the collective their name says."""
    rows = _device_rows(run)
    names = run.events["name"]
    cats = pd.Series(names.cat.categories)
    flags = collective_kernel_flags(cats)
    codes = names.cat.codes.to_numpy()[rows]
    rows, codes = rows[flags[codes]], codes[flags[codes]]
    kinds = np.array([collective_kind(t) for t in name_texts(cats)], object)
    return pd.DataFrame(
        {
            "row": rows,
            "collective": kinds[codes] if len(kinds) else np.zeros(0, object),
            "name": np.asarray(name_texts(cats), object)[codes] if len(cats) else [],
            "communicator": "",
            "group_size": np.nan,
            "size_bytes": np.nan,
        }
    )


def collective_rows(run) -> pd.DataFrame:
    """Every collective on a device, one row per event: ``row`` (of run.events),
    ``collective``, ``name``, ``communicator``, ``group_size``, ``size_bytes`` (NaN where
    unknown): what the frameworks' ``collective_ops`` say, and the rest of the collective
    kernels by their name."""
    parts = [p for p in framework_of(run).collective_ops(run) if p is not None and len(p)]
    found = pd.concat(parts, ignore_index=True) if parts else None
    base = _kernel_instances(run)
    if found is None:
        return base
    found = found.drop_duplicates("row")
    base = base[~np.isin(base["row"].to_numpy(), found["row"].to_numpy())]
    out = pd.concat([found, base[found.columns]], ignore_index=True)
    return out.sort_values("row", ignore_index=True)


def collectives(run) -> pd.DataFrame:
    """The collectives table (schema.COLLECTIVES): per host, device and collective op (its
    name, communicator and bytes), how often it ran, its device time and bandwidths."""
    inst = collective_rows(run)
    if not len(inst):
        return schema.empty(schema.COLLECTIVES)
    rows = inst["row"].to_numpy(np.int64)
    start, end = times_ps(run)
    ev = run.events
    planes = run.planes["plane"].astype(str).to_numpy(object)
    inst = inst.assign(
        host=np.asarray(ev["host"].astype(str), object)[rows],
        device=planes[event_plane_rows(run)[rows]],
        dur_us=(end[rows] - start[rows]) / 1e6,
        size_bytes=inst["size_bytes"].astype(np.float64),
        group_size=inst["group_size"].astype(np.float64),
    )
    keys = ["host", "device", "collective", "name", "communicator", "size_bytes"]
    g = inst.groupby(keys, sort=True, dropna=False)
    out = g.agg(
        group_size=("group_size", "first"),
        count=("dur_us", "size"),
        total_time_us=("dur_us", "sum"),
    ).reset_index()
    out["rank"] = host_ranks(run, out["host"].to_numpy())
    with np.errstate(invalid="ignore", divide="ignore"):
        moved = out["size_bytes"].to_numpy() * out["count"].to_numpy()
        time = out["total_time_us"].to_numpy()
        # bytes per µs is MB/s: / 1e3 for GB/s; no figure without bytes or time.
        algbw = np.where((moved > 0) & (time > 0), moved / time / 1e3, np.nan)
    out["algbw_gbps"] = algbw
    out["busbw_gbps"] = algbw * bus_factor(out["collective"].to_numpy(), out["group_size"])
    out["group_size"] = pd.array(out["group_size"].to_numpy(), dtype="Float64").astype("Int64")
    out = out.sort_values(["host", "device", "total_time_us"], ascending=[True, True, False])
    return schema.conform(out.reset_index(drop=True), schema.COLLECTIVES)


def overlap_table(
    run, host: np.ndarray, hosts: np.ndarray, comp: np.ndarray, comm: np.ndarray, report=None
) -> pd.DataFrame:
    """HTA's communication/computation overlap per host (schema.COMM_COMP_OVERLAP): of the
    time some of the communication rows ``comm`` of run.events run, the share during which
    some of the computation rows ``comp`` run too. ``host``: each event's host code, ``hosts``
    the names by code; ``report``: the host codes to give a row (default: those with any of
    either), NaN where a host has no communication."""
    start, end = times_ps(run)
    if report is None:
        report = np.unique(np.r_[host[comp], host[comm]])
    out = []
    for h in report:
        c, m = comp[host[comp] == h], comm[host[comm] == h]
        both = np.r_[c, m]
        a, b = _covered(start[c], end[c]), _covered(start[m], end[m])
        out.append((hosts[h], b / 1e6, (a + b - _covered(start[both], end[both])) / 1e6))
    df = pd.DataFrame(out, columns=["host", "communication_us", "overlap_us"])
    df["rank"] = host_ranks(run, df["host"].to_numpy())
    with np.errstate(invalid="ignore", divide="ignore"):
        df["comp_comm_overlap_percent"] = 100 * df["overlap_us"] / df["communication_us"]
    df["host"] = pd.Categorical(df["host"])
    return schema.conform(df, schema.COMM_COMP_OVERLAP)


def _covered(start: np.ndarray, end: np.ndarray) -> int:
    """Time (ps) some of these intervals cover."""
    s, e = interval_union(start, end)
    return int((e - s).sum())
