"""XLA on GPU: each kernel's HLO instruction, from the programs the capture carries.

A kernel (or memset, or copy) that XLA launched carries ``program_id`` and ``hlo_op`` (the
HLO instruction's name; ``a::b`` for nested annotations, the last part counts). The
program's ``HloProto`` (``run.hlo_instructions``) says what that instruction is: its
framework op (``metadata.op_name``: ``jit(step)/jvp()/dot_general``) and XProf's category.
XProf 2.24's rules (``ConvertDeviceTraceXPlaneToOpMetricsDb`` and the kernel-stats callback):

* An event whose ``(program_id, hlo_op)`` names an instruction of a program is a device op
  of that instruction; its TF-level op is the instruction's ``op_name`` parsed as a
  framework op name (``TfOpFullname(op_type, op_name)``), or, where the instruction has no
  op name, the instruction's own name with type 'Unknown'.
* Occurrences: every event of an instruction is one (a cuDNN convolution's memsets and
  kernels are several); a TF-level op ran as often as its busiest instruction.
* Kernel stats name a kernel's op by its instruction's ``op_name`` ('' where it has none);
  ours also for the kernels inside command buffers below (XProf: ``XlaModule``).

Beyond XProf: under CUDA graphs XLA launches most kernels inside a command buffer, and their
``hlo_op`` is ``command_buffer_N``, which is no HLO instruction (command buffers are made
after the HLO is final), so XProf leaves them out. We attribute each such kernel to the
instruction that emitted it: a fusion's kernel is named after the fusion (``.`` written
``_``: ``loop_convert_fusion.1`` -> ``loop_convert_fusion_1``; AMD adds ``.kd``); a library
kernel (cuBLAS, cuDNN) goes to the library call (custom call, convolution/dot outside a
fusion, or a custom fusion no kernel is named after: cuBLAS ``nvjet_*`` GEMMs of a
``gemm_fusion_dot`` the autotuner gave to cuBLAS) scheduled between the instructions of
the fusion kernels around it in the same graph launch, when that says which one (one call
there, or as many calls as kernels, in order).
Those rows are ``beyond_xprof``. A graph kernel neither rule attributes keeps the op of its
``tf_op`` stat (``XlaModule``), beyond XProf too (see :class:`~.rules.XLA`).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ... import stat_columns
from ...analysis.event_index import event_line_ids, is_derived_line, on_device, timed
from ...analysis.memo import per_run
from ..tensorflow.op_names import parse_tf_op
from .columns import text, text_at

# Opcodes of instructions that run a library kernel when not inside a fusion.
LIBRARY_OPCODES = ("custom-call", "convolution", "dot", "cholesky", "triangular-solve", "fft")


@per_run
def _named(run) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(rows, hlo_op, program, hosts): the device events that carry both ``hlo_op`` and
    ``program_id``, their ``hlo_op`` values and host names, and every event's program id."""
    ev = run.events
    n = len(ev)
    hlo_op, has_op = stat_columns.strings(run.stat_store, "hlo_op", n)
    program, has_program = stat_columns.numbers(run.stat_store, "program_id", n)
    own = on_device(run) & ~is_derived_line(event_line_ids(run)) & timed(run)
    rows = np.flatnonzero(own & has_op & has_program)
    return rows, hlo_op[rows], program, text_at(ev["host"], rows, missing="")


@per_run
def ran_instructions(run) -> pd.DataFrame:
    """The rows of run.hlo_instructions (labelled by their rows there) of the programs that
    device events name: every instruction the GPU rules can find is one of them, and the
    table of the programs that ran is all they read (``run.hlo_instructions_of``)."""
    rows, _, program, hosts = _named(run)
    return run.hlo_instructions_of(set(zip(hosts.tolist(), program[rows].tolist())))


def has_instructions(run) -> bool:
    """Whether the capture's programs hold any HLO instruction (run.hlo_instructions is not
    empty), known without tabulating them."""
    return any(len(r) for r in run.hlo_program_rows.values())


def positions(h: pd.DataFrame, labels: np.ndarray) -> np.ndarray:
    """Positions in ``h`` (a part of run.hlo_instructions, in its order) of the rows
    labelled ``labels`` (each one of ``h``'s)."""
    return np.searchsorted(h.index.to_numpy(), np.asarray(labels, np.int64))


