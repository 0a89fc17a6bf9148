"""HTA's potential stragglers of a multi-rank PyTorch job at exact times (HTA 0.5's
``get_potential_stragglers`` with its default ``find_stragglers_with_late_start_comm_kernels``
and ``HTA_DISABLE_NS_ROUNDING=1``).

HTA's rule, followed here:

* the steps are the ``ProfilerStep#N`` of each rank before its last one (HTA drops the last,
  usually cut by the profiler's stop); a host event belongs to the step whose marker holds its
  start, a GPU activity to its launching call's step (by correlation id);
* the mean iteration time is the span from the earliest start to the latest end of every event
  of those steps, all ranks together, over the number of steps;
* a long communication kernel is an ``ncclKernel*`` GPU activity of a step N > 0 lasting at
  least 1% of that mean (the newer ``ncclDevKernel_*`` names are not HTA's);
* per rank, stream, step and kernel name the last such kernel is kept; the (stream, name) whose
  kernels' durations differ most across ranks (the sample standard deviation per step, averaged
  over the steps) is the metric kernel;
* a rank ranks by when that kernel starts (HTA: after the earliest event of the steps, over the
  mean iteration time); per step the ranks starting at or after the ``num_candidates``-th
  latest are flagged, and the ``num_candidates`` ranks flagged most often are the candidates
  (ties: lower rank first).

HTA fails on a one-rank job (no spread across ranks); here that, and a job without such
kernels, is an empty table.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ... import schema
from ...analysis.collective_kinds import host_ranks
from ...analysis.event_index import event_line_ids, on_device, times_ps
from .hta import _host_codes, _names, launch_pairs
from .names import is_step_marker, step_numbers
from .rules import last_step_starts
from .schema import STRAGGLER_CANDIDATES

MIN_NORMALIZED_DURATION = 0.01
NUM_CANDIDATES = 2


def _host_steps(run) -> np.ndarray:
    """Per event: the N of the ``ProfilerStep#N`` (a step before its host's last) whose marker
    holds the start of this host event, -1 elsewhere and on devices."""
    ev = run.events
    names = pd.Series(ev["name"].cat.categories.astype(str))
    codes = ev["name"].cat.codes.to_numpy()
    number = np.r_[np.where(is_step_marker(names), step_numbers(names), -1), -1][codes]
    host, _ = _host_codes(run)
    start, end = times_ps(run)
    start_us = ev["start_us"].to_numpy()
    kept = ~on_device(run) & (start_us < last_step_starts(run)[host])
    out = np.full(len(ev), -1, np.int64)
    marker = np.flatnonzero(kept & (number >= 0))
    # A few hosts, each at once: markers of one host do not overlap (steps.py says where).
    for h in np.unique(host[marker]):
        mine = marker[host[marker] == h]
        mine = mine[np.argsort(start[mine], kind="stable")]
        rows = np.flatnonzero(kept & (host == h))
        at = np.searchsorted(start[mine], start[rows], side="right") - 1
        inside = (at >= 0) & (start[rows] < end[mine[np.maximum(at, 0)]])
        out[rows[inside]] = number[mine[at[inside]]]
    return out


def _step_events(run) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The rows of the events of the steps (host events, then GPU activity) and each one's step,
    and the GPU rows' count at the end."""
    step = _host_steps(run)
    pairs = launch_pairs(run)
    gpu, call = pairs["gpu"].to_numpy(), pairs["call"].to_numpy()
    gpu_step = np.where(call >= 0, step[np.maximum(call, 0)], -1)
    cpu = np.flatnonzero(step >= 0)
    gpu, gpu_step = gpu[gpu_step >= 0], gpu_step[gpu_step >= 0]
    return (
        np.r_[cpu, gpu],
        np.r_[step[cpu], gpu_step],
        np.r_[np.zeros(len(cpu), bool), np.ones(len(gpu), bool)],
    )


