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
from ..frameworks import framework_of
from ..stat_store import KIND_CODE
from .memo import tool_data_source

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
    own = framework_of(run).memory_events(run)
    if not own:
        return _xprof_memory_events(run)
    # Without XProf's allocator events ours would be an empty frame, left out below.
    has_ours = run.events["name"].cat.categories.isin(_XPROF_EVENTS).any()
    both = [m for m in ((_xprof_memory_events(run),) if has_ours else ()) + tuple(own) if len(m)]
    if len(both) == 1:
        return both[0]
    return schema.conform(pd.concat(both, ignore_index=True), schema.MEMORY)


_XPROF_EVENTS = ("MemoryAllocation", "MemoryDeallocation")


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
        "data_type": _data_types(dtype_num, framework_of(run).memory_data_type_names()),
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
    present (sorted): ``names`` is the run's frameworks' enum (their
    ``memory_data_type_names`` rule: the primary one's, whose allocators they are; an
    empty name is missing), else TensorFlow's DataType as XProf names it. A number the
    enum lacks stays a number."""
    if names is None:
        names = dict(enumerate(DATA_TYPES))
    used, inverse = np.unique(numbers, return_inverse=True)
    labels = np.array([names.get(u, str(u)) for u in used.tolist()], dtype=object)
    inverse = np.where(labels[inverse] == "", -1, inverse)  # not recorded: missing
    return _sorted_categorical(inverse, labels)


def unrecorded_data_type(run) -> str:
    """What a row with no tensor (the stack, unused preallocated memory) shows as its
    dtype: the framework's name for 0, XProf's "INVALID" for TensorFlow's DataType. A pod's
    slice of one allocator (scale.pod) has no trace to tell the framework: it carries the
    name its host's run gave at conversion (``unrecorded_data_type``)."""
    if not hasattr(run, "events"):
        return getattr(run, "unrecorded_data_type", DATA_TYPES[0])
    names = framework_of(run).memory_data_type_names()
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


def _peak_step(in_use: np.ndarray, group_id: np.ndarray) -> int:
    """Step of the peak: that of the latest event (in time) at the peak usage, as XProf
    picks it (which can differ from the peak event's own step when the peak is reached
    more than once)."""
    return int(group_id[np.flatnonzero(in_use == in_use.max())[-1]])


