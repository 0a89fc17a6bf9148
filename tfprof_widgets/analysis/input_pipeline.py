"""Input-pipeline analysis, as TensorBoard's input-pipeline analyzer shows it.

Device side: per step, how long the step waited for input (see :mod:`.steps`). Host side:
where input time goes, by XProf's classification of input ops (tf.data ``Dataset`` ops,
host-to-device copies and infeed enqueues): enqueue, reading files on demand, reading files
in advance (cache, prefetch, interleave, parallel map), preprocessing, and the input-op
table with each op's share of input time.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd

from .. import schema
from ..frameworks import RunFrameworks, rules_of
from .results import Summary
from .steps import overview_steps


def input_ops(ops: pd.DataFrame, frameworks: RunFrameworks | None = None) -> pd.DataFrame:
    """Host input ops (the frameworks' input op types: TF's tf.data ops, host-to-device copies,
    infeed) with their share of input self time (columns: schema.INPUT_OPS; percentages of
    all input ops' self time on that host; ``time_percent`` NaN: :func:`input_time_shares`
    makes it from the calls). ``frameworks``: the run's (XProf's rules if None)."""
    frameworks = frameworks if frameworks is not None else rules_of(None)
    host = ops[
        (ops["host_or_device"] == "Host")
        & ops["type"].astype(str).isin(list(frameworks.input_op_types))
    ]
    if not len(host):
        return schema.empty(schema.INPUT_OPS)
    total = host.groupby("host", observed=True)["total_self_time_us"].transform("sum")
    out = pd.DataFrame(
        {
            "host": host["host"].astype(str).to_numpy(),
            "operation": host["operation"].astype(str).to_numpy(),
            "occurrences": host["occurrences"].to_numpy(),
            "total_time_us": host["total_time_us"].to_numpy(),
            "total_self_time_us": host["total_self_time_us"].to_numpy(),
            "time_percent": np.full(len(host), np.nan),  # input_time_shares: from the calls
            "time_percent_xprof": (100 * host["total_time_us"] / total).to_numpy(),
            "self_time_percent": (100 * host["total_self_time_us"] / total).to_numpy(),
            "category": [
                frameworks.input_op_class(n, t)
                for n, t in zip(host["operation"].astype(str), host["type"].astype(str))
            ],
        }
    )
    out = out.sort_values(
        ["host", "total_self_time_us"], ascending=[True, False], ignore_index=True
    )
    return schema.conform(out, schema.INPUT_OPS)


def _covered_ps(key: np.ndarray, begin: np.ndarray, end: np.ndarray, n: int) -> np.ndarray:
    """Per key (0..n-1): the time its intervals cover, each instant once (ps)."""
    order = np.lexsort((begin, key))
    k, b, e = key[order], begin[order].astype(np.float64), end[order].astype(np.float64)
    new_key = np.r_[True, k[1:] != k[:-1]]
    # The furthest end reached before each interval, within its key (-inf at a key's first).
    reach = pd.Series(e).groupby(k, sort=False).cummax().to_numpy()
    before = np.where(new_key, -np.inf, np.r_[-np.inf, reach[:-1]])
    return np.bincount(k, weights=np.maximum(0.0, e - np.maximum(b, before)), minlength=n)


def input_time(run) -> pd.DataFrame:
    """Per host and input op whose calls the trace holds, the time the op's calls cover and
    the time any input op's calls cover on that host, each instant counted once
    (schema.INPUT_TIME): what :func:`input_time_shares` divides. A pod stores it per host."""
    table = input_ops(run.ops, rules_of(run))
    if not len(table):
        return schema.empty(schema.INPUT_TIME)
    from .op_stats import host_activities  # the op table's own calls and their nesting

    act = host_activities(run)
    act = act[act["recorded"].to_numpy()]
    key = pd.MultiIndex.from_arrays([table["host"].astype(str), table["operation"].astype(str)])
    at = key.get_indexer(
        pd.MultiIndex.from_arrays([act["host"].astype(str), act["operation"].astype(str)])
    )
    mine = at >= 0
    at = at[mine]
    begin, end = act["begin_ps"].to_numpy()[mine], act["end_ps"].to_numpy()[mine]
    hosts, host_of_row = np.unique(table["host"].astype(str).to_numpy(), return_inverse=True)
    per_op = _covered_ps(at, begin, end, len(table))
    per_host = _covered_ps(host_of_row[at], begin, end, len(hosts))[host_of_row]
    ran = np.bincount(at, minlength=len(table)) > 0
    out = pd.DataFrame(
        {
            "host": table["host"].to_numpy()[ran],
            "operation": table["operation"].to_numpy()[ran],
            "covered_ps": np.rint(per_op[ran]).astype(np.int64),
            "host_covered_ps": np.rint(per_host[ran]).astype(np.int64),
        }
    )
    return schema.conform(out, schema.INPUT_TIME)


def input_time_shares(run, table: pd.DataFrame) -> pd.DataFrame:
    """``table`` (input ops) with ``time_percent`` the share of the host's input time in
    which each op ran: the time its calls cover over the time any input op's calls cover,
    each instant counted once (``run.input_time``). XProf's total % (``time_percent_xprof``)
    divides an op's summed durations by the input ops' summed self time: a DataLoader batch
    whose calls hold collate and copy operators reads 152 % (resnet50, one op), and calls on
    several threads at once count each thread; no share either way. Rows without calls in
    the trace keep NaN."""
    if not len(table):
        return table
    cov = run.input_time
    if not len(cov):
        return table
    key = pd.MultiIndex.from_arrays([table["host"].astype(str), table["operation"].astype(str)])
    at = key.get_indexer(
        pd.MultiIndex.from_arrays([cov["host"].astype(str), cov["operation"].astype(str)])
    )
    mine = at >= 0
    per_op = np.full(len(table), np.nan)
    per_host = np.full(len(table), np.nan)
    per_op[at[mine]] = cov["covered_ps"].to_numpy(float)[mine]
    per_host[at[mine]] = cov["host_covered_ps"].to_numpy(float)[mine]
    out = table.copy()
    with np.errstate(invalid="ignore", divide="ignore"):
        share = np.where(per_host > 0, 100 * per_op / per_host, np.nan)
    out["time_percent"] = np.where(np.isnan(per_op), np.nan, share)
    return out


@dataclasses.dataclass
class InputPipelineSummary(Summary):
    """Device-side waits per step and the host-side split of input time (microseconds).

    ``steps`` has the columns of schema.INPUT_PIPELINE_STEPS, ``input_ops`` those of
    schema.INPUT_OPS; ``to_frame()`` gives the scalar figures.
    """

    _not_in_frame = ("recommendations",)

    steps: pd.DataFrame  # host, step, group_id, step_time_us, input_us, ... input_percent
    input_percent_avg: float
    input_percent_std: float
    enqueue_us: float
    demanded_file_read_us: float
    advanced_file_read_us: float
    preprocessing_us: float
    unclassified_non_enqueue_us: float
    input_ops: pd.DataFrame
    tf_data_used: bool
    recommendations: list[str]

    def host_breakdown(self) -> pd.Series:
        """Where host input time goes, µs."""
        return pd.Series(
            {
                "enqueue": self.enqueue_us,
                "demanded_file_read": self.demanded_file_read_us,
                "advanced_file_read": self.advanced_file_read_us,
                "preprocessing": self.preprocessing_us,
                "unclassified_non_enqueue": self.unclassified_non_enqueue_us,
            },
            name="us",
        )


def input_pipeline(run) -> InputPipelineSummary:
    """The input-pipeline analysis of a run (from ``run.steps`` and ``run.ops``)."""
    steps, ops = run.steps, run.ops
    kept = overview_steps(steps)
    per_step = kept[list(schema.INPUT_PIPELINE_STEPS)[:-1]].copy()
    per_step["input_percent"] = np.where(
        per_step["step_time_us"] > 0, 100 * per_step["input_us"] / per_step["step_time_us"], 0.0
    )
    frameworks = rules_of(run)
    table = input_time_shares(run, input_ops(ops, frameworks))
    by_cat = table.groupby("category", observed=True)["total_self_time_us"].sum()
    enqueue = float(by_cat.get("Enqueue", 0.0))
    reading = {
        c: float(by_cat.get(c, 0.0))
        for c in ("Demanded file read", "Advanced file read", "Preprocessing")
    }
    total_input = sum(reading.values())
    # XProf scales the non-enqueue parts so that enqueue keeps the share of step time that
    # host-to-device copies take on the device side.
    avg_step = float(kept["step_time_us"].mean()) if len(kept) else 0.0
    ratio = min(1.0, float(kept["host_to_device_us"].mean()) / avg_step) if avg_step else 0.0
    non_enqueue = enqueue * (1 - ratio) / ratio if ratio else total_input
    scaled = {
        c: (non_enqueue * v / total_input if total_input else 0.0) for c, v in reading.items()
    }
    unclassified = max(0.0, non_enqueue - sum(scaled.values()))
    pct = per_step["input_percent"]
    return InputPipelineSummary(
        steps=per_step.reset_index(drop=True),
        input_percent_avg=float(pct.mean()) if len(pct) else 0.0,
        input_percent_std=float(pct.std(ddof=1)) if len(pct) > 1 else 0.0,
        enqueue_us=enqueue,
        demanded_file_read_us=scaled["Demanded file read"],
        advanced_file_read_us=scaled["Advanced file read"],
        preprocessing_us=scaled["Preprocessing"],
        unclassified_non_enqueue_us=unclassified,
        input_ops=table,
        tf_data_used=frameworks.input_pipeline_in_use(ops),
        recommendations=list(frameworks.advice.input_recommendations),
    )


__all__ = [
    "InputPipelineSummary",
    "input_ops",
    "input_pipeline",
    "input_time_shares",
]
