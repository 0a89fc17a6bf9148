"""The overview page: step-time summary, bottleneck verdicts and recommendations.

Numbers and sentences follow XProf's overview/input-pipeline pages (thresholds from its
op_stats_to_input_pipeline_analysis): input-bound when waiting for input takes >= 20 % of
step time (highly) or >= 5 % (moderately); otherwise "potentially input-bound" when
unexplained ("all others") time is >= 3 %. Averages are over the steps XProf keeps (all but
the first and last of each host).
"""

from __future__ import annotations

import dataclasses
import re

import numpy as np
import pandas as pd

from .. import stat_columns
from ..frameworks import Advice, rules_of
from .results import StepCount, Summary
from .steps import CATEGORIES, overview_steps

HIGHLY_INPUT, MODERATELY_INPUT = 20.0, 5.0
HIGHLY_OUTPUT, MODERATELY_OUTPUT = 20.0, 5.0
HIGHLY_KERNEL_LAUNCH, MODERATELY_KERNEL_LAUNCH = 15.0, 3.0
HIGHLY_ALL_OTHER, MODERATELY_ALL_OTHER = 15.0, 3.0
HIGHLY_COLLECTIVES, MODERATELY_COLLECTIVES = 15.0, 3.0
NO_STEPS_STATEMENT = (
    "No step time measured. Therefore we cannot tell where the performance bottleneck is."
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

    # The steps the averages are over, counted as every text counts steps: distinct step
    # numbers, once however many hosts ran each (``run.step_count.averaged``); the host-step
    # rows averaged can be more on a multi-host run.
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
    precision_statement: str
    # Op placement, as occurrences (TensorBoard's "host/device TF op %": executions of host
    # ops and of device ops, without our own device-op additions) and as self time.
    host_op_occurrence_percent: float
    device_op_occurrence_percent: float
    host_op_time_percent: float
    device_op_time_percent: float
    eager_host_op_percent: float
    eager_device_op_percent: float
    # XProf's idle shares: 1 - op time / total time of the host (threads) and device op
    # tables, %; the TPU duty cycle (busy share of the cores' window), % (NaN without TPU).
    host_idle_percent: float
    device_idle_percent: float
    device_duty_cycle_percent: float
    hardware_type: str  # CPU_ONLY, GPU, TPU
    hosts: list[str]
    device_type: str
    device_core_count: int
    recommendations: list[str]
    tools: list[str]
    top_ops: pd.DataFrame
    # Ours (XProf has no such figure): the 16-bit share of device op time by the output
    # element type (bf16/f16) of the ops' compiled instructions, %; NaN where the capture
    # carries no compiled program (the framework's hlo_16bit_percent).
    program_16bit_percent: float = float("nan")
    # Ours: the share of GPU kernel time in kernels whose names name a 16-bit (or narrower)
    # floating-point type (``bf16``, ``c10::BFloat16``, ``__half``, ``fp8 e4m3``...), %; NaN
    # where no kernel ran or the programs' types are known (XProf's rule reads only 'half'
    # and 'fp16' in the same names, and calls a bf16 kernel 32-bit).
    kernel_16bit_percent: float = float("nan")
    # torch-tb-profiler's own DataLoader share of step time, %, kept for comparison with its
    # page (NaN on other frameworks): its roles over its step spans (to the end of each
    # step's GPU work) and all its complete steps, the DataLoader counted only where no
    # kernel, copy or runtime call runs. Not what the verdicts quote: they quote
    # ``input_percent`` (the steps table's input share), the one input figure every page
    # shows (issue 36 item 7).
    dataloader_percent_tb: float = float("nan")

    @property
    def precision_16bit_percent(self) -> float:
        """The 16-bit share of device compute a user reads, %: from the best evidence the
        capture holds (:attr:`precision_source` says which)."""
        return self._precision()[0]

    @property
    def precision_source(self) -> str:
        """What :attr:`precision_16bit_percent` is measured from: 'programs' (the compiled
        programs' output types), 'kernels' (the type names in the kernels' names) or
        'xprof' (XProf's rule: TF shapes or 'half'/'fp16' in the names)."""
        return self._precision()[1]

    def _precision(self) -> tuple[float, str]:
        if self.program_16bit_percent == self.program_16bit_percent:
            return self.program_16bit_percent, "programs"
        # Known only where the kernels carry no shapes (XProf then reads their names, and
        # only 'half' and 'fp16': a bf16 or c10::Half kernel is 32-bit to it).
        k = self.kernel_16bit_percent
        if k == k:
            return k, "kernels"
        return self.device_compute_16bit_percent, "xprof"

    def to_frame(self) -> pd.DataFrame:
        """The scalar figures as a two-column table (name, value), with each category's
        average per step as ``avg_<category>``."""
        avg = pd.DataFrame(
            [(f"avg_{k}", v) for k, v in self.breakdown_ms_avg.items()], columns=["name", "value"]
        )
        return pd.concat([super().to_frame(), avg], ignore_index=True)

    def _repr_lines(self, words=None) -> list[str]:
        """The summary in a few lines; ``words`` (a framework's
        :meth:`~.frameworks.Advice.in_our_words`) puts XProf's page sections in ours."""
        words = words or Advice().in_our_words
        if not self.n_steps:
            return [self.input_statement]
        return [
            f"Step time {self.step_time_ms_avg:.2f} ± "
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
            f"Next: {words(self.summary_next_step)}",
        ]

    def __repr__(self) -> str:
        return "OverviewSummary(\n  " + "\n  ".join(self._repr_lines()) + "\n)"


_NVIDIA_FAMILIES = {
    2: "Fermi",
    3: "Kepler",
    5: "Maxwell",
    6: "Pascal",
    9: "Hopper",
    10: "Blackwell",
}
_TPU_CORE = re.compile(r"^/device:TPU:\d+$")


def _environment(run) -> tuple[str, str, int]:
    """(hardware type, device type, device cores) as XProf's run environment names them:
    the GPU model of the first GPU plane (from its vendor and compute capability; 'GPU'
    when unknown) and the number of GPU planes, empty ones included; else the first TPU
    core's ``device_type_string`` and the number of TPU cores; else 'CPU'."""
    names = [str(p) for p in run.planes["plane"].tolist()]
    gpus = [i for i, p in enumerate(names) if p.startswith("/device:GPU:")]
    if gpus:
        return "GPU", _gpu_model(_props_of(run, gpus[0], _GPU_MODEL_STATS)) or "GPU", len(gpus)
    tpus = [i for i, p in enumerate(names) if _TPU_CORE.match(p)]
    if tpus:
        props = _props_of(run, tpus[0], ("device_type_string",))
        return "TPU", str(props.get("device_type_string", "")), len(tpus)
    return "CPU_ONLY", "CPU", 0


def _props_of(run, row: int, names: tuple[str, ...]) -> dict:
    """The stats named of the plane in row ``row`` of run.planes, as {name: value} (only
    those: a GPU plane carries hundreds, each value read in Python)."""
    planes, ps = run.planes, run.plane_stats
    host, plane = planes["host"].iloc[row], planes["plane"].iloc[row]
    mine = (ps["host"].to_numpy(object) == host) & (ps["plane"].to_numpy(object) == plane)
    mine &= ps["stat"].isin(names).to_numpy(bool)
    stats = ps[mine]
    return dict(zip(stats["stat"].astype(str), stat_columns.values(stats)))


# The GPU plane's stats _gpu_model reads.
_GPU_MODEL_STATS = ("compute_cap_major", "compute_cap_minor", "device_vendor", "device_name")


def _gpu_model(props: dict) -> str:
    """XProf's GpuModelName: an NVIDIA GPU's family from its compute capability, an AMD
    GPU's gfx version; '' for an unknown vendor."""
    major, minor = int(props.get("compute_cap_major", 0)), int(props.get("compute_cap_minor", 0))
    vendor = str(props.get("device_vendor", ""))
    if vendor == "Nvidia":
        if major == 7:
            return "Nvidia GPU (Volta)" if minor < 5 else "Nvidia GPU (Turing)"
        if major == 8:
            return "Nvidia GPU (Ampere)" if minor < 9 else "Nvidia GPU (Ada Lovelace)"
        family = _NVIDIA_FAMILIES.get(major)
        return f"Nvidia GPU ({family})" if family else "Nvidia GPU"
    if vendor == "AMD":
        name = str(props.get("device_name", ""))
        if re.fullmatch(r"gfx[0-9a-fA-F]{3,}", name):
            return f"AMD GPU - {name}"
        gfx = {(9, 4): "gfx942", (9, 5): "gfx950"}.get((major, minor))
        if gfx:
            return f"AMD GPU - {gfx}"
        return {9: "AMD GPU - gfx-9XX series", 10: "AMD GPU - gfx-10XX series"}.get(
            major, "AMD GPU - gfx-11XX series" if major == 11 else "AMD GPU"
        )
    return ""


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
    frameworks = rules_of(run)
    pipeline = frameworks.input_pipeline_in_use(ops)
    verdicts = _verdicts(pct, pipeline, float(st.sum()) > 0, frameworks.advice)
    placement = _op_placement(ops)
    hardware, device_type, cores = _environment(run)
    c16, c32 = _precision_shares(run.device_precision)
    # XProf's GeneratePrecisionStatement: any device compute at all, and under 10 % of it
    # 16-bit (0 % included).
    precision = (
        f"Only {one_digit(c16)}% of device computation is 16 bit. So you might want to "
        "replace more 32-bit Ops by 16-bit Ops to improve performance (if the reduced "
        "accuracy is acceptable)."
        if c16 + c32 > 0 and c16 < LOW_PRECISION_PERCENT
        else ""
    )
    program_16 = _nan_if_none(frameworks.hlo_16bit_percent(run))
    own = frameworks.overview_verdicts(run) if n else None
    if own is not None:  # the framework's own verdicts, in its terms
        own = dict(own)
        lead = own.pop("recommendations")
        verdicts.update(own)
    recommendations = [
        s
        for s in (
            verdicts["input_statement"],
            verdicts["output_statement"],
            verdicts["kernel_launch_statement"],
            verdicts["all_other_statement"],
            verdicts["device_collectives_statement"],
            precision,
            frameworks.advice.mark_steps if not n else "",
        )
        if s
    ]
    if own is not None:  # its own advice replaces XProf's (whose 16-bit rule reads TF names)
        recommendations = lead
    if not run.tfprof_nodes.empty:  # a TF1 tfprof profile: add tfprof's advisor
        recommendations += [
            f"tfprof {r.checker}: {r.finding}" for r in run.tfprof_advice.itertuples()
        ]
    return OverviewSummary(
        n_steps=StepCount.of(steps, kept).averaged,
        step_time_ms_avg=float(st.mean()) if n else 0.0,
        step_time_ms_std=float(st.std(ddof=1)) if n > 1 else 0.0,
        step_time_ms_min=float(st.min()) if n else 0.0,
        step_time_ms_max=float(st.max()) if n else 0.0,
        **_breakdown_mean_std(ms, n),
        **pct,
        **verdicts,
        device_compute_16bit_percent=c16,
        device_compute_32bit_percent=c32,
        precision_statement=precision,
        **placement,
        **_idle_and_duty(run, hardware),
        hardware_type=hardware,
        hosts=list(run.hosts),
        device_type=device_type,
        device_core_count=cores,
        recommendations=recommendations,
        program_16bit_percent=program_16,
        kernel_16bit_percent=_kernel_share(run, frameworks, program_16, hardware),
        tools=(
            ["input_pipeline_view", "trace_viewer"]
            if verdicts["input_classification"] in ("host", "both")
            else ["op_stats", "trace_viewer"]
        ),
    )


def _breakdown_mean_std(ms: pd.DataFrame, n: int) -> dict[str, dict[str, float]]:
    """breakdown_ms_avg and breakdown_ms_std: each category's mean and sample standard
    deviation over the kept steps, ms (0 without steps, the deviation 0 with one)."""
    avg, std = {}, {}
    for c in CATEGORIES:
        avg[c], std[c] = _mean_std(ms[c].to_numpy(np.float64)) if n else (0.0, 0.0)
        std[c] = std[c] if n > 1 else 0.0
    return {"breakdown_ms_avg": avg, "breakdown_ms_std": std}


def _mean_std(values: np.ndarray) -> tuple[float, float]:
    """pandas' Series.mean() and Series.std(ddof=1) of float64 values, bit for bit: the
    same sums in the same order as pandas' nanops (which cost far more through a Series on
    the few steps a run has: docs/speed.md); values with NaN go to pandas itself (it skips them)."""
    n = len(values)
    if n < 2 or np.isnan(values).any():
        s = pd.Series(values)
        return float(s.mean()), float(s.std(ddof=1))
    avg = values.sum(dtype=np.float64) / n
    return float(avg), float(np.sqrt(((avg - values) ** 2).sum(dtype=np.float64) / (n - 1)))


def _nan_if_none(value: float | None) -> float:
    return float("nan") if value is None else float(value)


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


def _verdicts(
    pct: dict[str, float], pipeline: bool, has_steps: bool, advice: Advice
) -> dict[str, str]:
    """XProf's classifications and sentences for each kind of bound, and what to do next
    (``pipeline``: the framework's input pipeline ran on the host; ``advice``: the
    framework's words for what to do)."""
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
        + (advice.launch_contention if pipeline else "")
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
        next_step = advice.input_next_step if pipeline else advice.no_input_pipeline_next_step
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


def _precision_shares(precision: pd.DataFrame) -> tuple[float, float]:
    """16-bit and 32-bit shares of device compute, %, over every step group's events of
    every host, as XProf computes them (ComputePrecisionStats, summed over hosts): not only
    the steps the averages keep, and not clipped to the steps."""
    c16 = float(precision["device_compute_16_us"].sum())
    c32 = float(precision["device_compute_32_us"].sum())
    if not c16 + c32:
        return 0.0, 0.0
    return 100.0 * c16 / (c16 + c32), 100.0 * c32 / (c16 + c32)


# A 16-bit or narrower floating-point type as GPU kernel names spell it: cuBLAS/cuDNN/CUTLASS
# (``bf16``, ``f16``, ``fp16``, ``e4m3``), ATen's templates (``c10::BFloat16``, ``c10::Half``),
# CUDA's (``__half``, ``__nv_bfloat16``), TensorRT-LLM's (``Bfloat16``, ``E4m3``).
_LOW_PRECISION_TYPE = re.compile(r"bf16|bfloat16|f16|half|fp8|e4m3|e5m2|e2m1|fp4", re.IGNORECASE)


def _kernel_share(run, frameworks, program_16: float, hardware: str) -> float:
    """The kernels' 16-bit share (:func:`_kernel_16bit_percent`) where it is the best
    evidence: a GPU run of a known framework whose compiled programs say nothing and whose
    kernels carry no tensor shapes (TensorFlow's do, and XProf reads them: its figure stands
    there, as it does for a pod's tables, whose framework is not known). NaN elsewhere."""
    if program_16 == program_16 or hardware != "GPU" or not frameworks.names:
        return float("nan")
    store = getattr(run, "stat_store", None)
    if store is None or "shape" in set(map(str, store.names)):
        return float("nan")
    return _kernel_16bit_percent(run.kernels)


def _kernel_16bit_percent(kernels: pd.DataFrame) -> float:
    """Share of kernel time in kernels whose names name a 16-bit or narrower floating-point
    type, % (a mixed kernel such as ``<BFloat16, float>`` computes on 16-bit operands and
    counts); NaN without kernel time."""
    if not len(kernels):
        return float("nan")
    total = kernels.groupby("kernel_name", observed=True)["total_time_us"].sum()
    time = total.to_numpy(np.float64)
    if not time.sum() > 0:
        return float("nan")
    names = total.index.astype(str)
    low = np.fromiter((_LOW_PRECISION_TYPE.search(n) is not None for n in names), bool, len(names))
    return 100.0 * float(time[low].sum()) / float(time.sum())


def _op_placement(ops: pd.DataFrame) -> dict[str, object]:
    """Where ops ran, by occurrences (XProf's rule, over TensorBoard's own rows) and by self
    time (over every row), eager shares, and the top ten ops of the device (of the host
    when no device op ran)."""
    real_rows = np.flatnonzero((ops["type"] != "IDLE").to_numpy())
    is_host = (ops["host_or_device"] == "Host").to_numpy()[real_rows]
    xprof = ~ops["beyond_xprof"].to_numpy()[real_rows]
    self_t = ops["total_self_time_us"].to_numpy()[real_rows]
    occ = ops["occurrences"].to_numpy()[real_rows]
    eager = ops["is_eager"].to_numpy()[real_rows]
    host_t, dev_t = float(self_t[is_host].sum()), float(self_t[~is_host].sum())
    host_n, dev_n = int(occ[is_host & xprof].sum()), int(occ[~is_host & xprof].sum())

    def share(a: float, b: float) -> float:
        return 100.0 * a / (a + b) if a + b else 0.0

    def eager_pct(side: np.ndarray) -> float:
        return share(float(self_t[side & eager].sum()), float(self_t[side & ~eager].sum()))

    side = ~is_host if dev_t > 0 else is_host
    # The top ten by self time, ties by name (the operation's codes are its name's rank).
    op_rank = np.asarray(ops["operation"].array.codes)[real_rows][side]
    first = np.lexsort((op_rank, -self_t[side]))[:10]
    top = ops.iloc[real_rows[side][first]].reset_index(drop=True)
    # Shares of the side's op time, IDLE left out, as the overview's table gives them.
    side_total = float(self_t[side].sum())
    top["self_time_percent"] = 100 * top["total_self_time_us"] / side_total if side_total else 0.0
    top["cumulative_self_time_percent"] = top["self_time_percent"].cumsum()
    return {
        "host_op_occurrence_percent": share(host_n, dev_n),
        "device_op_occurrence_percent": share(dev_n, host_n),
        "host_op_time_percent": share(host_t, dev_t),
        "device_op_time_percent": share(dev_t, host_t),
        "eager_host_op_percent": eager_pct(is_host),
        "eager_device_op_percent": eager_pct(~is_host),
        "top_ops": top,
    }


def _idle_and_duty(run, hardware: str) -> dict[str, float]:
    """XProf's host and device idle shares (1 − op time / total time of each op table, %)
    and, on TPUs, the duty cycle (busy / (busy + idle) of the cores, %)."""
    ops = run.ops
    side = ops["host_or_device"].to_numpy()
    self_t = ops["total_self_time_us"].to_numpy()
    is_idle = (ops["type"] == "IDLE").to_numpy()

    def idle_pct(name: str) -> float:
        on = side == name
        total = float(self_t[on].sum())
        if not total:
            # XProf's TPU overview counts a side without op time all idle (1 − busy/total,
            # 0/0 taken as 0: a JAX host runs no TF op); elsewhere it leaves the share at 0.
            return 100.0 if hardware == "TPU" else 0.0
        return 100.0 * float(self_t[on & is_idle].sum()) / total

    busy, idle = rules_of(run).duty_cycle(run) if hardware == "TPU" else (0.0, 0.0)
    return {
        "host_idle_percent": idle_pct("Host"),
        "device_idle_percent": idle_pct("Device"),
        "device_duty_cycle_percent": 100.0 * busy / (busy + idle) if busy + idle else float("nan"),
    }


__all__ = ["OverviewSummary", "input_verdict", "overview_summary"]
