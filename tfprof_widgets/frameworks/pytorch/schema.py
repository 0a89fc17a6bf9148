"""The columns of the tables only PyTorch (``torch.profiler``, Kineto) captures have,
documented once (the conventions are :mod:`tfprof_widgets.schema`'s, which re-exports every
table here: look them up there).

torch-tb-profiler's overview (``run.torch_steps``): TORCH_STEPS; its operator view
(``run.torch_ops``, ``run.torch_ops_by_shape``): TORCH_OPS, TORCH_OPS_BY_SHAPE; its kernel
view and GPU metrics (``run.torch_kernels``, ``run.torch_gpu_metrics``): TORCH_KERNELS,
TORCH_GPU_METRICS. HTA's analyses at exact times (``run.idle_time_breakdown``,
``run.kernel_launch_stats``, ``run.comm_comp_overlap``, ``run.queue_length_summary``):
IDLE_TIME_BREAKDOWN, KERNEL_LAUNCH_STATS, COMM_COMP_OVERLAP, QUEUE_LENGTH_SUMMARY; its memory
bandwidth counters (``run.memory_bw_time_series``, ``run.memory_bw_summary``):
MEMORY_BW_TIME_SERIES, MEMORY_BW_SUMMARY; its frequent kernel sequences
(``run.frequent_kernel_sequences``): FREQUENT_KERNEL_SEQUENCES; its potential stragglers
(``run.straggler_candidates``): STRAGGLER_CANDIDATES; its trace diff of two runs
(``tw.analysis.trace_diff.compare_traces``): TRACE_DIFF. HTA's critical path
(``run.critical_path``, ``run.critical_path_summary``): CRITICAL_PATH,
CRITICAL_PATH_SUMMARY.
The collectives table of every framework (``run.collectives``, beside the overlap that XLA
captures have too): COLLECTIVES.
"""

from __future__ import annotations

__all__ = [
    "TORCH_STEPS",
    "TORCH_OPS",
    "TORCH_OPS_BY_SHAPE",
    "TORCH_KERNELS",
    "TORCH_GPU_METRICS",
    "IDLE_TIME_BREAKDOWN",
    "KERNEL_LAUNCH_STATS",
    "COMM_COMP_OVERLAP",
    "QUEUE_LENGTH_SUMMARY",
    "COLLECTIVES",
    "CRITICAL_PATH",
    "CRITICAL_PATH_SUMMARY",
    "MEMORY_BW_TIME_SERIES",
    "MEMORY_BW_SUMMARY",
    "FREQUENT_KERNEL_SEQUENCES",
    "STRAGGLER_CANDIDATES",
    "TRACE_DIFF",
]

TORCH_STEPS: dict[str, tuple[str, str]] = {
    "host": ("category", "Host."),
    "step": (
        "Int64",
        "Step number N of its ProfilerStep#N marker (<NA>: the whole capture of a run "
        "without markers).",
    ),
    "start_us": ("float64", "Step start, µs: its marker's, or the previous step's end if later."),
    "step_time_us": (
        "float64",
        "Step time, µs: to the marker's end, or to the end of the GPU work the step "
        "launched if later (torch-tb-profiler's rule).",
    ),
    "kernel_us": ("float64", "GPU kernels running (not communication), µs."),
    "memcpy_us": ("float64", "GPU memory copies and no kernel, µs."),
    "memset_us": ("float64", "GPU memory sets and no kernel or copy, µs."),
    "communication_us": (
        "float64",
        "Collectives (nccl:/gloo: ops and their kernels) and no other GPU work, µs.",
    ),
    "runtime_us": ("float64", "CUDA runtime calls on the host and no GPU work, µs."),
    "dataloader_us": ("float64", "The DataLoader handing out a batch and none of the above, µs."),
    "cpu_exec_us": ("float64", "Other host operators running and none of the above, µs."),
    "other_us": ("float64", "None of the above, µs."),
    "complete": (
        "bool",
        "Counted in the overview: False for trailing steps whose GPU work the profiler "
        "probably did not capture whole (torch-tb-profiler leaves them out).",
    ),
}

TORCH_OPS: dict[str, tuple[str, str]] = {
    "host": ("category", "Host."),
    "name": ("str", "Operator ('aten::mm', 'autograd::engine::evaluate_function: ...')."),
    "calls": ("int64", "Calls."),
    "host_self_us": (
        "float64",
        "Host time less its child operators' and its own runtime calls' time, µs.",
    ),
    "host_total_us": ("float64", "Host time (duration), µs."),
    "device_self_us": (
        "float64",
        "GPU time of what its own runtime calls launched (kernels, copies, memsets), µs.",
    ),
    "device_total_us": ("float64", "device_self_us plus its child operators' device time, µs."),
}

TORCH_OPS_BY_SHAPE: dict[str, tuple[str, str]] = {
    **{k: v for k, v in TORCH_OPS.items() if k in ("host", "name")},
    "input_shapes": ("str", "The operator's input shapes as recorded ('[[32, 512], [512]]')."),
    **{k: v for k, v in TORCH_OPS.items() if k not in ("host", "name")},
}

