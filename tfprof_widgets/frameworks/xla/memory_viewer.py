"""XProf's memory viewer: each XLA program's buffers over program order, from the buffer
assignment its HloProto carries; equal to xprof 2.24's ``memory_viewer`` tool on every
program of the bundled XLA captures (tests/xla/test_xla_memory_viewer.py; its C++ is
``xprof/convert/hlo_proto_to_memory_visualization_utils.cc``).

XLA compiles a program into *logical buffers* (one per array an instruction defines; a tuple's
elements each have their own, named by a shape index), packs them into *buffer allocations*
(a parameter, an output, a constant, a thread-local scalar, or the temporary arena the heap
simulator lays out) and records the *heap simulator trace*: in program order, each buffer's
ALLOC, FREE and SHARE_WITH (reusing another buffer's memory in place). XProf replays that
trace for memory space 0 (HBM; XLA's default colour) and reports:

* the heap over program order: before each trace event (its *position*) and after the last,
  the bytes of the simulated buffers then live plus the bytes of the allocations that live
  the whole program (parameters, outputs, constants: *indefinite*; xprof 2.24 leaves
  thread-local allocations out of every number);
* the peak: the most bytes, the position where the heap first reached it, and the buffers
  live then: the largest logical buffer of each indefinite allocation, then the simulated
  buffers live at that position in the order they took memory (xprof's ``maxHeap``; it
  draws those under 16 KiB as one "small" block). Memory shared by several buffers counts
  once and is released when the last of them is freed; memory taken again by a buffer that
  shares a released buffer's place is listed under that buffer;
* each simulated buffer's live range: from its ALLOC to the first release of its memory,
  or, for a buffer that takes a released buffer's memory again, from that SHARE_WITH to its
  own FREE.

A buffer's size is the bytes XLA reserves for it (padded to its layout); the *unpadded* size is
its shape's bytes in the default layout (a tuple: 8 bytes per element, its pointers), as
xprof's unpadded heap counts it.

The buffer assignment is HloProto field 3; ``run.hlo_modules`` keeps only each program's
module (field 1), so the programs' bytes are read again from the run's metadata stats and
field 3 cut out of them, parsed on its own (proto/xla_hlo.proto: ``BufferAssignmentProto``).
The trace is replayed with numpy (reference counts per shared memory by a grouped cumulative
sum), not event by event; the protos are read into arrays with one comprehension per field.
A program without a buffer assignment has no rows (one note in ``run.warnings``); a trace
xprof refuses (a buffer freed twice, SHARE_WITH links in a cycle, a heap below 0, events of
several allocations) keeps the whole-program numbers and says why in ``note``.
"""

from __future__ import annotations

import math
import re

import numpy as np
import pandas as pd

from ... import schema
from ...analysis.memo import per_run
from ...errors import ProfileError
from ...proto import wire, xla_hlo_pb2
from .columns import note_once

__all__ = [
    "NoBufferAssignmentError",
    "hlo_heap_timeline",
    "hlo_memory",
    "hlo_memory_peak",
]

#: xprof's memory_viewer tool: memory space (colour) 0, buffers under 16 KiB drawn as one.
MEMORY_SPACE = 0
SMALL_BUFFER_BYTES = 16 * 1024
_ALLOC, _FREE, _SHARE = 0, 1, 2
_DTYPES = {v.number: v.name.lower() for v in xla_hlo_pb2.PrimitiveType.DESCRIPTOR.values}
_DTYPES[xla_hlo_pb2.TUPLE] = "tuple"
_SHOWN_DIMS = 16  # dimensions a shape's text shows
_MAX_BYTES = (1 << 63) - 1


class NoBufferAssignmentError(ProfileError):
    """The program asked for carries no buffer assignment (or the capture no such program):
    XLA wrote its HloProto without one, so there is nothing to draw."""


def buffer_assignment(data: bytes) -> xla_hlo_pb2.BufferAssignmentProto | None:
    """The buffer assignment (field 3) of a serialized HloProto, None where it has none or
    the bytes are damaged. Only the top-level fields are walked; the module is skipped."""
    i, n, found = 0, len(data), None
    try:
        while i < n:
            tag, i = wire.varint(data, i)
            kind = tag & 7
            if kind == 2:
                size, i = wire.varint(data, i)
                if i + size > n:
                    return None
                if tag >> 3 == 3:
                    found = data[i : i + size]
                i += size
            elif kind == 0:
                _, i = wire.varint(data, i)
            elif kind in (1, 5):
                i += 8 if kind == 1 else 4
            else:
                return None
        if found is None:
            return None
        return xla_hlo_pb2.BufferAssignmentProto.FromString(found)
    except Exception:  # noqa: BLE001 - a damaged program has no buffer assignment to show
        return None


