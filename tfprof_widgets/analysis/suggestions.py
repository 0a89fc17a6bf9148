"""Suggestions: XProf's smart-suggestion rules (``xprof/convert/smart_suggestion/``, xprof
2.24) applied to a run's own analyses, one row per rule that fires.

Each XProf rule reads a few signals of its tools and fires past a threshold
(``smart_suggestion/constants.h``); here the same signals come from the run's analyses:

* **InputBoundRule** / **HostProcessingBoundRule** / **DataTransferBoundRule**: the program
  is input-bound when the input share of step time (the input-pipeline analysis's
  ``input_percent``, ``run.overview_summary.input_percent``) is above 10 %; then the host's
  input time (``run.input_pipeline``'s breakdown) says why: 50 % or more outside enqueueing
  (reading and preprocessing) is host-processing bound, 30 % or more enqueueing
  (host-to-device transfer) is data-transfer bound, and neither measured (an input pipeline
  the profiler cannot categorise) is the plain input-bound rule;
* **CollectiveBoundRule**: 30 % or more of step time in collectives
  (``overview_summary.device_collectives_percent``);
* **TensorCoreIdleBoundRule** (TPU): the TensorCore idle 10 % or more of step time
  (``overview_summary.idle_percent`` on a TPU run);
* **BarrierCoresRule**: device ops named ``barrier-cores`` take 10 % or more of step time
  (their time over the steps' time; XProf's event-time-fraction analyzer averages the
  fraction per step and chip, which equals it where steps are alike).

xprof 2.24's pip package runs only the last one (``RegisterAllRulesFor3P``): on the bundled
captures it fires on none, and neither does ours (tests/analysis/test_suggestions.py compares with
its ``smart_suggestion`` tool). XProf's ComputeBound / MemoryBound (MXU and HBM utilisation
of a TPU overview page), DataShuffleBound, DebugPrint and SparseCore rules need TPU signals
this module does not derive; they never fire here.

A run whose framework has overview verdicts of its own adds them as rows (PyTorch's are
torch-tb-profiler's): bound by its input tool ('DataLoaderBoundRule'), launch-bound,
communication-bound, devices of low utilization, device memory at its limit.
"""

from __future__ import annotations

import pandas as pd

from .. import schema
from ..frameworks import rules_of

__all__ = ["suggestions"]

# smart_suggestion/constants.h
INFEED_PERCENT = 10.0
HOST_PROCESSING_PERCENT = 50.0
DATA_TRANSFER_PERCENT = 30.0
COLLECTIVE_PERCENT = 30.0
TENSOR_CORE_IDLE_PERCENT = 10.0
SPECIAL_OP_PERCENT = 10.0
ZERO = 1e-9  # kZeroEpsilon
BARRIER = "barrier-cores"


def _row(rule: str, value: float, threshold: float, text: str, view: str, **evidence) -> dict:
    return {
        "rule": rule,
        "severity": "high" if value >= 2 * threshold else "medium",
        "text": text,
        "evidence": "; ".join(f"{k}={v:.1f}" for k, v in evidence.items()),
        "view": view,
    }


def _input_rules(run, input_percent: float) -> list[dict]:
    """The input-bound family: fires only past 10 % of step time in input."""
    if not input_percent > INFEED_PERCENT:
        return []
    ip = run.input_pipeline
    enqueue = ip.enqueue_us
    other = (
        ip.demanded_file_read_us
        + ip.advanced_file_read_us
        + ip.preprocessing_us
        + ip.unclassified_non_enqueue_us
    )
    total = enqueue + other
    enq_pct = 100 * enqueue / total if total else 0.0
    other_pct = 100 * other / total if total else 0.0
    out = []
    if other_pct >= HOST_PROCESSING_PERCENT:
        share = input_percent * other_pct / 100
        out.append(_row(
            "HostProcessingBoundRule", other_pct, HOST_PROCESSING_PERCENT,
            f"Your program is likely bottlenecked by host-side processing in the input "
            f"pipeline: {share:.1f}% of the total step time is spent on host-side input data "
            "processing. Read and preprocess in parallel and ahead (prefetch, interleave, "
            "parallel map), move static preprocessing offline, and tune buffer sizes, "
            "threads and prefetch distances.",
            "input_pipeline", input_percent=input_percent, non_enqueue_percent=other_pct,
        ))  # fmt: skip
    if enq_pct >= DATA_TRANSFER_PERCENT:
        share = input_percent * enq_pct / 100
        out.append(_row(
            "DataTransferBoundRule", enq_pct, DATA_TRANSFER_PERCENT,
            f"Your program is likely bottlenecked by data transfer between host and device: "
            f"{share:.1f}% of the total step time is spent enqueueing data. Transfer fewer, "
            "larger batches, keep data on the device, and overlap transfers with compute.",
            "input_pipeline", input_percent=input_percent, enqueue_percent=enq_pct,
        ))  # fmt: skip
    if abs(enq_pct) < ZERO and abs(other_pct) < ZERO:
        out.append(_row(
            "InputBoundRule", input_percent, INFEED_PERCENT,
            f"Your program is likely input-bound: {input_percent:.1f}% of step time is spent "
            "on input operations.",
            "input_pipeline", input_percent=input_percent,
        ))  # fmt: skip
    return out


