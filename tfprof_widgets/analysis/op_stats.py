"""TF op statistics: TensorBoard's "TensorFlow Stats" as a DataFrame (``run.ops``).

Host ops are events whose name is an op (see :mod:`.tf_ops`) on host threads; their self
time excludes directly nested ops on the same thread. Device ops are GPU/TPU kernels
carrying a ``tf_op`` stat, attributed to that TF op (kernels do not nest, so self = total).
An ``IDLE`` row per host and side holds the time each thread (or device) spent between its
first and last op without running one, as XProf reports it.

Where we differ from XProf on purpose: XProf also counts allocator events that carry a
``tf_op`` stat (``MemoryAllocation`` inside an op) as extra occurrences of that op, which
doubles their count and adds the allocator's time to the op's total; each op event counts
once here.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .. import schema
from .event_index import event_line_ids, on_device
from .nesting import children_sum, direct_parents, to_ps
from .tf_ops import is_derived_line, name_table, parse_tf_op
from .tool_data import tool_data_source


def host_op_events(run) -> pd.DataFrame:
    """Host op events with their parsed name/type, self time and line row (one row each)."""
    ev = run.events
    table = name_table(ev["name"])
    codes = ev["name"].cat.codes.to_numpy()
    category = table["category"].to_numpy()[codes]
    line_id = event_line_ids(run)
    keep = (
        (category != "unknown")
        & ~on_device(run)
        & (ev["occurrences"].to_numpy() == 1)
        & ~is_derived_line(line_id)
    )
    rows = np.flatnonzero(keep)
    sub = ev.iloc[rows]
    start, end = to_ps(sub["start_us"].to_numpy()), to_ps(sub["end_us"].to_numpy())
    dur = end - start
    self_ps = dur.astype(np.float64)
    line_rows = run.event_line_rows[rows]
    cuts = np.flatnonzero(np.diff(line_rows)) + 1
    for a, b in zip(np.r_[0, cuts], np.r_[cuts, len(rows)]):
        parent = direct_parents(start[a:b], end[a:b])
        self_ps[a:b] -= children_sum(parent, dur[a:b].astype(np.float64))
    eager = _is_eager(run, rows)
    return pd.DataFrame(
        {
            "row": rows,
            "host": sub["host"].to_numpy(),
            "line_row": line_rows,
            "category": category[rows],
            "operation": table["op_name"].to_numpy()[codes[rows]],
            "type": table["op_type"].to_numpy()[codes[rows]],
            "start_ps": start,
            "end_ps": end,
            "dur_ps": dur,
            "self_ps": self_ps,
            "is_eager": eager,
        }
    )


def device_op_events(run) -> pd.DataFrame:
    """Device kernels with a tf_op stat, attributed to that op (one row per kernel)."""
    ev = run.events
    dev = on_device(run) & ~is_derived_line(event_line_ids(run)) & ev["tf_op"].notna().to_numpy()
    rows = np.flatnonzero(dev)
    sub = ev.iloc[rows]
    ops = sub["tf_op"].cat.remove_unused_categories()
    parsed = pd.DataFrame(
        [parse_tf_op(str(c)) for c in ops.cat.categories],
        columns=["category", "op_name", "op_type"],
    )
    codes = ops.cat.codes.to_numpy()
    start, end = to_ps(sub["start_us"].to_numpy()), to_ps(sub["end_us"].to_numpy())
    eager = _is_eager(run, rows)
    return pd.DataFrame(
        {
            "row": rows,
            "host": sub["host"].to_numpy(),
            "plane": sub["plane"].to_numpy(),
            "operation": parsed["op_name"].to_numpy()[codes],
            "type": parsed["op_type"].to_numpy()[codes],
            "start_ps": start,
            "end_ps": end,
            "dur_ps": end - start,
            "self_ps": (end - start).astype(np.float64),
            "is_eager": eager,
        }
    )


def _is_eager(run, rows: np.ndarray) -> np.ndarray:
    """Whether each of these events ran eagerly (its 'is_eager' stat)."""
    if "is_eager" not in run.stat_names:
        return np.zeros(len(rows), bool)
    return run.stat("is_eager").to_numpy(dtype=float, na_value=0)[rows].astype(bool)


def _device_spans(run) -> pd.DataFrame:
    """First start and last end of all events on each device's own (non-derived) lines:
    kernels and memcpys alike, as XProf measures a device's total time."""
    ev = run.events
    keep = (
        on_device(run) & ~is_derived_line(event_line_ids(run)) & (ev["occurrences"].to_numpy() == 1)
    )
    sub = ev[keep]
    return pd.DataFrame(
        {
            "host": sub["host"].to_numpy(),
            "plane": sub["plane"].to_numpy(),
            "start_ps": to_ps(sub["start_us"].to_numpy()),
            "end_ps": to_ps(sub["end_us"].to_numpy()),
        }
    )


