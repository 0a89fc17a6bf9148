"""XProf's Op Profile tool as a table (``run.op_profile``): the tree program -> HLO category ->
HLO op, IDLE excluded (XProf's ``byProgramExcludeIdle``), one row per node.

A node's time, FLOPs and HBM bytes are the sums of its ops' (:func:`.roofline.roofline`:
self time, XLA's cost model × occurrences). FLOP utilisation (ours) is the node's FLOPs over
its own time at the peak FLOP rate, at most 1, an op's the roofline's compute efficiency
(one figure in both views); XProf 2.24's, kept as ``xprof_flop_utilization``, is the node's
FLOPs over the whole tree's time at the peak (so the children's add up to their parent's,
and an op at 70 % of its roof reads a few %). HBM bandwidth utilisation is the node's HBM
bytes over its own time at the peak HBM bandwidth, capped at 1 (a TPU op's HBM bytes: the
HBM entries of its memory_access_breakdown only, XProf's BytesAccessedPerCore). Programs are
named ``<module>(<program id>)``, the id unsigned. Rows are in tree order (depth first), each
level by time, descending (ties by name).

As XProf, an op that other ops ran nested in (on a TPU core's clock) is no node of its own
and adds only its self time to its program. Apart from XProf 2.24 on TPU
(tests/xla/test_xla_tpu_rates.py): it groups ops sharing a ``deduplicated_name`` under '<name>
and its duplicate(s)' and lists each fusion's fused instructions with no time; we keep one
level of ops.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ... import schema
from .roofline import GIB, roofline, roofline_peaks, tpu_costs


def op_profile(run) -> pd.DataFrame:
    """The op profile tree, one row per program, category and op: schema.OP_PROFILE."""
    rl = roofline(run)
    peaks = roofline_peaks(run)
    if not len(rl) or not len(peaks):
        return schema.empty(schema.OP_PROFILE)
    hs = run.hlo_stats
    modules = dict(zip(zip(hs["host"].astype(str), hs["program_id"]), hs["module"].astype(str)))
    ops = rl.assign(
        host=rl["host"].astype(str),
        program=[
            f"{modules.get((h, p), '')}({p})"
            for h, p in zip(rl["host"].astype(str), rl["program_id"])
        ],
        category=rl["category"].astype(str),
        name=rl["hlo_op_name"].astype(str),
        time_us=rl["total_self_time_us"],
    )
    # A TPU op's HBM bytes in the op profile are its breakdown's HBM entries only (XProf's
    # BytesAccessedPerCore), not all its bytes where it has no breakdown as in the roofline.
    tpu = tpu_costs(run)
    if len(tpu):
        keys = ["host", "program_id", "hlo_op_name"]
        k = ops[keys].assign(program_id=ops["program_id"].to_numpy().astype(np.int64))
        own = k.merge(tpu[[*keys, "breakdown_hbm_bytes"]], on=keys, how="left")
        b = own["breakdown_hbm_bytes"].to_numpy(float)
        ops["hbm_bytes"] = np.where(np.isnan(b), ops["hbm_bytes"].to_numpy(float), b)
    # XProf leaves an op that other ops nest in (its time beyond its self time: on a TPU
    # core's clock) out of the categories and ops, and its FLOPs and bytes out of the
    # program's, which double-count its children's; its self time stays in the program's.
    children = _children_us(hs, ops)
    nested = children > 1e-9
    # XProf's rate of a node is over its ops' summed total times (their 'normalized' time,
    # nested ops' time included), its share over its self time: a program holding a nested
    # op has a FLOP utilisation below FLOPs / (tree time × peak); elsewhere they are equal.
    ops = ops.assign(norm_us=ops["time_us"].to_numpy(float) + children)
    flat = ops[~nested]
    levels = [
        _level(
            ops.assign(
                flops=ops["flops"].where(~nested, 0.0),
                hbm_bytes=ops["hbm_bytes"].where(~nested, 0.0),
            ),
            ["host", "program"],
            "program",
        ),  # fmt: skip
        _level(flat, ["host", "program", "category"], "category"),
        _level(flat, ["host", "program", "category", "name"], "op"),
    ]
    tree = pd.concat(levels, ignore_index=True)
    per_host = peaks.groupby("host", observed=True).first()
    total = tree[tree["level"] == "program"].groupby("host")["time_us"].sum()
    t_all = tree["host"].map(total).to_numpy(float) / 1e6
    peak = tree["host"].map(per_host["peak_gflops"]).to_numpy(float) * 1e9
    bw = tree["host"].map(per_host["peak_hbm_gibps"]).to_numpy(float) * GIB
    t = tree["time_us"].to_numpy(float) / 1e6
    with np.errstate(divide="ignore", invalid="ignore"):
        util = np.where(t_all * peak > 0, tree["flops"] / (t_all * peak), 0.0)
        norm = tree["norm_us"].to_numpy(float) / 1e6
        tree["xprof_flop_utilization"] = util * np.where(norm > 0, t / norm, 1.0)
        # The figure a user reads: the node's FLOP rate over the peak, at most 1; an op's is
        # the roofline's compute efficiency, so both views show one number (XProf's share
        # of the whole tree's time reads 0.04 where the op runs at 0.7 of a roof).
        own = np.where(norm * peak > 0, tree["flops"] / (norm * peak), 0.0)
        is_op = (tree["level"] == "op").to_numpy()
        op_util = tree["op_flop_util"].to_numpy(float)
        tree["flop_utilization"] = np.minimum(np.where(is_op, op_util, own), 1.0)
        bwu = np.where(t * bw > 0, tree["hbm_bytes"] / (t * bw), 0.0)
        tree["hbm_bw_utilization"] = np.minimum(bwu, 1.0)
        tree["time_percent"] = np.where(t_all > 0, 100 * t / t_all, 0.0)
    return schema.conform(_tree_order(tree), schema.OP_PROFILE)


def _children_us(hs: pd.DataFrame, ops: pd.DataFrame) -> np.ndarray:
    """Per op row: the time of the ops that ran nested in it, µs (hlo_stats' total time less
    its self time; above 0: XProf's ChildrenTimePs > 0)."""
    keys = ["host", "program_id", "hlo_op_name"]
    children = hs["total_time_us"].to_numpy(float) - hs["total_self_time_us"].to_numpy(float)
    table = hs[keys].astype(str).assign(children=children).drop_duplicates(keys)
    got = ops[keys].astype(str).merge(table, on=keys, how="left")["children"]
    return got.fillna(0).to_numpy(float)


def _level(ops: pd.DataFrame, keys: list[str], level: str) -> pd.DataFrame:
    """The nodes of one level: sums over their ops, path and parent from the keys."""
    g = (
        ops.groupby(keys, sort=False, observed=True)
        .agg(
            program_id=("program_id", "first"),
            time_us=("time_us", "sum"),
            occurrences=("occurrences", "sum"),
            flops=("flops", "sum"),
            hbm_bytes=("hbm_bytes", "sum"),
            norm_us=("norm_us", "sum"),
            tf_op_name=("tf_op_name", "first"),
            op_flop_util=("compute_efficiency", "first"),
        )
        .reset_index()
    )
    parts = g[keys[1:]].astype(str)
    g["path"] = parts.agg("/".join, axis=1) if len(keys) > 2 else parts.iloc[:, 0]
    g["parent"] = parts.iloc[:, :-1].agg("/".join, axis=1) if len(keys) > 2 else ""
    g["name"] = parts.iloc[:, -1]
    g["level"] = level
    if level == "program":
        g["occurrences"] = 0  # XProf shows no occurrences for a program
    if level != "op":
        g["tf_op_name"] = ""
    return g


def _tree_order(tree: pd.DataFrame) -> pd.DataFrame:
    """Depth-first order: each node followed by its children, siblings by time descending."""
    rank = (
        tree.sort_values(["time_us", "name"], ascending=[False, True], kind="stable")
        .groupby(["host", "parent"], sort=False)
        .cumcount()
    )
    tree = tree.assign(_rank=rank.reindex(tree.index).to_numpy())
    key = dict(zip(zip(tree["host"], tree["path"]), tree["_rank"]))

    def sort_key(host: str, path: str) -> tuple:
        parts = path.split("/")
        return (host, *(key.get((host, "/".join(parts[: i + 1])), 0) for i in range(len(parts))))

    order = sorted(
        range(len(tree)), key=lambda i: sort_key(tree["host"].iat[i], tree["path"].iat[i])
    )
    return tree.iloc[order].drop(columns="_rank").reset_index(drop=True)


__all__ = ["op_profile"]
