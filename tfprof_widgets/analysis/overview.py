"""The overview page: step-time summary, bottleneck verdicts and recommendations.

Numbers and sentences follow XProf's overview/input-pipeline pages (thresholds from its
op_stats_to_input_pipeline_analysis): input-bound when waiting for input takes >= 20 % of
step time (highly) or >= 5 % (moderately); otherwise "potentially input-bound" when
unexplained ("all others") time is >= 3 %. Averages are over the steps XProf keeps (all but
the first and last of each host).
"""

from __future__ import annotations

import dataclasses

import pandas as pd

from .. import schema
from .input_pipeline import tf_data_in_use
from .results import Summary
from .steps import CATEGORIES, overview_steps

HIGHLY_INPUT, MODERATELY_INPUT = 20.0, 5.0
HIGHLY_OUTPUT, MODERATELY_OUTPUT = 20.0, 5.0
HIGHLY_KERNEL_LAUNCH, MODERATELY_KERNEL_LAUNCH = 15.0, 3.0
HIGHLY_ALL_OTHER, MODERATELY_ALL_OTHER = 15.0, 3.0
HIGHLY_COLLECTIVES, MODERATELY_COLLECTIVES = 15.0, 3.0
TF_DATA_CONTENTION = (
    " It could be due to CPU contention with tf.data. In this case, you may "
    "try to set the environment variable TF_GPU_THREAD_MODE=gpu_private."
)
NO_STEPS_STATEMENT = (
    "No step time measured. Therefore we cannot tell where the performance bottleneck is. "
    "Mark steps with tf.profiler.experimental.Trace('train', step_num=step, _r=1), or "
    "profile for longer than one step."
)
# The columns of the top ops that the overview shows.
TOP_OPS_COLUMNS = [
    "host_or_device",
    "type",
    "operation",
    "occurrences",
    "total_self_time_us",
    "self_time_percent",
]
# Below this share of 16-bit device compute, mixed precision is recommended (XProf's rule).
LOW_PRECISION_PERCENT = 10.0
PYTHON_EXPLANATION = (
    " % of the total step time sampled is spent on 'All Others' time. This "
    "could be due to Python execution overhead."
)


def one_digit(x: float) -> str:
    return f"{x:.1f}"


def input_verdict(input_pct: float, all_other_pct: float) -> tuple[str, str, bool]:
    """(classification, statement, all_others_reported) as XProf words them."""
    if input_pct >= HIGHLY_INPUT:
        return (
            "host",
            (
                f"Your program is HIGHLY input-bound because {one_digit(input_pct)}% of "
                "the total step time sampled is waiting for input. Therefore, you "
                "should first focus on reducing the input time."
            ),
            False,
        )
    if input_pct >= MODERATELY_INPUT:
        return (
            "both",
            (
                f"Your program is MODERATELY input-bound because {one_digit(input_pct)}"
                "% of the total step time sampled is waiting for input. Therefore, you "
                "would need to reduce both the input time and other time."
            ),
            False,
        )
    if all_other_pct >= MODERATELY_ALL_OTHER:
        return (
            "both",
            (
                f"Your program is POTENTIALLY input-bound because "
                f"{one_digit(all_other_pct)}% of the total step time sampled is spent "
                "on 'All Others' time (which could be due to I/O or Python execution "
                "or both)."
            ),
            True,
        )
    return (
        "device",
        (
            f"Your program is NOT input-bound because only {one_digit(input_pct)}% of "
            "the total step time sampled is waiting for input. Therefore, you should "
            "focus on reducing other time."
        ),
        False,
    )


def _graded(pct: float, high: float, moderate: float, text: str) -> tuple[str, str]:
    if pct >= high:
        return "high", text
    if pct >= moderate:
        return "moderate", text
    return "no", ""


