"""Tool data: the outputs of TensorBoard's Profile tools, as a run directory keeps them.

TF 2.2-2.10 wrote, beside (or, in TF 2.2, instead of) the trace, what each tool of the
Profile tab showed: ``<host>.overview_page.pb`` (``OverviewPage``),
``<host>.input_pipeline.pb`` (``InputPipelineAnalysisResult``),
``<host>.tensorflow_stats.pb`` (``TfStatsDatabase``), ``<host>.kernel_stats.pb``
(``KernelStatsDb``) and ``<host>.memory_profile.json.gz`` (``MemoryProfile`` as proto3 JSON);
the 2019 Cloud TPU profiler wrote Google DataTable JSON (``<host>.overview_page.json``,
``<host>.input_pipeline.json``) and ``<host>.pod_viewer.json``. The messages are ours
(``tfprof_widgets/proto/tool_data.proto``, wire-compatible with xprof's).

:func:`read_tool_data` reads one host's files into a :class:`HostToolData`: the decoded
messages (``raw``), TensorBoard's numbers mapped onto our schema's tables (``tables``; the
values are the files' own, converted only in unit: ms → µs, ns → µs, fractions → %), and
the overview and input-pipeline figures (``overview``, ``input_pipeline``) that the analyses
turn into their summaries. Nothing is re-analysed here.
"""

from __future__ import annotations

import dataclasses
import gzip
import html
import json
import math
import re
import zlib

import numpy as np
import pandas as pd
from google.protobuf.message import DecodeError
from google.protobuf.unknown_fields import UnknownFieldSet

from .. import schema
from ..errors import CorruptProfileError, EmptyProfileError, ProfileError, WrongFormatError
from ..proto import tool_data_pb2 as pb
from .columnar import HostTables, StatRows
from .formats import host_of, tool_of

__all__ = ["HostToolData", "describe_pb", "no_trace_tables", "read_tool_data", "tool_files_of"]

# What each tool's file holds, for messages.
TOOL_TITLES = {
    "overview_page": "TensorBoard's overview-page tool output",
    "input_pipeline": "TensorBoard's input-pipeline tool output",
    "tensorflow_stats": "TensorBoard's TF-stats tool output",
    "kernel_stats": "TensorBoard's kernel-stats tool output",
    "memory_profile": "TensorBoard's memory-profile tool output",
    "pod_viewer": "TensorBoard's pod-viewer tool output",
}
_MESSAGES = {
    "overview_page": pb.OverviewPage,
    "input_pipeline": pb.InputPipelineAnalysisResult,
    "tensorflow_stats": pb.TfStatsDatabase,
    "kernel_stats": pb.KernelStatsDb,
}
# Tool files are small (a few MB at most); a larger one is not what its name says.
_MAX_JSON_BYTES = 1 << 30
_TAG = re.compile(r"<[^>]+>")


@dataclasses.dataclass
class HostToolData:
    """One host's tool-data files, decoded and mapped onto our tables.

    ``files``: tool -> path. ``raw``: tool -> the decoded message (``OverviewPage``,
    ``InputPipelineAnalysisResult``, ``TfStatsDatabase``, ``KernelStatsDb``) or the parsed
    JSON (memory profile, pod viewer, DataTables). ``tables``: name -> DataFrame in our schema
    ('steps': TOOL_STEPS, 'tf_stats' / 'tf_stats_without_idle': TOOL_TF_STATS, 'top_ops':
    TOOL_TOP_OPS, 'input_ops': INPUT_OPS, 'kernels': KERNELS, 'memory': MEMORY,
    'memory_summary': MEMORY_SUMMARY, 'memory_breakdown': TOOL_MEMORY_BREAKDOWN, 'pod_stats':
    TOOL_POD_STATS, 'all_reduce_ops': TOOL_ALL_REDUCE_OPS). ``overview`` /
    ``input_pipeline``: the figures of those pages by the names of
    :class:`~tfprof_widgets.OverviewSummary` / ``InputPipelineSummary`` (None where the
    file has no such figure), or None without that tool.
    """

    host: str
    files: dict[str, str] = dataclasses.field(default_factory=dict)
    encodings: dict[str, str] = dataclasses.field(default_factory=dict)
    raw: dict[str, object] = dataclasses.field(default_factory=dict)
    tables: dict[str, pd.DataFrame] = dataclasses.field(default_factory=dict)
    overview: dict[str, object] | None = None
    input_pipeline: dict[str, object] | None = None
    warnings: list[str] = dataclasses.field(default_factory=list)