@per_run
def kernel_instructions(run) -> pd.DataFrame:
    """Device events that name an HLO instruction of their program, one row each.

    Columns: row (into run.events), instruction (row of run.hlo_instructions), beyond_xprof
    (attributed inside a command buffer, where XProf attributes nothing), unit (an id of the
    instruction: the same for every event of one instruction of one program and host).
    """
    rows, hlo_op, program, hosts = _named(run)
    h = ran_instructions(run)
    if not len(rows) or not len(h):
        return _empty()
    # The last part of each distinct name (a few hundred; not per event).
    codes, uniq = pd.factorize(hlo_op, use_na_sentinel=False)
    last = [("" if u is None or u != u else str(u)).rsplit("::", 1)[-1] for u in uniq.tolist()]
    names = np.array(last, object)[codes] if len(last) else np.zeros(0, object)
    found = _lookup(h, hosts, program[rows], names)
    in_graph = found < 0
    if in_graph.any():
        found[in_graph] = _in_command_buffers(run, rows[in_graph], h, hosts[in_graph], program)
    keep = found >= 0
    rows, found, beyond = rows[keep], found[keep], in_graph[keep]
    return pd.DataFrame({"row": rows, "instruction": found, "beyond_xprof": beyond, "unit": found})


def _empty() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "row": np.zeros(0, np.int64),
            "instruction": np.zeros(0, np.int64),
            "beyond_xprof": np.zeros(0, bool),
            "unit": np.zeros(0, np.int64),
        }
    )


def _lookup(h: pd.DataFrame, hosts, programs, names, column: str = "instruction") -> np.ndarray:
    """Index label of ``h`` (a part of run.hlo_instructions) whose (host, program_id,
    ``column``) is each key, -1 where none (the first of a name wins). Each distinct key is
    looked up once."""
    where = h.index.to_numpy()  # labels of h: rows of run.hlo_instructions
    table: dict = {}
    keys = zip(text(h["host"]).tolist(), h["program_id"].tolist(), text(h[column]).tolist())
    for label, key in zip(where.tolist(), keys):
        table.setdefault(key, label)
    # The distinct keys, from each part's codes (the events hold a few hundred of them).
    parts = [pd.factorize(np.asarray(hosts, object)), pd.factorize(np.asarray(programs, np.int64))]
    parts.append(pd.factorize(np.asarray(names, object)))
    code = np.zeros(len(names), np.int64)
    for c, u in parts:
        code = code * max(len(u), 1) + c
    uniq, first, inverse = np.unique(code, return_index=True, return_inverse=True)
    values = [p[1][p[0][first]].tolist() for p in parts]
    found = np.array([table.get(k, -1) for k in zip(*values)], np.int64)
    return found[inverse] if len(uniq) else np.zeros(0, np.int64)


def _in_command_buffers(run, rows, h: pd.DataFrame, hosts, program) -> np.ndarray:
    """Instructions of kernels launched inside a command buffer (module docstring): fusion
    kernels by name, library kernels by the schedule; -1 where neither finds one."""
    kernel = (
        pd.Series(text_at(run.events["name"], rows, missing="")).str.removesuffix(".kd").to_numpy()
    )
    top = h[~h["is_fusion_computation"].to_numpy()]
    sanitized = top.assign(kernel=top["instruction"].astype(str).str.replace(".", "_"))
    found = _lookup(sanitized, hosts, program[rows], kernel, column="kernel")
    if (found >= 0).all():
        return found
    corr, _ = stat_columns.numbers(run.stat_store, "correlation_id", len(run.events))
    # Library calls: custom calls (and convolutions/dots outside fusions), and the custom
    # fusions no kernel is named after (a 'gemm_fusion_dot.22' the autotuner gave to cuBLAS
    # runs an nvjet_* kernel; one Triton compiled runs a kernel of its own name).
    opcode = top["opcode"].astype(str).to_numpy()
    named = np.isin(top.index.to_numpy(), found[found >= 0])
    custom = (opcode == "fusion") & (top["fusion_kind"].astype(str).to_numpy() == "kCustom")
    library = top[np.isin(opcode, LIBRARY_OPCODES) | (custom & ~named)]
    library = library[library["schedule_index"].to_numpy() >= 0]
    # Each instruction's schedule index by its label (a row of run.hlo_instructions).
    sched = np.full(int(h.index.max()) + 1 if len(h) else 0, -1, np.int64)
    sched[h.index.to_numpy()] = h["schedule_index"].to_numpy()
    order = np.lexsort((run.events["start_us"].to_numpy()[rows], corr[rows]))
    launches = corr[rows][order]
    cuts = np.flatnonzero(np.r_[True, launches[1:] != launches[:-1]])
    for a, b in zip(cuts.tolist(), [*cuts[1:].tolist(), len(order)]):
        one = order[a:b]  # the kernels of one graph launch, in time order
        k = one[0]
        mine = library[
            (library["host"].astype(str).to_numpy() == hosts[k])
            & (library["program_id"].to_numpy() == program[rows[k]])
        ]
        _library_kernels(found, one, mine, sched)
    return found