@dataclasses.dataclass
class OverviewSummary(Summary):
    """What TensorBoard's overview page says about a run (all times in milliseconds).

    Averages are over the steps XProf keeps (:func:`.steps.overview_steps`); the 16/32-bit
    shares of device compute are over every step, as XProf computes them.
    """

    _not_in_frame = ("recommendations", "tools")

    n_steps: int
    step_time_ms_avg: float
    step_time_ms_std: float
    step_time_ms_min: float
    step_time_ms_max: float
    breakdown_ms_avg: dict[str, float]  # category -> average ms per step (STEP categories)
    breakdown_ms_std: dict[str, float]
    input_percent: float
    output_percent: float
    compute_percent: float
    idle_percent: float
    kernel_launch_percent: float
    all_other_percent: float
    device_collectives_percent: float
    input_classification: str  # host (highly) / both (moderately or potentially) / device
    input_statement: str
    output_statement: str
    kernel_launch_classification: str
    kernel_launch_statement: str
    all_other_classification: str
    all_other_statement: str
    device_collectives_classification: str
    device_collectives_statement: str
    summary_next_step: str
    device_compute_16bit_percent: float
    device_compute_32bit_percent: float
    host_op_time_percent: float  # share of op time spent in ops placed on the host
    device_op_time_percent: float
    eager_host_op_percent: float
    eager_device_op_percent: float
    hardware_type: str  # CPU_ONLY, GPU, TPU
    hosts: list[str]
    device_type: str
    device_core_count: int
    recommendations: list[str]
    tools: list[str]
    top_ops: pd.DataFrame

    def to_frame(self) -> pd.DataFrame:
        """The scalar figures as a two-column table (name, value), with each category's
        average per step as ``avg_<category>``."""
        avg = pd.DataFrame(
            [(f"avg_{k}", v) for k, v in self.breakdown_ms_avg.items()], columns=["name", "value"]
        )
        return pd.concat([super().to_frame(), avg], ignore_index=True)

    def _repr_lines(self) -> list[str]:
        if not self.n_steps:
            return [self.input_statement]
        return [
            f"{self.n_steps} steps, step time {self.step_time_ms_avg:.2f} ± "
            f"{self.step_time_ms_std:.2f} ms (min {self.step_time_ms_min:.2f}, max "
            f"{self.step_time_ms_max:.2f})",
            self.input_statement,
            *[
                s
                for s in (
                    self.output_statement,
                    self.kernel_launch_statement,
                    self.all_other_statement,
                    self.device_collectives_statement,
                )
                if s
            ],
            f"Next: {self.summary_next_step}",
        ]

    def __repr__(self) -> str:
        return "OverviewSummary(\n  " + "\n  ".join(self._repr_lines()) + "\n)"


def _environment(run) -> tuple[str, str, int]:
    planes = run.planes
    dev = planes[planes["device_kind"].isin(schema.DEVICE_KINDS)]
    if not len(dev):
        return "CPU_ONLY", "CPU", 0
    kind = str(dev["device_kind"].iloc[0])
    return kind, kind, int(len(dev))


_STEP_FIGURES = [
    "step_time_us",
    *CATEGORIES,
    "device_compute_16_us",
    "device_compute_32_us",
    "host_wait_input_us",
    "host_to_device_us",
]


def overview_summary(run) -> OverviewSummary:
    """The overview of a run, from ``run.steps`` and ``run.ops``."""
    steps, ops = run.steps, run.ops
    kept = overview_steps(steps)
    ms = kept[_STEP_FIGURES] / 1e3
    n = len(kept)
    st = ms["step_time_us"]
    pct = _percents(ms)
    tf_data = tf_data_in_use(ops)
    verdicts = _verdicts(pct, tf_data, has_steps=float(st.sum()) > 0)
    placement = _op_placement(ops)
    hardware, device_type, cores = _environment(run)
    c16, c32 = _precision_shares(steps)
    recommendations = [
        s
        for s in (
            verdicts["input_statement"],
            verdicts["output_statement"],
            verdicts["kernel_launch_statement"],
            verdicts["all_other_statement"],
            verdicts["device_collectives_statement"],
        )
        if s
    ]
    if c16 + c32 > 0 and c16 < LOW_PRECISION_PERCENT:
        recommendations.append(
            f"Only {one_digit(c16)}% of device computation is 16 bit. You may consider mixed "
            "precision (tf.keras.mixed_precision) to use the Tensor Cores."
        )
    if not run.tfprof_nodes.empty:  # a TF1 tfprof profile: add tfprof's advisor
        recommendations += [
            f"tfprof {r.checker}: {r.finding}" for r in run.tfprof_advice.itertuples()
        ]
    return OverviewSummary(
        n_steps=n,
        step_time_ms_avg=float(st.mean()) if n else 0.0,
        step_time_ms_std=float(st.std(ddof=1)) if n > 1 else 0.0,
        step_time_ms_min=float(st.min()) if n else 0.0,
        step_time_ms_max=float(st.max()) if n else 0.0,
        breakdown_ms_avg={c: float(ms[c].mean()) if n else 0.0 for c in CATEGORIES},
        breakdown_ms_std={c: float(ms[c].std(ddof=1)) if n > 1 else 0.0 for c in CATEGORIES},
        **pct,
        **verdicts,
        device_compute_16bit_percent=c16,
        device_compute_32bit_percent=c32,
        **placement,
        hardware_type=hardware,
        hosts=list(run.hosts),
        device_type=device_type,
        device_core_count=cores,
        recommendations=recommendations,
        tools=(
            ["input_pipeline_view", "trace_viewer"]
            if verdicts["input_classification"] in ("host", "both")
            else ["op_stats", "trace_viewer"]
        ),
    )