def read_tool_data(host: str, paths: list[str]) -> HostToolData:
    """One host's tool-data files (any subset of the tools) into a :class:`HostToolData`.

    A file that cannot be read is left out with a warning when the host has other files,
    and raises its :class:`~tfprof_widgets.ProfileError` when it is the only one.
    """
    out = HostToolData(host)
    decoded: dict[str, object] = {}
    errors: list[ProfileError] = []
    for path in paths:
        tool, encoding = tool_of(path) or ("", "")
        try:
            decoded[tool] = _decode(path, tool, encoding)
        except ProfileError as exc:
            errors.append(exc)
            continue
        out.files[tool] = path
        out.encodings[tool] = encoding
    if not decoded:
        raise errors[0]
    out.warnings += [f"{e.path}: not loaded ({e.problem})" for e in errors]
    out.raw = decoded
    _fill(out)
    return out


# -- decoding -----------------------------------------------------------------------------------
def _read_bytes(path: str) -> bytes:
    try:
        with open(path, "rb") as f:
            data = f.read()
    except PermissionError:
        raise ProfileError(path, "permission denied: the file cannot be read") from None
    except OSError as exc:
        raise ProfileError(path, f"cannot be read: {exc.strerror or exc}") from None
    if not data:
        raise EmptyProfileError(path, "the file is empty (0 bytes)")
    return data


def _decode(path: str, tool: str, encoding: str):
    data = _read_bytes(path)
    what = TOOL_TITLES.get(tool, "a tool-data file")
    if encoding == "pb":
        return parse_message(_MESSAGES[tool], data, path, what)
    if data[:2] == b"\x1f\x8b":
        try:
            data = gzip.decompress(data)
        except (OSError, EOFError, zlib.error) as exc:
            raise CorruptProfileError(
                path, f"{what}: the gzip stream is truncated or damaged ({exc})"
            ) from None
    if len(data) > _MAX_JSON_BYTES:
        raise CorruptProfileError(path, f"{what}: over 1 GiB of JSON, not a tool output")
    try:
        doc = json.loads(data)
    except (ValueError, RecursionError) as exc:
        raise CorruptProfileError(
            path, f"{what}: not valid JSON ({exc}); the file is truncated or damaged"
        ) from None
    if encoding == "datatable":
        return _datatables(doc, path, what)
    if tool == "memory_profile" and not (
        isinstance(doc, dict) and isinstance(doc.get("memoryProfilePerAllocator", {}), dict)
    ):
        raise WrongFormatError(path, f"not {what}: no 'memoryProfilePerAllocator' object")
    if tool == "pod_viewer" and not (
        isinstance(doc, dict) and isinstance(doc.get("podStatsSequence", {}), dict)
    ):
        raise WrongFormatError(path, f"not {what}: no 'podStatsSequence' object")
    return doc


def parse_message(cls, data: bytes, path: str, what: str):
    """``cls`` parsed from ``data``; damaged bytes raise CorruptProfileError, a message with
    fields ``cls`` does not have (another file under this name) WrongFormatError."""
    msg = cls()
    try:
        msg.ParseFromString(data)
    except DecodeError as exc:
        raise CorruptProfileError(
            path,
            f"not a valid {cls.DESCRIPTOR.name} protobuf ({what}: {exc}); the file is "
            "truncated or damaged",
        ) from None
    unknown = sorted({f.field_number for f in UnknownFieldSet(msg)})
    if unknown:
        raise WrongFormatError(
            path,
            f"not {what}: it has fields {unknown} that a {cls.DESCRIPTOR.name} does not "
            "have (another file under this tool's name?)",
        )
    return msg


