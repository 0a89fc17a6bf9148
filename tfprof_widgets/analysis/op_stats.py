"""Op statistics: TensorBoard's op table ("TensorFlow Stats") as a DataFrame (``run.ops``).

The rules are XProf 2.24's (``xplane_to_op_metrics_db.cc``), so that every row and its IDLE
equal TensorBoard's; what an op is comes from the run's frameworks (:mod:`.frameworks`):

* **Host** (each ``/host:CPU`` thread, XProf's derived lines skipped): an *activity* is an
  event whose name the frameworks parse as an op (:mod:`.event_ops`), and also every event
  that carries a non-empty ``tf_op`` stat (XProf's op stat: an allocation inside an op counts
  as one more occurrence of that op). Activities nest on their thread by XProf's stack
  (:func:`.nesting.stack_nesting`); self time is an activity's duration minus that of the
  activities directly inside it. A thread's total is the larger of its activities' self
  time and the span from its first activity to its last; its IDLE is that total minus the
  self time. Rows are per op name.
* **GPU** (each ``/device:GPU:N``): a kernel or copy that a framework attributes to an op
  (:meth:`~.frameworks.Framework.device_ops`) is a device op of it (self = duration); rows
  per op, whose occurrences are the most any one of its kernels ran. A GPU's total is the
  span of all events on its own lines (from the first start to the last end); IDLE is the
  total minus the ops' time, summed over GPUs, and is always reported for a capture with
  GPUs.
* Devices whose ops a framework builds by rules of its own (TPU cores:
  :meth:`~.frameworks.Framework.device_op_table`) add their rows and IDLE.

Beyond XProf (``beyond_xprof`` is True): an event a framework attributes where XProf would
not (see each framework's module); the device IDLE shrinks by that time, so IDLE + those
ops = XProf's IDLE.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .. import schema, stat_columns
from ..frameworks import UNKNOWN_OP, framework_of
from .event_index import (
    event_line_ids,
    event_plane_rows,
    is_derived_line,
    plane_kinds,
    timed,
    times_ps,
)
from .event_ops import event_names, name_memo
from .memo import per_run, tool_data_source
from .nesting import children_sum, stack_nesting, to_ps

_ROW_COLUMNS = [
    "host",
    "host_or_device",
    "type",
    "operation",
    "occurrences",
    "total_ps",
    "self_ps",
    "is_eager",
    "beyond_xprof",
]


def _objects(values: np.ndarray) -> pd.Series:
    """Strings kept as an object column (pandas would convert them to its string dtype, and
    the analyses back)."""
    return pd.Series(values, dtype=object, copy=False)


def _groups(*codes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Rows grouped by several integer code columns (each >= 0): each row's group, and the
    first row of each group (groups numbered in order of their first row)."""
    key = np.zeros(len(codes[0]), np.int64)
    for c in codes:
        c = np.asarray(c, np.int64)
        key = key * (int(c.max()) + 1 if len(c) else 1) + c
    group, _ = pd.factorize(key)
    first = np.full(int(group.max()) + 1 if len(group) else 0, len(group), np.int64)
    np.minimum.at(first, group, np.arange(len(group)))
    return group, first


def _sum(group: np.ndarray, values: np.ndarray, n: int) -> np.ndarray:
    """Exact per-group sums of int64 values."""
    out = np.zeros(n, np.int64)
    np.add.at(out, group, values)
    return out


