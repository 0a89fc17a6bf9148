"""HolisticTraceAnalysis (HTA)'s per-rank analyses of a PyTorch (Kineto) trace, at exact times:
the idle time breakdown of each stream, kernel launch statistics, communication/computation
overlap and the launch queue length of each stream (HTA 0.5 with ``HTA_DISABLE_NS_ROUNDING=1``;
by default it rounds every start up and every end down to the µs).

The GPU activity counted is :func:`..gpu_time.device_activity`: every event on a GPU's stream
lines that a host call made before the host's last ``ProfilerStep#N`` began launched (HTA's
``include_last_profiler_step=False``), as the temporal breakdown counts it. HTA takes any event
with a ``stream`` arg for GPU work, the host-side launch events of ``torch.compile``'s Triton
kernels included; ours does not. Of these four analyses that misleads HTA's overlap (such an
event is a 'computation kernel' while it runs on the host); the idle breakdown filters by
category, and the launch statistics and queue length need a correlation id, which it lacks.

A device activity's host call is the host event carrying the same correlation id (the last
recorded, per host). A rank is the one Kineto's ``distributedInfo`` names, where the run keeps
it (the plane stat ``rank`` of a host's plane); <NA> otherwise (HTA calls a lone trace rank 0).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ... import schema, stat_columns
from ...analysis.collective_kinds import host_ranks
from ...analysis.collectives import overlap_table
from ...analysis.event_index import (
    event_line_ids,
    event_plane_rows,
    innermost_around,
    on_device,
    plane_kinds,
    times_ps,
)
from ...analysis.gpu_time import KINDS, device_activity, kernel_kinds
from ...analysis.memo import per_run
from .rules import host_codes, last_step_starts
from .schema import (
    IDLE_TIME_BREAKDOWN,
    KERNEL_LAUNCH_STATS,
    QUEUE_LENGTH_SUMMARY,
)

# HTA's GPU activity categories of the idle time breakdown (it leaves out e.g. cuda_sync).
IDLE_CATS = ("kernel", "Kernel", "gpu_memset", "Memset", "gpu_memcpy", "Memcpy", "mtia_ccp_events")
# The calls HTA's launch statistics pair with GPU activity (include_memory_events=True).
HTA_LAUNCH_STATS_CALLS = frozenset(
    ("cudaLaunchKernel", "cudaLaunchKernelExC", "cudaMemcpyAsync", "cudaMemsetAsync",
     "runFunction - job_prep_and_submit_for_execution")
)  # fmt: skip
# The calls HTA's queue length counts as enqueuing work (get_runtime_launch_events_query).
QUEUE_CALLS = HTA_LAUNCH_STATS_CALLS | frozenset(
    ("cuLaunchKernel", "hipLaunchKernel", "hipExtModuleLaunchKernel", "hipMemsetAsync",
     "hipMemcpyAsync", "hipMemcpyWithStream")
)  # fmt: skip
RUNTIME_CATS = ("cuda_runtime", "cuda_driver", "Runtime")
CONSECUTIVE_KERNEL_DELAY_US = 30.0
RUNTIME_CUTOFF_US = 50.0
LAUNCH_DELAY_CUTOFF_US = 100.0
CUDA_MAX_LAUNCH_QUEUE_PER_STREAM = 1024
_COMPUTATION, _COMMUNICATION = KINDS.index("COMPUTATION"), KINDS.index("COMMUNICATION")


def _names(run, rows: np.ndarray) -> np.ndarray:
    """The names of events ``rows`` as strings (object array)."""
    name = run.events["name"].array
    cats = np.asarray(name.categories.astype(str), object)
    return cats[np.asarray(name.codes)[rows]]


@per_run
def _cats(run) -> pd.Categorical:
    return stat_columns.categorical(run.stat_store, "cat", len(run.events))


def _cat_in(run, cats: tuple[str, ...]) -> np.ndarray:
    """Per event: whether its Kineto ``cat`` is one of ``cats``."""
    cat = _cats(run)
    flag = np.r_[np.isin(np.asarray(cat.categories, object), cats), False]
    return flag[np.asarray(cat.codes)]  # code -1 (no cat) takes the last, False


def _host_codes(run) -> tuple[np.ndarray, np.ndarray]:
    """Each event's host as a code, and the hosts' names by code."""
    names = run.planes["host"].astype("category").array.categories
    return host_codes(run), np.asarray(names, object)


@per_run
def launch_pairs(run) -> pd.DataFrame:
    """Each counted GPU activity (``gpu``, a row of run.events) and the host event with its
    correlation id (``call``; -1 where none), with ``host`` (code) and ``correlation``.
    Shared by the analyses (computed once per run): not to be changed in place."""
    n = len(run.events)
    corr, has = stat_columns.numbers(run.stat_store, "correlation", n)
    host, _ = _host_codes(run)
    dev = device_activity(run)
    dev = dev[has[dev]]
    calls = np.flatnonzero(has & ~on_device(run))
    owner = pd.DataFrame({"host": host[calls], "correlation": corr[calls], "call": calls})
    owner = owner.drop_duplicates(["host", "correlation"], keep="last")
    pairs = pd.DataFrame({"host": host[dev], "correlation": corr[dev], "gpu": dev})
    pairs = pairs.merge(owner, on=["host", "correlation"], how="left", sort=False)
    pairs["call"] = pairs["call"].fillna(-1).astype(np.int64)
    return pairs


def _stream_keys(run, rows: np.ndarray) -> tuple[np.ndarray, pd.DataFrame]:
    """Per row: the number of its (host, device, stream), and those triples by number."""
    host, hosts = _host_codes(run)
    plane = event_plane_rows(run)[rows]
    stream = event_line_ids(run)[rows]
    triples, number = np.unique(
        np.c_[host[rows], plane, stream].astype(np.int64), axis=0, return_inverse=True
    )
    number = number.reshape(-1)
    streams = pd.DataFrame(triples.reshape(-1, 3), columns=["h", "p", "stream"])
    planes = run.planes["plane"].astype(str).to_numpy(object)
    streams["host"] = hosts[streams["h"].to_numpy()]
    streams["rank"] = host_ranks(run, streams["host"].to_numpy())
    streams["device"] = planes[streams["p"].to_numpy()]
    return number, streams


def idle_time_breakdown(
    run, consecutive_kernel_delay_us: float = CONSECUTIVE_KERNEL_DELAY_US
) -> pd.DataFrame:
    """Each stream's idle time by why it waited (IDLE_TIME_BREAKDOWN), HTA's
    ``get_idle_time_breakdown``: the gap before each kernel, memcpy or memset on a stream
    (from the end of the one before it there) is a host wait where the call that launched it
    began after that end, a kernel wait where it is shorter than
    ``consecutive_kernel_delay_us``, and other time otherwise. A category appears where some
    activity of the stream falls in it (a stream's first activity has no gap: 'other', 0)."""
    pairs = launch_pairs(run)
    n = len(run.events)
    rows = device_activity(run)
    rows = rows[_cat_in(run, IDLE_CATS)[rows]]
    start, end = times_ps(run)
    call_of = np.full(n, -1, np.int64)
    call_of[pairs["gpu"].to_numpy()] = pairs["call"].to_numpy()
    key, streams = _stream_keys(run, rows)
    order = np.lexsort((start[rows], key))
    rows, key = rows[order], key[order]
    s, e = start[rows].astype(np.float64), end[rows].astype(np.float64)
    first = np.r_[True, key[1:] != key[:-1]]
    prev_end = np.where(first, np.nan, np.r_[np.nan, e[:-1]])
    gap = (s - prev_end) / 1e6
    call = call_of[rows]
    call_start = np.where(call >= 0, start[np.maximum(call, 0)], np.nan)
    host_wait = call_start > prev_end
    kernel_wait = ~host_wait & (gap < consecutive_kernel_delay_us)
    category = np.where(host_wait, 0, np.where(kernel_wait, 1, 2))
    df = pd.DataFrame({"key": key, "category": category, "gap": gap})
    sums = df.groupby(["key", "category"], sort=True)["gap"].sum(min_count=0).reset_index()
    total = sums.groupby("key")["gap"].transform("sum").to_numpy()
    k = sums["key"].to_numpy()
    out = streams.iloc[k].reset_index(drop=True)
    names = np.array(["host_wait", "kernel_wait", "other"], object)
    out["idle_category"] = pd.Categorical(names[sums["category"].to_numpy()], categories=names)
    out["idle_time_us"] = sums["gap"].to_numpy()
    with np.errstate(invalid="ignore", divide="ignore"):
        out["idle_time_ratio"] = out["idle_time_us"].to_numpy() / total
    out = out.sort_values(["host", "device", "stream", "idle_category"], kind="stable")
    for c in ("host", "device"):
        out[c] = pd.Categorical(out[c])
    return schema.conform(out.reset_index(drop=True), IDLE_TIME_BREAKDOWN)


def _innermost_aten(run, calls: np.ndarray) -> np.ndarray:
    """Per call row: the name of the innermost ``aten::`` op on its thread that encloses it
    (None where none), by the thread's stack nesting of those ops and the calls."""
    ev = run.events
    cats = ev["name"].cat.categories.astype(str)
    is_aten = np.asarray(cats.str.startswith("aten::"))[ev["name"].cat.codes.to_numpy()]
    up = innermost_around(run, is_aten, calls)
    out = np.full(len(calls), None, object)
    found = up >= 0
    out[found] = _names(run, up[found])
    return out


def kernel_launch_stats(
    run,
    runtime_cutoff_us: float = RUNTIME_CUTOFF_US,
    launch_delay_cutoff_us: float = LAUNCH_DELAY_CUTOFF_US,
) -> pd.DataFrame:
    """Each GPU activity launched by a CUDA runtime or driver call (KERNEL_LAUNCH_STATS), by
    host and correlation id, as HTA's ``get_cuda_kernel_launch_stats``: the call's duration,
    the activity's, the launch delay between the call's end and the activity's start (0 if
    negative), and HTA's outliers at its cutoffs. HTA pairs only ``cudaLaunchKernel``,
    ``cudaLaunchKernelExC``, ``cudaMemcpyAsync`` and ``cudaMemsetAsync`` (its
    :data:`HTA_LAUNCH_STATS_CALLS`); here every runtime call counts, so cuBLAS's
    ``cuLaunchKernelEx`` launches on recent PyTorch are rows too (``launch`` names the call)."""
    pairs = launch_pairs(run)
    runtime = _cat_in(run, RUNTIME_CATS)
    pairs = pairs[(pairs["call"].to_numpy() >= 0)]
    pairs = pairs[runtime[pairs["call"].to_numpy()]]
    pairs = pairs.sort_values(["host", "correlation"], kind="stable")
    call, gpu = pairs["call"].to_numpy(), pairs["gpu"].to_numpy()
    start, end = times_ps(run)
    cpu = (end[call] - start[call]) / 1e6
    gpu_dur = (end[gpu] - start[gpu]) / 1e6
    delay = np.maximum((start[gpu] - end[call]) / 1e6, 0.0)
    _, hosts = _host_codes(run)
    host = hosts[pairs["host"].to_numpy()]
    out = pd.DataFrame(
        {
            "host": pd.Categorical(host),
            "rank": host_ranks(run, host),
            "correlation": pairs["correlation"].to_numpy(np.int64),
            "launch": pd.Categorical(_names(run, call)),
            "kernel": pd.Categorical(_names(run, gpu)),
            "aten_op": pd.Categorical(_innermost_aten(run, call)),
            "cpu_duration_us": cpu,
            "gpu_duration_us": gpu_dur,
            "launch_delay_us": delay,
            "short_kernel": (cpu <= runtime_cutoff_us) & (gpu_dur < cpu),
            "runtime_outlier": cpu > runtime_cutoff_us,
            "launch_delay_outlier": delay > launch_delay_cutoff_us,
        }
    )
    return schema.conform(out, KERNEL_LAUNCH_STATS)


def comm_comp_overlap(run) -> pd.DataFrame:
    """Per host, the share of communication time during which computation runs too
    (COMM_COMP_OVERLAP), HTA's ``get_comm_comp_overlap``: kernels kinded by name as
    :mod:`..gpu_time` kinds them (communication: NCCL's and RCCL's kernels, HTA's
    ``^nccl.*Kernel`` among them), over all of the host's GPU activity; overlap = time some
    of both runs, over the time some communication runs.
    An XLA capture's is the same figure over its collectives and device ops (TPU too):
    :func:`..xla.overlap.comm_comp_overlap`."""
    if "xla" in run.framework.name.split("+"):
        from ..xla.overlap import comm_comp_overlap as xla_overlap

        return xla_overlap(run)
    rows = device_activity(run)
    host, hosts = _host_codes(run)
    names = run.events["name"]
    kind = kernel_kinds(pd.Series(names.cat.categories))[names.cat.codes.to_numpy()[rows]]
    comp, comm = rows[kind == _COMPUTATION], rows[kind == _COMMUNICATION]
    return overlap_table(run, host, hosts, comp, comm, report=np.unique(host[rows]))


def _trace_duration_us(run, dev: np.ndarray) -> np.ndarray:
    """Per host code: HTA's trace duration, from the first to the last start among the host
    threads' events before the last step and the counted GPU activity (not the profiler's
    own span, category 'Trace', which HTA does not read)."""
    host, hosts = _host_codes(run)
    starts = run.events["start_us"].to_numpy()
    on_cpu = (plane_kinds(run) == "CPU")[event_plane_rows(run)]
    keep = on_cpu & (starts < last_step_starts(run)[host])
    keep[dev] = True
    rows = np.flatnonzero(keep)
    s = pd.Series(starts[rows]).groupby(host[rows])
    span = (s.max() - s.min()).reindex(range(len(hosts)))
    return span.to_numpy(np.float64)


def queue_length_series(run, enqueue_first: bool = True) -> tuple[pd.DataFrame, pd.DataFrame]:
    """HTA's queue length time series: per (host, device, stream) number ``key``, each change
    (``start_us``, ``queue_length`` after it) in time order: +1 where one of HTA's launch
    calls (:data:`QUEUE_CALLS`) begins, -1 where what it launched starts. Also the streams.

    Changes at the same time: the launches first (``enqueue_first``; the length never dips
    below 0 for a tie), else the starts. HTA orders them as its unstable sort happens to leave
    them, so on whole-µs traces (many ties) its mean differs from ours by ~0.01%."""
    pairs = launch_pairs(run)
    pairs = pairs[pairs["call"].to_numpy() >= 0]
    call, gpu = pairs["call"].to_numpy(), pairs["gpu"].to_numpy()
    keep = np.isin(_names(run, call), list(QUEUE_CALLS))
    call, gpu = call[keep], gpu[keep]
    key, streams = _stream_keys(run, gpu)
    start, _ = times_ps(run)
    t = np.r_[start[call], start[gpu]]
    k = np.r_[key, key]
    step = np.r_[np.ones(len(call), np.int64), -np.ones(len(gpu), np.int64)]
    order = np.lexsort((-step if enqueue_first else step, t, k))
    t, k, step = t[order], k[order], step[order]
    run_sum = np.cumsum(step)
    first = np.flatnonzero(np.r_[True, k[1:] != k[:-1]])
    base = np.r_[0, run_sum][first]  # the running sum before each stream's first change
    length = run_sum - np.repeat(base, np.diff(np.r_[first, len(k)]))
    series = pd.DataFrame({"key": k, "start_us": t / 1e6, "queue_length": length})
    return series, streams


def _describe(v: np.ndarray, k: np.ndarray, first: np.ndarray) -> dict[str, np.ndarray]:
    """pandas' ``describe`` of ``v`` in each run of equal ``k`` (runs starting at ``first``):
    count, mean, sample std, min, max and the linear 25/50/75th percentiles."""
    count = np.diff(np.r_[first, len(v)])
    mean = np.add.reduceat(v, first) / count
    dev2 = np.add.reduceat((v - np.repeat(mean, count)) ** 2, first)
    with np.errstate(invalid="ignore", divide="ignore"):
        std = np.sqrt(dev2 / (count - 1))
    s = v[np.lexsort((v, k))]
    out = {"count": count.astype(np.int64), "mean": mean, "std": std}
    out["min"], out["max"] = s[first], s[first + count - 1]
    for name, q in (("p25", 0.25), ("p50", 0.5), ("p75", 0.75)):
        pos = (count - 1) * q
        lo = np.floor(pos).astype(np.int64)
        hi = np.minimum(lo + 1, count - 1)
        out[name] = s[first + lo] + (s[first + hi] - s[first + lo]) * (pos - lo)
    return out


def queue_length_summary(
    run, max_queue_length: int = CUDA_MAX_LAUNCH_QUEUE_PER_STREAM
) -> pd.DataFrame:
    """Each stream's launch queue length statistics (QUEUE_LENGTH_SUMMARY), HTA's
    ``get_queue_length_summary`` (pandas' ``describe`` of the series' values) and
    ``get_time_spent_blocked_on_full_queue``: the time from each change at
    ``max_queue_length`` or more to the stream's next change, over the trace's duration."""
    series, streams = queue_length_series(run)
    if not len(series):
        return schema.empty(QUEUE_LENGTH_SUMMARY)
    t = series["start_us"].to_numpy()
    k = series["key"].to_numpy()
    length = series["queue_length"].to_numpy()
    first = np.flatnonzero(np.r_[True, k[1:] != k[:-1]])  # the series is sorted by key
    last = np.r_[k[1:] != k[:-1], True]
    held = np.where(last, 0.0, np.r_[t[1:], 0.0] - t)
    full = length >= max_queue_length
    out = streams.copy()
    out["blocked_us"] = np.add.reduceat(np.where(full, held, 0.0), first)
    for c, v in _describe(length.astype(np.float64), k, first).items():
        out[c] = v
    pairs_dev = launch_pairs(run)["gpu"].to_numpy()
    duration = _trace_duration_us(run, pairs_dev)[out["h"].to_numpy()]
    with np.errstate(invalid="ignore", divide="ignore"):
        out["blocked_ratio"] = out["blocked_us"].to_numpy() / duration
    out = out.sort_values(["host", "device", "stream"], kind="stable")
    for c in ("host", "device"):
        out[c] = pd.Categorical(out[c])
    return schema.conform(out.reset_index(drop=True), QUEUE_LENGTH_SUMMARY)


__all__ = [
    "comm_comp_overlap",
    "idle_time_breakdown",
    "kernel_launch_stats",
    "launch_pairs",
    "queue_length_series",
    "queue_length_summary",
]
