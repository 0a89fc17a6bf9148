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

from __future__ import annotations

import importlib

# Each view's module, imported when the view is first asked for: ``import tfprof_widgets``
# and ``tfprof_widgets.views`` import no plotly (the first view does, and the kernel's
# preload may have done it already: see :mod:`tfprof_widgets._preload`).
_MODULES = {
    "View": "base",
    "compare": "compare_view",
    "hlo_op_profile": "hlo_op_profile_view",
    "input_pipeline": "input_pipeline_view",
    "kernel_stats": "kernels_view",
    "memory_timeline": "memory_view",
    "op_stats": "op_stats_view",
    "operators": "operator_view",
    "overview": "overview_view",
    "pod_viewer": "pod_view",
    "roofline": "roofline_view",
    "tf_data_graph": "tf_data_view",
    "timeline": "timeline_view",
}


def __getattr__(name: str):
    module = _MODULES.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from .. import _preload

    _preload.wait()  # one thread imports plotly at a time (no import-lock races)
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value  # found directly from now on
    return value


def __dir__() -> list[str]:
    """The views only: ``tw.views.`` + Tab lists what a user calls, not the modules (they
    stay importable by name)."""
    return sorted(__all__)


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
