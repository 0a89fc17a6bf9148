"""Loading captures: :func:`load` (a logdir, run directory or file into a :class:`Run`) and
:func:`list_runs` (the runs under a logdir).

Finding the files is :mod:`.readers.discovery`, reading each host's files one reader of
:mod:`.readers` (chosen by :func:`.readers.formats.file_kind`), and merging the hosts into
DataFrames and finishing them into a :class:`Run` is :func:`.run_builder.build_run`. A run
directory's tool-data files (TensorBoard's own numbers, :mod:`.readers.tool_data.reader`) are
read beside the traces and handed to the run as ``run.tool_data``.
"""

from __future__ import annotations

import collections
import contextlib
import dataclasses
import fnmatch
import os
import stat
import warnings
from collections.abc import Callable
from concurrent.futures.process import BrokenProcessPool

import pandas as pd

from . import schema
from .errors import (
    CorruptProfileError,
    EmptyProfileError,
    ProfileError,
    ProfileNotFoundError,
    ProfileTooLargeError,
    WrongFormatError,
)
from .readers.assemble import check_one_clock
from .readers.chrome.reader import read_chrome_trace
from .readers.columnar import HostTables
from .readers.discovery import RunFiles, find_runs, resolve
from .readers.formats import file_format, file_kind, host_of, host_sources, is_capture_file
from .readers.limits import available_memory_bytes, estimated_need, fmt_bytes, memory_cap
from .readers.ranks import shared_ranks
from .readers.tfprof.reader import read_run_metadata, read_tfprof_profile
from .readers.tool_data.reader import (
    HostToolData,
    describe_pb,
    no_trace_tables,
    read_tool_data,
    tool_files_of,
)
from .readers.tool_data.trace_proto import read_trace_proto
from .readers.xspace import host_pool
from .readers.xspace.reader import read_xspace
from .run import Run
from .run_builder import build_run
from .views.page import preload

__all__ = ["CAPTURE_LOG", "list_runs", "load"]

# What TensorFlow logged while tfprof_widgets made a capture, beside its files (run.capture_log).
CAPTURE_LOG = "capture.log"
_MAX_CAPTURE_LOG_BYTES = 1 << 20

_SHOW_PROGRESS_AFTER_S = 1.0
# Loading speed on one core, below what benchmarks/bench_load.py measures (docs/speed.md). A bar is
# shown from the start when the files' size says loading will take over a second, because a
# big file is walked in a single C call that cannot report until it is done.
_BYTES_PER_SECOND = 60e6


_NO_TRACE_TO_CUT = (
    "this run has no trace, only TensorBoard's tool data ({}): planes= and window_s= cut a "
    "trace and do not apply"
)


