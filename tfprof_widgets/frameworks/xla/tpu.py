"""TPU captures: device op rows, device IDLE and the duty cycle, by XProf 2.24's rules.

A TPU core's plane (``/device:TPU:N``) holds an ``XLA Modules`` line (one event per program
run), an ``XLA Ops`` line (one event per HLO op run), often ``Async XLA Ops`` and ``Steps``.
What an op is lives on its *event metadata*: ``program_id`` (a uint64 fingerprint) and
``symbol_id`` (which HLO instruction), ``hlo_category``, XLA's cost analysis (``flops``,
``model_flops``, ``bytes_accessed``) and on some metadata a ``tf_op``; libtpu names
the op's metadata by its HLO text (``%fusion.1 = bf16[8,128]{...} fusion(...)``). Its time
is the core's clock (``device_offset_ps``/``device_duration_ps``, which
:mod:`.device_time` puts in ``run.events``). The programs themselves (their HLO, with each
instruction's framework op) are on ``/host:metadata`` (``run.hlo_instructions``).

* Device ops (``ConvertTensorCoreDeviceTraceXPlaneToOpMetricsDb``): the events of each op
  line, in order, nest by their device spans (an event inside another's span is its
  child); self time = duration − the direct children's durations. An event without
  ``program_id``/``symbol_id``, or with symbol 0 (the program's root), is no op but still
  nests. Ops merge across cores by (program, name); the TF-level rows take the metadata's
  ``tf_op``, else (ours, :func:`framework_ops`) the instruction's ``metadata.op_name`` from
  the program's HLO, else the op's own name with type 'Unknown' (XProf 2.24 stops at the
  ``tf_op``; ours, where neither names a framework op: type = the instruction's HLO
  opcode, as ``copy-done``), and run as often as their busiest HLO op.
* IDLE per core: the span from the first to the last event of its ``Steps`` and op lines
  (plus, in a capture XProf has to group itself, the host-clock span of the ops that name a
  TF op, which XProf copies to a derived ``Framework Ops`` line) minus the ops' self time.
* Duty cycle (``DutyCycleTracker``), on the XEvent (host) clock: ``XLA Ops`` events are
  busy time unless their category is infeed, outfeed, host send/recv or megacore fusion;
  ``XLA Modules`` events only widen the window; busy / window, summed over cores.
* 16-bit share (ours, :func:`hlo_16bit_percent`): the ops' time in instructions whose
  output is bf16/f16 by the program's HLO, on TPU cores and XLA's GPU kernels alike.
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd

from ... import stat_columns
from ...analysis.device_time import xevent_times
from ...analysis.event_index import event_plane_rows
from ...analysis.memo import per_run
from ...analysis.nesting import to_ps
from ..tensorflow.op_names import parse_tf_op
from .columns import refused_costs_note
from .columns import text as column_text
from .gpu import has_instructions, kernel_instructions, positions, ran_instructions, tf_level_ops

# XLA op categories a core is not busy in (kOffDutyHloCategories... in duty_cycle_tracker).
OFF_DUTY_CATEGORIES = (
    "infeed",
    "outfeed",
    "host send",
    "host send-done",
    "host recv",
    "host recv-done",
    "megacore fusion",
)
MODULE_LINES = ("XLA Modules", "Sparse Core Modules")
# Lines of a TPU plane whose events are HLO ops (tsl IsOpLineName), and those whose events
# only bound the core's busy span.
TPU_OP_LINES = ("XLA Ops", "Framework Ops", "Sparse Core Ops")
TPU_STEP_LINES = ("Steps", "Sparse Core Steps")
_LINE_SUFFIX = re.compile(r" #-?\d+$")  # how the lines table makes colliding names unique
# libtpu names an op's metadata by its HLO text, '%fusion.1 = bf16[8,128]{...} fusion(...)'.
_HLO_TEXT_HEAD = r"^%([^\s=]+) = "
# XLA's cost analysis of each op, on its metadata (per run of the op).
COST_STATS = ("flops", "model_flops", "bytes_accessed")


def line_names(run) -> np.ndarray:
    """Each line's name as the capture gave it (without the ' #<id>' added on collisions)."""
    return run.lines["line"].astype(str).str.replace(_LINE_SUFFIX, "", regex=True).to_numpy()


