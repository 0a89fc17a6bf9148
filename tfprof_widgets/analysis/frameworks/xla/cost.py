"""FLOPs and bytes of XLA's GPU instructions, as XProf 2.24 counts them for its HLO Stats,
roofline and op profile tools.

XProf runs XLA's ``GpuHloCostAnalysis`` on the programs of the capture (the GPU kernels
carry no FLOP or byte stats). We reproduce the parts of it whose rules are plain arithmetic
on the HLO (checked against xprof on the JAX H100 and AMD captures):

* bytes accessed: every operand's bytes plus the result's (a cuDNN/cuBLAS call's tuple
  result without its last ``u8`` element, the scratch workspace the library gets);
* HBM bytes: the same, except that a library call's tuple result is not counted as written
  (XLA's per-memory-space count finds no array at the tuple's top index);
* FLOPs of convolutions (the ``convolution`` opcode and cuDNN's convolution calls): 2 per
  multiply-add, ``input features / feature groups * output features * batch / batch groups
  * valid window positions`` (padding and dilation excluded), and of dots (``dot``, cuBLAS
  GEMM calls, and the dots inside fusions): 2 per multiply-add, ``result elements *
  contracting size``.

Not reproduced: the FLOPs XLA gives elementwise, reduce and scatter work, which come from a
per-GPU table of measured cycles per op (``hlo_op_profiles``) the capture does not hold;
those instructions get their dot/convolution FLOPs only (0 for most), and ``flops_modeled``
says where our count is XProf's rule in full.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from ....proto import xla_hlo_pb2
from ...inputs import per_run

# cuDNN / cuBLAS / hipBLASLt calls: a tuple result whose last element is the workspace.
_LIBRARY_PREFIXES = ("__cudnn$", "__cublas$", "__cublas", "__hipblas")
_CONV_TARGETS = ("__cudnn$conv",)
_GEMM_TARGETS = ("__cublas$gemm", "__cublas$lt$matmul")
# Opcodes with no FLOPs in XLA's cost analysis (data movement and bookkeeping).
_NO_FLOPS = frozenset(
    "parameter constant bitcast broadcast copy transpose reshape slice dynamic-slice "
    "dynamic-update-slice concatenate pad tuple get-tuple-element iota gather".split()
)


@per_run
def instruction_costs(run) -> pd.DataFrame:
    """One row per top-level instruction (not inside a fusion) of every program: host,
    program_id, instruction, flops (per execution), bytes_accessed, hbm_bytes and
    flops_modeled (our FLOP count follows XProf's rule in full for it)."""
    h = run.hlo_instructions
    size = dict(
        zip(zip(h["host"].astype(str), h["program_id"], h["instruction_id"]), h["result_bytes"])
    )
    rows: list[tuple] = []
    for host, program, module in run.hlo_modules:
        _module_costs(rows, host, program, module, size)
    cols = ["host", "program_id", "instruction", "flops", "bytes_accessed", "hbm_bytes",
            "flops_modeled"]  # fmt: skip
    if not rows:
        return pd.DataFrame({c: pd.Series(dtype=object) for c in cols})
    out = pd.DataFrame.from_records(rows, columns=cols)
    return out.astype({"program_id": np.int64, "flops": np.float64, "bytes_accessed": np.float64,
                       "hbm_bytes": np.float64, "flops_modeled": bool})  # fmt: skip


def _module_costs(rows: list, host: str, program: int, module, size: dict) -> None:
    """Append (host, program, name, flops, bytes, hbm bytes, modeled) per top-level
    instruction of ``module``; ``size`` gives each instruction's result bytes."""
    by_id = {i.id: i for c in module.computations for i in c.instructions}
    comps = {c.id: c for c in module.computations}
    for comp in module.computations:
        if comp.is_fusion_computation:
            continue
        for ins in comp.instructions:
            read = sum(size.get((host, program, o), 0) for o in ins.operand_ids)
            written, hbm_written = _written(ins, size.get((host, program, ins.id), 0))
            flops, modeled = _flops(ins, by_id, comps)
            rows.append(
                (host, program, ins.name, flops, read + written, read + hbm_written, modeled)
            )


def _is_library_call(ins) -> bool:
    return ins.opcode == "custom-call" and ins.custom_call_target.startswith(_LIBRARY_PREFIXES)


def _written(ins, result_bytes: int) -> tuple[int, int]:
    """(bytes the instruction writes, of which XLA counts as HBM writes), from its result's
    bytes: a library call's tuple result less its last ``u8`` element (the workspace, one
    byte per element), none of it an HBM write."""
    shape = ins.shape
    if not _is_library_call(ins) or shape.element_type != xla_hlo_pb2.TUPLE:
        return result_bytes, result_bytes
    parts = list(shape.tuple_shapes)
    if parts and parts[-1].element_type == xla_hlo_pb2.U8:
        result_bytes -= math.prod(parts[-1].dimensions)
    return result_bytes, 0


def _flops(ins, by_id: dict, comps: dict) -> tuple[float, bool]:
    """(FLOPs of one execution, whether XProf's rule is reproduced in full)."""
    op = ins.opcode
    operands = [by_id[o] for o in ins.operand_ids if o in by_id]
    if op == "convolution" or (op == "custom-call" and ins.custom_call_target.startswith(_CONV_TARGETS)):
        result = ins.shape.tuple_shapes[0] if ins.shape.element_type == xla_hlo_pb2.TUPLE else ins.shape
        if len(operands) < 2:
            return 0.0, False
        return _conv_flops(ins, operands[0].shape, operands[1].shape, result), True
    if op == "dot" or (op == "custom-call" and ins.custom_call_target.startswith(_GEMM_TARGETS)):
        result = ins.shape.tuple_shapes[0] if ins.shape.element_type == xla_hlo_pb2.TUPLE else ins.shape
        if not operands:
            return 0.0, False
        return _dot_flops(ins, operands[0].shape, result), True
    if op == "fusion":
        total, modeled = 0.0, True
        for cid in ins.called_computation_ids:
            for inner in comps[cid].instructions if cid in comps else ():
                f, m = _flops(inner, by_id, comps)
                total += f
                modeled &= m
        return total, modeled
    return 0.0, op in _NO_FLOPS


def _dot_flops(ins, lhs, result) -> float:
    """2 × result elements × contracting size (XLA's ``GetDotFlops``)."""
    dims = list(lhs.dimensions)
    contracting = [dims[d] for d in ins.dot_dimension_numbers.lhs_contracting_dimensions if d < len(dims)]
    if not contracting and ins.opcode == "custom-call" and dims:
        contracting = [dims[-1]]  # a GEMM call: the backend config names it; rows × K
    return 2.0 * math.prod(result.dimensions) * math.prod(contracting)


def _conv_flops(ins, lhs, rhs, result) -> float:
    """XLA's ``GetConvolutionFlops``: 2 × (input features / feature groups) × output
    features × (batch / batch groups) × the product over spatial dimensions of the
    (output, kernel) position pairs that read an input element (padding excluded)."""
    dn = ins.convolution_dimension_numbers
    ld, rd, od = list(lhs.dimensions), list(rhs.dimensions), list(result.dimensions)
    try:
        in_feat = ld[dn.input_feature_dimension]
        out_feat = od[dn.output_feature_dimension]
        batch = ld[dn.input_batch_dimension]
        valid = 1
        for k, w in enumerate(ins.window.dimensions):
            valid *= _valid_positions(
                rd[dn.kernel_spatial_dimensions[k]],
                od[dn.output_spatial_dimensions[k]],
                ld[dn.input_spatial_dimensions[k]],
                w,
            )
    except IndexError:
        return 0.0
    groups = max(ins.feature_group_count, 1)
    batch_groups = max(ins.batch_group_count, 1)
    return 2.0 * (in_feat // groups) * out_feat * (batch // batch_groups) * valid


def _valid_positions(kernel: int, output: int, inp: int, w) -> int:
    """How many (kernel index, output index) pairs of one spatial dimension read an input
    element: the undilated input index ``out*stride - pad_low + k*window_dilation`` must be
    a multiple of the base dilation and, divided by it, inside the input."""
    stride = max(w.stride, 1)
    wdil = max(w.window_dilation, 1)
    bdil = max(w.base_dilation, 1)
    k = np.arange(kernel)[:, None]
    o = np.arange(output)[None, :]
    undilated = o * stride - w.padding_low + k * wdil
    ok = (undilated % bdil == 0) & (undilated // bdil >= 0) & (undilated // bdil < inp)
    return int(ok.sum())


__all__ = ["instruction_costs"]
