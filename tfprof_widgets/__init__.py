"""tfprof_widgets: TensorFlow profiles as pandas DataFrames and Jupyter widgets.

    run = tfprof_widgets.load("logs/")     # newest capture under a logdir, or one file
    run.events                             # one row per trace event
    tfprof_widgets.list_runs("logs/")      # every capture under a logdir
    run.steps, run.ops, run.kernels, run.memory       # analyses, as DataFrames
    tfprof_widgets.overview_summary(run)   # TensorBoard's overview page, as an object
    tfprof_widgets.views.overview(run)     # ... and as a widget (also run.view.overview())

    %load_ext tfprof_widgets               # then %%tfprof on a cell captures and shows it
    with tfprof_widgets.capture() as cap:  # or from a script; cap.run afterwards
        ...

The functions here are thin wrappers: each takes a run and returns what the run caches
(``tfprof_widgets.memory_summary(run)`` is ``run.memory_summary``); the analyses themselves
are in :mod:`tfprof_widgets.analysis`, the widgets in :mod:`tfprof_widgets.views`.
"""

from __future__ import annotations

import warnings as _warnings

import pandas as _pd

from . import _deprecated, _preload
from .analysis.compare import op_diff as _op_diff
from .analysis.input_pipeline import InputPipelineSummary
from .analysis.memory import memory_breakdown as _memory_breakdown
from .analysis.overview import OverviewSummary
from .analysis.steps import per_host_table as _per_host_table
from .capturing import (
    Capture,
    CaptureOptions,
    capture,
    keras_callback,
    remote_capture,
    stop_capture,
)
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
from .frameworks.tensorflow import TfDataSummary, tfprof_table
from .frameworks.tensorflow import total_parameters as _total_parameters
from .loading import list_runs, load
from .run import Run

__version__ = "0.1.0"

_deprecated.install()
_preload.start()  # in a notebook's kernel: plotly warms up while the next cells run


def _one_line_errors() -> None:
    from .magic.errors import install_in_kernel

    install_in_kernel()  # in a notebook's kernel: a ProfileError shows as its one line


_one_line_errors()


# -- analyses: thin wrappers over what a Run caches -----------------------------------------
def step_breakdown(run: Run) -> _pd.DataFrame:
    """One row per (host, step): step time and its breakdown (``run.steps``)."""
    return run.steps


def per_host_steps(run: Run) -> _pd.DataFrame:
    """Step time per host side by side, like XProf's pod viewer (``run.per_host_steps``).

    Passing ``run.steps`` instead of the run still works for one release, with a
    DeprecationWarning.
    """
    if isinstance(run, _pd.DataFrame):
        _warnings.warn(
            "per_host_steps(run.steps) is deprecated and will be removed in the next release: "
            "pass the run, per_host_steps(run)",
            DeprecationWarning,
            stacklevel=2,
        )
        return _per_host_table(run)
    return run.per_host_steps


def overview_summary(run: Run) -> OverviewSummary:
    """What TensorBoard's overview page says about a run (``run.overview_summary``)."""
    return run.overview_summary


def input_pipeline(run: Run) -> InputPipelineSummary:
    """The input-pipeline analysis of a run (``run.input_pipeline``)."""
    return run.input_pipeline


def tf_data(run: Run) -> TfDataSummary:
    """tf.data iterators, pipeline calls and their self time (``run.tf_data``)."""
    return run.tf_data


def tf_data_bottleneck(run: Run) -> _pd.DataFrame:
    """Each input pipeline's bottleneck iterator and what to do (``run.tf_data_bottleneck``)."""
    return run.tf_data_bottleneck


def memory_summary(run: Run) -> _pd.DataFrame:
    """Per allocator: activity, capacity and the peak (``run.memory_summary``)."""
    return run.memory_summary


def memory_breakdown(run: Run, allocator: str | None = None, host: str | None = None):
    """What was live at an allocator's peak; the largest peak's by default
    (``run.memory_breakdown``)."""
    if allocator is None and host is None:
        return run.memory_breakdown
    return _memory_breakdown(run, allocator=allocator, host=host)


def op_diff(run_a: Run, run_b: Run) -> _pd.DataFrame:
    """Two runs' ops side by side, largest change in self time first."""
    return _op_diff(run_a, run_b)


def hlo_stats(run: Run) -> _pd.DataFrame:
    """XProf's HLO Stats of an XLA capture on GPU: time per HLO instruction with its framework
    op and source line (``run.hlo_stats``)."""
    return run.hlo_stats


def roofline(run: Run) -> _pd.DataFrame:
    """XProf's Roofline Model of an XLA capture: one row per HLO op with its FLOP rate, HBM
    bandwidth, operational intensity and bottleneck (``run.roofline``)."""
    return run.roofline


def roofline_peaks(run: Run) -> _pd.DataFrame:
    """The devices' peak FLOP rate, HBM and shared-memory bandwidth and ridge points, from
    the device planes' stats (``run.roofline_peaks``)."""
    return run.roofline_peaks


def op_profile(run: Run) -> _pd.DataFrame:
    """XProf's Op Profile of an XLA capture: the program -> category -> op tree with time,
    FLOP and HBM bandwidth utilisation, one row per node (``run.op_profile``)."""
    return run.op_profile


def temporal_breakdown(run: Run) -> _pd.DataFrame:
    """HTA's temporal breakdown: each GPU's idle, compute and non-compute time over its span
    (``run.temporal_breakdown``)."""
    return run.temporal_breakdown


