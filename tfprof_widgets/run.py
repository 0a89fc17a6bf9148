"""`Run`: one profiling capture (all hosts) as pandas DataFrames, and the analyses of it.

The DataFrames' columns are documented in :mod:`tfprof_widgets.schema`. Analyses are plain
functions of these tables; ``Run`` holds the tables and exposes every analysis listed in
:data:`tfprof_widgets.analysis.ANALYSES` as an attribute computed on first use and cached
(``run.ops``, ``run.steps``, ``run.overview_summary``...). ``run.view`` shows it as widgets.
Loading is :func:`tfprof_widgets.load` (in :mod:`tfprof_widgets.loading`).
"""

from __future__ import annotations

import functools
import html

import numpy as np
import pandas as pd

from . import schema, stat_columns
from ._deprecated import moved_attribute
from .analysis import ANALYSES, Analysis
from .analysis.device_time import use_device_times
from .analysis.event_index import on_device
from .analysis.grouping import assign_groups
from .analysis.inputs import CACHE_ATTRIBUTE
from .analysis.results import StepCount
from .analysis.steps import overview_steps
from .analysis.tool_data import FROM_TOOL_DATA, ToolData
from .frameworks import RunFrameworks, framework_of, frameworks_in
from .readers.assemble import MetadataTables, RunTables, assemble
from .readers.columnar import HostTables
from .stat_store import StatStore

__all__ = ["Run"]


