"""`Run`: one profiling capture (all hosts) as pandas DataFrames, and `load()`.

The DataFrames' columns are documented in :mod:`tfprof_widgets.schema`. Analyses are plain
functions of these tables; ``Run`` only holds them and caches what is derived from them.
"""

from __future__ import annotations

import html
import os
from typing import Callable

import numpy as np
import pandas as pd

from .analysis.grouping import assign_groups, stat_categorical
from .errors import ProfileError
from .readers.capture import HostCapture, assemble
from .readers.chrome_trace import read_chrome_trace
from .readers.discovery import RunFiles, capture_kind, resolve
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
        self._fill_typed_columns()

    def _fill_typed_columns(self) -> None:
        from .analysis.event_index import on_device

        ev = self.events
        ev["group_id"], ev["step"] = assign_groups(ev, self.event_stats, ~on_device(self))
        ev["tf_op"] = stat_categorical(self.event_stats, "tf_op", len(ev))

    # -- stats ----------------------------------------------------------------------------
    def stat(self, name: str) -> pd.Series:
        """One stat as a Series aligned with :attr:`events` (missing where absent).

        Integer stats come back as ``Int64`` (``UInt64`` when every value was stored
        unsigned), doubles as float64, strings as a categorical.
        """
        rows = self.event_stats[self.event_stats["stat"] == name]
        if not len(rows):
            known = sorted(self.event_stats["stat"].cat.categories)
            raise KeyError(f"no event carries the stat {name!r}; stats in this run: "
                           f"{', '.join(known[:40])}{' ...' if len(known) > 40 else ''}")
        rows = rows.drop_duplicates("event", keep="last")
        idx = rows["event"].to_numpy()
        kinds = set(rows["kind"].astype(str))
        n = len(self.events)
        if kinds <= {"int", "uint"}:
            vals = rows["int_value"].to_numpy()
            if kinds == {"uint"}:
                out = pd.array(np.zeros(n, np.uint64), dtype="UInt64")
                out[idx] = vals.view(np.uint64)
            else:
                out = pd.array(np.zeros(n, np.int64), dtype="Int64")
                out[idx] = vals
            mask = np.ones(n, bool)
            mask[idx] = False
            out[mask] = pd.NA
            return pd.Series(out, index=self.events.index, name=name)
        if kinds <= {"int", "uint", "double"}:
            out = np.full(n, np.nan)
            vals = np.where(rows["kind"] == "double", rows["float_value"],
                            rows["int_value"].astype(np.float64))
            out[idx] = vals
            return pd.Series(out, index=self.events.index, name=name)
        out = np.full(n, None, object)
        str_rows = rows["str_value"].astype(object).to_numpy()
        num = np.where(rows["kind"] == "double", rows["float_value"], rows["int_value"])
        out[idx] = np.where(pd.isna(str_rows), num.astype(object), str_rows)
        return pd.Series(pd.Categorical(out), index=self.events.index, name=name)

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
        out = g.agg(events=("name", "size"), first_us=("start_us", "min"),
                    last_us=("end_us", "max"), total_dur_us=("dur_us", "sum"))
        return out.reset_index()

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
            f"planes: {len(self.planes)} ({len(devices)} device planes), lines: "
            f"{len(self.lines)}",
            f"events: {len(ev):,} over {self.duration_us / 1e3:,.1f} ms; stats: "
            f"{len(self.event_stats):,}",
            f"steps: {len(steps)}" + (f" ({int(min(steps))}..{int(max(steps))})"
                                      if len(steps) else " (no step markers found)"),
        ]

    def __repr__(self) -> str:
        return "<tfprof_widgets.Run\n  " + "\n  ".join(self._summary_lines()) + "\n>"

    def _repr_html_(self) -> str:
        items = "".join(f"<li>{html.escape(s)}</li>" for s in self._summary_lines())
        return f"<div><b>tfprof_widgets.Run</b><ul>{items}</ul></div>"


def _read_one(path: str, on_fraction: Callable[[float], None] | None = None) -> HostCapture:
    try:
        with open(path, "rb") as f:
            data = f.read()
    except PermissionError:
        raise ProfileError(path, "permission denied: the file cannot be read")
    except IsADirectoryError:
        raise ProfileError(path, "a directory where a capture file was expected")
    except OSError as exc:
        raise ProfileError(path, f"cannot be read: {exc.strerror or exc}")
    kind = capture_kind(path, data[:16])
    if kind == "xspace":
        return read_xspace(path, data, on_fraction=on_fraction)
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
        self._bar = tqdm(total=total_bytes, unit="B", unit_scale=True, desc=desc,
                         delay=0 if enabled or slow else _SHOW_PROGRESS_AFTER_S, leave=False)

    def update(self, n: int) -> None:
        if self._bar is not None:
            self._bar.update(n)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()


def load(path: str | os.PathLike[str], run: str | None = None, *,
         progress: bool | None = None) -> Run:
    """Load a capture into a :class:`Run`.

    ``path`` may be a TensorBoard logdir (the newest run under any
    ``plugins/profile/<run>/`` is taken unless ``run=`` names one), a run directory (every
    host's ``*.xplane.pb`` merged, one ``host`` value each), a single ``.xplane.pb``, or a
    Chrome trace ``*.trace.json`` / ``*.trace.json.gz``.

    ``progress``: None shows a progress bar only if loading takes over a second; True
    always; False never. Raises :class:`~tfprof_widgets.ProfileError` subclasses for
    anything wrong with the input. Nothing is ever written.
    """
    files: RunFiles = resolve(path, run)
    sizes = [os.path.getsize(f) for f in files.files]
    bar = _Progress(sum(sizes), f"loading {files.name}", progress)
    captures = []
    try:
        for f, size in zip(files.files, sizes):
            done = [0]

            def advance(fraction: float, size: int = size, done: list = done) -> None:
                n = int(fraction * size) - done[0]
                done[0] += n
                bar.update(n)

            captures.append(_read_one(f, advance))
            advance(1.0)
    finally:
        bar.close()
    return Run(captures, files.name, files.path)
