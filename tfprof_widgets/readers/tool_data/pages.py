"""Tool data: the overview page and the input pipeline, as TensorBoard's files state them.

Both tools describe the steps: ``OverviewPage.input_analysis`` and ``<host>.input_pipeline.pb``
are ``InputPipelineAnalysisResult`` messages (step details, verdicts, input ops), with
payloads in ``google.protobuf.Any`` fields; the 2019 Cloud TPU profiler (and xprof today)
answer the same as Google DataTable JSON, told apart by their column ids. :func:`fill_pages`
maps either onto TOOL_STEPS, INPUT_OPS, TOOL_TOP_OPS and the figures of the overview and
input-pipeline summaries; :mod:`.tool_data` calls it.
"""

from __future__ import annotations

import dataclasses
import html
import math
import re

import numpy as np
import pandas as pd

from ... import schema
from ...errors import WrongFormatError
from ...proto import tool_data_pb2 as pb
from .host import HostToolData

__all__ = ["datatables", "fill_pages", "top_op_times"]

_TAG = re.compile(r"<[^>]+>")


def fill_pages(out) -> None:
    """Steps, input pipeline and overview of a host's :class:`~.tool_data.HostToolData`,
    from its protobuf messages or its DataTables."""
    overview, pipeline = out.raw.get("overview_page"), out.raw.get("input_pipeline")
    messages = (pb.OverviewPage, pb.InputPipelineAnalysisResult)
    if isinstance(overview, messages) or isinstance(pipeline, messages):
        _fill_from_messages(out, overview, pipeline)
    else:
        _fill_from_datatables(out, overview, pipeline)
    _check_steps(out)


_SUMMARY_KEYS = ("step_time_ms_avg", "step_time_ms_std", "step_time_ms_min", "step_time_ms_max")


def _check_steps(out) -> None:
    """Steps whose time or breakdown is not a finite number >= 0 (NaN, inf, -1e9 ms: no
    TensorBoard writes them) are left out with a warning, and the overview's step-time
    figures are then those of the steps kept, so that every table says the same."""
    steps = out.tables.get("steps")
    if steps is None or not len(steps):
        return
    cols = [c for c in ("step_time_us", *_GENERIC_STEP_FIELDS) if c in steps.columns]
    values = steps[cols].to_numpy(np.float64)
    bad = ~(np.isfinite(values) & (values >= 0)).all(axis=1)
    figures = out.overview or {}
    summary = [figures.get(k) for k in _SUMMARY_KEYS]
    odd = any(v is not None and not (math.isfinite(v) and v >= 0) for v in summary)
    if not bad.any() and not odd:
        return
    path = out.files.get("input_pipeline") or out.files.get("overview_page") or out.host
    kept = steps[~bad].reset_index(drop=True)
    if bad.any():
        out.tables["steps"] = kept
        first = float(values[bad][0][0])
        out.warnings.append(
            f"{path}: {int(bad.sum())} of {len(steps)} steps have a step time or breakdown "
            f"that is not a finite number >= 0 (the first: {first:g} µs) and were left out"
        )
    if figures:
        ms = kept["step_time_us"].to_numpy(np.float64) / 1e3
        figures["n_steps"] = len(kept)
        figures["step_time_ms_avg"] = float(ms.mean()) if len(ms) else 0.0
        figures["step_time_ms_std"] = float(ms.std()) if len(ms) else 0.0
        figures["step_time_ms_min"] = float(ms.min()) if len(ms) else 0.0
        figures["step_time_ms_max"] = float(ms.max()) if len(ms) else 0.0
        out.warnings.append(
            f"{path}: the overview's step-time figures are those of the {len(kept)} steps "
            "kept, not the file's"
        )


def _unpack(any_msg, cls):
    """The payload of a ``google.protobuf.Any`` if it holds a ``cls`` (type URL
    '.../tensorflow.profiler.<Name>'), else None. By name, because our package differs."""
    if not any_msg.type_url.endswith("." + cls.DESCRIPTOR.name):
        return None
    return cls.FromString(any_msg.value)


def _text(fragment: str) -> str:
    """An HTML snippet of TensorBoard's advice as plain text."""
    return html.unescape(_TAG.sub("", fragment)).strip()


