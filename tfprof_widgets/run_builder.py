"""Building a :class:`~tfprof_widgets.Run`: the readers' host tables put together into the run's
tables, finished, and handed to the Run's one constructor.

Finishing is what loading adds to what the files hold: TPU ops take their device times (the
XEvents' own are kept aside, :mod:`.analysis.device_time`); each event gets its step group and
step (:mod:`.analysis.grouping`, by the step markers of the run's frameworks) and its TF op.
Which frameworks made the run is found once here and kept for its analyses
(``framework_of``). :func:`build_run` does it for hosts just read (:func:`tfprof_widgets.load`);
:func:`run_of_tables` for tables assembled before (a converted dataset's host, see
:mod:`tfprof_widgets.scale`), whose events keep the columns they were stored with.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd

from . import stat_columns
from .analysis.device_time import use_device_times
from .analysis.event_index import on_device
from .analysis.grouping import assign_groups
from .analysis.tool_data import ToolData
from .frameworks import RunFrameworks, framework_of, frameworks_in
from .readers.assemble import RunTables, assemble
from .readers.columnar import HostTables
from .run import Run
from .stat_store import StatStore

__all__ = ["build_run", "run_of_tables"]

_TYPED_COLUMNS = ("group_id", "step", "tf_op")


@dataclasses.dataclass
class _Draft:
    """A run's tables while they are finished, under the names a Run gives them: what the
    device-time, step-grouping and framework functions read (device times also write
    ``events`` and ``stat_store``: they may re-sort the events within a line)."""

    events: pd.DataFrame
    lines: pd.DataFrame
    planes: pd.DataFrame
    stat_store: StatStore
    event_line_rows: np.ndarray
    line_plane_rows: np.ndarray
    t0_ns: int
    tfprof_nodes: pd.DataFrame
    tool_data: ToolData | None = None

    @classmethod
    def of(cls, tables: RunTables, store: StatStore) -> _Draft:
        return cls(
            events=tables.events,
            lines=tables.lines,
            planes=tables.planes,
            stat_store=store,
            event_line_rows=tables.event_line_rows,
            line_plane_rows=tables.line_plane_rows,
            t0_ns=int(tables.t0_ns),
            tfprof_nodes=tables.tfprof_nodes,
        )


def build_run(
    hosts: list[HostTables],
    name: str,
    path: str,
    tool_data: list | None = None,
    capture_log: str = "",
    notes: list[str] | None = None,
) -> Run:
    """The Run of the hosts read: their tables assembled and finished.

    ``tool_data``: the run directory's tool-data files per host (TensorBoard's own numbers,
    the source of the tables when the hosts hold no trace); ``capture_log``: what TensorFlow
    logged while tfprof_widgets made the capture; ``notes``: what loading noticed, after the
    hosts' own warnings in ``run.warnings``.
    """
    if not hosts:
        raise ValueError("a Run needs at least one host's tables")
    tables = assemble(hosts)
    draft = _Draft.of(tables, tables.event_stats)
    # TPU ops take their device times; the XEvents' own are kept aside.
    xevent_times = use_device_times(
        draft, np.array([ln.base_ns for h in hosts for ln in h.lines], np.int64)
    )
    names = [h.host for h in hosts]
    if tool_data:
        # The trace is the source when there is one; tool data alone fills the tables.
        draft.tool_data = ToolData(tool_data, is_source=not len(draft.events), hosts_of_run=names)
    frameworks = _add_typed_columns(draft)
    run = Run(
        dataclasses.replace(tables, events=draft.events, event_stats=draft.stat_store),
        name=name,
        path=path,
        files=[h.path for h in hosts],
        hosts=names,
        errors=[f"{h.host}: {e}" for h in hosts for e in h.errors],
        warnings=[f"{h.host}: {w}" for h in hosts for w in h.warnings] + list(notes or []),
        xevent_times=xevent_times,
        tool_data=draft.tool_data,
        capture_log=capture_log,
    )
    framework_of.seed(run, frameworks)
    return run


def run_of_tables(
    tables: RunTables,
    name: str,
    path: str,
    files: list[str],
    hosts: list[str],
    errors: list[str] | None = None,
    warnings: list[str] | None = None,
) -> Run:
    """A Run of tables assembled before (a converted dataset's host, see
    :mod:`tfprof_widgets.scale`). Events that already carry ``group_id``, ``step`` and
    ``tf_op`` keep them; ``errors``/``warnings`` are taken as they are."""
    frameworks = None
    if not set(_TYPED_COLUMNS) <= set(tables.events.columns):
        stats = tables.event_stats
        store = (
            stats
            if isinstance(stats, StatStore)
            else StatStore.from_frame(stats, len(tables.events))
        )
        frameworks = _add_typed_columns(_Draft.of(tables, store))
    run = Run(
        tables,
        name=name,
        path=path,
        files=files,
        hosts=hosts,
        errors=errors,
        warnings=warnings,
    )
    if frameworks is not None:
        framework_of.seed(run, frameworks)
    return run


def _add_typed_columns(draft: _Draft) -> RunFrameworks:
    """Each event's step group, step and TF op, added to ``draft.events`` in place; returns
    the run's frameworks, whose step markers the grouping followed."""
    ev = draft.events
    # What the run's frameworks are told apart by (its names, stats, tfprof nodes and tool
    # data) is all there now and the rest of loading changes none of it: the analyses'
    # framework_of(run) is this, not found a second time.
    frameworks = frameworks_in(draft)
    ev["group_id"], ev["step"] = assign_groups(
        ev, draft.stat_store, draft.event_line_rows, ~on_device(draft), frameworks
    )
    ev["tf_op"] = stat_columns.categorical(draft.stat_store, "tf_op", len(ev))
    return frameworks
