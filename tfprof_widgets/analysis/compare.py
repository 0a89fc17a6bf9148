"""Two runs compared: their TF ops side by side, by how much each one's self time changed.

Runs that differ in length differ in every total, so when both runs have steps the ops are
compared per step (self time over the capture divided by the run's steps,
``run.step_count``): a run captured over more steps is not "slower" for it.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .. import schema

__all__ = ["op_diff"]


def op_diff(run_a, run_b) -> pd.DataFrame:
    """The ops of two runs side by side (hosts combined), largest change in self time first
    (columns: schema.OP_DIFF)."""
    ops_a, ops_b = run_a.ops, run_b.ops
    key = ["host_or_device", "type", "operation"]

    def prep(ops):
        ops = ops[ops["type"] != "IDLE"]
        g = ops.groupby([ops[k].astype(str) for k in key])
        return g.agg(self_time_us=("total_self_time_us", "sum"), occurrences=("occurrences", "sum"))

    m = (
        prep(ops_a)
        .merge(prep(ops_b), how="outer", left_index=True, right_index=True, suffixes=("_a", "_b"))
        .fillna(0)
    )
    m[["occurrences_a", "occurrences_b"]] = m[["occurrences_a", "occurrences_b"]].astype("int64")
    m = m.rename(columns={"self_time_us_a": "self_time_a_us", "self_time_us_b": "self_time_b_us"})
    m["delta_us"] = m["self_time_b_us"] - m["self_time_a_us"]
    na, nb = run_a.step_count.steps, run_b.step_count.steps
    per_step = na > 0 and nb > 0
    m["self_time_a_per_step_us"] = m["self_time_a_us"] / na if per_step else np.nan
    m["self_time_b_per_step_us"] = m["self_time_b_us"] / nb if per_step else np.nan
    m["delta_per_step_us"] = m["self_time_b_per_step_us"] - m["self_time_a_per_step_us"]
    a, b = (
        ("self_time_a_per_step_us", "self_time_b_per_step_us")
        if per_step
        else (
            "self_time_a_us",
            "self_time_b_us",
        )
    )
    m["ratio"] = m[b] / m[a].where(m[a] > 0)
    m = m.reset_index()
    change = m["delta_per_step_us"] if per_step else m["delta_us"]
    m = m.reindex(change.abs().sort_values(ascending=False, kind="stable").index)
    out = schema.conform(m.reset_index(drop=True), schema.OP_DIFF)
    out.attrs["steps"] = (na, nb)  # each run's steps; per-step columns only when both > 0
    return out