def memory_summary(run) -> pd.DataFrame:
    """One row per (host, allocator): activity counts, capacity, peaks and when they happened.

    ``peak_in_use_bytes`` is stack + heap at the profile's peak (``peak_time_us``, in the
    profiler's step group ``peak_group_id``, XProf's; :func:`peak_steps` gives the step of
    run.steps, the number the views show); ``peak_bytes_lifetime`` is the allocator's own
    lifetime peak of its heap (allocated bytes; its stack, or reserved bytes, not counted),
    which can predate the capture: the largest reading of that counter in the capture, at
    least the heap of every event. ``peak_bytes_lifetime_xprof`` is XProf's reading of it
    (the last event in file order), which can be lower.
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
                # The allocator's lifetime-peak counter never falls: its largest reading
                # is its latest. XProf keeps the reading of the last event in file order
                # (it walks the host's threads one after another), which on a multi-thread
                # host can be an earlier, lower one (bert_8gpu GPU_4_bfc: 5,006,386,688 B
                # read at 1,802 ms on one thread, 6,208,853,760 B at 1,810 ms on another,
                # below the heap the capture saw).
                int(g["peak_bytes_in_use"].max()),
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


def steps_of_events(run, rows: np.ndarray) -> np.ndarray:
    """The step of run.steps (its ``step``: the numbering every view shows) each of the
    run.events rows ``rows`` (host events: memory allocations, say) belongs to, -1 where
    none does (or the run has no steps, or the row is -1: no event).

    An event the profiler put in a step group belongs to the step of that group (on its
    host). Its time is not compared with the step's span: on a GPU or TPU the steps table
    spans the device's work, while the host already prepares the next step (JAX H100: the
    host's step-9 input transfer at 70.07 ms, while the device still runs step 8 until
    70.73 ms). An event in no group (PyTorch's autograd thread, a JAX runtime thread)
    belongs to the step whose group's host events span its time on its host (the
    backward pass inside ``ProfilerStep#10``), none where no step's do (a step whose
    group has no host events cannot hold it). The memory profile's own ``group_id`` is
    not read: outside the groups it is XProf's "previous group + 1", no step at all."""
    rows = np.asarray(rows, np.int64)
    out = np.full(len(rows), -1, np.int64)
    steps = run.steps
    known = np.flatnonzero(rows >= 0)  # -1: no event (a memory profile read from tool data)
    if not len(steps) or not len(known):
        return out
    if len(known) < len(rows):
        out[known] = steps_of_events(run, rows[known])
        return out
    ev = run.events
    s_host = steps["host"].astype(str).to_numpy(object)
    s_group = steps["group_id"].to_numpy(dtype=float, na_value=np.nan)
    s_step = steps["step"].to_numpy(dtype=float, na_value=np.nan)
    keep = ~np.isnan(s_group) & ~np.isnan(s_step)
    s_host, s_group, s_step = s_host[keep], s_group[keep].astype(np.int64), s_step[keep]
    step_index = pd.MultiIndex.from_arrays([s_host, s_group])
    e_host = _texts_of(ev["host"])
    group = ev["group_id"].to_numpy(dtype=float, na_value=np.nan)
    g = group[rows]
    grouped = ~np.isnan(g)
    at = step_index.get_indexer(
        pd.MultiIndex.from_arrays([e_host[rows][grouped], g[grouped].astype(np.int64)])
    )
    out[np.flatnonzero(grouped)] = np.where(at >= 0, s_step[np.maximum(at, 0)], -1)
    loose = np.flatnonzero(~grouped)
    if not len(loose):
        return out
    # Each step's host span: its group's events on the host planes.
    plane = ev["plane"].array  # by its few names, not per event
    is_host = np.append(np.asarray(plane.categories.astype(str).str.startswith("/host:")), False)
    on_host = is_host[np.asarray(plane.codes)] & ~np.isnan(group)
    idx = np.flatnonzero(on_host)
    at = step_index.get_indexer(pd.MultiIndex.from_arrays([e_host[idx], group[idx].astype(int)]))
    idx, at = idx[at >= 0], at[at >= 0]
    if not len(idx):
        return out
    lo = np.full(len(s_step), np.inf)
    hi = np.full(len(s_step), -np.inf)
    np.minimum.at(lo, at, ev["start_us"].to_numpy(float)[idx])
    np.maximum.at(hi, at, ev["end_us"].to_numpy(float)[idx])
    t, h = ev["start_us"].to_numpy(float)[rows[loose]], e_host[rows[loose]]
    for k in np.flatnonzero(lo <= hi):  # per step, not per event: a capture has few
        hit = (h == s_host[k]) & (lo[k] <= t) & (t <= hi[k])
        out[loose[hit]] = int(s_step[k])  # overlapping spans: the later step wins
    return out


def _texts_of(col: pd.Series) -> np.ndarray:
    """A categorical column as an object array of str, from its categories ("" missing)."""
    names = np.append(np.asarray(col.cat.categories.astype(str), object), "")
    return names[np.asarray(col.array.codes)]


def peak_events(run) -> np.ndarray:
    """The run.events row of each memory_summary row's peak (the event at its
    ``peak_time_us``, XProf's pick among equal peaks), -1 where the summary comes from tool
    data (no trace)."""
    summary, memory = run.memory_summary, run.memory
    out = np.full(len(summary), -1, np.int64)
    if tool_data_source(run) is not None or not len(summary):
        return out
    for i, (h, a) in enumerate(zip(summary["host"].tolist(), summary["allocator"].tolist())):
        sel = np.flatnonzero(_equals(memory["host"], h) & _equals(memory["allocator"], a))
        if len(sel):
            p = _peak_position(
                memory["in_use_bytes"].to_numpy()[sel], memory["event"].to_numpy()[sel]
            )
            out[i] = int(memory["event"].to_numpy()[sel][p])
    return out


def peak_steps(run) -> np.ndarray:
    """The step of run.steps each memory_summary row's peak is in (:func:`steps_of_events`
    of :func:`peak_events`), -1 where none is (or the run has no steps or no trace)."""
    ev = peak_events(run)
    out = np.full(len(ev), -1, np.int64)
    has = ev >= 0
    out[has] = steps_of_events(run, ev[has])
    return out


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
    rows = np.flatnonzero(
        _equals(memory["host"], s["host"]) & _equals(memory["allocator"], allocator)
    )
    col = {c: memory[c].to_numpy()[rows] for c in _LIVE_INPUTS}
    live, unmapped = _live_at_peak(col, int(s["peak_group_id"]), int(s["peak_heap_bytes"]))
    # The live allocations' columns, text as str with missing values as "".
    picked = {c: memory[c].to_numpy()[rows[live]] for c in _BREAKDOWN_ITEM[:2]}
    picked.update({c: _texts(memory[c], rows[live]) for c in _BREAKDOWN_ITEM[2:]})
    items = [picked]
    for name, nbytes, region in (
        ("unused preallocated device memory", unmapped, "persist/dynamic"),
        ("stack", int(s["peak_stack_bytes"]), "stack"),
    ):
        if nbytes > 0:
            items.append(
                {
                    "allocation_bytes": [nbytes],
                    "requested_bytes": [nbytes],
                    "tf_op": [name],
                    "region_type": [region],
                    "data_type": [unrecorded_data_type(run)],
                    "tensor_shape": ["unknown"],
                }
            )
    cols = [
        np.concatenate([np.asarray(i[c], object if k >= 2 else np.int64) for i in items])
        for k, c in enumerate(_BREAKDOWN_ITEM)
    ]
    out = _merged_identical(cols)
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