@per_run
def host_activities(run) -> pd.DataFrame:
    """XProf's host activities with their nesting: one row per TF-op event and per event
    with a ``tf_op`` stat on a host thread (see the module docstring).

    Columns: row (in run.events), host, line_row, operation, type (categoricals), is_eager,
    from_stat, begin_ps, end_ps, recorded (False where XProf's stack lost it), self_ps.
    """
    ev = run.events
    host_line = (plane_kinds(run) == "CPU")[run.line_plane_rows] & ~is_derived_line(
        run.lines["line_id"].to_numpy()
    )
    on_host = host_line[run.event_line_rows] & timed(run)
    names = event_names(run)
    codes = ev["name"].cat.codes.to_numpy()
    is_op = on_host & (names["category"].to_numpy() != UNKNOWN_OP)[codes]
    tf_op = ev["tf_op"].array
    tf_codes = np.asarray(tf_op.codes, np.int64)
    tf_real = np.append(tf_op.categories.to_numpy(dtype=object) != "", False)
    stat_op = on_host & tf_real[tf_codes]
    a_rows, b_rows = np.flatnonzero(is_op), np.flatnonzero(stat_op)
    # Recorded order: each event's own op first, then its tf_op stat's.
    rows = np.concatenate([a_rows, b_rows])
    seq = np.argsort(np.concatenate([2 * a_rows, 2 * b_rows + 1]), kind="stable")
    rows = rows[seq]
    from_stat = seq >= len(a_rows)
    # Op names and types of both sources (the names and tf_op values in use, each parsed
    # once) as codes into one list each.
    a_used, a_item = np.unique(codes[a_rows], return_inverse=True)
    b_used, b_item = np.unique(tf_codes[b_rows], return_inverse=True)
    tf_parsed = framework_of(run).parse_op_names(
        pd.Index(tf_op.categories[b_used], dtype=object), name_memo(run)
    )
    op_code, ops = pd.factorize(
        np.concatenate([names["op_name"].to_numpy()[a_used], tf_parsed["op_name"].to_numpy()])
    )
    type_code, types = pd.factorize(
        np.concatenate([names["op_type"].to_numpy()[a_used], tf_parsed["op_type"].to_numpy()])
    )
    item = np.concatenate([a_item, len(a_used) + b_item])[seq]
    op, typ = op_code[item], type_code[item]
    eager = np.concatenate([_is_eager(run, a_rows), np.zeros(len(b_rows), bool)])[seq]
    start_ps, end_ps = times_ps(run)
    begin, end = start_ps[rows], end_ps[rows]
    line_row = run.event_line_rows[rows]
    recorded, parent = stack_nesting(line_row, begin, end)
    dur = (end - begin).astype(np.float64)
    self_ps = dur - children_sum(parent, np.where(recorded, dur, 0.0))
    host = ev["host"].array
    return pd.DataFrame(
        {
            "row": rows,
            "host": pd.Categorical.from_codes(np.asarray(host.codes)[rows], dtype=host.dtype),
            "line_row": line_row,
            "operation": pd.Categorical.from_codes(op, categories=pd.Index(ops, dtype=object)),
            "type": pd.Categorical.from_codes(typ, categories=pd.Index(types, dtype=object)),
            "is_eager": eager,
            "from_stat": from_stat,
            "begin_ps": begin,
            "end_ps": end,
            "recorded": recorded,
            "self_ps": self_ps,
        }
    )


def _host_rows(run) -> tuple[dict, pd.Series]:
    """Host op rows (one per host and op name; columns _ROW_COLUMNS) and each host's IDLE,
    ps."""
    act = host_activities(run)
    if not len(act):
        return {}, pd.Series(dtype=float)
    host_codes = np.asarray(act["host"].array.codes, np.int64)
    host_names = np.asarray(act["host"].cat.categories, object)
    line_row = act["line_row"].to_numpy()
    begin, end = act["begin_ps"].to_numpy(), act["end_ps"].to_numpy()
    recorded, self_ps = act["recorded"].to_numpy(), act["self_ps"].to_numpy()
    # A thread's total: the larger of its ops' self time and the span of its activities.
    line, first_of_line = _groups(line_row)
    n_lines = len(first_of_line)
    first = np.full(n_lines, np.iinfo(np.int64).max)
    np.minimum.at(first, line, begin)
    last = np.full(n_lines, np.iinfo(np.int64).min)
    np.maximum.at(last, line, end)
    busy = np.bincount(line, weights=np.where(recorded, self_ps, 0.0), minlength=n_lines)
    idle_line = np.maximum(busy, last - first) - busy
    line_host = host_codes[first_of_line]
    hosts_seen = pd.unique(line_host)
    idle = pd.Series(
        np.bincount(line_host, weights=idle_line, minlength=len(host_names))[hosts_seen],
        index=pd.Index(host_names[hosts_seen], name="host"),
    )
    # Rows per (host, op) over the activities XProf's stack recorded.
    rec = np.flatnonzero(recorded)
    op = np.asarray(act["operation"].array.codes, np.int64)[rec]
    typ = np.asarray(act["type"].array.codes, np.int64)[rec]
    group, first_row = _groups(host_codes[rec], op)
    n_rows = len(first_row)
    dur = (end - begin)[rec]
    # An op's type is the first non-empty one XProf meets: ends in time order, line by line.
    types = np.asarray(act["type"].cat.categories, object)
    order = np.lexsort((end[rec], line_row[rec]))
    typed = order[types[typ[order]] != ""]
    type_of = np.full(n_rows, "", object)
    g_typed, at = np.unique(group[typed], return_index=True)
    type_of[g_typed] = types[typ[typed[at]]]
    rows = {
        "host": host_names[host_codes[rec][first_row]],
        "host_or_device": np.full(n_rows, "Host", object),
        "type": type_of,
        "operation": np.asarray(act["operation"].cat.categories, object)[op[first_row]],
        "occurrences": np.bincount(group, minlength=n_rows),
        "total_ps": _sum(group, dur, n_rows),
        "self_ps": np.bincount(group, weights=self_ps[rec], minlength=n_rows),
        "is_eager": np.bincount(group, weights=act["is_eager"].to_numpy()[rec], minlength=n_rows)
        > 0,
        "beyond_xprof": np.zeros(n_rows, bool),
    }
    return rows, idle


