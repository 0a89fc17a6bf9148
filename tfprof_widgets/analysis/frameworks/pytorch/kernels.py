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
from ...event_index import times_ps
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