def tpu_plane_rows(run) -> np.ndarray:
    """Rows of run.planes that are TPU cores."""
    # Compared as it is: a categorical compares by its categories, no text column made
    # (every XLA analysis asks, GPU runs included).
    return np.flatnonzero((run.planes["device_kind"] == "TPU").to_numpy(bool))


@per_run
def tpu_op_metadata(run) -> pd.DataFrame:
    """The op stats of TPU event metadata, one row per (host, plane, event name): program_id
    and symbol_id (-1 where absent; a uint64 id as its int64 bit pattern), is_op (both ids
    present, symbol not 0: not the program's root), hlo_category, tf_op ('' where absent),
    the op's instruction name (the metadata's display name, else the head of its HLO text)
    and XLA's cost analysis per run (``flops``, ``model_flops``, ``bytes_accessed``; 0
    where absent). The first metadata of a name wins."""
    md = run.event_metadata
    tpu = set(run.planes["plane"].astype(str).to_numpy()[tpu_plane_rows(run)])
    md = md[md["plane"].astype(str).isin(tpu)].reset_index(drop=True)
    key = ["host", "plane", "metadata_id"]
    ms = run.metadata_stats
    ms = ms[ms["plane"].astype(str).isin(tpu)].reset_index(drop=True)
    md_rows = md[key].astype({"host": str, "plane": str}).assign(r=np.arange(len(md)))
    owner = ms[key].astype({"host": str, "plane": str}).merge(md_rows, how="left")["r"]
    owner = owner.fillna(-1).to_numpy(np.int64)
    ms = ms[owner >= 0].reset_index(drop=True)
    owner = owner[owner >= 0]
    n = len(md)
    program, has_p = stat_columns.numbers(ms, "program_id", n, owner=owner)
    symbol, has_s = stat_columns.numbers(ms, "symbol_id", n, owner=owner)
    category, _ = stat_columns.strings(ms, "hlo_category", n, owner=owner)
    tf_op, _ = stat_columns.strings(ms, "tf_op", n, owner=owner)
    # Costs are counts: read checked (a uint64 >= 2^63 or a double inf wrapped negative).
    flops, refused = {}, np.zeros(n, bool)
    for k in COST_STATS:
        flops[k], bad = stat_columns.counts(ms, k, n, owner=owner)
        refused |= bad
    if refused.any():
        refused_costs_note(run, md["host"].astype(str).to_numpy()[refused],
                           md["name"].astype(str).to_numpy()[refused])  # fmt: skip
    display = md["display_name"].astype(object)
    # The instruction's name: the display name, else the HLO text's '%name = ...' head.
    text = md["name"].astype(str)
    head = text.str.extract(_HLO_TEXT_HEAD, expand=False)
    short = np.where(head.notna(), head, text)
    out = pd.DataFrame(
        {
            "host": md["host"].astype(str),
            "plane": md["plane"].astype(str),
            "name": md["name"].astype(str),
            # Program ids are uint64 fingerprints, kept as their int64 bit pattern (as
            # run.hlo_instructions keeps them), so a negative one is a program too.
            "program_id": np.where(has_p, program, -1),
            "symbol_id": np.where(has_s, symbol, -1),
            "is_op": has_p & has_s & (symbol != 0),
            "hlo_category": pd.Series(category, dtype=object).fillna("").astype(str),
            "tf_op": pd.Series(tf_op, dtype=object).fillna("").astype(str),
            "op_name": np.where(display.notna() & (display != ""), display, short).astype(str),
            **flops,
        }
    )
    return out.drop_duplicates(["host", "plane", "name"], ignore_index=True)