def load(
    path: str | os.PathLike[str] | list[str | os.PathLike[str]],
    run: str | None = None,
    *,
    hosts: list[str] | None = None,
    planes: list[str] | None = None,
    window_s: tuple[float, float] | None = None,
    progress: bool | None = None,
    max_memory_bytes: int | None = None,
) -> Run:
    """Load a capture into a :class:`Run`.

    ``path`` may be a TensorBoard logdir (the newest run under any
    ``plugins/profile/<run>/`` is taken unless ``run=`` names one), a run directory (every
    host's ``*.xplane.pb`` merged, one ``host`` value each), a single ``.xplane.pb``, a
    Chrome trace ``*.trace.json`` / ``*.trace.json.gz``, or a TF1 tfprof profile or
    RunMetadata (see :mod:`tfprof_widgets.readers.formats`); or a list of these (below).

    Loading part of a capture: ``hosts=[...]`` reads only those hosts' files (the names in
    ``run.hosts``); ``planes=[...]`` keeps only planes whose name matches one of the (glob)
    patterns, e.g. ``["/host:CPU", "/device:GPU:*"]``; ``window_s=(start, end)`` keeps only
    the events that overlap that time window, in seconds since the capture began (the
    profiler's recorded start time, else the first event; events cut by an edge are kept
    whole). Each host's file is decoded in full and then cut, so with ``planes=`` or
    ``window_s=`` the memory needed is about that of the largest file, not of all of them.

    A capture whose files predict more memory than is available (or than
    ``max_memory_bytes``) is refused with :class:`~tfprof_widgets.ProfileTooLargeError`
    before anything is read; the readers keep to the same budget as they go (gzip streams
    and compressed stats are inflated only that far, events and stats are counted against
    it), so a small file that expands to more is refused too. Several hosts are read on
    every core (see :mod:`tfprof_widgets.readers.xspace.host_pool`). In a run directory still being
    written, hosts whose file is incomplete are left out with a warning (``run.warnings``);
    only if no host loads is the error raised.

    Hosts that wrote into separate directories (a job's ranks or workers, each profiled into
    its own logdir) load as one run from a list: ``load([dir_a, dir_b, ...])``, each path
    read as ``load(path)`` reads it (a logdir's newest run, or the one ``run=`` names; a run
    directory; a file). Their hosts share one timeline only where every capture's times are
    epoch times, which is how the profilers say they are on one clock: XSpace line
    timestamps (ns since the Unix epoch from TensorFlow 2.5 and JAX; older TensorFlow
    counted from the session's start), Kineto's ``ts`` (epoch µs, or µs after its header's
    ``baseTimeNanoseconds``). The test is a capture's first event lying after the year
    2000: a capture whose times count from its own start (TensorFlow's ``trace.json.gz``, a
    pre-2.5 XSpace) has nothing that places it against the others, and captures over 100
    days apart are no one job's, so the list is refused with
    :class:`~tfprof_widgets.ClockMismatchError` naming the files.
    Hosts of the same name in several paths get the directory's name after theirs
    (``rank 0 (dir_a)``), with a note in ``run.warnings``. An empty list, a path that does not
    exist, or a capture named twice is a :class:`~tfprof_widgets.ProfileError` naming it; a
    list of one path is ``load(path)``.

    A PyTorch trace whose ``distributedInfo`` names its rank is the host ``rank N`` (HTA's
    name; rank, world size and backend stay as the host plane's stats, ``run.plane_stats``);
    a trace without one keeps its file's name. Two traces naming the same rank are both
    kept, as ``rank N (<file>)``, with a note in ``run.warnings``.

    ``progress``: None shows a progress bar only if loading takes over a second; True
    always; False never. Raises :class:`~tfprof_widgets.ProfileError` subclasses for
    anything wrong with the input. Nothing is ever written.
    """
    if isinstance(path, (list, tuple)):
        return _load_many(
            list(path), run, hosts, planes, window_s, progress, max_memory_bytes, stacklevel=4
        )
    plan = _one_plan(path, run)
    return _load_plan(plan, hosts, planes, window_s, progress, max_memory_bytes, stacklevel=3)


@dataclasses.dataclass
class _Plan:
    """What one load reads: the hosts' traces and tool-data files (by the names the run
    gives them), the run they make, and what was noticed finding them."""

    path: object  # what the user passed, for errors
    files: RunFiles  # the run's name, directory and files
    sources: list[tuple[str, list[str]]]
    tool_sources: list[tuple[str, list[str]]]
    notes: list[str] = dataclasses.field(default_factory=list)
    capture: dict[str, int] | None = None  # a merged load: each host's directory (its index)
    capture_log: str | None = None


def _one_plan(path, run: str | None) -> _Plan:
    """What ``load(path)`` reads: the run :func:`.readers.discovery.resolve` finds there."""
    files: RunFiles = resolve(path, run)
    sources = host_sources(files.files)
    plan = _Plan(path, files, sources, tool_files_of(list(files.tool_files)))
    plan.notes = _rank_notes(sources)
    return plan


