"""The columns of every DataFrame this package returns, documented once: the run's tables,
and every analysis's output (those of one framework in ``frameworks/<name>/schema.py``).

Tables of a run (:class:`~tfprof_widgets.Run`): EVENTS, EVENT_STATS, PLANES, LINES,
EVENT_METADATA, METADATA_STATS, PLANE_STATS, XEVENT_TIMES, TFPROF_NODES, TFPROF_EXECS,
HLO_INSTRUCTIONS; of a logdir: RUNS.
TensorBoard's own numbers from a run directory's tool-data files (``Run.tool_data``):
TOOL_DATA_FILES, TOOL_STEPS, TOOL_TF_STATS, TOOL_TOP_OPS, TOOL_MEMORY_BREAKDOWN,
TOOL_POD_STATS, TOOL_ALL_REDUCE_OPS (and STEPS, OP_STATS, KERNELS, MEMORY, MEMORY_SUMMARY,
INPUT_OPS filled from the files).
Analyses (``run.<name>``, see :data:`tfprof_widgets.catalog.ANALYSES`): STEPS,
PER_HOST_STEPS, DEVICE_PRECISION, OP_STATS, KERNELS, MEMORY, MEMORY_SUMMARY, MEMORY_BREAKDOWN,
INPUT_PIPELINE_STEPS, INPUT_OPS, INPUT_TIME, OP_DIFF, LINE_SUMMARY, PROFILE_OPTIONS,
SUMMARY_FRAME, SUGGESTIONS, SOURCE_LINES; GPU time (HTA's): TEMPORAL_BREAKDOWN,
TEMPORAL_BREAKDOWN_STEPS, KERNEL_BREAKDOWN (in schema_gpu_time.py); distributed jobs:
STRAGGLERS (in schema_jobs.py).
TensorFlow's: TF_DATA_ITERATORS, TF_DATA_EXECUTIONS, TF_DATA_PIPELINES, TF_DATA_EVENTS,
TF_DATA_ITERATOR_STATS, TF_DATA_BOTTLENECK (tf.data); TFPROF_NODE_STATS, TFPROF_TABLE,
TFPROF_ADVICE (TF1 tfprof). XLA's: HLO_STATS, ROOFLINE_PEAKS, ROOFLINE, OP_PROFILE, HLO_MEMORY,
HLO_MEMORY_PEAK, HLO_HEAP_TIMELINE.
PyTorch's: TORCH_STEPS, TORCH_OPS, TORCH_OPS_BY_SHAPE, TORCH_KERNELS, TORCH_GPU_METRICS,
IDLE_TIME_BREAKDOWN, KERNEL_LAUNCH_STATS, COMM_COMP_OVERLAP, QUEUE_LENGTH_SUMMARY,
MEMORY_BW_TIME_SERIES, MEMORY_BW_SUMMARY, FREQUENT_KERNEL_SEQUENCES, TRACE_DIFF.
Collectives of every framework (``run.collectives``): COLLECTIVES.
Also CRITICAL_PATH, CRITICAL_PATH_SUMMARY (HTA's critical path).
Also STRAGGLER_CANDIDATES (HTA's potential stragglers across ranks).

Conventions, the same in every table:

* times are float64 microseconds named ``*_us``; raw integer times keep their unit
  (``*_ps``, ``*_ns``) and are int64;
* ``start_us`` is relative to the earliest event of the whole run (all hosts); the absolute
  time of ``start_us == 0`` is ``Run.t0_ns`` (nanoseconds since the Unix epoch when known);
* string columns are pandas categoricals, nullable integers use pandas' ``Int32``/``Int64``;
* ``host`` is the capture file's host name (the file name before ``.xplane.pb``), ``plane``
  the XPlane name (``/host:CPU``, ``/device:GPU:0``), ``line`` the XLine (a thread on the
  host, a stream or derived line such as ``Steps`` / ``TensorFlow Ops`` on a device);
* one name per role: ``operation`` is a TF op's name, ``occurrences`` a count of executions,
  ``total_time_us``/``avg_time_us`` durations summed/averaged, ``*_percent`` a percentage,
  ``group_id`` a step group and ``step`` its step number.

The dicts below map column name -> (dtype, meaning); "str" is pandas' string dtype (object
before pandas 3). Tests assert that every table and analysis output matches them
(:func:`mismatches`).
"""