def describe_pb(data: bytes) -> str | None:
    """What a ``.pb`` that is not an XSpace may be, for an error message: one of the tools'
    messages (decoding with no unknown field and something set), else None."""
    for tool, cls in _MESSAGES.items():
        msg = cls()
        try:
            msg.ParseFromString(data)
        except DecodeError:
            continue
        if msg.ListFields() and not len(UnknownFieldSet(msg)):
            return TOOL_TITLES[tool] + f" ({cls.DESCRIPTOR.name})"
    return None


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


def _datatables(doc, path: str, what: str) -> list[_DataTable]:
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


# -- mapping onto our tables ---------------------------------------------------------------------
def _fill_pages(out: HostToolData) -> None:
    overview, pipeline = out.raw.get("overview_page"), out.raw.get("input_pipeline")
    messages = (pb.OverviewPage, pb.InputPipelineAnalysisResult)
    if isinstance(overview, messages) or isinstance(pipeline, messages):
        _fill_from_messages(out, overview, pipeline)
    else:
        _fill_from_datatables(out, overview, pipeline)


def _fill_tf_stats(out: HostToolData) -> None:
    db = out.raw["tensorflow_stats"]
    out.tables["tf_stats"] = _tf_stats(db.with_idle.tf_stats_record, out.host)
    out.tables["tf_stats_without_idle"] = _tf_stats(db.without_idle.tf_stats_record, out.host)
    if "top_ops" in out.tables:
        out.tables["top_ops"] = _top_op_times(out.tables["top_ops"], out.tables["tf_stats"])


def _fill_pod_viewer(out: HostToolData) -> None:
    out.tables["pod_stats"], out.tables["all_reduce_ops"] = _pod_viewer(out.raw["pod_viewer"])


# Which tools each step maps onto our tables, in order (the TF stats complete the overview's
# top ops). Damaged content (a number where a list belongs...) fails the step's own files.
_FILLERS = (
    (("overview_page", "input_pipeline"), _fill_pages),
    (("tensorflow_stats",), _fill_tf_stats),
    (
        ("kernel_stats",),
        lambda out: out.tables.update(kernels=_kernels(out.raw["kernel_stats"], out.host)),
    ),
    (("memory_profile",), lambda out: _fill_memory(out, out.raw["memory_profile"])),
    (("pod_viewer",), _fill_pod_viewer),
)
_CONTENT_ERRORS = (
    TypeError,
    ValueError,
    AttributeError,
    KeyError,
    IndexError,
    OverflowError,
    DecodeError,  # an Any payload (step details, verdicts) that does not parse
)


def _fill(out: HostToolData) -> None:
    """Map every decoded file onto our tables. A file whose content is not what its tool
    writes is dropped with a warning (raised when it is all the host has)."""
    for tools, fill in _FILLERS:
        present = [t for t in tools if t in out.raw]
        if not present:
            continue
        before = dict(out.tables)
        try:
            fill(out)
        except _CONTENT_ERRORS as exc:
            path = out.files[present[0]]
            err = CorruptProfileError(
                path,
                f"{TOOL_TITLES[present[0]]} whose content is not what that tool writes "
                f"({type(exc).__name__}: {exc})",
            )
            if len(present) == len(out.raw):
                raise err from None
            out.tables = before
            for t in present:
                out.raw.pop(t)
                out.files.pop(t)
                out.encodings.pop(t)
            if "overview_page" in present:
                out.overview = out.input_pipeline = None
            out.warnings.append(f"{err.path}: not loaded ({err.problem})")


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
            "time_percent": np.array([o.time_in_percent for o in ops], float) * scale,
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