def _load_many(paths: list, run, hosts, planes, window_s, progress, max_memory_bytes, stacklevel):
    """``load([dir_a, dir_b, ...])``: each path's run, as ``load(path)`` finds it, read into
    one Run; hosts named alike in several of them are told apart by their directory's name.
    Hosts of different paths share a timeline only where their times are all epoch times
    (:func:`.readers.assemble.check_one_clock`); otherwise ClockMismatchError."""
    if not paths:
        raise EmptyProfileError(
            "[]", "load() was given an empty list: name the directories or files to load"
        )
    if len(paths) == 1:  # load(path) itself, its warnings one frame further from the user
        plan = _one_plan(paths[0], run)
        return _load_plan(plan, hosts, planes, window_s, progress, max_memory_bytes, stacklevel)
    plans = [_one_plan(p, run) for p in paths]
    _check_distinct(plans)
    names, renamed = _names_across(plans)
    capture: dict[str, int] = {}
    sources, tool_sources = [], []
    for i, (p, new) in enumerate(zip(plans, names)):
        sources += [(new[h], fs) for h, fs in p.sources]
        tool_sources += [(new[h], fs) for h, fs in p.tool_sources]
        capture.update({new[h]: i for h, _ in p.sources})
    runs = [p.files for p in plans]
    try:
        where = os.path.commonpath([os.path.abspath(r.path) for r in runs])
    except ValueError:  # paths on different drives
        where = os.path.abspath(runs[0].path)
    merged = RunFiles(
        " + ".join(r.name for r in runs),
        where,
        tuple(f for r in runs for f in r.files),
        tool_files=tuple(f for r in runs for f in r.tool_files),
        formats=tuple(dict.fromkeys(x for r in runs for x in r.formats)),
    )
    notes = [n for p in plans for n in p.notes + _notes(p.files, [], [])] + renamed
    logs = [(r.path, _capture_log(r.path)) for r in runs]
    log = "\n".join(f"== {d} ==\n{text}" for d, text in logs if text)
    named = ", ".join(os.fspath(p) for p in paths)  # what errors about the whole list name
    plan = _Plan(named, merged, sources, tool_sources, notes, capture, log)
    return _load_plan(plan, hosts, planes, window_s, progress, max_memory_bytes, stacklevel)


def _check_distinct(plans: list[_Plan]) -> None:
    """Refuse a list that names one capture file twice (a directory and a file in it, or the
    same directory twice): its hosts would be counted twice."""
    seen: dict[str, object] = {}
    for p in plans:
        for f in p.files.files + p.files.tool_files:
            real = os.path.realpath(f)
            if real in seen:
                raise ProfileError(
                    f,
                    f"given twice: by {os.fspath(p.path)} and, earlier in the list, by "
                    f"{os.fspath(seen[real])}; each capture is loaded once",
                )
            seen[real] = p.path


def _names_across(plans: list[_Plan]) -> tuple[list[dict[str, str]], list[str]]:
    """Each plan's hosts' names in the merged run, and a note for those renamed: a name that
    several directories use gets the directory's name after it (``rank 0 (dir_a)``); where
    those repeat too (files of one directory), the file's name, and then a number."""
    keys, first = [], {}
    for i, p in enumerate(plans):
        for h, fs in p.sources + p.tool_sources:
            if (i, h) not in first:
                keys.append((i, h))
                first[i, h] = fs[0]
    labels = [_label(p.path) for p in plans]
    makers = (
        lambda i, h: f"{h} ({labels[i]})",
        lambda i, h: f"{h} ({os.path.basename(first[i, h])})",
        lambda i, h: f"{h} ({i + 1})",
    )
    name = {k: k[1] for k in keys}
    for make in makers:
        taken = collections.Counter(name.values())
        for k in [k for k in keys if taken[name[k]] > 1]:
            name[k] = make(*k)
    changed = [k for k in keys if name[k] != k[1]]
    notes = []
    if changed:
        shown = "; ".join(f"{h!r} of {first[i, h]} as {name[i, h]!r}" for i, h in changed[:8])
        more = f" and {len(changed) - 8} more" if len(changed) > 8 else ""
        notes.append(f"hosts of the same name in several of the paths loaded: {shown}{more}")
    return [{h: name[i, h] for (i, h) in keys if i == j} for j in range(len(plans))], notes


def _label(path) -> str:
    """The name of the directory a path given to load() stands for (a file's: its own)."""
    full = os.path.abspath(os.fspath(path))
    return os.path.basename(full if os.path.isdir(full) else os.path.dirname(full)) or full