def _is_eager(run, rows: np.ndarray) -> np.ndarray:
    """Whether each of these events ran eagerly (its 'is_eager' stat)."""
    v, has = stat_columns.numbers(run.stat_store, "is_eager", len(run.events))
    return (has & (v != 0))[rows]


_KERNEL_OPS = {
    "row": np.int64,
    "host": object,
    "plane_row": np.int64,
    "operation": object,
    "type": object,
    "kernel": object,
    "dur_ps": np.int64,
    "is_eager": bool,
    "beyond_xprof": bool,
}


@per_run
def gpu_kernel_ops(run) -> pd.DataFrame:
    """Events on GPU streams attributed to a TF op: one row each.

    Columns: row, host, plane_row, operation, type, kernel (the event's name), dur_ps,
    is_eager, beyond_xprof (attributed by its ``level 0`` annotation or ``kernel_details``
    rather than XProf's ``tf_op`` stat, or a JAX kernel XProf attributes by its HLO op).
    """
    ev = run.events
    n = len(ev)
    gpu_planes = plane_kinds(run) == "GPU"
    plane_row = event_plane_rows(run)
    gpu = gpu_planes[plane_row] if gpu_planes.any() else np.zeros(n, bool)
    if gpu.any():
        gpu &= ~is_derived_line(event_line_ids(run)) & timed(run)
    candidates = np.flatnonzero(gpu)
    if not len(candidates):
        return pd.DataFrame({c: np.zeros(0, t) for c, t in _KERNEL_OPS.items()})
    found = framework_of(run).device_ops(run, candidates)
    rows = found.rows
    host, kernel = ev["host"].array, ev["name"].array
    return pd.DataFrame(
        {
            "row": rows,
            "host": _objects(np.asarray(host.categories, object)[np.asarray(host.codes)[rows]]),
            "plane_row": plane_row[rows],
            "operation": _objects(found.op_name),
            "type": _objects(found.op_type),
            "kernel": _objects(
                np.asarray(kernel.categories, object)[np.asarray(kernel.codes)[rows]]
            ),
            "dur_ps": to_ps(ev["dur_us"].to_numpy()[rows]),
            "is_eager": _is_eager(run, rows),
            "beyond_xprof": found.beyond_xprof,
        }
    )


