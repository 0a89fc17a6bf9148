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

from .. import _deprecated, schema
from .frameworks import RunFrameworks, rules_of
from .results import Summary
from .steps import overview_steps


def input_ops(ops: pd.DataFrame, frameworks: RunFrameworks | None = None) -> pd.DataFrame:
    """Host input ops (the frameworks' input op types: TF's tf.data ops, host-to-device copies,
    infeed) with their share of input time (columns: schema.INPUT_OPS; percentages of all
    input ops' self time on that host). ``frameworks``: the run's (XProf's rules if None)."""
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
            "time_percent": (100 * host["total_time_us"] / total).to_numpy(),
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
    table = input_ops(ops, frameworks)
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
]


def __getattr__(name: str):
    return _deprecated.renamed(
        __name__, name, {"InputPipelineAnalysis": "InputPipelineSummary"}, globals()
    )
