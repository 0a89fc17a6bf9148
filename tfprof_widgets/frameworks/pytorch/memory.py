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

An event whose Bytes is past ±2^50 or whose totals are negative or past 2^50 cannot be real
and is left out with a warning; a running sum past 2^62 is capped there with a warning.
Neither ever wraps.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd

from ... import schema, stat_columns
from ...analysis.nesting import stack_nesting
from .names import OPERATOR, event_types

MEMORY_EVENT = "[memory]"
# One allocation or total past this cannot be real (a pebibyte; devices hold under 2^38).
MAX_BYTES = 2**50
_MAX_RUNNING = float(2**62)
_DEVICE_NAMES = {0: "CPU", 1: "GPU"}


def _allocators(dtype: np.ndarray, dev: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each event's allocator as a code into the allocators' names, sorted."""
    order = np.lexsort((dev, dtype))
    t, d = dtype[order], dev[order]
    first = np.r_[True, (t[1:] != t[:-1]) | (d[1:] != d[:-1])] if len(t) else np.zeros(0, bool)
    pair = np.empty(len(t), np.int64)
    pair[order] = np.cumsum(first) - 1
    names = [
        kind if kind == "CPU" else f"{kind}:{d}"
        for kind, d in (
            (_DEVICE_NAMES.get(t, str(t)), d) for t, d in zip(t[first].tolist(), d[first].tolist())
        )
    ]
    ranks = _ranks(np.array(names, object))
    return ranks[pair], np.array(sorted(names), object)


def _ranks(values: np.ndarray) -> np.ndarray:
    """Each value's rank in sorted order."""
    ranks = np.empty(len(values), np.int64)
    ranks[np.argsort(values, kind="stable")] = np.arange(len(values))
    return ranks


def _enclosing_ops(run, rows: np.ndarray) -> np.ndarray:
    """Per memory event: the innermost operator around it on its line, as the code of its
    name (:func:`_no_op` where none)."""
    ev = run.events
    ops = np.flatnonzero(event_types(run) == OPERATOR)
    both = np.concatenate([ops, rows])
    line = np.asarray(run.event_line_rows)[both]
    start = np.round(ev["start_us"].to_numpy()[both] * 1e6).astype(np.int64)
    end = np.round(ev["end_us"].to_numpy()[both] * 1e6).astype(np.int64)
    order = np.lexsort((np.r_[np.zeros(len(ops)), np.ones(len(rows))], -end, start, line))
    _, parent = stack_nesting(line[order], start[order], end[order])
    inv = np.empty(len(both), np.int64)
    inv[order] = np.arange(len(both))
    par = parent[inv[len(ops) :]]
    # Codes into the names' categories; len(categories) (''), where no operator encloses it.
    codes = np.append(np.asarray(ev["name"].array.codes, np.int64)[both[order]], _no_op(run))
    return codes[np.where(par >= 0, par, -1)]


def _no_op(run) -> int:
    """The code of '' in :func:`_enclosing_ops`' codes: one past the names' categories."""
    return len(run.events["name"].cat.categories)


def _categorical(codes: np.ndarray, names: np.ndarray) -> pd.Categorical:
    """Codes into ``names`` (str; -1: missing) as a categorical of the names used, sorted:
    what ``astype("category")`` makes of the texts, without a Python string per row."""
    used = np.unique(codes[codes >= 0])
    distinct, inverse = np.unique(names[used], return_inverse=True)
    remap = np.full(len(names) + 1, -1, np.int64)
    remap[used] = inverse.reshape(-1)
    dtype = pd.CategoricalDtype(pd.Index(distinct.tolist()))
    return pd.Categorical.from_codes(remap[codes], dtype=dtype, validate=False)


def memory_events(run) -> pd.DataFrame | None:
    """The ``[memory]`` events as rows of schema.MEMORY (None where the run has none)."""
    ev = run.events
    cats = ev["name"].cat.categories
    if MEMORY_EVENT not in cats:
        return None
    code = cats.get_loc(MEMORY_EVENT)
    rows = np.flatnonzero(np.asarray(ev["name"].array.codes) == code)
    n = len(ev)

    def num(name):
        v, has = stat_columns.numbers(run.stat_store, name, n)
        return np.where(has[rows], v[rows], 0)

    size = num("Bytes")
    allocated, reserved = num("Total Allocated"), num("Total Reserved")
    keep = _plausible(run, rows, size, allocated, reserved)
    if not keep.all():
        rows, size, allocated, reserved = rows[keep], size[keep], allocated[keep], reserved[keep]
        if not len(rows):
            return None
    has_total = stat_columns.present(run.stat_store, "Total Allocated", n)[rows]
    alloc_code, alloc_names = _allocators(num("Device Type"), num("Device Id"))
    hosts = ev["host"].array
    host_names = np.asarray(hosts.categories.astype(str), object)
    host_code = _ranks(host_names)[np.asarray(hosts.codes, np.int64)[rows]]
    host_names = np.sort(host_names)
    time_us = ev["start_us"].to_numpy()[rows]
    # By host and allocator (their names), then time.
    order = np.lexsort((time_us, alloc_code, host_code))
    rows, size, allocated, reserved = rows[order], size[order], allocated[order], reserved[order]
    alloc_code, host_code, time_us = alloc_code[order], host_code[order], time_us[order]
    key = host_code * (len(alloc_names) + 1) + alloc_code
    starts = np.flatnonzero(np.r_[True, key[1:] != key[:-1]]) if len(key) else key
    segment = np.repeat(np.arange(len(starts)), np.diff(np.r_[starts, len(key)]))
    if not has_total.all():
        allocated = _running_totals(allocated, size, has_total[order], segment)
        reserved = np.where(has_total[order], reserved, allocated)
    address = num("Addr")[order]
    op = _inherited(_enclosing_ops(run, rows), address, size > 0, segment, _no_op(run))
    group = ev["group_id"].to_numpy(dtype=float, na_value=np.nan)[rows]
    group = np.where(np.isnan(group), -1, group).astype(np.int64)
    blank = _categorical(np.zeros(len(rows), np.int64), np.array([""], object))
    op_names = np.append(np.asarray(ev["name"].cat.categories, object), "")
    out = {
        "host": _categorical(host_code, host_names),
        "allocator": _categorical(alloc_code, alloc_names),
        "time_us": time_us,
        "activity": _categorical(
            np.where(size > 0, 0, 1), np.array(["ALLOCATION", "DEALLOCATION"], object)
        ),
        "stack_reserved_bytes": np.zeros(len(rows), np.int64),
        "heap_allocated_bytes": allocated,
        "free_memory_bytes": np.maximum(reserved - allocated, 0),
        "in_use_bytes": allocated,
        "fragmentation": np.full(len(rows), np.nan),
        "requested_bytes": np.abs(size),
        "allocation_bytes": np.abs(size),
        "address": address,
        "tf_op": _categorical(op, op_names),
        "group_id": _steps_outside_filled(group, starts),
        "region_type": blank,
        "data_type": blank.copy(),
        "tensor_shape": blank.copy(),
        "event": rows,
        "peak_bytes_in_use": _running_max(allocated, starts),
    }
    return schema.conform(pd.DataFrame({c: out[c] for c in schema.MEMORY}), schema.MEMORY)


def _plausible(run, rows, size, allocated, reserved) -> np.ndarray:
    """Which memory events ``rows`` have sizes that can be real: Bytes within ±MAX_BYTES,
    totals within 0..MAX_BYTES (a double past int64, 1e300, reads as -2^63). The others
    are left out with a warning: summed, they wrapped the running totals."""
    keep = (size >= -MAX_BYTES) & (size <= MAX_BYTES)
    for total in (allocated, reserved):
        keep &= (total >= 0) & (total <= MAX_BYTES)
    if not keep.all():
        bad = rows[~keep]
        hosts = sorted(set(run.events["host"].to_numpy(dtype=object)[bad].astype(str)))
        i = int(np.flatnonzero(~keep)[0])
        warnings.warn(
            f"{', '.join(hosts)}: {len(bad)} {MEMORY_EVENT} event(s) with Bytes, Total "
            f"Allocated or Total Reserved past {MAX_BYTES} bytes (2^50) or negative totals "
            f"left out (the first: Bytes {size[i]}, Total Allocated {allocated[i]})",
            RuntimeWarning,
            stacklevel=4,
        )
    return keep


def _inherited(op, address, is_alloc, segment, none: int) -> np.ndarray:
    """A free takes the op (code) of the last allocation before it at its address on its
    allocator (``segment``: the allocator's number; rows in time order within it), ``none``
    where there is none."""
    if not len(op):
        return op
    order = np.lexsort((np.arange(len(op)), address, segment))
    a, s = address[order], segment[order]
    pos = np.arange(len(order))
    group_start = np.maximum.accumulate(
        np.where(np.r_[True, (a[1:] != a[:-1]) | (s[1:] != s[:-1])], pos, 0)
    )
    last_alloc = np.maximum.accumulate(np.where(is_alloc[order], pos, -1))
    source = np.where(last_alloc >= group_start, last_alloc, -1)
    inherited = np.empty(len(op), np.int64)
    inherited[order] = np.append(op[order], none)[source]
    return np.where(is_alloc, op, inherited)


def _steps_outside_filled(steps: np.ndarray, starts: np.ndarray) -> np.ndarray:
    """Events outside steps (-1) take their allocator's previous step's group + 1 (0 before
    the first), as XProf numbers them (rows ``starts[i]:starts[i + 1]`` per allocator)."""
    valid = steps >= 0
    last = (
        np.maximum.accumulate(np.where(valid, np.arange(len(steps)), -1)) if len(steps) else steps
    )
    first_of = np.repeat(starts, np.diff(np.r_[starts, len(steps)]))
    prev = np.where(last >= first_of, steps[np.maximum(last, 0)], -1)
    return np.where(valid, steps, prev + 1).astype(np.int64)


def _running_max(values: np.ndarray, starts: np.ndarray) -> np.ndarray:
    """Per allocator (rows ``starts[i]:starts[i + 1]``): the largest value so far."""
    out = np.empty_like(values)
    for a, b in zip(starts.tolist(), np.r_[starts[1:], len(values)].tolist()):
        out[a:b] = np.maximum.accumulate(values[a:b])
    return out


def _running_totals(allocated, size, has_total, segment) -> np.ndarray:
    """Per allocator (``segment``; rows sorted by it, then time): the running sum of the
    sizes, less its lowest point where that is below 0, where the event has no total of its
    own."""
    # Each size is within ±2^50: the sums pass int64 only after 8,192 of the largest. Summed
    # in float first to see whether they can; where not, they are capped, never wrapped.
    fsum = pd.Series(size.astype(float)).groupby(segment, sort=False).cumsum()
    if len(fsum) and float(fsum.abs().max()) >= _MAX_RUNNING:
        flow = fsum.groupby(segment, sort=False).transform("min").clip(upper=0)
        total = (fsum - flow).clip(0, _MAX_RUNNING).to_numpy()
        warnings.warn(
            f"{MEMORY_EVENT} events: the running sum of Bytes passes {_MAX_RUNNING:.0f} bytes "
            "(2^62); memory in use is capped there",
            RuntimeWarning,
            stacklevel=5,
        )
        return np.where(has_total, allocated, total.astype(np.int64))
    running = pd.Series(size).groupby(segment, sort=False).cumsum()
    low = running.groupby(segment, sort=False).transform("min").clip(upper=0)
    return np.where(has_total, allocated, (running - low).to_numpy(np.int64))
