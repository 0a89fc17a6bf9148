"""XLA's rules (:mod:`.rules`), its TPU device ops, IDLE and duty cycle (:mod:`.tpu`), its GPU
kernels' HLO instructions (:mod:`.gpu`), and the analyses only XLA captures have: XProf's HLO
Stats (:mod:`.hlo_stats`), with XLA's FLOPs and bytes per instruction (:mod:`.cost`), the
Roofline Model (:mod:`.roofline`) and the Op Profile (:mod:`.op_profile`).

Public names (what the trace viewer uses): :func:`derived_trace_lines`, XProf's derived XLA
lines of a GPU capture, and :func:`event_hlo`, one device event's HLO instruction
(:mod:`.trace_lines`)."""

from ...analysis.results import Analysis
from .rules import XLA
from .trace_lines import event_hlo
from .trace_lines import trace_lines as derived_trace_lines

# The framework's rules, as the registry asks them.
FRAMEWORK = XLA()

_HERE = "tfprof_widgets.frameworks.xla."
# The analyses only XLA captures have, as run attributes (see tfprof_widgets.analysis.ANALYSES).
ANALYSES = (
    Analysis("hlo_stats", _HERE + "hlo_stats:hlo_stats", "HLO_STATS"),
    Analysis("roofline_peaks", _HERE + "roofline:roofline_peaks", "ROOFLINE_PEAKS"),
    Analysis("roofline", _HERE + "roofline:roofline", "ROOFLINE"),
    Analysis("op_profile", _HERE + "op_profile:op_profile", "OP_PROFILE"),
)

__all__ = ["ANALYSES", "FRAMEWORK", "XLA", "derived_trace_lines", "event_hlo"]
