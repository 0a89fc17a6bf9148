"""The memory profile: allocator activity over time, its peak, and what was live at the peak.

TensorFlow's allocators emit a ``MemoryAllocation``/``MemoryDeallocation`` event for every
allocation and free, with the allocator's state after it: ``bytes_reserved`` (stack),
``bytes_allocated`` (heap), ``bytes_available`` (free), ``fragmentation``,
``peak_bytes_in_use``, and the allocation itself (``requested_bytes``, ``allocation_bytes``,
``addr``, ``tf_op``, ``region_type``, ``data_type``, ``shape``). These functions follow
XProf's memory-profile tool: the peak is the last event at which stack + heap reached its
maximum, and the breakdown at the peak lists the peak step's live allocations plus the
heap that no allocation of that step accounts for ("unused preallocated device memory").
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .. import schema, stat_columns
from ..stat_store import KIND_CODE
from .frameworks import framework_of
from .inputs import tool_data_source

# TensorFlow DataType enum -> the name XProf shows (DataTypeString).
DATA_TYPES = [
    "INVALID",
    "float",
    "double",
    "int32",
    "uint8",
    "int16",
    "int8",
    "string",
    "complex64",
    "int64",
    "bool",
    "qint8",
    "quint8",
    "qint32",
    "bfloat16",
    "qint16",
    "quint16",
    "uint16",
    "complex128",
    "half",
    "resource",
    "variant",
    "uint32",
    "uint64",
    "float8_e5m2",
    "float8_e4m3fn",
    "int4",
    "uint4",
]


def memory_events(run) -> pd.DataFrame:
    """One row per allocator event, ordered by host, allocator and time: schema.MEMORY; a
    framework's own allocator events (its ``memory_events`` rule) follow XProf's."""
    ours = _xprof_memory_events(run)
    own = framework_of(run).memory_events(run)
    if not own:
        return ours
    both = [m for m in (ours, *own) if len(m)]
    if len(both) == 1:
        return both[0]
    return schema.conform(pd.concat(both, ignore_index=True), schema.MEMORY)


def _xprof_memory_events(run) -> pd.DataFrame:
    ev = run.events
    names = ev["name"].array
    cats = names.categories
    codes = np.asarray(names.codes)
    is_alloc = np.asarray(cats == "MemoryAllocation")[codes]
    rows = np.flatnonzero(is_alloc | np.asarray(cats == "MemoryDeallocation")[codes])
    n = len(ev)
    stats = run.stat_store

    def num(name):
        v, has = stat_columns.numbers(stats, name, n)
        return np.where(has[rows], v[rows], 0)

    def text(name):
        """The string stat ``name`` of each row: codes into its distinct values."""
        found = stats.rows(name)
        out = np.full(len(rows), -1, np.int64)
        values = found.str_value
        at, hit = _positions(rows, found.owner)
        out[at[hit]] = np.asarray(values.codes, np.int64)[hit]
        return out, np.asarray(values.categories, object)

    # Recorded as double or as int64, depending on the allocator.
    frag, _ = stat_columns.floats(stats, "fragmentation", n)
    group_stat, has_group = stat_columns.numbers(stats, "group_id", n)
    group = ev["group_id"].to_numpy(dtype=float, na_value=np.nan)[rows]
    group_id = np.where(has_group[rows], group_stat[rows], np.where(np.isnan(group), -1, group))
    allocator = _memory_ids(stats, rows)
    host = ev["host"].array
    host_names = np.asarray(host.categories.astype(str), object)
    host_code = np.asarray(host.codes, np.int64)[rows]
    alloc_code, alloc_names = pd.factorize(allocator)
    alloc_names = np.asarray(alloc_names, object)
    time_us = ev["start_us"].to_numpy()[rows]
    # Ordered by host, allocator (their names) and time.
    order = np.lexsort((time_us, _ranks(alloc_names)[alloc_code], _ranks(host_names)[host_code]))
    is_alloc = is_alloc[rows][order]
    host_code, alloc_code = host_code[order], alloc_code[order]
    key = host_code * (len(alloc_names) + 1) + alloc_code
    starts = np.flatnonzero(np.r_[True, key[1:] != key[:-1]])
    allocator_of = np.repeat(np.arange(len(starts)), np.diff(np.r_[starts, len(key)]))
    tf_op, tf_ops = text("tf_op")
    region, regions = text("region_type")
    shape, shapes = text("shape")
    dtype_num = num("data_type")
    metadata = [tf_op, region, dtype_num, shape]
    metadata = [m[order] for m in metadata]
    _inherit_metadata(allocator_of, num("addr")[order], is_alloc, metadata)
    tf_op, region, dtype_num, shape = metadata
    stack = num("bytes_reserved")[order]
    heap = num("bytes_allocated")[order]
    out = {
        "host": _sorted_categorical(host_code, host_names),
        "allocator": _sorted_categorical(alloc_code, alloc_names),
        "time_us": time_us[order],
        "activity": _activity(is_alloc),
        "stack_reserved_bytes": stack,
        "heap_allocated_bytes": heap,
        "free_memory_bytes": num("bytes_available")[order],
        "in_use_bytes": stack + heap,
        "fragmentation": frag[rows][order],
        "peak_bytes_in_use": num("peak_bytes_in_use")[order],
        "requested_bytes": num("requested_bytes")[order],
        "allocation_bytes": num("allocation_bytes")[order],
        "address": num("addr")[order],
        "tf_op": _sorted_categorical(tf_op, tf_ops),
        "group_id": _steps_outside_filled(group_id[order].astype(np.int64), starts),
        "region_type": _sorted_categorical(region, regions),
        "data_type": _data_types(dtype_num, framework_of(run).primary.memory_data_type_names()),
        "tensor_shape": _sorted_categorical(shape, shapes),
        "event": rows[order],
    }
    return pd.DataFrame({c: out[c] for c in schema.MEMORY})


def _positions(rows: np.ndarray, owners: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Where each owner is among the sorted ``rows``, and whether it is there."""
    at = np.searchsorted(rows, owners)
    inside = np.minimum(at, max(len(rows) - 1, 0))
    hit = (at < len(rows)) & (rows[inside] == owners) if len(rows) else at < 0
    return inside, hit


