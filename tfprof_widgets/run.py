"""`Run`: one profiling capture (all hosts) as pandas DataFrames, and `load()`.

The DataFrames' columns are documented in :mod:`tfprof_widgets.schema`. Analyses are plain
functions of these tables; ``Run`` only holds them and caches what is derived from them.
"""

from __future__ import annotations

import html
import os
from collections.abc import Callable

import pandas as pd

from . import schema, stat_columns
from .analysis.grouping import assign_groups
from .errors import ProfileError
from .readers.capture import HostCapture, assemble
from .readers.chrome_trace import read_chrome_trace
from .readers.discovery import RunFiles, capture_kind, resolve
from .readers.limits import available_memory_bytes, estimated_need, fmt_bytes
from .readers.tfprof import RUN_METADATA_SUFFIXES, read_run_metadata, read_tfprof_profile
from .readers.xspace import read_xspace

__all__ = ["Run", "load"]

_SHOW_PROGRESS_AFTER_S = 1.0
# Loading speed seen here on one core (benchmarks/bench_load.py: 30 MB in 0.45 s). A bar is
# shown from the start when the files' size says loading will take over a second, because a
# big file is walked in a single C call that cannot report until it is done.
_BYTES_PER_SECOND = 60e6


class Run:
    """A loaded capture: every host's events, stats and metadata as DataFrames.

    Attributes:
        name: the run directory's name (``YYYY_MM_DD_HH_MM_SS``) or the file name.
        path: the run directory (or the directory of the single file loaded).
        files: the capture files read, one per host.
        hosts: host names, in file order.
        planes, lines, events, event_stats, event_metadata, metadata_stats, plane_stats:
            the tables described in :mod:`tfprof_widgets.schema`.
        t0_ns: absolute time of ``start_us == 0`` in ns (epoch-based when the capture
            recorded its start time).
        tfprof_nodes, tfprof_execs: for TF1 tfprof profiles and RunMetadata, the graph's
            nodes and their executions per step (empty for other captures).
        errors, warnings: what the profiler itself recorded in the capture (XSpace
            errors/warnings), plus our reader's warnings, each prefixed by its host.
    """

    def __init__(self, captures: list[HostCapture], name: str, path: str) -> None:
        if not captures:
            raise ValueError("a Run needs at least one capture")
        tables = assemble(captures)
        self.name = name
        self.path = path
        self.files = [c.path for c in captures]
        self.hosts = [c.host for c in captures]
        self.planes: pd.DataFrame = tables["planes"]
        self.lines: pd.DataFrame = tables["lines"]
        self.events: pd.DataFrame = tables["events"]
        self.event_stats: pd.DataFrame = tables["event_stats"]
        self.event_metadata: pd.DataFrame = tables["event_metadata"]
        self.metadata_stats: pd.DataFrame = tables["metadata_stats"]
        self.plane_stats: pd.DataFrame = tables["plane_stats"]
        self.t0_ns: int = int(tables["t0_ns"])
        self.errors = [f"{c.host}: {e}" for c in captures for e in c.errors]
        self.warnings = [f"{c.host}: {w}" for c in captures for w in c.warnings]
        self._cache: dict[str, object] = {}
        self.tfprof_nodes = _extra_table(captures, "tfprof_nodes", schema.TFPROF_NODES)
        self.tfprof_execs = _extra_table(captures, "tfprof_execs", schema.TFPROF_EXECS)
        self._fill_typed_columns()

    def _fill_typed_columns(self) -> None:
        from .analysis.event_index import on_device

        ev = self.events
        ev["group_id"], ev["step"] = assign_groups(ev, self.event_stats, ~on_device(self))
        ev["tf_op"] = stat_columns.categorical(self.event_stats, "tf_op", len(ev))

    # -- stats ----------------------------------------------------------------------------
    def stat(self, name: str) -> pd.Series:
        """One stat as a Series aligned with :attr:`events` (missing where absent).

        Integer stats come back as ``Int64`` (``UInt64`` when every value was stored
        unsigned), doubles as float64, strings as a categorical.
        """
        out = stat_columns.typed(self.event_stats, name, len(self.events))
        if out is None:
            known = sorted(self.event_stats["stat"].cat.categories)
            raise KeyError(
                f"no event carries the stat {name!r}; stats in this run: "
                f"{', '.join(known[:40])}{' ...' if len(known) > 40 else ''}"
            )
        return pd.Series(out, index=self.events.index, name=name)

    def events_with(self, *stats: str) -> pd.DataFrame:
        """:attr:`events` with the named stats added as typed columns."""
        df = self.events.copy()
        for s in stats:
            df[s] = self.stat(s)
        return df

    @property
    def stat_names(self) -> list[str]:
        """Names of every stat that some event carries."""
        return sorted(self.event_stats["stat"].cat.categories)

    # -- summaries --------------------------------------------------------------------------
    @property
    def duration_us(self) -> float:
        """From the first event's start to the last event's end, microseconds."""
        end = self.events["end_us"]
        return float(end.max()) if end.notna().any() else 0.0

    def line_summary(self) -> pd.DataFrame:
        """Events, busy span and the most frequent event per host/plane/line."""
        ev = self.events
        g = ev.groupby(["host", "plane", "line"], observed=True, sort=False)
        out = g.agg(
            events=("name", "size"),
            first_us=("start_us", "min"),
            last_us=("end_us", "max"),
            total_dur_us=("dur_us", "sum"),
        )
        return out.reset_index()

    @property
    def profile_options(self) -> pd.DataFrame:
        """The options each host's profiler really ran with, one row per host.

        Decoded from the serialized ``ProfileOptions`` that a capture records about itself
        (the ``profile_options`` stat of its "Task Environment" plane). Hosts whose capture
        does not record them (Chrome traces, older TF) are left out. Columns:
        :data:`tfprof_widgets.schema.PROFILE_OPTIONS`.
        """
        from .readers.profile_options import profile_options_table

        return self.cached(
            "profile_options",
            lambda: profile_options_table(self.plane_stats, dict(zip(self.hosts, self.files))),
        )

    # -- analyses (computed on first use, then cached) ------------------------------------
    @property
    def ops(self) -> pd.DataFrame:
        """TF op statistics, host and device, with IDLE rows (see analysis.op_stats)."""
        from .analysis.op_stats import op_stats

        return self.cached("ops", lambda: op_stats(self))

    @property
    def steps(self) -> pd.DataFrame:
        """One row per (host, step): step time and its breakdown (see analysis.steps)."""
        from .analysis.steps import step_breakdown

        return self.cached("steps", lambda: step_breakdown(self))

    @property
    def memory(self) -> pd.DataFrame:
        """Allocator activity, one row per allocation/free (see analysis.memory)."""
        from .analysis.memory import memory_events

        return self.cached("memory", lambda: memory_events(self))

    @property
    def kernels(self) -> pd.DataFrame:
        """GPU kernel statistics (see analysis.kernels); empty for CPU-only runs."""
        from .analysis.kernels import kernel_stats

        return self.cached("kernels", lambda: kernel_stats(self))

    def cached(self, key: str, compute: Callable[[], object]) -> object:
        """Memoise an analysis result on this run (analyses call this)."""
        if key not in self._cache:
            self._cache[key] = compute()
        return self._cache[key]

    def _summary_lines(self) -> list[str]:
        ev = self.events
        steps = ev["step"].dropna().unique()
        devices = self.planes[self.planes["device_kind"].isin(["GPU", "TPU", "CUSTOM"])]
        return [
            f"run {self.name!r} at {self.path}",
            f"hosts: {', '.join(self.hosts)}",
            f"planes: {len(self.planes)} ({len(devices)} device planes), lines: {len(self.lines)}",
            f"events: {len(ev):,} over {self.duration_us / 1e3:,.1f} ms; stats: "
            f"{len(self.event_stats):,}",
            f"steps: {len(steps)}"
            + (
                f" ({int(min(steps))}..{int(max(steps))})"
                if len(steps)
                else " (no step markers found)"
            ),
        ]

    def __repr__(self) -> str:
        return "<tfprof_widgets.Run\n  " + "\n  ".join(self._summary_lines()) + "\n>"

    def _repr_html_(self) -> str:
        items = "".join(f"<li>{html.escape(s)}</li>" for s in self._summary_lines())
        return f"<div><b>tfprof_widgets.Run</b><ul>{items}</ul></div>"


