"""The columns of the tables only PyTorch (``torch.profiler``, Kineto) captures have,
documented once (the conventions are :mod:`tfprof_widgets.schema`'s, which re-exports every
table here: look them up there).

torch-tb-profiler's overview (``run.torch_steps``): TORCH_STEPS; its operator view
(``run.torch_ops``, ``run.torch_ops_by_shape``): TORCH_OPS, TORCH_OPS_BY_SHAPE; its kernel
view and GPU metrics (``run.torch_kernels``, ``run.torch_gpu_metrics``): TORCH_KERNELS,
TORCH_GPU_METRICS.
"""

from __future__ import annotations

__all__ = [
    "TORCH_STEPS",
    "TORCH_OPS",
    "TORCH_OPS_BY_SHAPE",
    "TORCH_KERNELS",
    "TORCH_GPU_METRICS",
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