def _metric_kernels(run, min_normalized_duration: float) -> tuple[pd.DataFrame, float, float]:
    """The last long NCCL kernel of each (host, stream, step, name), with the steps' earliest
    start (ps) and mean iteration time (ps)."""
    rows, step, is_gpu = _step_events(run)
    start, end = times_ps(run)
    if not len(rows):
        return pd.DataFrame(), 0.0, 0.0
    t_min = start[rows].min()
    mean_iter = float(end[rows].max() - t_min) / len(np.unique(step))
    gpu, gstep = rows[is_gpu], step[is_gpu]
    dur = end[gpu] - start[gpu]
    nccl = pd.Series(_names(run, gpu)).str.startswith("ncclKernel").to_numpy(bool)
    long = nccl & (gstep > 0) & (dur >= mean_iter * min_normalized_duration)
    host, _ = _host_codes(run)
    k = gpu[long]
    df = pd.DataFrame({"h": host[k], "stream": event_line_ids(run)[k], "step": gstep[long],
                       "name": _names(run, k), "ts": start[k], "dur": dur[long]})  # fmt: skip
    df = df[df["stream"].to_numpy() > 0].sort_values("ts", kind="stable")
    last = df.groupby(["h", "stream", "step", "name"], sort=True).tail(1)
    return last, float(t_min), mean_iter


def _pick(last: pd.DataFrame, mean_iter: float) -> pd.DataFrame:
    """The rows of the metric kernel: the (stream, name) whose durations differ most across
    ranks on average over the steps."""
    spread = last.assign(d=last["dur"].to_numpy() / mean_iter)
    spread = spread.groupby(["stream", "step", "name"], sort=True)["d"].std()
    spread = spread.groupby(level=["stream", "name"], sort=True).mean().dropna()
    if not len(spread):
        return last.iloc[:0]
    stream, name = spread.idxmax()
    return last[(last["stream"] == stream) & (last["name"] == name)]


def straggler_candidates(
    run,
    num_candidates: int = NUM_CANDIDATES,
    min_normalized_duration: float = MIN_NORMALIZED_DURATION,
) -> pd.DataFrame:
    """HTA's potential stragglers (STRAGGLER_CANDIDATES): per rank and step, when its metric
    kernel (the last long NCCL kernel of the stream and name whose durations differ most across
    ranks) starts, and whether HTA names the rank a candidate (see the module's rule)."""
    num_candidates = max(int(num_candidates), 1)
    last, t_min, mean_iter = _metric_kernels(run, min_normalized_duration)
    if not len(last):
        return schema.empty(STRAGGLER_CANDIDATES)
    m = _pick(last, mean_iter).sort_values(["step", "h"], kind="stable").reset_index(drop=True)
    _, hosts = _host_codes(run)
    out = pd.DataFrame({"host": hosts[m["h"].to_numpy()]})
    out["rank"] = host_ranks(run, out["host"].to_numpy())
    out["step"] = m["step"].to_numpy()
    out["stream"] = m["stream"].to_numpy()
    out["kernel"] = m["name"].to_numpy()
    ts = m["ts"].to_numpy(np.float64)
    out["start_us"] = (ts - t_min) / 1e6
    out["duration_us"] = m["dur"].to_numpy(np.float64) / 1e6
    out["normalized_start_time"] = (ts - t_min) / mean_iter
    by_step = out.groupby("step")["start_us"]
    out["after_first_us"] = out["start_us"] - by_step.transform("min")
    # HTA's threshold is the num_candidates-th latest start of the step (all, with fewer ranks).
    desc = by_step.rank(method="first", ascending=False).to_numpy()
    nth = out["start_us"].where(desc <= num_candidates).groupby(out["step"]).transform("min")
    out["late_in_step"] = out["start_us"].to_numpy() >= nth.to_numpy()
    counts = out.groupby("host", observed=True, sort=False)["late_in_step"].sum()
    order = pd.DataFrame({"host": counts.index, "n": counts.to_numpy()})
    order["rank"] = host_ranks(run, order["host"].to_numpy())
    order = order.sort_values(["n", "rank", "host"], ascending=[False, True, True])
    chosen = set(order["host"].iloc[:num_candidates])
    out["late_steps"] = out["host"].map(counts).to_numpy(np.int64)
    out["is_candidate"] = out["host"].isin(chosen).to_numpy()
    out["host"] = pd.Categorical(out["host"])
    return schema.conform(out, STRAGGLER_CANDIDATES)
