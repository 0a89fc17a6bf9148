"""XLA's programs per line of the user's source: each HLO instruction's time, and the source
line its metadata names (for :mod:`tfprof_widgets.analysis.source_lines`).

JAX (and TF's ``jit_compile``) write on each HLO instruction's ``OpMetadata`` the user's
line that made it: ``source_file``/``source_line``, or (newer JAX) a ``stack_frame_id``
into the module's ``StackFrameIndexProto``; ``run.hlo_instructions`` holds the file and the
line either way (the reader resolves the frame). The function comes from the module's stack
frame index: the function of the location with that file and line (a line of Python is in
one function; ``''`` where the capture has no frame index).

The time of an instruction is what the per-instruction tools count:

* device: each GPU kernel, memset or copy that names it (:func:`.gpu.kernel_instructions`,
  the kernels inside CUDA graphs included), each TPU op (:func:`.tpu.tpu_device_ops`, self
  time), and on XLA:CPU each thunk (:func:`.cpu.cpu_thunks`): there the CPU is the device
  the program ran on (``jax.devices()`` is ``[CpuDevice(id=0)]``), so its thunks are device
  time of the line, not host time;
* host: the runtime's calls on the host that name the instruction (on a host with a GPU or
  TPU: the launches of its kernels, ``cudaLaunchKernel`` with ``hlo_op``/``program_id``).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ... import stat_columns
from ...analysis.event_index import (
    DEVICE_KINDS,
    event_line_ids,
    is_derived_line,
    plane_kinds,
    timed,
)
from ...analysis.nesting import to_ps
from .columns import text_at
from .cpu import cpu_thunks
from .gpu import _lookup, kernel_instructions
from .tpu import tpu_device_ops

#: Columns of :func:`instruction_sources` (one row per instruction that ran).
COLUMNS = (
    "source_file",
    "source_line",
    "function",
    "framework",
    "op_name",
    "op_id",
    "device_ps",
    "host_ps",
    "occurrences",
)


def instruction_sources(run) -> pd.DataFrame:
    """One row per HLO instruction that ran (on a device, or named by a host call): its
    source line (``''``/0 where the metadata names none), function, framework, op name,
    device and host time (ps) and device events (:data:`COLUMNS`); empty without programs."""
    parts = [p for p in (*_device_parts(run), _host_part(run)) if len(p)]
    if not parts:
        return pd.DataFrame({c: [] for c in COLUMNS})
    every = pd.concat(parts, ignore_index=True)
    per = every.groupby("instruction", sort=False).sum()
    labels = per.index.to_numpy(np.int64)
    h = run.hlo_instructions
    files, lines, op_name, framework = _sources(h, labels)
    hosts = text_at(h["host"], labels, missing="")
    programs = h["program_id"].to_numpy(np.int64)[labels]
    return pd.DataFrame(
        {
            "source_file": files,
            "source_line": np.where(files != "", lines, 0),
            "function": _functions(run, hosts, programs, files, lines),
            "framework": framework,
            "op_name": op_name,
            "op_id": labels,
            "device_ps": per["device_ps"].to_numpy(np.int64),
            "host_ps": per["host_ps"].to_numpy(np.int64),
            "occurrences": per["occurrences"].to_numpy(np.int64),
        }
    )


def _sources(h: pd.DataFrame, labels: np.ndarray) -> tuple[np.ndarray, ...]:
    """(file, line, framework op, framework) of the instructions at ``labels`` (rows of
    run.hlo_instructions, a RangeIndex). XLA leaves the metadata of many fusions empty
    (``loop_convert_fusion``, ``transpose_copy_fusion``: 20 to 25 % of the device time of
    the JAX captures here); such an instruction takes the line of the last instruction of
    the computation it calls that names one (a computation lists its root last: the op whose
    result the fusion is), nested fusions through up to :data:`_DEPTH` levels."""
    files = text_at(h["source_file"], slice(None), missing="")
    lines = h["source_line"].to_numpy(np.int64)
    op_name = text_at(h["op_name"], slice(None), missing="")
    named = files != ""
    key = ["host", "program_id", "computation"]
    comp = pd.DataFrame(
        {c: text_at(h[c], slice(None), missing="") for c in ("host", "computation")}
    )
    comp["program_id"] = h["program_id"].to_numpy(np.int64)
    call = comp[["host", "program_id"]].assign(
        computation=text_at(h["called_computations"], slice(None), missing="")
    )
    src = np.arange(len(h))  # the row whose metadata each instruction's line is from
    for _ in range(_DEPTH):
        has = named[src]
        last = comp[has].assign(row=src[has]).drop_duplicates(key, keep="last")
        want = np.flatnonzero(~has & (call["computation"].to_numpy() != ""))
        if not len(want) or not len(last):
            break
        hit = call.iloc[want].merge(last, on=key, how="left")["row"].to_numpy()
        ok = ~np.isnan(hit)
        if not ok.any():
            break
        src[want[ok]] = hit[ok].astype(np.int64)
    at = src[labels]
    # The op is the instruction's own framework op, else the one its line came from, else
    # the instruction itself.
    own = op_name[labels]
    meta = np.where(own != "", own, op_name[at])
    op = np.where(meta != "", meta, text_at(h["instruction"], labels, missing=""))
    return files[at], np.where(files[at] != "", lines[at], 0), op, _frameworks(meta)


# Levels of fusions inside fusions followed for a line (XLA nests them once or twice).
_DEPTH = 4


def _device_parts(run) -> list[pd.DataFrame]:
    """Per device event: (instruction, device_ps, host_ps=0, occurrences=1)."""
    out = []
    dur_us = run.events["dur_us"].to_numpy()
    for rows in (kernel_instructions(run), cpu_thunks(run)):
        if len(rows):
            out.append(_part(rows["instruction"].to_numpy(), to_ps(dur_us[rows["row"].to_numpy()])))
    ops = tpu_device_ops(run)
    if len(ops):
        hosts = ops["host"].astype(str).to_numpy(object)
        programs = ops["program_id"].to_numpy(np.int64)
        h = run.hlo_instructions_of(set(zip(hosts.tolist(), programs.tolist())))
        found = _lookup(h, hosts, programs, ops["op_name"].astype(str).to_numpy(object))
        keep = found >= 0
        out.append(_part(found[keep], ops["self_ps"].to_numpy(np.int64)[keep]))
    return [p for p in out if len(p)]


def _part(instruction: np.ndarray, device_ps: np.ndarray) -> pd.DataFrame:
    n = len(instruction)
    return pd.DataFrame(
        {
            "instruction": np.asarray(instruction, np.int64),
            "device_ps": np.asarray(device_ps, np.int64),
            "host_ps": np.zeros(n, np.int64),
            "occurrences": np.ones(n, np.int64),
        }
    )


def _host_part(run) -> pd.DataFrame:
    """The host calls naming an instruction on hosts with a GPU or TPU (the launches of
    their device work), as (instruction, device_ps=0, host_ps, occurrences=0)."""
    ev = run.events
    n = len(ev)
    hlo_op, has_op = stat_columns.strings(run.stat_store, "hlo_op", n)
    program, has_program = stat_columns.numbers(run.stat_store, "program_id", n)
    kinds = plane_kinds(run)
    hosts_of = run.planes["host"].astype(str)
    with_device = hosts_of[np.isin(kinds, DEVICE_KINDS)].unique()
    host_line = ((kinds == "CPU") & hosts_of.isin(with_device).to_numpy())[run.line_plane_rows]
    own = host_line[run.event_line_rows] & ~is_derived_line(event_line_ids(run)) & timed(run)
    rows = np.flatnonzero(own & has_op & has_program)
    if not len(rows):
        return pd.DataFrame()
    hosts = text_at(ev["host"], rows, missing="")
    programs = program[rows].astype(np.int64)
    h = run.hlo_instructions_of(set(zip(hosts.tolist(), programs.tolist())))
    if not len(h):
        return pd.DataFrame()
    found = _lookup(h, hosts, programs, np.asarray(hlo_op[rows], object))
    keep = found >= 0
    return pd.DataFrame(
        {
            "instruction": found[keep],
            "device_ps": np.zeros(int(keep.sum()), np.int64),
            "host_ps": to_ps(ev["dur_us"].to_numpy()[rows[keep]]),
            "occurrences": np.zeros(int(keep.sum()), np.int64),
        }
    )


def _functions(run, hosts, programs, files, lines) -> np.ndarray:
    """Per instruction: the function of its (file, line) in its module's stack frame index,
    '' where the module has none (one look-up per distinct key, not per instruction)."""
    out = np.full(len(files), "", object)
    if not len(files):
        return out
    keys = pd.DataFrame({"h": hosts, "p": programs, "f": files, "l": lines})
    first = keys.drop_duplicates()
    code = keys.merge(first.reset_index(names="k"), on=["h", "p", "f", "l"], how="left")["k"]
    table = _frame_functions(run, set(zip(first["h"].tolist(), first["p"].tolist())))
    found = pd.Series(
        [table.get(k, "") for k in zip(*(first[c].tolist() for c in "hpfl"))],
        index=first.index,
        dtype=object,
    )
    return found.reindex(code.to_numpy()).to_numpy(object)


def _frame_functions(run, programs: set) -> dict:
    """(host, program, file, line) -> function, from the stack frame index of each module
    named (the locations of one module: hundreds, read once per run)."""
    out: dict = {}
    for host, program, module in run.hlo_modules:
        if (str(host), int(program)) not in programs:
            continue
        index = module.stack_frame_index
        files, functions = list(index.file_names), list(index.function_names)
        for loc in index.file_locations:
            f = files[loc.file_name_id - 1] if 0 < loc.file_name_id <= len(files) else ""
            k = loc.function_name_id
            fn = functions[k - 1] if 0 < k <= len(functions) else ""
            out.setdefault((str(host), int(program), f, int(loc.line)), fn)
    return out


def _frameworks(op_name: np.ndarray) -> np.ndarray:
    """JAX where the op name is a JAX transform path (``jit(step)/...``, ``pmap(...)``),
    TensorFlow where it is another op name, else XLA (the program's own instructions)."""
    text = pd.Series(op_name, dtype=object)
    jax = text.str.contains(r"^(?:jit|pmap|xmap|pjit|shard_map)\(", regex=True).to_numpy(bool)
    named = (text != "").to_numpy()
    return np.where(jax, "JAX", np.where(named, "TensorFlow", "XLA")).astype(object)


__all__ = ["COLUMNS", "instruction_sources"]
