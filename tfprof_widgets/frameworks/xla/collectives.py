"""XLA's collectives: the device events of collective HLO instructions on GPU and TPU, for
the step breakdown's ``device_collectives``, the collectives table (``run.collectives``) and
the communication/computation overlap (``run.comm_comp_overlap``, :mod:`.overlap`).

* A collective instruction: opcode all-reduce, all-gather, reduce-scatter, all-to-all,
  ragged-all-to-all, collective-permute or collective-broadcast, their ``-start``/``-done``
  halves, and a fusion or ``async-start``/``-update``/``-done`` whose called computations
  hold one (a TPU's 'all-reduce fusion', an async wrapped all-gather). XProf counts a GPU's
  collectives by the kernel's name alone ('nccl...'); the instruction also finds XLA's own
  collective kernels and every TPU collective (beyond XProf).
* Its events: on GPU the kernels whose ``hlo_op`` names it (``gpu.kernel_instructions``);
  on TPU the ops of the cores' op lines that are it (by program and name), or, without the
  program, whose ``hlo_category`` is a collective's.
* Its communicator: the instruction's replica groups as HLO text writes them
  (``{{0,1},{2,3}}``, the iota form ``[2,4]<=[8]``) or a permute's source-target pairs;
  the group size is a group's length. Its bytes (nccl-tests' size): the result's (an
  all-reduce's, all-gather's, all-to-all's, a permute's; a ``-start`` tuple's output part),
  times the group size for a reduce-scatter (its whole input).
* Their overlap with computation: :mod:`.overlap`.

Replica groups are fields our trimmed ``xla_hlo.proto`` leaves out; they are read from the
instruction's bytes (fields 49 ``replica_groups``, 52 ``source_target_pairs``, 87
``collective_device_list`` of XLA's ``HloInstructionProto``).
"""

from __future__ import annotations

import math
import re

import numpy as np
import pandas as pd

from ...analysis.collective_kinds import collective_kind
from ...analysis.memo import per_run
from ...proto.wire import fields, varint
from . import gpu
from .tpu import TPU_OP_LINES, tpu_op_events

__all__ = ["collective_ops", "instruction_collectives", "tpu_ops"]

_COLLECTIVE_OPCODES = re.compile(
    r"^(?:all-reduce|all-gather|reduce-scatter|all-to-all|ragged-all-to-all"
    r"|collective-permute|collective-broadcast)(?:-start|-done)?$"
)
_WRAPPERS = ("fusion", "async-start", "async-update", "async-done")
# A TPU op's hlo_category that is a collective's (without its program's HLO to read).
_COLLECTIVE_CATEGORY = re.compile(
    r"all-reduce|all-gather|reduce-scatter|all-to-all|collective-permute|collective-broadcast"
)
# -start halves whose result tuple is (operands, outputs, ...): the outputs are the data.
_OUTPUT_SECOND = ("all-gather-start", "collective-permute-start", "async-start")
_DIGITS = re.compile(r"(\d+)")


def _ints(buf: bytes, number: int) -> list[int]:
    """The repeated integer field ``number`` of a message (packed or not), signed."""
    out = []
    for value in fields(buf).get(number, []):
        if isinstance(value, int):
            out.append(value)
            continue
        i = 0
        while i < len(value):
            v, i = varint(value, i)
            out.append(v)
    return [v - (1 << 64) if v >= 1 << 63 else v for v in out]


def _groups_text(groups: list[list[int]]) -> str:
    return "{" + ",".join("{" + ",".join(map(str, g)) + "}" for g in groups) + "}"


def _communicator(raw: bytes) -> tuple[str, float]:
    """(replica groups or source-target pairs as HLO text, group size or NaN) of an
    instruction's bytes; ('', NaN) where they cannot be read."""
    try:
        return _groups_of(fields(raw))
    except (ValueError, IndexError):  # damaged bytes: the groups are unknown, nothing else
        return "", np.nan


def _groups_of(top: dict) -> tuple[str, float]:
    groups = [_ints(g, 1) for g in top.get(49, [])]
    pairs = [[(_ints(p, 1) or [0])[0], (_ints(p, 2) or [0])[0]] for p in top.get(52, [])]
    iota = None
    for devices in top.get(87, []):
        inner = fields(devices)
        groups += [_ints(g, 1) for g in inner.get(1, [])]
        iota = (inner.get(2) or [iota])[-1]
    if iota is not None:
        g, per = (_ints(iota, 1) or [0])[0], (_ints(iota, 2) or [0])[0]
        dims, perm = _ints(iota, 3), _ints(iota, 4)
        text = f"[{g},{per}]<=[{','.join(map(str, dims))}]"
        if perm and perm != sorted(perm):
            text += f"T({','.join(map(str, perm))})"
        return text, float(per) if per > 0 else np.nan
    if groups:
        return _groups_text(groups), float(len(groups[0])) if groups[0] else np.nan
    if pairs:
        return _groups_text(pairs), np.nan
    return "{}", np.nan


def _shape_bytes(shape) -> int:
    """Bytes of a ShapeProto (tuples summed); 0 for tokens and unknown element types."""
    from ...proto import xla_hlo_pb2

    if shape.tuple_shapes:
        return sum(_shape_bytes(s) for s in shape.tuple_shapes)
    try:
        name = xla_hlo_pb2.PrimitiveType.Name(shape.element_type).lower()
    except ValueError:  # a type this proto does not know: its size is unknown
        return 0
    found = _DIGITS.search(name)
    bits = 8 if name == "pred" else int(found.group(1)) if found else 0
    dims = list(shape.dimensions)
    if any(d < 0 for d in dims):
        return 0
    nbytes = (math.prod(dims) * bits + 7) // 8
    return nbytes if nbytes < 1 << 63 else 0  # no such array: unknown, not wrapped


