"""tfprof_widgets: TensorFlow profiles as pandas DataFrames and Jupyter widgets.

    run = tfprof_widgets.load("logs/")     # newest capture under a logdir, or one file
    run.events                             # one row per trace event
    tfprof_widgets.list_runs("logs/")      # every capture under a logdir
"""

from .errors import (
    CorruptProfileError,
    EmptyProfileError,
    NoEventsError,
    ProfileError,
    ProfileNotFoundError,
    WrongFormatError,
)
from .readers.discovery import list_runs
from .run import Run, load

__version__ = "0.1.0"

__all__ = [
    "CorruptProfileError",
    "EmptyProfileError",
    "NoEventsError",
    "ProfileError",
    "ProfileNotFoundError",
    "Run",
    "WrongFormatError",
    "list_runs",
    "load",
    "__version__",
]
