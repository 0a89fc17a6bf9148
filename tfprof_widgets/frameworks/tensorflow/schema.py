"""The columns of the tables only TensorFlow captures have, documented once (the conventions
are :mod:`tfprof_widgets.schema`'s, which re-exports every table here: look them up there).

TF1 tfprof (a ``tfprof`` ProfileProto, ``Run.tfprof_nodes`` / ``Run.tfprof_execs``):
TFPROF_NODES, TFPROF_EXECS; its analyses: TFPROF_NODE_STATS, TFPROF_TABLE, TFPROF_ADVICE.
tf.data (``run.tf_data``, ``run.tf_data_bottleneck``): TF_DATA_ITERATORS, TF_DATA_EXECUTIONS,
TF_DATA_PIPELINES, TF_DATA_EVENTS, TF_DATA_ITERATOR_STATS, TF_DATA_BOTTLENECK.
"""

from __future__ import annotations

__all__ = [
    "TFPROF_NODES",
    "TFPROF_EXECS",
    "TFPROF_NODE_STATS",
    "TFPROF_TABLE",
    "TFPROF_ADVICE",
    "TF_DATA_ITERATORS",
    "TF_DATA_EXECUTIONS",
    "TF_DATA_PIPELINES",
    "TF_DATA_EVENTS",
    "TF_DATA_ITERATOR_STATS",
    "TF_DATA_BOTTLENECK",
]

TFPROF_NODES: dict[str, tuple[str, str]] = {
    "host": ("category", "Host (the capture file)."),
    "node": ("object", "Graph node name, e.g. 'dense/MatMul'."),
    "op": ("category", "Op type, e.g. 'MatMul' (from the graph, or RunMetadata's timeline label)."),
    "device": ("category", "Device the node ran on (tfprof's canonical device); '' if never."),
    "op_types": (
        "object",
        "Tuple of tfprof account types: the op type, the device, and "
        "'_trainable_variables' etc. (empty without a graph).",
    ),
    "float_ops": (
        "Int64",
        "Floating-point operations of one run, from TF's registered "
        "statistics (NA without a graph).",
    ),
    "parameters": (
        "Int64",
        "Elements of a variable (product of its shape); 0 for other nodes, NA without a graph.",
    ),
    "trainable": ("boolean", "Whether the node is a trainable variable."),
    "inputs": ("object", "Tuple of input node names (empty without a graph)."),
    "data_format": ("object", "The node's data_format attribute ('NHWC', 'NCHW'...), or ''."),
    "code": (
        "object",
        "Tuple of 'file:line:function' frames that created the node, "
        "outermost first (empty without a traceback).",
    ),
}

TFPROF_EXECS: dict[str, tuple[str, str]] = {
    "host": ("category", "Host (the capture file)."),
    "node": ("object", "Graph node name."),
    "step": ("int64", "Step (the add_step number, or the RunMetadata file's position)."),
    "run_count": (
        "int64",
        "Times the node ran on a CPU device in the step (while loops run it more than once).",
    ),
    "exec_us": ("float64", "tfprof's exec time: accelerator + CPU kernel time, µs."),
    "accelerator_exec_us": ("float64", "Kernel time on '.../stream:all' devices, µs."),
    "cpu_exec_us": ("float64", "Op time on CPU/GPU devices (op_end_rel, at least 1 µs), µs."),
    "start_us": ("float64", "Epoch µs when the node first started in the step."),
    "requested_bytes": ("int64", "Memory requested by the node (allocators + temp + persistent)."),
    "peak_bytes": ("int64", "Peak memory of the node's allocations."),
    "residual_bytes": ("int64", "Memory still held after the node ran."),
    "output_bytes": ("int64", "Bytes of the node's output tensors."),
}

TFPROF_NODE_STATS: dict[str, tuple[str, str]] = {
    **{c: TFPROF_NODES[c] for c in ("host", "node", "op", "device", "op_types")},
    "float_ops": ("int64", "Floating-point operations of one run (0 without a graph)."),
    "parameters": ("int64", "Variable elements (0 for other nodes)."),
    **{c: TFPROF_NODES[c] for c in ("trainable", "inputs")},
    "data_format": ("str", TFPROF_NODES["data_format"][1]),
    "code": TFPROF_NODES["code"],
    "run_count": ("int64", TFPROF_EXECS["run_count"][1]),
    **{c: TFPROF_EXECS[c] for c in ("exec_us", "accelerator_exec_us", "cpu_exec_us")},
    **{
        c: TFPROF_EXECS[c]
        for c in ("requested_bytes", "peak_bytes", "residual_bytes", "output_bytes")
    },
}