from __future__ import annotations

import functools
import importlib.util
import pathlib
import sys
import types

# How a DataFrame follows one of the tables below (schema.conform, schema.empty...): here too.
from .frames import (  # noqa: F401
    ELLIPSIS,
    MAX_NAME_CHARS,
    conform,
    cut_text,
    dtypes,
    empty,
    mismatches,
    text_categorical,
)
from .schema_gpu_time import (  # noqa: F401 - tables of this schema, kept in their own file
    KERNEL_BREAKDOWN,
    TEMPORAL_BREAKDOWN,
    TEMPORAL_BREAKDOWN_STEPS,
)
from .schema_jobs import STRAGGLERS  # noqa: F401 - a table of this schema, kept in its own file

# The accelerator kinds of the planes table's ``device_kind`` column ('/device:GPU:0' is
# 'GPU'); the host is 'CPU', planes without a timeline 'metadata'.
DEVICE_KINDS = ("GPU", "TPU", "CUSTOM")

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
        "aggregated events (see occurrences). Events with device_offset_ps/"
        "device_duration_ps stats (TPU ops) have their device times here, the XEvent's "
        "in Run.xevent_times.",
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

# Stats with a meaning across formats (every reader writes them the way XSpace does):
#
# * flows, producer -> consumer links between events: the producer carries ``_p`` (flow id)
#   and ``_pt`` (flow type, XProf's ContextType: 0 generic, 9 GPU launch), the consumer ``_c``
#   and ``_ct`` with the same two values; an event may carry several (one row each). Chrome
#   traces' flow events (ph s/t/f, each bound to the slice it marks) and Kineto's launch ->
#   kernel correlations become such pairs; their flow ids are unique within a file.
# * ``correlation_id``: on a GPU kernel/copy and on the host call that launched it (XSpace's
#   CUPTI correlation id; Kineto's ``args.correlation``).
# * ``kernel_details``: a GPU kernel's launch parameters in TF's text form (``regs:N
#   static_shared:N dynamic_shared:N grid:x,y,z block:x,y,z occ_pct:F``; Kineto traces give
#   ``regs shm grid block occ_pct``, ``shm`` being static + dynamic shared memory).
# * Chrome traces only: ``cat`` (the event's category), ``ph`` (its phase, where it is not a
#   complete or begin/end event), and every ``args`` entry under its own name (numbers as
#   int/uint/double, strings as str, nested values as their JSON text).
# Events timed by a device clock (TPU XLA ops with the stats device_offset_ps and
# device_duration_ps) carry those times in EVENTS; this table keeps what the XEvent itself
# recorded, one row per such event (none for CPU/GPU captures). See analysis/device_time.py.
XEVENT_TIMES: dict[str, tuple[str, str]] = {
    "event": ("int64", "Row in Run.events of an event whose times are the device's."),
    "xevent_start_us": (
        "float64",
        "The XEvent's own start (line timestamp + offset), µs on the run's clock.",
    ),
    "xevent_dur_us": ("float64", "The XEvent's own duration, µs."),
}