def _gpu_rows(run) -> tuple[dict, pd.DataFrame]:
    """GPU op rows per TF op (columns _ROW_COLUMNS), and per host the GPU IDLE (ours and
    XProf's), ps."""
    k = gpu_kernel_ops(run)
    gpu_planes = np.flatnonzero(plane_kinds(run) == "GPU")
    plane_host, span = _plane_spans(run, gpu_planes)
    plane = k["plane_row"].to_numpy()
    dur = k["dur_ps"].to_numpy()
    beyond = k["beyond_xprof"].to_numpy()
    pos = np.searchsorted(gpu_planes, plane)
    n_gpu = len(gpu_planes)
    busy = np.bincount(pos, weights=dur, minlength=n_gpu)
    busy_xprof = np.bincount(pos, weights=np.where(beyond, 0, dur), minlength=n_gpu)
    host_c, hosts = pd.factorize(plane_host)
    idle = pd.DataFrame(
        {
            "idle": np.bincount(host_c, np.maximum(busy, span) - busy, len(hosts)),
            "idle_xprof": np.bincount(
                host_c, np.maximum(busy_xprof, span) - busy_xprof, len(hosts)
            ),
        },
        index=pd.Index(hosts, name="host"),
    )
    if not len(k):
        return {}, idle
    # A device op is a TF op's kernel (by name, unless the frameworks count by units of
    # their own); a TF op ran as often as its busiest kernel.
    host_c, hosts = pd.factorize(k["host"].to_numpy())
    op_c, ops = pd.factorize(k["operation"].to_numpy())
    type_c, types = pd.factorize(k["type"].to_numpy())
    units = framework_of(run).device_op_units(run, k["row"].to_numpy())
    if units is None:  # XProf's default: each kernel name counted, every launch once
        unit_c = np.asarray(run.events["name"].array.codes)[k["row"].to_numpy()]
        starts = np.ones(len(k), bool)
    else:
        unit_c, starts = units
    per_kernel, _ = _groups(host_c, op_c, type_c, unit_c)
    n_k = int(per_kernel.max()) + 1
    occ = np.bincount(per_kernel, weights=starts, minlength=n_k).astype(np.int64)
    row, first = _groups(host_c, op_c, type_c)
    n_rows = len(first)
    kernel_row = np.zeros(n_k, np.int64)
    kernel_row[per_kernel] = row
    most = np.zeros(n_rows, np.int64)
    np.maximum.at(most, kernel_row, occ)
    total = _sum(row, dur, n_rows)
    rows = {
        "host": np.asarray(hosts, object)[host_c[first]],
        "host_or_device": np.full(n_rows, "Device", object),
        "type": np.asarray(types, object)[type_c[first]],
        "operation": np.asarray(ops, object)[op_c[first]],
        "occurrences": most,
        "total_ps": total,
        "self_ps": total,
        "is_eager": np.bincount(row, weights=k["is_eager"].to_numpy(), minlength=n_rows) > 0,
        "beyond_xprof": np.bincount(row, weights=beyond, minlength=n_rows) > 0,
    }
    return rows, idle