def _activity(is_alloc: np.ndarray) -> pd.Categorical:
    """'ALLOCATION' / 'DEALLOCATION' as a categorical of the ones present."""
    present = [
        a for a, p in (("ALLOCATION", is_alloc.any()), ("DEALLOCATION", (~is_alloc).any())) if p
    ]
    if len(present) < 2:
        return pd.Categorical(np.where(is_alloc, "ALLOCATION", "DEALLOCATION"))
    return pd.Categorical.from_codes(np.where(is_alloc, 0, 1), categories=pd.Index(present))


def _ranks(values: np.ndarray) -> np.ndarray:
    """Each value's rank in sorted order."""
    ranks = np.empty(len(values), np.int64)
    ranks[np.argsort(values, kind="stable")] = np.arange(len(values))
    return ranks


def _sorted_categorical(codes: np.ndarray, values: np.ndarray) -> pd.Categorical:
    """Codes into ``values`` as a categorical of the values used, sorted (-1: missing)."""
    used = np.unique(codes[codes >= 0])
    cats = np.asarray(values, object)[used]
    order = np.argsort(cats.astype(str), kind="stable") if len(cats) else used
    remap = np.full(len(values) + 1, -1, np.int64)
    remap[used[order]] = np.arange(len(used))
    return pd.Categorical.from_codes(remap[codes], categories=pd.Index(list(cats[order])))


def _data_types(numbers: np.ndarray, names: dict[int, str] | None = None) -> pd.Categorical:
    """The allocator events' ``data_type`` numbers by name, a categorical of the names
    present (sorted): ``names`` is the run's primary framework's enum (its
    ``memory_data_type_names`` rule: the allocators are its own; an empty name is
    missing), else TensorFlow's DataType as XProf names it. A number the enum lacks stays
    a number."""
    if names is None:
        names = dict(enumerate(DATA_TYPES))
    used, inverse = np.unique(numbers, return_inverse=True)
    labels = np.array([names.get(u, str(u)) for u in used.tolist()], dtype=object)
    inverse = np.where(labels[inverse] == "", -1, inverse)  # not recorded: missing
    return _sorted_categorical(inverse, labels)


def _unrecorded_type(run) -> str:
    """What a row with no tensor (the stack, unused preallocated memory) shows as its
    dtype: the framework's name for 0, XProf's "INVALID" for TensorFlow's DataType."""
    if not hasattr(run, "events"):  # a pod's slice of one allocator (scale.pod): no trace
        return DATA_TYPES[0]
    names = framework_of(run).primary.memory_data_type_names()
    return DATA_TYPES[0] if names is None else names.get(0, DATA_TYPES[0])


def _steps_outside_filled(steps: np.ndarray, starts: np.ndarray) -> np.ndarray:
    """Per allocator (rows ``starts[i]:starts[i + 1]``, in time order), a group id outside
    any step (-1) becomes the allocator's previous valid one + 1 (0 before the first)."""
    valid = steps >= 0
    idx = np.where(valid, np.arange(len(steps)), -1)
    last = np.maximum.accumulate(idx) if len(idx) else idx
    first_of = np.repeat(starts, np.diff(np.r_[starts, len(steps)]))
    prev = np.where(last >= first_of, steps[np.maximum(last, 0)], -1)
    return np.where(valid, steps, prev + 1).astype(np.int64)


