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
turn into their summaries. Nothing is re-analysed here. :mod:`.pages` maps the
overview page and the input pipeline (protobuf or DataTable), :mod:`.proto_json` the memory
profile and the pod viewer; the TF stats and kernel stats are mapped here.
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
from google.protobuf.message import DecodeError
from google.protobuf.unknown_fields import UnknownFieldSet

from ... import schema
from ...errors import (
    CorruptProfileError,
    EmptyProfileError,
    ProfileError,
    ProfileTooLargeError,
    WrongFormatError,
)
from ...proto import tool_data_pb2 as pb
from ..columnar import HostTables, StatRows
from ..formats import host_of, tool_of
from ..limits import MEMORY_PER_FILE_BYTE, available_memory_bytes, fmt_bytes, inflate_bounded
from ..messages import check_message_budget, count_messages
from .host import HostToolData
from .pages import datatables, fill_pages, top_op_times
from .proto_json import fill_memory, pod_viewer

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
_MAX_JSON_BYTES = 256 << 20


def _json_limit() -> int:
    """The most JSON a tool file may inflate to: its decode fits in the memory there is (as
    for a Chrome trace), and it is no tool output past 256 MB."""
    avail = available_memory_bytes()
    if avail is None:
        return _MAX_JSON_BYTES
    return min(_MAX_JSON_BYTES, int(avail / MEMORY_PER_FILE_BYTE["chrome"]))


def read_tool_data(host: str, paths: list[str]) -> HostToolData:
    """One host's tool-data files (any subset of the tools) into a :class:`HostToolData`.

    A file that cannot be read is left out with a warning when the host has other files,
    and raises its :class:`~tfprof_widgets.ProfileError` when it is the only one.
    """
    out = HostToolData(host)
    decoded: dict[str, object] = {}
    errors: list[ProfileError] = []
    counted = _messages_within_budget(paths)
    for path in paths:
        tool, encoding = tool_of(path) or ("", "")
        try:
            decoded[tool] = _decode(path, tool, encoding, counted)
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


def _messages_within_budget(paths: list[str]) -> bool:
    """Count the protobuf messages of a host's tool files together, before any is parsed:
    a :class:`ProfileTooLargeError` (naming the largest) when all of them would cost more
    than the memory available. False when a file could not be counted (each is then
    counted alone as it is parsed)."""
    total, largest = 0, ("", 0)
    for path in paths:
        tool, encoding = tool_of(path) or ("", "")
        if encoding != "pb" or tool not in _MESSAGES:
            continue
        try:
            n = count_messages(_MESSAGES[tool].DESCRIPTOR, _read_bytes(path))
        except ProfileError:
            return False
        total += n
        largest = max(largest, (path, n), key=lambda x: x[1])
    avail = available_memory_bytes()
    if avail is not None and total * TOOL_MESSAGE_BYTES > avail:
        raise ProfileTooLargeError(
            largest[0],
            f"the host's tool-data files hold {total:,} protobuf messages ({largest[1]:,} in "
            f"this one); reading them needs about {fmt_bytes(total * TOOL_MESSAGE_BYTES)}, "
            f"more than the {fmt_bytes(avail)} of memory available",
        )
    return True


def _decode(path: str, tool: str, encoding: str, counted: bool = False):
    data = _read_bytes(path)
    what = TOOL_TITLES.get(tool, "a tool-data file")
    if encoding == "pb":
        return parse_message(
            _MESSAGES[tool], data, path, what, per_message=0 if counted else TOOL_MESSAGE_BYTES
        )
    if data[:2] == b"\x1f\x8b":
        # Inflated in bounded steps (a 2 MB file can expand to GBs), as Chrome traces are.
        data = inflate_bounded(data, path, _json_limit(), f"{what}: the gzip stream")
    if len(data) > _MAX_JSON_BYTES:
        raise CorruptProfileError(
            path, f"{what}: over {_MAX_JSON_BYTES >> 20} MB of JSON, not a tool output"
        )
    try:
        doc = json.loads(data)
    except (ValueError, RecursionError) as exc:
        raise CorruptProfileError(
            path, f"{what}: not valid JSON ({exc}); the file is truncated or damaged"
        ) from None
    if encoding == "datatable":
        return datatables(doc, path, what)
    if tool == "memory_profile" and not (
        isinstance(doc, dict) and isinstance(doc.get("memoryProfilePerAllocator", {}), dict)
    ):
        raise WrongFormatError(path, f"not {what}: no 'memoryProfilePerAllocator' object")
    if tool == "pod_viewer" and not (
        isinstance(doc, dict) and isinstance(doc.get("podStatsSequence", {}), dict)
    ):
        raise WrongFormatError(path, f"not {what}: no 'podStatsSequence' object")
    return doc