TFPROF_TABLE: dict[str, tuple[str, str]] = {
    # Then, for each figure of `select`, its own value and `total_<figure>` (the row and what
    # hangs below it), float64: exec_us, requested_bytes, parameters, float_ops, run_count...
    "name": ("str", "Scope, op type, graph node or code frame."),
    "depth": ("int64", "Depth shown (0 at the top)."),
    "parent": ("str", "The shown parent row's name ('' at the top)."),
    "nodes": ("int64", "Graph nodes in the row and below."),
}

TFPROF_ADVICE: dict[str, tuple[str, str]] = {
    "checker": ("str", "tfprof's checker ('AcceleratorUtilizationChecker', ...)."),
    "finding": ("str", "What it found."),
}

TF_DATA_ITERATORS: dict[str, tuple[str, str]] = {
    "host": ("str", "Host."),
    "iterator_id": ("int64", "The iterator's 'id' stat."),
    "parent_id": ("int64", "Its parent iterator's id (0 for a root)."),
    "name": ("str", "Its own kind, e.g. 'Map'."),
    "long_name": ("str", "Its path from the root, 'Iterator::Root::Batch::Map'."),
    "depth": ("int64", "1 for a root, +1 per level."),
    "is_async": ("bool", "Runs its input elsewhere (Prefetch, ParallelMap, ...)."),
    "pipeline": (
        "Int64",
        "Root iterator id of its pipeline; <NA> when its parents lead to no "
        "root the capture holds (its events are then left out).",
    ),
}

TF_DATA_EXECUTIONS: dict[str, tuple[str, str]] = {
    "host": ("str", "Host."),
    "pipeline": ("int64", "Root iterator id."),
    "pipeline_name": ("str", "'Host:<n>', numbered per host by first call."),
    "event": ("int64", "Row of the root call in Run.events."),
    "start_us": ("float64", "Start of the call, µs."),
    "dur_us": ("float64", "Its latency, µs."),
    "is_slow": ("bool", "Slower than 50 µs (XProf's threshold)."),
}

TF_DATA_PIPELINES: dict[str, tuple[str, str]] = {
    "host": ("str", "Host."),
    "pipeline": ("int64", "Root iterator id."),
    "pipeline_name": ("str", "'Host:<n>'."),
    "calls": ("int64", "Root calls (GetNext on the pipeline)."),
    "avg_latency_us": ("float64", "Average call latency, µs."),
    "min_latency_us": ("float64", "Fastest call, µs."),
    "max_latency_us": ("float64", "Slowest call, µs."),
    "slow_calls": ("int64", "Calls slower than 50 µs."),
}

TF_DATA_EVENTS: dict[str, tuple[str, str]] = {
    "row": ("int64", "Row of the event in Run.events."),
    "host": ("str", "Host."),
    "line": ("str", "Thread it ran on."),
    "iterator_id": ("int64", "Iterator."),
    "parent_id": ("int64", "Parent iterator."),
    "long_name": ("str", "Iterator path."),
    "depth": ("int64", "Iterator depth."),
    "start_us": ("float64", "Start, µs."),
    "end_us": ("float64", "End, µs."),
    "dur_us": ("float64", "Duration, µs."),
    "pipeline": ("int64", "Root iterator id."),
    "execution": ("int64", "Row in TF_DATA_EXECUTIONS of the root call it belongs to."),
    "parent_event": (
        "int64",
        "Index (in this table) of the parent iterator's event, -1 for roots.",
    ),
    "self_us": ("float64", "Duration minus the overlap with its children, µs."),
    "is_blocking": ("bool", "On the call's critical path (its parent is and they overlap)."),
}

TF_DATA_ITERATOR_STATS: dict[str, tuple[str, str]] = {
    "iterator_id": ("int64", "Iterator."),
    "name": ("str", "Its kind."),
    "long_name": ("str", "Its path."),
    "depth": ("int64", "Its depth."),
    "start_us": ("float64", "First start in the call, µs."),
    "total_us": ("float64", "Sum of its events' durations in the call, µs."),
    "self_us": ("float64", "Sum of their self times, µs."),
    "calls": ("int64", "Its events in the call."),
    "is_blocking": ("bool", "Any of them on the critical path."),
    "is_async": ("bool", "An asynchronous iterator."),
}

TF_DATA_BOTTLENECK: dict[str, tuple[str, str]] = {
    "host": ("str", "Host."),
    "input_pipeline": ("str", "'Host:<n>'."),
    "max_latency_us": ("float64", "Its slowest call, µs."),
    "iterator_name": ("str", "The bottleneck iterator's kind."),
    "iterator_long_name": ("str", "Its path."),
    "iterator_latency_us": ("float64", "Its self time in the slowest call, µs."),
    "bottleneck_type": ("str", "'slow_source', 'parallel_version', 'sequential', ..."),
    "suggestion": ("str", "What to do about it (XProf's words)."),
}