def _load_plan(plan: _Plan, hosts, planes, window_s, progress, max_memory_bytes, stacklevel):
    """Read what ``plan`` lists into a Run (the body of :func:`load`)."""
    path, files = plan.path, plan.files
    preload.viewer_ahead()  # in a kernel: the page parses plotly.js while this reads
    sources, tool_sources = _select_hosts(path, plan.sources, plan.tool_sources, hosts)
    window_s = _checked_window(window_s)
    cut = planes is not None or window_s is not None
    if cut and not sources:
        raise ProfileError(path, _NO_TRACE_TO_CUT.format(", ".join(files.formats)))
    sizes = [sum(_file_size(f) for f in fs) for _, fs in sources]
    room = _check_memory(path, sources, sizes, cut, max_memory_bytes)
    bar = _Progress(sum(sizes), f"loading {files.name}", progress)
    try:
        loaded, failed = _read_hosts(
            sources, sizes, bar, planes, window_s, max_memory_bytes, max_workers=room
        )
    except ProfileError as exc:
        if not tool_sources:
            raise
        loaded, failed = [], [exc]  # an unreadable trace: TensorBoard's numbers remain
    finally:
        bar.close()
    if plan.capture is not None:
        check_one_clock(loaded, [plan.capture.get(t.host, -1) for t in loaded])
    # Without a trace, the tool data is the run (a cut that kept no event is not that case).
    no_trace = not loaded and (failed or not sources)
    with memory_cap(max_memory_bytes):  # the cap bounds the tool-data readers too
        tool_data, tool_failed = _read_tool_data(tool_sources, only=bool(no_trace))
    if not loaded and not (no_trace and tool_data):
        raise failed[0] if failed else _nothing_in(path, planes, window_s)
    if not loaded:  # a run of tool data only: its tables come from the files
        loaded = [no_trace_tables(t.host, next(iter(t.files.values()))) for t in tool_data]
    notes = plan.notes + _notes(files, failed + tool_failed, tool_data)
    result = _build(loaded, files, tool_data, notes, plan.capture_log)
    for note in notes:
        warnings.warn(note, stacklevel=stacklevel)
    return result


def _rank_notes(sources: list[tuple[str, list[str]]]) -> list[str]:
    """A note for each rank that several of a run's traces name in their distributedInfo:
    each is kept, as a host of its own (``rank 0 (a.pt)``)."""
    host_of_file = {fs[0]: h for h, fs in sources}
    shared = shared_ranks(list(host_of_file))
    return [
        f"{', '.join(os.path.basename(f) for f in fs)} all name rank {r} in their "
        f"distributedInfo: each is kept, as hosts {', '.join(host_of_file[f] for f in fs)}"
        for r, fs in shared.items()
    ]


def _notes(files: RunFiles, failed: list[ProfileError], tool_data: list) -> list[str]:
    """What a load left out or noticed, one sentence each (``run.warnings``)."""
    notes = [f"{exc.path}: not loaded ({exc.problem})" for exc in failed]
    notes += [w for t in tool_data for w in t.warnings]
    notes += [f"{p}: named like a capture but not a file; skipped" for p in files.skipped]
    left = _left_out(files)
    if left:
        names = ", ".join(os.path.basename(f) for f in left[:4]) + ("..." if len(left) > 4 else "")
        notes.append(
            f"{files.path}: loaded its .xplane.pb only; {len(left)} other capture(s) here "
            f"are of other hosts or another profiler and were not loaded ({names}): load "
            "each by its path (list_runs() lists them)"
        )
    return notes + _sibling_note(files)


def _left_out(files: RunFiles) -> list[str]:
    """The capture files of a run directory that loading it leaves out and that are no other
    record of a loaded host's capture: beside an XSpace, TensorFlow's older trace of the
    same host is a copy, but a PyTorch trace (or any trace of a host without an XSpace) is
    a capture of its own."""
    if not files.files or not all(f.endswith(".xplane.pb") for f in files.files):
        return []
    if not os.path.isdir(files.path) or os.path.basename(files.path) != files.name:
        return []  # a file loaded by its path (``files.path`` is then its directory)
    try:
        names = sorted(os.listdir(files.path))
    except OSError:
        return []
    loaded = set(files.files)
    hosts = {host_of(f) for f in files.files}
    out = []
    for n in names:
        f = os.path.join(files.path, n)
        if f in loaded or not is_capture_file(n) or host_of(n) in hosts:
            continue
        if os.path.isfile(f):
            out.append(f)
    return out