# Memory one parsed tool-data message costs, read into our tables (measured on files of
# empty step details and TF-stats records: docs/speed.md): the budget a file's messages are
# counted against.
TOOL_MESSAGE_BYTES = 300


def parse_message(cls, data: bytes, path: str, what: str, per_message: int = TOOL_MESSAGE_BYTES):
    """``cls`` parsed from ``data``; damaged bytes raise CorruptProfileError, a message with
    fields ``cls`` does not have (another file under this name) WrongFormatError, and one of
    more messages than the memory available holds (``per_message`` bytes each)
    ProfileTooLargeError, before it is parsed."""
    if per_message:
        check_message_budget(cls, data, path, what, per_message)
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
    avail = available_memory_bytes()
    for tool, cls in _MESSAGES.items():
        if avail is not None and count_messages(cls.DESCRIPTOR, data) * TOOL_MESSAGE_BYTES > avail:
            continue  # too big to look at: not named
        msg = cls()
        try:
            msg.ParseFromString(data)
        except DecodeError:
            continue
        if msg.ListFields() and not len(UnknownFieldSet(msg)):
            return TOOL_TITLES[tool] + f" ({cls.DESCRIPTOR.name})"
    return None


# -- mapping onto our tables ---------------------------------------------------------------------
def _fill_tf_stats(out: HostToolData) -> None:
    db = out.raw["tensorflow_stats"]
    notes: list[str] = []
    out.tables["tf_stats"] = _tf_stats(db.with_idle.tf_stats_record, out.host, notes)
    out.tables["tf_stats_without_idle"] = _tf_stats(
        db.without_idle.tf_stats_record, out.host, notes
    )
    out.warnings += [f"{out.files['tensorflow_stats']}: {n}" for n in dict.fromkeys(notes)]
    if "top_ops" in out.tables:
        out.tables["top_ops"] = top_op_times(out.tables["top_ops"], out.tables["tf_stats"])


def _fill_pod_viewer(out: HostToolData) -> None:
    out.tables["pod_stats"], out.tables["all_reduce_ops"] = pod_viewer(out.raw["pod_viewer"])


