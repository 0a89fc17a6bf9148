"""The columns of every DataFrame a :class:`~tfprof_widgets.Run` exposes, documented once.

Conventions, the same in every table:

* times are float64 microseconds named ``*_us``; raw integer times keep their unit
  (``*_ps``, ``*_ns``) and are int64;
* ``start_us`` is relative to the earliest event of the whole run (all hosts); the absolute
  time of ``start_us == 0`` is ``Run.t0_ns`` (nanoseconds since the Unix epoch when known);
* string columns are pandas categoricals, nullable integers use pandas' ``Int32``/``Int64``;
* ``host`` is the capture file's host name (the file name before ``.xplane.pb``), ``plane``
  the XPlane name (``/host:CPU``, ``/device:GPU:0``), ``line`` the XLine (a thread on the
  host, a stream or derived line such as ``Steps`` / ``TensorFlow Ops`` on a device).

The dicts below map column name -> (dtype, meaning). Tests assert that the tables match them.
"""

from __future__ import annotations

EVENTS: dict[str, tuple[str, str]] = {
    "host": ("category", "Host the event was captured on (capture file name without suffix)."),
    "plane": ("category", "XPlane name: '/host:CPU', '/device:GPU:0', ..."),
    "line": (
        "category",
        "XLine (thread, stream or derived line) the event sits on; names are "
        "made unique within a plane by appending ' #<line id>' on collisions.",
    ),
    "name": (
        "category",
        "Event name from the plane's event metadata. TF ops read "
        "'op_name:OpType'; tf.data iterators 'Iterator::Root::...'.",
    ),
    "start_us": (
        "float64",
        "Start, microseconds after the earliest event of the run. NaN for "
        "aggregated events (see occurrences).",
    ),
    "dur_us": ("float64", "Duration in microseconds (for aggregated events: as recorded)."),
    "end_us": ("float64", "start_us + dur_us."),
    "occurrences": (
        "int32",
        "1 for a timed event; N for an aggregated XEvent that carries "
        "num_occurrences instead of an offset (no start time).",
    ),
    "group_id": (
        "Int32",
        "Step group: the 'group_id' stat when the capture has one, else derived "
        "like XProf does, from step markers, nesting on a thread and "
        "producer/consumer flow links (_p/_c). <NA> outside any step.",
    ),
    "step": ("Int64", "Step number (the step marker's 'step_num'/'iter_num') of the group."),
    "tf_op": (
        "category",
        "The 'tf_op' stat: TF op ('name:Type') that launched a device kernel "
        "or memory event. NaN where absent.",
    ),
}

EVENT_STATS: dict[str, tuple[str, str]] = {
    "event": ("int64", "Row position in Run.events this stat belongs to."),
    "stat": ("category", "Stat name from the plane's stat metadata ('step_num', 'tf_op', ...)."),
    "kind": (
        "category",
        "Wire type of the value: int, uint, double, str, bytes (ref values and "
        "compressed strings are resolved to str).",
    ),
    "int_value": (
        "int64",
        "Value for kinds int and uint (uint stored two's complement; "
        "Run.stat() returns it as uint64). 0 otherwise.",
    ),
    "float_value": ("float64", "Value for kind double; NaN otherwise."),
    "str_value": ("category", "Value for kinds str and bytes (bytes kept as Python bytes)."),
}

PLANES: dict[str, tuple[str, str]] = {
    "host": ("category", "Host."),
    "plane": ("category", "XPlane name."),
    "plane_id": ("int64", "XPlane id as stored (not unique: TF writes 0 for several planes)."),
    "device_kind": (
        "category",
        "'CPU' for /host:CPU, 'GPU'/'TPU'/'CUSTOM' for devices, "
        "'metadata' for planes without a timeline (Task Environment).",
    ),
    "device_ordinal": ("Int32", "N of '/device:GPU:N'; <NA> for host planes."),
    "n_lines": ("int32", "Number of lines."),
    "n_events": ("int64", "Number of events on all its lines."),
    "core_count": ("Int64", "Device 'core_count' plane stat (SMs on a GPU)."),
    "clock_rate": ("Int64", "Device 'clock_rate' plane stat (kHz, as TF records it)."),
    "memory_size": ("Int64", "Device 'memory_size' plane stat (bytes)."),
    "memory_bandwidth": ("Int64", "Device 'memory_bandwidth' plane stat (bytes/s)."),
    "compute_cap_major": ("Int64", "CUDA compute capability, major."),
    "compute_cap_minor": ("Int64", "CUDA compute capability, minor."),
}