# -- DataTable JSON -----------------------------------------------------------------------------
@dataclasses.dataclass
class _DataTable:
    cols: list[str]
    rows: list[list]
    p: dict[str, str]

    def frame(self) -> pd.DataFrame:
        return pd.DataFrame(self.rows, columns=self.cols)

    def number(self, key: str) -> float | None:
        """A property as a number ('48.8%' -> 48.8, '-nan' -> NaN); None when absent."""
        v = self.p.get(key)
        if v is None:
            return None
        m = re.match(r"\s*(-?nan|[-+0-9.eE]+)", str(v))
        if not m:
            return None
        try:
            return float(m.group(1))
        except ValueError:
            return None


def datatables(doc, path: str, what: str) -> list[_DataTable]:
    """A Google DataTable or a list of them: {cols: [{id...}], rows: [{c: [{v}]}], p: {}}."""
    items = doc if isinstance(doc, list) else [doc]
    tables = []
    for i, t in enumerate(items):
        if not isinstance(t, dict) or not isinstance(t.get("cols", []), list):
            raise WrongFormatError(path, f"not {what}: item {i} is not a Google DataTable")
        cols = [str(c.get("id", "")) if isinstance(c, dict) else "" for c in t.get("cols", [])]
        rows = []
        for r in t.get("rows", []) or []:
            cells = r.get("c", []) if isinstance(r, dict) else []
            vals = [c.get("v") if isinstance(c, dict) else None for c in cells]
            rows.append((vals + [None] * len(cols))[: len(cols)])
        p = t.get("p") if isinstance(t.get("p"), dict) else {}
        tables.append(_DataTable(cols, rows, {str(k): v for k, v in p.items()}))
    return tables


def _table_with(tables: list[_DataTable], *cols: str) -> _DataTable | None:
    for t in tables:
        if all(c in t.cols for c in cols):
            return t
    return None


def _prop_table(tables: list[_DataTable], key: str) -> _DataTable | None:
    for t in tables:
        if key in t.p:
            return t
    return None


# Where each step category of ours comes from in PerGenericStepDetails (ms), added up.
_GENERIC_STEP_FIELDS = {
    "device_compute_us": ("device_compute_ms",),
    "device_to_device_us": ("device_to_device_ms",),
    "device_collectives_us": ("device_collectives_ms",),
    "host_compute_us": ("host_compute_ms",),
    "kernel_launch_us": ("host_prepare_ms",),
    "input_us": ("host_wait_input_ms", "host_to_device_ms"),
    "output_us": ("output_ms",),
    "compile_us": ("host_compile_ms",),
    "all_others_us": ("unknown_time_ms",),
    "host_wait_input_us": ("host_wait_input_ms",),
    "host_to_device_us": ("host_to_device_ms",),
}
# ... and in GenericStepTimeBreakdown's summaries (input: input_ms_summary when present).
_GENERIC_SUMMARIES = {
    "device_compute_us": "device_compute_ms_summary",
    "device_to_device_us": "device_to_device_ms_summary",
    "device_collectives_us": "device_collectives_ms_summary",
    "host_compute_us": "host_compute_ms_summary",
    "kernel_launch_us": "host_prepare_ms_summary",
    "input_us": "input_ms_summary",
    "output_us": "output_ms_summary",
    "compile_us": "host_compile_ms_summary",
    "all_others_us": "unknown_time_ms_summary",
}
# PerTpuStepDetails (TPU payloads of the same Any fields).
_TPU_STEP_FIELDS = {
    "device_compute_us": ("tc_compute_time_ms",),
    "input_us": ("tc_infeed_time_ms",),
    "output_us": ("tc_outfeed_time_ms",),
    "device_collectives_us": ("all_reduce_compute_time_ms", "all_reduce_sync_time_ms"),
    "all_others_us": ("tc_idle_time_ms",),
    "host_to_device_us": ("host_transfer_ms",),
}
_TPU_SUMMARIES = {
    "device_compute_us": "tc_compute_ms_summary",
    "input_us": "tc_infeed_ms_summary",
    "output_us": "tc_outfeed_ms_summary",
    "all_others_us": "tc_idle_ms_summary",
}


def _steps_frame(host: str, columns: dict[str, list]) -> pd.DataFrame:
    """TOOL_STEPS from per-step columns (µs); what the file does not hold is NaN, <NA> or ''
    (start_us, group_id and the 16/32-bit split: the tool files do not record them)."""
    n = len(columns["step"])
    data = {}
    for name, (dtype, _) in schema.TOOL_STEPS.items():
        if name in columns:
            data[name] = columns[name]
        elif name == "host":
            data[name] = [host] * n
        elif dtype == "float64":
            data[name] = np.full(n, np.nan)
        elif dtype == "str":
            data[name] = [""] * n
        else:
            data[name] = pd.array([None] * n, dtype=dtype)
    df = pd.DataFrame(data, columns=list(schema.TOOL_STEPS))
    return schema.conform(df, schema.TOOL_STEPS)


