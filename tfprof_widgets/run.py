"""`Run`: one profiling capture (all hosts) as pandas DataFrames, and the analyses of it.

The DataFrames' columns are documented in :mod:`tfprof_widgets.schema`. A Run only holds
finished tables: loading builds them (:mod:`tfprof_widgets.run_builder`, called by
:func:`tfprof_widgets.load`). Analyses are plain functions of these tables; every analysis
of :data:`tfprof_widgets.catalog.ANALYSES` is declared here as an attribute computed on first
use and cached (``run.ops``, ``run.steps``, ``run.overview_summary``...). ``run.view`` shows it
as widgets.
"""

from __future__ import annotations

import functools
import html
from collections.abc import Callable
from typing import TYPE_CHECKING, TypeVar

import numpy as np
import pandas as pd

from . import schema, stat_columns
from .analysis.input_pipeline import InputPipelineSummary
from .analysis.memo import CACHE_ATTRIBUTE
from .analysis.overview import OverviewSummary
from .analysis.results import StepCount
from .analysis.steps import overview_steps
from .analysis.tool_data import FROM_TOOL_DATA, ToolData
from .catalog import ANALYSES
from .frameworks import RunFrameworks, framework_of
from .frameworks.xla import programs
from .readers.assemble import MetadataTables, RunTables
from .stat_store import StatStore

if TYPE_CHECKING:
    from .frameworks.tensorflow.tf_data import TfDataSummary
    from .views.trace.model import TraceModel

__all__ = ["Run"]

T = TypeVar("T")
# What loading adds to every event (step grouping, the TF op): a Run's events always carry them.
_TYPED_COLUMNS = {"group_id", "step", "tf_op"}


