"""Column definitions of the tables :mod:`.hta` returns, in ``tfprof_widgets.schema``'s form
({column: (dtype, meaning)}), to move into the schema beside TEMPORAL_BREAKDOWN."""

from __future__ import annotations

_HOST = ("category", "Host (a rank of a distributed job).")
_RANK = ("Int64", "The rank Kineto's distributedInfo names; <NA> where the trace has none.")
_DEVICE = ("category", "Device plane ('/device:GPU:0').")
_STREAM = ("int64", "CUDA stream number (Kineto's `stream` arg; the line id).")

IDLE_TIME_BREAKDOWN: dict[str, tuple[str, str]] = {
    "host": _HOST,
    "rank": _RANK,
    "device": _DEVICE,
    "stream": _STREAM,
    "idle_category": (
        "category",
        "Why the stream waited before a kernel (HTA's get_idle_time_breakdown): 'host_wait' "
        "(the launching call began after the stream's previous kernel ended: the host was "
        "late), 'kernel_wait' (a gap shorter than the consecutive-kernel delay, 30 µs: the "
        "cost of launching back to back), 'other' (any other gap, e.g. waiting on an event).",
    ),
    "idle_time_us": ("float64", "Sum of the gaps before the stream's kernels in the category, µs."),
    "idle_time_ratio": ("float64", "idle_time_us over the stream's whole idle time (0-1)."),
}

KERNEL_LAUNCH_STATS: dict[str, tuple[str, str]] = {
    "host": _HOST,
    "rank": _RANK,
    "correlation": ("int64", "Kineto's correlation id linking the host call and its GPU activity."),
    "launch": ("category", "The CUDA runtime/driver call ('cudaLaunchKernel', ...)."),
    "kernel": ("category", "The GPU activity it launched (kernel, memcpy or memset)."),
    "aten_op": (
        "category",
        "The innermost aten:: op on the call's thread that encloses the call; missing if none.",
    ),
    "cpu_duration_us": ("float64", "Duration of the launching call on the host, µs."),
    "gpu_duration_us": ("float64", "Duration of the launched activity on the GPU, µs."),
    "launch_delay_us": (
        "float64",
        "From the call's end to the activity's start, µs; 0 if it started before the call ended.",
    ),
    "short_kernel": (
        "bool",
        "HTA's short GPU kernel: the GPU ran shorter than the call took (cpu_duration_us within "
        "the runtime cutoff, 50 µs).",
    ),
    "runtime_outlier": ("bool", "cpu_duration_us above the runtime cutoff (HTA: 50 µs)."),
    "launch_delay_outlier": (
        "bool",
        "launch_delay_us above the launch-delay cutoff (HTA: 100 µs).",
    ),
}

COMM_COMP_OVERLAP: dict[str, tuple[str, str]] = {
    "host": _HOST,
    "rank": _RANK,
    "communication_us": ("float64", "Time some communication (NCCL) kernel runs, µs."),
    "overlap_us": ("float64", "Time some communication and some computation kernel both run, µs."),
    "comp_comm_overlap_percent": (
        "float64",
        "overlap_us / communication_us, % (HTA's get_comm_comp_overlap); NaN without any.",
    ),
}

QUEUE_LENGTH_SUMMARY: dict[str, tuple[str, str]] = {
    "host": _HOST,
    "rank": _RANK,
    "device": _DEVICE,
    "stream": _STREAM,
    "count": (
        "int64",
        "Changes of the stream's queue length: a launch call adds one, the start of what it "
        "launched takes one (HTA's queue length time series).",
    ),
    "mean": ("float64", "Mean of the queue length over its changes (not time-weighted)."),
    "std": ("float64", "Sample standard deviation of the same."),
    "min": ("float64", "Smallest queue length."),
    "p25": ("float64", "25th percentile (linear interpolation)."),
    "p50": ("float64", "Median."),
    "p75": ("float64", "75th percentile."),
    "max": ("float64", "Largest queue length."),
    "blocked_us": (
        "float64",
        "Time the queue stood at the maximum queue length or above (HTA: 1,024 launches, when "
        "the host blocks on a full queue), µs.",
    ),
    "blocked_ratio": ("float64", "blocked_us over the host's trace duration."),
}