def _generic_steps(host: str, result) -> pd.DataFrame:
    """Per step, from InputPipelineAnalysisResult.step_details (generic or TPU payloads)."""
    cols: dict[str, list] = {"step": [], "step_name": [], "step_time_us": []}
    for c in _GENERIC_STEP_FIELDS:
        cols[c] = []
    tpu = {"infeed_percent_avg": [], "infeed_percent_min": [], "infeed_percent_max": []}
    tpu["max_infeed_core"] = []
    for any_msg in result.step_details:
        g = _unpack(any_msg, pb.PerGenericStepDetails)
        if g is not None:
            cols["step"].append(g.step_number)
            cols["step_name"].append(g.step_name or str(g.step_number))
            cols["step_time_us"].append(g.step_time_ms * 1e3)
            for c, fields in _GENERIC_STEP_FIELDS.items():
                cols[c].append(_ms_sum(g, fields) * 1e3)
            for k in tpu:
                tpu[k].append("" if k == "max_infeed_core" else np.nan)
            continue
        t = _unpack(any_msg, pb.PerTpuStepDetails)
        if t is None:
            continue
        parts = {c: _ms_sum(t, f) * 1e3 for c, f in _TPU_STEP_FIELDS.items()}
        cols["step"].append(t.step_number)
        cols["step_name"].append(str(t.step_number))
        cols["step_time_us"].append(sum(v for c, v in parts.items() if c != "host_to_device_us"))
        for c in _GENERIC_STEP_FIELDS:
            cols[c].append(parts.get(c, 0.0))
        tpu["infeed_percent_avg"].append(t.infeed_percent_average)
        tpu["infeed_percent_min"].append(t.infeed_percent_minimum)
        tpu["infeed_percent_max"].append(t.infeed_percent_maximum)
        tpu["max_infeed_core"].append(t.max_infeed_time_core_name)
    return _steps_frame(host, {**cols, **tpu})


def _ms_sum(msg, fields: tuple[str, ...]) -> float:
    if len(fields) == 1:
        return getattr(msg, fields[0])
    return sum(getattr(msg, f) for f in fields)


def _summary_stats(breakdown, names: dict[str, str]) -> tuple[dict, dict]:
    """Average and standard deviation (ms) of each category the breakdown summarises."""
    avg, std = {}, {}
    for c, field in names.items():
        if breakdown.HasField(field):
            s = getattr(breakdown, field)
            avg[c], std[c] = s.average, s.standard_deviation
    return avg, std


def _pipeline_breakdown(result) -> tuple[dict, dict]:
    generic = _unpack(result.step_time_breakdown, pb.GenericStepTimeBreakdown)
    if generic is not None:
        avg, std = _summary_stats(generic, _GENERIC_SUMMARIES)
        if "input_us" not in avg:  # older files: input = waiting for input + host-to-device
            parts = [
                getattr(generic, f)
                for f in ("host_wait_input_ms_summary", "host_to_device_ms_summary")
                if generic.HasField(f)
            ]
            if parts:
                avg["input_us"] = sum(p.average for p in parts)
        return avg, std
    tpu = _unpack(result.step_time_breakdown, pb.TpuStepTimeBreakdown)
    if tpu is not None:
        return _summary_stats(tpu, _TPU_SUMMARIES)
    return {}, {}


def _bottleneck(result):
    return _unpack(result.recommendation.bottleneck_analysis, pb.BottleneckAnalysis)


def _input_percent(result, ba) -> float:
    """The input share of step time as the file states it: the newer writers' own field,
    else (TF 2.2-2.4, where it is unset) the average of the per-step input percentages."""
    if ba is not None and any(
        (ba.input_percent, ba.output_percent, ba.idle_percent, ba.compute_percent)
    ):
        return ba.input_percent
    if any((result.input_percent, result.output_percent, result.compute_percent)):
        return result.input_percent
    return result.input_percent_summary.average