def _analysis(compute: Callable[[Run], T]) -> functools.cached_property[T]:
    """Declares ``run.<name>``: ``compute(run)``, computed when first read and then kept
    (:meth:`Run.clear_cache` forgets it). A run of TensorBoard's tool data alone (no trace)
    gives TensorBoard's own numbers instead where they hold this analysis
    (:data:`~tfprof_widgets.analysis.tool_data.FROM_TOOL_DATA`)."""
    name = compute.__name__

    @functools.wraps(compute)
    def from_trace_or_tool_data(run: Run) -> T:
        td = run.tool_data
        if td is not None and td.is_source and name in FROM_TOOL_DATA:
            return FROM_TOOL_DATA[name](run)
        return compute(run)

    return functools.cached_property(from_trace_or_tool_data)


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

    Every analysis of :data:`~tfprof_widgets.catalog.ANALYSES` is declared below as an
    attribute (``ops``, ``steps``, ``kernels``, ``memory``, ``overview_summary``,
    ``input_pipeline``, ``tf_data``...), computed when first read and kept; :meth:`clear_cache`
    forgets them.
    """

    def __init__(
        self,
        tables: RunTables,
        *,
        name: str,
        path: str,
        files: list[str],
        hosts: list[str],
        errors: list[str] | None = None,
        warnings: list[str] | None = None,
        xevent_times: pd.DataFrame | None = None,
        tool_data: ToolData | None = None,
        capture_log: str = "",
    ) -> None:
        """A Run of finished tables: each event already has its ``group_id``, ``step`` and
        ``tf_op``. Loading builds them (:func:`tfprof_widgets.run_builder.build_run`, and
        :func:`~tfprof_widgets.run_builder.run_of_tables` for a converted dataset's host);
        this only keeps them."""
        if not _TYPED_COLUMNS <= set(tables.events.columns):
            raise ValueError(
                "a Run's events need their group_id, step and tf_op columns: build it with "
                "tfprof_widgets.run_builder"
            )
        self.name = name
        self.path = path
        self.files = list(files)
        self.hosts = list(hosts)
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
        self.errors: list[str] = list(errors or [])
        self.warnings: list[str] = list(warnings or [])
        # Events timed by a device clock (TPU ops) carry it; these are their XEvent times.
        self.xevent_times: pd.DataFrame = (
            xevent_times if xevent_times is not None else schema.empty(schema.XEVENT_TIMES)
        )
        self.tool_data: ToolData | None = tool_data
        # What TensorFlow logged while tfprof_widgets captured this run (its capture.log).
        self.capture_log: str = capture_log

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

    # -- the XLA programs the capture carries (frameworks/xla/programs.py) -----------
    @functools.cached_property
    def hlo_protos(self) -> list[tuple[str, int, bytes]]:
        """(host, program id, serialized ``xla.HloProto``) of each XLA program the capture
        carries (the first of a host's repeats): what :attr:`hlo_modules` decodes, and what
        the memory viewer reads the buffer assignment from (a field the modules leave out)."""
        from .readers.xspace.hlo import program_protos

        return program_protos(self._program_stats())

    @functools.cached_property
    def hlo_modules(self) -> list:
        """(host, program id, ``xla.HloModuleProto``) of each XLA program the capture carries,
        decoded the first time it is read (XLA's cost model needs operands, windows and
        dimension numbers the instruction table leaves out); empty without programs."""
        from .readers.xspace.hlo import parsed_modules

        return parsed_modules(self.hlo_protos)

    @functools.cached_property
    def hlo_instructions(self) -> pd.DataFrame:
        """Every HLO instruction of the XLA programs the capture carries
        (schema.HLO_INSTRUCTIONS): tabulated from :attr:`hlo_modules` the first time it is
        read (each program is decoded once per run), then kept; empty without programs."""
        from .readers.xspace.hlo import instruction_table

        return instruction_table(self.hlo_modules, notes=self.warnings)

    @functools.cached_property
    def hlo_program_rows(self) -> dict[tuple[str, int], range]:
        """(host, program id) -> that program's rows of :attr:`hlo_instructions`, counted from
        the decoded programs without tabulating them."""
        from .readers.xspace.hlo import instruction_count

        return programs.program_rows(self.hlo_modules, instruction_count)

    def hlo_instructions_of(self, chosen: set[tuple[str, int]]) -> pd.DataFrame:
        """The rows of :attr:`hlo_instructions` of the programs named ((host, program id)
        pairs), labelled by their rows there, tabulating those programs alone while the whole
        table is not built (:func:`~.frameworks.xla.programs.instructions_of`)."""
        from .readers.xspace.hlo import instruction_table

        return programs.instructions_of(self, chosen, instruction_table)

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

    # -- analyses: every one of catalog.ANALYSES, declared ---------------------------------
    @_analysis
    def steps(self) -> pd.DataFrame:
        """XProf's step database: step time and its breakdown by category, one row per (host,
        step) (schema.STEPS)."""
        from .analysis.steps import step_breakdown

        return step_breakdown(self)

    @_analysis
    def per_host_steps(self) -> pd.DataFrame:
        """Step time per host side by side, as the pod viewer shows it
        (schema.PER_HOST_STEPS, after one step-time column per host)."""
        from .analysis.steps import per_host_steps

        return per_host_steps(self)

    @_analysis
    def device_precision(self) -> pd.DataFrame:
        """Device compute time by precision (16/32-bit), per host (schema.DEVICE_PRECISION)."""
        from .analysis.steps import device_precision

        return device_precision(self)

    @_analysis
    def ops(self) -> pd.DataFrame:
        """TensorFlow stats: self and total time per op, host and device, IDLE included
        (schema.OP_STATS)."""
        from .analysis.op_stats import op_stats

        return op_stats(self)

    @_analysis
    def kernels(self) -> pd.DataFrame:
        """GPU kernel stats: launch parameters, Tensor Core use, time (schema.KERNELS)."""
        from .analysis.kernels import kernel_stats

        return kernel_stats(self)

    @_analysis
    def memory(self) -> pd.DataFrame:
        """Every allocator event, the memory profile's timeline (schema.MEMORY)."""
        from .analysis.memory import memory_events

        return memory_events(self)

    @_analysis
    def memory_summary(self) -> pd.DataFrame:
        """Per allocator: activity, capacity and the peak (schema.MEMORY_SUMMARY)."""
        from .analysis.memory import memory_summary

        return memory_summary(self)

    @_analysis
    def memory_breakdown(self) -> pd.DataFrame:
        """What was live at the largest allocator peak (schema.MEMORY_BREAKDOWN; another
        allocator's: ``analysis.memory.memory_breakdown(run, allocator=..., host=...)``)."""
        from .analysis.memory import memory_breakdown

        return memory_breakdown(self)

    @_analysis
    def overview_summary(self) -> OverviewSummary:
        """TensorBoard's overview page: averages, input-bound verdict, advice, environment
        (an :class:`~tfprof_widgets.OverviewSummary`)."""
        from .analysis.overview import overview_summary

        return overview_summary(self)

    @_analysis
    def input_pipeline(self) -> InputPipelineSummary:
        """The input pipeline analyzer: device waits per step, host input time, input-op table
        (an :class:`~tfprof_widgets.InputPipelineSummary`)."""
        from .analysis.input_pipeline import input_pipeline

        return input_pipeline(self)

    @_analysis
    def input_time(self) -> pd.DataFrame:
        """Per host and input op, the time its calls cover and the time any input op's calls
        cover, each instant once (schema.INPUT_TIME)."""
        from .analysis.input_pipeline import input_time

        return input_time(self)

    @_analysis
    def temporal_breakdown(self) -> pd.DataFrame:
        """HTA's temporal breakdown: each GPU's idle, compute and non-compute time over its
        span (schema.TEMPORAL_BREAKDOWN)."""
        from .analysis.gpu_time import temporal_breakdown

        return temporal_breakdown(self)

    @_analysis
    def temporal_breakdown_steps(self) -> pd.DataFrame:
        """HTA's temporal breakdown inside each step of :attr:`steps`
        (schema.TEMPORAL_BREAKDOWN_STEPS)."""
        from .analysis.gpu_time import temporal_breakdown_steps

        return temporal_breakdown_steps(self)

    @_analysis
    def kernel_breakdown(self) -> pd.DataFrame:
        """HTA's GPU kernel breakdown: computation, communication and memory kernel time and
        their overlaps, per GPU (schema.KERNEL_BREAKDOWN)."""
        from .analysis.gpu_time import kernel_breakdown

        return kernel_breakdown(self)

    @_analysis
    def stragglers(self) -> pd.DataFrame:
        """The straggler test of a distributed job, per step and rank (a host, or each GPU of
        a host whose GPUs mark their own steps): step time, the median across ranks, the
        deviation, the threshold the other ranks set (their median plus 3 scaled MADs, at
        least 5 %), the flag, and the category that makes it slow (schema.STRAGGLERS)."""
        from .analysis.stragglers import stragglers

        return stragglers(self)

    @_analysis
    def trace_model(self) -> TraceModel:
        """The trace viewer's model of this run (a ``views.trace.model.TraceModel``)."""
        from .views.trace.model import build_trace_model

        return build_trace_model(self)

    @_analysis
    def profile_options(self) -> pd.DataFrame:
        """The options each host's profiler really ran with (schema.PROFILE_OPTIONS)."""
        from .readers.xspace.profile_options import profile_options

        return profile_options(self)

    @_analysis
    def suggestions(self) -> pd.DataFrame:
        """XProf's smart suggestions and the frameworks' verdicts that fire on this run: one
        row per rule, with the figures that made it fire and the view to open
        (schema.SUGGESTIONS)."""
        from .analysis.suggestions import suggestions

        return suggestions(self)

    @_analysis
    def source_lines(self) -> pd.DataFrame:
        """Device and host time per line of the user's source, from the ops' source metadata
        and Python stacks, heaviest first (schema.SOURCE_LINES)."""
        from .analysis.source_lines import source_lines

        return source_lines(self)

    @_analysis
    def collectives(self) -> pd.DataFrame:
        """The collectives: per host, device and collective op (NCCL/RCCL kernels, XLA's
        collective instructions), its count, device time and algorithm and bus bandwidth
        (schema.COLLECTIVES)."""
        from .analysis.collectives import collectives

        return collectives(self)

    @_analysis
    def tf_data(self) -> TfDataSummary:
        """tf.data iterators, pipeline calls and their self time (a ``TfDataSummary``)."""
        from .frameworks.tensorflow.tf_data import tf_data

        return tf_data(self)

    @_analysis
    def tf_data_bottleneck(self) -> pd.DataFrame:
        """Each input pipeline's bottleneck iterator and what to do about it
        (schema.TF_DATA_BOTTLENECK)."""
        from .frameworks.tensorflow.tf_data import tf_data_bottleneck

        return tf_data_bottleneck(self)

    @_analysis
    def tfprof_advice(self) -> pd.DataFrame:
        """TF1 tfprof's advisor checks (schema.TFPROF_ADVICE; a TF1 profile only)."""
        from .frameworks.tensorflow.tfprof_advice import tfprof_advice

        return tfprof_advice(self)

    @_analysis
    def total_float_ops(self) -> int:
        """Floating-point operations of one run of the TF1 graph."""
        from .frameworks.tensorflow.tfprof_tables import total_float_ops

        return total_float_ops(self)

    @_analysis
    def total_parameters(self) -> int:
        """Trainable variable elements of the TF1 graph (every variable's:
        ``tfprof_tables.total_parameters(run, trainable_only=False)``)."""
        from .frameworks.tensorflow.tfprof_tables import total_parameters

        return total_parameters(self)

    @_analysis
    def hlo_stats(self) -> pd.DataFrame:
        """XProf's HLO Stats of an XLA capture: time per HLO instruction with its framework op
        and source line, FLOP rate, bandwidth and bound (schema.HLO_STATS)."""
        from .frameworks.xla.hlo_stats import hlo_stats

        return hlo_stats(self)

    @_analysis
    def roofline_peaks(self) -> pd.DataFrame:
        """The devices' peak FLOP rate, HBM and shared-memory bandwidth and ridge points
        (schema.ROOFLINE_PEAKS)."""
        from .frameworks.xla.roofline import roofline_peaks

        return roofline_peaks(self)

    @_analysis
    def roofline(self) -> pd.DataFrame:
        """XProf's Roofline Model: per HLO op FLOP rate, HBM bandwidth, operational intensity
        and bottleneck (schema.ROOFLINE)."""
        from .frameworks.xla.roofline import roofline

        return roofline(self)

    @_analysis
    def op_profile(self) -> pd.DataFrame:
        """XProf's Op Profile: the program -> category -> op tree with time, FLOP and HBM
        bandwidth utilisation, one row per node (schema.OP_PROFILE)."""
        from .frameworks.xla.op_profile import op_profile

        return op_profile(self)

    @_analysis
    def hlo_memory(self) -> pd.DataFrame:
        """XProf's memory viewer, its buffers: one row per logical buffer of each XLA program
        (its instruction, shape, bytes, allocation and live range in program order)
        (schema.HLO_MEMORY)."""
        from .frameworks.xla.memory_viewer import hlo_memory

        return hlo_memory(self)

    @_analysis
    def hlo_memory_peak(self) -> pd.DataFrame:
        """XProf's memory viewer, its summary: per XLA program the peak heap, where in program
        order it falls and the buffers live then (schema.HLO_MEMORY_PEAK)."""
        from .frameworks.xla.memory_viewer import hlo_memory_peak

        return hlo_memory_peak(self)

    @_analysis
    def hlo_heap_timeline(self) -> pd.DataFrame:
        """XProf's memory viewer, its heap over program order: one row per heap-simulator
        position of every XLA program (schema.HLO_HEAP_TIMELINE)."""
        from .frameworks.xla.memory_viewer import hlo_heap_timeline

        return hlo_heap_timeline(self)

    @_analysis
    def torch_steps(self) -> pd.DataFrame:
        """torch-tb-profiler's step-time breakdown of a PyTorch trace (schema.TORCH_STEPS)."""
        from .frameworks.pytorch.steps import torch_steps

        return torch_steps(self)

    @_analysis
    def torch_ops(self) -> pd.DataFrame:
        """torch-tb-profiler's operator table: calls, host and device self/total time per
        operator (schema.TORCH_OPS)."""
        from .frameworks.pytorch.ops import torch_ops

        return torch_ops(self)

    @_analysis
    def torch_ops_by_shape(self) -> pd.DataFrame:
        """The operator table per operator and input shapes (schema.TORCH_OPS_BY_SHAPE)."""
        from .frameworks.pytorch.ops import torch_ops_by_shape

        return torch_ops_by_shape(self)

    @_analysis
    def torch_kernels(self) -> pd.DataFrame:
        """torch-tb-profiler's kernel view: kernels by the operator that launched them
        (schema.TORCH_KERNELS)."""
        from .frameworks.pytorch.kernels import torch_kernels

        return torch_kernels(self)

    @_analysis
    def torch_gpu_metrics(self) -> pd.DataFrame:
        """torch-tb-profiler's GPU utilization, est. SM efficiency and est. achieved occupancy
        (schema.TORCH_GPU_METRICS)."""
        from .frameworks.pytorch.kernels import torch_gpu_metrics

        return torch_gpu_metrics(self)

    @_analysis
    def idle_time_breakdown(self) -> pd.DataFrame:
        """HTA's idle time per GPU stream split into host wait, kernel wait and other, at
        exact times (schema.IDLE_TIME_BREAKDOWN)."""
        from .frameworks.pytorch.hta import idle_time_breakdown

        return idle_time_breakdown(self)

    @_analysis
    def kernel_launch_stats(self) -> pd.DataFrame:
        """HTA's kernel launch statistics: each launch's CPU and GPU duration and launch delay,
        the launching aten op and HTA's outlier flags (schema.KERNEL_LAUNCH_STATS)."""
        from .frameworks.pytorch.hta import kernel_launch_stats

        return kernel_launch_stats(self)

    @_analysis
    def comm_comp_overlap(self) -> pd.DataFrame:
        """HTA's communication/computation overlap per host and rank
        (schema.COMM_COMP_OVERLAP)."""
        from .frameworks.pytorch.hta import comm_comp_overlap

        return comm_comp_overlap(self)

    @_analysis
    def queue_length_summary(self) -> pd.DataFrame:
        """HTA's queue length per GPU stream (count, mean, quantiles, max) and time blocked on
        a full queue (schema.QUEUE_LENGTH_SUMMARY)."""
        from .frameworks.pytorch.hta import queue_length_summary

        return queue_length_summary(self)

    @_analysis
    def critical_path(self) -> pd.DataFrame:
        """HTA's critical path of rank 0's last full ProfilerStep, at exact times, CUDA-graph
        launches included: the events on it in order and the time each holds
        (schema.CRITICAL_PATH; other ranks and regions:
        ``frameworks.pytorch.critical_path.critical_path(run, rank, annotation, instance_id)``)."""
        from .frameworks.pytorch.critical_path import critical_path

        return critical_path(self)

    @_analysis
    def critical_path_summary(self) -> pd.DataFrame:
        """HTA's summary of ``run.critical_path``: its length by what bounds it (host, GPU
        compute or communication, launch delays, kernel gaps) and the share of each
        (schema.CRITICAL_PATH_SUMMARY)."""
        from .frameworks.pytorch.critical_path import critical_path_summary

        return critical_path_summary(self)

    @_analysis
    def memory_bw_time_series(self) -> pd.DataFrame:
        """HTA's memory bandwidth counters: each memcpy/memset kind's bandwidth (GB/s) at
        every change, per host and rank (schema.MEMORY_BW_TIME_SERIES)."""
        from .frameworks.pytorch.hta_memory_bw import memory_bw_time_series

        return memory_bw_time_series(self)

    @_analysis
    def memory_bw_summary(self) -> pd.DataFrame:
        """HTA's memory bandwidth summary: count, mean, quantiles and max of each memcpy/memset
        kind's bandwidth (GB/s), per host and rank (schema.MEMORY_BW_SUMMARY)."""
        from .frameworks.pytorch.hta_memory_bw import memory_bw_summary

        return memory_bw_summary(self)

    @_analysis
    def frequent_kernel_sequences(self) -> pd.DataFrame:
        """HTA's frequent CUDA kernel sequences of the outermost aten:: operators with three
        kernels or more, per host and rank (schema.FREQUENT_KERNEL_SEQUENCES; other operators:
        frameworks.pytorch.hta_sequences.frequent_kernel_sequences)."""
        from .frameworks.pytorch.hta_sequences import frequent_kernel_sequences

        return frequent_kernel_sequences(self)

    @_analysis
    def straggler_candidates(self) -> pd.DataFrame:
        """HTA's potential stragglers at exact times: per rank and step, when its last long NCCL
        kernel of the metric stream starts, and HTA's two candidate ranks
        (schema.STRAGGLER_CANDIDATES; frameworks.pytorch.hta_stragglers)."""
        from .frameworks.pytorch.hta_stragglers import straggler_candidates

        return straggler_candidates(self)

    # -- the cache and the views ---------------------------------------------------------------
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
