"""TensorFlow's rules: its step markers, op names, device-op attribution, input ops and
advice — the XProf rules as they apply to TF captures.

* Steps: ``tf.profiler.experimental.Trace('train', step_num=s, _r=1)`` (XProf's rule) and
  Keras 3's ``Profiled batch`` (which XProf 2.24 misses); without any marker, each call of the
  most-called ``tf.function`` is a step (XProf finds none there: we differ on purpose). The
  eager runtime's wrappers (``EagerExecute``...) are not host compute.
* Ops: events named ``op_name:OpType`` (XProf's ``ParseTfOpFullname``, :mod:`.op_names`); a
  GPU kernel's op is its ``tf_op`` stat (XProf's), else its ``level 0`` annotation or the
  ``tf_op:`` token of its ``kernel_details`` (TF 2.x records them there; ours only).
* Input: tf.data ``Dataset`` ops, host-to-device copies and infeed enqueues, classified as
  XProf's input-pipeline analyzer does; its advice names the tf.data API.
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd

from ... import stat_columns
from ...analysis.event_types import (
    DEVICE_TO_DEVICE,
    DEVICE_TO_HOST,
    HOST_COMPUTE,
    HOST_TO_DEVICE,
    HOST_TO_HOST,
    HOST_WAIT_INPUT,
)
from ..base import Advice, DeviceOps, Framework, RunNames, name_flags
from .op_names import UNKNOWN, name_table

_TF_STATS = frozenset({"tf_function_call", "is_eager", "eager_op", "step_name", "level 0"})
# tf.client.timeline's Chrome export of RunMetadata names each node's op and inputs.
_TIMELINE_STATS = frozenset({"op", "input0"})
# TF's own thread pools (JAX's runtime also names one 'tf_pjrt_thread_pool').
_TF_LINES = ("tf_Compute", "tf_data", "tf_numa", "tf_inter_op", "tf_intra_op", "tf_Eigen")
# 'scope/OpName:OpType' where the op's own name is its type (numbered or not): how TF's
# executor names op events ('dense/MatMul:MatMul', 'conv1/Relu_1:Relu').
_TF_OP_EVENT = r"^(?:[^:]*/)?(?P<op>[A-Za-z][A-Za-z0-9]*)(?:_\d+)?:(?P=op)$"
_TF_EVENTS = ("Iterator::", "EagerExecute", "EagerKernelExecute", "Profiled batch")
_WRAPPERS = ("EagerExecute", "EagerLocalExecute", "EagerKernelExecute", "FunctionRun")
_INFEED_TYPES = ("InfeedEnqueue", "InfeedEnqueueTuple", "InfeedEnqueueTupleOp")
_ENQUEUE_TYPES = (*_INFEED_TYPES, "MemcpyHToD")
_FILE_READERS = (
    "::TFRecord",
    "::TextLine",
    "::FixedLengthRecord",
    "::SSTable",
    "::RecordIO",
    "::ArrayRecord",
)
_IN_ADVANCE = ("::MemoryReader", "::MemoryWriter", "::Interleave", "::Prefetch", "::ParallelMap")
_TF_OP_TOKEN = re.compile(r"(?:^|[ \n])tf_op:(\S*)")
# XProf's IsOpTensorCoreEligible: op names (suffixes) whose kernels could use Tensor Cores.
_TENSOR_CORE_SUFFIXES = (
    "Conv2D",
    "Conv2DBackpropFilter",
    "Conv2DBackpropInput",
    "Conv3D",
    "DepthwiseConv2dNative",
    "DepthwiseConv2dNativeBackpropFilter",
    "DepthwiseConv2dNativeBackpropInput",
    "/MatMul",
    "FusedMatMul",
    "/CudnnRNN",
    "XlaDot",
    "XlaDotV2",
)
_TENSOR_CORE_PARTS = ("BatchMatMul", "CudnnRNNV", "CudnnRNNForward", "CudnnRNNBackprop")

ADVICE = Advice(
    mark_steps=(
        "No step marker observed and hence the step time is unknown. Mark steps with "
        "tf.profiler.experimental.Trace('train', step_num=step, _r=1), or profile for longer "
        "than one step."
    ),
    input_tool="tf.data",
    launch_contention=(
        " It could be due to CPU contention with tf.data. In this case, you may "
        "try to set the environment variable TF_GPU_THREAD_MODE=gpu_private."
    ),
    input_next_step="Look at Section 3 for the breakdown of input time on the host.",
    no_input_pipeline_next_step=(
        "Consider using the tf.data API to enable profiler's host-side analysis for input "
        "pipeline. Profiler currently does not support custom input pipeline (please ignore "
        "Section 3 below)."
    ),
    input_recommendations=(
        "Enqueuing data: you may want to combine small input data chunks into fewer but "
        "larger chunks.",
        "Data preprocessing: you may increase num_parallel_calls in Dataset map() or "
        "preprocess the data OFFLINE.",
        "Reading data from files in advance: you may tune parameters in the following "
        "tf.data API (prefetch size, interleave cycle_length, reader buffer_size)",
        "Reading data from files on demand: you should read data IN ADVANCE using the "
        "following tf.data API (prefetch, interleave, reader buffer)",
        "Other data reading or processing: you may consider using the tf.data API (if you "
        "are not using it now)",
    ),
    notebook_words=(
        (
            "Look at Section 3 for the breakdown of input time on the host.",
            "See where the host's input time goes in the input-pipeline view "
            "(tw.views.input_pipeline(run)) and the tf.data bottleneck in "
            "tw.views.tf_data_graph(run).",
        ),
        (
            "(please ignore Section 3 below)",
            "(the input-pipeline view has nothing to show)",
        ),
        *Advice.notebook_words,
    ),
)


def function_call_markers(
    events: pd.DataFrame, event_stats, eligible: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Calls of the most-called tf.function as step markers: (mask, step number per event).

    TF records each Python-level call of a ``tf.function`` as an event carrying the
    ``tf_function_call`` stat ("traced-nonXla", "notTraced-nonXla", ...).
    """
    n = len(events)
    _, is_call = stat_columns.strings(event_stats, "tf_function_call", n)
    is_call &= eligible
    mask = np.zeros(n, bool)
    steps = np.zeros(n, np.int64)
    if is_call.sum() < 2:
        return mask, steps
    codes = events["name"].cat.codes.to_numpy()
    counts = np.bincount(codes[is_call], minlength=len(events["name"].cat.categories))
    if counts.max() < 2:
        return mask, steps
    mask = is_call & (codes == int(np.argmax(counts)))
    rows = np.flatnonzero(mask)
    rows = rows[np.argsort(events["start_us"].to_numpy()[rows], kind="stable")]
    steps[rows] = np.arange(len(rows))
    return mask, steps


