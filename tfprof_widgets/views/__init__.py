"""Views: ipywidgets + plotly widgets of a Run, live in a kernel and static in exported HTML.

Every view is a function of a loaded run (views never open files), also reachable from the
run itself: ``tfprof_widgets.views.op_stats(run)`` is ``run.view.op_stats()``.

=====================  ===================================================  ===============
function               shows                                                module
=====================  ===================================================  ===============
``overview``           step-time graph, averages, verdicts, top ops, advice ``overview_view``
``op_stats``           pies by op and type, the filterable op table         ``op_stats_view``
``timeline``           the zoomable trace (at most 5,000 marks per window)  ``timeline_view``
``memory_timeline``    an allocator's memory over time, breakdown at peak   ``memory_view``
``tf_data_graph``      an input pipeline's iterators, bottleneck in red     ``tf_data_view``
``kernel_stats``       the top GPU kernels and the kernel table             ``kernels_view``
``input_pipeline``     input time per step and where the host's time goes   ``input_pipeline_view``
``compare``            two runs' step time and the ops that changed         ``compare_view``
``pod_viewer``         step time per host, the straggler and its cause      ``pod_view``
=====================  ===================================================  ===============

Each module is named ``<what>_view`` so that the function exported here never hides it. All
views fill one template, :class:`.base.View`; ``timeline_lod`` is the timeline's level of
detail, ``tables`` and ``_display`` the HTML helpers.
"""

from .base import View
from .compare_view import compare
from .input_pipeline_view import input_pipeline
from .kernels_view import kernel_stats
from .memory_view import memory_timeline
from .op_stats_view import op_stats
from .overview_view import overview
from .pod_view import pod_viewer
from .tf_data_view import tf_data_graph
from .timeline_view import timeline

__all__ = [
    "View",
    "compare",
    "input_pipeline",
    "kernel_stats",
    "memory_timeline",
    "op_stats",
    "overview",
    "pod_viewer",
    "tf_data_graph",
    "timeline",
]