def temporal_breakdown_steps(run: Run) -> _pd.DataFrame:
    """HTA's temporal breakdown inside each step's window: each GPU's idle, compute and
    non-compute time per step of ``run.steps`` (``run.temporal_breakdown_steps``)."""
    return run.temporal_breakdown_steps


def kernel_breakdown(run: Run) -> _pd.DataFrame:
    """HTA's GPU kernel breakdown: computation, communication and memory kernel time and
    their overlaps, per GPU (``run.kernel_breakdown``)."""
    return run.kernel_breakdown


def torch_steps(run: Run) -> _pd.DataFrame:
    """torch-tb-profiler's step-time breakdown of a PyTorch trace (``run.torch_steps``)."""
    return run.torch_steps


def torch_ops(run: Run, by_shape: bool = False) -> _pd.DataFrame:
    """torch-tb-profiler's operator table: calls, host and device self/total time per
    operator (``run.torch_ops``; ``by_shape``: per operator and input shapes,
    ``run.torch_ops_by_shape``)."""
    return run.torch_ops_by_shape if by_shape else run.torch_ops


def torch_ops_by_shape(run: Run) -> _pd.DataFrame:
    """The operator table per operator and input shapes (``run.torch_ops_by_shape``)."""
    return run.torch_ops_by_shape


def torch_kernels(run: Run) -> _pd.DataFrame:
    """torch-tb-profiler's kernel view: kernels by the operator that launched them
    (``run.torch_kernels``)."""
    return run.torch_kernels


def torch_gpu_metrics(run: Run) -> _pd.DataFrame:
    """torch-tb-profiler's GPU utilization, est. SM efficiency and est. achieved occupancy
    (``run.torch_gpu_metrics``)."""
    return run.torch_gpu_metrics


def tfprof_advice(run: Run) -> _pd.DataFrame:
    """tfprof's advisor checks on a TF1 profile (``run.tfprof_advice``)."""
    return run.tfprof_advice


def total_float_ops(run: Run) -> int:
    """Floating-point operations of one run of the graph (``run.total_float_ops``)."""
    return run.total_float_ops


def total_parameters(run: Run, trainable_only: bool = True) -> int:
    """Variable elements, trainable ones by default (``run.total_parameters``)."""
    return run.total_parameters if trainable_only else _total_parameters(run, False)


# -- pod scale: a capture of many hosts as a Parquet dataset (needs the `scale` extra) ----
def convert(path, output, run: str | None = None, **kwargs):
    """Convert a capture (logdir, run directory or file) into a pod dataset at ``output``,
    one Parquet file set per host, hosts in parallel, resumable: see
    :func:`tfprof_widgets.scale.convert`."""
    from .scale import convert as _convert

    return _convert(path, output, run, **kwargs)


def open(dataset, client=None, **kwargs):  # shadows the builtin only as tw.open
    """Open a pod dataset made by :func:`convert` (a path or an fsspec URL) as a
    :class:`~tfprof_widgets.scale.Pod`: the Run's tables and analyses over every host, by
    DuckDB, or by Dask when ``client`` is a ``dask.distributed.Client``; see
    :func:`tfprof_widgets.scale.open_dataset`."""
    from .scale import open_dataset

    return open_dataset(dataset, client, **kwargs)


def load_ipython_extension(ipython) -> None:
    """``%load_ext tfprof_widgets``: register ``%%tfprof`` / ``%tfprof``.

    Works without TensorFlow installed; capturing then says how to install it.
    """
    from .magic import TfprofMagics
    from .magic.errors import install

    ipython.register_magics(TfprofMagics)
    install(ipython)  # a ProfileError shows as its one line (%tb: the whole traceback)


def __getattr__(name: str):
    """``tw.views``, imported when first used (``import tfprof_widgets`` imports no plotly);
    and the names of the previous release (``tw.overview``, ``tw.tfprof_view``...), with a
    DeprecationWarning naming the new spelling."""
    if name == "views":
        import importlib

        return importlib.import_module(".views", __name__)  # binds tfprof_widgets.views
    return _deprecated.attribute(name)


__all__ = [
    "Capture",
    "CaptureError",
    "CaptureOptions",
    "CaptureUnavailableError",
    "CorruptProfileError",
    "EmptyProfileError",
    "InputPipelineSummary",
    "NoEventsError",
    "OverviewSummary",
    "ProfileError",
    "ProfileNotFoundError",
    "ProfileTooLargeError",
    "ProfilerBusyError",
    "Run",
    "TfDataSummary",
    "WrongFormatError",
    "__version__",
    "capture",
    "convert",
    "hlo_stats",
    "input_pipeline",
    "keras_callback",
    "kernel_breakdown",
    "list_runs",
    "load",
    "load_ipython_extension",
    "memory_breakdown",
    "memory_summary",
    "op_diff",
    "op_profile",
    "open",
    "overview_summary",
    "per_host_steps",
    "remote_capture",
    "roofline",
    "roofline_peaks",
    "step_breakdown",
    "stop_capture",
    "temporal_breakdown",
    "temporal_breakdown_steps",
    "tf_data",
    "tf_data_bottleneck",
    "tfprof_advice",
    "tfprof_table",
    "torch_gpu_metrics",
    "torch_kernels",
    "torch_ops",
    "torch_ops_by_shape",
    "torch_steps",
    "total_float_ops",
    "total_parameters",
    "views",
]