def ops_of_annotations(level0: np.ndarray, details: np.ndarray) -> np.ndarray:
    """The TF op each kernel's ``level 0`` annotation (else the 'tf_op:' token of its
    ``kernel_details``) names, '' where neither does (each distinct text looked at once)."""
    codes, uniques = pd.factorize(details, use_na_sentinel=True)
    tokens = []
    for d in uniques.tolist():
        m = _TF_OP_TOKEN.search(str(d))
        tokens.append(m.group(1) if m else "")
    token = np.append(np.array(tokens, dtype=object), "")[codes]
    has = np.array([isinstance(a, str) and a != "" for a in level0], bool)
    out = token.copy()
    out[has] = level0[has]
    return out


def parsed_values(values: np.ndarray, memo: dict | None = None) -> tuple[np.ndarray, ...]:
    """ParseTfOpFullname of each value (category, op_name, op_type arrays), parsing each
    distinct value once."""
    codes, uniques = pd.factorize(values, use_na_sentinel=False)
    table = name_table(pd.Index(uniques, dtype=object), memo)
    return tuple(table[c].to_numpy()[codes] for c in ("category", "op_name", "op_type"))


def ops_of_tf_op_stat(run, rows: np.ndarray, annotations: bool) -> DeviceOps:
    """Device events ``rows`` attributed by their ``tf_op`` stat (XProf's rule) and, with
    ``annotations``, else by their ``level 0`` annotation or ``kernel_details`` (ours)."""
    ev = run.events
    n = len(ev)
    tf_op = ev["tf_op"].array
    by_stat = np.append(tf_op.categories.astype(str).to_numpy(), "").astype(object)[
        np.asarray(tf_op.codes)[rows]
    ]
    _, has_hlo = stat_columns.strings(run.stat_store, "hlo_op", n)
    has_hlo = has_hlo[rows]
    name = by_stat.copy()
    ours = by_stat == ""
    if annotations and ours.any():
        level0, _ = stat_columns.strings(run.stat_store, "level 0", n)
        details, _ = stat_columns.strings(run.stat_store, "kernel_details", n)
        name[ours] = ops_of_annotations(level0[rows[ours]], details[rows[ours]])
    keep = name != ""
    rows, name, by_stat, has_hlo = rows[keep], name[keep], by_stat[keep], has_hlo[keep]
    category, op_name, op_type = parsed_values(name)
    from_stat = (by_stat != "") & ~has_hlo
    # An annotation that is no TF op (a TraceMe such as 'MakeTensorFromProto') names none.
    valid = (category != UNKNOWN) | from_stat
    return DeviceOps(rows[valid], op_name[valid], op_type[valid], ~from_stat[valid])


