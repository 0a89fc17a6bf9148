"""HTA's critical path of a rank's annotated region (``critical_path_analysis``), at exact
times, as a table of the events on it: :func:`critical_path` and :func:`critical_path_summary`.

HTA (0.5, ``hta/analyzers/critical_path_analysis.py``) makes a graph of two nodes per event (its
start and its end) for the host operators and CUDA runtime calls that start in the region, and
for the GPU activity those calls launched. Its edges:

- on each host thread, the stack of operators: an edge through each nested start and end in
  turn, weighted by the time between them (zero into the end of a blocking sync call:
  ``cudaDeviceSynchronize``, ``cudaStreamSynchronize``, ``cudaEventSynchronize``,
  ``cudaEventQuery``, ``cudaMemcpy``, ``cudaMemcpyAsync``), and a zero-weight dependency from
  each top-level operator's end to the next one's start;
- each GPU activity's duration; a launch delay from the call's start to the activity's start
  when the stream was empty and idle when the call was made (queue length 1 at the call, 0 at
  the start), else the gap after the stream's previous activity (kernel-kernel delay);
- zero-weight syncs: from a stream's last activity to the end of the ``cudaStreamSynchronize``
  (all streams' for ``cudaDeviceSynchronize``), from the activity launched last before a
  ``cudaEventRecord`` to the end of the ``cudaEventSynchronize`` waiting on it, and to the next
  activity launched after a ``cudaStreamWaitEvent`` on it.

The critical path is the longest path of that graph (weights ≤ -1 µs count 0, as HTA's
check sets them). Each edge's time belongs to an event: a span to the event it lies in (the
operator whose start it leaves, whose end it reaches, or between two children, their parent),
a kernel-kernel delay to the kernel before it; a launch delay to none (its ``bound_by`` says).

Beyond HTA: a ``cudaGraphLaunch`` launches every kernel of the graph with the launch's
correlation id. HTA pairs a call with one GPU activity and leaves graph launches out of its
launch calls, so the graph's kernels hang on nothing; here each of them gets the launch edge
from the call (with the stream's queue counting the call once per kernel), so a path through
a CUDA graph runs back to the host. Kineto traces of the old layout (``cat`` "Runtime",
"Operator", "Kernel") are read too (HTA stops on an assertion there).

Ties (two paths of equal length): the first predecessor in the order HTA adds edges, and
the first end node in time; HTA's networkx order can pick another of equal length.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ... import schema, stat_columns
from ...analysis.event_index import event_line_ids, event_plane_rows, on_device, times_ps
from ...analysis.gpu_time import KINDS, kernel_kinds
from ...errors import CorruptProfileError
from . import critical_path_graph as graph
from .schema import CRITICAL_PATH, CRITICAL_PATH_SUMMARY

RESOURCES = {
    "cpu_bound": "cpu",
    "gpu_compute_bound": "gpu",
    "gpu_communication_bound": "gpu",
    "gpu_kernel_kernel_overhead": "waiting",
    "gpu_kernel_launch_overhead": "waiting",
}


def _ranks_hosts(run) -> tuple[np.ndarray, pd.Series]:
    """Each event's host code, and host name -> rank (from Kineto's distributedInfo)."""
    planes = run.planes["host"].astype("category")
    host = np.asarray(planes.array.codes)[event_plane_rows(run)]
    stats = run.plane_stats
    mine = stats[stats["stat"].astype(str) == "rank"]
    ranks = pd.Series(
        pd.to_numeric(mine["int_value"], errors="coerce").to_numpy(),
        index=mine["host"].astype(str).to_numpy(),
    )
    return host, ranks[~ranks.index.duplicated()]


def _host_of_rank(run, rank: int) -> tuple[str, np.ndarray, object]:
    """The host that is ``rank`` (hosts without distributedInfo are ranks 0, 1, ... in
    order, as HTA numbers a lone trace 0), its events' rows, and its recorded rank (<NA>
    where none)."""
    host, ranks = _ranks_hosts(run)
    names = np.asarray(run.planes["host"].astype("category").array.categories, object)
    by_rank = [h for h in names if str(h) in ranks.index and ranks[str(h)] == rank]
    if by_rank:
        name = by_rank[0]
    elif not len(ranks) and 0 <= rank < len(names):
        name = names[rank]
    else:
        raise ValueError(f"no host is rank {rank} (hosts: {', '.join(map(str, names))})")
    code = int(np.flatnonzero(names == name)[0])
    recorded = ranks.get(str(name), pd.NA)
    return str(name), np.flatnonzero(host == code), recorded


def _stat(run, stat: str, rows: np.ndarray, default: int = -1) -> np.ndarray:
    v, has = stat_columns.numbers(run.stat_store, stat, len(run.events))
    return np.where(has, v, default)[rows]


def trace_table(run, rows: np.ndarray) -> dict[str, np.ndarray]:
    """The host's events as HTA's trace frame has them: times (ps), name, ``cat``,
    ``stream`` (-1: host), ``correlation`` (-1: none), device, thread and the
    event-sync args; the index of a row is its position here."""
    cat = stat_columns.categorical(run.stat_store, "cat", len(run.events))
    name = run.events["name"].array
    start, end = times_ps(run)
    t = {
        "row": rows,
        "start": start[rows],
        "end": end[rows],
        "name": graph.Labels(np.asarray(name.codes)[rows], name.categories.astype(str)),
        "cat": graph.Labels(np.asarray(cat.codes)[rows], cat.categories.astype(str)),
        "stream": _stat(run, "stream", rows),
        "corr": _stat(run, "correlation", rows),
        "device": _stat(run, "device", rows),
        "thread": run.event_line_rows[rows].astype(np.int64),
        "wait_stream": _stat(run, "wait_on_stream", rows),
        "wait_corr": _stat(run, "wait_on_cuda_event_record_corr_id", rows),
        "on_device": on_device(run)[rows],
        "line_id": event_line_ids(run)[rows],
    }
    t["dur"] = t["end"] - t["start"]
    t["index_corr"] = graph.index_correlation(t)
    return t


def _instances(t: dict, annotation: str) -> np.ndarray:
    """The rows of the annotation's events in HTA's order (its file order): host ones by
    start, then those on GPU lines by start (Kineto writes the host's events first)."""
    rows = np.flatnonzero(t["name"].contains(annotation))
    return rows[np.lexsort((t["start"][rows], t["on_device"][rows]))]


def window(t: dict, annotation: str, instance_id) -> tuple[int, int]:
    """HTA's window (ps): from the first start to the last end of the annotation's instances
    ``instance_id`` (an int, or an inclusive (first, last) pair); the whole trace for ''."""
    if annotation == "":
        return int(t["start"].min()), int(t["end"].max())
    rows = _instances(t, annotation)
    if not len(rows):
        raise ValueError(f"no event named like {annotation!r} in the trace")
    first, last = instance_id if isinstance(instance_id, tuple) else (instance_id,) * 2
    chosen = rows[int(first) : int(last) + 1]
    if not len(chosen):
        raise ValueError(f"{annotation!r} has {len(rows)} instances, not {instance_id}")
    return int(t["start"][chosen].min()), int(t["end"][chosen].max())


def last_full_instance(t: dict, annotation: str) -> int:
    """The default instance: the last but one host instance of the annotation (the last
    ProfilerStep's GPU work is often cut off by the profiler), the only one if alone."""
    host = int((~t["on_device"][_instances(t, annotation)]).sum())
    return max(host - 2, 0)


def _kinds(t: dict, ev: np.ndarray) -> np.ndarray:
    """Each event's kind: cpu_op, launch, graph_launch, sync, runtime, kernel, annotation."""
    name, cat = t["name"], t["cat"]
    kind = np.full(len(ev), "cpu_op", object)
    kind[cat.isin(("cuda_runtime", "cuda_driver", "Runtime"))[ev]] = "runtime"
    kind[name.isin(graph.LAUNCH_CALLS)[ev]] = "launch"
    kind[name.isin(graph.GRAPH_LAUNCH_CALLS)[ev]] = "graph_launch"
    kind[name.isin(graph.BLOCKING_SYNC_CALLS - {"cudaMemcpyAsync"})[ev]] = "sync"
    kind[cat.isin(("user_annotation", "python_function"))[ev]] = "annotation"
    kind[graph.old_layout_annotation(t)[ev]] = "annotation"
    kind[t["stream"][ev] != -1] = "kernel"
    return kind


def _bound_by(t: dict, ev: np.ndarray, etype: np.ndarray) -> np.ndarray:
    """HTA's ``bound_by`` of each path edge (its type, and the event it is attributed to)."""
    out = np.full(len(ev), "", object)
    has = ev >= 0
    names = t["name"][np.maximum(ev, 0)]
    # Communication kernels by name, as the overlap and the temporal breakdown kind them.
    comm = kernel_kinds(pd.Series(names)) == KINDS.index("COMMUNICATION")
    on_gpu = t["stream"][np.maximum(ev, 0)] >= 0
    span = (etype == graph.OPERATOR) & has
    out[span] = np.where(
        on_gpu[span],
        np.where(comm[span], "gpu_communication_bound", "gpu_compute_bound"),
        "cpu_bound",
    )
    out[etype == graph.KERNEL_KERNEL] = "gpu_kernel_kernel_overhead"
    out[etype == graph.LAUNCH] = "gpu_kernel_launch_overhead"
    return out


def _path_table(run, t, g, path, host, rank) -> pd.DataFrame:
    """One row per event on the path (in path order), with the time its edges hold."""
    src, dst = path[:-1], path[1:]
    eidx = graph.edge_ids(g, src, dst)
    w = g["weight"][eidx].astype(np.float64) / 1e6
    etype, attr = g["type"][eidx], g["attr"][eidx]
    bound = _bound_by(t, attr, etype)
    node_ev = g["node_ev"][path]
    # Events by first appearance: each edge's source, the event it lies in, its target.
    seq = np.c_[node_ev[:-1], attr, node_ev[1:]].reshape(-1) if len(src) else node_ev
    seq = seq[seq >= 0]
    ev, first = np.unique(seq, return_index=True)
    ev = ev[np.argsort(first, kind="stable")]
    pos = pd.Series(np.arange(len(ev)), index=ev)
    crit = np.zeros(len(ev))
    held = attr >= 0
    np.add.at(crit, pos[attr[held]].to_numpy(), w[held])
    launch = np.zeros(len(ev))
    isl = etype == graph.LAUNCH
    np.add.at(launch, pos[node_ev[1:][isl]].to_numpy(), w[isl])
    # An event's own bound_by: of its span edges (a kernel with only a gap: that gap's).
    span = held & (etype == graph.OPERATOR)
    own = pd.Series(bound[span]).groupby(attr[span]).first()
    gap = pd.Series(bound[held]).groupby(attr[held]).first()
    kind = _kinds(t, ev)
    fallback = np.where(kind == "kernel", "gpu_compute_bound", "cpu_bound")
    bound_by = own.reindex(ev).fillna(gap.reindex(ev)).to_numpy(object)
    bound_by = np.where(pd.isna(bound_by), fallback, bound_by)
    rows = t["row"][ev]
    out = pd.DataFrame(
        {
            "host": pd.Categorical([host] * len(ev)),
            "rank": pd.array([rank] * len(ev), dtype="Int64"),
            "name": t["name"][ev],
            "kind": pd.Categorical(kind),
            "start_us": run.events["start_us"].to_numpy()[rows],
            "dur_us": run.events["dur_us"].to_numpy()[rows],
            "critical_us": crit,
            "launch_delay_us": launch,
            "bound_by": pd.Categorical(bound_by),
            "on_path": np.isin(ev, node_ev),
            "event": rows,
        }
    )
    out.attrs["edges"] = pd.DataFrame({"weight_us": w, "type": etype, "bound_by": bound})
    return out


def critical_path(
    run, rank: int = 0, annotation: str = "ProfilerStep", instance_id=None
) -> pd.DataFrame:
    """The critical path of ``rank``'s region (CRITICAL_PATH), HTA's
    ``critical_path_analysis(rank, annotation, instance_id)`` at exact times: one row per event
    the path runs through or inside, in path order, with the time of the path it holds.

    ``annotation``: the region is the span of the events whose name contains it ('' for the
    whole trace); ``instance_id``: which of them (HTA counts from 0 in file order: the host's
    first), or an inclusive (first, last) pair; None here takes the last full ProfilerStep
    (the last but one; HTA's None takes the first). A trace without ProfilerStep takes the
    whole trace. The rows' ``critical_us`` and ``launch_delay_us`` sum to the path's length,
    ``attrs['length_us']``; ``attrs['edges']`` holds the path's edges in order (weight_us,
    HTA's type code as :data:`.critical_path_graph.EDGE_TYPES` spells it, bound_by): HTA's
    ``get_critical_path_breakdown``."""
    host, rows, recorded = _host_of_rank(run, rank)
    t = trace_table(run, rows)
    if annotation and instance_id is None:
        if not len(_instances(t, annotation)):
            annotation = "" if annotation == "ProfilerStep" else annotation
        else:
            instance_id = last_full_instance(t, annotation)
    lo, hi = window(t, annotation, instance_id)
    g = graph.build(t, lo, hi)
    try:
        path = graph.longest_path(g)
    except graph.CycleError as e:  # events that nest or sync in a circle: a broken trace
        raise CorruptProfileError(run.path, str(e)) from None
    if len(path) < 2:
        return schema.empty(CRITICAL_PATH)
    out = _path_table(run, t, g, path, host, recorded)
    edges = out.attrs.pop("edges")
    out = schema.conform(out, CRITICAL_PATH)
    out.attrs["edges"] = edges
    out.attrs["length_us"] = float(edges["weight_us"].sum())
    return out


def critical_path_summary(
    run, rank: int = 0, annotation: str = "ProfilerStep", instance_id=None
) -> pd.DataFrame:
    """HTA's ``summary()`` of :func:`critical_path` (same arguments; CRITICAL_PATH_SUMMARY):
    :func:`summarize` of the path (``run.critical_path``'s, kept, for the defaults)."""
    if (rank, annotation, instance_id) == (0, "ProfilerStep", None) and hasattr(
        type(run), "critical_path"
    ):
        return summarize(run.critical_path)
    return summarize(critical_path(run, rank, annotation, instance_id))


def summarize(path: pd.DataFrame) -> pd.DataFrame:
    """HTA's ``summary()`` of a :func:`critical_path` table (CRITICAL_PATH_SUMMARY): the
    path's length by what bounds each edge (``cpu_bound``, ``gpu_compute_bound``,
    ``gpu_communication_bound``, ``gpu_kernel_kernel_overhead``,
    ``gpu_kernel_launch_overhead``; dependencies and syncs weigh 0), its share in percent,
    and the resource: the host (cpu), the GPU (gpu) or waiting for a launch or a gap."""
    edges = path.attrs.get("edges")
    if edges is None or not len(edges):
        return schema.empty(CRITICAL_PATH_SUMMARY)
    by = edges[edges["bound_by"] != ""].groupby("bound_by")["weight_us"].sum()
    total = float(edges["weight_us"].sum())
    out = pd.DataFrame({"bound_by": by.index.astype(str), "critical_us": by.to_numpy()})
    out["resource"] = out["bound_by"].map(RESOURCES)
    with np.errstate(invalid="ignore", divide="ignore"):
        out["percent"] = 100 * out["critical_us"] / total
    out["bound_by"] = pd.Categorical(out["bound_by"])
    out["resource"] = pd.Categorical(out["resource"])
    return schema.conform(out, CRITICAL_PATH_SUMMARY)


__all__ = ["critical_path", "critical_path_summary", "summarize", "trace_table", "window"]