# -- reading one program's buffer assignment into arrays -------------------------------------
def _buffer_arrays(ba) -> dict:
    lbs = ba.logical_buffers
    n = len(lbs)
    out = {
        "id": np.fromiter((b.id for b in lbs), np.int64, n),
        "size": np.fromiter((b.size for b in lbs), np.int64, n),
        "color": np.fromiter((b.color for b in lbs), np.int64, n),
        "instruction_id": np.fromiter((b.defined_at.instruction_id for b in lbs), np.int64, n),
        "shape_index": [tuple(b.defined_at.shape_index) for b in lbs],
    }
    allocs = ba.buffer_allocations
    fields = ("index", "size", "color")
    flags = ("is_entry_computation_parameter", "maybe_live_out", "is_thread_local", "is_constant")
    a = {f: np.fromiter((getattr(x, f) for x in allocs), np.int64, len(allocs)) for f in fields}
    for f in flags:
        a[f] = np.fromiter((getattr(x, f) for x in allocs), bool, len(allocs))
    param, live_out, local, constant = (a[f] for f in flags)
    a["indefinite"] = param | live_out | local | constant
    a["kind"] = np.select(
        [param, live_out, local, constant],
        ["Parameter", "Output", "Thread-local", "Constant"],
        "Temporary",
    ).astype(object)
    # xprof 2.24 leaves thread-local allocations out of a memory space's allocations (its
    # totals and whole-program bytes do not count them): scalars of reduce computations.
    a["shown"] = (a["color"] == MEMORY_SPACE) & ~local
    out["allocations"] = a
    assigned = [(x.index, s.logical_buffer_id, s.offset) for x in allocs for s in x.assigned]
    out["assigned"] = np.array(assigned, np.int64).reshape(-1, 3)
    return out


def _trace_arrays(trace) -> dict:
    ev = trace.events
    n = len(ev)
    return {
        "kind": np.fromiter((e.kind for e in ev), np.int64, n),
        "buffer": np.fromiter((e.buffer_id for e in ev), np.int64, n),
        "canonical": np.fromiter((e.share_with_canonical_id for e in ev), np.int64, n),
        "instruction": [e.instruction_name for e in ev],
    }


def _element_bytes(dtype: str) -> int:
    """XLA's ByteSizeOfPrimitiveType: whole bytes of the width its name gives ('bf16' 2,
    'c64' 8, 'f8e4m3fn' 1; a pred, an s4 or an f4 take one), 0 for tokens and opaque."""
    if dtype == "pred":
        return 1
    m = re.match(r"[a-z]+?(\d+)", dtype)
    return (int(m[1]) + 7) // 8 if m else 0


def _shape(shape) -> tuple[str, str, int]:
    """(text without layout, element type, unpadded bytes) of a ShapeProto: XLA's
    ByteSizeOf in the default layout, a tuple 8 bytes per element (its pointers), 0 for a
    shape no program holds (a dimension below 0, more than 2^63 bytes)."""
    dtype = _DTYPES.get(shape.element_type, str(shape.element_type))
    if dtype == "tuple":
        inner = ", ".join(_shape(t)[0] for t in shape.tuple_shapes[:_SHOWN_DIMS])
        more = ", ..." if len(shape.tuple_shapes) > _SHOWN_DIMS else ""
        return f"({inner}{more})", "tuple", 8 * len(shape.tuple_shapes)
    dims = list(shape.dimensions)
    shown = ",".join(map(str, dims[:_SHOWN_DIMS])) + (",..." if len(dims) > _SHOWN_DIMS else "")
    if dims and min(dims) < 0:
        return f"{dtype}[{shown}]", dtype, 0
    size = math.prod(dims) * _element_bytes(dtype)
    return f"{dtype}[{shown}]", dtype, size if size <= _MAX_BYTES else 0


def _group_cumsum(group: np.ndarray, values: np.ndarray) -> np.ndarray:
    """Running sum of ``values`` within each group, in the order given (stable)."""
    srt = np.argsort(group, kind="stable")
    cs = np.cumsum(values[srt])
    g = group[srt]
    starts = np.r_[True, g[1:] != g[:-1]] if len(g) else np.zeros(0, bool)
    base = np.repeat(np.r_[0, cs][:-1][starts], np.diff(np.r_[np.flatnonzero(starts), len(g)]))
    out = np.empty_like(cs)
    out[srt] = cs - base
    return out