@per_run
def tpu_op_events(run) -> pd.DataFrame:
    """Events of the TPU cores' op and step lines with their metadata, in line order.

    Columns: row, host, plane_row, line_row, line (its name), begin_ps, end_ps (device
    clock), and the columns of :func:`tpu_op_metadata`.
    """
    planes = tpu_plane_rows(run)
    if not len(planes):
        return pd.DataFrame()
    names = line_names(run)
    ev = run.events
    line_name = names[run.event_line_rows]
    keep = np.isin(event_plane_rows(run), planes) & (ev["occurrences"].to_numpy() == 1)
    keep &= np.isin(line_name, (*TPU_OP_LINES, *TPU_STEP_LINES, *MODULE_LINES))
    rows = np.flatnonzero(keep)
    sub = pd.DataFrame(
        {
            "row": rows,
            "host": ev["host"].astype(str).to_numpy()[rows],
            "plane": ev["plane"].astype(str).to_numpy()[rows],
            "name": ev["name"].astype(str).to_numpy()[rows],
            "plane_row": event_plane_rows(run)[rows],
            "line_row": run.event_line_rows[rows],
            "line": line_name[rows],
            "begin_ps": to_ps(ev["start_us"].to_numpy()[rows]),
            "end_ps": to_ps(ev["end_us"].to_numpy()[rows]),
        }
    )
    sub = sub.merge(tpu_op_metadata(run), on=["host", "plane", "name"], how="left")
    sub["program_id"] = sub["program_id"].fillna(-1).astype(np.int64)
    sub["symbol_id"] = sub["symbol_id"].fillna(-1).astype(np.int64)
    sub["is_op"] = sub["is_op"].fillna(False).astype(bool)
    for c in ("hlo_category", "tf_op"):
        sub[c] = sub[c].fillna("")
    for c in COST_STATS:
        sub[c] = sub[c].fillna(0).astype(np.int64)
    sub["op_name"] = sub["op_name"].fillna(sub["name"])
    return sub.sort_values("row", ignore_index=True)


def _nest_by_span(ops: pd.DataFrame) -> pd.DataFrame:
    """XProf's AncestorStack over each line's events in order: an event is the child of the
    latest open one whose span includes it; an op's self time is its duration minus its
    direct children's."""
    begin = ops["begin_ps"].to_numpy().tolist()
    end = ops["end_ps"].to_numpy().tolist()
    line = ops["line_row"].to_numpy().tolist()
    children = [0] * len(begin)
    stack: list[int] = []
    prev = None
    for i, (b, e, ln) in enumerate(zip(begin, end, line)):
        if ln != prev:
            stack, prev = [], ln
        while stack and not (begin[stack[-1]] <= b and e <= end[stack[-1]]):
            stack.pop()
        if stack:
            children[stack[-1]] += e - b
        stack.append(i)
    dur = ops["end_ps"].to_numpy() - ops["begin_ps"].to_numpy()
    return ops.assign(dur_ps=dur, self_ps=dur - np.array(children, np.int64))


def tpu_device_ops(run) -> pd.DataFrame:
    """Every HLO op run on a TPU core with its device time and self time (ops only: events
    with program and symbol ids, symbol not 0). Columns of :func:`tpu_op_events` plus
    dur_ps, self_ps."""
    ev = tpu_op_events(run)
    if not len(ev):
        return pd.DataFrame()
    ops = _nest_by_span(ev[ev["line"].isin(TPU_OP_LINES)].reset_index(drop=True))
    return ops[ops["is_op"].to_numpy()].reset_index(drop=True)


def tpu_op_rows(run) -> tuple[pd.DataFrame, pd.Series]:
    """TF-level device op rows of the TPU cores, and per host the cores' IDLE (ps)."""
    ops = tpu_device_ops(run)
    if not len(ops):
        return pd.DataFrame(), pd.Series(dtype=float)
    idle = _idle(run, ops)
    # HLO ops merge across cores by (program, name); a TF op runs as often as its busiest.
    hlo = (
        ops.groupby(["host", "program_id", "op_name"], sort=False)
        .agg(
            occurrences=("dur_ps", "size"),
            total_ps=("dur_ps", "sum"),
            self_ps=("self_ps", "sum"),
            tf_op=("tf_op", "first"),
        )
        .reset_index()
    )
    hlo["operation"], hlo["type"] = framework_ops(run, hlo)
    rows = (
        hlo.groupby(["host", "operation"], sort=False)
        .agg(
            type=("type", "first"),
            occurrences=("occurrences", "max"),
            total_ps=("total_ps", "sum"),
            self_ps=("self_ps", "sum"),
        )
        .reset_index()
    )
    rows["host_or_device"] = "Device"
    rows["is_eager"] = False
    # The time is XProf's to the picosecond; only the name can be ours (framework_ops).
    rows["beyond_xprof"] = False
    return rows, idle


