"""TensorBoard's own numbers of a run: :class:`ToolData` (``run.tool_data``).

A run directory written by TF 2.2-2.10 holds, beside the trace, the outputs of TensorBoard's
Profile tools (overview page, input pipeline, TF stats, kernel stats, memory profile; pod
viewer and DataTable JSON from the 2019 Cloud TPU profiler). The readers decode them
(:mod:`tfprof_widgets.readers.tool_data.reader`); this module gathers every host's into one
:class:`ToolData` with our tables and summaries.

* When the run has a trace (an xplane, a Chrome trace or a TF 2.0/2.1 ``.trace``), the trace
  is the source of every analysis and ``run.tool_data`` keeps TensorBoard's numbers beside
  ours for comparison (:meth:`ToolData.compare`).
* When it has none (TF 2.2 wrote no xplane), the analyses that the files answer come from
  them (:data:`FROM_TOOL_DATA`): ``run.steps``, ``run.ops``, ``run.kernels``,
  ``run.memory``, ``run.memory_summary``, ``run.memory_breakdown``,
  ``run.overview_summary`` and ``run.input_pipeline`` are TensorBoard's numbers, mapped onto
  our columns, never re-derived; the event-based ones are empty.

Figures a file does not state are worked out from the ones it does, the way XProf works
them out: the share of step time of each category is its average over the average step
time; the idle share is what input, output, compute and collectives leave. Where even
that is impossible (op-time placement without TF stats) the figure is NaN.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from .. import schema
from .input_pipeline import InputPipelineSummary, input_pipeline
from .memo import tool_data_source
from .overview import OverviewSummary, overview_summary
from .steps import CATEGORIES

__all__ = ["FROM_TOOL_DATA", "ToolData", "no_trace_note", "tool_data_source"]

_EMPTY = {
    "steps": schema.TOOL_STEPS,
    "tf_stats": schema.TOOL_TF_STATS,
    "tf_stats_without_idle": schema.TOOL_TF_STATS,
    "top_ops": schema.TOOL_TOP_OPS,
    "input_ops": schema.INPUT_OPS,
    "kernels": schema.KERNELS,
    "memory": schema.MEMORY,
    "memory_summary": schema.MEMORY_SUMMARY,
    "memory_breakdown": schema.TOOL_MEMORY_BREAKDOWN,
    "pod_stats": schema.TOOL_POD_STATS,
    "all_reduce_ops": schema.TOOL_ALL_REDUCE_OPS,
}


class ToolData:
    """The tool-data files of a run: TensorBoard's numbers as our tables and summaries.

    Attributes (empty tables, or None for the summaries, where the run has no such file):

    * ``files`` (schema.TOOL_DATA_FILES), ``tools`` (the tools present), ``hosts``;
    * ``overview_page``: an :class:`~tfprof_widgets.OverviewSummary` of the (first host's)
      overview page; ``overview_pages`` one per host;
    * ``input_pipeline``: an :class:`~tfprof_widgets.InputPipelineSummary`;
    * ``steps`` (schema.TOOL_STEPS): the steps the overview / input-pipeline pages list;
    * ``tf_stats`` / ``tf_stats_without_idle`` (schema.TOOL_TF_STATS): TensorBoard's TF stats
      table with and without the IDLE rows; ``top_ops`` (schema.TOOL_TOP_OPS);
    * ``kernel_stats`` (schema.KERNELS);
    * ``memory_profile`` (schema.MEMORY), ``memory_summary`` (schema.MEMORY_SUMMARY),
      ``memory_breakdowns`` (schema.TOOL_MEMORY_BREAKDOWN: every allocator's active
      allocations at its peak; :meth:`memory_breakdown` picks one);
    * ``pod_viewer`` (schema.TOOL_POD_STATS) and ``all_reduce_ops``
      (schema.TOOL_ALL_REDUCE_OPS);
    * ``raw``: ``{(host, tool): message}``, the decoded files (protobuf messages, or the JSON
      for the memory profile, pod viewer and DataTables), for anything the tables leave out;
    * ``is_source``: True when the run has no trace and its analyses come from these files.
    """

    def __init__(self, hosts: list, is_source: bool, hosts_of_run: list[str] | None = None):
        self.is_source = is_source
        self.hosts = [h.host for h in hosts]
        self._run_hosts = list(hosts_of_run or self.hosts)
        self.files = schema.conform(
            pd.DataFrame(
                [
                    (h.host, tool, h.encodings.get(tool, ""), path)
                    for h in hosts
                    for tool, path in h.files.items()
                ],
                columns=list(schema.TOOL_DATA_FILES),
            ),
            schema.TOOL_DATA_FILES,
        )
        self.tools = sorted({tool for h in hosts for tool in h.files})
        self.raw = {(h.host, tool): msg for h in hosts for tool, msg in h.raw.items()}
        tables = {
            name: _concat([h.tables.get(name) for h in hosts], spec)
            for name, spec in _EMPTY.items()
        }
        self.steps = tables["steps"]
        self.tf_stats = tables["tf_stats"]
        self.tf_stats_without_idle = tables["tf_stats_without_idle"]
        self.top_ops = tables["top_ops"]
        self.kernel_stats = tables["kernels"]
        self.memory_profile = tables["memory"]
        self.memory_summary = tables["memory_summary"]
        self.memory_breakdowns = tables["memory_breakdown"]
        self.pod_viewer = tables["pod_stats"]
        self.all_reduce_ops = tables["all_reduce_ops"]
        has_trace = not is_source
        self.overview_pages = {
            h.host: _overview_summary(h, self._run_hosts, has_trace)
            for h in hosts
            if h.overview is not None
        }
        self.overview_page = next(iter(self.overview_pages.values()), None)
        pipelines = [h for h in hosts if h.input_pipeline is not None]
        self.input_pipeline = _pipeline_summary(pipelines) if pipelines else None

    def memory_breakdown(self, allocator: str | None = None, host: str | None = None):
        """What was live at an allocator's peak as the file lists it (schema.MEMORY_BREAKDOWN);
        the allocator with the largest peak by default."""
        summary = self.memory_summary
        if not len(summary):
            return schema.empty(schema.MEMORY_BREAKDOWN)
        if allocator is None:
            pick = summary.sort_values("peak_in_use_bytes", ascending=False).iloc[0]
            host, allocator = pick["host"], pick["allocator"]
        bd = self.memory_breakdowns
        sel = bd["allocator"] == allocator
        if host is not None:
            sel &= bd["host"] == host
        if not (summary["allocator"] == allocator).any():
            raise KeyError(f"no allocator {allocator!r}" + (f" on host {host!r}" if host else ""))
        return schema.conform(bd[sel].reset_index(drop=True), schema.MEMORY_BREAKDOWN)

    def compare(self, run) -> pd.DataFrame:
        """TensorBoard's headline numbers beside ours for the same run: one row per figure
        (columns figure, tensorboard, ours). Useful when the run also has a trace, where
        ``run``'s analyses come from it; on a run without one the two columns are equal."""
        rows = []
        o = self.overview_page
        if o is not None:
            ours = run.overview_summary
            for name in (
                "n_steps",
                "step_time_ms_avg",
                "input_percent",
                "compute_percent",
                "kernel_launch_percent",
                "all_other_percent",
                "device_compute_16bit_percent",
                "input_classification",
            ):
                rows.append((name, getattr(o, name), getattr(ours, name)))
        for name, theirs, mine in (
            ("tf_stats rows", self.tf_stats, run.ops),
            ("kernel_stats rows", self.kernel_stats, run.kernels),
            ("memory allocators", self.memory_summary, run.memory_summary),
        ):
            if len(theirs):
                rows.append((name, len(theirs), len(mine)))
        if len(self.kernel_stats):
            rows.append(
                (
                    "kernel time µs",
                    float(self.kernel_stats["total_time_us"].sum()),
                    float(run.kernels["total_time_us"].sum()),
                )
            )
        for s in self.memory_summary.itertuples():
            mine = run.memory_summary
            m = mine[(mine["allocator"] == s.allocator)]
            rows.append(
                (
                    f"{s.allocator} peak bytes",
                    int(s.peak_in_use_bytes),
                    int(m["peak_in_use_bytes"].iloc[0]) if len(m) else None,
                )
            )
        return pd.DataFrame(rows, columns=["figure", "tensorboard", "ours"], dtype=object)

    def __repr__(self) -> str:
        role = "the source of this run's tables" if self.is_source else "kept beside the trace"
        lines = [f"<ToolData of {', '.join(self.hosts)}: {', '.join(self.tools)}; {role}"]
        if self.overview_page is not None:
            lines.append(
                f"  {self.overview_page.n_steps} steps; {self.overview_page.input_statement}"
            )
        return "\n".join(lines) + ">"


def _concat(parts: list, spec: dict) -> pd.DataFrame:
    parts = [p for p in parts if p is not None]
    if not parts:
        return schema.empty(spec)
    df = pd.concat(parts, ignore_index=True) if len(parts) > 1 else parts[0]
    fixed = schema.conform(df, spec)
    extra = [c for c in df.columns if c not in spec]  # pod viewer categories
    return pd.concat([fixed, df[extra]], axis=1) if extra else fixed


def _nan(v) -> float:
    return math.nan if v is None else float(v)


def _op_placement(tf_stats: pd.DataFrame) -> tuple[float, float]:
    """Shares of op self time on the host and the device (IDLE left out), from TF stats."""
    real = tf_stats[tf_stats["type"] != "IDLE"]
    if not len(real):
        return math.nan, math.nan
    host = float(real.loc[real["host_or_device"] == "Host", "total_self_time_us"].sum())
    dev = float(real.loc[real["host_or_device"] == "Device", "total_self_time_us"].sum())
    both = host + dev
    return (100 * host / both, 100 * dev / both) if both else (math.nan, math.nan)


# The overview page's sentences and classifications, as the file states them.
_VERDICT_FIELDS = (
    "input_classification",
    "input_statement",
    "output_statement",
    "kernel_launch_classification",
    "kernel_launch_statement",
    "all_other_classification",
    "all_other_statement",
    "device_collectives_classification",
    "device_collectives_statement",
    "summary_next_step",
    "precision_statement",
)
# Figures the file may lack (NaN then).
_OPTIONAL_FIGURES = (
    "device_compute_16bit_percent",
    "device_compute_32bit_percent",
    "host_op_occurrence_percent",
    "device_op_occurrence_percent",
    "host_idle_percent",
    "device_idle_percent",
    "device_duty_cycle_percent",
    "eager_host_op_percent",
    "eager_device_op_percent",
)
_STATEMENTS = (
    "input_statement",
    "output_statement",
    "kernel_launch_statement",
    "all_other_statement",
    "device_collectives_statement",
    "precision_statement",
)


def _shares(f: dict, avg: dict[str, float]) -> dict[str, float]:
    """The step-time shares (%): the file's where it states them, else from the averages."""
    step = f["step_time_ms_avg"]

    def share(category: str) -> float:
        return 100.0 * avg[category] / step if step else 0.0

    out = {
        "input_percent": f["input_percent"]
        if f["input_percent"] is not None
        else share("input_us"),
        "output_percent": (
            f["output_percent"] if f["output_percent"] is not None else share("output_us")
        ),
        "compute_percent": (
            f["compute_percent"] if f["compute_percent"] is not None else share("device_compute_us")
        ),
        "kernel_launch_percent": share("kernel_launch_us"),
        "all_other_percent": share("all_others_us"),
        "device_collectives_percent": share("device_collectives_us"),
    }
    idle = f["idle_percent"]
    if idle is None:
        busy = ("input_percent", "output_percent", "compute_percent", "device_collectives_percent")
        idle = max(0.0, 100.0 - sum(out[k] for k in busy))
    out["idle_percent"] = idle
    return {k: float(v) for k, v in out.items()}


def _overview_summary(h, run_hosts: list[str], has_trace: bool) -> OverviewSummary:
    """An OverviewSummary from one host's overview figures (TensorBoard's numbers)."""
    f = h.overview
    avg = {c: float(f["breakdown_ms_avg"].get(c, 0.0)) for c in CATEGORIES}
    std = {c: float(f["breakdown_ms_std"].get(c, 0.0)) for c in CATEGORIES}
    host_pct, dev_pct = _op_placement(h.tables.get("tf_stats", schema.empty(schema.TOOL_TF_STATS)))
    bound = f["input_classification"] in ("host", "both")
    tools = ["input_pipeline_view" if bound else "op_stats"] + (
        ["trace_viewer"] if has_trace else []
    )
    top = h.tables.get("top_ops")
    return OverviewSummary(
        n_steps=int(f["n_steps"]),
        step_time_ms_avg=float(f["step_time_ms_avg"]),
        step_time_ms_std=float(f["step_time_ms_std"]),
        step_time_ms_min=float(f["step_time_ms_min"]),
        step_time_ms_max=float(f["step_time_ms_max"]),
        breakdown_ms_avg=avg,
        breakdown_ms_std=std,
        **_shares(f, avg),
        **{k: f[k] for k in _VERDICT_FIELDS},
        **{k: _nan(f[k]) for k in _OPTIONAL_FIGURES},
        host_op_time_percent=host_pct,
        device_op_time_percent=dev_pct,
        hardware_type=f["hardware_type"] or "",
        hosts=list(f["hostnames"]) or list(run_hosts),
        device_type=f["device_type"] or "",
        device_core_count=int(f["device_core_count"] or 0),
        recommendations=[f[k] for k in _STATEMENTS if f[k]] + list(f["tips"]),
        tools=tools,
        top_ops=top if top is not None else schema.empty(schema.TOOL_TOP_OPS),
    )


def _pipeline_summary(hosts: list) -> InputPipelineSummary:
    """An InputPipelineSummary from the hosts' input-pipeline figures (the first host's
    figures; the steps and input ops of all)."""
    f = hosts[0].input_pipeline
    steps = _concat([h.tables.get("steps") for h in hosts], schema.TOOL_STEPS)
    per_step = steps[list(schema.INPUT_PIPELINE_STEPS)[:-1]].copy()
    st = per_step["step_time_us"].to_numpy()
    per_step["input_percent"] = np.divide(
        100 * per_step["input_us"].to_numpy(), st, out=np.zeros(len(st)), where=st > 0
    )
    return InputPipelineSummary(
        steps=schema.conform(per_step, schema.INPUT_PIPELINE_STEPS),
        input_percent_avg=float(f["input_percent_avg"]),
        input_percent_std=float(f["input_percent_std"]),
        enqueue_us=float(f["enqueue_us"]),
        demanded_file_read_us=float(f["demanded_file_read_us"]),
        advanced_file_read_us=float(f["advanced_file_read_us"]),
        preprocessing_us=float(f["preprocessing_us"]),
        unclassified_non_enqueue_us=float(f["unclassified_non_enqueue_us"]),
        input_ops=_concat([h.tables.get("input_ops") for h in hosts], schema.INPUT_OPS),
        tf_data_used=bool(f["tf_data_used"]),
        recommendations=list(f["recommendations"]),
    )


def no_trace_note(run, missing: str | None = None) -> str | None:
    """What a view that needs a trace says on a run without one (None when it has one);
    ``missing`` names the tool file that would have answered instead."""
    td = tool_data_source(run)
    if td is None:
        return None
    note = (
        "This capture has no trace: its run directory holds TensorBoard's tool data only "
        f"({', '.join(td.tools)})."
    )
    return note + (f" It has no {missing} file either." if missing else "")


# -- the analyses a run without a trace takes from its tool data -----------------------------
def _steps(run) -> pd.DataFrame:
    steps = schema.conform(run.tool_data.steps, schema.STEPS).reset_index(drop=True)
    # TensorBoard's pages list the steps they kept: nothing more is dropped from them.
    steps.attrs["edge_steps_dropped"] = True
    return steps


def _ops(run) -> pd.DataFrame:
    return schema.conform(run.tool_data.tf_stats, schema.OP_STATS)


def _overview(run):
    td = run.tool_data
    return td.overview_page if td.overview_page is not None else overview_summary(run)


def _input_pipeline(run):
    td = run.tool_data
    return td.input_pipeline if td.input_pipeline is not None else input_pipeline(run)


# Analysis name -> how a run without a trace computes it from run.tool_data.
FROM_TOOL_DATA = {
    "steps": _steps,
    "ops": _ops,
    "kernels": lambda run: run.tool_data.kernel_stats,
    "memory": lambda run: run.tool_data.memory_profile,
    "memory_summary": lambda run: run.tool_data.memory_summary,
    "memory_breakdown": lambda run: run.tool_data.memory_breakdown(),
    "overview_summary": _overview,
    "input_pipeline": _input_pipeline,
}