def _top_op_times(top: pd.DataFrame, tf_stats: pd.DataFrame) -> pd.DataFrame:
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
            "time_percent": col("timeInPercent") * 100,
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
        "hardware_type": str(sp.get("hardware_type", "")),
        "device_type": str(env.p.get("device_type", "")) if env is not None else None,
        "device_core_count": _count(env.number("device_core_count")) if env is not None else None,
        "hostnames": [],
        "tips": tips,
        "remark": _text(str(top_p.get("remark_text", ""))),
    }


def _tf_stats(records, host: str) -> pd.DataFrame:
    """TOOL_TF_STATS from TfStatsRecords, in the file's order."""
    n = len(records)
    is_device = np.array([r.host_or_device == "Device" for r in records], bool)

    def f(name, dtype=float):
        return np.array([getattr(r, name) for r in records], dtype)

    self_frac = np.where(
        is_device, f("device_total_self_time_as_fraction"), f("host_total_self_time_as_fraction")
    )
    cum_frac = np.where(
        is_device,
        f("device_cumulative_total_self_time_as_fraction"),
        f("host_cumulative_total_self_time_as_fraction"),
    )
    flops_v2 = f("flops_v2")
    df = pd.DataFrame(
        {
            "host": [host] * n,
            "host_or_device": [r.host_or_device for r in records],
            "type": [r.op_type for r in records],
            "operation": [r.op_name for r in records],
            "occurrences": f("occurrences", np.int64),
            "total_time_us": f("total_time_in_us"),
            "avg_time_us": f("avg_time_in_us"),
            "total_self_time_us": f("total_self_time_in_us"),
            "avg_self_time_us": f("avg_self_time_in_us"),
            "self_time_percent": self_frac * 100,
            "cumulative_self_time_percent": cum_frac * 100,
            "is_eager": f("is_eager", bool),
            "rank": f("rank", np.int64),
            "measured_flop_rate": f("measured_flop_rate"),
            "model_flop_rate": f("model_flop_rate"),
            "measured_memory_bw": f("measured_memory_bw"),
            "operational_intensity": f("operational_intensity"),
            "bound_by": [r.bound_by for r in records],
            "gpu_tensorcore_utilization": f("gpu_tensorcore_utilization"),
            "flops": np.where(flops_v2 != 0, flops_v2, f("flops", np.uint64).astype(float)),
            "bytes_accessed": f("bytes_accessed", np.uint64).astype(np.int64),
        }
    )
    return schema.conform(df, schema.TOOL_TF_STATS)


def _dims(values) -> str:
    return ",".join(str(v) for v in values)


def _kernels(db, host: str) -> pd.DataFrame:
    """KERNELS from a KernelStatsDb, in the file's order (by total time)."""
    reps = db.reports
    occ = np.array([r.occurrences for r in reps], np.int64)
    total_ns = np.array([r.total_duration_ns for r in reps], np.uint64).astype(float)
    df = pd.DataFrame(
        {
            "host": [host] * len(reps),
            "kernel_name": [r.name for r in reps],
            "registers_per_thread": np.array([r.registers_per_thread for r in reps], np.int64),
            "shmem_bytes": np.array(
                [r.static_shmem_bytes + r.dynamic_shmem_bytes for r in reps], np.int64
            ),
            "block_dim": [_dims(r.block_dim) for r in reps],
            "grid_dim": [_dims(r.grid_dim) for r in reps],
            "occupancy_percent": np.array([r.occupancy_pct for r in reps], float),
            "is_op_tensor_core_eligible": np.array(
                [r.is_op_tensor_core_eligible for r in reps], bool
            ),
            "is_kernel_using_tensor_core": np.array(
                [r.is_kernel_using_tensor_core for r in reps], bool
            ),
            "operation": [r.op_name for r in reps],
            "occurrences": occ,
            "total_time_us": total_ns / 1e3,
            "avg_time_us": np.divide(total_ns / 1e3, occ, out=np.zeros(len(reps)), where=occ > 0),
            "min_time_us": np.array([r.min_duration_ns for r in reps], np.uint64) / 1e3,
            "max_time_us": np.array([r.max_duration_ns for r in reps], np.uint64) / 1e3,
        }
    )
    return schema.conform(df, schema.KERNELS)