class Run:
    """A loaded capture: every host's events, stats and metadata as DataFrames.

    Attributes:
        name: the run directory's name (``YYYY_MM_DD_HH_MM_SS``) or the file name.
        path: the run directory (or the directory of the single file loaded).
        files: the capture files read, one per host (a RunMetadata host: its first file).
        hosts: host names, in file order.
        planes, lines, events, event_stats, event_metadata, metadata_stats, plane_stats:
            the tables described in :mod:`tfprof_widgets.schema`. ``event_stats`` is built
            from :attr:`stat_store` when first read.
        stat_store: every event stat, compact and found by name
            (:class:`~tfprof_widgets.stat_store.StatStore`): what the analyses read, through
            :mod:`tfprof_widgets.stat_columns` (``run.stat(name)`` for one stat as a column).
        xevent_times: the XEvent times of events that carry device times instead (TPU
            ops, see :mod:`tfprof_widgets.analysis.device_time`); empty otherwise.
        event_line_rows: each event's row in :attr:`lines` (int32, aligned with events).
        line_plane_rows: each line's row in :attr:`planes` (int32, aligned with lines).
        t0_ns: absolute time of ``start_us == 0`` in ns (epoch-based when the capture
            recorded its start time).
        tfprof_nodes, tfprof_execs: for TF1 tfprof profiles and RunMetadata, the graph's
            nodes and their executions per step (empty for other captures).
        errors, warnings: what the profiler itself recorded in the capture (XSpace
            errors/warnings), plus our reader's warnings, each prefixed by its host.
        capture_log: what TensorFlow logged while tfprof_widgets made this capture (the
            run directory's ``capture.log``), "" for other captures.
        tool_data: TensorBoard's own numbers from the run directory's tool-data files
            (overview page, input pipeline, TF stats, kernel stats, memory profile, pod
            viewer), a :class:`~tfprof_widgets.analysis.tool_data.ToolData`; None when it
            has none. Without a trace they are the source of ``steps``, ``ops``,
            ``kernels``, ``memory*``, ``overview_summary`` and ``input_pipeline``; with one,
            they are kept to compare with ours (``run.tool_data.compare(run)``).

    Every analysis of :data:`~tfprof_widgets.analysis.ANALYSES` is an attribute too
    (``ops``, ``steps``, ``kernels``, ``memory``, ``overview_summary``, ``input_pipeline``,
    ``tf_data``...), computed when first read and kept; :meth:`clear_cache` forgets them.
    """

    def __init__(
        self, hosts: list[HostTables], name: str, path: str, tool_data: list | None = None
    ) -> None:
        if not hosts:
            raise ValueError("a Run needs at least one host's tables")
        self._adopt(assemble(hosts), name, path, [h.path for h in hosts], [h.host for h in hosts])
        # TPU ops take their device times; the XEvents' own are kept aside.
        self.xevent_times = use_device_times(
            self, np.array([ln.base_ns for h in hosts for ln in h.lines], np.int64)
        )
        self.errors = [f"{h.host}: {e}" for h in hosts for e in h.errors]
        self.warnings = [f"{h.host}: {w}" for h in hosts for w in h.warnings]
        if tool_data:
            # The trace is the source when there is one; tool data alone fills the tables.
            self.tool_data = ToolData(
                tool_data, is_source=not len(self.events), hosts_of_run=self.hosts
            )
        self._fill_typed_columns()

    @classmethod
    def from_tables(
        cls,
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
        run = cls.__new__(cls)
        run._adopt(tables, name, path, list(files), list(hosts))
        run.errors = list(errors or [])
        run.warnings = list(warnings or [])
        if not {"group_id", "step", "tf_op"} <= set(run.events.columns):
            run._fill_typed_columns()
        return run

    def _adopt(
        self, tables: RunTables, name: str, path: str, files: list[str], hosts: list[str]
    ) -> None:
        self.name = name
        self.path = path
        self.files = files
        self.hosts = hosts
        self.planes: pd.DataFrame = tables.planes
        self.lines: pd.DataFrame = tables.lines
        self.events: pd.DataFrame = tables.events
        if isinstance(tables.event_stats, StatStore):
            self.stat_store: StatStore = tables.event_stats
            self._event_stats: pd.DataFrame | None = None
        else:  # a stored long table: kept as it is, and indexed
            self.event_stats = tables.event_stats
        if isinstance(tables.event_metadata, MetadataTables):
            self._metadata: MetadataTables | None = tables.event_metadata
        else:
            self._metadata = None
            self.event_metadata = tables.event_metadata
            self.metadata_stats = tables.metadata_stats
        self.plane_stats: pd.DataFrame = tables.plane_stats
        self.event_line_rows: np.ndarray = tables.event_line_rows
        self.line_plane_rows: np.ndarray = tables.line_plane_rows
        self.t0_ns: int = int(tables.t0_ns)
        self.tfprof_nodes: pd.DataFrame = tables.tfprof_nodes
        self.tfprof_execs: pd.DataFrame = tables.tfprof_execs
        # What TensorFlow logged while tfprof_widgets captured this run (its capture.log).
        self.capture_log: str = ""
        self.tool_data: ToolData | None = None
        # Events timed by a device clock (TPU ops) carry it; these are their XEvent times.
        self.xevent_times: pd.DataFrame = schema.empty(schema.XEVENT_TIMES)

    def _fill_typed_columns(self) -> None:
        ev = self.events
        frameworks = frameworks_in(self)
        ev["group_id"], ev["step"] = assign_groups(
            ev, self.stat_store, self.event_line_rows, ~on_device(self), frameworks
        )
        # What the run's frameworks are told apart by (its names, stats, tfprof nodes and
        # tool data) is all there now and the rest of loading changes none of it: the
        # analyses' framework_of(run) is this, not found a second time.
        framework_of.seed(self, frameworks)
        ev["tf_op"] = stat_columns.categorical(self.stat_store, "tf_op", len(ev))

    # -- stats ----------------------------------------------------------------------------
    @functools.cached_property
    def event_metadata(self) -> pd.DataFrame:
        """Every plane's event metadata (schema.EVENT_METADATA), built when first read."""
        return self._metadata.build()[0]

    @functools.cached_property
    def metadata_stats(self) -> pd.DataFrame:
        """The stats of the event metadata (schema.METADATA_STATS), built when first read."""
        return self._metadata.build()[1]

    @property
    def event_stats(self) -> pd.DataFrame:
        """Every stat of every event, one row each (schema.EVENT_STATS), ordered by event:
        built from :attr:`stat_store` when first read, then kept."""
        if self._event_stats is None:
            self._event_stats = self.stat_store.to_frame()
        return self._event_stats

    @event_stats.setter
    def event_stats(self, table: pd.DataFrame) -> None:
        self._event_stats = table
        self.stat_store = StatStore.from_frame(table, len(self.events))

    def stat(self, name: str) -> pd.Series:
        """One stat as a Series aligned with :attr:`events` (missing where absent).

        Integer stats come back as ``Int64`` (``UInt64`` when every value was stored
        unsigned), doubles as float64, strings as a categorical.
        """
        out = stat_columns.typed(self.stat_store, name, len(self.events))
        if out is None:
            known = sorted(self.stat_store.names)
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
        return sorted(self.stat_store.names)

    @property
    def framework(self) -> RunFrameworks:
        """The frameworks that produced the run and their rules (``run.framework.name``:
        'tensorflow', 'xla', 'pytorch', several joined by '+' as in 'tensorflow+xla' for TF
        with XLA clusters, or 'unknown'; ``.title`` as the views name them)."""
        return framework_of(self)

    @functools.cached_property
    def hlo_instructions(self) -> pd.DataFrame:
        """Every HLO instruction of the XLA programs the capture carries
        (schema.HLO_INSTRUCTIONS): decoded from the ``/host:metadata`` plane's ``Hlo Proto``
        stats the first time it is read (from :attr:`hlo_modules`: each program is decoded
        once per run), then kept; empty for a capture without them."""
        from .readers.xspace.hlo import instruction_table

        return instruction_table(self.hlo_modules, notes=self.warnings)

    @functools.cached_property
    def hlo_program_rows(self) -> dict[tuple[str, int], range]:
        """(host, program id) -> that program's rows of :attr:`hlo_instructions` (the table
        lists each program's instructions together, in :attr:`hlo_modules` order), counted
        from the decoded programs without tabulating them."""
        from .readers.xspace.hlo import instruction_count

        out, start = {}, 0
        for host, program, module in self.hlo_modules:
            stop = start + instruction_count(module)
            out[(host, program)] = range(start, stop)
            start = stop
        return out

    def hlo_instructions_of(self, programs: set[tuple[str, int]]) -> pd.DataFrame:
        """The rows of :attr:`hlo_instructions` of the programs named ((host, program id)
        pairs), labelled by their rows there: taken from that table when it is built, else
        tabulated from those programs alone (the analyses of a capture's device ops read the
        programs that ran, often a few of those it carries: on the JAX H100 capture 2 of 16,
        493 of 1,864 instructions). Text columns are the same; a categorical's categories
        are the values present."""
        from .readers.xspace.hlo import instruction_table

        spans = self.hlo_program_rows
        chosen = [k for k in spans if k in programs]
        labels = np.concatenate(
            [np.arange(spans[k].start, spans[k].stop, dtype=np.int64) for k in chosen]
            or [np.zeros(0, np.int64)]
        )
        if "hlo_instructions" in self.__dict__:
            return self.hlo_instructions.iloc[labels]
        modules = [m for m in self.hlo_modules if (m[0], m[1]) in programs]
        table = instruction_table(modules, notes=self.warnings)
        table.index = labels
        return table

    @functools.cached_property
    def hlo_modules(self) -> list:
        """(host, program id, ``xla.HloModuleProto``) of each XLA program the capture carries,
        decoded the first time it is read (XLA's cost model needs operands, windows and
        dimension numbers the instruction table leaves out); empty without programs."""
        from .readers.xspace.hlo import hlo_modules

        return hlo_modules(self._program_stats())

    def _program_stats(self) -> pd.DataFrame:
        """The metadata stats that name the XLA programs (their 'Hlo Proto' bytes and
        program ids): read from the hosts' metadata alone while :attr:`metadata_stats` is
        not built (only the programs need them in most runs), else that table."""
        from .readers.xspace.hlo import HLO_PROTO_STAT, METADATA_PLANE, PROGRAM_ID_STAT

        if self._metadata is None or "metadata_stats" in self.__dict__:
            return self.metadata_stats
        return self._metadata.stat_rows(METADATA_PLANE, (HLO_PROTO_STAT, PROGRAM_ID_STAT))

    # -- summaries --------------------------------------------------------------------------
    @property
    def duration_us(self) -> float:
        """From the first event's start to the last event's end, microseconds."""
        end = self.events["end_us"]
        return float(end.max()) if end.notna().any() else 0.0

    def line_summary(self) -> pd.DataFrame:
        """Events, busy span and total duration per host/plane/line (schema.LINE_SUMMARY)."""
        g = self.events.groupby(["host", "plane", "line"], observed=True, sort=False)
        out = g.agg(
            events=("name", "size"),
            first_us=("start_us", "min"),
            last_us=("end_us", "max"),
            total_dur_us=("dur_us", "sum"),
        )
        return schema.conform(out.reset_index(), schema.LINE_SUMMARY)

    # -- analyses and views ---------------------------------------------------------------
    def clear_cache(self) -> None:
        """Forget every analysis computed so far (they are recomputed when next read)."""
        for a in ANALYSES:
            self.__dict__.pop(a.name, None)
        self.__dict__.pop(CACHE_ATTRIBUTE, None)  # what the analyses shared

    @property
    def step_count(self) -> StepCount:
        """How many steps this run has (step numbers of ``run.steps``, once across hosts)
        and how many of them the overview averages over: the count every text names."""
        steps = self.steps
        return StepCount.of(steps, overview_steps(steps))

    @property
    def view(self):
        """The widgets of this run: ``run.view.overview()``, ``run.view.op_stats()``...
        (the same as ``tfprof_widgets.views.<name>(run)``)."""
        from .views.accessor import ViewAccessor

        return ViewAccessor(self)

    def _summary_lines(self) -> list[str]:
        ev = self.events
        devices = self.planes[self.planes["device_kind"].isin(schema.DEVICE_KINDS)]
        td = self.tool_data
        steps = self.step_count.summary_line()
        if td is not None and td.is_source:
            return [
                f"run {self.name!r} at {self.path}",
                f"hosts: {', '.join(self.hosts)}",
                f"framework: {self.framework.title}",
                "no trace: TensorBoard's tool data only (" + ", ".join(td.tools) + ")",
                steps
                + (
                    " (from TensorBoard's overview page)"
                    if len(self.steps)
                    else " in the tool data"
                ),
            ]
        if not len(self.steps):
            steps += " (no step markers found)"
        return [
            f"run {self.name!r} at {self.path}",
            f"hosts: {', '.join(self.hosts)}",
            f"framework: {self.framework.title}",
            f"planes: {len(self.planes)} ({len(devices)} device planes), lines: {len(self.lines)}",
            f"events: {len(ev):,} over {self.duration_us / 1e3:,.1f} ms; stats: "
            f"{len(self.stat_store):,}",
            steps,
        ]

    def __repr__(self) -> str:
        return "<tfprof_widgets.Run\n  " + "\n  ".join(self._summary_lines()) + "\n>"

    def _repr_html_(self) -> str:
        items = "".join(f"<li>{html.escape(s)}</li>" for s in self._summary_lines())
        return f"<div><b>tfprof_widgets.Run</b><ul>{items}</ul></div>"


def _analysis_property(analysis: Analysis) -> functools.cached_property:
    """``run.<name>``: the analysis of this run, computed when first read and then kept."""

    def compute(run: Run):
        td = run.tool_data
        if td is not None and td.is_source and analysis.name in FROM_TOOL_DATA:
            return FROM_TOOL_DATA[analysis.name](run)
        return analysis.resolve()(run)

    compute.__name__ = analysis.name
    compute.__doc__ = (
        f"``{analysis.function.lstrip('.').replace(':', '.')}(run)``, cached: "
        f"{analysis.returns}" + (" (see tfprof_widgets.schema)" if analysis.table else "") + "."
    )
    prop = functools.cached_property(compute)
    prop.__set_name__(Run, analysis.name)
    return prop


def __getattr__(name: str):
    return moved_attribute(__name__, name)  # load() lived here in the previous release


for _analysis in ANALYSES:
    setattr(Run, _analysis.name, _analysis_property(_analysis))
del _analysis