class TensorFlow(Framework):
    name = "tensorflow"
    title = "TensorFlow"
    op_label = "TF op"
    vocabulary = (
        "Profiled batch",
        "EagerExecute",
        "EagerKernelExecute",
        "FunctionRun",
        "tf_function_call",
        "IteratorGetNext",
        "InfeedEnqueue",
        "MemcpyHToD",
        "MemcpyDToH",
        "MemcpyDToD",
        "MemcpyHToH",
        "Iterator::",
        "level 0",
        "tf.data",
        "tf.profiler",
        "tf.function",
        "TF_GPU_THREAD_MODE",
    )
    advice = ADVICE
    input_op_types = ("Dataset", *_ENQUEUE_TYPES)
    copy_op_types = {
        "MemcpyHToD": HOST_TO_DEVICE,
        "MemcpyDToH": DEVICE_TO_HOST,
        "MemcpyDToD": DEVICE_TO_DEVICE,
    }

    def present(self, names: RunNames) -> bool:
        if names.tfprof or names.tool_data or names.stats & _TF_STATS:
            return True
        if _TIMELINE_STATS <= names.stats or names.lines.str.startswith(_TF_LINES).any():
            return True
        events = names.events
        return bool(events.str.startswith(_TF_EVENTS).any() or events.str.match(_TF_OP_EVENT).any())

    def step_marker_names(self, names: pd.Series) -> np.ndarray:
        return super().step_marker_names(names) | name_flags(names, "Profiled batch".__eq__)

    def implicit_step_markers(self, events, stats, host: np.ndarray):
        return function_call_markers(events, stats, host)

    def host_wrappers(self, names: pd.Series) -> np.ndarray:
        return name_flags(names, lambda t: t.startswith(_WRAPPERS))

    def host_event_types(self, names: pd.Series, op_types: np.ndarray) -> np.ndarray:
        types = np.full(len(names), HOST_COMPUTE, np.int16)
        types[name_flags(names, lambda t: t.lower().startswith("iteratorgetnext"))] = (
            HOST_WAIT_INPUT
        )
        types[op_types == "MemcpyHToH"] = HOST_TO_HOST
        types[np.isin(op_types, list(_ENQUEUE_TYPES))] = HOST_TO_DEVICE
        return types

    def parse_op_names(self, names: pd.Index, memo: dict | None = None) -> pd.DataFrame:
        return name_table(names, memo)

    def device_ops(self, run, rows: np.ndarray) -> DeviceOps:
        return ops_of_tf_op_stat(run, rows, annotations=True)

    def input_op_class(self, name: str, op_type: str) -> str:
        if op_type in _ENQUEUE_TYPES:
            return "Enqueue"
        if name.endswith(_FILE_READERS):
            if any(s in name for s in _IN_ADVANCE):
                return "Advanced file read"
            return "Demanded file read"
        return "Preprocessing"

    def input_pipeline_in_use(self, ops: pd.DataFrame) -> bool:
        return bool(((ops["host_or_device"] == "Host") & (ops["type"] == "Dataset")).any())

    def tensor_core_eligible(self, op_name: str) -> bool:
        return op_name.endswith(_TENSOR_CORE_SUFFIXES) or any(
            s in op_name for s in _TENSOR_CORE_PARTS
        )