# -- memory profile (proto3 JSON: lowerCamelCase keys, 64-bit integers as strings) --------------
def _int(v) -> int:
    """A proto3-JSON 64-bit integer (a string, or a number); 0 when absent."""
    if v is None:
        return 0
    return int(v)


def _float(v) -> float:
    return 0.0 if v is None else float(v)


def _fill_memory(out: HostToolData, doc: dict) -> None:
    per_alloc = doc.get("memoryProfilePerAllocator") or {}
    mem_parts, summaries, breakdowns = [], [], []
    for allocator in sorted(per_alloc):
        prof = per_alloc[allocator] if isinstance(per_alloc[allocator], dict) else {}
        snaps = [s for s in prof.get("memoryProfileSnapshots", []) if isinstance(s, dict)]
        mem = _snapshots(out.host, allocator, snaps)
        mem_parts.append(mem)
        summary = prof.get("profileSummary") or {}
        peak = summary.get("peakStats") or {}
        peak_ps = _int(summary.get("peakStatsTimePs"))
        at_peak = np.flatnonzero(
            np.array([_int(s.get("timeOffsetPs")) for s in snaps], np.int64) == peak_ps
        )
        peak_step = int(mem["group_id"].iloc[at_peak[-1]]) if len(at_peak) else -1
        summaries.append(
            {
                "host": out.host,
                "allocator": allocator,
                "num_allocations": int((mem["activity"] == "ALLOCATION").sum()),
                "num_deallocations": int((mem["activity"] == "DEALLOCATION").sum()),
                "memory_capacity_bytes": _int(summary.get("memoryCapacity")),
                "peak_bytes_lifetime": _int(summary.get("peakBytesUsageLifetime")),
                "peak_in_use_bytes": _int(peak.get("stackReservedBytes"))
                + _int(peak.get("heapAllocatedBytes")),
                "peak_heap_bytes": _int(peak.get("heapAllocatedBytes")),
                "peak_stack_bytes": _int(peak.get("stackReservedBytes")),
                "peak_free_bytes": _int(peak.get("freeMemoryBytes")),
                "peak_fragmentation": _float(peak.get("fragmentation")),
                "peak_time_us": peak_ps / 1e6,
                "peak_group_id": peak_step,
            }
        )
        breakdowns.append(_active_allocations(out.host, allocator, prof, snaps, peak_step))
    memory = pd.concat(mem_parts, ignore_index=True) if mem_parts else schema.empty(schema.MEMORY)
    out.tables["memory"] = schema.conform(memory, schema.MEMORY)
    out.tables["memory_summary"] = schema.conform(
        pd.DataFrame(summaries, columns=list(schema.MEMORY_SUMMARY)), schema.MEMORY_SUMMARY
    )
    bd = (
        pd.concat(breakdowns, ignore_index=True)
        if breakdowns
        else schema.empty(schema.TOOL_MEMORY_BREAKDOWN)
    )
    out.tables["memory_breakdown"] = schema.conform(bd, schema.TOOL_MEMORY_BREAKDOWN)


