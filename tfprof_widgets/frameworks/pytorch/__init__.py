"""PyTorch's rules (:mod:`.rules`, with its names in :mod:`.names`) and the analyses only
``torch.profiler`` captures have: torch-tb-profiler's step-time breakdown (:mod:`.steps`),
operator view (:mod:`.ops`), kernel view and GPU metrics (:mod:`.kernels`); its allocator
events feed ``run.memory`` (:mod:`.memory`)."""

from ...analysis.results import Analysis
from .rules import PyTorch

# The framework's rules, as the registry asks them.
FRAMEWORK = PyTorch()

_HERE = "tfprof_widgets.frameworks.pytorch."
# The analyses only PyTorch captures have, as run attributes (see tfprof_widgets.analysis).
ANALYSES = (
    Analysis("torch_steps", _HERE + "steps:torch_steps", "TORCH_STEPS"),
    Analysis("torch_ops", _HERE + "ops:torch_ops", "TORCH_OPS"),
    Analysis("torch_ops_by_shape", _HERE + "ops:torch_ops_by_shape", "TORCH_OPS_BY_SHAPE"),
    Analysis("torch_kernels", _HERE + "kernels:torch_kernels", "TORCH_KERNELS"),
    Analysis("torch_gpu_metrics", _HERE + "kernels:torch_gpu_metrics", "TORCH_GPU_METRICS"),
)

__all__ = ["ANALYSES", "FRAMEWORK", "PyTorch"]