def _roots(parent: np.ndarray) -> np.ndarray | None:
    """Each buffer's canonical buffer (following SHARE_WITH links to the end), None where the
    links form a cycle (no XLA program has one; xprof would recurse forever)."""
    root = parent.copy()
    for _ in range(64):  # pointer jumping: 2^64 links at most
        nxt = root[root]
        if np.array_equal(nxt, root):
            # A cycle's squares can settle on buffers that are not roots.
            return root if np.array_equal(parent[root], root) else None
        root = nxt
    return None


def _pick_trace(ba, bufs: dict, known: np.ndarray, index_of) -> int:
    """The heap simulator trace xprof replays for memory space 0: the one whose first event's
    buffer is in a temporary allocation of that space, else the one with most events of
    buffers of that space; -1 if none."""
    allocs = bufs["allocations"]
    alloc_of = bufs["alloc_of"]
    trace_of_alloc: dict[int, int] = {}
    for i, t in enumerate(ba.heap_simulator_traces):
        if len(t.events):
            k, ok = index_of(np.array([t.events[0].buffer_id]))
            if ok[0] and known[k[0]]:
                trace_of_alloc[int(alloc_of[k[0]])] = i
    temp = allocs["index"][allocs["shown"] & ~allocs["indefinite"]]
    # xprof takes the first such allocation in a hash map's order; programs have one.
    for index in sorted(temp.tolist()):
        if int(index) in trace_of_alloc:
            return trace_of_alloc[int(index)]
    best, best_count = -1, 0
    for i, t in enumerate(ba.heap_simulator_traces):
        k, ok = index_of(np.fromiter((e.buffer_id for e in t.events), np.int64, len(t.events)))
        ok &= known[k]
        count = int((bufs["color"][k[ok]] == MEMORY_SPACE).sum())
        if count > best_count:
            best, best_count = i, count
    return best


def _replay(tr: dict, bufs: dict, known: np.ndarray, index_of) -> dict:
    """The heap simulator trace replayed as xprof's HeapSimulatorStats does, with arrays:
    each event's heap change, the heap after it, the peak, the buffers live at the peak (in
    allocation order) and each buffer's live range. ``{"error": ...}`` where xprof refuses
    the trace (a buffer freed twice, a negative heap, events of several allocations)."""
    n, nb = len(tr["kind"]), len(bufs["id"])
    b, b_ok = index_of(tr["buffer"])
    c, c_ok = index_of(tr["canonical"])
    b_ok &= known[b]
    c_ok &= known[c]
    kind = tr["kind"]
    alloc, free = (kind == _ALLOC) & b_ok, (kind == _FREE) & b_ok
    share = (kind == _SHARE) & b_ok & c_ok
    seen = np.unique(bufs["alloc_of"][b[b_ok]])
    if len(seen) != 1:
        spans = f"the heap simulator trace spans {len(seen)} buffer allocations"
        return {"error": spans + " (xprof needs one)"}
    parent = np.arange(nb)
    parent[b[share]] = c[share]
    root = _roots(parent)
    if root is None:
        return {"error": "the trace's SHARE_WITH links form a cycle"}
    group = np.where(share, root[c], root[b])
    delta = alloc.astype(np.int64) + share - free
    moves = np.flatnonzero(delta)
    count = np.zeros(n, np.int64)
    count[moves] = _group_cumsum(group[moves], delta[moves])
    if (count[free] < 0).any():
        return {"error": "a buffer is freed more often than it is allocated"}
    grow = share & (count == 1)
    drop = free & (count == 0)
    out = {}
    for key in ("size", "unpadded"):
        h = np.zeros(n, np.int64)
        h[alloc] = bufs[key][b[alloc]]
        h[grow] = bufs[key][root[c[grow]]]
        h[drop] = -bufs[key][root[b[drop]]]
        out[key] = np.cumsum(h)
    if n and out["size"].min() < 0:
        return {"error": "the heap goes below 0 bytes"}
    top = int(out["size"].max()) if n else 0
    pos = int(np.argmax(out["size"])) if top > 0 else 0
    # xprof's list of live buffers: an id pushed when it grows the heap, every copy of it
    # removed when its memory is released.
    pushed_at = np.flatnonzero(alloc | grow)
    pushed = np.where(alloc, b, root[c])[pushed_at]
    dropped_at = np.flatnonzero(drop)
    dropped = root[b[dropped_at]]
    last_drop = np.full(nb, -1, np.int64)
    early = dropped_at <= pos
    np.maximum.at(last_drop, dropped[early], dropped_at[early])
    live = (pushed_at <= pos) & (pushed_at > last_drop[pushed]) if top > 0 else pushed_at < 0
    # xprof shows a memory taken again by a sharer under the last sharer to take it.
    shown = np.arange(nb)
    regrown = np.flatnonzero(grow & (np.arange(n) <= pos))
    shown[root[c[regrown]]] = b[regrown]
    start, end = _spans(n, nb, b, alloc, free, grow, dropped, dropped_at)
    return {
        "heap": out["size"],
        "unpadded_heap": out["unpadded"],
        "peak": top,
        "peak_unpadded": int(out["unpadded"][pos]) if top > 0 else 0,
        "position": pos,
        "live": shown[pushed[live]],
        "start": start,
        "end": end,
    }


