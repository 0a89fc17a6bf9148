"""PyTorch's rules (:mod:`.rules`, with its names in :mod:`.names`) and the analyses only
``torch.profiler`` captures have: torch-tb-profiler's step-time breakdown (:mod:`.steps`)."""

from ...results import Analysis
from .rules import PyTorch

_HERE = ".frameworks.pytorch."
# The analyses only PyTorch captures have, as run attributes (see tfprof_widgets.analysis).
ANALYSES = (Analysis("torch_steps", _HERE + "steps:torch_steps", "TORCH_STEPS"),)

__all__ = ["ANALYSES", "PyTorch"]
