"""PyTorch's rules (:mod:`.rules`, with its names in :mod:`.names`) and the analyses only
``torch.profiler`` captures have: torch-tb-profiler's step-time breakdown (:mod:`.steps`)
operator view (:mod:`.ops`) and kernel view (:mod:`.kernels`)."""

from ...results import Analysis
from .rules import PyTorch

_HERE = ".frameworks.pytorch."
# The analyses only PyTorch captures have, as run attributes (see tfprof_widgets.analysis).
ANALYSES = (
    Analysis("torch_steps", _HERE + "steps:torch_steps", "TORCH_STEPS"),
    Analysis("torch_ops", _HERE + "ops:torch_ops", "TORCH_OPS"),
    Analysis("torch_ops_by_shape", _HERE + "ops:torch_ops_by_shape", "TORCH_OPS_BY_SHAPE"),
    Analysis("torch_kernels", _HERE + "kernels:torch_kernels", "TORCH_KERNELS"),
)

__all__ = ["ANALYSES", "PyTorch"]