EVENT_STATS: dict[str, tuple[str, str]] = {
    "event": (
        "int64",
        "Row position in Run.events this stat belongs to. Rows are ordered by event, then "
        "by stat (as Run.stat_store keeps them, from which this table is built when first "
        "read).",
    ),
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
    "formats": (
        "object",
        "Tuple of what the run directory holds, each once: 'xplane', 'trace.json.gz', "
        "'trace.json', 'trace' (TF 2.0/2.1 Trace), 'tfprof', 'run_metadata', and tool data "
        "('overview_page', 'input_pipeline', 'tensorflow_stats', 'kernel_stats', "
        "'memory_profile', 'pod_viewer'; ' (json)' for the 2019 DataTable form); files we "
        "recognise but do not read end in ' (not read)'.",
    ),
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

# -- analyses ---------------------------------------------------------------------------------

_OVERLAP = "µs; overlaps counted once"

STEPS: dict[str, tuple[str, str]] = {
    "host": ("category", "Host."),
    "step": ("Int64", "Step number (the step marker's step_num)."),
    "group_id": ("Int32", "The step's group id (see Run.events)."),
    "start_us": ("float64", "Start of the step's time span, µs on the run's clock."),
    "step_time_us": (
        "float64",
        "Step time: the longest host step marker (or the device step), µs.",
    ),
    "device_compute_us": ("float64", f"Device compute (16- and 32-bit kernels), {_OVERLAP}."),
    "device_to_device_us": ("float64", f"Device-to-device copies and waits, {_OVERLAP}."),
    "device_collectives_us": ("float64", f"Device collectives (NCCL), {_OVERLAP}."),
    "host_compute_us": ("float64", f"Host compute (TF ops on host threads), {_OVERLAP}."),
    "kernel_launch_us": ("float64", f"Kernel launch (host preparing device work), {_OVERLAP}."),
    "input_us": (
        "float64",
        "Input: the host waiting for input, host-to-device copies and "
        f"the device waiting for the host, {_OVERLAP}.",
    ),
    "output_us": ("float64", f"Output (device-to-host copies), {_OVERLAP}."),
    "compile_us": ("float64", f"Compilation, {_OVERLAP}."),
    "all_others_us": ("float64", "Step time no event covers, µs."),
    "device_compute_16_us": ("float64", "Part of device compute in 16-bit kernels, µs."),
    "device_compute_32_us": ("float64", "Part of device compute in 32-bit kernels, µs."),
    "host_wait_input_us": (
        "float64",
        "Part of input: host waiting for tf.data (IteratorGetNext), µs.",
    ),
    "host_to_device_us": (
        "float64",
        "Part of input: copies to the device and the device waiting for the host, µs.",
    ),
}

DEVICE_PRECISION: dict[str, tuple[str, str]] = {
    # XProf's precision stats (the overview's "16-bit / 32-bit share of device compute").
    "host": ("category", "Host name."),
    "device_compute_16_us": (
        "float64",
        "Device compute in 16-bit types over every step group, µs (a kernel whose 'shape' "
        "stat mentions 'half', or without shapes whose name has 'half' or 'fp16'); overlaps "
        "between devices and streams count once.",
    ),
    "device_compute_32_us": ("float64", "The rest of the device compute, µs."),
}

PER_HOST_STEPS: dict[str, tuple[str, str]] = {
    # Indexed by `step` (Int64); before these, one float64 column per host: its step time, µs.
    "slowest_host": ("str", "Host with the longest step time in the step."),
    "spread_us": ("float64", "Slowest minus fastest host's step time, µs."),
    "bottleneck": ("str", "Largest category of the slowest host's step ('input', ...)."),
}

OP_STATS: dict[str, tuple[str, str]] = {
    "host": ("category", "Host the op ran on (or launched from, for device ops)."),
    "host_or_device": (
        "category",
        "'Host' for ops on host threads, 'Device' for kernels on accelerators.",
    ),
    "type": (
        "category",
        "Op type ('MatMul', '_MklNativeFusedConv2D', 'Dataset' for tf.data, 'IDLE').",
    ),
    "operation": ("category", "Op name ('dense/MatMul'); the full iterator name for tf.data."),
    "occurrences": ("int64", "Number of executions (events)."),
    "total_time_us": ("float64", "Sum of durations, microseconds."),
    "avg_time_us": ("float64", "total_time_us / occurrences."),
    "total_self_time_us": (
        "float64",
        "Total minus the time of ops nested directly inside, microseconds.",
    ),
    "avg_self_time_us": ("float64", "total_self_time_us / occurrences."),
    "self_time_percent": (
        "float64",
        "Share of all self time of this host on this side (host/device), %.",
    ),
    "cumulative_self_time_percent": (
        "float64",
        "Running sum of self_time_percent in table order, %.",
    ),
    "is_eager": (
        "bool",
        "True when the op ran eagerly (the 'is_eager' stat), else inside a tf.function.",
    ),
    "beyond_xprof": (
        "bool",
        "True for what TensorBoard does not show: device ops we attribute from a kernel's "
        "'level 0' annotation (XProf 2.24 needs a 'tf_op' stat) or a JAX kernel's tf_op "
        "(XProf uses the HLO modules), and the device IDLE that these ops shrink.",
    ),
}

KERNELS: dict[str, tuple[str, str]] = {
    "host": ("str", "Host."),
    "kernel_name": ("str", "Kernel (GPU function) name."),
    "registers_per_thread": ("int64", "Registers per thread."),
    "shmem_bytes": ("int64", "Shared memory per block, static + dynamic, bytes."),
    "block_dim": ("str", "Block dimensions 'x,y,z'."),
    "grid_dim": ("str", "Grid dimensions 'x,y,z'."),
    "occupancy_percent": ("float64", "Theoretical occupancy reported by the profiler, %."),
    "is_op_tensor_core_eligible": (
        "bool",
        "The launching op could use Tensor Cores "
        "(convolutions, MatMul, BatchMatMul, cuDNN RNNs, "
        "einsum with 2 inputs).",
    ),
    "is_kernel_using_tensor_core": ("bool", "The kernel's name marks it as a Tensor Core kernel."),
    "operation": ("str", "TF op that launched the kernel ('' when unknown)."),
    "occurrences": ("int64", "Launches."),
    "total_time_us": ("float64", "Sum of kernel durations, µs."),
    "avg_time_us": ("float64", "Average duration, µs."),
    "min_time_us": ("float64", "Shortest launch, µs."),
    "max_time_us": ("float64", "Longest launch, µs."),
    "beyond_xprof": (
        "bool",
        "Ours, not XProf's: the op of a kernel inside a CUDA graph (XProf: 'XlaModule'), or "
        "Tensor Cores credited by a kernel name XProf's list misses (nvjet_*, sm90_xmma_*).",
    ),
    "no_op_time_us": (
        "float64",
        "Part of total_time_us in launches no op accounts for (the profiler recorded no op "
        "for them: the runtime's own copy kernels, ROCm's __amd_rocclr_copyBuffer on a "
        "copy stream, or a launch whose annotation was lost): the op stats, as XProf's, "
        "count that time as device IDLE, so it is kernel time but not device op time, µs "
        "(0 from a kernel-stats file, which does not tell).",
    ),
}

MEMORY: dict[str, tuple[str, str]] = {
    "host": ("category", "Host."),
    "allocator": ("category", "Allocator (memory id): 'mklcpu', 'GPU_0_bfc', ..."),
    "time_us": ("float64", "When the allocation or free happened, µs on the run's clock."),
    "activity": ("category", "'ALLOCATION' or 'DEALLOCATION'."),
    "stack_reserved_bytes": ("int64", "Allocator's reserved (stack) bytes after the event."),
    "heap_allocated_bytes": ("int64", "Allocator's allocated (heap) bytes after the event."),
    "free_memory_bytes": ("int64", "Allocator's available bytes after the event."),
    "in_use_bytes": ("int64", "stack_reserved_bytes + heap_allocated_bytes: memory in use."),
    "fragmentation": (
        "float64",
        "Allocator fragmentation after the event (0..1): share of "
        "free memory not in the largest free chunk.",
    ),
    "peak_bytes_in_use": ("int64", "The allocator's own lifetime peak so far."),
    "requested_bytes": ("int64", "Bytes the op asked for."),
    "allocation_bytes": ("int64", "Bytes the allocator gave (requested, rounded up)."),
    "address": ("int64", "Address of the chunk (deallocations are matched to allocations by it)."),
    "tf_op": ("category", "TF op that allocated (deallocations inherit their allocation's)."),
    "group_id": (
        "int64",
        "Step group of the event (the run's group_id); events outside steps "
        "take the previous one + 1, as XProf numbers them.",
    ),
    "region_type": ("category", "'output', 'temp', 'persist', ... as the allocator records it."),
    "data_type": ("category", "Tensor data type ('float', 'half', ...)."),
    "tensor_shape": ("category", "Tensor shape, e.g. '[32,26,26,8]'."),
    "event": ("int64", "Row of the event in Run.events."),
}

MEMORY_SUMMARY: dict[str, tuple[str, str]] = {
    "host": ("str", "Host."),
    "allocator": ("str", "Allocator."),
    "num_allocations": ("int64", "Allocations seen."),
    "num_deallocations": ("int64", "Deallocations seen."),
    "memory_capacity_bytes": (
        "int64",
        "Stack + heap + free at the peak: what the allocator manages.",
    ),
    "peak_bytes_lifetime": (
        "int64",
        "The allocator's own lifetime peak of its heap (allocated bytes; may predate the "
        "capture): the most any of its events reports (the counter never falls, so its "
        "latest reading); 0 when no event has the stat.",
    ),
    "peak_bytes_lifetime_xprof": (
        "int64",
        "XProf's (TensorBoard's) lifetime peak: the counter as the allocator's last event "
        "in file order (thread by thread, not time) reports it, which can be an earlier, "
        "lower reading than peak_bytes_lifetime (0 when that event lacks the stat).",
    ),
    "peak_in_use_bytes": ("int64", "Stack + heap at the profile's peak."),
    "peak_heap_bytes": ("int64", "Heap at the peak."),
    "peak_stack_bytes": ("int64", "Stack at the peak."),
    "peak_free_bytes": ("int64", "Free memory at the peak."),
    "peak_fragmentation": ("float64", "Fragmentation at the peak (0..1)."),
    "peak_time_us": ("float64", "When the peak was reached, µs on the run's clock."),
    "peak_group_id": (
        "int64",
        "Step group of the peak (MEMORY.group_id), as XProf shows it: not always the step "
        "number of run.steps (analysis.memory.peak_steps gives that).",
    ),
}

MEMORY_BREAKDOWN: dict[str, tuple[str, str]] = {
    "occurrences": ("int64", "Identical live allocations merged into this row."),
    "allocation_bytes": ("int64", "Bytes each one holds."),
    "requested_bytes": ("int64", "Bytes each one asked for."),
    "tf_op": (
        "str",
        "TF op that allocated it; 'unused preallocated device memory' for heap "
        "no allocation accounts for, 'stack' for the reserved bytes.",
    ),
    "region_type": ("str", "Region type as the allocator records it."),
    "data_type": ("str", "Tensor data type."),
    "tensor_shape": ("str", "Tensor shape."),
    "group_id": ("int64", "The peak's step group."),
}

INPUT_PIPELINE_STEPS: dict[str, tuple[str, str]] = {
    **{
        c: STEPS[c]
        for c in (
            "host",
            "step",
            "group_id",
            "step_time_us",
            "input_us",
            "host_wait_input_us",
            "host_to_device_us",
        )
    },
    "input_percent": ("float64", "input_us / step_time_us, %."),
}

INPUT_OPS: dict[str, tuple[str, str]] = {
    "host": ("str", "Host."),
    "operation": ("str", "Input op: the tf.data iterator, copy or infeed op."),
    "occurrences": ("int64", "Executions."),
    "total_time_us": ("float64", "Sum of durations, µs."),
    "total_self_time_us": ("float64", "Sum of self times, µs."),
    "time_percent": (
        "float64",
        "Share of the host's input time in which this op ran, %: the time its calls cover "
        "(each instant once) over the time any input op's calls cover; NaN without a trace "
        "(tool data).",
    ),
    "time_percent_xprof": (
        "float64",
        "XProf's total %: total_time_us over all input ops' self time on the host, % (an op "
        "whose calls hold other work, a DataLoader batch, passes 100 %: no share).",
    ),
    "self_time_percent": ("float64", "Share of all input ops' self time on the host, %."),
    "category": (
        "str",
        "XProf's class: 'Enqueue', 'Demanded file read', 'Advanced file read' or 'Preprocessing'.",
    ),
}

INPUT_TIME: dict[str, tuple[str, str]] = {
    "host": ("str", "Host."),
    "operation": ("str", "Input op (a row of INPUT_OPS) whose calls the trace holds."),
    "covered_ps": (
        "int64",
        "Time this op's calls cover on its host, each instant once (nested and overlapping "
        "calls, calls on several threads at once, counted once), ps.",
    ),
    "host_covered_ps": ("int64", "Time any input op's calls cover on the host, ps."),
}

OP_DIFF: dict[str, tuple[str, str]] = {
    "host_or_device": ("str", "'Host' or 'Device'."),
    "type": ("str", "Op type."),
    "operation": ("str", "Op name."),
    "self_time_a_us": ("float64", "Self time in run A (hosts combined), µs."),
    "self_time_b_us": ("float64", "Self time in run B, µs."),
    "delta_us": ("float64", "B − A, µs."),
    "self_time_a_per_step_us": (
        "float64",
        "Self time in A divided by A's steps (run.step_count), µs; NaN unless both runs "
        "have steps.",
    ),
    "self_time_b_per_step_us": ("float64", "The same for B, µs."),
    "delta_per_step_us": ("float64", "B − A per step, µs; NaN unless both runs have steps."),
    "ratio": (
        "float64",
        "B / A per step when both runs have steps, else of the totals; NaN when A is 0.",
    ),
    "occurrences_a": ("int64", "Executions in A."),
    "occurrences_b": ("int64", "Executions in B."),
}

LINE_SUMMARY: dict[str, tuple[str, str]] = {
    "host": ("category", "Host."),
    "plane": ("category", "XPlane name."),
    "line": ("category", "Line."),
    "events": ("int64", "Events on the line."),
    "first_us": ("float64", "First start, µs."),
    "last_us": ("float64", "Last end, µs."),
    "total_dur_us": ("float64", "Sum of durations (nested events overlap their parents), µs."),
}

# -- tool data: TensorBoard's own numbers (Run.tool_data) ----------------------------------------
# A TF 2.2-2.10 run directory holds the outputs of TensorBoard's Profile tools beside (or instead
# of) the trace. Their numbers fill the analyses' tables (STEPS, OP_STATS, KERNELS, MEMORY,
# MEMORY_SUMMARY, INPUT_OPS) when the run has no trace; the tables below keep what those
# schemas have no place for. Times are µs as everywhere (the files' ms are multiplied by 1e3,
# their ns divided by 1e3, their fractions multiplied by 100 into percents).

TOOL_DATA_FILES: dict[str, tuple[str, str]] = {
    "host": ("str", "Host (the file name before the tool's suffix)."),
    "tool": (
        "str",
        "TensorBoard tool: 'overview_page', 'input_pipeline', 'tensorflow_stats', "
        "'kernel_stats', 'memory_profile' or 'pod_viewer'.",
    ),
    "encoding": (
        "str",
        "'pb' (the tool's protobuf message), 'json' (proto3 JSON) or 'datatable' (Google "
        "DataTable JSON, 2019 Cloud TPU).",
    ),
    "path": ("str", "The file."),
}

TOOL_STEPS: dict[str, tuple[str, str]] = {
    # STEPS with the file's numbers: start_us, group_id and the 16/32-bit split are unknown
    # (NaN / <NA>); on TPU DataTables, device_compute_us is the compute time, input_us the
    # infeed wait and all_others_us the idle time.
    **STEPS,
    "step_name": ("str", "The step's name when the file gives one, else its number."),
    "infeed_percent_avg": ("float64", "TPU: infeed share of the step, averaged over cores, %."),
    "infeed_percent_min": ("float64", "TPU: smallest core's infeed share, %."),
    "infeed_percent_max": ("float64", "TPU: largest core's infeed share, %."),
    "max_infeed_core": ("str", "TPU: the core with the longest infeed in the step."),
}

TOOL_TF_STATS: dict[str, tuple[str, str]] = {
    # OP_STATS with TensorBoard's TfStatsDatabase numbers (in its rank order), then the
    # fields OP_STATS has no place for.
    **OP_STATS,
    "rank": ("int64", "TensorBoard's rank: 1.. by self time, device rows first."),
    "measured_flop_rate": ("float64", "Measured FLOP rate, GFLOP/s (0 when not measured)."),
    "model_flop_rate": ("float64", "Model FLOP rate, GFLOP/s (0 when not measured)."),
    "measured_memory_bw": ("float64", "Measured memory bandwidth, GB/s (0 when not measured)."),
    "operational_intensity": ("float64", "FLOPs per byte accessed (roofline)."),
    "bound_by": ("category", "Roofline verdict: 'Compute', 'Memory' or 'Unknown'."),
    "gpu_tensorcore_utilization": ("float64", "Share of kernel time on Tensor Cores, 0..1."),
    "flops": ("float64", "FLOPs of the op (all occurrences)."),
    "bytes_accessed": ("int64", "Bytes accessed by the op (all occurrences)."),
}

TOOL_TOP_OPS: dict[str, tuple[str, str]] = {
    "host": ("category", "Host."),
    "host_or_device": ("category", "'Device' (the overview page lists device ops)."),
    "type": ("category", "Op type (the overview page's category)."),
    "operation": ("category", "Op name."),
    "occurrences": ("Int64", "From the run's TF stats, when it has them; <NA> otherwise."),
    "total_self_time_us": (
        "float64",
        "From the run's TF stats, when it has them; NaN otherwise.",
    ),
    "self_time_percent": ("float64", "Share of device self time, % (the file's fraction × 100)."),
    "cumulative_self_time_percent": ("float64", "Running sum of self_time_percent, %."),
    "flop_rate": ("float64", "GFLOP/s (0 when not measured)."),
    "is_op_tensor_core_eligible": ("bool", "The op could use Tensor Cores."),
    "is_op_using_tensor_core": ("bool", "The op used Tensor Cores."),
}

TOOL_MEMORY_BREAKDOWN: dict[str, tuple[str, str]] = {
    "host": ("str", "Host."),
    "allocator": ("str", "Allocator (memory id)."),
    **MEMORY_BREAKDOWN,
}

TOOL_POD_STATS: dict[str, tuple[str, str]] = {
    # Then one float64 column per step-time category the file names, µs: the 2019 layout's
    # 'high_flops_compute_us', 'host_infeed_us', 'all_reduce_compute_us', ...; the current
    # layout's 'device_compute_us', 'kernel_launch_us', 'all_others_us', ...
    "step": ("int64", "Step number."),
    "core_id": ("int64", "Core (TPU core or GPU) id."),
    "replica_id": ("Int64", "Replica the core belongs to (<NA> when not recorded)."),
    "host_name": ("str", "Host of the core."),
    "chip_id": ("int64", "Chip id."),
    "node_id": ("int64", "Node (core within the chip) id."),
    "total_duration_us": ("float64", "Step time on this core, µs."),
    "bottleneck": ("str", "The category that took longest on this core."),
}

TOOL_ALL_REDUCE_OPS: dict[str, tuple[str, str]] = {
    "step": ("int64", "Step number."),
    "name": ("str", "All-reduce (XLA) op."),
    "occurrences": ("int64", "Executions in the step."),
    "duration_us": ("float64", "Average duration, µs."),
    "data_size_bytes": ("int64", "Bytes reduced."),
    "replica_groups": ("str", "Replica groups, e.g. '[[0,1],[2,3]]' ('' for all)."),
    "description": ("str", "The XLA instruction."),
}

SUMMARY_FRAME: dict[str, tuple[str, str]] = {
    "name": ("str", "Figure of a summary (OverviewSummary, InputPipelineSummary)."),
    "value": ("object", "Its value."),
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


# Device and host time per line of the user's source (``run.source_lines``).
SUGGESTIONS: dict[str, tuple[str, str]] = {
    "rule": (
        "str",
        "The rule's name: XProf's ('HostProcessingBoundRule', ...) or, for rules XProf lacks, "
        "ours in its style ('SmallKernelsRule', 'CPUBoundRule', ...).",
    ),
    "severity": (
        "str",
        "'high' or 'medium': an XProf rule is high past twice its threshold; a rule of ours "
        "says in its docstring where it turns high (e.g. SmallKernelsRule at 75 %).",
    ),
    "text": ("str", "What the rule says, as XProf words it (plain text)."),
    "evidence": ("str", "The figures that made it fire, 'name=value' joined by '; '."),
    "view": ("str", "The view to open next ('input_pipeline', 'overview', ...)."),
}


SOURCE_LINES: dict[str, tuple[str, str]] = {
    "source_file": (
        "category",
        "File of the user's line as the capture names it (the op's source metadata or stack "
        "frame; a call stack's innermost frame outside the framework); '' where unknown.",
    ),
    "source_line": ("int64", "Line in source_file (1-based), 0 where unknown."),
    "function": ("category", "Function of that line (the capture's stack frames); '' if none."),
    "framework": ("category", "The framework whose ops these are (its name as the run shows it)."),
    "device_time_us": (
        "float64",
        "Device time of the line's ops: the kernels, copies and memsets they ran or "
        "launched, a TPU op's self time, a compiled program's CPU thunks (the CPU is the "
        "program's device there), µs.",
    ),
    "host_time_us": (
        "float64",
        "Host time of the line's ops: the outermost host ops' durations, or the host calls "
        "launching a compiled op's kernels, µs.",
    ),
    "occurrences": ("int64", "Device events of the line's ops (kernels, copies, ops, thunks)."),
    "ops": ("int64", "Distinct ops of the line (compiled instructions; host op names)."),
    "device_time_percent": (
        "float64",
        "Share of the device time of every op attributed (device_time_us's total), %.",
    ),
    "top_op": (
        "str",
        "The line's framework op with the most device time (else host time); an "
        "instruction of no framework op: its own name.",
    ),
}


def __getattr__(name: str) -> dict[str, tuple[str, str]]:
    """The tables only one framework's captures have (``frameworks/<name>/schema.py``), found
    here too (``schema.ROOFLINE``), read on first use."""
    tables = {} if name.startswith("__") else _framework_tables()  # the import system's __path__
    if name not in tables:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return tables[name]


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_framework_tables()))


# The frameworks whose packages hold tables of their own (frameworks/<name>/schema.py).
FRAMEWORK_TABLE_PACKAGES = ("tensorflow", "xla", "pytorch")


@functools.cache
def _framework_tables() -> dict[str, dict[str, tuple[str, str]]]:
    """Every framework's tables by name. Each ``frameworks/<name>/schema.py`` is data that
    imports nothing of the package, and it is executed here as that module without running
    the framework packages (their ``__init__`` imports their rules, which import this module:
    an import cycle); the framework's own ``from .schema import ...`` later finds the same
    module object in ``sys.modules``."""
    out = {}
    for framework in FRAMEWORK_TABLE_PACKAGES:
        module = _framework_schema(framework)
        out.update({n: getattr(module, n) for n in module.__all__})
    return out


def _framework_schema(framework: str) -> types.ModuleType:
    name = f"{__package__}.frameworks.{framework}.schema"
    module = sys.modules.get(name)
    if module is None:
        path = pathlib.Path(__file__).parent / "frameworks" / framework / "schema.py"
        spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return module