def _inherit_metadata(allocator_of, address, is_alloc, columns) -> None:
    """A deallocation takes the op, region, type and shape of the allocation it frees (the
    latest earlier event of its allocator at its address, when that is an allocation), in
    place in ``columns``."""
    order = np.lexsort((np.arange(len(address)), address, allocator_of))
    same = np.r_[
        False,
        (address[order][1:] == address[order][:-1])
        & (allocator_of[order][1:] == allocator_of[order][:-1]),
    ]
    alloc = is_alloc[order]
    frees = ~alloc & same & np.r_[False, alloc[:-1]]
    targets, sources = order[frees], order[np.flatnonzero(frees) - 1]
    for c in columns:
        c[targets] = c[sources]


def _memory_ids(stats, rows: np.ndarray) -> np.ndarray:
    """The memory id of each of the events ``rows``, as XProf names allocators: the last of
    its stats ``index_on_host``, ``device_ordinal`` (TPU allocators, named by the number) and
    ``allocator_name``; 'unknown' when it has none (XProf shows an empty name). XProf reads
    the numbers only when stored signed; we read either."""
    out = np.full(len(rows), "unknown", object)
    # Later names win: an event's allocator_name is its id even beside the numbers.
    for name in ("index_on_host", "device_ordinal", "allocator_name"):
        found = stats.rows(name)
        if not len(found):
            continue
        at, hit = _positions(rows, found.owner)
        if not hit.any():
            continue
        kind = found.kind[hit]
        numeric = (kind == KIND_CODE["int"]) | (kind == KIND_CODE["uint"])
        ints = found.int_value[hit]
        number = ints.astype(str).astype(object)
        unsigned = kind == KIND_CODE["uint"]
        number[unsigned] = ints[unsigned].view(np.uint64).astype(str)
        out[at[hit]] = np.where(numeric, number, found.texts_of_rows()[hit])
    return out


def _peak_position(in_use: np.ndarray, event: np.ndarray) -> int:
    """Position of the peak: the event with the most stack + heap in use. Among equal peaks
    the last one in file order (line by line, then time) wins, as in XProf, which updates
    its peak while walking each line in turn; ``event`` has that order."""
    tied = np.flatnonzero(in_use == in_use.max())
    return int(tied[np.argmax(event[tied])])


def _peak_index(g: pd.DataFrame) -> int:
    """:func:`_peak_position` of one allocator's rows of run.memory."""
    return _peak_position(g["in_use_bytes"].to_numpy(), g["event"].to_numpy())


def _peak_step(in_use: np.ndarray, group_id: np.ndarray) -> int:
    """Step of the peak: that of the latest event (in time) at the peak usage, as XProf
    picks it (which can differ from the peak event's own step when the peak is reached
    more than once)."""
    return int(group_id[np.flatnonzero(in_use == in_use.max())[-1]])


def memory_summary(run) -> pd.DataFrame:
    """One row per (host, allocator): activity counts, capacity, peaks and when they happened.

    ``peak_in_use_bytes`` is stack + heap at the profile's peak (``peak_time_us``, in step
    ``peak_group_id``); ``peak_bytes_lifetime`` is the allocator's own lifetime peak, which
    can predate the capture.
    """
    memory = run.memory
    c = {k: memory[k].to_numpy() for k in _SUMMARY_INPUTS}
    host, alloc = memory["host"].array, memory["allocator"].array
    # Rows are sorted by host and allocator: each allocator is one run of rows.
    key = np.asarray(host.codes, np.int64) * (len(alloc.categories) + 1) + np.asarray(alloc.codes)
    starts = np.flatnonzero(np.r_[True, key[1:] != key[:-1]]) if len(key) else key
    is_alloc = (memory["activity"] == "ALLOCATION").to_numpy()
    rows = []
    for a, b in zip(starts.tolist(), np.r_[starts[1:], len(key)].tolist()):
        g = {k: v[a:b] for k, v in c.items()}
        p = _peak_position(g["in_use_bytes"], g["event"])
        allocs = int(is_alloc[a:b].sum())
        rows.append(
            (
                str(host[a]),
                str(alloc[a]),
                allocs,
                b - a - allocs,
                int(g["stack_reserved_bytes"][p] + g["heap_allocated_bytes"][p])
                + int(g["free_memory_bytes"][p]),
                # The allocator's own lifetime peak as its last event (in file order)
                # reports it, as XProf takes it (0 when that event lacks the stat).
                int(g["peak_bytes_in_use"][int(np.argmax(g["event"]))]),
                int(g["in_use_bytes"][p]),
                int(g["heap_allocated_bytes"][p]),
                int(g["stack_reserved_bytes"][p]),
                int(g["free_memory_bytes"][p]),
                float(g["fragmentation"][p]),
                float(g["time_us"][p]),
                _peak_step(g["in_use_bytes"], g["group_id"]),
            )
        )
    return schema.conform(
        pd.DataFrame(rows, columns=list(schema.MEMORY_SUMMARY)), schema.MEMORY_SUMMARY
    )


