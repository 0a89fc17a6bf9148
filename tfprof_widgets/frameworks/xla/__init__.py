"""XLA's rules (:mod:`.rules`), its TPU device ops, IDLE and duty cycle (:mod:`.tpu`), its GPU
kernels' HLO instructions (:mod:`.gpu`), and the analyses only XLA captures have: XProf's HLO
Stats (:mod:`.hlo_stats`), with XLA's FLOPs and bytes per instruction (:mod:`.cost`), the
Roofline Model (:mod:`.roofline`) and the Op Profile (:mod:`.op_profile`).

Public names (what the views use): :func:`derived_trace_lines`, XProf's derived XLA lines of a
GPU capture, and :func:`event_hlo`, one device event's HLO instruction (:mod:`.trace_lines`);
the memory viewer's tables (:mod:`.memory_viewer`); :func:`cpu_step_share`, how much of the
averaged step XLA:CPU ran a program (:mod:`.cpu`); the graph viewer's :func:`hlo_graph`
(:mod:`.graph`)."""

from ...analysis.results import Analysis
from .cpu import cpu_step_share
from .graph import HloGraph, UnknownHloOpError, hlo_graph
from .memory_viewer import (
    SMALL_BUFFER_BYTES,
    NoBufferAssignmentError,
    hlo_heap_timeline,
    hlo_memory,
    hlo_memory_peak,
)
from .rules import XLA
from .trace_lines import event_hlo
from .trace_lines import trace_lines as derived_trace_lines

# The framework's rules, as the registry asks them.
FRAMEWORK = XLA()

_HERE = "tfprof_widgets.frameworks.xla."
# The analyses only XLA captures have, as run attributes (see tfprof_widgets.catalog.ANALYSES).
ANALYSES = (
    Analysis("hlo_stats", _HERE + "hlo_stats:hlo_stats", "HLO_STATS"),
    Analysis("roofline_peaks", _HERE + "roofline:roofline_peaks", "ROOFLINE_PEAKS"),
    Analysis("roofline", _HERE + "roofline:roofline", "ROOFLINE"),
    Analysis("op_profile", _HERE + "op_profile:op_profile", "OP_PROFILE"),
    Analysis("hlo_memory", _HERE + "memory_viewer:hlo_memory", "HLO_MEMORY"),
    Analysis("hlo_memory_peak", _HERE + "memory_viewer:hlo_memory_peak", "HLO_MEMORY_PEAK"),
    Analysis("hlo_heap_timeline", _HERE + "memory_viewer:hlo_heap_timeline", "HLO_HEAP_TIMELINE"),
)

__all__ = [
    "ANALYSES",
    "FRAMEWORK",
    "HloGraph",
    "SMALL_BUFFER_BYTES",
    "XLA",
    "NoBufferAssignmentError",
    "UnknownHloOpError",
    "cpu_step_share",
    "derived_trace_lines",
    "event_hlo",
    "hlo_graph",
    "hlo_heap_timeline",
    "hlo_memory",
    "hlo_memory_peak",
]