def _barrier_percent(run) -> float:
    """Average share of step time in device ops named barrier-cores, %."""
    ev, steps = run.events, run.steps
    if not len(steps) or not len(ev):
        return 0.0
    hit = ev["name"].astype(str).str.contains(BARRIER, regex=False).to_numpy(bool)
    if not hit.any():
        return 0.0
    step_time = float(steps["step_time_us"].sum())
    return 100 * float(ev.loc[hit, "dur_us"].sum()) / step_time if step_time > 0 else 0.0


def _verdict_rules(run) -> list[dict]:
    """The framework's own overview verdicts as rows, where its rules give some
    (``overview_verdicts``: PyTorch's are torch-tb-profiler's): input-bound on its input
    tool (5 % of step time, high from 20 %), launch-bound (3 %, high from 15 %),
    communication-bound (above 10 %), GPUs under 50 % utilization, device memory above 90 %
    of the GPU's. The evidence is the overview's figure each verdict quotes."""
    rules = rules_of(run)
    v = rules.overview_verdicts(run)
    if v is None:
        return []
    o = run.overview_summary
    out = []

    def add(rule: str, severity: str, text: str, view: str, **evidence) -> None:
        out.append({**_row(rule, 0.0, 1.0, text, view, **evidence), "severity": severity})

    if v["input_classification"] != "device":
        sev = "high" if v["input_classification"] == "host" else "medium"
        tool = "".join(ch for ch in rules.advice.input_tool if ch.isalnum()) or "Input"
        add(f"{tool}BoundRule", sev, v["input_statement"], "input_pipeline",
            input_percent=o.input_percent)  # fmt: skip
    if v["kernel_launch_classification"] != "no":
        sev = "high" if v["kernel_launch_classification"] == "high" else "medium"
        add("LaunchBoundRule", sev, v["kernel_launch_statement"], "operators",
            kernel_launch_percent=o.kernel_launch_percent)  # fmt: skip
    if v["device_collectives_statement"]:
        add("CommunicationBoundRule", "medium", v["device_collectives_statement"], "overview",
            collective_percent=o.device_collectives_percent)  # fmt: skip
    if v["all_other_statement"]:
        add("LowDeviceUtilizationRule", "medium", v["all_other_statement"], "kernels",
            device_idle_percent=o.device_idle_percent)  # fmt: skip
    for text in v["recommendations"]:
        if text not in (v["input_statement"], v["kernel_launch_statement"],
                        v["device_collectives_statement"], v["all_other_statement"]):  # fmt: skip
            add("MemoryAtLimitRule", "high", text, "memory_profile")
    return out


def suggestions(run) -> pd.DataFrame:
    """One row per XProf smart-suggestion rule that fires on the run (schema.SUGGESTIONS); empty
    when none does."""
    rows: list[dict] = []
    o = run.overview_summary
    rows += _input_rules(run, float(o.input_percent))
    coll = float(o.device_collectives_percent)
    if coll >= COLLECTIVE_PERCENT:
        rows.append(_row(
            "CollectiveBoundRule", coll, COLLECTIVE_PERCENT,
            f"Your program is likely bottlenecked by collective operations: {coll:.1f}% of "
            "step time is spent in them. Overlap communication with compute, communicate "
            "fewer or larger tensors, and check the interconnect.",
            "overview", collective_percent=coll,
        ))  # fmt: skip
    idle = float(o.idle_percent)
    if o.hardware_type == "TPU" and idle >= TENSOR_CORE_IDLE_PERCENT:
        rows.append(_row(
            "TensorCoreIdleBoundRule", idle, TENSOR_CORE_IDLE_PERCENT,
            f"The TensorCore is idle {idle:.1f}% of step time: it waits for the host, input "
            "or other cores. Look at the input pipeline and the host's work between steps.",
            "overview", tensor_core_idle_percent=idle,
        ))  # fmt: skip
    barrier = _barrier_percent(run)
    if barrier >= SPECIAL_OP_PERCENT:
        rows.append(_row(
            "BarrierCoresRule", barrier, SPECIAL_OP_PERCENT,
            f"Your program is likely bottlenecked by TPU barrier-cores operations: an "
            f"average of {barrier:.1f}% of each step time is spent on them, often a "
            "synchronization issue between workers: look for stragglers, make collectives "
            "efficient, check the network and balance the input pipeline across workers.",
            "overview", barrier_cores_percent=barrier,
        ))  # fmt: skip
    verdicts = _verdict_rules(run)
    if any(r["view"] == "input_pipeline" for r in verdicts):
        # The same fact in the framework's words, with its input tool named.
        rows = [r for r in rows if r["rule"] != "InputBoundRule"]
    rows += verdicts
    if not rows:
        return schema.empty(schema.SUGGESTIONS)
    return schema.conform(pd.DataFrame(rows), schema.SUGGESTIONS)