def _input_ops(host: str, result, fractions: bool = False) -> pd.DataFrame:
    ops = result.input_op_details
    scale = 100.0 if fractions else 1.0
    df = pd.DataFrame(
        {
            "host": [host] * len(ops),
            "operation": [o.op_name for o in ops],
            "occurrences": np.array([o.count for o in ops], np.int64),
            "total_time_us": np.array([o.time_in_ms for o in ops], float) * 1e3,
            "total_self_time_us": np.array([o.self_time_in_ms for o in ops], float) * 1e3,
            # XProf's total % (of the input ops' self time) in its own column; the share of
            # input time needs the trace's calls (analysis.input_pipeline): none here.
            "time_percent": np.full(len(ops), np.nan),
            "time_percent_xprof": np.array([o.time_in_percent for o in ops], float) * scale,
            "self_time_percent": np.array([o.self_time_in_percent for o in ops], float) * scale,
            "category": [o.category for o in ops],
        }
    )
    return schema.conform(df, schema.INPUT_OPS)


def _pipeline_figures(host: str, result) -> dict[str, object]:
    """InputPipelineSummary's figures from an InputPipelineAnalysisResult."""
    ba = _bottleneck(result)
    b = result.input_time_breakdown
    return {
        "input_percent_avg": result.input_percent_summary.average,
        "input_percent_std": result.input_percent_summary.standard_deviation,
        "enqueue_us": b.enqueue_us,
        "demanded_file_read_us": b.demanded_file_read_us,
        "advanced_file_read_us": b.advanced_file_read_us,
        "preprocessing_us": b.preprocessing_us,
        "unclassified_non_enqueue_us": b.unclassified_non_enqueue_us,
        "tf_data_used": any(o.op_name.startswith("Iterator::") for o in result.input_op_details),
        "recommendations": [_text(d) for d in result.recommendation.details],
        "summary_next_step": _text(result.recommendation.summary_next_step),
        "input_statement": _text(ba.input_statement) if ba is not None else "",
        "hardware_type": result.hardware_type,
        "diagnostics": list(result.diagnostics.errors) + list(result.diagnostics.warnings),
    }


def _overview_figures(page, result, has_steps: bool) -> dict[str, object]:
    """OverviewSummary's figures from an OverviewPage (None: the file does not say)."""
    ba = _bottleneck(result)
    rec = page.recommendation if page is not None else None
    generic = _unpack(rec.recommendation, pb.GenericRecommendation) if rec else None
    avg, std = _pipeline_breakdown(result)
    st = result.step_time_summary
    env = page.run_environment if page is not None else None
    an = page.analysis if page is not None else None

    def pick(name_generic: str, name_ba: str) -> str:
        if generic is not None and getattr(generic, name_generic):
            return getattr(generic, name_generic)
        return getattr(ba, name_ba) if ba is not None else ""

    newer = ba is not None and any(
        (ba.input_percent, ba.output_percent, ba.idle_percent, ba.compute_percent)
    )
    statement = (rec.statement if rec is not None else "") or (
        ba.input_statement if ba is not None else ""
    )
    figures: dict[str, object] = {
        "n_steps": len(result.step_details),
        "step_time_ms_avg": st.average,
        "step_time_ms_std": st.standard_deviation,
        "step_time_ms_min": st.minimum,
        "step_time_ms_max": st.maximum,
        "breakdown_ms_avg": avg,
        "breakdown_ms_std": std,
        "input_percent": _input_percent(result, ba) if has_steps else 0.0,
        "output_percent": ba.output_percent if newer else None,
        "compute_percent": ba.compute_percent if newer else None,
        "idle_percent": ba.idle_percent if newer else None,
        "input_classification": (rec.bottleneck if rec is not None else "")
        or (ba.input_classification if ba is not None else ""),
        "input_statement": _text(statement),
        "output_statement": _text(rec.output_statement) if rec is not None else "",
        "kernel_launch_classification": pick(
            "kernel_launch_bottleneck", "kernel_launch_classification"
        ),
        "kernel_launch_statement": _text(
            pick("kernel_launch_statement", "kernel_launch_statement")
        ),
        "all_other_classification": pick("all_other_bottleneck", "all_other_classification"),
        "all_other_statement": _text(pick("all_other_statement", "all_other_statement")),
        "device_collectives_classification": pick(
            "device_collectives_bottleneck", "device_collectives_classification"
        ),
        "device_collectives_statement": _text(
            pick("device_collectives_statement", "device_collectives_statement")
        ),
        "precision_statement": _text(generic.precision_statement) if generic else "",
        "summary_next_step": _text(result.recommendation.summary_next_step),
        "device_compute_16bit_percent": an.device_compute_16bit_percent if an else None,
        "device_compute_32bit_percent": an.device_compute_32bit_percent if an else None,
        "eager_host_op_percent": an.host_op_time_eager_percent if an else None,
        "eager_device_op_percent": an.device_op_time_eager_percent if an else None,
        "host_op_occurrence_percent": an.host_tf_op_percent if an else None,
        "device_op_occurrence_percent": an.device_tf_op_percent if an else None,
        "host_idle_percent": an.host_idle_time_percent if an else None,
        "device_idle_percent": an.device_idle_time_percent if an else None,
        "device_duty_cycle_percent": an.device_duty_cycle_percent if an else None,
        "hardware_type": result.hardware_type,
        "device_type": env.device_type if env is not None else None,
        "device_core_count": env.device_core_count if env is not None else None,
        "hostnames": sorted(env.hostnames) if env is not None else [],
        "tips": _tips(rec) if rec is not None else [],
        "remark": _text(an.remark_text) if an else "",
    }
    return figures