# Which tools each step maps onto our tables, in order (the TF stats complete the overview's
# top ops). Damaged content (a number where a list belongs...) fails the step's own files.
_FILLERS = (
    (("overview_page", "input_pipeline"), fill_pages),
    (("tensorflow_stats",), _fill_tf_stats),
    (
        ("kernel_stats",),
        lambda out: out.tables.update(kernels=_kernels(out.raw["kernel_stats"], out.host)),
    ),
    (("memory_profile",), lambda out: fill_memory(out, out.raw["memory_profile"])),
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


# TfStatsRecord's fields the table reads, and their dtypes (object: text).
_TF_STATS_FIELDS = {
    "host_or_device": object, "op_type": object, "op_name": object, "bound_by": object,
    "occurrences": np.int64, "rank": np.int64, "is_eager": bool,
    "flops": np.uint64, "bytes_accessed": np.uint64,
    **dict.fromkeys(
        ("total_time_in_us avg_time_in_us total_self_time_in_us avg_self_time_in_us "
         "device_total_self_time_as_fraction host_total_self_time_as_fraction "
         "device_cumulative_total_self_time_as_fraction "
         "host_cumulative_total_self_time_as_fraction flops_v2 measured_flop_rate "
         "model_flop_rate measured_memory_bw operational_intensity "
         "gpu_tensorcore_utilization").split(),
        float,
    ),
}  # fmt: skip


def _record_columns(records, fields: dict) -> dict[str, np.ndarray]:
    """The named scalar fields of repeated records as columns (their proto default where a
    record leaves one unset; text as categoricals), each record's set fields read in one
    call (``ListFields``), not each field by name: one attribute read per field of every
    record took tens of seconds on millions of records (docs/speed.md)."""
    n = len(records)
    found: dict[str, tuple[list, list]] = {name: ([], []) for name in fields}
    for i, r in enumerate(records):
        for fd, value in r.ListFields():
            slot = found.get(fd.name)
            if slot is not None:
                slot[0].append(i)
                slot[1].append(value)
    out = {}
    for name, dtype in fields.items():
        at, values = found[name]
        if dtype is object:  # text: a categorical of the few distinct values, made once
            cats = sorted(set(values) | ({""} if len(at) < n else set()))
            code = dict(zip(cats, range(len(cats))))
            codes = np.full(n, code.get("", 0), np.int32)
            if at:
                codes[np.asarray(at, np.int64)] = np.fromiter(map(code.get, values), np.int32)
            out[name] = pd.Categorical.from_codes(codes, dtype=pd.CategoricalDtype(cats))
            continue
        col = np.zeros(n, dtype=dtype)
        if at:
            col[np.asarray(at, np.int64)] = np.array(values, dtype=dtype)
        out[name] = col
    return out


def _tf_stats(records, host: str, notes: list[str]) -> pd.DataFrame:
    """TOOL_TF_STATS from TfStatsRecords, in the file's order; a count that cannot be right
    is refused, with a note."""
    n = len(records)
    c = _record_columns(records, _TF_STATS_FIELDS)
    # A uint64 of 2^63 or more would wrap int64: refused (0), never negative.
    huge = c["bytes_accessed"] >= np.uint64(1 << 63)
    if huge.any():
        notes.append(
            f"{int(huge.sum())} op(s) with bytes_accessed of 2^63 or more: refused (0 bytes)"
        )
    is_device = np.asarray(c["host_or_device"] == "Device", bool)
    self_frac = np.where(
        is_device, c["device_total_self_time_as_fraction"], c["host_total_self_time_as_fraction"]
    )
    cum_frac = np.where(
        is_device,
        c["device_cumulative_total_self_time_as_fraction"],
        c["host_cumulative_total_self_time_as_fraction"],
    )
    flops_v2 = c["flops_v2"]
    df = pd.DataFrame(
        {
            "host": pd.Categorical.from_codes(np.zeros(n, np.int8), categories=[host]),
            "host_or_device": c["host_or_device"],
            "type": c["op_type"],
            "operation": c["op_name"],
            "occurrences": c["occurrences"],
            "total_time_us": c["total_time_in_us"],
            "avg_time_us": c["avg_time_in_us"],
            "total_self_time_us": c["total_self_time_in_us"],
            "avg_self_time_us": c["avg_self_time_in_us"],
            "self_time_percent": self_frac * 100,
            "cumulative_self_time_percent": cum_frac * 100,
            "is_eager": c["is_eager"],
            "beyond_xprof": np.zeros(n, bool),  # TensorBoard's own rows
            "rank": c["rank"],
            "measured_flop_rate": c["measured_flop_rate"],
            "model_flop_rate": c["model_flop_rate"],
            "measured_memory_bw": c["measured_memory_bw"],
            "operational_intensity": c["operational_intensity"],
            "bound_by": c["bound_by"],
            "gpu_tensorcore_utilization": c["gpu_tensorcore_utilization"],
            "flops": np.where(flops_v2 != 0, flops_v2, c["flops"].astype(float)),
            "bytes_accessed": np.where(huge, 0, c["bytes_accessed"]).astype(np.int64),
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
            "beyond_xprof": np.zeros(len(reps), bool),  # the file is XProf's own table
            "no_op_time_us": np.zeros(len(reps)),  # the file does not tell
        }
    )
    return schema.conform(df, schema.KERNELS)


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