def _merged_identical(cols: list[np.ndarray]) -> pd.DataFrame:
    """Rows of the breakdown's columns (:data:`_BREAKDOWN_ITEM`: two byte counts, then
    texts) with identical ones merged (``occurrences``), the most bytes allocated, then
    requested first, then by the texts."""
    texts = [np.unique(c.astype(str), return_inverse=True) for c in cols[2:]]
    order = np.lexsort([t[1] for t in texts[::-1]] + [-cols[1], -cols[0]])
    key = np.stack([-cols[0], -cols[1], *[t[1] for t in texts]])[:, order]
    first = (
        np.flatnonzero(np.r_[True, (key[:, 1:] != key[:, :-1]).any(axis=0)])
        if len(order)
        else order
    )
    keep = order[first]
    out = {c: v[keep] for c, v in zip(_BREAKDOWN_ITEM[:2], cols)}
    out.update({c: u[i[keep]] for c, (u, i) in zip(_BREAKDOWN_ITEM[2:], texts)})
    out["occurrences"] = np.diff(np.r_[first, len(order)]).astype(np.int64)
    return pd.DataFrame(out)


_LIVE_INPUTS = (
    "time_us",
    "group_id",
    "activity",
    "address",
    "allocation_bytes",
    "in_use_bytes",
    "event",
)


def _equals(col: pd.Series, value) -> np.ndarray:
    """Rows of a (categorical) column equal to ``value``, by its code where it is one."""
    if isinstance(col.dtype, pd.CategoricalDtype):
        at = col.cat.categories.get_indexer([value])[0]
        return np.asarray(col.array.codes) == at if at >= 0 else np.zeros(len(col), bool)
    return (col == value).to_numpy(dtype=bool)


def _texts(col: pd.Series, rows: np.ndarray) -> np.ndarray:
    """A text column's values at ``rows`` as str, a missing one as ""."""
    if isinstance(col.dtype, pd.CategoricalDtype):
        names = np.append(np.asarray(col.cat.categories.astype(str), object), "")
        return names[np.asarray(col.array.codes)[rows]]
    v = col.to_numpy(dtype=object)[rows]
    return np.where(pd.isna(v), "", v).astype(str).astype(object)


def _live_at_peak(g: dict[str, np.ndarray], step: int, peak_heap: int) -> tuple[np.ndarray, int]:
    """XProf's accounting of the peak step's activity up to the peak, in time order (one
    allocator's columns of run.memory, ``g``): the positions of the allocations still live at
    the peak, and the heap none of them accounts for.

    XProf walks the events keeping the live allocations by address: an allocation takes its
    address (and its bytes leave the unaccounted heap), a free gives its bytes back and
    releases its address, or, where no allocation holds the address, its bytes are
    unaccounted frees. So an allocation is live when it is the last event at its address,
    and a free matched one when the event before it at its address is an allocation."""
    t = g["time_us"]
    peak_t = t[_peak_position(g["in_use_bytes"], g["event"])]
    upto = int(np.searchsorted(t, peak_t, side="right"))
    rows = np.flatnonzero(g["group_id"][:upto] == step)
    if not len(rows):
        return rows, peak_heap
    is_alloc = g["activity"][rows] == "ALLOCATION"
    addr, nbytes = g["address"][rows], g["allocation_bytes"][rows]
    order = np.lexsort((np.arange(len(rows)), addr))  # by address, then time
    a, alloc = addr[order], is_alloc[order]
    same = a[1:] == a[:-1]
    last_at_address = np.r_[~same, True]
    freed_live = np.r_[False, same & alloc[:-1]]  # a free whose address an allocation holds
    live = rows[order[last_at_address & alloc]]
    unmatched_free = nbytes[order][~alloc & ~freed_live].sum()
    unmapped = peak_heap - nbytes[is_alloc].sum() + nbytes[~is_alloc].sum() - unmatched_free
    return np.sort(live), int(unmapped)


__all__ = [
    "DATA_TYPES",
    "memory_breakdown",
    "memory_events",
    "memory_summary",
    "peak_events",
    "peak_steps",
    "steps_of_events",
]
