"""Find captures on disk: TensorBoard logdirs, run directories and single files.

Layout written by the TF profiler::

    <logdir>/[train/]plugins/profile/<YYYY_MM_DD_HH_MM_SS>/<host>.xplane.pb

A *run* is one such timestamped directory; it holds one capture file per host. Older
TensorFlow wrote other files there (TF 2.0/2.1 ``local.trace``; TF 2.2-2.10
``<host>.trace.json.gz`` and the tool-data files ``<host>.overview_page.pb``...): the trace
of each host is its ``.xplane.pb`` when the run has one, else its Chrome trace, else its
``.trace``; tool-data files are listed apart (``RunFiles.tool_files``). The directory walk
never follows symbolic links, so a link loop in a logdir cannot hang it.
"""

from __future__ import annotations

import dataclasses
import os

from ..errors import EmptyProfileError, ProfileError, ProfileNotFoundError, WrongFormatError
from .formats import (
    TRACE_PROTO_SUFFIX,
    XPLANE_SUFFIX,
    file_format,
    host_of,
    is_capture_file,
    is_tool_data_name,
)

_MAX_WALK_DEPTH = 12  # plugins/profile sits a few levels below a logdir; bound the walk


@dataclasses.dataclass(frozen=True)
class RunFiles:
    """The capture files of one run, and what the run is called."""

    name: str
    path: str
    files: tuple[str, ...]  # the traces, one per host (RunMetadata: one per step)
    skipped: tuple[str, ...] = ()  # entries named like captures that are not files
    tool_files: tuple[str, ...] = ()  # TensorBoard's tool-data files (readers.tool_data.reader)
    formats: tuple[str, ...] = ()  # what the directory holds (formats.file_format), each once


def _capture_entries(directory: str) -> RunFiles:
    """The traces and tool-data files of a directory (``name`` left empty)."""
    try:
        names = sorted(os.listdir(directory))
    except PermissionError:
        raise ProfileError(directory, "permission denied reading the directory") from None
    except FileNotFoundError:  # removed between the walk and now (a logdir being cleaned)
        raise ProfileNotFoundError(directory, "the directory was removed while listed") from None
    except OSError as exc:
        raise ProfileError(directory, f"cannot be listed: {exc.strerror or exc}") from None
    entries = [os.path.join(directory, n) for n in names if is_capture_file(n)]
    tools = [os.path.join(directory, n) for n in names if is_tool_data_name(n)]
    files = [f for f in entries if os.path.isfile(f)]
    odd = [f for f in entries + tools if not os.path.isfile(f)]
    tools = [f for f in tools if os.path.isfile(f)]
    xplanes = [f for f in files if f.endswith(XPLANE_SUFFIX)]
    # A run dir may hold both host.xplane.pb and an older host.trace.json.gz of the same
    # capture: the XSpace is the complete record, so prefer it. Without one, a host's Chrome
    # trace is preferred to the Trace protobuf it was made from.
    chrome_hosts = {host_of(f) for f in files if not f.endswith(TRACE_PROTO_SUFFIX)}
    traces = xplanes or [
        f for f in files if not (f.endswith(TRACE_PROTO_SUFFIX) and host_of(f) in chrome_hosts)
    ]
    formats = tuple(dict.fromkeys(filter(None, (file_format(n) for n in names))))
    return RunFiles("", directory, tuple(traces), tuple(odd), tuple(tools), formats)


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
                found = _capture_entries(os.path.join(dirpath, run))
                if found.files or found.tool_files:
                    runs.append(dataclasses.replace(found, name=run))
            dirnames[:] = []  # nothing deeper inside plugins/profile
    runs.sort(key=lambda r: (r.name, max(_mtime(f) for f in r.files + r.tool_files)))
    return runs


def _mtime(path: str) -> float:
    """A listed file's modification time; 0 for one removed since it was listed (a run
    directory being rewritten), which loading then reports by name."""
    try:
        return os.path.getmtime(path)
    except OSError:
        return 0.0


def text_path(path) -> str:
    """``path`` as a str path: a ``str`` or an ``os.PathLike`` of one (``pathlib.Path``).
    Anything else, bytes paths included, is a :class:`TypeError` saying what is accepted."""
    got = path
    if isinstance(path, os.PathLike):
        got = os.fspath(path)
    if isinstance(got, str):
        return got
    if isinstance(got, (bytes, bytearray, memoryview)):
        raise TypeError(
            "a capture's path is a str or an os.PathLike of one (pathlib.Path), not bytes: "
            "pass os.fsdecode(path), which keeps any byte of a file name that is not UTF-8"
        )
    raise TypeError(
        "a capture's path is a str or an os.PathLike of one (pathlib.Path): a logdir, a run "
        f"directory or a capture file, not {type(got).__name__}"
    )


def resolve(path: str | os.PathLike[str], run: str | None = None) -> RunFiles:
    """Turn what a user passed to ``load()`` into the files of one run."""
    path = text_path(path)
    if not os.path.lexists(path):
        raise ProfileNotFoundError(path, "no such file or directory")
    if os.path.islink(path) and not os.path.exists(path):
        raise ProfileNotFoundError(path, "a symbolic link whose target does not exist")
    if os.path.isfile(path):
        if run is not None:
            raise ProfileError(path, "run= applies to a logdir, but this is a single file")
        name, parent = os.path.basename(path), os.path.dirname(os.path.abspath(path))
        fmt = (file_format(name) or "",)
        if is_tool_data_name(name):
            return RunFiles(name, parent, (), tool_files=(path,), formats=fmt)
        return RunFiles(name, parent, (path,), formats=fmt)
    if not os.path.isdir(path):
        raise WrongFormatError(path, "neither a regular file nor a directory")
    direct = _capture_entries(path)
    if (direct.files or direct.tool_files) and run is None:
        return dataclasses.replace(
            direct, name=os.path.basename(os.path.abspath(path)), path=os.path.abspath(path)
        )
    runs = find_runs(path)
    if not runs:
        raise EmptyProfileError(
            path,
            "no profile runs found: expected plugins/profile/<run>/<host>.xplane.pb "
            "(or older TensorFlow's <host>.trace.json.gz, local.trace or tool-data files "
            "such as <host>.overview_page.pb) below this directory, or capture files "
            "directly in it",
        )
    if run is None:
        return runs[-1]
    matches = [r for r in runs if r.name == run or os.path.relpath(r.path, path) == run]
    if not matches:
        names = ", ".join(r.name for r in runs[-10:])
        raise ProfileNotFoundError(path, f"no run named {run!r}; runs here: {names}")
    return matches[-1]