def _tips(rec) -> list[str]:
    """TensorBoard's tips, as '<kind>: <text>' lines."""
    out = []
    for kind, tips in (
        ("Host", rec.host_tips),
        ("Device", rec.device_tips),
        ("Input", rec.input_tips),
        ("Documentation", rec.documentation_tips),
        ("FAQ", rec.faq_tips),
        ("Inference", rec.inference_tips),
    ):
        out += [f"{kind}: {_text(t.link)}" for t in tips if t.link]
    for statement in (
        rec.eager_statement_html,
        rec.outside_compilation_statement_html,
        rec.tf_function_statement_html,
    ):
        if statement:
            out.append(_text(statement))
    return out


def _top_ops(host: str, ops, fraction_fields=("self_time_fraction", "cumulative_time_fraction")):
    n = len(ops)
    df = pd.DataFrame(
        {
            "host": [host] * n,
            "host_or_device": ["Device"] * n,
            "type": [o.category for o in ops],
            "operation": [o.name for o in ops],
            "occurrences": pd.array([None] * n, dtype="Int64"),
            "total_self_time_us": np.full(n, np.nan),
            "self_time_percent": np.array([getattr(o, fraction_fields[0]) for o in ops], float)
            * 100,
            "cumulative_self_time_percent": np.array(
                [getattr(o, fraction_fields[1]) for o in ops], float
            )
            * 100,
            "flop_rate": np.array([o.flop_rate for o in ops], float),
            "is_op_tensor_core_eligible": np.array(
                [o.is_op_tensorcore_eligible for o in ops], bool
            ),
            "is_op_using_tensor_core": np.array([o.is_op_using_tensorcore for o in ops], bool),
        }
    )
    return schema.conform(df, schema.TOOL_TOP_OPS)


def top_op_times(top: pd.DataFrame, tf_stats: pd.DataFrame) -> pd.DataFrame:
    """The overview's top ops with their occurrences and self time from the TF stats."""
    dev = tf_stats[tf_stats["host_or_device"] == "Device"]
    by_name = dev.drop_duplicates("operation").set_index(dev["operation"].astype(str).to_numpy())
    names = top["operation"].astype(str)
    top = top.copy()
    found = names.isin(by_name.index).to_numpy()
    occ = by_name["occurrences"].reindex(names).to_numpy()
    self_us = by_name["total_self_time_us"].reindex(names).to_numpy()
    top["occurrences"] = pd.array(np.where(found, occ, 0), dtype="Int64")
    top.loc[~found, "occurrences"] = pd.NA
    top["total_self_time_us"] = np.where(found, self_us, np.nan)
    return top