def list_runs(logdir: str | os.PathLike[str]) -> pd.DataFrame:
    """One row per run under a TensorBoard logdir, oldest first; given a run directory
    itself (what :func:`load` reads as one run), its one row.

    Columns (see :data:`tfprof_widgets.schema.RUNS`): run, path, hosts, bytes, mtime, and
    formats: what each run directory holds ('xplane', 'trace.json.gz', 'trace', tool data
    such as 'overview_page'...).
    """
    logdir = os.fspath(logdir)
    if not os.path.isdir(logdir):
        if not os.path.lexists(logdir):
            raise ProfileNotFoundError(logdir, "no such directory")
        raise ProfileError(logdir, "list_runs() takes a logdir, not a file")
    runs = find_runs(logdir)
    if not runs:  # a run directory itself, as load() takes it
        with contextlib.suppress(ProfileError):
            runs = [resolve(logdir, None)]
    if len(runs) == 1 and os.path.abspath(runs[0].path) == os.path.abspath(logdir):
        # A run directory that also holds captures of its own (PyTorch traces beside an
        # XSpace): each such file is a run of its own, as load() takes it by its path.
        runs += [dataclasses.replace(resolve(f, None), path=f) for f in _left_out(runs[0])]
    rows = []
    for r in runs:
        stats = [s for s in map(_stat_or_none, r.files + r.tool_files) if s is not None]
        if not stats:  # every file of the run removed since it was listed
            continue
        hosts = [host for host, _ in host_sources(r.files)]
        hosts += [h for h, _ in tool_files_of(list(r.tool_files)) if h not in hosts]
        rows.append(
            {
                "run": r.name,
                "path": os.path.abspath(r.path),
                "hosts": tuple(hosts),
                "bytes": sum(s.st_size for s in stats),
                "mtime": pd.Timestamp(max(s.st_mtime for s in stats), unit="s"),
                "formats": r.formats,
            }
        )
    df = pd.DataFrame(rows, columns=list(schema.RUNS))
    return df.astype(schema.dtypes(schema.RUNS))


def _stat_or_none(path: str) -> os.stat_result | None:
    """A listed file's stat; None for one removed since (a logdir being cleaned up)."""
    try:
        return os.stat(path)
    except OSError:
        return None


def _capture_log(run_dir: str) -> str:
    """The run directory's ``capture.log`` (its first MiB), or "" when there is none."""
    try:
        fd = os.open(os.path.join(run_dir, CAPTURE_LOG), os.O_RDONLY | os.O_NONBLOCK)
    except (OSError, ValueError):
        return ""
    with os.fdopen(fd, "rb") as f:
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):  # a FIFO or device named like it
                return ""
            return f.read(_MAX_CAPTURE_LOG_BYTES).decode("utf-8", "replace")
        except OSError:
            return ""


def _build(
    loaded: list[HostTables], files: RunFiles, tool_data, notes: list[str], log: str | None = None
) -> Run:
    """The Run of the hosts read (:func:`.run_builder.build_run`). What the readers accepted
    should always assemble; if some combination of values still trips pandas or numpy here,
    the user gets a ProfileError naming the run (and the cause) rather than a bare exception
    from deep inside."""
    log = _capture_log(files.path) if log is None else log
    try:
        return build_run(
            loaded, files.name, files.path, tool_data=tool_data, capture_log=log, notes=notes
        )
    except ProfileError:
        raise
    except MemoryError as exc:
        raise ProfileTooLargeError(
            files.path, "ran out of memory putting its hosts' tables together"
        ) from exc
    except (ValueError, TypeError, OverflowError, KeyError, IndexError) as exc:
        raise CorruptProfileError(
            files.path,
            f"its files were read but could not be put together into one run "
            f"({type(exc).__name__}: {str(exc)[:200]})",
        ) from exc


# -- what to read ---------------------------------------------------------------------------
def _select_hosts(path, sources, tool_sources, hosts: list[str] | None):
    """The traces and the tool-data files of the hosts asked for (all by default), by the
    name the run gives them (``run.hosts``) or by their file's name (what TensorBoard lists)."""
    if hosts is None:
        return sources, tool_sources
    wanted = set(hosts)
    selected = [(h, fs) for h, fs in sources if h in wanted or host_of(fs[0]) in wanted]
    tools = [(h, fs) for h, fs in tool_sources if h in wanted or host_of(fs[0]) in wanted]
    if not selected and not tools:
        here = list(dict.fromkeys(h for h, _ in sources + tool_sources))
        raise ProfileNotFoundError(
            path, f"no host named {', '.join(sorted(wanted))}; hosts here: {', '.join(here)}"
        )
    return selected, tools


def _read_tool_data(tool_sources, only: bool) -> tuple[list[HostToolData], list[ProfileError]]:
    """Each host's tool-data files. When they are all the run has (``only``), a single
    host's error is raised as it is; otherwise unreadable hosts are reported as warnings."""
    read, failed = [], []
    for host, fs in tool_sources:
        try:
            read.append(read_tool_data(host, fs))
        except ProfileError as exc:
            if only and len(tool_sources) == 1:
                raise
            failed.append(exc)
    if only and not read and failed:
        raise failed[0]
    return read, failed


