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
    """One row per allocator event, ordered by host, allocator and time: schema.MEMORY."""
    ev = run.events
    names = ev["name"].astype(str)
    is_alloc = (names == "MemoryAllocation").to_numpy()
    is_free = (names == "MemoryDeallocation").to_numpy()
    rows = np.flatnonzero(is_alloc | is_free)
    n = len(ev)
    stats = run.stat_store

    def num(name):
        v, has = stat_columns.numbers(stats, name, n)
        return np.where(has, v, 0)[rows]

    def cat(name):
        return np.asarray(stat_columns.categorical(stats, name, n), dtype=object)[rows]

    # Recorded as double or as int64, depending on the allocator.
    frag, _ = stat_columns.floats(stats, "fragmentation", n)
    dtype_num = num("data_type")
    group_stat, has_group = stat_columns.numbers(stats, "group_id", n)
    group = ev["group_id"].to_numpy(dtype=float, na_value=np.nan)
    group_id = np.where(has_group, group_stat, np.where(np.isnan(group), -1, group))[rows]
    allocator = _memory_ids(stats, n)[rows]
    df = pd.DataFrame(
        {
            "host": ev["host"].to_numpy()[rows],
            "allocator": allocator,
            "time_us": ev["start_us"].to_numpy()[rows],
            "activity": np.where(is_alloc[rows], "ALLOCATION", "DEALLOCATION"),
            "stack_reserved_bytes": num("bytes_reserved"),
            "heap_allocated_bytes": num("bytes_allocated"),
            "free_memory_bytes": num("bytes_available"),
            "fragmentation": frag[rows],
            "peak_bytes_in_use": num("peak_bytes_in_use"),
            "requested_bytes": num("requested_bytes"),
            "allocation_bytes": num("allocation_bytes"),
            "address": num("addr"),
            "tf_op": cat("tf_op"),
            "group_id": group_id.astype(np.int64),
            "region_type": cat("region_type"),
            "data_type": [DATA_TYPES[d] if 0 <= d < len(DATA_TYPES) else str(d) for d in dtype_num],
            "tensor_shape": cat("shape"),
            "event": rows,
        }
    )
    df["in_use_bytes"] = df["stack_reserved_bytes"] + df["heap_allocated_bytes"]
    df = df.sort_values(["host", "allocator", "time_us"], kind="stable", ignore_index=True)
    parts = [_fix_metadata(g) for _, g in df.groupby(["host", "allocator"], sort=False)]
    df = pd.concat(parts, ignore_index=True) if parts else df
    out = df[list(schema.MEMORY)]
    for c in ("host", "allocator", "activity", "tf_op", "region_type", "data_type", "tensor_shape"):
        out[c] = out[c].astype("category")
    return out


def _memory_ids(stats, n: int) -> np.ndarray:
    """Each event's memory id, as XProf names allocators: the last of its stats
    ``index_on_host``, ``device_ordinal`` (TPU allocators, named by the number) and
    ``allocator_name``; 'unknown' when it has none (XProf shows an empty name). XProf reads
    the numbers only when stored signed; we read either."""
    out = np.full(n, "unknown", object)
    # Later names win: an event's allocator_name is its id even beside the numbers.
    for name in ("index_on_host", "device_ordinal", "allocator_name"):
        rows = stats.rows(name)
        if not len(rows):
            continue
        kind = rows.kind
        numeric = (kind == KIND_CODE["int"]) | (kind == KIND_CODE["uint"])
        ints = rows.int_value
        number = ints.astype(str).astype(object)
        unsigned = kind == KIND_CODE["uint"]
        number[unsigned] = ints[unsigned].view(np.uint64).astype(str)
        value = np.where(numeric, number, rows.texts_of_rows())
        out[rows.owner] = value
    return out


def _fix_metadata(g: pd.DataFrame) -> pd.DataFrame:
    """Per allocator (rows in time order): group ids outside steps become previous + 1;
    a deallocation takes the op, region, type and shape of the allocation it frees (the
    latest earlier event at its address, when that is an allocation)."""
    g = g.copy()
    steps = g["group_id"].to_numpy()
    valid = steps >= 0
    last = pd.Series(np.where(valid, steps, np.nan)).ffill().fillna(-1).to_numpy()
    g["group_id"] = np.where(valid, steps, last + 1).astype(np.int64)
    order = np.lexsort((np.arange(len(g)), g["address"].to_numpy()))
    addr = g["address"].to_numpy()[order]
    is_alloc = (g["activity"].to_numpy() == "ALLOCATION")[order]
    prev_same = np.r_[False, addr[1:] == addr[:-1]]
    frees = ~is_alloc & prev_same & np.r_[False, is_alloc[:-1]]
    targets, sources = order[frees], order[np.flatnonzero(frees) - 1]
    for c in ("tf_op", "region_type", "data_type", "tensor_shape"):
        values = g[c].to_numpy(dtype=object).copy()
        values[targets] = values[sources]
        g[c] = values
    return g


def _peak_index(g: pd.DataFrame) -> int:
    """Position (in ``g``) of the peak: the event with the most stack + heap in use. Among
    equal peaks the last one in file order (line by line, then time) wins, as in XProf,
    which updates its peak while walking each line in turn; ``event`` has that order."""
    in_use = g["in_use_bytes"].to_numpy()
    tied = np.flatnonzero(in_use == in_use.max())
    return int(tied[np.argmax(g["event"].to_numpy()[tied])])


def _peak_step(g: pd.DataFrame) -> int:
    """Step of the peak: that of the latest event (in time) at the peak usage, as XProf
    picks it (which can differ from the peak event's own step when the peak is reached
    more than once)."""
    in_use = g["in_use_bytes"].to_numpy()
    return int(g["group_id"].to_numpy()[np.flatnonzero(in_use == in_use.max())[-1]])


def memory_summary(run) -> pd.DataFrame:
    """One row per (host, allocator): activity counts, capacity, peaks and when they happened.

    ``peak_in_use_bytes`` is stack + heap at the profile's peak (``peak_time_us``, in step
    ``peak_group_id``); ``peak_bytes_lifetime`` is the allocator's own lifetime peak, which
    can predate the capture.
    """
    memory = run.memory
    rows = []
    for (host, alloc), g in memory.groupby(["host", "allocator"], observed=True, sort=False):
        p = g.iloc[_peak_index(g)]
        rows.append(
            {
                "host": host,
                "allocator": alloc,
                "num_allocations": int((g["activity"] == "ALLOCATION").sum()),
                "num_deallocations": int((g["activity"] == "DEALLOCATION").sum()),
                "memory_capacity_bytes": int(
                    p["stack_reserved_bytes"] + p["heap_allocated_bytes"] + p["free_memory_bytes"]
                ),
                # The allocator's own lifetime peak as its last event (in file order)
                # reports it, as XProf takes it (0 when that event lacks the stat).
                "peak_bytes_lifetime": int(g["peak_bytes_in_use"].iloc[g["event"].argmax()]),
                "peak_in_use_bytes": int(p["in_use_bytes"]),
                "peak_heap_bytes": int(p["heap_allocated_bytes"]),
                "peak_stack_bytes": int(p["stack_reserved_bytes"]),
                "peak_free_bytes": int(p["free_memory_bytes"]),
                "peak_fragmentation": float(p["fragmentation"]),
                "peak_time_us": float(p["time_us"]),
                "peak_group_id": _peak_step(g),
            }
        )
    return schema.conform(
        pd.DataFrame(rows, columns=list(schema.MEMORY_SUMMARY)), schema.MEMORY_SUMMARY
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
                    "data_type": "INVALID",
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
