"""Where a capture goes: a fresh run directory that never replaces anything already there.

TensorFlow names run directories by the second (``YYYY_MM_DD_HH_MM_SS``) and writes
``<host>.xplane.pb`` into whatever directory has that name, so two captures in one second
(or a logdir copied from elsewhere) would overwrite a run. We reserve the run directory with
an exclusive ``mkdir`` first, adding ``_2``, ``_3``, ... when the name is taken.
"""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import socket
import tempfile
import time

from ..errors import CaptureError
from ..readers.formats import is_capture_file

__all__ = [
    "DEFAULT_BASE",
    "MIN_FREE_BYTES",
    "default_logdir",
    "prepare_logdir",
    "reserve_run_dir",
    "make_staging",
    "move_run",
    "Unpublished",
    "find_unpublished",
    "publish_unpublished",
]

DEFAULT_BASE = "tfprof_logs"
# A small capture is a few MB; below this we refuse before running the user's code.
MIN_FREE_BYTES = 64 * 1024 * 1024
# TF writes a default-option capture into <logdir>/.tfprof-staging-*/plugins/profile/<run>,
# which is then moved into a run directory of the logdir no one else has.
STAGING_PREFIX = ".tfprof-staging-"
_OWNER = "owner.json"


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
    _refuse_links(logdir, os.path.join(logdir, "plugins"), profile_dir)
    try:
        os.makedirs(profile_dir, exist_ok=True)
        return _unique_dir(profile_dir, name or time.strftime("%Y_%m_%d_%H_%M_%S"))
    except OSError as exc:
        raise CaptureError(logdir, f"cannot create a run directory: {exc.strerror}") from None


def _refuse_links(logdir: str, *paths: str) -> None:
    """A run is written only inside its logdir: a symbolic link planted where the run's
    folders go (``plugins``, ``plugins/profile``) would send it, and what it replaces,
    elsewhere. The logdir itself may be a link: the user named it."""
    for path in paths:
        if os.path.islink(path):
            raise CaptureError(
                logdir,
                f"{path} is a symbolic link (to {os.readlink(path)}); a capture is written "
                "only inside its logdir: remove the link or choose another --logdir",
            )


def make_staging(logdir: str) -> str:
    """A new private ``<logdir>/.tfprof-staging-*`` directory for TF to write a capture into,
    marked with the process that owns it (so that one left by a crash can be told apart)."""
    staging = tempfile.mkdtemp(prefix=STAGING_PREFIX, dir=logdir)
    owner = {"pid": os.getpid(), "host": socket.gethostname(), "started": _process_start()}
    with open(os.path.join(staging, _OWNER), "w", encoding="utf-8") as f:
        json.dump(owner, f)
    return staging


def staged_runs(staging_logdir: str) -> list[str]:
    """The run directories TF wrote under a staging directory that hold capture files."""
    root = os.path.join(staging_logdir, "plugins", "profile")
    try:
        names = sorted(os.listdir(root))
    except OSError:
        return []
    return [
        os.path.join(root, n)
        for n in names
        if os.path.isdir(os.path.join(root, n)) and _holds_capture(os.path.join(root, n))
    ]


def _holds_capture(directory: str) -> bool:
    try:
        return any(is_capture_file(n) for n in os.listdir(directory))
    except OSError:
        return False


def move_run(staging_logdir: str, logdir: str, run_dir: str | None = None) -> str:
    """Move the run TF wrote under ``staging_logdir`` into a fresh run dir of ``logdir``.

    Returns the new run directory; the staging directory is removed afterwards. Safe to
    call again after an interruption: give the ``run_dir`` reserved by the first call (what
    was moved stays moved, the rest follows).
    """
    staged_root = os.path.join(staging_logdir, "plugins", "profile")
    runs = sorted(os.listdir(staged_root)) if os.path.isdir(staged_root) else []
    if run_dir is None:
        if not staged_runs(staging_logdir):
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


@dataclasses.dataclass(frozen=True)
class Unpublished:
    """A capture TF saved into a staging directory that was never moved into place (its
    session was interrupted or crashed while stopping). ``run_dir`` loads as it is."""

    staging: str
    run_dir: str
    logdir: str  # where it belongs: <logdir>/plugins/profile/<run>


def find_unpublished(
    root: str, owned_here: frozenset[str] = frozenset(), max_depth: int = 4
) -> list[Unpublished]:
    """Staging directories under ``root`` left with a capture by a session that is gone.

    ``owned_here``: staging directories this process is still finishing (skipped). One
    whose owner process still runs on this machine is a capture being saved: skipped too.
    The walk never follows symbolic links and goes ``max_depth`` levels down.
    """
    found = []
    root = os.path.abspath(root)
    base = root.rstrip(os.sep).count(os.sep)
    for dirpath, dirnames, _ in os.walk(root, followlinks=False):
        dirnames.sort()
        if dirpath.count(os.sep) - base >= max_depth:
            dirnames[:] = []
        for name in [d for d in dirnames if d.startswith(STAGING_PREFIX)]:
            dirnames.remove(name)  # nothing to find inside one but its own capture
            staging = os.path.join(dirpath, name)
            if staging in owned_here or _owner_alive(staging):
                continue
            found += [Unpublished(staging, r, dirpath) for r in staged_runs(staging)]
        if os.path.basename(dirpath) == "plugins":
            dirnames[:] = []  # captures already in place: nothing to find there
    return found


def publish_unpublished(item: Unpublished) -> str:
    """Move an unpublished capture into a fresh run directory of the logdir it belongs to."""
    try:
        return move_run(item.staging, item.logdir)
    except OSError as exc:
        raise CaptureError(item.staging, f"could not move the capture into place: {exc}") from None


def _process_start(pid: int | None = None) -> str | None:
    """When a process started (Linux: clock ticks since boot), to tell a reused pid apart."""
    try:
        with open(f"/proc/{pid or os.getpid()}/stat", "rb") as f:
            return f.read().rsplit(b")", 1)[1].split()[19].decode()
    except (OSError, IndexError):
        return None


def _owner_alive(staging: str) -> bool:
    try:
        with open(os.path.join(staging, _OWNER), encoding="utf-8") as f:
            owner = json.load(f)
        pid, host = int(owner["pid"]), str(owner["host"])
    except (OSError, ValueError, KeyError, TypeError):
        return False  # no (readable) mark: left by a crash before it was written
    if host != socket.gethostname():
        return True  # another machine's process: it may well be saving right now
    if pid == os.getpid():
        return False  # ours, and not among the captures this process is finishing
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        pass  # exists, owned by another user
    started = owner.get("started")
    return started is None or started == _process_start(pid)
