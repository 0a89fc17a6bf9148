"""``run.view``: a run's widgets, named like the functions of :mod:`tfprof_widgets.views`.

``run.view.op_stats()`` is ``tfprof_widgets.views.op_stats(run)``, the way xarray puts its
plots under ``da.plot``. The run imports this only when ``run.view`` is first used.
"""

from __future__ import annotations

from . import (
    compare,
    input_pipeline,
    kernel_stats,
    memory_timeline,
    op_stats,
    operators,
    overview,
    pod_viewer,
    tf_data_graph,
    timeline,
)

__all__ = ["ViewAccessor"]


class ViewAccessor:
    """The widgets of one run; each method takes the options of its function in ``views``."""

    def __init__(self, run) -> None:
        self._run = run

    def overview(self):
        """The overview page: step-time graph, summary, top ops and advice."""
        return overview(self._run)

    def op_stats(self, include_idle: bool = False):
        """Pies by op and type, host and device, and the filterable op table."""
        return op_stats(self._run, include_idle)

    def timeline(self, window_us: tuple[float, float] | None = None):
        """The zoomable trace timeline; ``window_us`` picks the first window."""
        return timeline(self._run, window_us)

    def memory_timeline(self, allocator: str | None = None):
        """Memory in use over time for one allocator (default: the largest peak)."""
        return memory_timeline(self._run, allocator)

    def tf_data_graph(self, host: str | None = None, pipeline: int | None = None):
        """The slowest input pipeline's graph with its bottleneck (or the one chosen)."""
        return tf_data_graph(self._run, host, pipeline)

    def kernel_stats(self):
        """The top GPU kernels and the kernel table."""
        return kernel_stats(self._run)

    def input_pipeline(self):
        """Device-side input waits per step, host-side input time and the input ops."""
        return input_pipeline(self._run)

    def compare(self, other, names: tuple[str, str] | None = None):
        """This run and ``other`` side by side."""
        return compare(self._run, other, names)

    def pod_viewer(self):
        """Step time per host, the straggler and its cause."""
        return pod_viewer(self._run)

    def operators(self):
        """PyTorch operators: time pies, the step-time breakdown by role, the table."""
        return operators(self._run)

    def __repr__(self) -> str:
        names = [n for n in dir(self) if not n.startswith("_")]
        return f"<views of run {self._run.name!r}: {', '.join(names)}>"