def _fill_from_messages(out: HostToolData, page, pipeline) -> None:
    """Steps, input pipeline and overview from OverviewPage / InputPipelineAnalysisResult.

    The overview page embeds the input-pipeline result (in TF 2.2-2.10 byte for byte the
    same as ``input_pipeline.pb``); the steps and the input-pipeline figures come from
    ``input_pipeline.pb`` when the run has it, the overview's figures from the overview page.
    """
    if isinstance(pipeline, pb.InputPipelineAnalysisResult):
        steps_from = pipeline
    elif page is not None and page.HasField("input_analysis"):
        steps_from = page.input_analysis
    else:
        steps_from = None
    if steps_from is not None:
        out.tables["steps"] = _generic_steps(out.host, steps_from)
        out.tables["input_ops"] = _input_ops(out.host, steps_from)
        out.input_pipeline = _pipeline_figures(out.host, steps_from)
    if isinstance(page, pb.OverviewPage):
        result = page.input_analysis
        out.overview = _overview_figures(page, result, len(result.step_details) > 0)
        out.tables["top_ops"] = _top_ops(out.host, page.analysis.top_device_ops)
        if out.input_pipeline is not None and not out.input_pipeline["input_statement"]:
            out.input_pipeline["input_statement"] = out.overview["input_statement"]
    elif steps_from is not None:
        out.overview = _overview_figures(None, steps_from, len(steps_from.step_details) > 0)


# DataTable step tables: our category -> the columns (ms) that make it up. The 2019 TPU layout
# has compute / input (infeed) / idle; xprof's generic layout has one column per category.
_TABLE_STEP_COLUMNS = {
    "device_compute_us": ("computeTimeMs", "deviceComputeTimeMs"),
    "device_to_device_us": ("deviceToDeviceTimeMs",),
    "device_collectives_us": ("deviceCollectivesTimeMs",),
    "host_compute_us": ("hostComputeTimeMs",),
    "kernel_launch_us": ("kernelLaunchTimeMs",),
    "input_us": ("inputTimeMs", "infeedTimeMs"),
    "output_us": ("outfeedTimeMs",),
    "compile_us": ("compileTimeMs",),
    "all_others_us": ("idleTimeMs", "otherTimeMs"),
}
_TABLE_SUMMARY_KEYS = {  # the step table's properties: averages (ms) per category
    "device_compute_us": ("compute_ms_average", "device_compute_time_ms_avg"),
    "device_to_device_us": ("device_to_device_time_ms_avg",),
    "device_collectives_us": ("device_collectives_time_ms_avg",),
    "host_compute_us": ("host_compute_time_ms_avg",),
    "kernel_launch_us": ("kernel_launch_time_ms_avg",),
    "input_us": ("input_ms_average", "infeed_time_ms_avg"),
    "output_us": ("outfeed_time_ms_avg",),
    "compile_us": ("compile_time_ms_avg",),
    "all_others_us": ("idle_ms_average", "other_time_ms_avg"),
}


def _number(v) -> float:
    try:
        return float(v)
    except (TypeError, ValueError):
        return math.nan


def _count(v: float | None) -> int:
    """'8 (Replica count = 8, ...)' read as a number, as an int (0 when not a number)."""
    return int(v) if v is not None and math.isfinite(v) else 0


def _table_steps(host: str, t: _DataTable) -> pd.DataFrame:
    df = t.frame()
    n = len(df)
    cols: dict[str, list] = {
        "step": [
            int(_number(s)) if not math.isnan(_number(s)) else i
            for i, s in enumerate(df["stepnum"])
        ],
        "step_name": [str(s) for s in df["stepnum"]],
    }
    for c, names in _TABLE_STEP_COLUMNS.items():
        cols[c] = np.zeros(n)
        for name in names:
            if name in df:
                cols[c] = cols[c] + np.array([_number(v) for v in df[name]]) * 1e3
    if "stepTimeMs" in df:
        cols["step_time_us"] = np.array([_number(v) for v in df["stepTimeMs"]]) * 1e3
    else:  # the 2019 TPU layout: a step is its compute, infeed and idle time
        cols["step_time_us"] = sum(
            np.array([_number(v) for v in df[name]]) * 1e3
            for name in ("computeTimeMs", "inputTimeMs", "idleTimeMs")
            if name in df
        ) + np.zeros(n)
    cols["host_wait_input_us"] = np.array(cols["input_us"])
    cols["host_to_device_us"] = np.zeros(n)
    for ours, theirs in (
        ("infeed_percent_avg", "infeedPercentAverage"),
        ("infeed_percent_min", "infeedPercentMin"),
        ("infeed_percent_max", "infeedPercentMax"),
    ):
        if theirs in df:  # already percents (0.008 % of a 313 ms step is 0.03 ms)
            cols[ours] = np.array([_number(v) for v in df[theirs]])
    return _steps_frame(host, cols)


