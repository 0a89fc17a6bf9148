"""Shape arithmetic of XLA's cost model, checked: elements of a shape, and the FLOPs of a dot,
a GEMM library call and a convolution (windows counted position by position, as XLA's
``HloCostAnalysis`` does), each raising :class:`Damaged` for a shape or window no XLA program
can hold (:mod:`.cost` leaves that instruction's costs out and says why)."""

from __future__ import annotations

import json
import math

import numpy as np

from ...proto import xla_hlo_pb2

MAX_POSITIONS = 50_000_000  # window positions counted per spatial dimension, at most
CHUNK = 1 << 20  # kernel positions counted at once (bounds the arrays of a huge window)
MAX_ELEMENTS = (1 << 63) - 1  # an XLA shape's elements fit int64


class Damaged(ValueError):
    """An instruction no XLA program can hold: its costs are left out (the reason says
    why)."""


def elements(shape) -> int:
    """Elements of a shape, every element of a tuple counted (``ElementsInRecursive``);
    :class:`Damaged` for a dimension below 0 (XLA's unbounded dimension is INT64_MIN) or
    more than 2^63 - 1 elements (XLA counts them in int64)."""
    if shape.element_type == xla_hlo_pb2.TUPLE:
        total = sum(elements(s) for s in shape.tuple_shapes)
        if total > MAX_ELEMENTS:
            raise Damaged("its shape has more than 2^63 elements")
        return total
    return checked_product(shape.dimensions)


def checked_product(dims) -> int:
    """The product of dimensions, checked: :class:`Damaged` where one is negative or the
    product passes 2^63 - 1 (decided from the dimensions' logarithms: a product of 200,000
    dimensions of 2^62 is never multiplied out)."""
    n = len(dims)
    if n == 0:
        return 1
    if n <= 8:  # the usual shape: Python's ints, no array made
        values = list(dims)
        if min(values) < 0:
            raise Damaged("a dimension is below 0")
        out = math.prod(values)
        if out > MAX_ELEMENTS:
            raise Damaged("its shape has more than 2^63 elements")
        return out
    a = np.asarray(dims, dtype=np.int64)
    if (a < 0).any():
        raise Damaged("a dimension is below 0")
    if (a == 0).any():
        return 0
    if float(np.log2(a.astype(np.float64)).sum()) > 63.5:
        raise Damaged("its shape has more than 2^63 elements")
    out = math.prod(a[a > 1].tolist())
    if out > MAX_ELEMENTS:
        raise Damaged("its shape has more than 2^63 elements")
    return out


def dot_flops(contracting_dims, lhs, result) -> float:
    """2 × result elements × contracting size (XLA's ``GetDotFlops``): each contracting
    dimension of the left operand counted once, one outside its shape refused."""
    dims = lhs.shape.dimensions
    rank = len(dims)
    wanted = set(contracting_dims)
    if any(d < 0 or d >= rank for d in wanted):
        raise Damaged("a contracting dimension is outside its operand's shape")
    contracting = checked_product([dims[d] for d in sorted(wanted)])
    return 2.0 * elements(result) * contracting


def gemm_dimensions(ins) -> list[int]:
    """A cuBLAS GEMM call's contracting dimensions of the left operand, from its JSON
    backend config (none where the config does not say); each listed once, and one that is
    no dimension of the operand's shape (XLA's ranks are small) refused."""
    try:
        config = json.loads(ins.backend_config or b"{}")
        lhs = config["gemm_backend_config"]["dot_dimension_numbers"]["lhs_contracting_dimensions"]
        return sorted({int(d) for d in lhs})
    except (ValueError, KeyError, TypeError, OverflowError, RecursionError):
        return []


def conv_flops(ins, lhs_ins, rhs_ins, result) -> float:
    """XLA's ``GetConvolutionFlops``: 2 × (input features / feature groups) × output
    features × (batch / batch groups) × the product over spatial dimensions of the
    (output, kernel) position pairs that read an input element (padding excluded)."""
    dn = ins.convolution_dimension_numbers
    ld, rd, od = lhs_ins.shape.dimensions, rhs_ins.shape.dimensions, result.dimensions
    for dims in (ld, rd, od):
        checked_product(dims)  # no dimension below 0, no shape past 2^63

    def at(dims, k: int) -> int:
        if not 0 <= k < len(dims):
            raise Damaged("a convolution dimension number is outside its shape")
        return dims[k]

    in_feat = at(ld, dn.input_feature_dimension)
    out_feat = at(od, dn.output_feature_dimension)
    batch = at(ld, dn.input_batch_dimension)
    valid = 1.0
    windows = ins.window.dimensions
    spatial = (dn.kernel_spatial_dimensions, dn.output_spatial_dimensions,
               dn.input_spatial_dimensions)  # fmt: skip
    if any(len(s) < len(windows) for s in spatial):
        return 0.0  # as XLA's rule with a window it cannot place
    for k, w in enumerate(windows):
        valid *= valid_positions(
            at(rd, spatial[0][k]), at(od, spatial[1][k]), at(ld, spatial[2][k]), w
        )
    groups = max(ins.feature_group_count, 1)
    batch_groups = max(ins.batch_group_count, 1)
    return 2.0 * (in_feat // groups) * out_feat * (batch // batch_groups) * valid


def valid_positions(kernel: int, output: int, inp: int, w) -> int:
    """How many (kernel index, output index) pairs of one spatial dimension read an input
    element: the undilated input index ``out*stride - pad_low + k*window_dilation`` must be
    a multiple of the base dilation and, divided by it, inside the input. Counted over
    kernel positions in chunks (a window of 5e7 positions never makes arrays of that
    size); a window or output past MAX_POSITIONS, or strides and padding whose indices
    pass int64, are refused."""
    stride = max(w.stride, 1)
    wdil = max(w.window_dilation, 1)
    bdil = max(w.base_dilation, 1)
    kernel, output = max(kernel, 0), max(output, 0)
    if kernel > MAX_POSITIONS or output > MAX_POSITIONS:
        raise Damaged("its window has more than 5e7 positions")
    reach = kernel * wdil + output * stride + abs(w.padding_low) + inp * bdil
    if reach > 1 << 62:
        raise Damaged("its window's indices pass int64")
    if not kernel or not output:
        return 0
    total = 0
    if bdil == 1:
        # outputs o with 0 <= o*stride - pad + k*wdil < inp, counted per kernel index
        for k0 in range(0, kernel, CHUNK):
            k = np.arange(k0, min(k0 + CHUNK, kernel), dtype=np.int64)
            first = np.maximum(-((k * wdil - w.padding_low) // stride), 0)
            last = np.minimum((inp - 1 - k * wdil + w.padding_low) // stride, output - 1)
            total += int(np.maximum(last - first + 1, 0).sum())
        return total
    if kernel * output > MAX_POSITIONS:
        raise Damaged("its window has more than 5e7 positions")
    o = np.arange(output, dtype=np.int64)[None, :]
    rows = max(CHUNK // output, 1)
    for k0 in range(0, kernel, rows):
        k = np.arange(k0, min(k0 + rows, kernel), dtype=np.int64)
        undilated = o * stride - w.padding_low + k[:, None] * wdil
        q = undilated // bdil
        total += int(((undilated % bdil == 0) & (q >= 0) & (q < inp)).sum())
    return total
