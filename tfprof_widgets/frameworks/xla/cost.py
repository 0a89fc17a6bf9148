"""FLOPs and bytes of XLA's GPU instructions, as XProf 2.24 counts them for its HLO Stats,
roofline and op profile tools.

XProf runs XLA's ``GpuHloCostAnalysis`` on the programs the capture carries (GPU kernels carry
no FLOP or byte stats); we apply the same rules to the decoded programs (``run.hlo_modules``),
equal to xprof on every instruction of the JAX H100 and MI300X captures but the cuBLAS GEMM
calls:

* elementwise ops: a per-element cost times the result's elements: 3, or the entry of XLA's
  measured "sm_86" op profile (``exponential`` f32: 86, ...) -- XProf gives the analysis no
  device, so XLA falls back to that profile on every GPU;
* reduce / reduce-window / scatter: the applied computation's FLOPs times how often it is
  applied; concatenate 6 per element (400 where a non-major operand size is no multiple of
  32: XLA's divergent-warp penalty);
* convolutions (``convolution`` and cuDNN calls): 2 × input features / groups × output
  features × batch / batch groups × valid window positions (padding excluded); dots: 2 ×
  result elements × contracting size;
* fusions: each fused instruction's FLOPs times its utilisation (how often the fusion's root
  needs it: an elementwise op as often as the roots it feeds, a slice or gather's operand
  only as much as they read); bytes read are each operand's bytes times its parameter's
  utilisation (at most 1);
* bytes accessed: operands read plus the result (a library call's tuple result less its
  workspace, its last ``u8``/``s8`` element); HBM bytes the same, but a library call's
  tuple result counts as no HBM write;
* cuBLAS GEMM calls: XLA's dot rule with the call's dimension numbers, ``flops_modeled``
  False: xprof 2.24 shows 0 FLOPs and 0 bytes for them (on the MI300X captures).

A damaged program costs only the instructions it damages: each top-level instruction is
costed on its own, the computations it calls walked iteratively (no recursion, however
deep the calls nest), and an instruction no XLA program can hold (a computation that calls
itself, a dimension below 0 or a shape past 2^63 elements, an operand index outside its
shape) gets 0 FLOPs and 0 bytes, ``flops_modeled`` False, and one warning per program in
``run.warnings`` naming the program and the instruction.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from ...analysis.memo import per_run
from ...proto import xla_hlo_pb2
from ...proto.xla_opcodes import ELEMENTWISE
from ...schema import cut_text
from .columns import note_once, text
from .gpu import ran_instructions
from .shape_flops import Damaged, checked_product, conv_flops, dot_flops, elements, gemm_dimensions

# cuDNN / cuBLAS / hipBLASLt calls: a tuple result whose last element is the workspace.
_LIBRARY_PREFIXES = ("__cudnn$", "__cublas$", "__cublas", "__hipblas")
_CONV_TARGETS = ("__cudnn$conv",)
_GEMM_TARGETS = ("__cublas$gemm", "__cublas$lt$matmul")
# Opcodes with no FLOPs in XLA's cost analysis (data movement and bookkeeping).
_NO_FLOPS = frozenset(
    "parameter constant bitcast broadcast copy transpose reshape slice dynamic-slice "
    "dynamic-update-slice pad tuple get-tuple-element iota gather reverse".split()
)
_WARP = 32
# Computations nested deeper than this (a fusion in a fusion in ...) are a damaged program:
# XLA nests a handful.
MAX_NESTING = 4096
# Instructions a program's warning names (the rest are counted).
_NAMED = 3
_TYPE = {v.number: v.name.lower() for v in xla_hlo_pb2.PrimitiveType.DESCRIPTOR.values}
# FLOPs per element of an elementwise op by result type, where not 3 (XLA's default): the
# "sm_86" entries of XLA's measured op profiles (xla/service/gpu/model/hlo_op_profiles_data.h,
# Apache-2.0, the OpenXLA Authors). XProf's cost analysis runs without a device description,
# so XLA falls back to this profile whatever the GPU (it gives XProf's numbers on the H100
# and the MI300X alike).
_SM86_FLOPS_PER_ELEMENT = {
    "c128": {
        "add": 97,
        "atan2": 39027,
        "cosine": 6613,
        "divide": 7941,
        "exponential": 4028,
        "exponential-minus-one": 4161,
        "log": 7599,
        "log-plus-one": 6962,
        "multiply": 270,
        "power": 18205,
        "rsqrt": 11318,
        "sine": 5878,
        "sqrt": 15606,
        "subtract": 97,
        "tanh": 9939,
    },
    "f64": {
        "add": 97,
        "atan2": 3747,
        "cbrt": 6339,
        "cosine": 1717,
        "divide": 2016,
        "exponential": 1652,
        "exponential-minus-one": 1900,
        "log": 608,
        "log-plus-one": 2073,
        "logistic": 2412,
        "multiply": 97,
        "power": 5511,
        "rsqrt": 698,
        "sine": 1789,
        "sqrt": 986,
        "subtract": 97,
        "tanh": 1609,
    },
    "c64": {
        "atan2": 5353,
        "divide": 687,
        "exponential": 1360,
        "exponential-minus-one": 1400,
        "log": 950,
        "log-plus-one": 842,
        "power": 3351,
        "rsqrt": 2383,
        "sqrt": 3193,
    },
    "f16": {
        "atan2": 482,
        "cbrt": 925,
        "cosine": 691,
        "exponential": 108,
        "exponential-minus-one": 396,
        "log": 266,
        "log-plus-one": 284,
        "logistic": 226,
        "power": 975,
        "rsqrt": 97,
        "sqrt": 97,
        "tanh": 212,
    },
    "f32": {
        "atan2": 486,
        "cbrt": 867,
        "cosine": 662,
        "exponential": 86,
        "exponential-minus-one": 381,
        "log": 244,
        "log-plus-one": 262,
        "logistic": 176,
        "power": 925,
        "rsqrt": 75,
        "sine": 662,
        "sqrt": 75,
        "tanh": 190,
    },
    "s16": {"divide": 367, "power": 396},
    "s32": {"divide": 306},
    "s64": {"divide": 918, "power": 601},
    "s8": {"divide": 370, "power": 392},
    "u16": {"divide": 302, "power": 399},
    "u32": {"divide": 115},
    "u64": {"divide": 838, "power": 604},
    "u8": {"divide": 306, "power": 388},
}


@per_run
def instruction_costs(run) -> pd.DataFrame:
    """One row per top-level instruction (not inside a fusion) of every program: host,
    program_id, instruction, flops (model FLOPs per execution), device_flops (normalized to
    the device's 16-bit rate), bytes_accessed, hbm_bytes and flops_modeled (our numbers are
    XProf's for it)."""
    return program_costs(run)


def program_costs(run, programs: set | None = None) -> pd.DataFrame:
    """:func:`instruction_costs`' rows of the programs named ((host, program id) pairs;
    every program when None). Each program's costs are computed once per run, the first
    time a table needs them: the HLO Stats tool needs only the programs that ran (on the
    JAX H100 capture 2 of 16: the random-number programs hold most instructions)."""
    rows = [r for part in _program_parts(run, programs) for r in part]
    cols = [
        "host",
        "program_id",
        "instruction",
        "flops",
        "device_flops",
        "bytes_accessed",
        "hbm_bytes",
        "flops_modeled",
    ]
    if not rows:
        return pd.DataFrame({c: pd.Series(dtype=object) for c in cols})
    out = pd.DataFrame.from_records(rows, columns=cols)
    return out.astype(
        {
            "program_id": np.int64,
            "flops": np.float64,
            "device_flops": np.float64,
            "bytes_accessed": np.float64,
            "hbm_bytes": np.float64,
            "flops_modeled": bool,
        }
    )


def costs_by_instruction(run, programs: set, keys=None) -> dict[tuple, tuple]:
    """(host, program id, instruction name) -> (flops, device_flops, bytes_accessed,
    hbm_bytes, flops_modeled) of the top-level instructions of the programs named: the
    rows of :func:`program_costs` as a lookup (the first row of a name). With ``keys``
    ((host, program id, name) triples), only those instructions are costed where their
    program was not costed whole (a program of 10^6 instructions of which 40 ran costs
    those 40)."""
    if keys is None:
        out: dict = {}
        for part in _program_parts(run, programs):
            for row in part:
                out.setdefault(row[:3], row[3:])
        return out
    names: dict = {}
    for key in keys:
        if key[:2] in programs:
            names.setdefault(key[:2], set()).add(key[2])
    whole, some = _program_rows(run), _some_rows(run)
    out = {}
    for host, program, module in run.hlo_modules:
        wanted = names.get((host, program))
        if not wanted:
            continue
        rows = whole.get((host, program))
        if rows is None:
            known = some.setdefault((host, program), {})
            need = {n for n in wanted if n not in known}
            if need:
                part: list[tuple] = []
                damaged: list[tuple[str, str]] = []
                sizes = _result_bytes(run, host, program)
                _module_costs(part, host, program, module, sizes, damaged, need)
                for row in part:
                    known.setdefault(row[2], row)
                for n in need:
                    known.setdefault(n, None)
                if damaged:
                    _warn(run, host, program, module.name, damaged)
            rows = [known[n] for n in wanted if known[n] is not None]
        for row in rows:
            if row[2] in wanted:
                out.setdefault(row[:3], row[3:])
    return out


@per_run
def _some_rows(run) -> dict:
    """(host, program id) -> {instruction name: its row of :func:`program_costs`, or None
    where the program has no such top-level instruction}, of the instructions costed alone
    (:func:`costs_by_instruction` with keys)."""
    return {}


def _program_parts(run, programs: set | None) -> list[list[tuple]]:
    """Each program's rows of :func:`program_costs` (those named; all when None), in the
    programs' order, computed the first time they are asked for; a program whose
    instructions were damaged adds one warning to ``run.warnings``."""
    done = _program_rows(run)
    parts = []
    for host, program, module in run.hlo_modules:
        if programs is not None and (host, program) not in programs:
            continue
        if (host, program) not in done:
            part: list[tuple] = []
            damaged: list[tuple[str, str]] = []
            sizes = _result_bytes(run, host, program)
            _module_costs(part, host, program, module, sizes, damaged)
            if damaged:
                _warn(run, host, program, module.name, damaged)
            done[(host, program)] = part
        parts.append(done[(host, program)])
    return parts


def _warn(run, host: str, program: int, module: str, damaged: list[tuple[str, str]]) -> None:
    """One warning for a program's damaged instructions (the first few named)."""
    named = "; ".join(f"'{name}' ({why})" for name, why in damaged[:_NAMED])
    more = f" and {len(damaged) - _NAMED} more" if len(damaged) > _NAMED else ""
    note = (
        f"host {host}, program {cut_text(module, 200)[0]} ({program}): XLA's cost model "
        f"gives no FLOPs or bytes to instruction {named}{more}: no XLA program can hold "
        "it; the program's other instructions are costed"
    )
    note_once(run, note)


@per_run
def _program_rows(run) -> dict:
    """(host, program id) -> that program's rows of :func:`program_costs`, as computed."""
    return {}


@per_run
def _programs_result_bytes(run) -> dict:
    """(host, program id) -> {instruction id: result bytes} of the programs costed so far."""
    return {}


def _result_bytes(run, host: str, program: int) -> _Sizes:
    """Instruction id -> result bytes of one program (from run.hlo_instructions), made the
    first time its costs are computed: the costs need the programs that ran, a few of the
    capture's."""
    done = _programs_result_bytes(run)
    if (host, program) not in done:
        # The whole table where it is built; else the programs that ran, tabulated already
        # (the costs are asked for theirs), or another program alone.
        built = "hlo_instructions" in vars(run)
        h = run.hlo_instructions if built else ran_instructions(run)
        at = np.flatnonzero((h["program_id"].to_numpy() == program) & (text(h["host"]) == host))
        if not len(at) and not built:
            h = run.hlo_instructions_of({(host, program)})
            at = np.arange(len(h))
        ids = h["instruction_id"].to_numpy()[at]
        done[(host, program)] = _Sizes(ids, h["result_bytes"].to_numpy()[at])
    return done[(host, program)]


class _Sizes:
    """Result bytes by instruction id, as sorted arrays (a program of 10^6 instructions of
    which a few are costed needs no dict of 10^6 entries); an id listed twice has its last
    row's bytes, an unknown one 0."""

    __slots__ = ("_ids", "_bytes")

    def __init__(self, ids: np.ndarray, nbytes: np.ndarray) -> None:
        order = np.argsort(ids, kind="stable")
        self._ids = np.asarray(ids, np.int64)[order]
        self._bytes = np.asarray(nbytes, np.int64)[order]

    def __call__(self, instruction_id: int) -> int:
        k = int(np.searchsorted(self._ids, instruction_id, side="right")) - 1
        if k < 0 or self._ids[k] != instruction_id:
            return 0
        return int(self._bytes[k])


class _Module:
    """One program's instructions and computations by id, and what the cost rules computed
    of them so far: a fused computation's utilisations are read by the fusion's FLOPs and by
    its bytes, and an instruction's FLOPs by every computation that applies it, so each is
    computed once per program."""

    __slots__ = ("by_id", "comps", "flops", "uses", "bad", "_operand_ids", "_elements")

    def __init__(self, module) -> None:
        self.by_id = {i.id: i for c in module.computations for i in c.instructions}
        self.comps = {c.id: c for c in module.computations}
        self.flops: dict[int, tuple[float, bool]] = {}  # instruction id -> _flops
        self.uses: dict[int, tuple[dict, float, bool]] = {}  # computation id -> _utilizations
        self.bad: dict[int, str] = {}  # computation id -> why it cannot be costed
        self._operand_ids: dict[int, list[int]] = {}
        self._elements: dict[int, int] = {}

    def ensure(self, cid: int) -> None:
        """Compute :func:`_utilizations` of computation ``cid`` and of every computation it
        calls, callees first (an iterative depth-first walk of the calls): computing one
        then reads its callees' results, never recurses. A computation met again while
        its own calls are walked calls itself; it and its callers are ``bad``, as are calls
        nested deeper than MAX_NESTING."""
        if cid in self.uses or cid in self.bad or cid not in self.comps:
            return
        on_path: set[int] = {cid}
        stack = [(cid, iter(self._callees(cid)))]
        while stack:
            top, callees = stack[-1]
            nxt = next(callees, None)
            if nxt is not None:
                if nxt in self.uses or nxt in self.bad or nxt not in self.comps:
                    continue
                if nxt in on_path:
                    self.bad[nxt] = f"computation {self._name(nxt)} calls itself"
                    continue
                if len(stack) >= MAX_NESTING:
                    self.bad[nxt] = f"computations nested more than {MAX_NESTING} deep"
                    continue
                on_path.add(nxt)
                stack.append((nxt, iter(self._callees(nxt))))
                continue
            stack.pop()
            on_path.discard(top)
            if top in self.bad:
                continue
            try:
                self.uses[top] = _computation_utilizations(self.comps[top], self)
            except _DAMAGE as exc:
                self.bad[top] = str(exc) if isinstance(exc, Damaged) else type(exc).__name__

    def _callees(self, cid: int) -> list[int]:
        return [c for ins in self.comps[cid].instructions for c in ins.called_computation_ids]

    def _name(self, cid: int) -> str:
        return cut_text(self.comps[cid].name, 200)[0]

    def operand_ids(self, ins) -> list[int]:
        """``ins.operand_ids`` as a list, read from the proto once per instruction (the
        rules read an instruction's operands several times, and a protobuf repeated field
        costs far more to read than a list)."""
        ids = self._operand_ids.get(ins.id)
        if ids is None:
            ids = self._operand_ids[ins.id] = list(ins.operand_ids)
        return ids

    def elements(self, ins) -> int:
        """:func:`elements` of the result of ``ins``, once per instruction (an operand's
        elements are read by each of its users)."""
        n = self._elements.get(ins.id)
        if n is None:
            n = self._elements[ins.id] = elements(ins.shape)
        return n

    def operands(self, ins) -> list:
        """The operand instructions of ``ins`` (those of this program)."""
        by_id = self.by_id
        return [by_id[o] for o in self.operand_ids(ins) if o in by_id]


# What costing a damaged instruction can raise besides Damaged (an id, index or value
# that no XLA program has, read by a rule that trusts the program).
_DAMAGE = (Damaged, ArithmeticError, IndexError, KeyError, MemoryError, RecursionError,
           ValueError)  # fmt: skip


def _module_costs(
    rows: list,
    host: str,
    program: int,
    module,
    result_bytes,
    damaged: list,
    only: set | None = None,
) -> None:
    """Append (host, program, name, flops, bytes, hbm bytes, modeled) per top-level
    instruction of ``module`` (those named in ``only``: the first of each name; all when
    None); ``result_bytes(id)`` gives an instruction's result bytes. An instruction that
    cannot be costed gets zeros, not modeled, and its (name, reason) in ``damaged``: the
    others keep theirs."""
    m = _Module(module)
    left = set(only) if only is not None else None
    for comp in module.computations:
        if comp.is_fusion_computation:
            continue
        for ins in comp.instructions:
            if left is not None:
                if not left:
                    return
                if ins.name not in left:
                    continue
                left.discard(ins.name)
            name = cut_text(ins.name)[0]
            try:
                flops, modeled = _flops(ins, m)
                read = _bytes_read(ins, m, result_bytes)
                written, hbm_written = _written(ins, result_bytes(ins.id))
                device = flops / _low_precision_factor(ins, m)
                costs = (flops, device, read + written, read + hbm_written)
                if not all(0 <= c < math.inf for c in costs):
                    raise Damaged("its costs are not finite and positive")
            except _DAMAGE as exc:
                why = str(exc) if isinstance(exc, Damaged) else type(exc).__name__
                damaged.append((cut_text(name, 200)[0], why))
                rows.append((host, program, name, 0.0, 0.0, 0.0, 0.0, False))
                continue
            rows.append((host, program, name, *costs, modeled))


def _low_precision_factor(ins, m: _Module) -> int:
    """XProf's normalisation of FLOPs to the device's rate (``XProfGpuCostAnalysis``): an
    instruction whose widest operand is 8-bit runs 2x as fast as 16-bit, 4-bit 4x, so its
    normalized FLOPs are model FLOPs / 2 or / 4. Library calls other than GEMMs keep theirs; a
    GEMM call goes by its first operand."""
    ids = m.operand_ids(ins)
    if ins.opcode == "custom-call":
        if not ins.custom_call_target.startswith(_GEMM_TARGETS) or not ids:
            return 1
        ids = ids[:1]
    by_id = m.by_id
    bits = [_bits(by_id[o].shape.element_type) for o in ids if o in by_id]
    widest = max((b for b in bits if b), default=0)
    return {8: 2, 4: 4}.get(widest, 1)


def _bits(element_type: int) -> int:
    """Bit width of the 8- and 4-bit types (the only ones the normalisation changes; XLA
    stores a pred in 8 bits), 16 for any other array type, 0 for tuples, tokens and opaque
    values."""
    name = _TYPE.get(element_type, "")
    if name in ("tuple", "token", "opaque_type", "primitive_type_invalid", ""):
        return 0
    if name in ("s8", "u8", "pred") or name.startswith("f8"):
        return 8
    if name in ("s4", "u4") or name.startswith("f4"):
        return 4
    return 16


def _bytes_read(ins, m: _Module, size) -> float:
    """Bytes an instruction reads: each operand's bytes; for a fusion, each operand's bytes
    times the share of it the fused computation reads (its parameter's utilisation, at
    most 1: XLA's ``FusionParameterReadBytes``)."""
    ids = m.operand_ids(ins)
    if ins.opcode != "fusion" or not ins.called_computation_ids:
        return float(sum(size(o) for o in ids))
    comp = m.comps.get(ins.called_computation_ids[0])
    if comp is None:
        return float(sum(size(o) for o in ids))
    use = _utilizations(comp, m)[0]
    params = {i.parameter_number: i.id for i in comp.instructions if i.opcode == "parameter"}
    return float(
        sum(size(o) * min(use.get(params.get(k, -1), 1.0), 1.0) for k, o in enumerate(ids))
    )


def _is_library_call(ins) -> bool:
    return ins.opcode == "custom-call" and ins.custom_call_target.startswith(_LIBRARY_PREFIXES)


def _written(ins, result_bytes: int) -> tuple[int, int]:
    """(bytes the instruction writes, of which XLA counts as HBM writes), from its result's
    bytes: a library call's tuple result less its last ``u8``/``s8`` element (the workspace,
    one byte per element), none of it an HBM write."""
    shape = ins.shape
    if not _is_library_call(ins) or shape.element_type != xla_hlo_pb2.TUPLE:
        return result_bytes, result_bytes
    parts = list(shape.tuple_shapes)
    if parts and parts[-1].element_type in (xla_hlo_pb2.U8, xla_hlo_pb2.S8):
        result_bytes = max(result_bytes - elements(parts[-1]), 0)
    return result_bytes, 0


def _flops(ins, m: _Module) -> tuple[float, bool]:
    """(FLOPs of one execution, whether XProf's rule is reproduced in full): XLA's handler
    for the opcode; a fusion adds its fused instructions' FLOPs, each times its utilisation
    (:func:`_fusion_flops`). Computed once per instruction of a program."""
    done = m.flops.get(ins.id)
    if done is None:
        done = m.flops[ins.id] = _instruction_flops(ins, m)
    return done


def _instruction_flops(ins, m: _Module) -> tuple[float, bool]:
    """:func:`_flops` of one instruction, computed."""
    op = ins.opcode
    if op == "fusion":
        total, modeled = 0.0, True
        for cid in ins.called_computation_ids:
            if cid in m.comps:
                f, ok = _fusion_flops(m.comps[cid], m)
                total, modeled = total + f, modeled and ok
        return total, modeled
    operands = m.operands(ins)
    result = ins.shape
    if op in ELEMENTWISE:  # a per-element cost times the result's elements
        per = _SM86_FLOPS_PER_ELEMENT.get(_TYPE.get(result.element_type, ""), {}).get(op, 3)
        return float(per * elements(result)), True
    if result.element_type == xla_hlo_pb2.TUPLE and op in (
        "custom-call",
        "reduce",
        "reduce-window",
    ):
        result = result.tuple_shapes[0] if result.tuple_shapes else result
    if op == "convolution" or (
        op == "custom-call" and ins.custom_call_target.startswith(_CONV_TARGETS)
    ):
        if len(operands) < 2:
            return 0.0, False
        return conv_flops(ins, operands[0], operands[1], result), True
    if op == "dot":
        if not operands:
            return 0.0, False
        contracting = ins.dot_dimension_numbers.lhs_contracting_dimensions
        return dot_flops(contracting, operands[0], result), True
    if op == "custom-call" and ins.custom_call_target.startswith(_GEMM_TARGETS) and operands:
        # XLA's rule, the dimension numbers from the call's backend config; xprof 2.24 shows
        # 0 FLOPs and 0 bytes for these calls (on the MI300X captures): ours, not modeled.
        return dot_flops(gemm_dimensions(ins), operands[0], result), False
    if op in ("reduce", "reduce-window", "scatter"):
        return _reduction_flops(ins, operands, result, m)
    if op == "concatenate":
        return float(_concat_flops_per_element(ins, operands) * elements(result)), True
    return 0.0, op in _NO_FLOPS


def _reduction_flops(ins, operands, result, m: _Module) -> tuple[float, bool]:
    """XLA's reduce, reduce-window and scatter: the applied computation's FLOPs times the
    number of times it is applied (input - output elements; (window elements - 1) × output
    elements; the update elements)."""
    sub, modeled = 0.0, True
    for cid in ins.called_computation_ids[:1]:
        if cid in m.comps:
            _utilizations(m.comps[cid], m)  # its instructions' FLOPs, callees first
        for inner in m.comps[cid].instructions if cid in m.comps else ():
            f, ok = _flops(inner, m)
            sub, modeled = sub + f, modeled and ok
    if not operands:
        return 0.0, False
    if ins.opcode == "reduce":
        count = max(m.elements(operands[0]) - elements(result), 0)
    elif ins.opcode == "reduce-window":
        window = checked_product([w.size for w in ins.window.dimensions])
        count = max(window - 1, 0) * elements(result)
    else:
        count = m.elements(operands[-1])  # scatter(operand, indices, updates)
    return sub * count, modeled


def _concat_flops_per_element(ins, operands) -> int:
    """XLA's GPU concatenate: 6 FLOPs per element (a compare and a branch), 400 where an
    operand's size along a non-major concatenated dimension is no multiple of the warp
    (divergent warps; XLA's deliberate penalty)."""
    dim = ins.dimensions[0] if ins.dimensions else 0
    if dim != 0:
        for o in operands:
            dims = o.shape.dimensions
            if 0 <= dim < len(dims) and dims[dim] % _WARP:
                return 400
    return 6


def _operand_utilization(ins, k: int, operands) -> float:
    """The share of operand ``k`` an instruction reads (XLA's operand utilisation): a slice
    or gather reads as many elements as it makes; everything else (a concatenate too, as
    xprof's numbers show) reads its operands once."""
    if ins.opcode in ("slice", "dynamic-slice", "gather") and k == 0:
        n = elements(operands[0].shape)
        return elements(ins.shape) / n if n else 0.0
    return 1.0


def _fusion_flops(comp, m: _Module) -> tuple[float, bool]:
    """XLA's GPU fusion FLOPs: the sum of each fused instruction's FLOPs times its
    utilisation (:func:`_utilizations`)."""
    return _utilizations(comp, m)[1:]


def _utilizations(comp, m: _Module) -> tuple[dict, float, bool]:
    """:func:`_computation_utilizations`, once per computation of a program (its callees'
    first: :meth:`_Module.ensure`); :class:`Damaged` for one that cannot be costed."""
    done = m.uses.get(comp.id)
    if done is None:
        m.ensure(comp.id)
        done = m.uses.get(comp.id)
        if done is None:
            raise Damaged(m.bad.get(comp.id, f"computation {comp.id} cannot be costed"))
    return done


def _computation_utilizations(comp, m: _Module) -> tuple[dict, float, bool]:
    """XLA's ``FusionCalculateUtilizations`` over a fused computation: from the root down,
    an elementwise op (or tuple) is used as much as the roots it feeds; any other op starts
    a new root whose utilisation its users give it (rounded up to whole elements).
    Returns (utilisation by instruction id, the fusion's FLOPs, whether all are modeled)."""
    order = list(comp.instructions)[::-1]  # XLA writes a computation in post order
    roots: dict = {i.id: set() for i in order}
    root_use = dict.fromkeys(roots, 0.0)
    root_use[comp.root_id] = 1.0
    roots.setdefault(comp.root_id, set()).add(comp.root_id)
    uses: dict = {}
    total, modeled = 0.0, True
    for ins in order:
        use = sum(root_use.get(r, 0.0) for r in roots.get(ins.id, ()))
        uses[ins.id] = use
        f, ok = _flops(ins, m)
        total, modeled = total + use * f, modeled and ok
        operands = m.operands(ins)
        passes = ins.opcode in ELEMENTWISE or ins.opcode in ("tuple", "get-tuple-element")
        for k, o in enumerate(operands):
            if passes:
                roots.setdefault(o.id, set()).update(roots.get(ins.id, ()))
                continue
            roots.setdefault(o.id, set()).add(o.id)
            n = m.elements(o)
            share = math.ceil(use * _operand_utilization(ins, k, operands) * n) / n if n else 0.0
            root_use[o.id] = root_use.get(o.id, 0.0) + share
    return uses, total, modeled


__all__ = ["costs_by_instruction", "instruction_costs", "program_costs"]