def _fill_from_datatables(out: HostToolData, overview, pipeline) -> None:
    """Steps, input pipeline and overview from the DataTable JSON forms."""
    tables = [*(overview or []), *(pipeline or [])]
    steps_t = _table_with(pipeline or [], "stepnum") or _table_with(overview or [], "stepnum")
    if steps_t is not None:
        out.tables["steps"] = _table_steps(out.host, steps_t)
        cores = _table_with(pipeline or [], "index")
        if cores is not None:
            _max_infeed_cores(out.tables["steps"], cores)
    ops_t = _table_with(pipeline or [], "opName")
    if ops_t is not None:
        out.tables["input_ops"] = _table_input_ops(out.host, ops_t)
    links = [t for t in (pipeline or []) if t.cols == ["link"]]
    if pipeline is not None:
        p = steps_t.p if steps_t is not None else {}
        b = ops_t.p if ops_t is not None else {}
        out.input_pipeline = {
            "input_percent_avg": _prop(steps_t, "infeed_percent_average"),
            "input_percent_std": _prop(steps_t, "infeed_percent_standard_deviation"),
            "enqueue_us": _number(b.get("enqueue_us", 0)),
            "demanded_file_read_us": _number(b.get("demanded_file_read_us", 0)),
            "advanced_file_read_us": _number(b.get("advanced_file_read_us", 0)),
            "preprocessing_us": _number(b.get("preprocessing_us", 0)),
            "unclassified_non_enqueue_us": _number(
                b.get("unclassified_nonequeue_us", b.get("unclassified_non_enqueue_us", 0))
            ),
            "tf_data_used": ops_t is not None
            and any(str(v).startswith("Iterator::") for v in ops_t.frame()["opName"]),
            "recommendations": [_text(str(r[0])) for t in links for r in t.rows if r[0]],
            "summary_next_step": _text(str(p.get("summary_nextstep", ""))),
            "input_statement": _text(
                str(p.get("summary_conclusion", p.get("input_conclusion", "")))
            ),
            "hardware_type": str(p.get("hardware_type", "")),
            "diagnostics": [],
        }
    top_t = _table_with(overview or [], "selfTimePercent", "operation")
    if top_t is not None:
        out.tables["top_ops"] = _table_top_ops(out.host, top_t)
    if overview is not None or steps_t is not None:
        out.overview = _table_overview(tables, steps_t, top_t)


def _prop(t: _DataTable | None, key: str) -> float:
    v = t.number(key) if t is not None else None
    return 0.0 if v is None else v


def _max_infeed_cores(steps: pd.DataFrame, t: _DataTable) -> None:
    """The 2019 TPU input pipeline's 'index' table: per step, the core with most infeed."""
    rows = {str(r[0]): r[1:] for r in t.rows}
    numbers, cores = rows.get("Step number"), rows.get("Core name")
    if numbers is None or cores is None:
        return
    by_step = {str(s): str(c) for s, c in zip(numbers, cores)}
    steps["max_infeed_core"] = [by_step.get(s, "") for s in steps["step_name"]]


def _table_input_ops(host: str, t: _DataTable) -> pd.DataFrame:
    df = t.frame()

    def col(name):
        return np.array([_number(v) for v in df[name]]) if name in df else np.zeros(len(df))

    out = pd.DataFrame(
        {
            "host": [host] * len(df),
            "operation": df["opName"].astype(str).to_numpy(),
            "occurrences": col("count").astype(np.int64),
            "total_time_us": col("timeInMs") * 1e3,
            "total_self_time_us": col("selfTimeInMs") * 1e3,
            # DataTables hold fractions that the page formats as percents.
            "time_percent": np.full(len(df), np.nan),  # see _input_ops
            "time_percent_xprof": col("timeInPercent") * 100,
            "self_time_percent": col("selfTimeInPercent") * 100,
            "category": df["category"].astype(str).to_numpy() if "category" in df else "",
        }
    )
    return schema.conform(out, schema.INPUT_OPS)


