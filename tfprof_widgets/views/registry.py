"""The one table of views: what ``tfprof_widgets.views`` exports, what ``run.view`` offers, what
a report holds (and in which order), and which framework a view belongs to.

Each :class:`ViewSpec` names its function by module, so reading the table imports no plotly;
:attr:`ViewSpec.function` imports the module when first asked. The function's own signature
is the view's signature everywhere: ``tw.views.<name>(run, ...)`` and ``run.view.<name>(...)``
take the same options (:attr:`ViewSpec.signature`, the run left out).
"""

from __future__ import annotations

import dataclasses
import importlib
import inspect
from collections.abc import Callable

__all__ = ["VIEWS", "ViewSpec", "by_name", "report_specs"]


@dataclasses.dataclass(frozen=True)
class ViewSpec:
    """One view.

    Attributes:
        name: its name as ``tw.views.<name>`` and ``run.view.<name>``.
        module: the module under ``tfprof_widgets.views`` that defines the function.
        title: what it shows, in one line (``run.view``'s help).
        framework: the framework whose tool it is (``"tensorflow"``, ``"pytorch"``,
            ``"xla"``), None for a view of every run.
        section: its section id in a report (:mod:`tfprof_widgets.report`), None where a
            report has no such section (``compare`` needs two runs).
        in_report: whether a report of ``run`` holds the section (always when None).
    """

    name: str
    module: str
    title: str
    framework: str | None = None
    section: str | None = None
    in_report: Callable[[object], bool] | None = None

    @property
    def function(self) -> Callable:
        """The view's function (its module imported on first use, as ``tw.views.<name>``
        does: after the kernel's warm-up of plotly)."""
        return getattr(importlib.import_module(__package__), self.name)

    @property
    def signature(self) -> inspect.Signature:
        """The function's signature without its first parameter (the run)."""
        sig = inspect.signature(self.function)
        return sig.replace(parameters=list(sig.parameters.values())[1:])

    def applies(self, run) -> bool:
        """Whether a report of ``run`` holds this view."""
        return self.section is not None and (self.in_report is None or self.in_report(run))


# -- when a report holds a view --------------------------------------------------------------
def _several_hosts(run) -> bool:
    return len(run.hosts) >= 2


def _pytorch(run) -> bool:
    # torch-tb-profiler's operator view (steps by role, operators, their kernels).
    frameworks = getattr(run, "framework", None)
    return frameworks is not None and "pytorch" in frameworks


def _maybe_tensorflow(run) -> bool:
    # TensorFlow's own tool: a run known to be JAX or PyTorch has no tf.data.
    frameworks = getattr(run, "framework", None)
    return not (frameworks is not None and frameworks.found and "tensorflow" not in frameworks)


def _has_kernels(run) -> bool:
    return bool(len(run.kernels))


def _has_buffer_assignment(run) -> bool:
    # XLA programs whose HLO protos carry their buffer assignment (JAX and TF-XLA captures).
    return bool(len(run.hlo_memory_peak))


def _has_programs(run) -> bool:
    return bool(len(run.hlo_modules))


def _has_source_lines(run) -> bool:
    return bool((run.source_lines["source_file"].astype(str) != "").any())


def _has_hlo_ops(run) -> bool:
    # XLA runs: XProf's op profile and roofline, where the run has HLO ops.
    return bool(len(run.hlo_stats) and len(run.roofline))


# In a report's order (the operators follow the op stats, where a PyTorch user looks).
VIEWS: tuple[ViewSpec, ...] = (
    ViewSpec(
        "overview",
        "overview_view",
        "The overview page: step-time graph, summary, top ops and advice.",
        section="overview",
    ),
    ViewSpec(
        "pod_viewer",
        "pod_view",
        "Step time per host, the straggler and its cause.",
        section="pod_viewer",
        in_report=_several_hosts,
    ),
    ViewSpec(
        "job",
        "job_view",
        "A distributed job's ranks side by side: step time, the straggler and why, overlap, idle.",
        section="job",
        in_report=_several_hosts,  # ranks of a job are hosts (one process each)
    ),
    ViewSpec(
        "timeline",
        "trace.viewer",
        "The trace viewer: the run's events on a zoomable canvas (wheel/WASD, flows, search).",
        section="timeline",
    ),
    ViewSpec(
        "op_stats",
        "op_stats_view",
        "Pies by op and type, host and device, and the filterable op table.",
        section="op_stats",
    ),
    ViewSpec(
        "operators",
        "operator_view",
        "PyTorch operators: time pies, the step-time breakdown by role, the table.",
        framework="pytorch",
        section="operators",
        in_report=_pytorch,
    ),
    ViewSpec(
        "input_pipeline",
        "input_pipeline_view",
        "Device-side input waits per step, host-side input time and the input ops.",
        section="input_pipeline",
    ),
    ViewSpec(
        "memory_timeline",
        "memory_view",
        "Memory in use over time for one allocator (default: the largest peak).",
        section="memory",
    ),
    ViewSpec(
        "tf_data_graph",
        "tf_data_view",
        "The slowest input pipeline's graph with its bottleneck (or the one chosen).",
        framework="tensorflow",
        section="tf_data",
        in_report=_maybe_tensorflow,
    ),
    ViewSpec(
        "kernel_stats",
        "kernels_view",
        "The top GPU kernels and the kernel table.",
        section="kernels",
        in_report=_has_kernels,
    ),
    ViewSpec(
        "hlo_op_profile",
        "hlo_op_profile_view",
        "XLA's op profile: program -> category -> op tree with utilisations.",
        framework="xla",
        section="hlo_op_profile",
        in_report=_has_hlo_ops,
    ),
    ViewSpec(
        "roofline",
        "roofline_view",
        "XLA's roofline: the device's roofs and one point per HLO op, with the op table.",
        framework="xla",
        section="roofline",
        in_report=_has_hlo_ops,
    ),
    ViewSpec(
        "memory_viewer",
        "memory_viewer_view",
        "XLA's memory viewer: a program's heap over program order, its peak and the buffers then.",
        framework="xla",
        section="memory_viewer",
        in_report=_has_buffer_assignment,
    ),
    ViewSpec(
        "graph_viewer",
        "graph_viewer_view",
        "XLA's graph viewer: the HLO graph around an op, with time, FLOPs and bytes per node.",
        framework="xla",
        section="graph_viewer",
        in_report=_has_programs,
    ),
    ViewSpec(
        "source_lines",
        "source_lines_view",
        "Device and host time per line of the user's source, top lines or one file's lines.",
        section="source_lines",
        in_report=_has_source_lines,
    ),
    ViewSpec(
        "compare",
        "compare_view",
        "This run and another side by side: step time and the ops that changed.",
    ),
)


def by_name() -> dict[str, ViewSpec]:
    """The views by name."""
    return {v.name: v for v in VIEWS}


def report_specs(run) -> list[ViewSpec]:
    """The views a report of ``run`` holds, in the report's order."""
    return [v for v in VIEWS if v.applies(run)]
