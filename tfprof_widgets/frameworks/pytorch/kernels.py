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

import warnings

import numpy as np
import pandas as pd

from ... import schema, stat_columns
from ...analysis.event_index import event_plane_rows, times_ps
from ...analysis.memo import per_run
from ...analysis.nesting import group_numbers
from .names import KERNEL
from .ops import launches, operator_tree

ROOT = "CallTreeRoot"
# Kineto's launch arguments past these cannot be real (a GPU has at most 255 registers a
# thread and 228 KiB of shared memory a block; occupancy is a share): such a value is read
# as not recorded, with a warning (2^62 registers wrapped to -2^63, an occupancy of 1e305 %
# made the GPU's mean one).
ARG_RANGES = {
    "registers per thread": (0.0, 65536.0),
    "shared memory": (0.0, float(2**32)),
    "blocks per SM": (0.0, 1e9),
    "est. achieved occupancy %": (0.0, 100.0),
}


def launch_arg(run, name: str) -> tuple[np.ndarray, np.ndarray]:
    """A kernel launch argument of every event as float64, and where it is recorded
    (values outside :data:`ARG_RANGES` are not, with a warning)."""
    v, has = stat_columns.floats(run.stat_store, name, len(run.events))
    lo, hi = ARG_RANGES[name]
    with np.errstate(invalid="ignore"):
        bad = has & ~((v >= lo) & (v <= hi))
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        warnings.warn(
            f"{int(bad.sum())} kernel(s) with '{name}' outside {lo:g} to {hi:g} (the first: "
            f"{run.events['name'].iat[i]!s:.80} with {v[i]!r}): read as not recorded",
            RuntimeWarning,
            stacklevel=3,
        )
    return np.where(bad, 0.0, v), has & ~bad


_LAUNCH = ("grid", "block", "registers_per_thread", "shared_memory_bytes")


def _kernel_ops(run) -> tuple[np.ndarray, np.ndarray]:
    """Kernel rows the trees reach, and the name of the node each hangs from."""
    ev = run.events
    gpu, call = launches(run, (KERNEL,))
    tree = operator_tree(run)
    name = ev["name"].array
    names = np.asarray(name.categories, object)[np.asarray(name.codes)[tree.nodes[tree.call_node]]]
    owner = pd.Series(names, index=tree.calls, dtype=object)
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
        v, has = launch_arg(run, name)
        return np.where(has[rows], v[rows], 0.0)

    df = pd.DataFrame(
        {
            "host": _texts(ev["host"], rows),
            "name": _texts(ev["name"], rows),
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
    keys = ["host", "name", "operator", *_LAUNCH]
    group = group_numbers([df[c].to_numpy() for c in keys])
    first = np.unique(group, return_index=True)[1]
    g = df[["dur", "bw", "ow"]].groupby(group, sort=False)
    dur = g["dur"]
    out = pd.DataFrame(
        {
            **{c: df[c].to_numpy()[first] for c in keys},
            "calls": dur.size().to_numpy(),
            "total_us": dur.sum().to_numpy(),
            "mean_us": dur.mean().to_numpy(),
            "max_us": dur.max().to_numpy(),
            "min_us": dur.min().to_numpy(),
            "bw": g["bw"].sum().to_numpy(),
            "ow": g["ow"].sum().to_numpy(),
        }
    )
    total = out["total_us"].where(out["total_us"] > 0)
    out["mean_blocks_per_sm"] = (out["bw"] / total).fillna(0.0)
    out["mean_est_achieved_occupancy_percent"] = (out["ow"] / total).fillna(0.0)
    out = out.sort_values(["host", "total_us"], ascending=[True, False], kind="stable")
    out["host"] = pd.Categorical(out["host"])
    return schema.conform(out.reset_index(drop=True), schema.TORCH_KERNELS)


def _texts(col: pd.Series, rows: np.ndarray) -> np.ndarray:
    """A categorical column's values at ``rows`` as str, from its categories (no Python
    object made per event of the run)."""
    return np.asarray(col.cat.categories.astype(str), object)[
        np.asarray(col.array.codes)[rows]
    ].astype(str)


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
    kernels, _ = launches(run, (KERNEL,))
    if not len(steps) or not len(kernels):
        return schema.empty(schema.TORCH_GPU_METRICS)
    start, end = times_ps(run)
    blocks, has_blocks = launch_arg(run, "blocks per SM")
    occ, has_occ = launch_arg(run, "est. achieved occupancy %")
    out = []
    step_host = steps["host"].astype(str).to_numpy(object)
    complete = steps["complete"].to_numpy(bool)
    step_start, step_time = steps["start_us"].to_numpy(), steps["step_time_us"].to_numpy()
    for h, p, r in _by_host_and_plane(run, kernels):
        mine = step_host == h
        kept = np.flatnonzero(mine & complete)
        if not len(kept):
            continue
        w0 = int(round(step_start[np.flatnonzero(mine)[0]] * 1e6))
        w1 = int(round((step_start[kept[-1]] + step_time[kept[-1]]) * 1e6))
        s, e = np.clip(start[r], w0, w1), np.clip(end[r], w0, w1)
        busy = _union_length(s, e)
        b = has_blocks[r] & (blocks[r] > 0)
        # min(sum, 1) is min(sum of each capped at 1, 1): no huge value swamps the others.
        sm = _capped_sum(s[b], e[b], np.minimum(blocks[r][b], 1.0))
        o = has_occ[r] & (occ[r] >= 0)
        inside = (e - s)[o]
        occupancy = float((occ[r][o] * inside).sum() / inside.sum()) if inside.sum() else np.nan
        span = max(w1 - w0, 1)
        out.append((str(h), str(p), 100 * busy / span, 100 * sm / span, occupancy))
    df = pd.DataFrame(out, columns=list(schema.TORCH_GPU_METRICS))
    df["host"] = pd.Categorical(df["host"])
    return schema.conform(df, schema.TORCH_GPU_METRICS)


def _by_host_and_plane(run, rows: np.ndarray):
    """``rows`` split by host and plane: (host, plane, its rows in order), sorted by host,
    then plane, as a groupby of both names orders them."""
    hosts = run.events["host"].array
    host_names = np.asarray(hosts.categories.astype(str), object)
    plane_names = np.asarray(run.planes["plane"].astype(str), object)
    h = np.asarray(hosts.codes, np.int64)[rows]
    p = event_plane_rows(run)[rows].astype(np.int64)
    key = h * len(plane_names) + p
    pairs = sorted(
        (host_names[k // len(plane_names)], plane_names[k % len(plane_names)], k)
        for k in np.unique(key).tolist()
    )
    for host, plane, k in pairs:
        yield host, plane, rows[key == k]


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
