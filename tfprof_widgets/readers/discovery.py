"""Find captures on disk: TensorBoard logdirs, run directories and single files.

Layout written by the TF profiler::

    <logdir>/[train/]plugins/profile/<YYYY_MM_DD_HH_MM_SS>/<host>.xplane.pb

A *run* is one such timestamped directory; it holds one capture file per host. The directory
walk never follows symbolic links, so a link loop in a logdir cannot hang it.
"""

from __future__ import annotations

import dataclasses
import os

from ..errors import EmptyProfileError, ProfileError, ProfileNotFoundError, WrongFormatError
from .formats import XPLANE_SUFFIX, is_capture_file

_MAX_WALK_DEPTH = 12  # plugins/profile sits a few levels below a logdir; bound the walk


@dataclasses.dataclass(frozen=True)
class RunFiles:
    """The capture files of one run, and what the run is called."""

    name: str
    path: str
    files: tuple[str, ...]
    skipped: tuple[str, ...] = ()  # entries named like captures that are not files


def _capture_entries(directory: str) -> tuple[list[str], list[str]]:
    """(capture files, entries named like captures that are not regular files)."""
    try:
        names = sorted(os.listdir(directory))
    except PermissionError:
        raise ProfileError(directory, "permission denied reading the directory") from None
    entries = [os.path.join(directory, n) for n in names if is_capture_file(n)]
    files = [f for f in entries if os.path.isfile(f)]
    odd = [f for f in entries if not os.path.isfile(f)]
    xplanes = [f for f in files if f.endswith(XPLANE_SUFFIX)]
    # A run dir may hold both host.xplane.pb and an older host.trace.json.gz of the same
    # capture: the XSpace is the complete record, so prefer it.
    return (xplanes or files), odd


def find_runs(logdir: str) -> list[RunFiles]:
    """Every run under ``logdir``, oldest first (run names are timestamps)."""
    runs: list[RunFiles] = []
    root_depth = logdir.rstrip(os.sep).count(os.sep)
    for dirpath, dirnames, _ in os.walk(logdir, followlinks=False):
        if dirpath.count(os.sep) - root_depth >= _MAX_WALK_DEPTH:
            dirnames[:] = []
            continue
        dirnames.sort()
        if (
            os.path.basename(dirpath) == "profile"
            and os.path.basename(os.path.dirname(dirpath)) == "plugins"
        ):
            for run in dirnames:
                run_dir = os.path.join(dirpath, run)
                files, odd = _capture_entries(run_dir)
                if files:
                    runs.append(RunFiles(run, run_dir, tuple(files), tuple(odd)))
            dirnames[:] = []  # nothing deeper inside plugins/profile
    runs.sort(key=lambda r: (r.name, max(os.path.getmtime(f) for f in r.files)))
    return runs


def resolve(path: str | os.PathLike[str], run: str | None = None) -> RunFiles:
    """Turn what a user passed to ``load()`` into the files of one run."""
    path = os.fspath(path)
    if not os.path.lexists(path):
        raise ProfileNotFoundError(path, "no such file or directory")
    if os.path.islink(path) and not os.path.exists(path):
        raise ProfileNotFoundError(path, "a symbolic link whose target does not exist")
    if os.path.isfile(path):
        if run is not None:
            raise ProfileError(path, "run= applies to a logdir, but this is a single file")
        return RunFiles(os.path.basename(path), os.path.dirname(os.path.abspath(path)), (path,))
    if not os.path.isdir(path):
        raise WrongFormatError(path, "neither a regular file nor a directory")
    direct, odd = _capture_entries(path)
    if direct and run is None:
        return RunFiles(
            os.path.basename(os.path.abspath(path)),
            os.path.abspath(path),
            tuple(direct),
            tuple(odd),
        )
    runs = find_runs(path)
    if not runs:
        raise EmptyProfileError(
            path,
            "no profile runs found: expected plugins/profile/<run>/<host>.xplane.pb "
            "below this directory (or capture files directly in it)",
        )
    if run is None:
        return runs[-1]
    matches = [r for r in runs if r.name == run or os.path.relpath(r.path, path) == run]
    if not matches:
        names = ", ".join(r.name for r in runs[-10:])
        raise ProfileNotFoundError(path, f"no run named {run!r}; runs here: {names}")
    return matches[-1]
