"""Typed errors: what is wrong with a profile on disk, and why a capture failed.

Every error names the file, directory or server address it is about (``path``) and says what
is wrong (``problem``), so a notebook user sees one readable line instead of a protobuf, JSON
or TensorFlow traceback. There are two separate families:

* :class:`ProfileError` and its subclasses are problems with the *input*: a capture that is
  missing, empty, damaged, of the wrong kind or too large to load. ``load()``,
  ``list_runs()`` and the readers raise only these for anything wrong with the files, so
  ``except tfprof_widgets.ProfileError`` catches exactly the input problems: missing paths
  (:class:`ProfileNotFoundError`, also a ``FileNotFoundError``), empty captures
  (:class:`EmptyProfileError`, :class:`NoEventsError`), damaged or foreign files
  (:class:`CorruptProfileError`, :class:`WrongFormatError`, also ``ValueError``) and
  captures that do not fit in memory (:class:`ProfileTooLargeError`, also a
  ``MemoryError``), and captures from several directories whose times cannot be put on one
  clock (:class:`ClockMismatchError`). It does not catch capture errors.
* :class:`CaptureError` and its subclasses are problems *making* a capture (``%%tfprof``,
  ``capture()``, ``keras_callback()``, ``remote_capture()``): a logdir that cannot take one,
  a profiler already recording (:class:`ProfilerBusyError`), TensorFlow or grpcio missing
  (:class:`CaptureUnavailableError`, also an ``ImportError``), a profiler that failed or
  wrote nothing. Loading the finished capture can still raise a :class:`ProfileError`.
"""

from __future__ import annotations

import os

__all__ = [
    "ProfileError",
    "ProfileNotFoundError",
    "EmptyProfileError",
    "NoEventsError",
    "CorruptProfileError",
    "WrongFormatError",
    "ProfileTooLargeError",
    "ClockMismatchError",
    "CaptureError",
    "ProfilerBusyError",
    "CaptureUnavailableError",
]


class _ProblemAt(Exception):
    """An error about one path (or address): the message is ``"<path>: <problem>"``."""

    def __init__(self, path: str | os.PathLike[str], problem: str) -> None:
        self.path = os.fspath(path)
        self.problem = problem
        super().__init__(f"{self.path}: {problem}")

    def __reduce__(self):
        # Picklable as (path, problem), so that a worker process can raise it to the loader.
        return type(self), (self.path, self.problem)


class ProfileError(_ProblemAt):
    """A profile could not be read. ``path`` is the file or directory, ``problem`` the reason."""


class ProfileNotFoundError(ProfileError, FileNotFoundError):
    """The path does not exist, or a logdir/run name holds no capture of that name."""


class EmptyProfileError(ProfileError):
    """The file or logdir exists but holds nothing to load (empty file, no runs)."""


class NoEventsError(EmptyProfileError):
    """The capture decoded fine but contains no trace events at all."""


class CorruptProfileError(ProfileError, ValueError):
    """The file is of a known kind but damaged: truncated, bit-flipped, text-mangled, bad JSON."""


class WrongFormatError(ProfileError, ValueError):
    """The file is not a profile of any kind we read (an image, a checkpoint, random JSON)."""


class ProfileTooLargeError(ProfileError, MemoryError):
    """Loading the capture would need more memory than is available; load part of it."""


class ClockMismatchError(ProfileError):
    """Captures given to ``load([dir_a, dir_b, ...])`` whose times are not on one clock (one
    counts from its own start, the other in epoch time), so their hosts cannot share one
    timeline; ``path`` is a capture that cannot be aligned, ``problem`` names the others."""


class CaptureError(_ProblemAt):
    """A capture could not be made or saved; ``path`` is the logdir or the server address.

    Raised before the profiled code runs when the logdir cannot take a capture (read-only,
    not a directory, too little free space), and after it when the profiler failed or wrote
    nothing. The user's code and data are never touched.
    """


class ProfilerBusyError(CaptureError):
    """Another profiler session is already running in this process (only one can be)."""


class CaptureUnavailableError(CaptureError, ImportError):
    """Capturing needs TensorFlow (or grpcio for remote capture), which is not installed."""