TORCH_KERNELS: dict[str, tuple[str, str]] = {
    "host": ("category", "Host."),
    "name": ("str", "Kernel."),
    "operator": (
        "str",
        "Operator whose runtime call launched it (a step, module or 'CallTreeRoot' where no "
        "operator did).",
    ),
    "grid": ("str", "Grid dimensions as recorded ('[50, 1, 1]')."),
    "block": ("str", "Block dimensions as recorded."),
    "registers_per_thread": ("int64", "Registers per thread."),
    "shared_memory_bytes": ("int64", "Shared memory per block, bytes."),
    "calls": ("int64", "Launches."),
    "total_us": ("float64", "Sum of durations, µs."),
    "mean_us": ("float64", "Mean duration, µs."),
    "max_us": ("float64", "Longest, µs."),
    "min_us": ("float64", "Shortest, µs."),
    "mean_blocks_per_sm": ("float64", "Blocks per SM, mean weighted by duration."),
    "mean_est_achieved_occupancy_percent": (
        "float64",
        "Kineto's estimated achieved occupancy, mean weighted by duration, %.",
    ),
}

TORCH_GPU_METRICS: dict[str, tuple[str, str]] = {
    "host": ("category", "Host."),
    "device": ("str", "GPU plane ('/device:GPU:0')."),
    "gpu_utilization_percent": (
        "float64",
        "Time some kernel runs, over the steps' window (first step's start to the last "
        "complete step's end), %.",
    ),
    "est_sm_efficiency_percent": (
        "float64",
        "The running kernels' blocks per SM summed and capped at 1, averaged over the window, %.",
    ),
    "est_achieved_occupancy_percent": (
        "float64",
        "Kineto's est. achieved occupancy of the kernels, weighted by their time in the window, %.",
    ),
}


# -- HTA's analyses (frameworks/pytorch/hta.py) -----------------------------------------------
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

# Every framework's (NCCL/RCCL kernels, XLA's collective instructions), as COMM_COMP_OVERLAP.
COLLECTIVES: dict[str, tuple[str, str]] = {
    "host": _HOST,
    "rank": _RANK,
    "device": ("category", "Device plane the collective ran on."),
    "collective": (
        "category",
        "'all_reduce', 'all_gather', 'reduce_scatter', 'all_to_all', 'collective_permute', "
        "'broadcast', 'reduce' or 'send_recv'; '' where the kernel's name says none.",
    ),
    "name": ("str", "The op: a collective kernel's name, or XLA's HLO instruction."),
    "communicator": (
        "str",
        "Its process group, or XLA's replica groups ('{{0,1},{2,3}}', '[2,4]<=[8]') or "
        "source-target pairs; '' where unknown.",
    ),
    "group_size": ("Int64", "Ranks in its group (n of the bus bandwidth), <NA> if unknown."),
    "size_bytes": (
        "float64",
        "Bytes of one instance, as nccl-tests counts them (all ranks' parts for an "
        "all-gather, reduce-scatter or all-to-all); NaN where unknown.",
    ),
    "count": ("int64", "Instances (device events) of the op."),
    "total_time_us": ("float64", "Their device time, µs."),
    "algbw_gbps": (
        "float64",
        "Algorithm bandwidth, size_bytes * count / total_time_us, GB/s; NaN without bytes.",
    ),
    "busbw_gbps": (
        "float64",
        "Bus bandwidth, algbw_gbps times nccl-tests' factor (2(n-1)/n all-reduce, (n-1)/n "
        "all-gather / reduce-scatter / all-to-all, 1 otherwise); NaN where n is needed and "
        "unknown.",
    ),
}

CRITICAL_PATH: dict[str, tuple[str, str]] = {
    "host": _HOST,
    "rank": _RANK,
    "name": ("str", "Event on the critical path (operator, runtime call, kernel)."),
    "kind": (
        "category",
        "cpu_op, launch (a kernel/memcpy/memset launch call), graph_launch (cudaGraphLaunch), "
        "sync (a blocking sync call), runtime (another CUDA call), kernel (any GPU activity), "
        "annotation (a user annotation the path runs inside).",
    ),
    "start_us": ("float64", "Event start, µs."),
    "dur_us": ("float64", "Event duration, µs."),
    "critical_us": (
        "float64",
        "Time of the critical path that lies in the event (HTA's edge attribution: its own "
        "span between the path's nodes, and a kernel's gap to the next kernel), µs; the rows "
        "sum to the path's length.",
    ),
    "launch_delay_us": (
        "float64",
        "For a kernel the path reaches from its launch call: the time from the call's start "
        "to the kernel's start (HTA's launch delay, attributed to no event), µs.",
    ),
    "bound_by": (
        "category",
        "HTA's bound_by of the event's own time: cpu_bound, gpu_compute_bound, "
        "gpu_communication_bound, gpu_kernel_kernel_overhead (a kernel's time is all gap).",
    ),
    "on_path": (
        "bool",
        "The path passes through the event's start or end (HTA's critical_path_events_set); "
        "False where it only runs inside it (a parent between two children).",
    ),
    "event": ("int64", "Row of run.events."),
}

