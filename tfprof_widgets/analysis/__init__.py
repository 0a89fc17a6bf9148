"""Analyses: plain functions of a Run's DataFrames, one module per tool of TensorBoard's Profile
plugin, and the one list of what a :class:`~tfprof_widgets.Run` exposes.

Modules: ``steps`` (step time and its breakdown), ``overview``, ``input_pipeline``,
``op_stats`` (TF stats), ``kernels`` (GPU kernel stats), ``memory`` (memory profile),
``tf_data`` (tf.data bottleneck analysis), ``compare`` (two runs' ops side by side),
``tfprof_tables`` and ``tfprof_advice`` (TF1 tfprof); shared by them: ``grouping`` (step ids),
``nesting``, ``event_index`` and ``tf_ops`` (op-name rules).

:data:`ANALYSES` lists every analysis a run exposes as an attribute (``run.ops``,
``run.overview_summary``...), computed on first use and then cached on the run: its name, the
function that computes it from the run, and what it returns (the schema table of a DataFrame
result, in :mod:`tfprof_widgets.schema`). Each function is imported when it is first used, so
listing one that lives outside this package (the timeline's model, the options a capture
records) does not make the analyses depend on it.
"""

from __future__ import annotations

import dataclasses
import importlib
from collections.abc import Callable

__all__ = ["ANALYSES", "Analysis"]


@dataclasses.dataclass(frozen=True)
class Analysis:
    """One analysis: ``run.<name>`` is ``<module>.<function>(run)``, computed once.

    ``function`` is ``"module:function"`` with the module relative to this package;
    ``returns`` is a table of :mod:`tfprof_widgets.schema` (in capitals: a DataFrame with
    those columns) or the name of the result's type.
    """

    name: str
    function: str
    returns: str

    @property
    def table(self) -> str | None:
        """The schema table of a DataFrame result, else None."""
        return self.returns if self.returns.isupper() else None

    def resolve(self) -> Callable:
        module, _, func = self.function.partition(":")
        return getattr(importlib.import_module(module, __name__), func)


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
    Analysis("tf_data", ".tf_data:tf_data", "TfDataSummary"),
    Analysis("tf_data_bottleneck", ".tf_data:tf_data_bottleneck", "TF_DATA_BOTTLENECK"),
    Analysis("tfprof_advice", ".tfprof_advice:tfprof_advice", "TFPROF_ADVICE"),
    Analysis("total_float_ops", ".tfprof_tables:total_float_ops", "int"),
    Analysis("total_parameters", ".tfprof_tables:total_parameters", "int"),
    Analysis("timeline_model", "..views.timeline_lod:timeline_model", "TraceModel"),
    Analysis("profile_options", "..readers.xspace.profile_options:profile_options",
             "PROFILE_OPTIONS"),
)
# fmt: on