def _idle_rows(side: str, ops: pd.DataFrame, spans: pd.DataFrame, key: str) -> pd.DataFrame:
    """IDLE per host: each thread's (or device's) span minus the self time of its ops. A
    host thread's span runs from its first op to its last; a device's covers all its
    events."""
    if not len(ops):
        return pd.DataFrame()
    span = spans.groupby(["host", key], observed=True, sort=False).agg(
        first=("start_ps", "min"), last=("end_ps", "max")
    )
    busy = ops.groupby(["host", key], observed=True, sort=False)["self_ps"].sum()
    per = span.join(busy.rename("busy"), how="inner")
    per["idle"] = (per["last"] - per["first"]) - per["busy"]
    idle = per.groupby(level="host", observed=True)["idle"].sum()
    return pd.DataFrame(
        {
            "host": idle.index.astype(object),
            "host_or_device": side,
            "type": "IDLE",
            "operation": "IDLE",
            "occurrences": 0,
            "total_ps": idle.to_numpy(),
            "self_ps": idle.to_numpy(),
            "is_eager": False,
        }
    )


def op_stats(run, include_idle: bool = True) -> pd.DataFrame:
    """One row per (host, host/device, op type, op name, eager): columns of schema.OP_STATS.

    A run without a trace gives TensorBoard's own table (its TF stats tool output)."""
    td = tool_data_source(run)
    if td is not None:
        return schema.conform(
            td.tf_stats if include_idle else td.tf_stats_without_idle, schema.OP_STATS
        )
    host = host_op_events(run)
    device = device_op_events(run)
    parts = []
    for side, frame in (("Host", host), ("Device", device)):
        if not len(frame):
            continue
        agg = (
            frame.groupby(["host", "type", "operation", "is_eager"], observed=True, sort=False)
            .agg(
                occurrences=("dur_ps", "size"),
                total_ps=("dur_ps", "sum"),
                self_ps=("self_ps", "sum"),
            )
            .reset_index()
        )
        agg.insert(1, "host_or_device", side)
        parts.append(agg)
        if include_idle:
            if side == "Host":
                parts.append(_idle_rows(side, frame, frame, "line_row"))
            else:
                parts.append(_idle_rows(side, frame, _device_spans(run), "plane"))
    if not parts:
        return schema.empty(schema.OP_STATS)
    df = pd.concat([p for p in parts if len(p)], ignore_index=True)
    df["total_time_us"] = df["total_ps"] / 1e6
    df["total_self_time_us"] = df["self_ps"] / 1e6
    occ = df["occurrences"].where(df["occurrences"] > 0)
    df["avg_time_us"] = (df["total_time_us"] / occ).fillna(0.0)
    df["avg_self_time_us"] = (df["total_self_time_us"] / occ).fillna(0.0)
    df = df.sort_values(
        ["host", "host_or_device", "total_self_time_us"],
        ascending=[True, False, False],
        kind="stable",
        ignore_index=True,
    )
    side_total = df.groupby(["host", "host_or_device"], sort=False)["total_self_time_us"].transform(
        "sum"
    )
    df["self_time_percent"] = 100 * df["total_self_time_us"] / side_total
    df["cumulative_self_time_percent"] = df.groupby(["host", "host_or_device"], sort=False)[
        "self_time_percent"
    ].cumsum()
    df["occurrences"] = df["occurrences"].astype(np.int64)
    out = df[list(schema.OP_STATS)]
    for col in ("host", "host_or_device", "type", "operation"):
        out[col] = out[col].astype("category")
    return out


__all__ = ["device_op_events", "host_op_events", "op_stats"]
