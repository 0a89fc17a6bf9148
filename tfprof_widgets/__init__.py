"""tfprof_widgets: TensorFlow profiles as pandas DataFrames and Jupyter widgets.

    run = tfprof_widgets.load("logs/")     # newest capture under a logdir, or one file
    run.events                             # one row per trace event
    tfprof_widgets.list_runs("logs/")      # every capture under a logdir
    run.steps, run.ops, run.kernels, run.memory       # analyses, as DataFrames
    run.overview_summary                   # TensorBoard's overview page, as an object
    tfprof_widgets.views.overview(run)     # ... and as a widget (also run.view.overview())

    %load_ext tfprof_widgets               # then %%tfprof on a cell captures and shows it
    with tfprof_widgets.capture() as cap:  # or from a script; cap.run afterwards
        ...

Every analysis of a run is an attribute of it (``run.memory_summary``...), computed when
first read and kept: :class:`Run` declares them all. The functions behind them are in
:mod:`tfprof_widgets.analysis`, the widgets in :mod:`tfprof_widgets.views`; the package itself
adds what is not of one run: :func:`op_diff` (two runs) and :func:`tfprof_table` (a TF1 view
with options).
"""

from __future__ import annotations

from .analysis.compare import op_diff
from .analysis.input_pipeline import InputPipelineSummary
from .analysis.overview import OverviewSummary
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
    ClockMismatchError,
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
from .loading import list_runs, load
from .run import Run
from .views.page import preload as _preload

__version__ = "0.1.0"

_preload.start()  # in a notebook's kernel: plotly warms up while the next cells run


def _one_line_errors() -> None:
    from .magic.errors import install_in_kernel

    install_in_kernel()  # in a notebook's kernel: a ProfileError shows as its one line


_one_line_errors()


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
    """``tw.views``, imported when first used (``import tfprof_widgets`` imports no plotly)."""
    if name == "views":
        import importlib

        return importlib.import_module(".views", __name__)  # binds tfprof_widgets.views
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "Capture",
    "CaptureError",
    "CaptureOptions",
    "CaptureUnavailableError",
    "ClockMismatchError",
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
    "keras_callback",
    "list_runs",
    "load",
    "load_ipython_extension",
    "op_diff",
    "open",
    "remote_capture",
    "stop_capture",
    "tfprof_table",
    "views",
]
