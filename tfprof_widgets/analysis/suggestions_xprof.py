"""XProf's smart-suggestion rules (``xprof/convert/smart_suggestion/``: each rule's header, its
``signal_provider.h`` and ``constants.h``) on a run's own tables.

XProf's rules read a few signals of its tools; here each signal comes from the run's tables
(:func:`signals`, one figure per signal, NaN where the run has no such data: XProf's
"signal not ok", on which a rule does not fire):

* ``mxu_utilization_percent`` / ``hbm_utilization_percent``: XProf's overview page fills
  them on a TPU alone (the matrix units' performance counter, and the HBM bytes of the
  complete steps' HLO ops over their time at the chip's peak bandwidth); elsewhere they are
  0 (the proto's default), so ComputeBound and MemoryBound never fire off a TPU and every
  such run counts as latency-bound. Ours, from ``run.roofline`` and ``run.roofline_peaks``
  (HLO ops of every run that has them): the ops' HBM bytes over the steps' device time at
  the peak HBM bandwidth, and (no capture here has the TPU counter) the ops' FLOPs at the
  peak FLOP rate for the MXU's; both kept 0 off a TPU, as XProf keeps them;
* ``input_percent`` and the host input time split into enqueue / the rest
  (``run.overview_summary`` and ``run.input_pipeline``): the input-bound family;
* ``collective_percent`` / ``data_shuffle_percent``: XProf averages per step the self time
  of the HLO ops whose category is a collective (``IsCollective``) or a data shuffle
  (``IsDataShuffle``) over the step's time on every core; ours is their total self time
  (``run.hlo_stats``) over the steps' time on every core (the same where steps are alike);
  a run without HLO ops takes the overview's device-collectives share;
* ``tensor_core_idle_percent`` (TPU): the overview's idle share of step time;
* ``sparse_core_percent`` (TPU): XProf's SparseCore step time over the step time; ours, the
  mean ``Sparse Core Steps`` event over the mean step (0 without such a line: no capture
  here has one);
* ``barrier_cores_percent`` / ``debug_print_percent``: XProf's event-time-fraction analyzer
  (``kEventTimeFractionAnalyzerEvents``): per host, the time of events named so over the
  host's step time on each chip that ran them, averaged.

Rules and thresholds: ComputeBoundRule (MXU above 70 % and HBM below 50 %), MemoryBoundRule
(HBM above 70 %, MXU below 50 %), the input-bound family (input above 10 % of step time:
HostProcessingBoundRule from 50 % of the input time outside enqueueing, DataTransferBoundRule
from 30 % enqueueing, InputBoundRule where neither is measured), CollectiveBoundRule and
DataShuffleBoundRule (30 % of step time), TensorCoreIdleBoundRule and SparseCoreBoundRule
(latency-bound, above 10 %), BarrierCoresRule (10 %), DebugPrintRule (5 % on some host).
XProf's SparseCoreOffloadRule was removed from its rules (commit 6b1368cf) and is left out.
xprof 2.24's pip build runs BarrierCoresRule alone (``RegisterAllRulesFor3P``);
scripts/make_suggestion_goldens.py applies the rest to the signals of its tools.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from .step_edges import edge_steps_kept

__all__ = ["signals", "xprof_rules", "row", "event_time_percent"]

# smart_suggestion/constants.h
HBM_LOW, HBM_HIGH = 50.0, 70.0
MXU_LOW, MXU_HIGH = 50.0, 70.0
INFEED_PERCENT = 10.0
COLLECTIVE_PERCENT = 30.0
DATA_SHUFFLE_PERCENT = 30.0
SPARSE_CORE_PERCENT = 10.0
DATA_TRANSFER_PERCENT = 30.0
HOST_PROCESSING_PERCENT = 50.0
TENSOR_CORE_IDLE_PERCENT = 10.0
SPECIAL_OP_PERCENT = 10.0
DEBUG_PRINT_PERCENT = 5.0
ZERO = 1e-6  # kZeroEpsilon
BARRIER, DEBUG_PRINT = "barrier-cores", "debug_print"
SPARSE_CORE_STEPS = "Sparse Core Steps"

# signal_provider.h: IsCollective and IsDataShuffle (HLO categories).
COLLECTIVE_CATEGORIES = frozenset({
    "all-reduce", "all-reduce fusion", "all-reduce-scatter fusion", "all-to-all",
    "all-gather", "all-gather-start", "all-gather-done", "all-gather fusion",
    "reduce-scatter", "collective-permute", "collective-permute-done",
    "collective-permute-start", "megacore fusion", "host recv", "host recv-done",
    "host send", "host send-done",
})  # fmt: skip
DATA_SHUFFLE_CATEGORIES = frozenset({
    "broadcast", "concatenate", "data formatting", "dynamic-slice", "dynamic-update-slice",
    "gather", "pad", "reverse", "scatter", "select", "select-and-scatter", "shuffle", "slice",
    "sort",
})  # fmt: skip
NAN = float("nan")


def row(rule: str, value: float, threshold: float, text: str, view: str, **evidence) -> dict:
    """One suggestion: 'high' where the figure that fired it is at least twice the
    threshold, else 'medium'; evidence as 'name=value' with one decimal."""
    return {
        "rule": rule,
        "severity": "high" if value >= 2 * threshold else "medium",
        "text": text,
        "evidence": "; ".join(f"{k}={v:.1f}" for k, v in evidence.items()),
        "view": view,
    }


def _table(run, name: str) -> pd.DataFrame:
    """One of the run's tables, empty where the run (or a test's stand-in) has none."""
    try:
        t = getattr(run, name)
    except (AttributeError, KeyError, ValueError):
        return pd.DataFrame()
    return t if isinstance(t, pd.DataFrame) else pd.DataFrame()


def _steps_device_us(run) -> float:
    """The time of the steps XProf keeps (:func:`.step_edges.edge_steps_kept`) on every
    core: Σ step time × cores per host (XProf's step duration summed over a step's cores),
    µs."""
    steps = _table(run, "steps")
    if len(steps) and "host" in steps and "step" in steps:
        steps = edge_steps_kept(steps)
    if not len(steps):
        return 0.0
    o = run.overview_summary
    hosts = max(1, len(getattr(o, "hosts", []) or [1]))
    cores = max(1, int(getattr(o, "device_core_count", 0) or 0) // hosts)
    return float(steps["step_time_us"].sum()) * cores


def _category_percent(hlo: pd.DataFrame, categories: frozenset, device_us: float) -> float:
    if not len(hlo) or device_us <= 0:
        return 0.0
    hit = hlo["category"].astype(str).isin(categories).to_numpy(bool)
    return 100 * float(hlo.loc[hit, "total_self_time_us"].sum()) / device_us


def _utilizations(run, device_us: float) -> tuple[float, float]:
    """(FLOP utilisation standing for the MXU's, HBM bandwidth utilisation), % of the peak:
    the HLO ops' FLOPs and HBM bytes over the steps' device time (their self time where no
    step is known) at the devices' peak rates; NaN without HLO ops or peaks."""
    roof, peaks = _table(run, "roofline"), _table(run, "roofline_peaks")
    if not len(roof) or not len(peaks):
        return NAN, NAN
    seconds = (device_us or float(roof["total_self_time_us"].sum())) * 1e-6
    peak_gflops = float(peaks["peak_gflops"].max())
    peak_gibps = float(peaks["peak_hbm_gibps"].max())
    if seconds <= 0:
        return NAN, NAN
    flops = float(roof["flops"].sum()) / seconds / 1e9
    hbm = float(roof["hbm_bytes"].sum()) / seconds / 2**30
    return (
        100 * flops / peak_gflops if peak_gflops > 0 else NAN,
        100 * hbm / peak_gibps if peak_gibps > 0 else NAN,
    )


def _name_hits(names: pd.Series, needle: str) -> np.ndarray:
    """Which names contain ``needle``: tested once per distinct name (the categorical's
    categories, or the factorised values of a plain column) and spread by the codes."""
    if isinstance(names.dtype, pd.CategoricalDtype):
        codes, uniques = names.cat.codes.to_numpy(), names.cat.categories
    else:
        codes, uniques = pd.factorize(names)
    found = np.asarray(pd.Index(uniques).astype(str).str.contains(needle, regex=False), bool)
    found = np.append(found, False)  # code -1: a missing name
    return found[codes]


def event_time_percent(run, needle: str) -> pd.Series:
    """XProf's event-time-fraction analyzer: per host, the time of the events whose name
    contains ``needle`` over the host's step time on each chip (plane) that ran them, %."""
    ev, steps = _table(run, "events"), _table(run, "steps")
    if not len(ev) or not len(steps):
        return pd.Series(dtype=float)
    hit = _name_hits(ev["name"], needle)
    if not hit.any():
        return pd.Series(dtype=float)
    sel = ev.loc[hit]
    host = sel["host"].astype(str) if "host" in sel else pd.Series("", index=sel.index)
    plane = sel["plane"].astype(str) if "plane" in sel else host
    chips = plane.groupby(host.to_numpy()).nunique()
    busy = sel["dur_us"].groupby(host.to_numpy()).sum()
    if "host" in steps:
        step_us = steps["step_time_us"].groupby(steps["host"].astype(str).to_numpy()).sum()
    else:
        step_us = pd.Series(float(steps["step_time_us"].sum()), index=busy.index)
    step_us = step_us.reindex(busy.index).fillna(0.0)
    out = 100 * busy / (step_us * chips.reindex(busy.index))
    return out[step_us > 0]


def _sparse_core_percent(run) -> float:
    ev, steps = _table(run, "events"), _table(run, "steps")
    if "line" not in ev or not len(steps):
        return NAN
    sc = ev.loc[(ev["line"].astype(str) == SPARSE_CORE_STEPS).to_numpy(bool), "dur_us"]
    step = float(steps["step_time_us"].mean())
    if step <= 0:
        return NAN
    # A TPU's step breakdown always has a SparseCore part: 0 where no core ran steps.
    return 100 * float(sc.mean()) / step if len(sc) else 0.0


def signals(run) -> dict[str, float | str]:
    """XProf's smart-suggestion signals measured on the run (module docstring), %."""
    o = run.overview_summary
    tpu = o.hardware_type == "TPU"
    device_us = _steps_device_us(run)
    hlo = _table(run, "hlo_stats")
    flop_util, hbm_util = _utilizations(run, device_us)
    ip = run.input_pipeline
    enqueue = float(ip.enqueue_us)
    other = float(
        ip.demanded_file_read_us
        + ip.advanced_file_read_us
        + ip.preprocessing_us
        + ip.unclassified_non_enqueue_us
    )
    total = enqueue + other
    if len(hlo):
        collective = _category_percent(hlo, COLLECTIVE_CATEGORIES, device_us)
    else:
        collective = float(o.device_collectives_percent)
    barrier, debug = event_time_percent(run, BARRIER), event_time_percent(run, DEBUG_PRINT)
    return {
        "hardware_type": o.hardware_type,
        "flop_utilization_percent": flop_util,
        "hbm_bw_utilization_percent": hbm_util,
        # XProf's overview fills these on a TPU alone: 0 elsewhere and where unknown.
        "mxu_utilization_percent": _known(flop_util) if tpu else 0.0,
        "hbm_utilization_percent": _known(hbm_util) if tpu else 0.0,
        "input_percent": float(o.input_percent),
        "enqueue_percent_of_input": 100 * enqueue / total if total else 0.0,
        "non_enqueue_percent_of_input": 100 * other / total if total else 0.0,
        "collective_percent": collective,
        "data_shuffle_percent": _category_percent(hlo, DATA_SHUFFLE_CATEGORIES, device_us),
        "tensor_core_idle_percent": float(o.idle_percent) if tpu else NAN,
        "sparse_core_percent": _sparse_core_percent(run) if tpu else NAN,
        "barrier_cores_percent": float(barrier.mean()) if len(barrier) else NAN,
        "debug_print_percent": float(debug.max()) if len(debug) else NAN,
    }


def _known(value: float) -> float:
    return 0.0 if math.isnan(value) else value


def _ok(*values: float) -> bool:
    return all(not math.isnan(v) for v in values)


def latency_bound(s: dict) -> bool:
    """XProf's IsLatencyBound: MXU and HBM utilisation both below 50 %."""
    mxu, hbm = s["mxu_utilization_percent"], s["hbm_utilization_percent"]
    return _ok(mxu, hbm) and mxu < MXU_LOW and hbm < HBM_LOW


def _utilization_rules(s: dict) -> list[dict]:
    mxu, hbm = s["mxu_utilization_percent"], s["hbm_utilization_percent"]
    if not _ok(mxu, hbm):
        return []
    if mxu > MXU_HIGH and hbm < HBM_LOW:
        return [row(
            "ComputeBoundRule", mxu, MXU_HIGH,
            f"Your program is likely bottlenecked by compute operations: high MXU "
            f"utilization of {mxu:.1f}% and low HBM bandwidth utilization of {hbm:.1f}% "
            "indicate that the primary bottleneck is the raw processing power of the "
            "hardware. Use mixed precision (bfloat16), optimize your kernels, experiment "
            "with the batch size, and consider a mixture-of-experts strategy.",
            "roofline", mxu_utilization_percent=mxu, hbm_utilization_percent=hbm,
        )]  # fmt: skip
    if hbm > HBM_HIGH and mxu < MXU_LOW:
        return [row(
            "MemoryBoundRule", hbm, HBM_HIGH,
            f"Your program is likely bottlenecked by memory operations: high HBM bandwidth "
            f"utilization of {hbm:.1f}% and low MXU utilization of {mxu:.1f}% indicate "
            "that processors are often waiting for data. Increase the batch size, use "
            "gradient accumulation, make the model deeper or wider, and store the data set "
            "in a format made for high-throughput reads.",
            "roofline", hbm_utilization_percent=hbm, mxu_utilization_percent=mxu,
        )]  # fmt: skip
    return []


def _input_rules(s: dict) -> list[dict]:
    """The input-bound family: fires only past 10 % of step time in input."""
    inp = s["input_percent"]
    if not inp > INFEED_PERCENT:
        return []
    enq, other = s["enqueue_percent_of_input"], s["non_enqueue_percent_of_input"]
    out = []
    if other >= HOST_PROCESSING_PERCENT:
        out.append(row(
            "HostProcessingBoundRule", other, HOST_PROCESSING_PERCENT,
            f"Your program is likely bottlenecked by host-side processing in the input "
            f"pipeline: {inp * other / 100:.1f}% of the total step time is spent on host-side "
            "input data processing. Read and preprocess in parallel and ahead (prefetch, "
            "interleave, parallel map), move static preprocessing offline, and tune buffer "
            "sizes, threads and prefetch distances.",
            "input_pipeline", input_percent=inp, non_enqueue_percent=other,
        ))  # fmt: skip
    if enq >= DATA_TRANSFER_PERCENT:
        out.append(row(
            "DataTransferBoundRule", enq, DATA_TRANSFER_PERCENT,
            f"Your program is likely bottlenecked by data transfer between host and device: "
            f"{inp * enq / 100:.1f}% of the total step time is spent enqueueing data. "
            "Transfer fewer, larger batches, keep data on the device, and overlap transfers "
            "with compute.",
            "input_pipeline", input_percent=inp, enqueue_percent=enq,
        ))  # fmt: skip
    if abs(enq) < ZERO and abs(other) < ZERO:
        out.append(row(
            "InputBoundRule", inp, INFEED_PERCENT,
            f"Your program is likely input-bound: {inp:.1f}% of step time is spent on input "
            "operations, which the profiler could not attribute to reading, preprocessing or "
            "enqueueing (a custom input pipeline).",
            "input_pipeline", input_percent=inp,
        ))  # fmt: skip
    return out


def _category_rules(s: dict) -> list[dict]:
    out = []
    coll, shuffle = s["collective_percent"], s["data_shuffle_percent"]
    if coll >= COLLECTIVE_PERCENT:
        out.append(row(
            "CollectiveBoundRule", coll, COLLECTIVE_PERCENT,
            f"Your program is likely bottlenecked by collective operations (e.g. AllReduce, "
            f"AllGather): an average of {coll:.1f}% of each step is spent on them. Overlap "
            "communication with computation, look for stragglers and uneven input, send "
            "lower-precision gradients, and check the network.",
            "overview", collective_percent=coll,
        ))  # fmt: skip
    if shuffle >= DATA_SHUFFLE_PERCENT:
        out.append(row(
            "DataShuffleBoundRule", shuffle, DATA_SHUFFLE_PERCENT,
            f"Your program is likely bottlenecked by data shuffle operations (e.g. sort, "
            f"gather, scatter): an average of {shuffle:.1f}% of each step is spent on them. "
            "Review the gather and scatter operations; keep the dimensions of their tensors "
            "multiples of 128.",
            "op_stats", data_shuffle_percent=shuffle,
        ))  # fmt: skip
    return out


def _latency_rules(s: dict) -> list[dict]:
    """TensorCore idle and SparseCore: both only where MXU and HBM are under-used."""
    if not latency_bound(s):
        return []
    out = []
    idle, sc = s["tensor_core_idle_percent"], s["sparse_core_percent"]
    if _ok(idle) and idle > TENSOR_CORE_IDLE_PERCENT:
        out.append(row(
            "TensorCoreIdleBoundRule", idle, TENSOR_CORE_IDLE_PERCENT,
            f"Your program is likely bottlenecked by TensorCore idle time: {idle:.1f}% of "
            "step time the TensorCores wait rather than work. Batch small operations into "
            "larger ones, enclose more of the step in compiled functions, move small host "
            "operations to the device, and checkpoint or log asynchronously.",
            "overview", tensor_core_idle_percent=idle,
        ))  # fmt: skip
    if _ok(sc) and sc > SPARSE_CORE_PERCENT:
        out.append(row(
            "SparseCoreBoundRule", sc, SPARSE_CORE_PERCENT,
            f"Your program is likely bottlenecked by SparseCore operations: {sc:.1f}% of "
            "the total step time is spent on the SparseCore. Refine the sparse data "
            "representation (sorted indices, grouped features), quantize or prune large "
            "embedding tables, and use the platform's sparse embedding APIs.",
            "timeline", sparse_core_percent=sc,
        ))  # fmt: skip
    return out


def _special_op_rules(run, s: dict) -> list[dict]:
    out = []
    barrier, debug = s["barrier_cores_percent"], s["debug_print_percent"]
    if _ok(barrier) and barrier >= SPECIAL_OP_PERCENT:
        out.append(row(
            "BarrierCoresRule", barrier, SPECIAL_OP_PERCENT,
            f"Your program is likely bottlenecked by TPU barrier-cores operations: an "
            f"average of {barrier:.1f}% of each step time is spent on them, often a "
            "synchronization issue between workers: look for stragglers, make collectives "
            "efficient, check the network and balance the input pipeline across workers.",
            "overview", barrier_cores_percent=barrier,
        ))  # fmt: skip
    if _ok(debug) and debug >= DEBUG_PRINT_PERCENT:
        per_host = event_time_percent(run, DEBUG_PRINT)
        hosts = ", ".join(f"{h} {v:.1f}%" for h, v in per_host.items() if v >= DEBUG_PRINT_PERCENT)
        out.append(row(
            "DebugPrintRule", debug, DEBUG_PRINT_PERCENT,
            f"Your program is likely bottlenecked by debug_print operations: up to "
            f"{debug:.1f}% of step time is spent on them on some hosts ({hosts}), which "
            "often makes other workers busy-wait. Look for debug print calls in your code.",
            "timeline", debug_print_percent=debug,
        ))  # fmt: skip
    return out


def xprof_rules(run, s: dict | None = None) -> list[dict]:
    """The rows of XProf's rules that fire on the run's signals (``s``: :func:`signals`)."""
    s = signals(run) if s is None else s
    return [
        *_utilization_rules(s),
        *_input_rules(s),
        *_category_rules(s),
        *_latency_rules(s),
        *_special_op_rules(run, s),
    ]
