"""PyTorch's rules (:mod:`.rules`, with its names in :mod:`.names`) and the analyses only
``torch.profiler`` captures have: torch-tb-profiler's step-time breakdown (:mod:`.steps`),
operator view (:mod:`.ops`), kernel view and GPU metrics (:mod:`.kernels`); its allocator
events feed ``run.memory`` (:mod:`.memory`); HTA's idle time, launch statistics,
communication overlap and queue lengths at exact times (:mod:`.hta`), its memory bandwidth
counters (:mod:`.hta_memory_bw`) and frequent kernel sequences (:mod:`.hta_sequences`) and potential
stragglers (:mod:`.hta_stragglers`);
HTA's critical path (:mod:`.critical_path`)."""

from ...analysis.results import Analysis
from .rules import PyTorch

# The framework's rules, as the registry asks them.
FRAMEWORK = PyTorch()

_HERE = "tfprof_widgets.frameworks.pytorch."
# The analyses only PyTorch captures have, as run attributes (see tfprof_widgets.catalog).
ANALYSES = (
    Analysis("torch_steps", _HERE + "steps:torch_steps", "TORCH_STEPS"),
    Analysis("torch_ops", _HERE + "ops:torch_ops", "TORCH_OPS"),
    Analysis("torch_ops_by_shape", _HERE + "ops:torch_ops_by_shape", "TORCH_OPS_BY_SHAPE"),
    Analysis("torch_kernels", _HERE + "kernels:torch_kernels", "TORCH_KERNELS"),
    Analysis("torch_gpu_metrics", _HERE + "kernels:torch_gpu_metrics", "TORCH_GPU_METRICS"),
    Analysis("idle_time_breakdown", _HERE + "hta:idle_time_breakdown", "IDLE_TIME_BREAKDOWN"),
    Analysis("kernel_launch_stats", _HERE + "hta:kernel_launch_stats", "KERNEL_LAUNCH_STATS"),
    Analysis("comm_comp_overlap", _HERE + "hta:comm_comp_overlap", "COMM_COMP_OVERLAP"),
    Analysis("queue_length_summary", _HERE + "hta:queue_length_summary", "QUEUE_LENGTH_SUMMARY"),
    Analysis("critical_path", _HERE + "critical_path:critical_path", "CRITICAL_PATH"),
    Analysis(
        "critical_path_summary",
        _HERE + "critical_path:critical_path_summary",
        "CRITICAL_PATH_SUMMARY",
    ),
    Analysis(
        "memory_bw_time_series",
        _HERE + "hta_memory_bw:memory_bw_time_series",
        "MEMORY_BW_TIME_SERIES",
    ),
    Analysis("memory_bw_summary", _HERE + "hta_memory_bw:memory_bw_summary", "MEMORY_BW_SUMMARY"),
    Analysis(
        "frequent_kernel_sequences",
        _HERE + "hta_sequences:frequent_kernel_sequences",
        "FREQUENT_KERNEL_SEQUENCES",
    ),
    Analysis(
        "straggler_candidates",
        _HERE + "hta_stragglers:straggler_candidates",
        "STRAGGLER_CANDIDATES",
    ),
)

__all__ = ["ANALYSES", "FRAMEWORK", "PyTorch"]