def _spans(n, nb, b, alloc, free, grow, dropped, dropped_at) -> tuple[np.ndarray, np.ndarray]:
    """Each buffer's live range in trace positions as xprof 2.24 reports it (-1 for a
    buffer the trace never allocates)."""
    start = np.full(nb, -1, np.int64)
    start[b[alloc]] = np.flatnonzero(alloc)  # the last ALLOC of a buffer wins, as in xprof
    # xprof 2.24 ends an allocated buffer's span at the first release of its memory; a
    # buffer that takes that memory again (SHARE_WITH a released buffer) gets its own span,
    # from there to its own FREE.
    after = dropped_at > start[dropped]
    end = np.full(nb, n, np.int64)
    np.minimum.at(end, dropped[after], dropped_at[after])
    sharer = np.full(nb, -1, np.int64)
    sharer[b[grow]] = np.flatnonzero(grow)
    freed_at = np.flatnonzero(free)
    freed = b[freed_at]
    own = np.full(nb, n, np.int64)
    later = freed_at > sharer[freed]
    np.minimum.at(own, freed[later], freed_at[later])
    shared = sharer > start
    start = np.where(shared, sharer, start)
    end = np.where(start < 0, -1, np.minimum(np.where(shared, own, end), n - 1))
    return start, end


def _instruction_info(module, ins_ids: np.ndarray, shape_index: list) -> dict:
    """Name, opcode, op name, shape text, dtype and unpadded bytes of each buffer (the
    element its shape index names: the last index, one level deep, as xprof resolves it)."""
    needed = set(np.unique(ins_ids).tolist())
    by_id = {
        ins.id: ins
        for comp in module.computations
        if not comp.is_fusion_computation
        for ins in comp.instructions
        if ins.id in needed
    }
    cache: dict = {}

    def info(iid: int, index: tuple) -> tuple:
        key = (iid, index[-1] if index else None)
        got = cache.get(key)
        if got is None:
            ins = by_id.get(iid)
            if ins is None:
                got = ("", "", "", "", "", 0)
            else:
                shape = ins.shape
                if index and index[-1] < len(shape.tuple_shapes):
                    shape = shape.tuple_shapes[index[-1]]
                text, dtype, unpadded = _shape(shape)
                got = (ins.name, ins.opcode, ins.metadata.op_name, text, dtype, unpadded)
            cache[key] = got
        return got

    rows = [info(i, s) for i, s in zip(ins_ids.tolist(), shape_index)]
    names = ("instruction", "opcode", "op_name", "shape", "dtype", "unpadded")
    cols = list(zip(*rows)) if rows else [()] * len(names)
    out = dict(zip(names, cols))
    out["found"] = np.fromiter((iid in by_id for iid in ins_ids.tolist()), bool, len(ins_ids))
    return out


def _indefinite(bufs: dict, known: np.ndarray, index_of) -> tuple[np.ndarray, int]:
    """xprof's buffers of the allocations live the whole program: per such allocation of
    memory space 0, its largest logical buffer (the first of equal ones); and the bytes of
    the allocations that have one (what xprof adds to every position of the heap)."""
    allocs, assigned = bufs["allocations"], bufs["assigned"]
    keep = allocs["index"][allocs["shown"] & allocs["indefinite"]]
    k, ok = index_of(assigned[:, 1])
    rows = np.isin(assigned[:, 0], keep) & ok
    rows &= known[k]
    rows &= bufs["size"][k] > 0
    if not rows.any():
        return np.zeros(0, np.int64), 0
    alloc, buf = assigned[rows, 0], k[rows]
    # Per allocation the largest buffer, the first of equal ones (xprof keeps a strictly
    # larger one only).
    order = np.lexsort((np.arange(len(buf)), -bufs["size"][buf], alloc))
    first = np.unique(alloc[order], return_index=True)[1]
    best = buf[order][first]
    sizes = dict(zip(allocs["index"].tolist(), allocs["size"].tolist()))
    return best, int(sum(sizes[x] for x in alloc[order][first].tolist()))