def _snapshots(host: str, allocator: str, snaps: list[dict]) -> pd.DataFrame:
    """MEMORY rows from MemoryProfileSnapshots (times: µs from the start of the capture)."""
    agg = [s.get("aggregationStats") or {} for s in snaps]
    act = [s.get("activityMetadata") or {} for s in snaps]

    def ints(items, key):
        return np.array([_int(d.get(key)) for d in items], np.int64)

    stack, heap = ints(agg, "stackReservedBytes"), ints(agg, "heapAllocatedBytes")
    df = pd.DataFrame(
        {
            "host": [host] * len(snaps),
            "allocator": [allocator] * len(snaps),
            "time_us": np.array([_int(s.get("timeOffsetPs")) for s in snaps], np.int64) / 1e6,
            "activity": [str(a.get("memoryActivity", "UNKNOWN_ACTIVITY")) for a in act],
            "stack_reserved_bytes": stack,
            "heap_allocated_bytes": heap,
            "free_memory_bytes": ints(agg, "freeMemoryBytes"),
            "in_use_bytes": stack + heap,
            "fragmentation": np.array([_float(d.get("fragmentation")) for d in agg]),
            "peak_bytes_in_use": ints(agg, "peakBytesInUse"),
            "requested_bytes": ints(act, "requestedBytes"),
            "allocation_bytes": ints(act, "allocationBytes"),
            "address": np.array([_int(a.get("address")) for a in act], np.uint64).astype(np.int64),
            "tf_op": [str(a.get("tfOpName", "")) for a in act],
            "group_id": ints(act, "stepId"),
            "region_type": [str(a.get("regionType", "")) for a in act],
            "data_type": [str(a.get("dataType", "")) for a in act],
            "tensor_shape": [str(a.get("tensorShape", "")) for a in act],
            "event": np.full(len(snaps), -1, np.int64),
        }
    )
    return df


def _active_allocations(host, allocator, prof, snaps, peak_step) -> pd.DataFrame:
    """What was live at the peak, as the file lists it (active_allocations: each points at a
    snapshot's allocation or at a special allocation such as the unused preallocation)."""
    special = [s for s in prof.get("specialAllocations", []) if isinstance(s, dict)]
    rows = []
    for a in prof.get("activeAllocations", []) or []:
        if not isinstance(a, dict):
            continue
        si, sp = _int(a.get("snapshotIndex", -1)), _int(a.get("specialIndex", -1))
        if 0 <= si < len(snaps):
            meta = snaps[si].get("activityMetadata") or {}
        elif 0 <= sp < len(special):
            meta = special[sp]
        else:
            continue
        rows.append(
            {
                "host": host,
                "allocator": allocator,
                "occurrences": _int(a.get("numOccurrences", 1)),
                "allocation_bytes": _int(meta.get("allocationBytes")),
                "requested_bytes": _int(meta.get("requestedBytes")),
                "tf_op": str(meta.get("tfOpName", "")),
                "region_type": str(meta.get("regionType", "")),
                "data_type": str(meta.get("dataType", "")),
                "tensor_shape": str(meta.get("tensorShape", "")),
                "group_id": peak_step,
            }
        )
    return pd.DataFrame(rows, columns=list(schema.TOOL_MEMORY_BREAKDOWN))


# -- pod viewer ---------------------------------------------------------------------------------
_CAMEL = re.compile(r"(?<!^)(?=[A-Z])")
_POD_FIXED = {"hostName", "chipId", "nodeId", "stepNum", "totalDurationUs", "bottleneck"}


def _snake(name: str) -> str:
    """'hostInfeedDurationUs' -> 'host_infeed_us'; 'Device compute' -> 'device_compute_us'."""
    if " " in name or name.islower():
        base = re.sub(r"[^0-9a-z]+", "_", name.lower()).strip("_")
        return base + "_us"
    base = _CAMEL.sub("_", name).lower()
    for suffix in ("_duration_us", "_us"):
        if base.endswith(suffix):
            base = base[: -len(suffix)]
            break
    return base + "_us"