def _sibling_note(files: RunFiles) -> list[str]:
    """A single tool file loads alone; say so when its run directory has more."""
    if files.files or len(files.tool_files) != 1:
        return []
    try:
        others = [
            n
            for n in os.listdir(files.path)
            if n != files.name and host_of(n) == host_of(files.name) and file_format(n) is not None
        ]
    except OSError:
        return []
    if not others:
        return []
    return [
        f"{files.tool_files[0]}: loaded this one tool's output; its directory holds "
        f"{len(others)} more file(s) of the same run ({', '.join(sorted(others)[:4])}"
        f"{'...' if len(others) > 4 else ''}): load the directory for all of them"
    ]


def _checked_window(window_s) -> tuple[float, float] | None:
    if window_s is None:
        return None
    window_s = (float(window_s[0]), float(window_s[1]))
    if not window_s[0] <= window_s[1]:
        raise ValueError(f"window_s must be (start, end) with start <= end, not {window_s}")
    return window_s


def _file_size(path: str) -> int:
    """A listed capture file's size; one removed since it was listed (a run directory being
    rewritten) is a ProfileNotFoundError naming it, not a bare OSError."""
    try:
        return os.path.getsize(path)
    except FileNotFoundError:
        raise ProfileNotFoundError(
            path, "the file was removed while the run was being loaded"
        ) from None
    except OSError as exc:
        raise ProfileError(path, f"cannot be read: {exc.strerror or exc}") from None


