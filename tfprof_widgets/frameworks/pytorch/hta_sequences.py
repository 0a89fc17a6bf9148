"""HolisticTraceAnalysis (HTA)'s frequent CUDA kernel sequences of a PyTorch (Kineto) trace:
``get_frequent_cuda_kernel_sequences`` (HTA 0.5 with ``HTA_DISABLE_NS_ROUNDING=1``), without
the trace file HTA writes beside its result (nothing is written here).

HTA's call graph, per host (HTA: per rank): the host events without a ``stream`` arg that
began before the host's last ``ProfilerStep#N`` (HTA's default trace) nest per thread; each
GPU activity launched before it (:func:`.hta.launch_pairs`) is a child of its launching call.
Where the host has exactly one thread with step markers (the main thread) and one other with
``autograd::`` ops (the backward thread), each top-level backward op lies under the
``## backward ##`` annotation (else the ``ProfilerStep#N``) of the main thread whose window
holds it. A node's depth counts its ancestors (a thread's top level is 0); events in no
call graph (GPU annotations, a host event with a ``stream`` arg, GPU work no call launched)
have depth -1.

The operators whose name contains ``operator_name`` at the least depth among all events
that match (a match of depth -1 leaves none, as in HTA), with ``min_pattern_len`` kernels
or more below them, are the roots; a root's pattern is its name and the names of the GPU
activity below it in start order. Equal patterns are counted and their kernel and operator
times summed.

One known difference, HTA's bug kept out: where every backward op lies in the earlier steps,
HTA links the last ``ProfilerStep#N`` under itself (the threads share one root) and loses its
ops' kernel counts; here that step's operators keep their kernels (see the test
``test_the_last_steps_aten_to_memcpy_is_counted_where_hta_loses_that_step``).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ... import schema, stat_columns
from ...analysis.collective_kinds import host_ranks
from ...analysis.event_index import on_device, times_ps
from . import names as torch_names
from .hta import _host_codes, launch_pairs
from .rules import last_step_starts
from .schema import FREQUENT_KERNEL_SEQUENCES

BACKWARD_ANNOTATION = "## backward ##"
DEFAULT_OPERATOR = "aten::"


def _parents(run, rows: np.ndarray) -> np.ndarray:
    """Per row (host events of one host): the row of its enclosing event on its thread, -1
    at the top, by HTA's call stack (trace_call_stack.sort_events): at one time, the ends
    before the begins, the longer begin first and the shorter end first (then by order);
    0 µs events after them (HTA's order there is not total)."""
    start, end = times_ps(run)
    line = np.repeat(run.event_line_rows[rows].astype(np.int64), 2)
    dur = end[rows] - start[rows]
    zero = np.repeat(dur == 0, 2)
    is_end = np.tile(np.array([False, True]), len(rows))
    t = np.c_[start[rows], end[rows]].reshape(-1)
    d = np.repeat(dur, 2)
    idx = np.repeat(np.arange(len(rows)), 2)
    cls = np.where(zero, np.where(is_end, 3, 2), np.where(is_end, 0, 1))
    order = np.lexsort((np.where(is_end, -idx, idx), np.where(is_end, d, -d), cls, t, line))
    idx, is_end, line = idx[order], is_end[order], line[order]
    depth = np.cumsum(np.where(is_end, -1, 1))  # each thread is balanced: 0 at its start
    pos = np.flatnonzero(~is_end)
    level = depth[pos] - 1
    stride = len(order) + 1
    key = level * stride + pos
    sort = np.argsort(key, kind="stable")
    key, kpos = key[sort], pos[sort]
    i = np.searchsorted(key, (level - 1) * stride + pos) - 1
    found = kpos[np.maximum(i, 0)]
    ok = (level > 0) & (i >= 0) & (depth[found] - 1 == level - 1) & (line[found] == line[pos])
    out = np.full(len(rows), -1, np.int64)
    out[idx[pos[ok]]] = rows[idx[found[ok]]]
    return out


def _link_backward(run, rows: np.ndarray, parent: np.ndarray, names: np.ndarray) -> None:
    """HTA's link of the backward thread's top-level ops to the main thread (in place)."""
    line = run.event_line_rows[rows]
    marker = torch_names.is_step_marker(pd.Series(names, dtype=object))
    autograd = np.char.find(names.astype(str), "autograd::") >= 0
    main = np.unique(line[marker])
    bwd = np.setdiff1d(np.unique(line[autograd]), main)
    if len(main) != 1 or len(bwd) != 1:
        return
    on_main = line == main[0]
    anchor = on_main & np.char.startswith(names.astype(str), BACKWARD_ANNOTATION)
    if not anchor.any():
        anchor = on_main & marker
    start, end = times_ps(run)
    windows = rows[anchor][np.argsort(start[rows[anchor]], kind="stable")]
    top = np.flatnonzero((line == bwd[0]) & (parent == -1))
    s, e = start[rows[top]], end[rows[top]]
    i = np.searchsorted(start[windows], s, side="right") - 1
    ok = (i >= 0) & (e <= end[windows[np.maximum(i, 0)]])
    parent[top[ok]] = windows[i[ok]]


def _depths(parent_of: np.ndarray, nodes: np.ndarray) -> np.ndarray:
    """Per node: its ancestors' count, by ``parent_of`` (per event row, -1 at the top)."""
    depth = np.zeros(len(nodes), np.int64)
    up = parent_of[nodes]
    while (up >= 0).any():
        depth += up >= 0
        up = np.where(up >= 0, parent_of[np.maximum(up, 0)], -1)
    return depth


def _host_graph(run, h: int, host: np.ndarray, names_all: np.ndarray):
    """One host's call graph: (parent per event row, depth per event row (-1: none), the
    kernels (rows) and their calls)."""
    n = len(run.events)
    start = run.events["start_us"].to_numpy()
    stream = stat_columns.present(run.stat_store, "stream", n)
    rows = np.flatnonzero(
        (host == h) & ~on_device(run) & ~stream & (start < last_step_starts(run)[host])
    )
    parent_of = np.full(n, -1, np.int64)
    parent = _parents(run, rows)
    _link_backward(run, rows, parent, names_all[rows])
    parent_of[rows] = parent
    pairs = launch_pairs(run)
    pairs = pairs[(pairs["host"].to_numpy() == h) & (pairs["call"].to_numpy() >= 0)]
    in_graph = np.zeros(n, bool)
    in_graph[rows] = True
    pairs = pairs[in_graph[pairs["call"].to_numpy()]]
    kernels, calls = pairs["gpu"].to_numpy(), pairs["call"].to_numpy()
    parent_of[kernels] = calls
    depth = np.full(n, -1, np.int64)
    nodes = np.r_[rows, kernels]
    depth[nodes] = _depths(parent_of, nodes)
    return parent_of, depth, kernels


def _kernel_roots(parent_of, depth, kernels, level: int) -> np.ndarray:
    """Per kernel: its ancestor at depth ``level`` (-1 where it has none)."""
    anc = kernels.copy()
    while True:
        deeper = (anc >= 0) & (depth[np.maximum(anc, 0)] > level)
        if not deeper.any():
            break
        anc = np.where(deeper, parent_of[np.maximum(anc, 0)], anc)
    return np.where((anc >= 0) & (depth[np.maximum(anc, 0)] == level), anc, -1)


def _host_patterns(run, h, host, names_all, operator_name: str, min_pattern_len: int):
    """One host's patterns: DataFrame (pattern, count, kernel_us, cpu_op_us) or None."""
    parent_of, depth, kernels = _host_graph(run, h, host, names_all)
    ev = run.events
    cats = np.asarray(ev["name"].cat.categories.astype(str), object)
    codes = ev["name"].cat.codes.to_numpy()
    matches = np.flatnonzero(pd.Series(cats).str.contains(operator_name, regex=False))
    mine = (host == h) & (np.isin(codes, matches))
    mine &= (depth >= 0) | _in_hta_trace(run, host, h)
    candidates = np.flatnonzero(mine)
    if not len(candidates):
        return None
    level = depth[candidates].min()
    root_of = _kernel_roots(parent_of, depth, kernels, level) if level >= 0 else kernels * 0 - 1
    count = np.bincount(root_of[root_of >= 0], minlength=len(ev))
    roots = candidates[(depth[candidates] == level) & (count[candidates] >= min_pattern_len)]
    if not len(roots):
        return None
    start, end = times_ps(run)
    keep = np.isin(root_of, roots)
    k, r = kernels[keep], root_of[keep]
    order = np.lexsort((k, start[k], r))
    k, r = k[order], r[order]
    bounds = np.searchsorted(r, roots, side="left"), np.searchsorted(r, roots, side="right")
    pattern = [
        (codes[root],) + tuple(codes[k[a:b]]) for root, a, b in zip(roots, *bounds)
    ]  # one tuple per root: HTA's pattern key
    kernel_ps = np.r_[0, np.cumsum(end[k] - start[k])]
    df = pd.DataFrame(
        {
            "key": pattern,
            "kernel": (kernel_ps[bounds[1]] - kernel_ps[bounds[0]]) / 1e6,
            "cpu": (end[roots] - start[roots]) / 1e6,
        }
    )
    g = df.groupby("key", sort=False).agg(
        count=("cpu", "size"), kernel_us=("kernel", "sum"), cpu_op_us=("cpu", "sum")
    )
    g["pattern"] = ["|".join(cats[list(t)]) for t in g.index]
    return g.reset_index(drop=True)


def _in_hta_trace(run, host: np.ndarray, h: int) -> np.ndarray:
    """Per event: whether HTA's default trace of host ``h`` holds it and it is in no call
    graph there (a depth of -1): device events without a launch that began before the last
    step (GPU annotations), and host events with a ``stream`` arg."""
    n = len(run.events)
    start = run.events["start_us"].to_numpy()
    corr = stat_columns.present(run.stat_store, "correlation", n)
    stream = stat_columns.present(run.stat_store, "stream", n)
    before = start < last_step_starts(run)[host]
    device = on_device(run)
    return (host == h) & before & ((device & ~corr) | (~device & stream))


def frequent_kernel_sequences(
    run,
    operator_name: str = DEFAULT_OPERATOR,
    min_pattern_len: int = 3,
    rank: int | None = None,
    top_k: int | None = None,
) -> pd.DataFrame:
    """The GPU kernel sequences launched from operators whose name contains
    ``operator_name``, most frequent first (FREQUENT_KERNEL_SEQUENCES), HTA's
    ``get_frequent_cuda_kernel_sequences``: per host (of ``rank`` only, if given; a host with
    no recorded rank is rank 0, as HTA calls a lone trace), each pattern's count and summed
    kernel and operator times, by count (descending) then pattern; the first ``top_k``
    patterns of each host (HTA returns every pattern and draws its top_k). The run attribute
    ``run.frequent_kernel_sequences`` is this with the defaults: every ``aten::`` operator at
    the least depth with three kernels or more."""
    if not operator_name:
        raise ValueError("operator_name must be a non-empty operator name (HTA's rule)")
    host, hosts = _host_codes(run)
    ranks = host_ranks(run, hosts)
    names_all = np.asarray(run.events["name"].astype(str).to_numpy(), object)
    parts = []
    for h in np.unique(host):
        if rank is not None and (ranks[h] if ranks[h] is not pd.NA else 0) != rank:
            continue
        found = _host_patterns(run, h, host, names_all, operator_name, min_pattern_len)
        if found is None:
            continue
        found = found.sort_values(["count", "pattern"], ascending=[False, True], kind="stable")
        found = found.head(top_k) if top_k is not None else found
        found.insert(0, "host", hosts[h])
        found.insert(1, "rank", ranks[h])
        parts.append(found)
    if not parts:
        return schema.empty(FREQUENT_KERNEL_SEQUENCES)
    out = pd.concat(parts, ignore_index=True)
    out["host"] = pd.Categorical(out["host"])
    out["rank"] = out["rank"].astype("Int64")
    return schema.conform(out, FREQUENT_KERNEL_SEQUENCES)


__all__ = ["frequent_kernel_sequences"]