def _percents(ms: pd.DataFrame) -> dict[str, float]:
    """Each category's share of all kept steps' time, %; idle is what no device work took."""
    total = float(ms["step_time_us"].sum())

    def pct(col: str) -> float:
        return 100.0 * float(ms[col].sum()) / total if total > 0 else 0.0

    out = {
        "input_percent": pct("input_us"),
        "output_percent": pct("output_us"),
        "compute_percent": pct("device_compute_us"),
        "kernel_launch_percent": pct("kernel_launch_us"),
        "all_other_percent": pct("all_others_us"),
        "device_collectives_percent": pct("device_collectives_us"),
    }
    out["idle_percent"] = max(
        0.0,
        100.0
        - out["input_percent"]
        - out["output_percent"]
        - out["compute_percent"]
        - out["device_collectives_percent"],
    )
    return out


def _verdicts(pct: dict[str, float], tf_data: bool, has_steps: bool) -> dict[str, str]:
    """XProf's classifications and sentences for each kind of bound, and what to do next."""
    if has_steps:
        cls, statement, other_reported = input_verdict(
            pct["input_percent"], pct["all_other_percent"]
        )
    else:
        cls, other_reported = "unknown", False
        statement = NO_STEPS_STATEMENT
    output = pct["output_percent"]
    if output >= HIGHLY_OUTPUT:
        out_statement = (
            f"Your program is HIGHLY output-bound because {one_digit(output)}"
            "% of the total step time sampled is spent on output. Therefore, you "
            "should first focus on reducing the output time."
        )
    elif output >= MODERATELY_OUTPUT:
        out_statement = (
            f"Your program is MODERATELY output-bound because "
            f"{one_digit(output)}% of the total step time sampled is spent on "
            "output. Therefore, you would need to reduce both the output time and "
            "other time."
        )
    else:
        out_statement = ""
    launch = pct["kernel_launch_percent"]
    launch_text = (
        f"{one_digit(launch)} % of the total step time sampled is spent on 'Kernel Launch'."
        + (TF_DATA_CONTENTION if tf_data else "")
    )
    launch_cls, launch_statement = _graded(
        launch, HIGHLY_KERNEL_LAUNCH, MODERATELY_KERNEL_LAUNCH, launch_text
    )
    other = pct["all_other_percent"]
    if other_reported:
        other_cls, other_statement = "no", ""
    else:
        other_cls, other_statement = _graded(
            other, HIGHLY_ALL_OTHER, MODERATELY_ALL_OTHER, one_digit(other) + PYTHON_EXPLANATION
        )
    coll = pct["device_collectives_percent"]
    coll_cls, coll_statement = _graded(
        coll,
        HIGHLY_COLLECTIVES,
        MODERATELY_COLLECTIVES,
        f"{one_digit(coll)} % of the total step time sampled is spent on 'Device "
        f"Collective Communication'.",
    )
    if cls in ("host", "both"):
        next_step = (
            "Look at Section 3 for the breakdown of input time on the host."
            if tf_data
            else "Consider using the tf.data API to enable profiler's "
            "host-side analysis for input pipeline."
        )
    else:
        next_step = "You may skip the rest of this page."
    return {
        "input_classification": cls,
        "input_statement": statement,
        "output_statement": out_statement,
        "kernel_launch_classification": launch_cls,
        "kernel_launch_statement": launch_statement,
        "all_other_classification": other_cls,
        "all_other_statement": other_statement,
        "device_collectives_classification": coll_cls,
        "device_collectives_statement": coll_statement,
        "summary_next_step": next_step,
    }


def _precision_shares(steps: pd.DataFrame) -> tuple[float, float]:
    """16-bit and 32-bit shares of device compute, %, over *every* step: XProf computes them
    from all the steps' events (ComputePrecisionStats over the non-overlapped step events),
    not from the steps its averages keep."""
    c16 = float(steps["device_compute_16_us"].sum())
    c32 = float(steps["device_compute_32_us"].sum())
    if not c16 + c32:
        return 0.0, 0.0
    return 100.0 * c16 / (c16 + c32), 100.0 * c32 / (c16 + c32)


def _op_placement(ops: pd.DataFrame) -> dict[str, object]:
    """Shares of op time on the host and the device, eager shares, and the top ops."""
    real = ops[ops["type"] != "IDLE"]
    host_t = float(real.loc[real["host_or_device"] == "Host", "total_self_time_us"].sum())
    dev_t = float(real.loc[real["host_or_device"] == "Device", "total_self_time_us"].sum())

    def eager_pct(side: str) -> float:
        s = real[real["host_or_device"] == side]
        t = float(s["total_self_time_us"].sum())
        return 100.0 * float(s.loc[s["is_eager"], "total_self_time_us"].sum()) / t if t else 0.0

    side = "Device" if dev_t > 0 else "Host"
    top = real[real["host_or_device"] == side].nlargest(10, "total_self_time_us")
    both = host_t + dev_t
    return {
        "host_op_time_percent": 100.0 * host_t / both if both else 0.0,
        "device_op_time_percent": 100.0 * dev_t / both if both else 0.0,
        "eager_host_op_percent": eager_pct("Host"),
        "eager_device_op_percent": eager_pct("Device"),
        "top_ops": top.reset_index(drop=True),
    }


__all__ = ["OverviewSummary", "input_verdict", "overview_summary"]