LINES: dict[str, tuple[str, str]] = {
    "host": ("category", "Host."),
    "plane": ("category", "XPlane name."),
    "line": ("category", "Line name as used in Run.events (made unique within the plane)."),
    "line_id": ("int64", "XLine id (a thread id on the host)."),
    "display_name": ("category", "XLine display_name, or the name when it has none."),
    "timestamp_ns": (
        "int64",
        "XLine timestamp_ns as stored (often relative to profile_start_time).",
    ),
    "duration_ps": ("int64", "XLine duration_ps as stored."),
    "n_events": ("int64", "Number of events on the line."),
}

EVENT_METADATA: dict[str, tuple[str, str]] = {
    "host": ("category", "Host."),
    "plane": ("category", "XPlane name."),
    "metadata_id": ("int64", "XEventMetadata id (the key events refer to)."),
    "name": ("category", "Event name."),
    "display_name": ("category", "Display name (TF: the op type), or NaN."),
    "n_stats": ("int32", "Stats attached to the metadata (see Run.metadata_stats)."),
    "n_children": ("int32", "Entries in child_id."),
    "metadata_bytes": ("int64", "Length of the opaque 'metadata' bytes field."),
}

# Long tables of stats that are not per event share EVENT_STATS' value columns.
STAT_VALUE_COLUMNS = ("stat", "kind", "int_value", "float_value", "str_value")

PLANE_STATS: dict[str, tuple[str, str]] = {
    "host": ("category", "Host."),
    "plane": ("category", "XPlane name."),
    **{c: EVENT_STATS[c] for c in STAT_VALUE_COLUMNS},
}

METADATA_STATS: dict[str, tuple[str, str]] = {
    "host": ("category", "Host."),
    "plane": ("category", "XPlane name."),
    "metadata_id": ("int64", "XEventMetadata id the stat is attached to."),
    **{c: EVENT_STATS[c] for c in STAT_VALUE_COLUMNS},
}

RUNS: dict[str, tuple[str, str]] = {
    "run": ("object", "Run name: the directory under plugins/profile (YYYY_MM_DD_HH_MM_SS)."),
    "path": ("object", "Absolute path of the run directory."),
    "hosts": ("object", "Tuple of host names (capture files) in the run."),
    "bytes": ("int64", "Total size of the run's capture files."),
    "mtime": ("datetime64[ns]", "Newest modification time among the capture files (local)."),
}

PROFILE_OPTIONS: dict[str, tuple[str, str]] = {
    "host": ("category", "Host."),
    "host_tracer_level": (
        "Int64",
        "0 off, 1 user TraceMe only, 2 also expensive TF ops (TF's default), 3 verbose.",
    ),
    "device_tracer_level": ("Int64", "0 off, 1 on (GPU/TPU activity)."),
    "python_tracer_level": ("Int64", "1 when every Python call was traced."),
    "include_dataset_ops": ("boolean", "Whether tf.data events were kept."),
    "start_timestamp_ns": (
        "Int64",
        "When tracing was asked to begin, epoch ns (a delayed "
        "start: delay_ms / --delay-ms); 0 when it began at once.",
    ),
    "duration_ms": ("Int64", "Requested duration; 0 means until stopped."),
    "version": ("Int64", "Options version; below 1 the profiler used its own defaults."),
}

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

# Device properties that planes carry as stats and the planes table shows as columns.
DEVICE_PROPERTIES = (
    "core_count",
    "clock_rate",
    "memory_size",
    "memory_bandwidth",
    "compute_cap_major",
    "compute_cap_minor",
)


def dtypes(table: dict[str, tuple[str, str]]) -> dict[str, str]:
    """Column name -> dtype string for one of the tables above."""
    return {name: spec[0] for name, spec in table.items()}