CRITICAL_PATH_SUMMARY: dict[str, tuple[str, str]] = {
    "bound_by": (
        "category",
        "HTA's bound_by: cpu_bound, gpu_compute_bound, gpu_communication_bound, "
        "gpu_kernel_kernel_overhead, gpu_kernel_launch_overhead.",
    ),
    "critical_us": ("float64", "Length of the critical path so bound, µs."),
    "resource": ("category", "cpu (the host), gpu, or waiting (launch delays and gaps)."),
    "percent": ("float64", "Share of the critical path's length, % (HTA's summary())."),
}

_MEMORY_KIND = (
    "category",
    "HTA's memory kind: 'Memcpy HtoD', 'Memcpy DtoH', 'Memcpy DtoD', ... (the first 11 "
    "characters of the copy's name), 'Memset', or 'Memcpy Unknown' (dma...).",
)

MEMORY_BW_TIME_SERIES: dict[str, tuple[str, str]] = {
    "host": _HOST,
    "rank": _RANK,
    "device": ("category", "Device plane of the copy or memset that changed the bandwidth."),
    "memory_kind": _MEMORY_KIND,
    "start_us": ("float64", "When the bandwidth changed: a copy or memset started or ended, µs."),
    "memory_bw_gbps": (
        "float64",
        "The kind's bandwidth from then on: the sum of Kineto's 'memory bandwidth (GB/s)' of "
        "its copies running then, on the host's GPUs together, GB/s.",
    ),
}

MEMORY_BW_SUMMARY: dict[str, tuple[str, str]] = {
    "host": _HOST,
    "rank": _RANK,
    "memory_kind": _MEMORY_KIND,
    "count": ("int64", "Values of the kind's bandwidth series above 0 (one per change)."),
    "mean": ("float64", "Their mean, GB/s (not time-weighted: HTA's summary)."),
    "std": ("float64", "Their sample standard deviation, GB/s."),
    "min": ("float64", "Smallest, GB/s."),
    "p25": ("float64", "25th percentile (linear interpolation), GB/s."),
    "p50": ("float64", "Median, GB/s."),
    "p75": ("float64", "75th percentile, GB/s."),
    "max": ("float64", "Largest, GB/s."),
}

FREQUENT_KERNEL_SEQUENCES: dict[str, tuple[str, str]] = {
    "host": _HOST,
    "rank": _RANK,
    "pattern": (
        "str",
        "The operator's name and the GPU kernels it launched (with its callees), in start "
        "order, joined by '|' (HTA's pattern).",
    ),
    "count": ("int64", "Calls of the operator that launched exactly this sequence."),
    "kernel_us": ("float64", "The sequence's kernels' durations summed over those calls, µs."),
    "cpu_op_us": ("float64", "The operator's own durations summed over those calls, µs."),
}

STRAGGLER_CANDIDATES: dict[str, tuple[str, str]] = {
    "host": _HOST,
    "rank": _RANK,
    "step": ("int64", "Step number N of its ProfilerStep#N (HTA's iteration)."),
    "stream": _STREAM,
    "kernel": ("str", "The metric kernel's name: the ncclKernel HTA ranks the ranks by."),
    "start_us": (
        "float64",
        "When the rank's last long metric kernel of the step starts, µs after the earliest "
        "event of the steps (all ranks): HTA's normalized_start_time times its mean iteration "
        "time.",
    ),
    "duration_us": ("float64", "That kernel's duration, µs."),
    "normalized_start_time": (
        "float64",
        "start_us over the mean iteration time (HTA's metric, by which it ranks).",
    ),
    "after_first_us": (
        "float64",
        "start_us minus the earliest rank's start_us of the step, µs (0: the earliest).",
    ),
    "late_in_step": (
        "bool",
        "Among the num_candidates latest starts of the step (HTA's per-step straggler).",
    ),
    "late_steps": ("int64", "Steps in which the rank is late_in_step (HTA's count)."),
    "is_candidate": ("bool", "One of the num_candidates ranks HTA names potential stragglers."),
}

TRACE_DIFF: dict[str, tuple[str, str]] = {
    "name": ("str", "Operator or kernel name (or its short name: HTA's shorten_name)."),
    "control_count": ("int64", "Its events in the control run's compared iteration(s)."),
    "test_count": ("int64", "Its events in the test run's."),
    "control_total_us": ("float64", "Their durations summed in the control run, µs."),
    "test_total_us": ("float64", "Their durations summed in the test run, µs."),
    "diff_count": ("int64", "test_count - control_count."),
    "diff_us": ("float64", "test_total_us - control_total_us, µs."),
    "change": ("str", "'+' (more in the test run), '-' (fewer) or '=' (as many)."),
}