def _table_top_ops(host: str, t: _DataTable) -> pd.DataFrame:
    df = t.frame()

    def col(name, default=0.0):
        return np.array([_number(v) for v in df[name]]) if name in df else np.full(len(df), default)

    n = len(df)
    out = pd.DataFrame(
        {
            "host": [host] * n,
            "host_or_device": ["Device"] * n,
            "type": df["category"].astype(str).to_numpy() if "category" in df else [""] * n,
            "operation": df["operation"].astype(str).to_numpy(),
            "occurrences": pd.array([None] * n, dtype="Int64"),
            "total_self_time_us": np.full(n, np.nan),
            "self_time_percent": col("selfTimePercent") * 100,
            "cumulative_self_time_percent": col("cumulativeTimePercent") * 100,
            "flop_rate": col("flopRate"),
            "is_op_tensor_core_eligible": [bool(v) for v in df.get("tcEligibility", [False] * n)],
            "is_op_using_tensor_core": [bool(v) for v in df.get("tcUtilization", [False] * n)],
        }
    )
    return schema.conform(out, schema.TOOL_TOP_OPS)


def _table_overview(tables: list[_DataTable], steps_t, top_t) -> dict[str, object]:
    """OverviewSummary's figures from the DataTable forms (their properties are text)."""
    env = _prop_table(tables, "device_type")
    rec = _table_with(tables, "tip_type", "link")
    rp = rec.p if rec is not None else {}
    sp = steps_t.p if steps_t is not None else {}
    avg, std = {}, {}
    for c, keys in _TABLE_SUMMARY_KEYS.items():
        for k in keys:
            if k in sp:
                avg[c] = _prop(steps_t, k)
                std_key = k.replace("_average", "_standard_deviation").replace("_avg", "_sdv")
                if std_key in sp:
                    std[c] = _prop(steps_t, std_key)
    statement = str(
        rp.get("statement", sp.get("summary_conclusion", sp.get("input_conclusion", "")))
    )
    input_pct = steps_t.number("infeed_percent_average") if steps_t is not None else None
    tips = [
        f"{str(r[0]).capitalize() if str(r[0]) != 'faq' else 'FAQ'}: {_text(str(r[1]))}"
        for r in (rec.rows if rec is not None else [])
        if r[1]
    ]
    top_p = top_t.p if top_t is not None else {}
    return {
        "n_steps": len(steps_t.rows) if steps_t is not None else 0,
        "step_time_ms_avg": _prop(steps_t, "steptime_ms_average"),
        "step_time_ms_std": _prop(steps_t, "steptime_ms_standard_deviation"),
        "step_time_ms_min": _prop(steps_t, "steptime_ms_minimum"),
        "step_time_ms_max": _prop(steps_t, "steptime_ms_maximum"),
        "breakdown_ms_avg": avg,
        "breakdown_ms_std": std,
        "input_percent": input_pct,
        "output_percent": None,
        "compute_percent": None,
        "idle_percent": None,
        "input_classification": str(rp.get("bottleneck", "")),
        "input_statement": _text(statement),
        "output_statement": "",
        "kernel_launch_classification": str(rp.get("kernel_launch_bottleneck", "")),
        "kernel_launch_statement": _text(str(rp.get("kernel_launch_statement", ""))),
        "all_other_classification": str(rp.get("all_other_bottleneck", "")),
        "all_other_statement": _text(str(rp.get("all_other_statement", ""))),
        "device_collectives_classification": str(rp.get("device_collectives_bottleneck", "")),
        "device_collectives_statement": _text(str(rp.get("device_collectives_statement", ""))),
        "precision_statement": _text(str(rp.get("precision_statement", ""))),
        "summary_next_step": _text(str(sp.get("summary_nextstep", ""))),
        "device_compute_16bit_percent": top_t.number("device_compute_16bit_percent")
        if top_t is not None
        else None,
        "device_compute_32bit_percent": top_t.number("device_compute_32bit_percent")
        if top_t is not None
        else None,
        "eager_host_op_percent": top_t.number("host_op_time_eager_percent") if top_t else None,
        "eager_device_op_percent": top_t.number("device_op_time_eager_percent") if top_t else None,
        **{
            ours: top_t.number(theirs) if top_t else None
            for ours, theirs in (
                ("host_op_occurrence_percent", "host_tf_op_percent"),
                ("device_op_occurrence_percent", "device_tf_op_percent"),
                ("host_idle_percent", "host_idle_time_percent"),
                ("device_idle_percent", "device_idle_time_percent"),
                ("device_duty_cycle_percent", "device_duty_cycle_percent"),
            )
        },
        "hardware_type": str(sp.get("hardware_type", "")),
        "device_type": str(env.p.get("device_type", "")) if env is not None else None,
        "device_core_count": _count(env.number("device_core_count")) if env is not None else None,
        "hostnames": [],
        "tips": tips,
        "remark": _text(str(top_p.get("remark_text", ""))),
    }
