"""Views: a Run's tools as interactive plots and tables, in a notebook, an exported notebook and
a report.

Every view is a function of a loaded run (views never open files), also reachable from the
run itself: ``tfprof_widgets.views.op_stats(run)`` is ``run.view.op_stats()``.

=====================  ===================================================  ===============
function               shows                                                module
=====================  ===================================================  ===============
``overview``           step-time graph, averages, verdicts, top ops, advice ``overview_view``
``op_stats``           pies by op and type, the filterable op table         ``op_stats_view``
``timeline``           the canvas trace viewer (wheel/WASD, flows, search) ``timeline_view``
``memory_timeline``    an allocator's memory over time, breakdown at peak   ``memory_view``
``tf_data_graph``      an input pipeline's iterators, bottleneck in red     ``tf_data_view``
``kernel_stats``       the top GPU kernels and the kernel table             ``kernels_view``
``input_pipeline``     input time per step and where the host's time goes   ``input_pipeline_view``
``compare``            two runs' step time and the ops that changed         ``compare_view``
``pod_viewer``         step time per host, the straggler and its cause      ``pod_view``
``operators``          PyTorch operators: time pies, step roles, table      ``operator_view``
``hlo_op_profile``     XLA: program -> category -> op tree, utilisations    ``hlo_op_profile_view``
``roofline``           XLA: device roofs, one point per HLO op, op table    ``roofline_view``
=====================  ===================================================  ===============

Each module is named ``<what>_view`` so that the function exported here never hides it. All
views fill one template, :class:`.base.View` (how a view reaches a notebook, an exported
notebook and a report is explained there); ``tables`` is the table component, ``names`` the
short kernel and op names, ``_pies`` the pies, ``_png`` the static images (optional ``png``
extra), ``_display`` the viewer script, ``timeline_lod`` the timeline's level of detail.
"""

from .base import View
from .compare_view import compare
from .hlo_op_profile_view import hlo_op_profile
from .input_pipeline_view import input_pipeline
from .kernels_view import kernel_stats
from .memory_view import memory_timeline
from .op_stats_view import op_stats
from .operator_view import operators
from .overview_view import overview
from .pod_view import pod_viewer
from .roofline_view import roofline
from .tf_data_view import tf_data_graph
from .timeline_view import timeline

__all__ = [
    "View",
    "compare",
    "hlo_op_profile",
    "input_pipeline",
    "kernel_stats",
    "memory_timeline",
    "op_stats",
    "operators",
    "overview",
    "pod_viewer",
    "roofline",
    "tf_data_graph",
    "timeline",
]
