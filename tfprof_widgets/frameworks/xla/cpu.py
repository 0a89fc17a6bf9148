"""XLA on CPU: the work of XLA:CPU's programs as host op rows of ``run.ops`` (ours).

A JAX (or TF ``jit_compile``) program on the CPU runs as thunks: XLA:CPU's thunk executor
records each thunk as an event named after its HLO instruction, on the thread that ran it
(the PjRt client threads, the XLAEigen pool), with ``hlo_op`` (the instruction),
``hlo_module`` and ``program_id`` stats, and the program's ``HloProto`` on
``/host:metadata``. XProf 2.24 counts none of it: its host op table takes TF ops only (an
event whose name parses as one, or with a ``tf_op`` stat) and its device tables read device
planes, of which a CPU capture has none; its op stats of the JAX CPU capture
(``tests/golden/jax_cpu_10steps``) hold only a host IDLE of 0, and its overview 0 % on
either side.

Ours, beyond XProf: each thunk event whose ``(program_id, hlo_op)`` names an instruction of
a program the capture carries is one occurrence of that instruction, and is counted, as the
GPU rules count a kernel (:mod:`.gpu`), for its framework op: the instruction's
``metadata.op_name`` parsed as a framework op (``jit(train_step)/jvp()/conv_general_dilated``,
type ``conv_general_dilated``), else the instruction's own name, type 'Unknown'. Rows are
``Host`` (the CPU is the host: XProf's schema has no CPU device), ``beyond_xprof``; self time
is the thunk's duration (thunks do not nest on a thread; the Eigen pool's work items a thunk
hands out carry no ``hlo_op`` and are not added again); an op ran as often as its busiest
instruction. The host IDLE stays XProf's (it is of the TF-op threads), so the rows of XProf's
op table and its IDLE are unchanged. On a host with a GPU or TPU the runtime's launch calls
carry the same stats: they are launches of device work, counted on the device, and left out.
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
    times_ps,
)
from ...analysis.memo import per_run
from ...analysis.nesting import interval_union
from .columns import text_at
from .gpu import _lookup, positions, tf_level_ops

_COLUMNS = ("host", "host_or_device", "type", "operation", "occurrences", "total_ps", "self_ps")


@per_run
def cpu_thunks(run) -> pd.DataFrame:
    """XLA:CPU thunk events on host threads that name an instruction of their program.

    Columns: row (into run.events), instruction (row of run.hlo_instructions), host,
    program_id.
    """
    ev = run.events
    n = len(ev)
    hlo_op, has_op = stat_columns.strings(run.stat_store, "hlo_op", n)
    program, has_program = stat_columns.numbers(run.stat_store, "program_id", n)
    kinds = plane_kinds(run)
    # On a host with a GPU or TPU, host events naming an instruction are the runtime's
    # launches of its device work (cudaLaunchKernel, hipMemcpyDtoDAsync), counted on the
    # device: XLA:CPU programs run on hosts without one.
    with_device = run.planes["host"].astype(str)[np.isin(kinds, DEVICE_KINDS)].unique()
    cpu_host = ~run.planes["host"].astype(str).isin(with_device).to_numpy()
    host_line = ((kinds == "CPU") & cpu_host)[run.line_plane_rows][run.event_line_rows]
    own = host_line & ~is_derived_line(event_line_ids(run)) & timed(run)
    rows = np.flatnonzero(own & has_op & has_program)
    empty = pd.DataFrame(
        {k: np.zeros(0, np.int64) for k in ("row", "instruction", "program_id")}
        | {"host": np.zeros(0, object)}
    )
    if not len(rows):
        return empty
    hosts = text_at(ev["host"], rows, missing="")
    programs = program[rows].astype(np.int64)
    h = run.hlo_instructions_of(set(zip(hosts.tolist(), programs.tolist())))
    if not len(h):
        return empty
    names = np.asarray(hlo_op[rows], object)
    found = _lookup(h, hosts, programs, names)
    keep = found >= 0
    return pd.DataFrame(
        {
            "row": rows[keep],
            "instruction": found[keep],
            "host": hosts[keep],
            "program_id": programs[keep],
        }
    )


def cpu_op_rows(run) -> pd.DataFrame:
    """Host op rows of XLA:CPU's thunks (module docstring), in ``run.ops``'s row columns
    (times in ps); empty where the capture has none."""
    t = cpu_thunks(run)
    if not len(t):
        return pd.DataFrame()
    programs = set(zip(t["host"].tolist(), t["program_id"].tolist()))
    h = run.hlo_instructions_of(programs)
    op_name, op_type = tf_level_ops(h)
    at = positions(h, t["instruction"].to_numpy())
    start, end = times_ps(run)
    rows = t["row"].to_numpy()
    dur = (end[rows] - start[rows]).astype(np.int64)
    per_instruction = (
        pd.DataFrame(
            {
                "host": t["host"].to_numpy(object),
                "instruction": t["instruction"].to_numpy(),
                "operation": op_name[at],
                "type": op_type[at],
                "dur": dur,
            }
        )
        .groupby(["host", "instruction"], sort=False)
        .agg(
            operation=("operation", "first"),
            type=("type", "first"),
            n=("dur", "size"),
            ps=("dur", "sum"),
        )
        .reset_index()
    )
    out = (
        per_instruction.groupby(["host", "operation"], sort=False)
        .agg(type=("type", "first"), occurrences=("n", "max"), total_ps=("ps", "sum"))
        .reset_index()
    )
    out["self_ps"] = out["total_ps"]
    out["host_or_device"] = "Host"
    out["is_eager"] = False
    out["beyond_xprof"] = True
    return out[[*_COLUMNS, "is_eager", "beyond_xprof"]]


def cpu_step_share(run, steps: pd.DataFrame) -> float:
    """The share of the time of ``steps`` (rows of run.steps: the overview's averaged ones)
    in which XLA:CPU ran a thunk of the program, each instant once over all its threads, %;
    NaN without thunks or steps. XProf's step breakdown counts the TF-op threads only, so
    this time is in its 'All Others'."""
    t = cpu_thunks(run)
    if not len(t) or not len(steps):
        return float("nan")
    ev = run.events
    rows = t["row"].to_numpy()
    start, end = interval_union(ev["start_us"].to_numpy()[rows], ev["end_us"].to_numpy()[rows])
    a = steps["start_us"].to_numpy()[:, None]
    b = a + steps["step_time_us"].to_numpy()[:, None]
    busy = np.clip(np.minimum(end[None, :], b) - np.maximum(start[None, :], a), 0, None)
    total = float(steps["step_time_us"].sum())
    return 100.0 * float(busy.sum()) / total if total > 0 else float("nan")


__all__ = ["cpu_op_rows", "cpu_step_share", "cpu_thunks"]
