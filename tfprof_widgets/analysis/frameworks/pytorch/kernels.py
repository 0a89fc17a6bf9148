"""torch-tb-profiler's kernel view: each kernel by the operator that launched it and its launch
configuration (``run.torch_kernels``).

Rules (torch-tb-profiler 0.4.3's ``aggregate_kernels``): the kernels counted are those the
operator trees reach (:mod:`.ops`): launched by a runtime call that belongs to a node, or
with External id 0 or no runtime call at all, which it hangs from the tree's root and names
'CallTreeRoot'. A row per (kernel, operator, grid, block, registers per thread, shared
memory): calls, total, mean, max and min duration, and the duration-weighted means of
Kineto's ``blocks per SM`` and ``est. achieved occupancy %``.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .... import schema, stat_columns
from ...event_index import event_plane_rows, times_ps
from ...inputs import per_run
from .names import KERNEL
from .ops import launches, operator_tree

ROOT = "CallTreeRoot"
_LAUNCH = ("grid", "block", "registers_per_thread", "shared_memory_bytes")


def _kernel_ops(run) -> tuple[np.ndarray, np.ndarray]:
    """Kernel rows the trees reach, and the name of the node each hangs from."""
    ev = run.events
    gpu, call = launches(run, (KERNEL,))
    tree = operator_tree(run)
    names = ev["name"].to_numpy(dtype=object)
    owner = pd.Series(names[tree.nodes[tree.call_node]], index=tree.calls, dtype=object)
    owner = pd.concat([owner, pd.Series(ROOT, index=tree.root_calls, dtype=object)])
    owner = owner[~owner.index.duplicated(keep="first")]
    op = owner.reindex(call).to_numpy(dtype=object, copy=True)
    op[call < 0] = ROOT  # no runtime call found: tb_plugin's root
    keep = pd.notna(op)
    return gpu[keep], op[keep]


@per_run
def torch_kernels(run) -> pd.DataFrame:
    """One row per host, kernel, operator and launch configuration (schema.TORCH_KERNELS),
    the most total time first."""
    rows, op = _kernel_ops(run)
    if not len(rows):
        return schema.empty(schema.TORCH_KERNELS)
    ev = run.events
    n = len(ev)
    start, end = times_ps(run)
    dur = (end[rows] - start[rows]) / 1e6
    stats = run.stat_store

    def text(name):
        v, has = stat_columns.strings(stats, name, n)
        return np.where(has[rows], v[rows], "").astype(str)

    def number(name):
        v, has = stat_columns.floats(stats, name, n)
        return np.where(has[rows], v[rows], 0.0)

    df = pd.DataFrame(
        {
            "host": ev["host"].to_numpy(dtype=object)[rows].astype(str),
            "name": ev["name"].to_numpy(dtype=object)[rows].astype(str),
            "operator": op.astype(str),
            "grid": text("grid"),
            "block": text("block"),
            "registers_per_thread": number("registers per thread").astype(np.int64),
            "shared_memory_bytes": number("shared memory").astype(np.int64),
            "dur": dur,
            "bw": number("blocks per SM") * dur,
            "ow": number("est. achieved occupancy %") * dur,
        }
    )
    g = df.groupby(["host", "name", "operator", *_LAUNCH], sort=False)
    out = g.agg(
        calls=("dur", "size"),
        total_us=("dur", "sum"),
        mean_us=("dur", "mean"),
        max_us=("dur", "max"),
        min_us=("dur", "min"),
        bw=("bw", "sum"),
        ow=("ow", "sum"),
    ).reset_index()
    total = out["total_us"].where(out["total_us"] > 0)
    out["mean_blocks_per_sm"] = (out["bw"] / total).fillna(0.0)
    out["mean_est_achieved_occupancy_percent"] = (out["ow"] / total).fillna(0.0)
    out = out.sort_values(["host", "total_us"], ascending=[True, False], kind="stable")
    out["host"] = pd.Categorical(out["host"])
    return schema.conform(out.reset_index(drop=True), schema.TORCH_KERNELS)


@per_run
def torch_gpu_metrics(run) -> pd.DataFrame:
    """torch-tb-profiler's GPU metrics per host and GPU over its steps (schema.TORCH_GPU_METRICS).

    The window runs from the first step's start to the last complete step's end
    (``run.torch_steps``). GPU utilization: the time some kernel runs, over the window. Est.
    SM efficiency: at each instant, the running kernels' ``blocks per SM`` summed and capped
    at 1, averaged over the window. Est. achieved occupancy: the kernels' ``est. achieved
    occupancy %`` weighted by their time in the window.
    """
    steps = run.torch_steps
    ev = run.events
    kernels, _ = launches(run, (KERNEL,))
    if not len(steps) or not len(kernels):
        return schema.empty(schema.TORCH_GPU_METRICS)
    n = len(ev)
    start, end = times_ps(run)
    blocks, has_blocks = stat_columns.floats(run.stat_store, "blocks per SM", n)
    occ, has_occ = stat_columns.floats(run.stat_store, "est. achieved occupancy %", n)
    plane = run.planes["plane"].to_numpy(dtype=object)[event_plane_rows(run)]
    host = ev["host"].to_numpy(dtype=object)
    out = []
    for (h, p), rows in pd.Series(kernels).groupby([host[kernels], plane[kernels]]):
        mine = steps[(steps["host"].astype(str) == str(h))]
        kept = mine[mine["complete"]]
        if not len(kept):
            continue
        w0 = int(round(mine["start_us"].iloc[0] * 1e6))
        w1 = int(round((kept["start_us"].iloc[-1] + kept["step_time_us"].iloc[-1]) * 1e6))
        r = rows.to_numpy()
        s, e = np.clip(start[r], w0, w1), np.clip(end[r], w0, w1)
        busy = _union_length(s, e)
        b = has_blocks[r] & (blocks[r] > 0)
        sm = _capped_sum(s[b], e[b], blocks[r][b])
        o = has_occ[r] & (occ[r] >= 0)
        inside = (e - s)[o]
        occupancy = float((occ[r][o] * inside).sum() / inside.sum()) if inside.sum() else np.nan
        span = max(w1 - w0, 1)
        out.append((str(h), str(p), 100 * busy / span, 100 * sm / span, occupancy))
    df = pd.DataFrame(out, columns=list(schema.TORCH_GPU_METRICS))
    df["host"] = pd.Categorical(df["host"])
    return schema.conform(df, schema.TORCH_GPU_METRICS)


def _union_length(s: np.ndarray, e: np.ndarray) -> int:
    order = np.argsort(s, kind="stable")
    s, e = s[order], e[order]
    reach = np.maximum.accumulate(e)
    first = np.flatnonzero(np.r_[True, s[1:] > reach[:-1]])
    return int((np.maximum.reduceat(e, first) - s[first]).sum()) if len(s) else 0


def _capped_sum(s: np.ndarray, e: np.ndarray, value: np.ndarray) -> float:
    """The integral over time of min(sum of the active intervals' values, 1)."""
    if not len(s):
        return 0.0
    t = np.concatenate([s, e])
    d = np.concatenate([value, -value])
    order = np.lexsort((np.r_[np.zeros(len(s)), np.ones(len(e))], t))
    t, level = t[order], np.cumsum(d[order])
    return float((np.minimum(np.maximum(level[:-1], 0), 1.0) * np.diff(t)).sum())