_SUMMARY_INPUTS = (
    "in_use_bytes",
    "event",
    "stack_reserved_bytes",
    "heap_allocated_bytes",
    "free_memory_bytes",
    "peak_bytes_in_use",
    "fragmentation",
    "time_us",
    "group_id",
)


def memory_breakdown(run, allocator: str | None = None, host: str | None = None) -> pd.DataFrame:
    """What was live at the peak of one allocator (default: the one with the largest peak).

    Rows, largest first (columns: schema.MEMORY_BREAKDOWN): allocations of the peak step
    made before the peak and not freed by then (identical ones merged, ``occurrences``), plus
    'unused preallocated device memory' (heap no such allocation accounts for) and 'stack'
    (reserved bytes).
    """
    td = tool_data_source(run)
    if td is not None:  # a run without a trace: TensorBoard's own breakdown
        return td.memory_breakdown(allocator, host)
    memory, summary = run.memory, run.memory_summary
    if not len(summary):
        return schema.empty(schema.MEMORY_BREAKDOWN)
    if allocator is None:
        pick = summary.sort_values("peak_in_use_bytes", ascending=False).iloc[0]
        host, allocator = pick["host"], pick["allocator"]
    sel = summary[
        (summary["allocator"] == allocator)
        & ((summary["host"] == host) if host is not None else True)
    ]
    if not len(sel):
        raise KeyError(f"no allocator {allocator!r}" + (f" on host {host!r}" if host else ""))
    s = sel.iloc[0]
    g = memory[(memory["host"] == s["host"]) & (memory["allocator"] == allocator)]
    g = g.reset_index(drop=True)
    live, unmapped = _live_at_peak(g, int(s["peak_group_id"]), int(s["peak_heap_bytes"]))
    picked = g.loc[live, _BREAKDOWN_ITEM]
    items = [
        {c: ("" if pd.isna(v) else v) for c, v in zip(_BREAKDOWN_ITEM, row)}
        for row in picked.itertuples(index=False)
    ]
    for name, nbytes, region in (
        ("unused preallocated device memory", unmapped, "persist/dynamic"),
        ("stack", int(s["peak_stack_bytes"]), "stack"),
    ):
        if nbytes > 0:
            items.append(
                {
                    "allocation_bytes": nbytes,
                    "requested_bytes": nbytes,
                    "tf_op": name,
                    "region_type": region,
                    "data_type": _unrecorded_type(run),
                    "tensor_shape": "unknown",
                }
            )
    df = pd.DataFrame(items, columns=_BREAKDOWN_ITEM)
    for c in _BREAKDOWN_ITEM[2:]:
        df[c] = df[c].astype(str)
    out = df.groupby(_BREAKDOWN_ITEM, sort=False).size().rename("occurrences").reset_index()
    out = out.sort_values(
        _BREAKDOWN_ITEM, ascending=[False, False, True, True, True, True], ignore_index=True
    )
    out["group_id"] = int(s["peak_group_id"])
    return schema.conform(out, schema.MEMORY_BREAKDOWN)


_BREAKDOWN_ITEM = [
    "allocation_bytes",
    "requested_bytes",
    "tf_op",
    "region_type",
    "data_type",
    "tensor_shape",
]


def _live_at_peak(g: pd.DataFrame, step: int, peak_heap: int) -> tuple[list[int], int]:
    """XProf's accounting of the peak step's activity up to the peak, in time order: the rows
    of the allocations still live at the peak, and the heap none of them accounts for."""
    peak_t = g["time_us"].iloc[_peak_index(g)]
    upto = g.iloc[: int(np.searchsorted(g["time_us"].to_numpy(), peak_t, side="right"))]
    upto = upto[upto["group_id"].to_numpy() == step]
    unmapped = peak_heap
    unmapped_free = 0
    live: dict[int, int] = {}
    for i, act, addr, nbytes in zip(
        upto.index,
        upto["activity"].to_numpy(),
        upto["address"].to_numpy(),
        upto["allocation_bytes"].to_numpy(),
    ):
        if act == "ALLOCATION":
            live[addr] = i
            unmapped -= nbytes
        else:
            if addr in live:
                del live[addr]
            else:
                unmapped_free += nbytes
            unmapped += nbytes
    return list(live.values()), unmapped - unmapped_free


__all__ = ["DATA_TYPES", "memory_breakdown", "memory_events", "memory_summary"]
