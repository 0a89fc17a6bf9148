"""PyTorch's allocator events (``profile_memory=True``): ``[memory]`` instant events as rows of
``run.memory`` (schema.MEMORY), one allocator per device, so the memory summary, the
breakdown at the peak and the memory timeline view read them as they read TensorFlow's.

Each ``[memory]`` event records one allocation (``Bytes`` > 0) or free (``Bytes`` < 0) at
``Addr`` on a device (``Device Type`` 0: the CPU, 1: a CUDA GPU; ``Device Id``), and the
caching allocator's state after it: ``Total Allocated`` (what tensors hold) and ``Total
Reserved`` (what the allocator took from the device, cached blocks included). As columns:

* ``allocator``: 'GPU:<id>' or 'CPU' (another device type: '<type>:<id>');
* where the events lack Total Allocated (torch 1.9), in use is the running sum of Bytes since
  the capture began, raised so that its lowest point is 0 (memory held before the capture and
  freed during it is not known), and nothing is cached;
* ``heap_allocated_bytes`` = ``in_use_bytes`` = Total Allocated (torch-tb-profiler's
  "Allocated" curve; its peak is tb_plugin's peak memory); ``stack_reserved_bytes`` 0;
  ``free_memory_bytes``: reserved but not allocated (the cache); reserved = heap + free;
* ``requested_bytes`` = ``allocation_bytes`` = abs(Bytes), ``address`` = Addr;
* ``peak_bytes_in_use``: the largest Total Allocated so far in the capture (the allocator's
  lifetime peak is not recorded); ``fragmentation``: NaN (not recorded);
* ``tf_op`` (the op that allocated): the innermost operator around the event on its thread;
  a free takes its allocation's;
* ``group_id``: the step group of the event.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .... import schema, stat_columns
from ...nesting import stack_nesting
from .names import OPERATOR, cat_types

MEMORY_EVENT = "[memory]"
_DEVICE_NAMES = {0: "CPU", 1: "GPU"}


def _allocators(dtype: np.ndarray, dev: np.ndarray) -> np.ndarray:
    names = {}
    for t, d in set(zip(dtype.tolist(), dev.tolist())):
        kind = _DEVICE_NAMES.get(t, str(t))
        names[(t, d)] = kind if kind == "CPU" else f"{kind}:{d}"
    return np.array([names[k] for k in zip(dtype.tolist(), dev.tolist())], dtype=object)


def _enclosing_ops(run, rows: np.ndarray) -> np.ndarray:
    """Per memory event: the name of the innermost operator around it on its line ('')."""
    ev = run.events
    n = len(ev)
    cat = stat_columns.categorical(run.stat_store, "cat", n)
    kind = np.append(cat_types(cat.categories), -1)[np.asarray(cat.codes)]
    ops = np.flatnonzero(kind == OPERATOR)
    both = np.concatenate([ops, rows])
    line = np.asarray(run.event_line_rows)[both]
    start = np.round(ev["start_us"].to_numpy()[both] * 1e6).astype(np.int64)
    end = np.round(ev["end_us"].to_numpy()[both] * 1e6).astype(np.int64)
    order = np.lexsort((np.r_[np.zeros(len(ops)), np.ones(len(rows))], -end, start, line))
    _, parent = stack_nesting(line[order], start[order], end[order])
    inv = np.empty(len(both), np.int64)
    inv[order] = np.arange(len(both))
    par = parent[inv[len(ops) :]]
    names = np.append(ev["name"].to_numpy(dtype=object)[both[order]], "")
    return np.asarray(names[np.where(par >= 0, par, -1)], dtype=object)


def memory_events(run) -> pd.DataFrame | None:
    """The ``[memory]`` events as rows of schema.MEMORY (None where the run has none)."""
    ev = run.events
    cats = ev["name"].cat.categories
    if MEMORY_EVENT not in cats:
        return None
    code = cats.get_loc(MEMORY_EVENT)
    rows = np.flatnonzero(ev["name"].cat.codes.to_numpy() == code)
    n = len(ev)

    def num(name):
        v, has = stat_columns.numbers(run.stat_store, name, n)
        return np.where(has[rows], v[rows], 0)

    size = num("Bytes")
    allocated, reserved = num("Total Allocated"), num("Total Reserved")
    has_total = stat_columns.present(run.stat_store, "Total Allocated", n)[rows]
    allocator = _allocators(num("Device Type"), num("Device Id"))
    host = ev["host"].to_numpy(dtype=object)[rows].astype(str)
    time_us = ev["start_us"].to_numpy()[rows]
    order = np.lexsort((time_us, allocator, host))
    rows, size, allocated, reserved = rows[order], size[order], allocated[order], reserved[order]
    allocator, host, time_us = allocator[order], host[order], time_us[order]
    if not has_total.all():
        allocated = _running_totals(allocated, size, has_total[order], host, allocator)
        reserved = np.where(has_total[order], reserved, allocated)
    op = _inherited(_enclosing_ops(run, rows), num("Addr")[order], size > 0, host, allocator)
    group = ev["group_id"].to_numpy(dtype=float, na_value=np.nan)[rows]
    out = pd.DataFrame(
        {
            "host": host,
            "allocator": allocator,
            "time_us": time_us,
            "activity": np.where(size > 0, "ALLOCATION", "DEALLOCATION"),
            "stack_reserved_bytes": np.zeros(len(rows), np.int64),
            "heap_allocated_bytes": allocated,
            "free_memory_bytes": np.maximum(reserved - allocated, 0),
            "in_use_bytes": allocated,
            "fragmentation": np.full(len(rows), np.nan),
            "requested_bytes": np.abs(size),
            "allocation_bytes": np.abs(size),
            "address": num("Addr")[order],
            "tf_op": op,
            "group_id": np.where(np.isnan(group), -1, group).astype(np.int64),
            "region_type": "",
            "data_type": "",
            "tensor_shape": "",
            "event": rows,
        }
    )
    key = [out["host"], out["allocator"]]
    out["peak_bytes_in_use"] = out.groupby(key)["in_use_bytes"].cummax()
    out["group_id"] = _steps_outside_filled(out["group_id"], key)
    for c in ("host", "allocator", "activity", "tf_op", "region_type", "data_type", "tensor_shape"):
        out[c] = pd.Categorical(out[c].astype(str))
    return schema.conform(out[list(schema.MEMORY)], schema.MEMORY)


def _inherited(op, address, is_alloc, host, allocator) -> np.ndarray:
    """A free takes the op of the last allocation at its address on its allocator."""
    mine = pd.Series(np.where(is_alloc, op, None), dtype=object)
    last = mine.groupby([host, allocator, address], sort=False).ffill()
    return np.where(is_alloc, op, last.fillna("").to_numpy(dtype=object))


def _steps_outside_filled(group: pd.Series, key) -> pd.Series:
    """Events outside steps (-1) take the previous step's group + 1, as XProf numbers them."""
    prev = group.where(group >= 0).groupby(key).ffill()
    filled = np.where(group >= 0, group, np.where(prev.isna(), 0, prev + 1))
    return pd.Series(filled.astype(np.int64), index=group.index)


def _running_totals(allocated, size, has_total, host, allocator) -> np.ndarray:
    """Per allocator (rows sorted by it, then time): the running sum of the sizes, less its
    lowest point where that is below 0, where the event has no total of its own."""
    running = pd.Series(size).groupby([host, allocator], sort=False).cumsum()
    low = running.groupby([host, allocator], sort=False).transform("min").clip(upper=0)
    return np.where(has_total, allocated, (running - low).to_numpy(np.int64))
