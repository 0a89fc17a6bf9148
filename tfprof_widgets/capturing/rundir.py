"""Where a capture goes: a fresh run directory that never replaces anything already there.

TensorFlow names run directories by the second (``YYYY_MM_DD_HH_MM_SS``) and writes
``<host>.xplane.pb`` into whatever directory has that name, so two captures in one second
(or a logdir copied from elsewhere) would overwrite a run. We reserve the run directory with
an exclusive ``mkdir`` first, adding ``_2``, ``_3``, ... when the name is taken.
"""

from __future__ import annotations

import os
import shutil
import time

from ..errors import CaptureError

__all__ = [
    "DEFAULT_BASE",
    "MIN_FREE_BYTES",
    "default_logdir",
    "prepare_logdir",
    "reserve_run_dir",
    "move_run",
]

DEFAULT_BASE = "tfprof_logs"
# A small capture is a few MB; below this we refuse before running the user's code.
MIN_FREE_BYTES = 64 * 1024 * 1024


def _unique_dir(parent: str, name: str) -> str:
    """Create ``parent/name`` (or ``name_2``, ...) exclusively and return it."""
    for n in range(1, 10_000):
        path = os.path.join(parent, name if n == 1 else f"{name}_{n}")
        try:
            os.mkdir(path)
            return path
        except FileExistsError:
            continue
    raise CaptureError(parent, f"could not find a free name like {name!r} here")


def default_logdir() -> str:
    """A fresh ``./tfprof_logs/<YYYYmmdd-HHMMSS>`` directory, created now."""
    base = os.path.abspath(DEFAULT_BASE)
    prepare_logdir(base)
    return _unique_dir(base, time.strftime("%Y%m%d-%H%M%S"))


def prepare_logdir(logdir: str, min_free_bytes: int | None = None) -> str:
    """Create ``logdir`` if needed and check that a capture can be written into it."""
    if min_free_bytes is None:
        min_free_bytes = MIN_FREE_BYTES
    logdir = os.path.abspath(os.fspath(logdir))
    if os.path.lexists(logdir) and not os.path.isdir(logdir):
        raise CaptureError(logdir, "exists and is not a directory; give a directory as logdir")
    try:
        os.makedirs(logdir, exist_ok=True)
    except OSError as exc:
        raise CaptureError(logdir, f"cannot create the logdir: {exc.strerror}") from None
    if not os.access(logdir, os.W_OK | os.X_OK):
        raise CaptureError(logdir, "the logdir is not writable; choose another with --logdir")
    free = shutil.disk_usage(logdir).free
    if free < min_free_bytes:
        raise CaptureError(
            logdir,
            f"only {free / 2**20:.1f} MiB free on this disk; a capture "
            f"needs at least {min_free_bytes / 2**20:.0f} MiB. Free "
            "space or choose another --logdir",
        )
    return logdir


def reserve_run_dir(logdir: str, name: str | None = None) -> str:
    """Create and return ``<logdir>/plugins/profile/<name>``, a directory no one else has."""
    profile_dir = os.path.join(logdir, "plugins", "profile")
    try:
        os.makedirs(profile_dir, exist_ok=True)
        return _unique_dir(profile_dir, name or time.strftime("%Y_%m_%d_%H_%M_%S"))
    except OSError as exc:
        raise CaptureError(logdir, f"cannot create a run directory: {exc.strerror}") from None


def move_run(staging_logdir: str, logdir: str) -> str:
    """Move the one run TF wrote under ``staging_logdir`` into a fresh run dir of ``logdir``.

    Returns the new run directory. The staging directory is removed afterwards.
    """
    staged_root = os.path.join(staging_logdir, "plugins", "profile")
    runs = sorted(os.listdir(staged_root)) if os.path.isdir(staged_root) else []
    if not runs:
        raise CaptureError(
            logdir, "the profiler stopped but wrote no capture file (is the disk full?)"
        )
    run_dir = reserve_run_dir(logdir, runs[-1])
    for run in runs:
        for entry in sorted(os.listdir(os.path.join(staged_root, run))):
            # New names inside a directory we just created: nothing can be replaced.
            os.rename(os.path.join(staged_root, run, entry), os.path.join(run_dir, entry))
    shutil.rmtree(staging_logdir, ignore_errors=True)
    return run_dir
