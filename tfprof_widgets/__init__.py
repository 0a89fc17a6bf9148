"""tfprof_widgets: TensorFlow profiles as pandas DataFrames and Jupyter widgets.

run = tfprof_widgets.load("logs/")     # newest capture under a logdir, or one file
run.events                             # one row per trace event
tfprof_widgets.list_runs("logs/")      # every capture under a logdir
run.steps, run.ops, run.kernels, run.memory       # analyses, as DataFrames
tfprof_widgets.overview_summary(run)   # TensorBoard's overview page, as an object

%load_ext tfprof_widgets               # then %%tfprof on a cell captures and shows it
with tfprof_widgets.capture() as cap:  # or from a script; cap.run afterwards
    ...
"""

from .analysis.input_pipeline import input_pipeline
from .analysis.memory import memory_breakdown, memory_summary
from .analysis.overview import overview_summary
from .analysis.steps import per_host_steps, step_breakdown
from .analysis.tf_data import tf_data, tf_data_bottleneck
from .analysis.tfprof_advice import tfprof_advice
from .analysis.tfprof_views import tfprof_view, total_float_ops, total_parameters
from .capture import Capture, CaptureOptions, capture, keras_callback, remote_capture, stop_capture
from .errors import (
    CaptureError,
    CaptureUnavailableError,
    CorruptProfileError,
    EmptyProfileError,
    NoEventsError,
    ProfileError,
    ProfileNotFoundError,
    ProfilerBusyError,
    ProfileTooLargeError,
    WrongFormatError,
)
from .readers.discovery import list_runs
from .run import Run, load
from .widgets import (
    compare,
    input_pipeline_view,
    kernel_stats,
    memory_timeline,
    op_stats,
    overview,
    tf_data_graph,
    timeline,
)

__version__ = "0.1.0"


def load_ipython_extension(ipython) -> None:
    """``%load_ext tfprof_widgets``: register ``%%tfprof`` / ``%tfprof``.

    Works without TensorFlow installed; capturing then says how to install it.
    """
    from .magic import TfprofMagics

    ipython.register_magics(TfprofMagics)


__all__ = [
    "Capture",
    "CaptureError",
    "CaptureOptions",
    "CaptureUnavailableError",
    "CorruptProfileError",
    "EmptyProfileError",
    "NoEventsError",
    "ProfileError",
    "ProfileNotFoundError",
    "ProfileTooLargeError",
    "ProfilerBusyError",
    "Run",
    "WrongFormatError",
    "capture",
    "compare",
    "input_pipeline",
    "input_pipeline_view",
    "keras_callback",
    "kernel_stats",
    "load_ipython_extension",
    "list_runs",
    "load",
    "memory_breakdown",
    "memory_summary",
    "memory_timeline",
    "op_stats",
    "overview",
    "overview_summary",
    "per_host_steps",
    "remote_capture",
    "step_breakdown",
    "stop_capture",
    "tf_data",
    "tf_data_bottleneck",
    "tf_data_graph",
    "tfprof_advice",
    "tfprof_view",
    "timeline",
    "total_float_ops",
    "total_parameters",
    "__version__",
]
