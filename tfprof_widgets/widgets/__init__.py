"""Widgets: ipywidgets + plotly views of a Run, live in a kernel and static in exported HTML.

Widgets never open files; each takes a loaded Run.
"""

from .compare import compare, op_diff
from .input_pipeline import input_pipeline_view
from .kernels import kernel_stats
from .memory import memory_timeline
from .op_stats import op_stats
from .overview import overview
from .tf_data import tf_data_graph
from .timeline import timeline

__all__ = [
    "compare",
    "input_pipeline_view",
    "kernel_stats",
    "memory_timeline",
    "op_diff",
    "op_stats",
    "overview",
    "tf_data_graph",
    "timeline",
]
