"""XLA's lines in the trace viewer, as XProf's trace viewer derives them on GPUs.

A raw JAX (or TF with XLA) GPU capture has only streams: each kernel, memset or copy that XLA
launched carries ``hlo_module``, ``hlo_op`` and ``program_id``. XProf 2.24's trace viewer
(``DeriveEventsFromAnnotations``) adds, per stream that has such events, the lines

* ``XLA Modules - from #N``: one event per run of a program, named ``<module>(<program_id>)``
  (``jit_step(9941)``);
* ``XLA Ops - from #N``: one event per run of an HLO instruction, named after it
  (``input_transpose_fusion.4``, or ``command_buffer_1`` under CUDA graphs);

where consecutive kernels of the stream with the same name and group (step) are one event
from the first one's start to the latest end (a cuDNN convolution's kernels are one
``cudnn-conv.3``); copies and memsets make none. Measured against XProf 2.24 on the shared
JAX H100 pair and the AMD captures (tests/views/test_trace_model.py). Capture lines that already
are XProf's derived lines (TensorFlow GPU captures, TPU ``XLA Ops``) are drawn as they are and
not derived again.

:func:`event_hlo` is what the trace viewer's details say of a kernel's HLO instruction.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ... import stat_columns
from ...analysis.event_index import event_line_ids, is_derived_line, on_device, timed
from .gpu import kernel_instructions

MODULES = "XLA Modules"
OPS = "XLA Ops"
COPY_STATS = ("memcpy_details", "Memset_details", "memset_details")


def trace_lines(run) -> pd.DataFrame:
    """XProf's derived XLA lines of a GPU capture as events: host, plane, line, name,
    start_us, end_us, dur_us, occurrences (1), group_id, and ``first_row`` (the row of
    run.events of the first kernel each one spans). Empty without XLA kernels."""
    ev = run.events
    n = len(ev)
    op, has_op = stat_columns.strings(run.stat_store, "hlo_op", n)
    module, has_module = stat_columns.strings(run.stat_store, "hlo_module", n)
    program, has_program = stat_columns.numbers(run.stat_store, "program_id", n)
    # Copies and memsets (XProf's MemcpyDetails/MemsetDetails events) make no XLA line
    # events, even where they carry an hlo_op: a cuDNN convolution's op starts at its first
    # kernel, not at the memset before it.
    is_copy = np.zeros(n, bool)
    for name in COPY_STATS:
        is_copy |= stat_columns.strings(run.stat_store, name, n)[1]
    line_ids = event_line_ids(run)
    own = on_device(run) & ~is_derived_line(line_ids) & timed(run) & ~is_copy
    rows = np.flatnonzero(own & has_op & has_module & has_program)
    if not len(rows):
        return _empty(ev)
    line_code = ev["line"].cat.codes.to_numpy()[rows]
    host_code = ev["host"].cat.codes.to_numpy()[rows]
    plane_code = ev["plane"].cat.codes.to_numpy()[rows]
    start = ev["start_us"].to_numpy()[rows]
    order = np.lexsort((rows, start, line_code, plane_code, host_code))
    rows = rows[order]
    stream = np.char.add(" - from #", line_ids[rows].astype(str))
    ops = pd.Series(op[rows], dtype=object).astype(str).str.rsplit("::", n=1).str[-1]
    programs = pd.Series(program[rows]).astype(str)
    modules = pd.Series(module[rows], dtype=object).astype(str) + "(" + programs + ")"
    op_keys = ops + "(" + programs + ")"  # one instruction name in two programs: two ops
    parts = [
        _merged(run, rows, np.char.add(MODULES, stream), modules.to_numpy(object)),
        _merged(
            run, rows, np.char.add(OPS, stream), op_keys.to_numpy(object), ops.to_numpy(object)
        ),
    ]
    out = pd.concat(parts, ignore_index=True)
    for c in ("host", "plane", "line", "name"):
        out[c] = out[c].astype("category")
    return out


def _merged(run, rows: np.ndarray, line: np.ndarray, key: np.ndarray, names=None) -> pd.DataFrame:
    """Events of ``rows`` (sorted by line, then start) merged where consecutive ones on the
    same derived ``line`` have the same ``key`` and group: one event each, from the first
    start to the latest end, named ``names`` (default: the key)."""
    names = key if names is None else names
    ev = run.events
    group = ev["group_id"].to_numpy(dtype=float)[rows] if "group_id" in ev else np.zeros(len(rows))
    group = np.where(np.isnan(group), -1.0, group)
    host = ev["host"].cat.codes.to_numpy()[rows]
    plane = ev["plane"].cat.codes.to_numpy()[rows]
    same = np.zeros(len(rows), bool)
    same[1:] = (
        (line[1:] == line[:-1])
        & (host[1:] == host[:-1])
        & (plane[1:] == plane[:-1])
        & (key[1:] == key[:-1])
        & (group[1:] == group[:-1])
    )
    first = np.flatnonzero(~same)
    end = np.maximum.reduceat(ev["end_us"].to_numpy()[rows], first)
    start = ev["start_us"].to_numpy()[rows][first]
    return pd.DataFrame(
        {
            "host": ev["host"].to_numpy()[rows][first].astype(str),
            "plane": ev["plane"].to_numpy()[rows][first].astype(str),
            "line": line[first],
            "name": names[first],
            "start_us": start,
            "end_us": end,
            "dur_us": end - start,
            "occurrences": np.ones(len(first), np.int64),
            "group_id": group[first],
            "first_row": rows[first],
        }
    )


def _empty(ev: pd.DataFrame) -> pd.DataFrame:
    cols = {c: pd.Categorical([]) for c in ("host", "plane", "line", "name")}
    return pd.DataFrame(
        {
            **cols,
            "start_us": np.zeros(0),
            "end_us": np.zeros(0),
            "dur_us": np.zeros(0),
            "occurrences": np.zeros(0, np.int64),
            "group_id": np.zeros(0),
            "first_row": np.zeros(0, np.int64),
        }
    )


def event_hlo(run, row: int) -> list[tuple[str, str]]:
    """What the trace viewer's details say of one device event's HLO instruction (looked up
    when the event is clicked, not stored per event): its HLO op and program, XProf's
    category, the framework op (the instruction's ``metadata.op_name``; for a fusion without
    one, the path its fused ops share), the Python source line, and the instruction as HLO
    text. Empty where the event names no instruction (:func:`.gpu.kernel_instructions`, so
    also kernels inside CUDA graphs, marked as attributed by us)."""
    k = kernel_instructions(run)
    rows = k["row"].to_numpy()
    i = int(np.searchsorted(rows, row))
    if i >= len(rows) or rows[i] != row:
        return []
    h = run.hlo_instructions.iloc[int(k["instruction"].iat[i])]
    out = [
        ("HLO op", str(h["instruction"])),
        ("XLA module", f"{h['module']} (program {int(h['program_id'])})"),
        ("HLO category", str(h["category"])),
    ]
    if h["op_name"]:
        out.append(("framework op", str(h["op_name"])))
    else:  # a fusion without an op of its own: the scope its fused ops share, as XLA names
        # the kernel's annotation
        out.append(("framework scope", _fused_scope(run.hlo_instructions, h) or "—"))
    if h["source_file"]:
        out.append(("source", f"{h['source_file']}:{int(h['source_line'])}"))
    if bool(k["beyond_xprof"].iat[i]):
        out.append(("attributed", "inside a command buffer, by its fusion name or schedule (ours)"))
    out.append(("HLO text", hlo_text(h)))
    return out


def _fused_scope(table: pd.DataFrame, h: pd.Series) -> str:
    """The longest path (``jit(step)/jvp()``) the op names of the instructions that ``h``
    calls (its fused computation) start with."""
    called = [c.strip() for c in str(h["called_computations"]).split(",") if c.strip()]
    if not called:
        return ""
    inside = table[
        (table["host"] == h["host"])
        & (table["program_id"] == h["program_id"])
        & table["computation"].isin(called)
    ]
    paths = [str(n).split("/") for n in inside["op_name"] if n]
    if not paths:
        return ""
    common = paths[0]
    for p in paths[1:]:
        k = 0
        while k < min(len(common), len(p)) and common[k] == p[k]:
            k += 1
        common = common[:k]
    return "/".join(common)


def hlo_text(h: pd.Series) -> str:
    """One instruction as HLO text prints it (``%fusion.3 = f32[8,32] fusion(...),
    kind=kLoop, calls=fused_computation.3, metadata={...}``), from run.hlo_instructions'
    columns: its operands are not kept there, so they show as ``...``."""
    attrs = []
    if h["fusion_kind"]:
        attrs.append(f"kind={h['fusion_kind']}")
    if h["called_computations"]:
        attrs.append(f"calls={h['called_computations']}")
    if h["custom_call_target"]:
        attrs.append(f'custom_call_target="{h["custom_call_target"]}"')
    meta = []
    if h["op_name"]:
        meta.append(f'op_name="{h["op_name"]}"')
    if h["source_file"]:
        meta.append(f'source_file="{h["source_file"]}" source_line={int(h["source_line"])}')
    if meta:
        attrs.append("metadata={" + " ".join(meta) + "}")
    head = f"%{h['instruction']} = {h['shape']} {h['opcode']}(...)"
    return ", ".join([head, *attrs])


__all__ = ["MODULES", "OPS", "event_hlo", "hlo_text", "trace_lines"]
