"""The graph of HTA's critical path analysis, built from one host's events in arrays, and its
longest path (:mod:`.critical_path` explains the rules; HTA 0.5's
``hta/analyzers/critical_path_analysis.py`` is the reference).

A trace table (``t``, from :func:`.critical_path.trace_table`) is a dict of per-event arrays;
times are integer picoseconds. The graph is a dict: per node its time, event and whether it
is the event's start; per edge (in the order HTA adds them) its source, target, weight (ps),
type and the event its time is attributed to (-1: none).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

OPERATOR, DEPENDENCY, LAUNCH, KERNEL_KERNEL, SYNC = range(5)
# HTA's CPEdgeType values, by the codes above.
EDGE_TYPES = np.array(
    [
        "critical_path_operator",
        "critical_path_dependency",
        "critical_path_kernel_launch_delay",
        "critical_path_kernel_kernel_delay",
        "critical_path_sync_dependency",
    ],
    object,
)
# HTA's get_runtime_launch_events_query.
LAUNCH_CALLS = frozenset(
    (
        "cudaLaunchKernel",
        "cudaLaunchKernelExC",
        "cuLaunchKernel",
        "cudaMemcpyAsync",
        "cudaMemsetAsync",
        "runFunction - job_prep_and_submit_for_execution",
        "hipLaunchKernel",
        "hipExtModuleLaunchKernel",
        "hipMemsetAsync",
        "hipMemcpyAsync",
        "hipMemcpyWithStream",
    )
)
# Launches of a captured CUDA graph: every kernel of it carries the call's correlation id.
GRAPH_LAUNCH_CALLS = frozenset(("cudaGraphLaunch", "cudaGraphLaunch_v10000", "cuGraphLaunch"))
BLOCKING_SYNC_CALLS = frozenset(
    (
        "cudaDeviceSynchronize",
        "cudaStreamSynchronize",
        "cudaEventQuery",
        "cudaEventSynchronize",
        "cudaMemcpy",
        "cudaMemcpyAsync",
    )
)
# The cats of host events that are nodes (HTA's cpu_op, cuda_runtime, cuda_driver; and the
# old Kineto layout's names for them, which HTA does not know).
NODE_CATS = ("cpu_op", "cuda_runtime", "cuda_driver", "Operator", "Runtime")
SYNC_CAT = "cuda_sync"
NEG_ZERO_PS = -1_000_000  # HTA's check sets weights of -1 µs or less to 0


class Labels:
    """Per-event strings (names, cats) as category codes: tests run on the few categories."""

    def __init__(self, codes: np.ndarray, categories) -> None:
        self.codes = np.asarray(codes, np.int64)
        self.categories = np.r_[np.asarray(categories, object), np.array([""], object)]
        self.codes = np.where(self.codes < 0, len(self.categories) - 1, self.codes)

    def __getitem__(self, rows):
        return self.categories[self.codes[rows]]

    def __len__(self) -> int:
        return len(self.codes)

    def isin(self, values) -> np.ndarray:
        return np.isin(self.categories, list(values))[self.codes]

    def eq(self, value: str) -> np.ndarray:
        return self.isin((value,))

    def contains(self, part: str) -> np.ndarray:
        return np.array([part in c for c in self.categories.tolist()], bool)[self.codes]


class CycleError(ValueError):
    """The graph is not acyclic (HTA's check fails; no longest path)."""


def old_layout_annotation(t: dict) -> np.ndarray:
    """The old Kineto layout's record_function annotations: cat "Operator" like the aten ops,
    named with a '#' ("ProfilerStep#5", "Optimizer.step#SGD.step"), which no operator is;
    the new layout's user_annotation, which HTA makes no node of."""
    return t["cat"].eq("Operator") & t["name"].contains("#")


def index_correlation(t: dict) -> np.ndarray:
    """HTA's ``index_correlation``: a host event's GPU partner (the last with its correlation
    id), a GPU event's host partner (the last), 0 where a correlation id found none, -1 where
    the event has no correlation id. GPU side: events on a stream with a correlation id, and
    the device-wide Event Sync and Context Sync."""
    corr, n = t["corr"], len(t["corr"])
    out = np.minimum(corr, 0)
    has = corr != -1
    gpu = ((t["stream"] >= 0) & (corr >= 0)) | t["name"].isin(("Event Sync", "Context Sync"))
    rows = np.arange(n)
    cpu_df = pd.DataFrame({"corr": corr[has & ~gpu], "x": rows[has & ~gpu]})
    gpu_df = pd.DataFrame({"corr": corr[has & gpu], "y": rows[has & gpu]})
    last_gpu = gpu_df.groupby("corr")["y"].max()
    last_cpu = cpu_df.groupby("corr")["x"].max()
    x = cpu_df[cpu_df["corr"].isin(last_gpu.index)]
    out[x["x"].to_numpy()] = last_gpu.reindex(x["corr"]).to_numpy()
    y = gpu_df[gpu_df["corr"].isin(last_cpu.index)]
    out[y["y"].to_numpy()] = last_cpu.reindex(y["corr"]).to_numpy()
    return out


def clip(t: dict, lo: int, hi: int) -> np.ndarray:
    """HTA's region: host events (stream -1) of positive duration starting in [lo, hi], and
    GPU events whose launching call is one of them (and every Stream Wait Event)."""
    cpu = t["stream"] == -1
    a = cpu & (t["start"] >= lo) & (t["start"] <= hi) & (t["dur"] > 0)
    calls = np.flatnonzero(a & (t["index_corr"] > 0))
    b = np.zeros(len(a), bool)
    target = t["index_corr"][calls]
    b[target[t["stream"][target] != -1]] = True
    b |= (t["stream"] != -1) & t["name"].eq("Stream Wait Event")
    # Beyond HTA: every kernel of a CUDA graph launched in the region (HTA keeps the last).
    gpu = np.flatnonzero((t["stream"] != -1) & (t["index_corr"] > 0))
    call = t["index_corr"][gpu]
    b[gpu[a[call] & t["name"].isin(GRAPH_LAUNCH_CALLS)[call]]] = True
    return a | b


def _nodes(t: dict, inside: np.ndarray) -> dict:
    """A start and an end node for each event HTA represents, numbered in time order."""
    host_op = t["cat"].isin(NODE_CATS) & ~old_layout_annotation(t)
    is_node = inside & (host_op | ((t["stream"] != -1) & (t["index_corr"] >= 0)))
    ev = np.flatnonzero(is_node)
    ts = np.r_[t["start"][ev], t["end"][ev]]
    is_end = np.r_[np.zeros(len(ev), bool), np.ones(len(ev), bool)]
    evs = np.r_[ev, ev]
    order = np.lexsort((evs, is_end, ts))
    n = len(t["start"])
    start_node, end_node = np.full(n, -1, np.int64), np.full(n, -1, np.int64)
    idx = np.empty(len(order), np.int64)
    idx[order] = np.arange(len(order))
    start_node[ev], end_node[ev] = idx[: len(ev)], idx[len(ev) :]
    return {
        "node_ts": ts[order],
        "node_ev": evs[order],
        "node_start": ~is_end[order],
        "start_node": start_node,
        "end_node": end_node,
    }


def _stack_items(t: dict, rows: np.ndarray) -> tuple[np.ndarray, ...]:
    """HTA's call stacks of ``rows`` (host events, grouped by thread): its start and end
    items in HTA's order (time; ends before starts; longer starts first; shorter ends
    first), the event each item enters or leaves (an end pops the stack's top), each
    event's parent (-1: none), and each item's thread."""
    n = len(rows)
    thread = np.r_[t["thread"][rows], t["thread"][rows]]
    time = np.r_[t["start"][rows], t["end"][rows]]
    is_end = np.r_[np.zeros(n, bool), np.ones(n, bool)]
    dur = np.r_[-t["dur"][rows], t["dur"][rows]]
    tie = np.r_[rows, -rows]
    order = np.lexsort((tie, dur, ~is_end, time, thread))
    thread, is_end, ev = thread[order], is_end[order], np.r_[rows, rows][order]
    depth = np.cumsum(np.where(is_end, -1, 1))
    level = np.where(is_end, depth, depth - 1)  # a start opens level d-1; an end closes d
    pos = np.arange(len(order))
    starts = pos[~is_end]
    stride = len(order) + 1
    key = (thread[starts] - thread.min()) * (n + 2) + level[starts]
    sk = np.argsort(key * stride + starts, kind="stable")
    skey, spos = (key * stride + starts)[sk], starts[sk]

    def latest_start(lv: np.ndarray, at: np.ndarray) -> np.ndarray:
        k = (thread[at] - thread.min()) * (n + 2) + lv
        i = np.searchsorted(skey, k * stride + at) - 1
        found = spos[np.maximum(i, 0)]
        ok = (i >= 0) & (level[found] == lv) & (thread[found] == thread[at]) & (lv >= 0)
        return np.where(ok, found, -1)

    popped = latest_start(level[is_end], pos[is_end])
    item_ev = ev.copy()
    item_ev[is_end] = np.where(popped >= 0, ev[np.maximum(popped, 0)], -1)
    up = latest_start(level[starts] - 1, starts)
    parent = np.full(len(t["start"]), -1, np.int64)
    parent[ev[starts]] = np.where(up >= 0, ev[np.maximum(up, 0)], -1)
    return is_end, item_ev, parent, thread


def _cpu_edges(t: dict, inside: np.ndarray, nd: dict) -> list[np.ndarray]:
    """HTA's edges through each host thread's stack of operators (its depth-first walk of
    the call stack: nested starts and ends in turn; top-level operators joined by a
    zero-weight dependency). Threads with any GPU event are no stacks (as HTA's)."""
    host = inside & (t["stream"] == -1)
    gpuish = np.unique(t["thread"][inside & (t["stream"] != -1)])
    rows = np.flatnonzero(host & ~np.isin(t["thread"], gpuish))
    is_end, ev, parent, thread = _stack_items(t, rows)
    keep = ev >= 0
    keep[keep] = nd["start_node"][ev[keep]] >= 0
    is_end, ev, thread = is_end[keep], ev[keep], thread[keep]
    if not len(ev):
        return [np.zeros(0, np.int64)] * 5
    node = np.where(is_end, nd["end_node"][ev], nd["start_node"][ev])
    step = np.where(is_end, -1, 1)
    first = np.r_[True, thread[1:] != thread[:-1]]
    run_sum = np.cumsum(step)
    base = np.repeat(run_sum[first] - step[first], np.diff(np.r_[np.flatnonzero(first), len(step)]))
    depth_before = run_sum - step - base
    i = np.flatnonzero(~first)
    prev = i - 1
    dep = ~is_end[i] & (depth_before[i] == 0)
    src, dst = node[prev], node[i]
    ts = nd["node_ts"]
    weight = np.where(dep, 0, ts[dst] - ts[src])
    blocking = t["name"].isin(BLOCKING_SYNC_CALLS)[ev[i]]
    weight = np.where(is_end[i] & blocking, 0, weight)
    etype = np.where(dep, DEPENDENCY, OPERATOR)
    src_start, dst_end = ~is_end[prev], is_end[i]
    attr = np.where(src_start, ev[prev], np.where(dst_end, ev[i], parent[ev[prev]]))
    attr = np.where(dep, -1, attr)
    return [src, dst, weight, etype, attr]


def _queue_lengths(t: dict) -> tuple[np.ndarray, np.ndarray]:
    """HTA's queue length per stream number on the whole trace: +1 where a launch call
    begins, -1 where what it launched begins; per row, the length just after its change
    (NaN: none). Ties: the call first. Also each row's stream as its launched work's."""
    n = len(t["start"])
    launch = t["name"].isin(LAUNCH_CALLS) & (t["index_corr"] > 0)
    gpu = np.flatnonzero(t["stream"] != -1)
    by_corr = pd.DataFrame({"corr": t["corr"][gpu], "g": gpu})
    calls = pd.DataFrame({"corr": t["corr"][launch], "c": np.flatnonzero(launch)})
    pairs = calls.merge(by_corr, on="corr", how="left")
    c, g = pairs["c"].to_numpy(), pairs["g"].fillna(-1).to_numpy(np.int64)
    stream_of = np.full(n, -1, np.int64)
    ok = g >= 0
    stream_of[c[ok]] = t["stream"][g[ok]]
    done = gpu[np.isin(t["corr"][gpu], t["corr"][launch])]
    rows = np.r_[c[ok], done]
    step = np.r_[np.ones(ok.sum(), np.int64), -np.ones(len(done), np.int64)]
    stream = np.r_[t["stream"][g[ok]], t["stream"][done]]
    out = np.full(n, np.nan)
    if not len(rows):
        return out, stream_of
    order = np.lexsort((-step, t["start"][rows], stream))
    rows, step, stream = rows[order], step[order], stream[order]
    total = np.cumsum(step)
    first = np.flatnonzero(np.r_[True, stream[1:] != stream[:-1]])
    base = np.repeat(total[first] - step[first], np.diff(np.r_[first, len(step)]))
    out[rows] = total - base
    return out, stream_of


def _launches(t: dict, stream_of: np.ndarray) -> pd.DataFrame:
    """HTA's runtime launch calls with the stream and GPU of what each launched, by time."""
    call = np.flatnonzero(t["name"].isin(LAUNCH_CALLS) & (t["index_corr"] > 0))
    k = t["index_corr"][call]
    call, k = call[(t["stream"][k] != -1)], k[(t["stream"][k] != -1)]
    df = pd.DataFrame(
        {
            "row": call,
            "ts": t["start"][call],
            "stream": t["stream"][k],
            "gpu": t["device"][k],
            "thread": t["thread"][call],
        }
    )
    return df.sort_values("ts", kind="stable").reset_index(drop=True)


def _previous_launch(t: dict, launches: pd.DataFrame) -> dict[int, int]:
    """Per cudaEventRecord correlation id: the launch call made last before it on the
    stream (and GPU) the event was recorded on (HTA: the record's stream comes from the
    syncs that wait on it)."""
    waits = t["wait_stream"] > -1
    rec_stream = pd.DataFrame(
        {
            "corr": t["wait_corr"][waits],
            "stream": t["wait_stream"][waits],
            "gpu": t["device"][waits],
        }
    ).drop_duplicates()
    rec_stream = rec_stream.drop_duplicates("corr", keep="last").set_index("corr")
    rec = np.flatnonzero(t["name"].eq("cudaEventRecord"))
    rec = rec[np.isin(t["corr"][rec], rec_stream.index)]
    out: dict[int, int] = {}
    for (gpu, stream), mine in launches.groupby(["gpu", "stream"]):
        sel = rec[
            (rec_stream.loc[t["corr"][rec], "stream"].to_numpy() == stream)
            & (rec_stream.loc[t["corr"][rec], "gpu"].to_numpy() == gpu)
        ]
        i = np.searchsorted(mine["ts"].to_numpy(), t["start"][sel], side="right") - 1
        for r, j in zip(sel.tolist(), i.tolist()):
            if j >= 0:
                out[int(t["corr"][r])] = int(mine["row"].iat[j])
    return out


def _next_launch(t: dict, launches: pd.DataFrame) -> dict[int, int]:
    """Per cudaStreamWaitEvent call (row): the next launch call on its thread to the stream
    its Stream Wait Event is on (HTA's index_next_launch)."""
    calls = np.flatnonzero(t["name"].eq("cudaStreamWaitEvent") & (t["index_corr"] > 0))
    out: dict[int, int] = {}
    groups = {k: g for k, g in launches.groupby(["thread", "stream"])}
    for r in calls.tolist():
        mine = groups.get((t["thread"][r], t["stream"][t["index_corr"][r]]))
        if mine is None:
            continue
        j = np.searchsorted(mine["ts"].to_numpy(), t["start"][r], side="left")
        if j < len(mine):
            out[r] = int(mine["row"].iat[j])
    return out


def _walk_order(t: dict, inside: np.ndarray) -> np.ndarray:
    """The GPU activity of the region and the syncs, in HTA's walk: by start, a sync by its
    end (a Stream Sync overlaps the copy it waits for)."""
    device_sync = t["name"].isin(("Event Sync", "Context Sync"))
    ok = inside & ((t["stream"] != -1) | device_sync) & (t["index_corr"] >= 0)
    rows = np.flatnonzero(ok)
    key = np.where(t["cat"].eq(SYNC_CAT)[rows], t["end"][rows], t["start"][rows])
    return rows[np.lexsort((rows, key))]


def _syncs(t: dict, nd: dict, launches, rows: np.ndarray, pos: np.ndarray, kpos, kstream, kend):
    """HTA's handle_cuda_sync for the syncs ``rows`` at walk positions ``pos``: the edges from
    the GPU to the host (a stream's last activity, every stream's for a Context Sync, the
    activity launched last before an awaited cudaEventRecord), as (position, src, dst); and
    the GPU-GPU waits of Stream Wait Events, as (position, dest kernel row, src kernel row).
    ``kpos``/``kstream``/``kend``: the walk position, stream and end node of each kernel;
    ``launches``: :func:`_launches`."""
    prev_launch, next_launch = _previous_launch(t, launches), _next_launch(t, launches)
    ic, out, waits = t["index_corr"], [], []
    first_seen = pd.unique(kstream)  # HTA's dict of the last node per stream, in its order
    for r, q in zip(rows.tolist(), pos.tolist()):
        name = t["name"][r]
        if name in ("Stream Wait Event", "Event Sync"):
            launch = prev_launch.get(int(t["wait_corr"][r]), -1)
            if t["wait_corr"][r] < 0 or launch < 0:
                continue
            if name == "Stream Wait Event":
                dest = next_launch.get(int(ic[r]), -1)
                if dest >= 0:
                    waits.append((q, int(ic[dest]), int(ic[launch])))
            elif nd["end_node"][ic[launch]] >= 0 and nd["end_node"][ic[r]] >= 0:
                out.append((q, nd["end_node"][ic[launch]], nd["end_node"][ic[r]]))
            continue
        host_end = nd["end_node"][ic[r]]
        streams = first_seen if name == "Context Sync" else [t["stream"][r]]
        for s in streams:
            before = np.flatnonzero((kstream == s) & (kpos < q))
            if len(before) and host_end >= 0:
                out.append((q, kend[before[-1]], host_end))
    return out, waits


def _kernel_waits(waits: list, k: np.ndarray, kpos: np.ndarray) -> np.ndarray:
    """Per kernel: the kernel its stream waits for (a Stream Wait Event walked before it, the
    last such), -1 where none."""
    out = np.full(len(k), -1, np.int64)
    if not waits:
        return out
    w = pd.DataFrame(waits, columns=["q", "dest", "src"])
    mine = pd.DataFrame({"dest": k, "j": np.arange(len(k)), "p": kpos}).merge(w, on="dest")
    mine = mine[mine["q"] < mine["p"]].sort_values("q").drop_duplicates("j", keep="last")
    out[mine["j"].to_numpy()] = mine["src"].to_numpy()
    return out


def _graph_calls(t: dict) -> np.ndarray:
    """Per row: the CUDA graph launch call whose correlation id it carries (a kernel of the
    graph; beyond HTA, which pairs the call with one of them), -1 elsewhere."""
    calls = np.flatnonzero(t["name"].isin(GRAPH_LAUNCH_CALLS) & (t["corr"] >= 0))
    out = np.full(len(t["corr"]), -1, np.int64)
    gpu = np.flatnonzero((t["stream"] != -1) & np.isin(t["corr"], t["corr"][calls]))
    by_corr = pd.Series(calls, index=t["corr"][calls])
    out[gpu] = by_corr[~by_corr.index.duplicated(keep="last")].reindex(t["corr"][gpu]).to_numpy()
    return out


def _gpu_edges(t: dict, inside: np.ndarray, nd: dict) -> list[np.ndarray]:
    """HTA's edges of the GPU activity in the region, in its walk (see the module): each
    activity's span; a launch delay from its call when the stream was empty and idle at the
    call, else the gap after the stream's previous activity; the syncs' edges."""
    rows = _walk_order(t, inside)
    ts, start_node, end_node = nd["node_ts"], nd["start_node"], nd["end_node"]
    pos = np.arange(len(rows))
    is_sync = t["cat"].eq(SYNC_CAT)[rows]
    k, kpos = rows[~is_sync], pos[~is_sync]
    stream, s, e = t["stream"][k], start_node[k], end_node[k]
    o = np.lexsort((kpos, stream))  # the stream's previous activity in the walk
    prev = np.full(len(k), -1, np.int64)
    prev[o[1:]] = np.where(stream[o][1:] == stream[o][:-1], o[:-1], -1)
    prev_end = np.where(prev >= 0, e[prev], -1)
    qlen, stream_of = _queue_lengths(t)
    launches = _launches(t, stream_of)
    sync_edges, waits = _syncs(t, nd, launches, rows[is_sync], pos[is_sync], kpos, stream, e)
    ks = _kernel_waits(waits, k, kpos)
    ks_end = np.where(ks >= 0, end_node[np.maximum(ks, 0)], -1)
    graph = _graph_calls(t)[k]
    call = np.where(graph >= 0, graph, t["index_corr"][k])
    call_ts = np.where(call >= 0, t["start"][np.maximum(call, 0)], np.iinfo(np.int64).min)
    call_start = np.where(call >= 0, start_node[np.maximum(call, 0)], -1)
    queue_ok = (qlen[np.maximum(call, 0)] == 1) & (qlen[k] == 0)
    _, first = np.unique(np.c_[call, stream][graph >= 0], axis=0, return_index=True)
    first_of_graph = np.zeros(len(k), bool)
    first_of_graph[np.flatnonzero(graph >= 0)[first]] = True  # the walk is in order
    queue_ok = np.where(graph >= 0, first_of_graph, queue_ok)
    idle = ((prev_end < 0) | (ts[prev_end] < call_ts)) & ((ks_end < 0) | (ts[ks_end] < call_ts))
    launch = queue_ok & idle & (call_start >= 0)
    waited = (ks_end < 0) | (ts[ks_end] < ts[prev_end])
    gap = ~launch & (prev_end >= 0) & waited
    has_ks = ks_end >= 0
    parts = [
        (kpos, 0, s, e, ts[e] - ts[s], OPERATOR, k),
        (kpos[has_ks], 1, ks_end[has_ks], s[has_ks], 0, SYNC, -1),
        (kpos[launch], 2, call_start[launch], s[launch], ts[s[launch]] - ts[call_start[launch]],
         LAUNCH, -1),
        (kpos[gap], 2, prev_end[gap], s[gap], ts[s[gap]] - ts[prev_end[gap]], KERNEL_KERNEL,
         k[prev[gap]]),
    ]  # fmt: skip
    if sync_edges:
        q, src, dst = np.asarray(sync_edges, np.int64).T
        parts.append((q, np.arange(len(q)), src, dst, 0, SYNC, -1))
    return _in_walk_order(parts)


def _in_walk_order(parts: list) -> list[np.ndarray]:
    """Edges (position, order within it, src, dst, weight, type, attributed event) in the
    order HTA adds them: by walk position, then by their order there."""
    cols = [
        np.concatenate([np.broadcast_to(np.asarray(p[i], np.int64), np.shape(p[0])) for p in parts])
        for i in range(7)
    ]
    order = np.lexsort((cols[1], cols[0]))
    return [c[order] for c in cols[2:]]


def build(t: dict, lo: int, hi: int) -> dict:
    """HTA's critical path graph of the region [lo, hi] (ps) of trace table ``t``."""
    inside = clip(t, lo, hi)
    nd = _nodes(t, inside)
    cpu = _cpu_edges(t, inside, nd)
    gpu = _gpu_edges(t, inside, nd)
    src, dst, weight, etype, attr = (np.r_[a, b].astype(np.int64) for a, b in zip(cpu, gpu))
    # networkx keeps one edge per node pair: the first's place, the last's data.
    key = src * (len(nd["node_ts"]) + 1) + dst
    _, first = np.unique(key, return_index=True)
    _, last_rev = np.unique(key[::-1], return_index=True)
    last = len(key) - 1 - last_rev
    keep = np.sort(first)
    pick = last[np.searchsorted(np.unique(key), key[keep])]
    weight = np.where(weight[pick] <= NEG_ZERO_PS, 0, weight[pick])
    return nd | {
        "src": src[keep],
        "dst": dst[keep],
        "weight": weight,
        "type": etype[pick],
        "attr": attr[pick],
    }


def edge_ids(g: dict, src: np.ndarray, dst: np.ndarray) -> np.ndarray:
    """The edge numbers of the (src, dst) pairs."""
    n = len(g["node_ts"]) + 1
    key = g["src"] * n + g["dst"]
    order = np.argsort(key)
    return order[np.searchsorted(key[order], src * n + dst)]


def _topological(n: int, src: np.ndarray, dst: np.ndarray) -> np.ndarray:
    """A topological order of the nodes: their numbering (time order) where every edge goes
    forward, else Kahn's, which raises on a cycle."""
    if not len(src) or bool((src < dst).all()):
        return np.arange(n)
    indeg = np.bincount(dst, minlength=n)
    order = np.argsort(src, kind="stable")
    ptr = np.r_[0, np.cumsum(np.bincount(src, minlength=n))]
    succ = dst[order].tolist()
    ptr_l, indeg_l = ptr.tolist(), indeg.tolist()
    queue = np.flatnonzero(indeg == 0).tolist()
    out = []
    for v in queue:
        out.append(v)
        for w in succ[ptr_l[v] : ptr_l[v + 1]]:
            indeg_l[w] -= 1
            if indeg_l[w] == 0:
                queue.append(w)
    if len(out) != n:
        raise CycleError("the critical path graph has a cycle (HTA refuses it too)")
    return np.asarray(out, np.int64)


def longest_path(g: dict) -> np.ndarray:
    """The nodes of the longest path (networkx's ``dag_longest_path``: each node's best
    predecessor is the first of the longest in edge order; a negative best starts afresh;
    the path ends at the first node of the greatest distance)."""
    n = len(g["node_ts"])
    if n == 0:
        return np.zeros(0, np.int64)
    src, dst, w = g["src"], g["dst"], g["weight"]
    by_dst = np.argsort(dst, kind="stable")
    ptr = np.r_[0, np.cumsum(np.bincount(dst, minlength=n))].tolist()
    p_src, p_w = src[by_dst].tolist(), w[by_dst].tolist()
    dist, back = [0] * n, list(range(n))
    for v in _topological(n, src, dst).tolist():
        best, arg = None, v
        for k in range(ptr[v], ptr[v + 1]):
            d = dist[p_src[k]] + p_w[k]
            if best is None or d > best:
                best, arg = d, p_src[k]
        if best is not None and best >= 0:
            dist[v], back[v] = best, arg
    dist_a = np.asarray(dist)
    v = int(np.argmax(dist_a))
    path = [v]
    while back[v] != v:
        v = back[v]
        path.append(v)
    return np.asarray(path[::-1], np.int64)
