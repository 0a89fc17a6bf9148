"""The one list of what a :class:`~tfprof_widgets.Run` exposes: every analysis, the
analysis package's and the frameworks' (each framework package's ``ANALYSES``).

:data:`ANALYSES` names each analysis a run exposes as an attribute (``run.ops``,
``run.overview_summary``...), computed on first use and then cached on the run: its name, the
function that computes it from the run, and what it returns (the schema table of a DataFrame
result, in :mod:`tfprof_widgets.schema`). :class:`~tfprof_widgets.Run` declares each one in its
class body (``tests/test_architecture.py`` holds the declarations to this list); the functions
are named as text, relative to :mod:`tfprof_widgets.analysis`, so that listing one that lives
elsewhere (the trace viewer's model, the options a capture records) imports nothing.
"""

from __future__ import annotations

from .analysis.results import Analysis
from .frameworks import ANALYSES as FRAMEWORK_ANALYSES

__all__ = ["ANALYSES", "Analysis"]


# fmt: off
ANALYSES: tuple[Analysis, ...] = (
    Analysis("steps", ".steps:step_breakdown", "STEPS"),
    Analysis("per_host_steps", ".steps:per_host_steps", "PER_HOST_STEPS"),
    Analysis("device_precision", ".steps:device_precision", "DEVICE_PRECISION"),
    Analysis("ops", ".op_stats:op_stats", "OP_STATS"),
    Analysis("kernels", ".kernels:kernel_stats", "KERNELS"),
    Analysis("memory", ".memory:memory_events", "MEMORY"),
    Analysis("memory_summary", ".memory:memory_summary", "MEMORY_SUMMARY"),
    Analysis("memory_breakdown", ".memory:memory_breakdown", "MEMORY_BREAKDOWN"),
    Analysis("overview_summary", ".overview:overview_summary", "OverviewSummary"),
    Analysis("input_pipeline", ".input_pipeline:input_pipeline", "InputPipelineSummary"),
    Analysis("input_time", ".input_pipeline:input_time", "INPUT_TIME"),
    Analysis("temporal_breakdown", ".gpu_time:temporal_breakdown", "TEMPORAL_BREAKDOWN"),
    Analysis("temporal_breakdown_steps", ".gpu_time:temporal_breakdown_steps",
             "TEMPORAL_BREAKDOWN_STEPS"),
    Analysis("kernel_breakdown", ".gpu_time:kernel_breakdown", "KERNEL_BREAKDOWN"),
    Analysis("stragglers", ".stragglers:stragglers", "STRAGGLERS"),
    Analysis("trace_model", "..views.trace.model:build_trace_model", "TraceModel"),
    Analysis("profile_options", "..readers.xspace.profile_options:profile_options",
             "PROFILE_OPTIONS"),
    Analysis("suggestions", ".suggestions:suggestions", "SUGGESTIONS"),
    Analysis("source_lines", ".source_lines:source_lines", "SOURCE_LINES"),
    Analysis("collectives", ".collectives:collectives", "COLLECTIVES"),
    *FRAMEWORK_ANALYSES,
)
# fmt: on
