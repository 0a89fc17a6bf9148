"""The XLA programs a capture carries (``xla.HloProto``) as a table of HLO instructions.

XLA writes every program it ran to the ``/host:metadata`` plane: one event metadata per
program, whose stats are ``Hlo Proto`` (bytes: a serialized ``xla.HloProto``) and
``program_id``. Kernels and TPU ops name their instruction (the ``hlo_op`` stat, or the op's
own name) and program (``program_id``); an instruction's ``metadata.op_name`` is the
framework op it came from (``jit(step)/jvp()/dot_general``) and its source file and line the
Python line that made it.

:func:`hlo_modules` decodes each program once and :func:`hlo_instructions` tabulates the
decoded programs (a run keeps both: its ``hlo_modules`` and ``hlo_instructions`` are built
the first time an analysis reads them, never at load, and share one decode). A
program id is the ``program_id`` stat, else the metadata's id (XProf's rule); a program id
seen twice on one host keeps its first proto. A proto that does not parse is skipped.

No XLA program holds a name of megabytes or a dimension below 0 (but XLA's unbounded one,
INT64_MIN, printed ``?``), nor a shape past 2^63 elements: the table keeps each text at
most MAX_NAME_CHARS long (cut, with an ellipsis and a warning naming the instruction), a
shape's text its first dimensions, and a shape it cannot size 0 result bytes.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from ... import schema
from ...proto import xla_hlo_pb2
from ...proto.xla_opcodes import ELEMENTWISE
from ..text import ELLIPSIS, MAX_NAME_CHARS, cut_text

METADATA_PLANE = "/host:metadata"
HLO_PROTO_STAT = "Hlo Proto"
PROGRAM_ID_STAT = "program_id"

# XLA's element type names, as HLO text prints them.
_DTYPES = {
    v.number: v.name.lower()
    for v in xla_hlo_pb2.DESCRIPTOR.enum_types_by_name["PrimitiveType"].values
}
_DTYPES.update({13: "tuple", 14: "opaque", 17: "token", 0: "invalid"})
_TUPLE = 13
_BITS = {
    "pred": 8, "s1": 1, "s2": 2, "s4": 4, "s8": 8, "s16": 16, "s32": 32, "s64": 64,
    "u1": 1, "u2": 2, "u4": 4, "u8": 8, "u16": 16, "u32": 32, "u64": 64,
    "f16": 16, "f32": 32, "bf16": 16, "f64": 64, "c64": 64, "c128": 128,
    "f8e5m2": 8, "f8e4m3": 8, "f8e4m3fn": 8, "f8e4m3b11fnuz": 8, "f8e3m4": 8,
    "f8e5m2fnuz": 8, "f8e4m3fnuz": 8, "f4e2m1fn": 4, "f8e8m0fnu": 8,
}  # fmt: skip
_MAX_BYTES = (1 << 63) - 1
_UNBOUNDED = -(1 << 63)  # XLA's unbounded dynamic dimension (Shape::kUnboundedSize)
_SHOWN_DIMS = 4096  # dimensions a shape's text shows (XLA's ranks are small)
_NAMED = 3  # instructions a program's warning about cut texts names
_CHUNK = 1 << 16  # instruction rows gathered before they join the columns
_NO_METADATA = xla_hlo_pb2.OpMetadata()
_NO_SHAPE = xla_hlo_pb2.ShapeProto()
_FUSION_CATEGORY = {
    "kLoop": "loop fusion",
    "kInput": "input fusion",
    "kOutput": "output fusion",
    "kCustom": "custom fusion",
}


def program_protos(metadata_stats: pd.DataFrame) -> list[tuple[str, int, bytes]]:
    """(host, program id, serialized HloProto) of every program of the metadata planes."""
    ms = metadata_stats
    if not len(ms):
        return []
    # Compared as they are (categoricals compare by their categories: no text column made);
    # rows taken from the few columns read, not from whole filtered copies of the table.
    on_plane = (ms["plane"] == METADATA_PLANE).to_numpy(bool)
    stat = ms["stat"]
    is_proto = on_plane & (stat == HLO_PROTO_STAT).to_numpy(bool)
    if not is_proto.any():
        return []
    is_id = on_plane & (stat == PROGRAM_ID_STAT).to_numpy(bool)
    hosts, mids = ms["host"], ms["metadata_id"]
    pid = dict(zip(zip(hosts[is_id].astype(str), mids[is_id]), ms["int_value"][is_id]))
    out, seen = [], set()
    values = ms["str_value"][is_proto].astype(object)
    for host, mid, value in zip(hosts[is_proto].astype(str), mids[is_proto], values):
        program = int(pid.get((host, mid), mid))
        if not isinstance(value, bytes) or (host, program) in seen:
            continue
        seen.add((host, program))
        out.append((host, program, value))
    return out


def hlo_instructions(metadata_stats: pd.DataFrame) -> pd.DataFrame:
    """Every HLO instruction of every program the capture carries (schema.HLO_INSTRUCTIONS),
    in program, computation and instruction order (a run tabulates the programs it already
    decoded: :func:`instruction_table`)."""
    return instruction_table(hlo_modules(metadata_stats))


def instruction_table(modules: list, notes: list | None = None) -> pd.DataFrame:
    """:func:`hlo_instructions` of programs decoded by :func:`hlo_modules` (the metadata
    stats they came from are not read again); a warning per program whose texts were cut
    is added to ``notes`` (once)."""
    rows = _Rows()
    shapes: dict = {}  # (element type, dimensions) -> shape_text: few distinct shapes
    for host, program, module in modules:
        cut: list[str] = []
        _add_module(rows, host, program, module, shapes, cut)
        cut = list(dict.fromkeys(cut))
        if cut and notes is not None:
            named = ", ".join(f"'{cut_text(c, 200)[0]}'" for c in cut[:_NAMED])
            more = f" and {len(cut) - _NAMED} more" if len(cut) > _NAMED else ""
            note = (
                f"host {host}, program {cut_text(module.name, 200)[0]} ({program}): texts "
                f"of instruction {named}{more} (op name, source file, names) are longer than "
                f"{MAX_NAME_CHARS >> 10} KB: each is cut to its first {MAX_NAME_CHARS >> 10} KB"
            )
            if note not in notes:
                notes.append(note)
    table = rows.table()
    return schema.empty(schema.HLO_INSTRUCTIONS) if table is None else table


class _Rows(list):
    """The instruction tuples, turned into typed columns every _CHUNK rows (its filler
    calls :meth:`flush`): a category as codes into the values seen so far, a number as an
    array, text stays text. A program of 10^6 instructions held as 10^6 tuples of 22
    values, then as 22 lists of values, then as pandas' columns, peaked at more than twice
    the memory above its decoded program that the chunks need (docs/speed.md)."""

    def __init__(self) -> None:
        super().__init__()
        self._spec = [dtype for dtype, _ in schema.HLO_INSTRUCTIONS.values()]
        self._parts: list[list] = [[] for _ in self._spec]
        self._codes: list[dict] = [{} for _ in self._spec]

    def flush(self) -> None:
        if not self:
            return
        for k, (dtype, values) in enumerate(zip(self._spec, zip(*self))):
            if dtype == "category":
                code = self._codes[k]
                for v in set(values).difference(code):
                    code[v] = len(code)
                self._parts[k].append(np.fromiter(map(code.__getitem__, values), np.int32))
            elif dtype == "str":
                self._parts[k].extend(values)
            else:
                self._parts[k].append(np.array(values, dtype=dtype))
        self.clear()

    def table(self) -> pd.DataFrame | None:
        """The rows as schema.HLO_INSTRUCTIONS (None without rows), each column made in its
        dtype at once (a categorical's categories the values present, sorted, as
        ``astype("category")`` makes them; the frame needs no schema.conform after)."""
        self.flush()
        if not self._parts[0]:
            return None
        cols = {}
        for k, (name, dtype) in enumerate(zip(schema.HLO_INSTRUCTIONS, self._spec)):
            parts = self._parts[k]
            if dtype == "category":
                seen = list(self._codes[k])
                order = sorted(range(len(seen)), key=seen.__getitem__)
                remap = np.empty(len(seen), np.int32)
                remap[order] = np.arange(len(seen), dtype=np.int32)
                codes = remap[np.concatenate(parts)]
                # As schema.text_categorical makes them (codes in range: not validated).
                cats = pd.CategoricalDtype(pd.Index([seen[i] for i in order]))
                cols[name] = pd.Categorical.from_codes(codes, dtype=cats, validate=False)
            elif dtype == "str":
                cols[name] = parts  # pandas' own string dtype, whichever it is
            else:
                cols[name] = np.concatenate(parts)
            self._parts[k] = []
        return pd.DataFrame(cols)


def instruction_count(module) -> int:
    """How many rows :func:`instruction_table` makes of one decoded program (every
    instruction of every computation), counted without reading them."""
    return sum(len(c.instructions) for c in module.computations)


def hlo_modules(metadata_stats: pd.DataFrame) -> list[tuple[str, int, object]]:
    """(host, program id, ``xla.HloModuleProto``) of every program that parses: the table's
    source, and what the analyses read that the table leaves out (XLA's cost model)."""
    return parsed_modules(program_protos(metadata_stats))


def parsed_modules(protos: list[tuple[str, int, bytes]]) -> list[tuple[str, int, object]]:
    """:func:`hlo_modules` of programs already found (:func:`program_protos`)."""
    out = []
    for host, program, data in protos:
        proto = xla_hlo_pb2.HloProto()
        try:
            proto.ParseFromString(data)
        except Exception:  # noqa: BLE001 - a damaged program is left out, not fatal
            continue
        out.append((host, program, proto.hlo_module))
    return out


def _add_module(rows: list, host: str, program: int, module, shapes: dict, cut: list) -> None:
    """The instructions of one module appended to ``rows`` (tuples in schema order);
    ``shapes`` caches the text of array shapes across modules; the names of instructions
    whose texts were cut are added to ``cut``."""

    def short(value: str, ins_name: str) -> str:
        if len(value) <= MAX_NAME_CHARS:
            return value
        cut.append(ins_name)
        return value[:MAX_NAME_CHARS] + ELLIPSIS

    names = {c.id: short(c.name, c.name) for c in module.computations}
    schedule = {
        cid: {iid: k for k, iid in enumerate(seq.instruction_ids)}
        for cid, seq in module.schedule.sequences.items()
    }
    frames = _frame_lines(module.stack_frame_index)
    categories: dict = {}
    module_name = short(module.name, module.name)
    for comp in module.computations:
        comp_name = names[comp.id]
        entry = comp_name == module.entry_computation_name
        fused = comp.is_fusion_computation
        order = schedule.get(comp.id, {})
        for ins in comp.instructions:
            # An unset submessage read makes an empty one that its instruction keeps (a few
            # hundred bytes each: docs/speed.md), so one is read only when set.
            md = ins.metadata if ins.HasField("metadata") else _NO_METADATA
            shape = ins.shape if ins.HasField("shape") else _NO_SHAPE
            if shape.element_type == _TUPLE:
                text = shape_text(shape)
            else:
                key = (shape.element_type, tuple(shape.dimensions))
                text = shapes.get(key)
                if text is None:
                    text = shapes[key] = shape_text(shape)
            source_file, source_line = md.source_file, md.source_line
            if not source_file and md.stack_frame_id:
                source_file, source_line = frames.get(md.stack_frame_id, ("", 0))
            opcode, kind, op_name = ins.opcode, ins.fusion_kind, md.op_name
            name, target = ins.name, ins.custom_call_target
            texts = (name, op_name, source_file, target, opcode, kind)
            if max(map(len, texts)) > MAX_NAME_CHARS:
                name, op_name, source_file, target, opcode, kind = (short(t, name) for t in texts)
            category = categories.get((opcode, kind))
            if category is None:
                category = categories[(opcode, kind)] = hlo_category(opcode, kind)
            called = ins.called_computation_ids
            rows.append(
                (
                    host,
                    program,
                    module_name,
                    comp_name,
                    entry,
                    fused,
                    name,
                    ins.id,
                    opcode,
                    category,
                    kind,
                    target,
                    ", ".join(names.get(c, str(c)) for c in called) if called else "",
                    op_name,
                    op_name.rsplit("/", 1)[-1] if op_name else "",
                    source_file,
                    int(source_line),
                    *text,
                    order.get(ins.id, -1),
                )
            )
            if len(rows) >= _CHUNK:
                rows.flush()


def hlo_category(opcode: str, fusion_kind: str) -> str:
    """XProf's category of an HLO instruction (``HloInstruction::ToCategory``)."""
    if opcode == "fusion":
        return _FUSION_CATEGORY.get(fusion_kind, "fusion")
    if opcode in ("transpose", "copy", "copy-start", "copy-done"):
        return "data formatting"
    if opcode in ELEMENTWISE:
        return "non-fusion elementwise"
    return opcode


def shape_text(shape) -> tuple[str, str, int]:
    """(text as XLA prints it without layout, element type, bytes) of a ShapeProto. A
    shape no XLA program holds (a dimension below 0 but the unbounded one, a product past
    2^63) has 0 bytes; an unbounded dimension (INT64_MIN) is ``?`` and has no size either;
    the text shows at most the first _SHOWN_DIMS dimensions and MAX_NAME_CHARS characters."""
    dtype = _DTYPES.get(shape.element_type, str(shape.element_type))
    if dtype == "tuple":
        parts = [shape_text(s) for s in shape.tuple_shapes]
        first = parts[0][1] if parts else ""
        total = min(sum(p[2] for p in parts), _MAX_BYTES)
        text = "(" + ", ".join(p[0] for p in parts) + ")"
        return cut_text(text)[0], first, total
    dims = shape.dimensions
    shown = [("?" if d == _UNBOUNDED else str(d)) for d in dims[:_SHOWN_DIMS]]
    if len(dims) > _SHOWN_DIMS:
        shown.append(ELLIPSIS)
    text = cut_text(f"{dtype}[{','.join(shown)}]")[0]
    return text, dtype, _array_bytes(dims, _BITS.get(dtype, 0))


def _array_bytes(dims, bits: int) -> int:
    """Bytes of an array of these dimensions and element bits; 0 where a dimension is below
    0 or the bytes pass 2^63 (no such array: its size is unknown, neither wrapped nor
    capped)."""
    if len(dims) <= 8:
        values = list(dims)
        if values and min(values) < 0:
            return 0
        elements = math.prod(values)
    else:
        a = np.asarray(dims, dtype=np.int64)
        if (a < 0).any():
            return 0
        if (a == 0).any():
            return 0
        if float(np.log2(a.astype(np.float64)).sum()) > 63.5:
            return 0
        elements = math.prod(a[a > 1].tolist())
    nbytes = (elements * bits + 7) // 8
    return nbytes if nbytes <= _MAX_BYTES else 0


def _frame_lines(index) -> dict[int, tuple[str, int]]:
    """Stack frame id (1-based) -> (file, line) of that frame's location."""
    out = {}
    files = list(index.file_names)
    locations = list(index.file_locations)
    for k, frame in enumerate(index.stack_frames, start=1):
        loc_id = frame.file_location_id
        if 0 < loc_id <= len(locations):
            loc = locations[loc_id - 1]
            name = files[loc.file_name_id - 1] if 0 < loc.file_name_id <= len(files) else ""
            out[k] = (name, int(loc.line))
    return out


__all__ = [
    "hlo_category",
    "hlo_instructions",
    "hlo_modules",
    "instruction_count",
    "instruction_table",
    "parsed_modules",
    "program_protos",
    "shape_text",
]