def _natural_key(path: str) -> list:
    """Sort key that puts run_metadata_2 before run_metadata_10."""
    import re

    return [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", os.path.basename(path))]


def _extra_table(
    captures: list[HostCapture], key: str, spec: dict[str, tuple[str, str]]
) -> pd.DataFrame:
    """A table some formats carry, over every host, typed as ``spec`` says."""
    parts = [c.tables[key].assign(host=c.host) for c in captures if key in c.tables]
    df = pd.concat(parts, ignore_index=True) if parts else pd.DataFrame()
    df = df.reindex(columns=list(spec))
    defaults = {"op_types": (), "inputs": (), "code": (), "data_format": ""}
    for col, empty in defaults.items():
        if col in spec:
            df[col] = df[col].map(lambda v, e=empty: v if isinstance(v, type(e)) else e)
    return df.astype({c: t for c, (t, _) in spec.items() if c not in defaults})


def _read_one(path: str, on_fraction: Callable[[float], None] | None = None) -> HostCapture:
    try:
        with open(path, "rb") as f:
            data = f.read()
    except PermissionError:
        raise ProfileError(path, "permission denied: the file cannot be read") from None
    except IsADirectoryError:
        raise ProfileError(path, "a directory where a capture file was expected") from None
    except OSError as exc:
        raise ProfileError(path, f"cannot be read: {exc.strerror or exc}") from None
    kind = capture_kind(path, data[:16])
    if kind == "xspace":
        return read_xspace(path, data, on_fraction=on_fraction)
    if kind == "tfprof":
        return read_tfprof_profile(path, data)
    if kind == "run_metadata":
        return read_run_metadata([path])
    return read_chrome_trace(path, data)


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


def load(
    path: str | os.PathLike[str],
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
    host's ``*.xplane.pb`` merged, one ``host`` value each), a single ``.xplane.pb``, or a
    Chrome trace ``*.trace.json`` / ``*.trace.json.gz``.

    Loading part of a capture: ``hosts=[...]`` reads only those hosts' files;
    ``planes=[...]`` keeps only planes whose name matches one of the (glob) patterns, e.g.
    ``["/host:CPU", "/device:GPU:*"]``; ``window_s=(start, end)`` keeps only the events that
    overlap that time window, in seconds since the capture began (the profiler's recorded
    start time, else the first event; events cut by an edge are kept whole). Each host's file
    is decoded in full and then cut, so with ``planes=`` or ``window_s=`` the memory needed is
    about that of the largest file, not of all of them.

    A capture whose files predict more memory than is available (or than
    ``max_memory_bytes``) is refused with :class:`~tfprof_widgets.ProfileTooLargeError`
    before anything is read. In a run directory still being written, hosts whose file is
    incomplete are left out with a warning (``run.warnings``); only if no host loads is the
    error raised.

    ``progress``: None shows a progress bar only if loading takes over a second; True
    always; False never. Raises :class:`~tfprof_widgets.ProfileError` subclasses for
    anything wrong with the input. Nothing is ever written.
    """
    import fnmatch
    import warnings

    from .errors import ProfileNotFoundError, ProfileTooLargeError
    from .readers.discovery import host_of

    files: RunFiles = resolve(path, run)
    selected = list(files.files)
    if hosts is not None:
        wanted = set(hosts)
        selected = [f for f in selected if host_of(f) in wanted]
        if not selected:
            raise ProfileNotFoundError(
                path,
                f"no host named {', '.join(sorted(wanted))}; hosts here: "
                f"{', '.join(host_of(f) for f in files.files)}",
            )
    if window_s is not None:
        window_s = (float(window_s[0]), float(window_s[1]))
        if not window_s[0] <= window_s[1]:
            raise ValueError(f"window_s must be (start, end) with start <= end, not {window_s}")
    sizes = [os.path.getsize(f) for f in selected]
    needs = [estimated_need(f, size) for f, size in zip(selected, sizes)]
    # Cut files keep little once decoded: the peak is one file's decode, not the sum.
    need = max(needs) if (planes is not None or window_s is not None) else sum(needs)
    budget = max_memory_bytes if max_memory_bytes is not None else available_memory_bytes()
    if budget is not None and need > budget:
        all_hosts = ", ".join(host_of(f) for f in files.files)
        raise ProfileTooLargeError(
            path,
            f"the capture is {fmt_bytes(sum(sizes))} in {len(selected)} file(s); "
            f"loading it needs about {fmt_bytes(need)} of memory but "
            f"{fmt_bytes(budget)} is available. Load part of it: "
            f"tfprof_widgets.load(path, hosts=[...]) (hosts: {all_hosts}), "
            f'planes=["/device:GPU:0"] or window_s=(start, end) in seconds',
        )
    keep_plane = None
    if planes is not None:
        patterns = list(planes)

        def keep_plane(name: str) -> bool:
            return any(fnmatch.fnmatchcase(name, p) for p in patterns)

    bar = _Progress(sum(sizes), f"loading {files.name}", progress)
    captures, failed = [], []
    # RunMetadata files are the steps of one session, not hosts: read them together.
    steps = [f for f in selected if f.endswith(RUN_METADATA_SUFFIXES)]
    if len(steps) > 1:
        try:
            captures.append(read_run_metadata(sorted(steps, key=_natural_key), "localhost"))
        except ProfileError:
            if len(steps) == len(selected):
                raise
        bar.update(sum(sz for f, sz in zip(selected, sizes) if f in steps))
        sizes = [sz for f, sz in zip(selected, sizes) if f not in steps]
        selected = [f for f in selected if f not in steps]
    try:
        for f, size in zip(selected, sizes):
            done = [0]

            def advance(fraction: float, size: int = size, done: list = done) -> None:
                n = int(fraction * size) - done[0]
                done[0] += n
                bar.update(n)

            try:
                cap = _read_one(f, advance)
            except ProfileError as exc:
                if len(selected) == 1:
                    raise
                failed.append(exc)  # a host still being written: load the others
                continue
            if keep_plane is not None:
                cap = cap.select_planes(keep_plane)
            if window_s is not None:
                cap = cap.select_window(*window_s)
            if (keep_plane is not None or window_s is not None) and not cap.n_events:
                continue
            captures.append(cap)
            advance(1.0)
    finally:
        bar.close()
    if not captures:
        if failed:
            raise failed[0]
        what = []
        if planes is not None:
            what.append(f"planes {', '.join(planes)}")
        if window_s is not None:
            what.append(f"window {window_s[0]:g}-{window_s[1]:g} s")
        raise ProfileNotFoundError(path, f"no event in {' and '.join(what)}")
    loaded = Run(captures, files.name, files.path)
    notes = [f"{exc.path}: not loaded ({exc.problem})" for exc in failed]
    notes += [f"{p}: named like a capture but not a file; skipped" for p in files.skipped]
    for note in notes:
        loaded.warnings.append(note)
        warnings.warn(note, stacklevel=2)
    return loaded
