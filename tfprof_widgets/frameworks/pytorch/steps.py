"""torch-tb-profiler's step-time breakdown (``run.torch_steps``) and the overview's verdict
in its terms.

The rules are those of torch-tb-profiler 0.4.3 (its ``StepParser`` and ``OverallParser``):

* Steps: the host's ``ProfilerStep#N`` events (none: one row over the host's operators,
  the whole capture, numbered <NA>: tb_plugin's step 0, which the steps table has not).
  Where the runtime calls that lie wholly inside a step launched GPU work, the step ends when
  that work ends if it is later, and it starts no earlier than the previous step's end (the
  first step: than the end of GPU work launched before any step that finished before the first
  step's own GPU work). Trailing steps that launched nothing, and a last step that launched
  under 80 % of the device activities of the one before (the profiler probably missed some of
  its kernels), are not ``complete``: tb_plugin leaves them out of its overview.
* Roles, each instant of a step counted once for the first that is active then: Kernel,
  Memcpy, Memset, Communication (kernels launched by a ``nccl:``/``gloo:`` collective op, and
  those ops), Runtime (CUDA runtime calls), DataLoader (``enumerate(DataLoader)#...__next__``),
  CPU Exec (every other ``cpu_op`` or ``python`` event on the host); what is left is Other.
* Ours on purpose: Kineto's ``cuda_runtime`` category is Runtime (0.4.3 knows only torch 1.9's
  ``Runtime``; kineto's later plugin maps it so), and so is ``cuda_driver`` (cuBLAS's
  ``cuLaunchKernelEx`` in recent PyTorch; in neither plugin); a DataLoader batch recorded as a
  ``user_annotation`` (PyTorch 2 records it so) is DataLoader time (0.4.3 drops user
  annotations other than steps and collectives, so it finds no DataLoader time in a PyTorch 2
  trace); GPU user annotations (a copy of host ranges on the GPU's timeline) are no steps
  (0.4.3 counts the ``ProfilerStep#N`` copies there as more steps).
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd

from ... import schema, stat_columns
from ...analysis.event_index import on_device, times_ps
from ...analysis.memo import per_run
from ...analysis.nesting import interval_union
from . import names as torch_names
from .kernels import torch_gpu_metrics
from .names import ANNOTATION, KERNEL, MEMCPY, MEMSET, OPERATOR, RUNTIME

# The roles in torch-tb-profiler's priority order, as the table's columns.
ROLES = ("kernel", "memcpy", "memset", "communication", "runtime", "dataloader", "cpu_exec")
COMMUNICATION, DATALOADER, CPU_EXEC = 3, 5, 6
ROLE_LABELS = {
    "kernel_us": "Kernel",
    "memcpy_us": "Memcpy",
    "memset_us": "Memset",
    "communication_us": "Communication",
    "runtime_us": "Runtime",
    "dataloader_us": "DataLoader",
    "cpu_exec_us": "CPU Exec",
    "other_us": "Other",
}
# torch-tb-profiler's thresholds: the DataLoader and communication shares it reports, and the
# GPU utilization under which it calls a GPU idle.
DATALOADER_PERCENT, COMMUNICATION_PERCENT, LOW_GPU_BUSY_PERCENT = 5.0, 10.0, 50.0
# Launch-bound, graded as XProf grades kernel launch time.
HIGHLY_RUNTIME, MODERATELY_RUNTIME = 15.0, 3.0
HIGHLY_DATALOADER = 20.0
# torch-tb-profiler's memory rule: an allocated peak above this share of the GPU's memory.
MEMORY_LIMIT_SHARE = 0.9
# A last step that launched under this share of its predecessor's device activities.
_TAIL_SHARE = 0.8


def _event_kinds(run) -> tuple[np.ndarray, np.ndarray]:
    """Per event: its role (-1: none), and whether it is a step marker."""
    ev = run.events
    n = len(ev)
    kind = torch_names.event_types(run).copy()
    device = on_device(run)
    kind[device & (kind == ANNOTATION)] = -1  # GPU user annotations
    codes = ev["name"].cat.codes.to_numpy()
    names = pd.Series(ev["name"].cat.categories.astype(str))
    step_name = torch_names.is_step_marker(names)[codes]
    loader = torch_names.is_dataloader_next(names)[codes]
    collective = torch_names.is_collective(names)[codes]
    # User annotations count only as steps, DataLoader batches or collectives.
    named = step_name | loader | collective
    host_range = (kind == OPERATOR) | ((kind == ANNOTATION) & named)
    role = np.full(n, -1, np.int8)
    for k, r in ((KERNEL, 0), (MEMCPY, 1), (MEMSET, 2), (RUNTIME, 4)):
        role[kind == k] = r
    role[host_range] = CPU_EXEC
    role[host_range & collective] = COMMUNICATION
    role[host_range & loader] = DATALOADER
    step = host_range & step_name
    role[step] = -1
    ext, has_ext = stat_columns.numbers(run.stat_store, "External id", n)
    comm_ids = ext[host_range & collective & has_ext]
    if len(comm_ids):
        role[(kind == KERNEL) & has_ext & np.isin(ext, comm_ids)] = COMMUNICATION
    return role, step


def _role_time(
    role: np.ndarray, start: np.ndarray, end: np.ndarray, s0: np.ndarray, s1: np.ndarray
) -> np.ndarray:
    """Per step [s0, s1) and role: the time that role is the first active one; the last
    column is Other (no role active). Steps must not overlap."""
    out = np.zeros((len(s0), len(ROLES) + 1), np.int64)
    if not len(s0):
        return out
    merged = [interval_union(start[role == r], end[role == r]) for r in range(len(ROLES))]
    bounds = np.unique(np.concatenate([s0, s1, *[x for m in merged for x in m]]))
    lo, hi = bounds[:-1], bounds[1:]
    step = np.searchsorted(s0, lo, side="right") - 1
    inside = (step >= 0) & (lo < s1[np.maximum(step, 0)])
    lo, hi, step = lo[inside], hi[inside], step[inside]
    top = np.full(len(lo), len(ROLES), np.int64)
    for r in range(len(ROLES) - 1, -1, -1):
        ms, me = merged[r]
        if not len(ms):
            continue
        k = np.searchsorted(ms, lo, side="right") - 1
        covered = (k >= 0) & (lo < me[np.maximum(k, 0)])
        top[covered] = r
    np.add.at(out, (step, top), hi - lo)
    return out


def _step_spans(run, s0: np.ndarray, s1: np.ndarray, role: np.ndarray, start, end):
    """tb_plugin's step spans from one host's host-side spans ``s0``-``s1`` (sorted): (start,
    end, matched device activities per step)."""
    s0, s1 = s0.copy(), s1.copy()
    n = len(run.events)
    corr, has_corr = stat_columns.numbers(run.stat_store, "correlation", n)
    gpu = np.flatnonzero(on_device(run) & np.isin(role, (0, 1, 2, COMMUNICATION)) & has_corr)
    rt = np.flatnonzero((role == 4) & has_corr)
    # Each runtime call wholly inside a step, and the device activities it launched.
    k = np.searchsorted(s0, start[rt], side="right") - 1
    ok = (k >= 0) & (end[rt] <= s1[np.maximum(k, 0)])
    rt, k = rt[ok], k[ok]
    step_of = pd.Series(k, index=corr[rt]).groupby(level=0).first()
    hit = step_of.reindex(corr[gpu]).to_numpy()
    matched = ~np.isnan(hit)
    g, gk = gpu[matched], hit[matched].astype(np.int64)
    count = np.bincount(gk, minlength=len(s0))
    dmin = np.full(len(s0), np.iinfo(np.int64).max)
    dmax = np.full(len(s0), np.iinfo(np.int64).min)
    np.minimum.at(dmin, gk, start[g])
    np.maximum.at(dmax, gk, end[g])
    prev = s0[0]
    if count[0]:
        before = end[gpu[~matched]]
        before = before[before < dmin[0]]
        prev = max(prev, before.max()) if len(before) else prev
    # Each step starts where the previous one ended, at the earliest, and ends no earlier
    # than it starts: a marker nested in or overlapping the one before (torch never writes
    # one) gave a negative step time.
    for i in range(len(s0)):
        s0[i] = max(prev, s0[i])
        s1[i] = max(s1[i], dmax[i], s0[i]) if count[i] else max(s1[i], s0[i])
        prev = s1[i]
    return s0, s1, count


def _warn_overlaps(host: str, numbers: np.ndarray, s0: np.ndarray, s1: np.ndarray) -> None:
    """Say where a host's ProfilerStep markers (sorted by start) overlap: each such step
    is counted from the end of the one before it."""
    if len(s0) < 2:
        return
    ends_before = np.maximum.accumulate(s1)[:-1]
    bad = np.flatnonzero(s0[1:] < ends_before) + 1
    if len(bad):
        warnings.warn(
            f"{host}: {len(bad)} ProfilerStep marker(s) start inside the one before "
            f"(ProfilerStep#{numbers[bad[0]]} inside ProfilerStep#{numbers[bad[0] - 1]}): "
            "each is counted from where the step before it ends",
            RuntimeWarning,
            stacklevel=4,
        )


def _complete(count: np.ndarray) -> np.ndarray:
    """tb_plugin's tail rule: steps after the last that launched device work, and that one
    when it launched under 80 % of what the step before it did, are left out."""
    keep = np.ones(len(count), bool)
    if len(count) < 2 or not count.any():
        return keep
    last = int(np.flatnonzero(count)[-1])
    n_keep = last + 1
    if last > 0 and count[last - 1] * _TAIL_SHARE > count[last]:
        n_keep = last
    keep[n_keep:] = False
    return keep


# The whole-capture row's step number before it becomes <NA> (no ProfilerStep has it).
NO_STEP = np.iinfo(np.int64).min


@per_run
def torch_steps(run) -> pd.DataFrame:
    """One row per host and ``ProfilerStep#N``: the step's time by torch-tb-profiler's roles
    (schema.TORCH_STEPS)."""
    ev = run.events
    if not len(ev):
        return schema.empty(schema.TORCH_STEPS)
    role, step = _event_kinds(run)
    start, end = times_ps(run)
    host = np.asarray(ev["host"].cat.codes, np.int64)
    hosts = ev["host"].cat.categories.astype(str)
    names = ev["name"].cat.categories.astype(str)
    parts = []
    for h in np.unique(host):
        mine = host == h
        rows = np.flatnonzero(step & mine)
        if len(rows):
            rows = rows[np.argsort(start[rows], kind="stable")]
            number = torch_names.step_numbers(
                pd.Series(names[ev["name"].cat.codes.to_numpy()[rows]])
            )
            s0, s1 = start[rows], end[rows]
        else:  # no marker: one row over the host's operators, the whole capture
            ops = mine & ((role >= DATALOADER) | step)
            if not ops.any():
                continue
            s0, s1 = np.array([start[ops].min()]), np.array([end[ops].max()])
            # No step number (tb_plugin's 0 is none the steps table has): <NA>, below.
            number = np.full(1, NO_STEP, np.int64)
        _warn_overlaps(hosts[h], number, s0, s1)
        s0, s1, count = _step_spans(run, s0, s1, np.where(mine, role, -1), start, end)
        r = np.flatnonzero(mine & (role >= 0))
        by_role = _role_time(role[r], start[r], end[r], s0, s1)
        part = {"host": np.full(len(s0), hosts[h], object), "step": number, "start_us": s0 / 1e6}
        part["step_time_us"] = (s1 - s0) / 1e6
        for i, name in enumerate((*ROLES, "other")):
            part[f"{name}_us"] = by_role[:, i] / 1e6
        part["complete"] = _complete(count)
        parts.append(part)
    if not parts:
        return schema.empty(schema.TORCH_STEPS)
    # One frame from the hosts' columns (a frame per host, then concat, cost more).
    out = {c: np.concatenate([p[c] for p in parts]) for c in parts[0]}
    out["host"] = pd.Categorical(pd.Series(out["host"], dtype=str))
    # int64 throughout (an 18-digit step number is exact), <NA> for the whole-capture row.
    number = np.asarray(out["step"], np.int64)
    out["step"] = pd.arrays.IntegerArray(number, number == NO_STEP)
    return schema.conform(pd.DataFrame(out), schema.TORCH_STEPS)


def shares(steps: pd.DataFrame) -> dict[str, float]:
    """Each role's share of the complete steps' time, % (keys as the table's columns)."""
    kept = steps[steps["complete"]]
    total = float(kept["step_time_us"].sum())
    return {c: 100.0 * float(kept[c].sum()) / total if total else 0.0 for c in ROLE_LABELS}


def verdicts(run) -> dict | None:
    """The overview's verdicts in torch-tb-profiler's terms and by its rules, on the steps
    table's input share (None without a step); ``recommendations`` its advice and
    ``dataloader_percent_tb`` its own DataLoader share."""
    steps = torch_steps(run)
    if not len(steps) or not steps["complete"].any():
        return None
    metrics = torch_gpu_metrics(run)
    low = metrics[metrics["gpu_utilization_percent"] < LOW_GPU_BUSY_PERCENT]
    pct = shares(steps)
    # One input figure on every page (issue 36): the verdict quotes the steps table's input
    # share (the overview's and the input pipeline's, over the steps they average), not
    # tb_plugin's DataLoader role share (33.4 % against 40.1 % on resnet50: its own step
    # spans, to the end of each step's GPU work, all its complete steps, and the DataLoader
    # counted only where no kernel, copy or runtime call runs). tb_plugin's stays in
    # OverviewSummary.dataloader_percent_tb and in the operators view's breakdown.
    # (The input pipeline's steps are those the overview averages, with their input time.)
    kept = run.input_pipeline.steps
    total = float(kept["step_time_us"].sum())
    tb_loader = pct["dataloader_us"]
    pct["dataloader_us"] = 100.0 * float(kept["input_us"].sum()) / total if total > 0 else 0.0
    out = _verdict_texts(pct, list(zip(low["device"], low["gpu_utilization_percent"])))
    out["recommendations"] += memory_advice(run)
    out["dataloader_percent_tb"] = tb_loader
    return out


def memory_advice(run) -> list[str]:
    """torch-tb-profiler's memory rule: a GPU whose allocated peak passed 90 % of its
    memory. Reads the memory summary where it was made already (the memory view), else just
    each allocator's peak (:func:`allocator_peaks`), not the whole summary."""
    summary = vars(run).get("memory_summary")
    if summary is not None:
        peaks = zip(summary["allocator"], summary["peak_in_use_bytes"])
    else:
        peaks = ((a, v) for (_, a), v in allocator_peaks(run).items())
    planes = run.planes
    size = dict(zip(planes["plane"].astype(str), planes["memory_size"]))
    for allocator, peak in peaks:
        allocator = str(allocator)
        total = size.get(f"/device:{allocator}")
        if not allocator.startswith("GPU:") or total is None or pd.isna(total) or not total:
            continue
        if peak > MEMORY_LIMIT_SHARE * total:
            return [
                f"Device memory usage is at the limit of device memory capacity "
                f"({100 * peak / total:.1f}% of {total / 2**30:.1f}GB on "
                f"{allocator}). To get better value of your GPU or to use larger batch size "
                "for training, please refer to Gradient Checkpoint or Automatic Mixed "
                "Precision."
            ]
    return []


def allocator_peaks(run) -> pd.Series:
    """Each (host, allocator)'s ``peak_in_use_bytes`` of ``run.memory_summary`` (in use at
    the profile's peak), and nothing else of it, from ``run.memory``: the most in use is the
    peak's own value, whichever of equal peaks XProf picks."""
    memory = run.memory
    return memory.groupby(["host", "allocator"], observed=True, sort=True)["in_use_bytes"].max()


def _verdict_texts(pct: dict[str, float], low_gpus: list[tuple[str, float]]) -> dict:
    """The verdicts from the roles' shares (%) and the GPUs under 50 % utilization."""
    loader, runtime, comm = pct["dataloader_us"], pct["runtime_us"], pct["communication_us"]
    if loader >= DATALOADER_PERCENT:
        input_cls = "host" if loader >= HIGHLY_DATALOADER else "both"
        input_text = (
            f"This run has high time cost on input data loading. {loader:.1f}% of the step "
            "time is in DataLoader. You could try to set num_workers on DataLoader's "
            "construction and enable multi-processes on data loading."
        )
    else:
        input_cls = "device"
        input_text = (
            f"Your program is NOT input-bound because only {loader:.1f}% of the step time is "
            "in the DataLoader."
        )
    launch_cls = (
        "high"
        if runtime >= HIGHLY_RUNTIME
        else "moderate"
        if runtime >= MODERATELY_RUNTIME
        else "no"
    )
    launch_text = (
        f"{runtime:.1f}% of the step time is spent in the CUDA runtime (kernel launches, "
        "copies, synchronisation) while the GPU is idle: launch fewer, larger kernels "
        "(torch.compile, CUDA graphs with mode='reduce-overhead', a larger batch)."
        if launch_cls != "no"
        else ""
    )
    idle_text = (
        ", ".join(f"{d.removeprefix('/device:')} ({u:.1f}%)" for d, u in low_gpus)
        + (" has" if len(low_gpus) == 1 else " have")
        + " low utilization (the share of the steps' time a kernel runs). You could try to "
        "increase batch size to improve. Note: Increasing batch size may affect the speed "
        "and stability of model convergence."
        if low_gpus
        else ""
    )
    comm_text = (
        f"This run has high time cost on communication. {comm:.1f}% of the step time is in "
        "communication. You could try Gradient Compression or Gradient Accumulation or "
        "increase the batch size."
        if comm > COMMUNICATION_PERCENT
        else ""
    )
    if input_cls != "device":
        next_step = "Look at the DataLoader: its worker processes, pinned memory and prefetching."
    elif launch_cls == "high":
        next_step = "Look at the operator view: the operators that launch the most kernels."
    elif idle_text:
        next_step = "Look at the trace: what the host does while the GPU waits."
    else:
        next_step = "Look at the kernel view: the longest kernels and their occupancy."
    return {
        "input_classification": input_cls,
        "input_statement": input_text,
        "kernel_launch_classification": launch_cls,
        "kernel_launch_statement": launch_text,
        "all_other_classification": "high" if idle_text else "no",
        "all_other_statement": idle_text,
        "device_collectives_classification": "high" if comm_text else "no",
        "device_collectives_statement": comm_text,
        "output_statement": "",
        "summary_next_step": next_step,
        "recommendations": [
            s
            for s in (
                input_text if input_cls != "device" else "",
                launch_text,
                comm_text,
                idle_text,
            )
            if s
        ],
    }