def _check_memory(path, sources, sizes: list[int], cut: bool, max_memory_bytes) -> int | None:
    """Refuse, before reading anything, a capture that would not fit in memory. Returns how
    many processes may read hosts at once within the budget (None: no budget known): each
    one more holds a host's decode beside what the run keeps."""
    needs = [sum(estimated_need(f, _file_size(f)) for f in fs) for _, fs in sources]
    # Cut files keep little once decoded: the peak is one file's decode, not the sum.
    need = max(needs) if cut else sum(needs)
    budget = max_memory_bytes if max_memory_bytes is not None else available_memory_bytes()
    if budget is not None and need > budget:
        all_hosts = ", ".join(h for h, _ in sources)
        n_files = sum(len(fs) for _, fs in sources)
        raise ProfileTooLargeError(
            path,
            f"the capture is {fmt_bytes(sum(sizes))} in {n_files} file(s); "
            f"loading it needs about {fmt_bytes(need)} of memory but "
            f"{fmt_bytes(budget)} is available. Load part of it: "
            f"tfprof_widgets.load(path, hosts=[...]) (hosts: {all_hosts}), "
            f'planes=["/device:GPU:0"] or window_s=(start, end) in seconds',
        )
    largest = max(needs, default=0)
    if budget is None or not largest:
        return None
    return 1 + int((budget - need) // largest)


def _plane_filter(planes: list[str] | None) -> Callable[[str], bool] | None:
    if planes is None:
        return None
    patterns = list(planes)
    return lambda name: any(fnmatch.fnmatchcase(name, p) for p in patterns)


def _nothing_in(path, planes, window_s) -> ProfileNotFoundError:
    what = []
    if planes is not None:
        what.append(f"planes {', '.join(planes)}")
    if window_s is not None:
        what.append(f"window {window_s[0]:g}-{window_s[1]:g} s")
    return ProfileNotFoundError(path, f"no event in {' and '.join(what)}")


# -- reading ------------------------------------------------------------------------------
def _read_hosts(sources, sizes, bar, planes, window_s, max_memory_bytes, max_workers=None):
    """Each host's tables, cut to the planes and window asked for; and the hosts that
    could not be read (when there is more than one: a run still being written). A run of
    several hosts is read on every core (:mod:`.readers.xspace.host_pool`) when that pays, by at
    most ``max_workers`` processes (what the memory budget leaves room for)."""
    workers = host_pool.workers_for(len(sources), sum(sizes))
    if max_workers is not None:
        workers = min(workers, max(max_workers, 1))
    results: list = [None] * len(sources)
    if workers > 1:
        jobs = [(host, fs, planes, window_s, max_memory_bytes) for host, fs in sources]
        try:
            for i, tables, exc in host_pool.map_in_pool(_read_cut, jobs, workers):
                results[i] = exc if exc is not None else tables
                bar.update(sizes[i])
        except BrokenProcessPool:  # a worker died (out of memory?): read the rest here
            warnings.warn(
                "a worker reading the run's hosts died; reading the rest one by one",
                RuntimeWarning,
                stacklevel=3,
            )
    for i, ((host, fs), size) in enumerate(zip(sources, sizes)):
        if results[i] is not None:
            continue
        done = [0]

        def advance(fraction: float, size: int = size, done: list = done) -> None:
            n = int(fraction * size) - done[0]
            done[0] += n
            bar.update(n)

        try:
            results[i] = _read_cut(host, fs, planes, window_s, max_memory_bytes, advance)
        except ProfileError as exc:
            results[i] = exc
        advance(1.0)
    loaded: list[HostTables] = []
    failed: list[ProfileError] = []
    for r in results:
        if isinstance(r, ProfileError):
            if len(sources) == 1:
                raise r
            failed.append(r)
        elif isinstance(r, BaseException):
            raise r
        elif r.n_events or (planes is None and window_s is None):
            loaded.append(r)
    return loaded, failed


def _read_cut(
    host: str,
    files: list[str],
    planes: list[str] | None,
    window_s: tuple[float, float] | None,
    max_memory_bytes: int | None,
    on_fraction: Callable[[float], None] | None = None,
) -> HostTables:
    """One host's tables cut to ``planes`` and ``window_s`` (run here or in a worker)."""
    with memory_cap(max_memory_bytes):
        tables = _read_host(host, files, on_fraction or (lambda f: None))
    keep_plane = _plane_filter(planes)
    if keep_plane is not None:
        tables = tables.select_planes(keep_plane)
    if window_s is not None:
        tables = tables.select_window(*window_s)
    return tables


def _read_host(host: str, files: list[str], on_fraction: Callable[[float], None]) -> HostTables:
    """One host's files into its tables: one capture file, or a session's RunMetadata steps."""
    if len(files) > 1:
        return read_run_metadata(files, host)
    path = files[0]
    try:
        with open(path, "rb") as f:
            data = f.read()
    except PermissionError:
        raise ProfileError(path, "permission denied: the file cannot be read") from None
    except IsADirectoryError:
        raise ProfileError(path, "a directory where a capture file was expected") from None
    except OSError as exc:
        raise ProfileError(path, f"cannot be read: {exc.strerror or exc}") from None
    kind = file_kind(path, data[:64])
    if kind == "xspace":
        try:
            return read_xspace(path, data, host, on_fraction=on_fraction)
        except CorruptProfileError:
            # A damaged capture names its planes early on; only a file without them may be
            # one of TensorBoard's tool files under a capture's name.
            head = data[: 1 << 16]
            what = None if b"/host:" in head or b"/device:" in head else describe_pb(data)
            if what is None:
                raise
            raise WrongFormatError(
                path,
                f"not an XSpace: it decodes as {what}, under a name that does not say so. "
                "Load its run directory (TensorBoard names it <host>.overview_page.pb, "
                "<host>.input_pipeline.pb, <host>.tensorflow_stats.pb or "
                "<host>.kernel_stats.pb)",
            ) from None
    if kind == "tfprof":
        return read_tfprof_profile(path, data, host)
    if kind == "run_metadata":
        return read_run_metadata([path], host)
    if kind == "trace_proto":
        return read_trace_proto(path, data, host)
    return read_chrome_trace(path, data, host)


class _Progress:
    """A tqdm bar over bytes that appears only when loading takes more than ~1 s."""

    def __init__(self, total_bytes: int, desc: str, enabled: bool | None) -> None:
        self._bar = None
        if enabled is False:
            return
        try:
            from tqdm.auto import tqdm
        except ImportError:  # tqdm is a dependency, but a missing bar must never fail a load
            return
        slow = total_bytes / _BYTES_PER_SECOND > _SHOW_PROGRESS_AFTER_S
        self._bar = tqdm(
            total=total_bytes,
            unit="B",
            unit_scale=True,
            desc=desc,
            delay=0 if enabled or slow else _SHOW_PROGRESS_AFTER_S,
            leave=False,
        )

    def update(self, n: int) -> None:
        if self._bar is not None:
            self._bar.update(n)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