def _pod_viewer(doc: dict) -> tuple[pd.DataFrame, pd.DataFrame]:
    """TOOL_POD_STATS and TOOL_ALL_REDUCE_OPS from a PodViewerDatabase's JSON, in either
    layout: 2019's named per-core durations, or the current step_breakdown_us map whose keys
    the database's step_breakdown_events name."""
    names = {
        _int(e.get("id")): str(e.get("name", ""))
        for e in doc.get("stepBreakdownEvents", []) or []
        if isinstance(e, dict)
    }
    rows, reduce_rows = [], []
    maps = (doc.get("podStatsSequence") or {}).get("podStatsMap", []) or []
    for m in maps:
        if not isinstance(m, dict):
            continue
        step = _int(m.get("stepNum"))
        replicas = {str(k): _int(v) for k, v in (m.get("coreIdToReplicaIdMap") or {}).items()}
        for core, rec in (m.get("podStatsPerCore") or {}).items():
            if not isinstance(rec, dict):
                continue
            row = {
                "step": step,
                "core_id": _int(core),
                "replica_id": replicas.get(str(core)),
                "host_name": str(rec.get("hostName", "")),
                "chip_id": _int(rec.get("chipId")),
                "node_id": _int(rec.get("nodeId")),
                "total_duration_us": float(rec.get("totalDurationUs", 0.0) or 0.0),
                "bottleneck": str(rec.get("bottleneck", "")),
            }
            for key, value in rec.items():
                if key not in _POD_FIXED and key != "stepBreakdownUs":
                    row[_snake(key)] = float(value or 0.0)
            for key, value in (rec.get("stepBreakdownUs") or {}).items():
                row[_snake(names.get(_int(key), f"category {key}"))] = float(value or 0.0)
            rows.append(row)
        for op in m.get("allReduceOpDb", []) or []:
            if not isinstance(op, dict):
                continue
            groups = [
                [_int(r) for r in (g.get("replicaIds") or [])]
                for g in op.get("replicaGroups", []) or []
                if isinstance(g, dict)
            ]
            reduce_rows.append(
                {
                    "step": step,
                    "name": str(op.get("name", "")),
                    "occurrences": _int(op.get("occurrences")),
                    "duration_us": float(op.get("durationUs", 0.0) or 0.0),
                    "data_size_bytes": _int(op.get("dataSize")),
                    "replica_groups": json.dumps(groups, separators=(",", ":")) if groups else "",
                    "description": str(op.get("description", "")),
                }
            )
    fixed = list(schema.TOOL_POD_STATS)
    pods = pd.DataFrame(rows)
    if not len(pods):
        pods = schema.empty(schema.TOOL_POD_STATS)
    extra = [c for c in pods.columns if c not in fixed]
    pods["replica_id"] = pd.array(pods["replica_id"], dtype="Int64")
    pods = pods[fixed + extra].sort_values(["step", "core_id"], ignore_index=True)
    pods = pd.concat([schema.conform(pods[fixed], schema.TOOL_POD_STATS), pods[extra]], axis=1)
    reduce_df = pd.DataFrame(reduce_rows, columns=list(schema.TOOL_ALL_REDUCE_OPS))
    return pods, schema.conform(reduce_df, schema.TOOL_ALL_REDUCE_OPS)


def no_trace_tables(host: str, path: str) -> HostTables:
    """The (empty) trace tables of a host that has tool data but no trace."""
    return HostTables(
        host=host,
        path=path,
        planes=[],
        lines=[],
        ev_line=np.zeros(0, np.int32),
        ev_name=np.zeros(0, np.int32),
        ev_offset_ps=np.zeros(0, np.int64),
        ev_dur_ps=np.zeros(0, np.int64),
        ev_occ=np.zeros(0, np.int32),
        names=[],
        event_stats=StatRows.empty(),
    )


def tool_files_of(paths: list[str]) -> list[tuple[str, list[str]]]:
    """Each host of a run's tool-data files with its files, hosts in first-seen order."""
    by_host: dict[str, list[str]] = {}
    for p in paths:
        by_host.setdefault(host_of(p), []).append(p)
    return list(by_host.items())
