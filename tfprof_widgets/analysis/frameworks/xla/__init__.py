"""XLA's rules (:mod:`.rules`), its TPU device ops, IDLE and duty cycle (:mod:`.tpu`), its GPU
kernels' HLO instructions (:mod:`.gpu`), and the analyses only XLA captures have: XProf's HLO
Stats (:mod:`.hlo_stats`)."""

from ...results import Analysis
from .rules import XLA

_HERE = ".frameworks.xla."
# The analyses only XLA captures have, as run attributes (see tfprof_widgets.analysis.ANALYSES).
ANALYSES = (Analysis("hlo_stats", _HERE + "hlo_stats:hlo_stats", "HLO_STATS"),)

__all__ = ["ANALYSES", "XLA"]