def _program(host: str, program: int, module, ba) -> dict:
    """One program's rows of the three tables (``buffers``, ``peak``, ``timeline``)."""
    bufs = _buffer_arrays(ba)
    nb = len(bufs["id"])
    order = np.argsort(bufs["id"], kind="stable")
    sorted_ids = bufs["id"][order]

    def index_of(ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        pos = np.minimum(np.searchsorted(sorted_ids, ids), max(nb - 1, 0))
        ok = sorted_ids[pos] == ids if nb else np.zeros(len(ids), bool)
        return (order[pos] if nb else np.zeros(len(ids), np.int64)), ok

    info = _instruction_info(module, bufs["instruction_id"], bufs["shape_index"])
    bufs["unpadded"] = np.array(info["unpadded"], np.int64)
    assigned = bufs["assigned"]
    k, ok = index_of(assigned[:, 1])
    alloc_of, offset = np.full(nb, -1, np.int64), np.zeros(nb, np.int64)
    alloc_of[k[ok]], offset[k[ok]] = assigned[ok, 0], assigned[ok, 2]
    bufs["alloc_of"] = alloc_of
    # xprof knows a buffer only where an allocation holds it and its instruction exists.
    known = (alloc_of >= 0) & info["found"]
    note, sim = "", None
    trace_id = _pick_trace(ba, bufs, known, index_of)
    if trace_id >= 0:
        tr = _trace_arrays(ba.heap_simulator_traces[trace_id])
        sim = _replay(tr, bufs, known, index_of)
        if "error" in sim:
            note, sim = f"xprof refuses this program's heap simulator trace: {sim['error']}", None
    best, indefinite_heap = _indefinite(bufs, known, index_of)
    live = np.r_[best, sim["live"]] if sim else best
    allocs = bufs["allocations"]
    kinds = dict(zip(allocs["index"].tolist(), allocs["kind"]))
    at_peak = np.zeros(nb, bool)
    at_peak[live] = True
    buffers = {
        "buffer_id": bufs["id"],
        "instruction": list(info["instruction"]),
        "shape_index": [
            ("{" + ",".join(map(str, s)) + "}") if s else "" for s in bufs["shape_index"]
        ],
        "opcode": list(info["opcode"]),
        "op_name": list(info["op_name"]),
        "shape": list(info["shape"]),
        "dtype": list(info["dtype"]),
        "size_bytes": bufs["size"],
        "unpadded_bytes": bufs["unpadded"],
        "memory_space": bufs["color"],
        "allocation": alloc_of,
        "offset": offset,
        "allocation_kind": [kinds.get(a, "") for a in alloc_of.tolist()],
        "start_position": sim["start"] if sim else np.full(nb, -1, np.int64),
        "end_position": sim["end"] if sim else np.full(nb, -1, np.int64),
        "live_at_peak": at_peak,
    }
    if trace_id < 0:
        note = "no heap simulator trace for memory space 0: only the allocations that live " \
            "the whole program are counted"  # fmt: skip
    peak, timeline = _summary(bufs, sim, tr if sim else None, live, indefinite_heap, note)
    return {"buffers": buffers, "peak": peak, "timeline": timeline, "module": module.name}


def _summary(bufs: dict, sim: dict | None, tr: dict | None, live, indefinite: int, note: str):
    """A program's row of schema.HLO_MEMORY_PEAK and its schema.HLO_HEAP_TIMELINE columns: the
    replayed heap plus the whole-program allocations at every position, as xprof adds them."""
    sizes = bufs["size"]
    allocs = bufs["allocations"]
    shown = allocs["shown"]
    size = allocs["size"]
    instructions = tr["instruction"] + [""] if sim else []
    heap = np.r_[0, sim["heap"]] + indefinite if sim else np.zeros(0, np.int64)
    unpadded = np.r_[0, sim["unpadded_heap"]] + indefinite if sim else heap
    pos = sim["position"] if sim else 0
    peak = {
        "peak_heap_bytes": (sim["peak"] if sim else 0) + indefinite,
        "peak_unpadded_heap_bytes": (sim["peak_unpadded"] if sim else 0) + indefinite,
        "peak_position": pos,
        "peak_instruction": instructions[pos] if sim else "",
        "positions": len(tr["kind"]) if sim else 0,
        "buffers_at_peak": len(live),
        "small_bytes_at_peak": int(sizes[live][sizes[live] < SMALL_BUFFER_BYTES].sum()),
        "indefinite_bytes": int(size[shown & allocs["indefinite"]].sum()),
        "entry_parameters_bytes": int(size[shown & allocs["is_entry_computation_parameter"]].sum()),
        "maybe_live_out_bytes": int(size[shown & allocs["maybe_live_out"]].sum()),
        "total_allocation_bytes": int(size[shown].sum()),
        "note": note,
    }
    timeline = {
        "position": np.arange(len(heap), dtype=np.int64),
        "instruction": instructions,
        "heap_bytes": heap,
        "unpadded_heap_bytes": unpadded,
    }
    return peak, timeline


@per_run
def _programs(run) -> list[tuple[str, int, dict]]:
    """(host, program id, :func:`_program`'s tables) of every program with a buffer
    assignment, computed once per run; a note in ``run.warnings`` names the programs without
    one (once)."""
    modules = {(h, p): m for h, p, m in run.hlo_modules}
    out, missing = [], []
    for host, program, data in run.hlo_protos:
        module = modules.get((host, program))
        if module is None:
            continue  # a program that does not parse (run.hlo_modules leaves it out)
        ba = buffer_assignment(data)
        if ba is None or not len(ba.logical_buffers):
            missing.append(f"{module.name} ({program})")
            continue
        out.append((host, program, _program(host, program, module, ba)))
    if missing:
        more = f" and {len(missing) - 5} more" if len(missing) > 5 else ""
        note_once(
            run,
            f"memory viewer: {len(missing)} XLA program(s) carry no buffer assignment "
            f"({', '.join(missing[:5])}{more}): XLA wrote their HloProto without one, so "
            "hlo_memory has no rows for them",
        )
    return out


def _table(run, part: str, spec: dict, pick=None) -> pd.DataFrame:
    """One table of every program (picked), its columns joined once (programs are many
    and small: a frame per program would cost more than the rest)."""
    parts: dict[str, list] = {c: [] for c in spec}
    for host, program, tables in _programs(run):
        if pick is not None and not pick(host, program, tables["module"]):
            continue
        cols = tables[part]
        if part == "peak":
            cols = {k: [v] for k, v in cols.items()}
        n = len(next(iter(cols.values())))
        cols = {**cols, "host": [host] * n, "program_id": np.full(n, program, np.int64)}
        cols["module"] = [tables["module"]] * n
        for c in spec:
            parts[c].append(cols[c])
    if not parts["host"]:
        return schema.empty(spec)
    joined = {
        c: np.concatenate(v) if isinstance(v[0], np.ndarray) else [x for p in v for x in p]
        for c, v in parts.items()
    }
    return schema.conform(pd.DataFrame(joined), spec)


def hlo_memory(run) -> pd.DataFrame:
    """One row per logical buffer of every XLA program that carries a buffer assignment
    (schema.HLO_MEMORY): the instruction that defines it, its shape and bytes, its allocation and
    offset, its live range in heap-simulator (program) order and whether xprof's memory
    viewer lists it at the program's peak. Empty (a note in ``run.warnings``) where the
    programs carry none."""
    return _table(run, "buffers", schema.HLO_MEMORY)


def hlo_memory_peak(run) -> pd.DataFrame:
    """Per XLA program, xprof's memory viewer summary (schema.HLO_MEMORY_PEAK): the peak heap of
    memory space 0, where in program order it is reached, how many buffers are live then
    (``hlo_memory.live_at_peak`` marks them) and the allocations that live the whole
    program."""
    return _table(run, "peak", schema.HLO_MEMORY_PEAK)


def hlo_heap_timeline(run, program: int | str | None = None) -> pd.DataFrame:
    """The heap of memory space 0 over program order (schema.HLO_HEAP_TIMELINE): xprof's
    heapSizes, one row per heap simulator position, of the programs named by id or module
    name (every program when None)."""
    pick = None if program is None else (lambda h, p, m: program in (p, m))
    return _table(run, "timeline", schema.HLO_HEAP_TIMELINE, pick)