def _plane_spans(run, plane_rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For these planes (GPUs): their host and the span of all events on their own lines,
    from the first event's offset to the last end (XProf measures it on the event offsets
    within their lines), ps; 0 for a plane without events."""
    hosts = run.planes["host"].astype(str).to_numpy()[plane_rows]
    span = np.zeros(len(plane_rows))
    prow = event_plane_rows(run)
    lookup = np.full(len(run.planes), -1, np.int64)
    lookup[plane_rows] = np.arange(len(plane_rows))
    pos = lookup[prow]
    keep = np.flatnonzero((pos >= 0) & ~is_derived_line(event_line_ids(run)) & timed(run))
    if not len(keep):
        return hosts, span
    line_base = run.lines["timestamp_ns"].to_numpy()[run.event_line_rows[keep]] * 1000
    off = times_ps(run)[0][keep] - line_base
    end = off + to_ps(run.events["dur_us"].to_numpy()[keep])
    first = np.full(len(plane_rows), np.iinfo(np.int64).max)
    last = np.full(len(plane_rows), np.iinfo(np.int64).min)
    np.minimum.at(first, pos[keep], off)
    np.maximum.at(last, pos[keep], end)
    has = first <= last
    span[has] = (last - first)[has]
    return hosts, span


def op_stats(run, include_idle: bool = True) -> pd.DataFrame:
    """One row per (host, host/device, op): columns of schema.OP_STATS (see the module
    docstring for XProf's rules and what we add).

    A run without a trace gives TensorBoard's own table (its TF stats tool output)."""
    td = tool_data_source(run)
    if td is not None:
        return schema.conform(
            td.tf_stats if include_idle else td.tf_stats_without_idle, schema.OP_STATS
        )
    host_rows, host_idle = _host_rows(run)
    gpu_rows, gpu_idle = _gpu_rows(run)
    tpu_rows, tpu_idle = framework_of(run).device_op_table(run)
    parts = [host_rows, gpu_rows, {c: tpu_rows[c].to_numpy() for c in tpu_rows}]
    if include_idle:
        parts += [
            _idle_rows("Host", host_idle, host_idle),
            _idle_rows("Device", gpu_idle["idle"], gpu_idle["idle_xprof"]),
            _idle_rows("Device", tpu_idle, tpu_idle),
        ]
    parts = [p for p in parts if len(p) and len(p["host"])]
    if not parts:
        return schema.empty(schema.OP_STATS)
    col = {c: np.concatenate([p[c] for p in parts]) for c in _ROW_COLUMNS}
    # Each text column as a categorical of its sorted distinct values: the codes are ranks.
    host, side, typ, op = (
        schema.text_categorical(col[c].astype(object))
        for c in ("host", "host_or_device", "type", "operation")
    )
    total_us = col["total_ps"].astype(np.float64) / 1e6
    self_us = col["self_ps"].astype(np.float64) / 1e6
    occ = col["occurrences"].astype(np.int64)
    with np.errstate(divide="ignore", invalid="ignore"):
        avg_us = np.where(occ > 0, total_us / occ, 0.0)
        avg_self_us = np.where(occ > 0, self_us / occ, 0.0)
    # XProf's order: by host, host side first, self time descending, ties by name.
    is_device = col["host_or_device"] == "Device"
    host_rank = np.asarray(host.codes, np.int64)
    order = np.lexsort((op.codes, -self_us, is_device, host_rank))
    group = (host_rank * 2 + is_device)[order]
    starts = np.flatnonzero(np.r_[True, group[1:] != group[:-1]])
    sizes = np.diff(np.r_[starts, len(order)])
    s_us = self_us[order]
    side_total = np.repeat(np.add.reduceat(s_us, starts), sizes)
    with np.errstate(divide="ignore", invalid="ignore"):
        pct = 100 * s_us / side_total
    cum = np.concatenate(
        [np.cumsum(pct[a : a + n]) for a, n in zip(starts.tolist(), sizes.tolist())]
    )

    def reordered(c: pd.Categorical) -> pd.Categorical:
        # Codes of ``c`` itself, reordered: in range, nothing to validate.
        return pd.Categorical.from_codes(np.asarray(c.codes)[order], dtype=c.dtype, validate=False)

    df = pd.DataFrame(
        {
            "host": reordered(host),
            "host_or_device": reordered(side),
            "type": reordered(typ),
            "operation": reordered(op),
            "occurrences": occ[order],
            "total_time_us": total_us[order],
            "avg_time_us": avg_us[order],
            "total_self_time_us": s_us,
            "avg_self_time_us": avg_self_us[order],
            "self_time_percent": pct,
            "cumulative_self_time_percent": cum,
            "is_eager": col["is_eager"].astype(bool)[order],
            "beyond_xprof": col["beyond_xprof"].astype(bool)[order],
        }
    )
    return schema.conform(df, schema.OP_STATS)


def _idle_rows(side: str, idle: pd.Series, idle_xprof: pd.Series) -> dict:
    """IDLE per host (columns _ROW_COLUMNS); marked beyond XProf where our own device ops
    made it differ."""
    n = len(idle)
    return {
        "host": np.asarray(idle.index.astype(str), object),
        "host_or_device": np.full(n, side, object),
        "type": np.full(n, "IDLE", object),
        "operation": np.full(n, "IDLE", object),
        "occurrences": np.zeros(n, np.int64),
        "total_ps": idle.to_numpy(np.float64),
        "self_ps": idle.to_numpy(np.float64),
        "is_eager": np.zeros(n, bool),
        "beyond_xprof": (idle != idle_xprof.reindex(idle.index)).to_numpy(),
    }


def idle_figures(run) -> pd.DataFrame:
    """Per host and side: XProf's total time (Σ over threads or devices of max(span, op
    time)), op time and idle share, as the overview's host/device idle percent uses them.

    Columns: host, host_or_device, total_us, op_us, idle_percent.
    """
    ops = run.ops
    g = ops.groupby(["host", "host_or_device"], observed=True)
    total = g["total_self_time_us"].sum()
    idle = (
        ops[ops["type"] == "IDLE"]
        .groupby(["host", "host_or_device"], observed=True)["total_self_time_us"]
        .sum()
    )
    out = pd.DataFrame({"total_us": total, "idle_us": idle.reindex(total.index).fillna(0.0)})
    out["op_us"] = out["total_us"] - out["idle_us"]
    out["idle_percent"] = np.where(
        out["total_us"] > 0, 100 * out["idle_us"] / out["total_us"].where(out["total_us"] > 0), 0.0
    )
    return out.reset_index()


__all__ = ["gpu_kernel_ops", "host_activities", "idle_figures", "op_stats"]
