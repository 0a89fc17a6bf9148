"""TPU steps and their breakdown, by XProf 2.24's TPU step database and input analysis.

A TPU host's steps come from its cores alone (XProf adds no host step events beside a
device). Measured against xprof 2.24's converters on the synthetic capture of
tests/support/tpu_builder.py and variants of it:

* Steps: each event of a core's ``Steps`` line is a step (no ``Steps`` line: no step, as
  on the real inference capture of shared/reference/xla-capture-inventory.txt). XProf
  numbers a step by its group id: the host's own step groups (its ``train`` markers) come
  first, then the device steps in time order, so the k-th step of a capture whose host
  marks three steps is step 3 + k. A core's k-th ``Steps`` event is step k on every core;
  a step is kept only where every core that has steps has it (IntersectCombineStepEvents,
  across cores and between a core's markers and its ops).
* An HLO op belongs to the first ``Steps`` event of its core whose span (on the XEvent
  clock) overlaps its own (XProf's GroupQueue); ops of no step (a program run between
  steps) count nowhere.
* The step time is the longest of the step's ``Steps`` events over the cores
  (StepDetails::StepTime); per core, from its ops' self time by HLO category
  (ProfileTimeBreakdown): idle = step time − every op's self time, waiting for the host =
  infeed + outfeed + host send/recv + idle (WaitForHostDurationPs).
* Per step over the cores (ComputeTpuPerStepDataAcrossCores): TensorCore compute = the
  least of (step time − waiting for the host); input = the most infeed; output = the mean
  outfeed; idle = the least step time − compute − input − output (not below 0). In
  ``schema.STEPS``: ``device_compute_us`` (its 16/32-bit parts stay 0: XProf's TPU steps do
  not split compute by precision), ``input_us``, ``output_us`` and ``all_others_us``
  (TensorCore idle); ``step_time_us`` is the step's time on its slowest core (XProf's step
  time statistics), their sum unless the ops' self time overran it. Not built (XProf's
  columns with no such ops here): SparseCore, the all-reduce compute/sync split, host
  transfer time, and MayFixTpuStepAnalysis (host input events of the same step number
  moved out of TensorCore idle, for captures without infeed ops).
* Verdict (ComputeTpuBottleneckAnalysis): XProf's input analysis on the share of infeed,
  with no 'All Others' share (a TPU's idle time is not read as input), and its output
  analysis on outfeed; no kernel-launch, all-others or collectives statement.
* Beyond XProf: the step's collectives (the XLA collective ops of :mod:`.collectives`), the
  least self time in them over the cores, are ``device_collectives_us``, out of the
  TensorCore compute (XProf leaves them in it). Without collectives every figure is XProf's.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ... import schema
from ...analysis.device_time import xevent_times
from ...analysis.memo import per_run
from ...analysis.nesting import to_ps
from ...analysis.step_edges import DROP_EDGE_STEPS_ABOVE
from .collectives import collective_ops
from .columns import note_once
from .tpu import OFF_DUTY_CATEGORIES, tpu_device_ops, tpu_op_events

# A TensorCore's step line and op line (XProf reads one of each per core).
STEP_LINE, OP_LINE = "Steps", "XLA Ops"
INFEED, OUTFEED = "infeed", "outfeed"
# HLO categories of host send/recv (ProfileTimeBreakdown's HostSend/HostRecv time).
HOST_SEND_RECV = tuple(c for c in OFF_DUTY_CATEGORIES if c.startswith("host "))


def _markers(run) -> pd.DataFrame:
    """The cores' ``Steps`` events: host, plane_row, k (rank on its core), begin/end ps
    (XEvent clock) and start_us (on the run's clock). A ``Steps`` event inside an earlier
    one of its core (no step: libtpu's steps follow each other) is left out with a warning:
    the ops after it were lost once (their step was searched for on unsorted ends)."""
    ev = tpu_op_events(run)
    if not len(ev):
        return pd.DataFrame()
    m = ev[ev["line"] == STEP_LINE]
    xs, xe = xevent_times(run)
    rows = m["row"].to_numpy()
    out = pd.DataFrame(
        {
            "host": m["host"].to_numpy(),
            "plane_row": m["plane_row"].to_numpy(),
            "begin_ps": to_ps(xs[rows]),
            "end_ps": to_ps(xe[rows]),
            "start_us": xs[rows],
        }
    )
    # By core and begin, the longer of two that begin together first: an event ending no
    # later than one before it on its core is nested in it.
    out = out.assign(_neg_end=-out["end_ps"]).sort_values(
        ["plane_row", "begin_ps", "_neg_end"], kind="stable", ignore_index=True
    )
    before = out.groupby("plane_row")["end_ps"].cummax().groupby(out["plane_row"]).shift()
    nested = (out["end_ps"] <= before).to_numpy()
    if nested.any():
        _nested_note(run, out[nested])
        out = out[~nested].reset_index(drop=True)
    out = out.drop(columns="_neg_end")
    out["k"] = out.groupby("plane_row").cumcount()
    return out


def _nested_note(run, nested: pd.DataFrame) -> None:
    """Warn (once) that ``Steps`` events nested in others were not counted as steps."""
    hosts = ", ".join(sorted(set(map(str, nested["host"]))))
    note = (
        f"TPU host {hosts}: {len(nested)} 'Steps' event(s) inside another step of their core "
        "were not counted as steps (their ops count in the step around them)"
    )
    note_once(run, note)


def _ops_in_steps(run, marks: pd.DataFrame) -> pd.DataFrame:
    """The ``XLA Ops`` ops of the cores with their step rank ``k`` (ops of no step left
    out), self time (ps, device clock) and HLO category."""
    ops = tpu_device_ops(run)
    if not len(ops):
        return pd.DataFrame()
    ops = ops[ops["line"] == OP_LINE]
    xs, xe = xevent_times(run)
    rows = ops["row"].to_numpy()
    o_begin, o_end = to_ps(xs[rows]), to_ps(xe[rows])
    plane = ops["plane_row"].to_numpy()
    k = np.full(len(ops), -1, np.int64)
    for p, m in marks.groupby("plane_row"):
        on = np.flatnonzero(plane == p)
        ends = m["end_ps"].to_numpy()
        # The core's steps do not overlap: the first one overlapping an op is the first
        # that ends after the op begins, if it begins before the op ends.
        i = np.searchsorted(ends, o_begin[on], side="right")
        ok = i < len(ends)
        ok[ok] &= m["begin_ps"].to_numpy()[i[ok]] < o_end[on][ok]
        k[on[ok]] = m["k"].to_numpy()[i[ok]]
    keep = k >= 0
    return pd.DataFrame(
        {
            "host": ops["host"].to_numpy()[keep],
            "plane_row": plane[keep],
            "k": k[keep],
            "self_ps": ops["self_ps"].to_numpy()[keep],
            "category": ops["hlo_category"].to_numpy()[keep],
            "row": rows[keep],
        }
    )


def _per_core(marks: pd.DataFrame, ops: pd.DataFrame, collective: np.ndarray) -> pd.DataFrame:
    """Per (host, core, step rank) kept: the step's time (ps, common to its cores), its start
    and the core's self time in all ops, infeed, outfeed, host send/recv and collectives
    (the ops whose row is in ``collective``)."""
    cat = ops["category"].astype(str)
    parts = ops.assign(
        busy=ops["self_ps"],
        infeed=np.where(cat == INFEED, ops["self_ps"], 0),
        outfeed=np.where(cat == OUTFEED, ops["self_ps"], 0),
        host_sr=np.where(cat.isin(HOST_SEND_RECV), ops["self_ps"], 0),
        coll=np.where(np.isin(ops["row"], collective), ops["self_ps"], 0),
    )
    key = ["host", "plane_row", "k"]
    sums = ["busy", "infeed", "outfeed", "host_sr", "coll"]
    core = parts.groupby(key)[sums].sum().reset_index()
    # A core's steps are those it both marks and runs ops in.
    core = core.merge(marks[key], on=key)
    # Only the steps every core with steps has (per host).
    cores = core.groupby("host")["plane_row"].nunique().rename("n_cores")
    have = core.groupby(["host", "k"])["plane_row"].nunique().rename("n").reset_index()
    have = have.merge(cores, on="host")
    core = core.merge(have[have["n"] == have["n_cores"]][["host", "k"]], on=["host", "k"])
    # The step time: the longest marker of the step over the host's cores (the first such).
    dur = marks.assign(dur=marks["end_ps"] - marks["begin_ps"])
    dur = dur.sort_values(["host", "k", "dur", "plane_row"], ascending=[True, True, False, True])
    span = dur.drop_duplicates(["host", "k"])[["host", "k", "dur", "start_us"]]
    return core.merge(span, on=["host", "k"])


def _across_cores(core: pd.DataFrame) -> pd.DataFrame:
    """Per (host, step rank): XProf's TensorCore compute, input, output and idle (ps)."""
    idle = np.maximum(core["dur"] - core["busy"], 0)
    wait = core["infeed"] + core["outfeed"] + core["host_sr"] + idle
    core = core.assign(optimal=core["dur"] - wait)
    g = core.groupby(["host", "k"])
    per = g.agg(
        compute=("optimal", "min"),
        infeed=("infeed", "max"),
        outfeed=("outfeed", "mean"),
        coll=("coll", "min"),
        step=("dur", "min"),
        start_us=("start_us", "first"),
    ).reset_index()
    per["idle"] = np.maximum(per["step"] - per["compute"] - per["infeed"] - per["outfeed"], 0)
    # Beyond XProf: the collectives every core ran out of the TensorCore compute.
    per["coll"] = np.clip(per["coll"], 0, np.maximum(per["compute"], 0))
    per["compute"] = per["compute"] - per["coll"]
    return per


@per_run
def tpu_steps(run) -> pd.DataFrame:
    """The TPU hosts' steps by XProf's TPU rules (module docstring): schema.STEPS rows, empty
    where no TPU core marks a step."""
    marks = _markers(run)
    if not len(marks):
        return schema.empty(schema.STEPS)
    ops = _ops_in_steps(run, marks)
    if not len(ops):
        return schema.empty(schema.STEPS)
    collective = collective_ops(run)
    rows = collective["row"].to_numpy(np.int64) if collective is not None else np.zeros(0)
    per = _across_cores(_per_core(marks, ops, rows))
    if not len(per):
        return schema.empty(schema.STEPS)
    # XProf numbers device steps after the host's own step groups.
    ev = run.events
    groups = ev["group_id"].groupby(ev["host"].astype(str), observed=True).max()
    base = per["host"].map(groups).fillna(-1).astype(np.int64).to_numpy() + 1
    number = base + per["k"].to_numpy()
    zero = np.zeros(len(per))
    us = {c: per[c].to_numpy(np.float64) / 1e6 for c in ("compute", "infeed", "outfeed", "idle")}
    us["coll"] = per["coll"].to_numpy(np.float64) / 1e6
    out = pd.DataFrame(
        {
            "host": pd.Categorical(per["host"]),
            "step": pd.array(number, dtype="Int64"),
            "group_id": pd.array(number.astype(np.int32), dtype="Int32"),
            "start_us": per["start_us"].to_numpy(np.float64),
            "step_time_us": per["step"].to_numpy(np.float64) / 1e6,
            "device_compute_us": us["compute"],
            "device_to_device_us": zero,
            "device_collectives_us": us["coll"],
            "host_compute_us": zero,
            "kernel_launch_us": zero,
            "input_us": us["infeed"],
            "output_us": us["outfeed"],
            "compile_us": zero,
            "all_others_us": us["idle"],
            "device_compute_16_us": zero,
            "device_compute_32_us": zero,
            "host_wait_input_us": zero,
            "host_to_device_us": us["infeed"],
        }
    )
    return schema.conform(out.sort_values(["host", "start_us"], ignore_index=True), schema.STEPS)


# XProf's input and output thresholds (% of step time: infeed, outfeed).
HIGHLY_BOUND, MODERATELY_BOUND = 20.0, 5.0


def _kept(steps: pd.DataFrame) -> pd.DataFrame:
    """The steps XProf's TPU verdict averages over: per host, all but the first and the
    last above DROP_EDGE_STEPS_ABOVE steps."""
    rank = steps.groupby("host", observed=True).cumcount()
    size = steps.groupby("host", observed=True)["step"].transform("size")
    edge = (size > DROP_EDGE_STEPS_ABOVE) & ((rank == 0) | (rank == size - 1))
    return steps[~edge.to_numpy()]


def _bound(share: float, what: str, waiting: str) -> tuple[str, str]:
    """XProf's (classification, sentence) of an input or output share (InputAnalysis with
    no 'All Others' share, OutputAnalysis)."""
    pct = f"{share:.1f}"
    if share >= HIGHLY_BOUND:
        return "host", (
            f"Your program is HIGHLY {what}-bound because {pct}% of the total step time "
            f"sampled is {waiting}. Therefore, you should first focus on reducing the "
            f"{what} time."
        )
    if share >= MODERATELY_BOUND:
        return "both", (
            f"Your program is MODERATELY {what}-bound because {pct}% of the total step "
            f"time sampled is {waiting}. Therefore, you would need to reduce both the "
            f"{what} time and other time."
        )
    if what == "output":
        return "device", ""
    return "device", (
        f"Your program is NOT input-bound because only {pct}% of the total step time "
        "sampled is waiting for input. Therefore, you should focus on reducing other time."
    )


def tpu_verdicts(run, no_input_pipeline_next_step: str) -> dict | None:
    """XProf's TPU verdicts (ComputeTpuBottleneckAnalysis) on the TPU steps, as the
    overview's verdict fields plus ``recommendations``; None without a TPU step."""
    steps = tpu_steps(run)
    if not len(steps):
        return None
    kept = _kept(steps)
    # XProf's StepTimeMs: the step's compute, input, output and idle (its step time unless
    # the ops' self time overran it and idle was held at 0).
    parts = ["device_compute_us", "input_us", "output_us", "all_others_us"]
    total = float(kept[parts].to_numpy().sum())
    share = lambda c: 100.0 * float(kept[c].sum()) / total if total > 0 else 0.0  # noqa: E731
    input_cls, input_statement = _bound(share("input_us"), "input", "waiting for input")
    _, output_statement = _bound(share("output_us"), "output", "spent on output")
    next_step = (
        no_input_pipeline_next_step
        if input_cls in ("host", "both")
        else "You may skip the rest of this page."
    )
    return {
        "input_classification": input_cls,
        "input_statement": input_statement,
        "output_statement": output_statement,
        "kernel_launch_classification": "no",
        "kernel_launch_statement": "",
        "all_other_classification": "no",
        "all_other_statement": "",
        "device_collectives_classification": "no",
        "device_collectives_statement": "",
        "summary_next_step": next_step,
        "recommendations": [s for s in (input_statement, output_statement) if s],
    }