def framework_ops(run, hlo: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """(operation, type) of each TPU HLO op (``hlo``: host, program_id, op_name, tf_op).

    XProf 2.24 names a TPU op by its metadata's ``tf_op`` and, without one, by the HLO op's
    own name with type 'Unknown'. Where the op has no ``tf_op`` but its program's HLO (the
    ``/host:metadata`` plane) gives the instruction a ``metadata.op_name``, we name it by
    that framework op (``jit(step)/jit(main)/dot_general``, type ``dot_general``), as XProf
    itself does for the same instruction on a GPU: the name is ours, the times are XProf's.
    """
    tf_op = hlo["tf_op"].astype(str).to_numpy(object)
    parsed = [parse_tf_op(t) if t else None for t in tf_op.tolist()]
    name = np.array([p[1] if p else n for p, n in zip(parsed, hlo["op_name"])], object)
    typ = np.array([(p[2] or "Unknown") if p else "Unknown" for p in parsed], object)
    at = instruction_rows(run, hlo)
    use = (tf_op == "") & (at >= 0)
    if use.any():
        h = run.hlo_instructions
        ours = h["op_name"].astype(str).to_numpy(object)[at[use]] != ""
        where = np.flatnonzero(use)[ours]
        h_name, h_type = tf_level_ops(h)
        name[where], typ[where] = h_name[at[where]], h_type[at[where]]
    # An op with no framework op at all (XLA's own copies, copy-start/copy-done, converts):
    # XProf types it 'Unknown', which on a TPU can be most of the device time. Ours: its
    # HLO opcode from the program, else its name without the '.N' suffix ('copy-done').
    unknown = (typ == "Unknown") & (tf_op == "")
    if unknown.any():
        opcode = _name_stems(hlo["op_name"].astype(str).to_numpy(object))
        if len(run.hlo_instructions):
            codes = column_text(run.hlo_instructions["opcode"])
            known = at >= 0
            opcode[known] = codes[at[known]]
        typ[unknown] = opcode[unknown]
    return name, typ


_STEM = re.compile(r"\.\d+$")


def _name_stems(names: np.ndarray) -> np.ndarray:
    """HLO instruction names without XLA's '.N' suffix ('copy-done.3' -> 'copy-done')."""
    return np.array([_STEM.sub("", n) or "Unknown" for n in names.tolist()], object)


def instruction_rows(run, ops: pd.DataFrame) -> np.ndarray:
    """Row of run.hlo_instructions of each TPU op (columns host, program_id, op_name: the
    instruction's name), -1 where the capture carries no such instruction."""
    h = run.hlo_instructions
    if not len(h) or not len(ops):
        return np.full(len(ops), -1, np.int64)
    table = pd.MultiIndex.from_arrays(
        [h["host"].astype(str), h["program_id"].to_numpy(np.int64), h["instruction"].astype(str)]
    )
    first = ~table.duplicated()
    keys = pd.MultiIndex.from_arrays(
        [
            ops["host"].astype(str),
            ops["program_id"].to_numpy(np.int64),
            ops["op_name"].astype(str),
        ]
    )
    pos = table[first].get_indexer(keys)
    return np.where(pos >= 0, np.flatnonzero(first)[np.maximum(pos, 0)], -1)


def _idle(run, ops: pd.DataFrame) -> pd.Series:
    """Per host: Σ over cores of max(self time, busy span) − self time, ps."""
    ev = tpu_op_events(run)
    spans = ev[ev["line"].isin((*TPU_OP_LINES, *TPU_STEP_LINES))][
        ["host", "plane_row", "begin_ps", "end_ps"]
    ]
    if not _grouped_in_file(run):
        # XProf groups the capture itself and derives a 'Framework Ops' line from the ops
        # that name a TF op, on the XEvent clock; its events bound the span too.
        named = ev[ev["line"].isin(TPU_OP_LINES) & (ev["tf_op"] != "")]
        xs, xe = xevent_times(run)
        rows = named["row"].to_numpy()
        derived = named[["host", "plane_row"]].assign(
            begin_ps=to_ps(xs[rows]), end_ps=to_ps(xe[rows])
        )
        spans = pd.concat([spans, derived], ignore_index=True)
    per = spans.groupby(["host", "plane_row"]).agg(
        first=("begin_ps", "min"), last=("end_ps", "max")
    )
    per["busy"] = ops.groupby(["host", "plane_row"])["self_ps"].sum()
    per["busy"] = per["busy"].fillna(0)
    per["idle"] = np.maximum(per["busy"], per["last"] - per["first"]) - per["busy"]
    return per.groupby(level="host")["idle"].sum().astype(np.float64)


def _grouped_in_file(run) -> bool:
    """Whether the capture came with step groups (XProf's IsXSpaceGrouped: a 'group_id'
    stat), in which case XProf derives no lines."""
    return "group_id" in run.stat_store


def duty_cycle(run) -> tuple[float, float]:
    """(busy µs, idle µs) of all TPU cores by XProf's duty-cycle rule (module docstring):
    XEvent times; busy = the union of the on-duty ``XLA Ops``, idle = the rest of the window
    the op and module events span."""
    ev = tpu_op_events(run)
    if not len(ev):
        return 0.0, 0.0
    ev = ev[ev["line"].isin(("XLA Ops", "Sparse Core Ops", *MODULE_LINES))]
    xs, xe = xevent_times(run)
    rows = ev["row"].to_numpy()
    start, end = to_ps(xs[rows]), to_ps(xe[rows])
    active = (
        ev["line"].isin(("XLA Ops", "Sparse Core Ops")).to_numpy()
        & ~ev["hlo_category"].isin(OFF_DUTY_CATEGORIES).to_numpy()
    )
    busy = idle = 0
    for plane in np.unique(ev["plane_row"].to_numpy()):
        on = ev["plane_row"].to_numpy() == plane
        window = int(end[on].max() - start[on].min())
        covered = _union_length(start[on & active], end[on & active])
        busy += covered
        idle += window - covered
    return busy / 1e6, idle / 1e6


def _union_length(start: np.ndarray, end: np.ndarray) -> int:
    """Total length of the union of intervals."""
    if not len(start):
        return 0
    order = np.argsort(start, kind="stable")
    s, e = start[order], end[order]
    reach = np.maximum.accumulate(e)
    new = np.r_[True, s[1:] > reach[:-1]]
    first = s[new]
    last = np.maximum.reduceat(e, np.flatnonzero(new))
    return int((last - first).sum())


SIXTEEN_BIT = ("bf16", "f16")


def hlo_16bit_percent(run) -> float | None:
    """Share of the device ops' time spent in HLO instructions whose result is 16-bit
    floating point (``bf16``/``f16``, the element type of the instruction's output shape in
    the program's HLO), %: TPU ops by self time, GPU events by duration; over the ops whose
    instruction the capture's programs name. None where they name none.

    Ours: XProf's precision share reads TF op names and kernel names for 'half'/'fp16' and
    prints 0 % on every XLA capture."""
    if not has_instructions(run):
        return None
    ops = tpu_device_ops(run)
    at = instruction_rows(run, ops) if len(ops) else np.zeros(0, np.int64)
    tpu_t = ops["self_ps"].to_numpy(np.float64)[at >= 0] if len(ops) else np.zeros(0)
    tpu_dtype = (
        column_text(run.hlo_instructions["dtype"])[at[at >= 0]] if len(ops) else np.zeros(0, object)
    )
    k = kernel_instructions(run)
    gpu_t = run.events["dur_us"].to_numpy()[k["row"].to_numpy()]
    # The GPU's instructions are of the programs that ran (their table: ran_instructions).
    ran = ran_instructions(run)
    gpu_dtype = column_text(ran["dtype"])[positions(ran, k["instruction"].to_numpy())]
    t = np.concatenate([tpu_t / 1e6, gpu_t])
    kinds = np.concatenate([tpu_dtype, gpu_dtype]).astype(str)
    if not len(t) or t.sum() <= 0:
        return None
    return float(100.0 * t[np.isin(kinds, SIXTEEN_BIT)].sum() / t.sum())


__all__ = [
    "duty_cycle",
    "framework_ops",
    "hlo_16bit_percent",
    "instruction_rows",
    "tpu_device_ops",
    "tpu_op_metadata",
    "tpu_op_rows",
]