def _library_kernels(found, one: np.ndarray, library: pd.DataFrame, sched: np.ndarray) -> None:
    """Within one graph launch (``one``: positions in time order), each run of kernels no
    fusion name found goes to the library calls scheduled between the instructions of the
    kernels around it: all to the one call there is, or one each in schedule order when the
    run has as many kernels as there are calls; none otherwise (we do not guess). ``sched``:
    the schedule index of each instruction by its row of run.hlo_instructions."""
    lib_sched = library["schedule_index"].to_numpy()
    lib_rows = library.index.to_numpy()
    k = 0
    while k < len(one):
        if found[one[k]] >= 0:
            k += 1
            continue
        end = k
        while end < len(one) and found[one[end]] < 0:
            end += 1
        lo = sched[found[one[k - 1]]] if k > 0 else -1
        hi = sched[found[one[end]]] if end < len(one) else np.iinfo(np.int64).max
        between = np.flatnonzero((lib_sched > lo) & (lib_sched < hi))
        between = between[np.argsort(lib_sched[between], kind="stable")]
        if len(between) == 1:
            found[one[k:end]] = lib_rows[between[0]]
        elif len(between) == end - k:
            found[one[k:end]] = lib_rows[between]
        k = end


def device_ops(run, rows: np.ndarray):
    """(rows, op_name, op_type, beyond_xprof) of the events ``rows`` that name an
    instruction: the TF-level op of each (module docstring)."""
    k = kernel_instructions(run)
    k = k[np.isin(k["row"].to_numpy(), rows)]
    op_name, op_type = _tf_level(run)
    at = positions(ran_instructions(run), k["instruction"].to_numpy())
    return k["row"].to_numpy(), op_name[at], op_type[at], k["beyond_xprof"].to_numpy()


@per_run
def _tf_level(run) -> tuple[np.ndarray, np.ndarray]:
    """:func:`tf_level_ops` of the programs that ran (:func:`ran_instructions`' rows)."""
    return tf_level_ops(ran_instructions(run))


def tf_level_ops(h: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """Per instruction: its TF-level op name and type (XProf's CreateTfMetricsDb...: the
    parsed ``op_name``, else the instruction's name with type 'Unknown')."""
    names = h["op_name"].astype(str).to_numpy(object)
    uniq, inv = np.unique(names, return_inverse=True)
    parsed = [parse_tf_op(f"{u}:") if u else None for u in uniq.tolist()]
    name = np.array([p[1] if p else "" for p in parsed], object)[inv]
    typ = np.array(
        [(p[2] if p and p[0] != "unknown" and p[2] else "Unknown") for p in parsed], object
    )[inv]
    none = names == ""
    name[none] = h["instruction"].astype(str).to_numpy(object)[none]
    typ[none] = "Unknown"
    return name, typ


def kernel_op_names(run, rows: np.ndarray) -> np.ndarray:
    """Per kernel row: its instruction's ``op_name`` ('' where it has none) where the rules
    find the instruction, None elsewhere (the kernel keeps its ``tf_op``). Under CUDA graphs
    that includes the kernels we attribute inside command buffers (fusions by name, cuBLAS
    ``nvjet_*`` and cuDNN kernels by the schedule), which XProf's kernel stats leave at the
    graph's ``XlaModule`` (:func:`graph_kernel_rows` says which)."""
    k = kernel_instructions(run)
    out = np.full(len(rows), None, object)
    pos = pd.Index(k["row"].to_numpy()).get_indexer(rows)
    hit = pos >= 0
    h = ran_instructions(run)
    names = h["op_name"].astype(str).to_numpy(object)
    out[hit] = names[positions(h, k["instruction"].to_numpy()[pos[hit]])]
    return out


def graph_kernel_rows(run, rows: np.ndarray) -> np.ndarray:
    """Per event row: whether it is a kernel attributed inside a command buffer (beyond
    XProf, whose kernel stats name it by the graph's ``XlaModule``)."""
    k = kernel_instructions(run)
    k = k[k["beyond_xprof"].to_numpy()]
    return np.isin(np.asarray(rows, np.int64), k["row"].to_numpy())


def device_op_units(run, rows: np.ndarray):
    """(unit, starts) per attributed device event ``rows``: an instruction-attributed event
    counts for its instruction, any other for its kernel name; every event is an
    occurrence."""
    k = kernel_instructions(run)
    pos = pd.Index(k["row"].to_numpy()).get_indexer(rows)
    hit = pos >= 0
    kernel = np.asarray(run.events["name"].array.codes, np.int64)[rows]
    unit = np.where(hit, k["unit"].to_numpy()[np.maximum(pos, 0)], -1 - kernel)
    return unit, np.ones(len(rows), bool)


__all__ = [
    "device_op_units",
    "device_ops",
    "graph_kernel_rows",
    "has_instructions",
    "kernel_instructions",
    "kernel_op_names",
    "positions",
    "ran_instructions",
]