def _data_bytes(instr) -> int:
    shape = instr.shape
    if instr.opcode in _OUTPUT_SECOND and len(shape.tuple_shapes) >= 2:
        return _shape_bytes(shape.tuple_shapes[1])
    return _shape_bytes(shape)


def _module_collectives(module) -> dict[str, tuple]:
    """Instruction name -> (collective, communicator, group size, size bytes) of a module's
    collective instructions (module docstring), wrappers included."""
    direct: dict[int, object] = {}  # computation id -> its first collective instruction
    for comp in module.computations:
        for instr in comp.instructions:
            if _COLLECTIVE_OPCODES.match(instr.opcode):
                direct.setdefault(comp.id, instr)
    out = {}
    for comp in module.computations:
        for instr in comp.instructions:
            inner = instr if _COLLECTIVE_OPCODES.match(instr.opcode) else None
            if inner is None and instr.opcode in _WRAPPERS:
                inner = next((direct[c] for c in instr.called_computation_ids if c in direct), None)
            if inner is None:
                continue
            kind = collective_kind(inner.opcode)
            text, n = _communicator(inner.SerializeToString())
            size = float(_data_bytes(instr))
            if kind == "reduce_scatter":
                size *= n  # nccl-tests' size: the whole input (NaN where n is unknown)
            out.setdefault(instr.name, (kind, text, n, size))
    return out


@per_run
def instruction_collectives(run) -> pd.DataFrame:
    """Every collective instruction of the capture's programs: host, program_id,
    instruction, collective, communicator, group_size, size_bytes."""
    rows = []
    for host, program, module in run.hlo_modules:
        for name, info in _module_collectives(module).items():
            rows.append((str(host), int(program), name, *info))
    cols = ["host", "program_id", "instruction", "collective", "communicator"]
    return pd.DataFrame(rows, columns=[*cols, "group_size", "size_bytes"])


def _gpu_events(run, table: pd.DataFrame) -> pd.DataFrame:
    """GPU kernels of collective instructions: row and the instruction's key columns."""
    ki = gpu.kernel_instructions(run)
    if not len(ki) or not len(table):
        return pd.DataFrame(columns=["row", "host", "program_id", "instruction"])
    h = gpu.ran_instructions(run).loc[ki["instruction"].to_numpy()]
    return pd.DataFrame(
        {
            "row": ki["row"].to_numpy(np.int64),
            "host": h["host"].astype(str).to_numpy(object),
            "program_id": h["program_id"].to_numpy(np.int64),
            "instruction": h["instruction"].astype(str).to_numpy(object),
        }
    )


def tpu_ops(run) -> pd.DataFrame:
    """The TPU cores' ops (op lines, HLO ops only): row, host, program_id, instruction
    (the op's name), hlo_category."""
    ev = tpu_op_events(run)
    if not len(ev):
        return pd.DataFrame(columns=["row", "host", "program_id", "instruction", "hlo_category"])
    ev = ev[ev["line"].isin(TPU_OP_LINES).to_numpy() & ev["is_op"].to_numpy()]
    return pd.DataFrame(
        {
            "row": ev["row"].to_numpy(np.int64),
            "host": ev["host"].astype(str).to_numpy(object),
            "program_id": ev["program_id"].to_numpy(np.int64),
            "instruction": ev["op_name"].astype(str).to_numpy(object),
            "hlo_category": ev["hlo_category"].astype(str).to_numpy(object),
        }
    )


def _by_category(ops: pd.DataFrame) -> pd.DataFrame:
    """TPU ops of no known instruction whose hlo_category is a collective's."""
    cat = ops["hlo_category"].to_numpy(object)
    hit = np.array([bool(_COLLECTIVE_CATEGORY.search(c)) for c in cat.tolist()], bool)
    ops = ops[hit]
    return pd.DataFrame(
        {
            "row": ops["row"].to_numpy(np.int64),
            "collective": [collective_kind(c) for c in ops["hlo_category"].tolist()],
            "name": ops["instruction"].to_numpy(object),
            "communicator": "",
            "group_size": np.nan,
            "size_bytes": np.nan,
        }
    )


@per_run
def collective_ops(run) -> pd.DataFrame | None:
    """The ``collective_ops`` hook (:meth:`~..base.Framework.collective_ops`): the device
    events of collective instructions, GPU and TPU (module docstring)."""
    table = instruction_collectives(run)
    keys = ["host", "program_id", "instruction"]
    tpu = tpu_ops(run)
    events = pd.concat([_gpu_events(run, table), tpu[[*keys, "row"]]], ignore_index=True)
    if not len(events):
        return None
    found = events.merge(table, on=keys, how="inner")
    found = found.rename(columns={"instruction": "name"})
    parts = [found[["row", "collective", "name", "communicator", "group_size", "size_bytes"]]]
    if len(tpu):
        parts.append(_by_category(tpu[~np.isin(tpu["row"], found["row"])]))
    parts = [p for p in parts if len(p)]
    if not parts:
        return None
    return pd.concat(parts, ignore_index=True).sort_values("row", ignore_index=True)
