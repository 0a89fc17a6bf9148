"""Analyses: plain functions of a Run's DataFrames, one module per tool of TensorBoard's Profile
plugin, and the one list of what a :class:`~tfprof_widgets.Run` exposes.

Modules: ``steps`` (step time and its breakdown), ``overview``, ``input_pipeline``,
``op_stats`` (the op table), ``kernels`` (GPU kernel stats), ``memory`` (memory profile),
``compare`` (two runs' ops side by side), ``tool_data`` (TensorBoard's own numbers);
shared by them: ``grouping`` (step ids), ``nesting``, ``event_index``, ``event_ops`` (op
names), ``event_types`` (XProf's step event types). ``frameworks`` holds each framework's
rules, which these ask, and the analyses only one framework has (TensorFlow's tf.data
bottlenecks and TF1 tfprof tables), which it lists here through its ``ANALYSES``.

:data:`ANALYSES` lists every analysis a run exposes as an attribute (``run.ops``,
``run.overview_summary``...), computed on first use and then cached on the run: its name, the
function that computes it from the run, and what it returns (the schema table of a DataFrame
result, in :mod:`tfprof_widgets.schema`). :class:`~tfprof_widgets.Run` declares each one in its
class body (``tests/test_architecture.py`` holds the declarations to this list); the functions
are named here as text, so that listing one that lives outside this package (the timeline's
model, the options a capture records) does not make the analyses depend on it.
"""

from __future__ import annotations

from ..frameworks import ANALYSES as FRAMEWORK_ANALYSES
from .results import Analysis

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
    Analysis("trace_model", "..views.trace.model:build_trace_model", "TraceModel"),
    Analysis("profile_options", "..readers.xspace.profile_options:profile_options",
             "PROFILE_OPTIONS"),
    Analysis("suggestions", ".suggestions:suggestions", "SUGGESTIONS"),
    Analysis("source_lines", ".source_lines:source_lines", "SOURCE_LINES"),
    *FRAMEWORK_ANALYSES,
)
# fmt: on
