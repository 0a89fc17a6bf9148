"""torch-tb-profiler's operator view: every operator's host and device time
(``run.torch_ops``, and per input shape ``run.torch_ops_by_shape``).

Its rules (torch-tb-profiler 0.4.3's ``EventParser`` and ``OperatorNode.fill_stats``):

* Operators are the host's ``cpu_op`` events (torch 1.9: ``Operator``), ``ProfilerStep#N``
  and ``nn.Module`` events (python_function events with a ``Python module id``) aside; they
  nest per thread by time into trees, the steps and modules being nodes of them too.
* A runtime call (``cudaLaunchKernel``...) belongs to the operator with its ``External id``
  (one without: to the first node without one, a module, as tb_plugin's dict keyed by the
  id puts them together under None);
  the GPU activities (kernels, copies, memsets) with the call's ``correlation`` are what it
  launched, and their durations are its device time.
* Host total: the operator's duration; host self: that less its child nodes' and its runtime
  calls' durations (ours: of a call, only its part inside the operator; never below 0).
  Device self: the device time of its own runtime calls; device total: that plus its child
  nodes' device totals.
* An operator whose only child is an operator of the same name absorbs it: one call, the
  child's children and runtime calls (its own calls then count nowhere), as the autograd
  profiler's ``_remove_dup_nodes``.
* Rows: per operator name (and input shapes), summed over calls; the DataLoader's batches,
  ``DataParallel.forward``, ``DistributedDataParallel.forward`` and ``Optimizer.*`` are nodes
  but not rows. User annotations are no nodes (their children hang from what encloses them);
  ours on purpose, as in :mod:`.steps`: a DataLoader batch recorded as one is a node.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd

from ... import schema, stat_columns
from ...analysis.event_index import host_codes, on_device, times_ps
from ...analysis.memo import per_run
from ...analysis.nesting import group_numbers, stack_nesting
from . import names as torch_names
from .names import ANNOTATION, KERNEL, MEMCPY, MEMSET, OPERATOR, RUNTIME

_NOT_OPERATORS = ("DataParallel.forward", "DistributedDataParallel.forward")
_FIGURES = ("host_self_us", "host_total_us", "device_self_us", "device_total_us")


@per_run
def _kinds(run) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per event: its torch-tb-profiler type, whether it is a tree node, and whether an
    operator (a row of the view)."""
    ev = run.events
    n = len(ev)
    cat = stat_columns.categorical(run.stat_store, "cat", n)
    kind = torch_names.event_types(run)
    host = ~on_device(run)
    codes = ev["name"].cat.codes.to_numpy()
    names = pd.Series(ev["name"].cat.categories.astype(str))
    step = torch_names.is_step_marker(names)[codes]
    loader = torch_names.is_dataloader_next(names)[codes]
    collective = torch_names.is_collective(names)[codes]
    module = stat_columns.present(run.stat_store, "Python module id", n)
    annotation = (kind == ANNOTATION) & (step | loader | collective)
    node = host & ((kind == OPERATOR) | annotation | module)
    excluded = names.isin(_NOT_OPERATORS).to_numpy() | names.str.startswith("Optimizer.").to_numpy()
    python = np.append(
        pd.Series(cat.categories, dtype=object).astype(str).str.lower().eq("python").to_numpy(),
        False,
    )[np.asarray(cat.codes)]
    operator = node & ~step & ~module & ~python & ~loader & ~excluded[codes]
    return kind, node, operator


def launches(run, kinds=(KERNEL, MEMCPY, MEMSET)) -> tuple[np.ndarray, np.ndarray]:
    """GPU activity rows of ``kinds`` and the runtime-call row that launched each (-1: none
    found), by their host and correlation id (one call per id and host: the last recorded,
    as tb_plugin keeps). The host matters once ranks load as one run: each rank's CUPTI
    numbers its correlations from the same start, so an id alone would pair a rank's kernel
    with another rank's call."""
    n = len(run.events)
    kind = _kinds(run)[0]
    corr, has = stat_columns.numbers(run.stat_store, "correlation", n)
    host = host_codes(run)
    calls = np.flatnonzero((kind == RUNTIME) & has & ~on_device(run))
    gpu = np.flatnonzero(np.isin(kind, kinds) & on_device(run))
    owner = pd.DataFrame({"host": host[calls], "correlation": corr[calls], "call": calls})
    owner = owner.drop_duplicates(["host", "correlation"], keep="last")
    pairs = pd.DataFrame({"host": host[gpu], "correlation": corr[gpu]})
    hit = pairs.merge(owner, on=["host", "correlation"], how="left", sort=False)["call"]
    hit = hit.to_numpy(np.float64, na_value=np.nan)
    return gpu, np.where(has[gpu] & ~np.isnan(hit), np.nan_to_num(hit, nan=-1), -1).astype(np.int64)


def _device_time_of_calls(run, kind: np.ndarray, start, end) -> np.ndarray:
    """Per event: for a runtime call, the device time (ps) of what it launched (else 0)."""
    gpu, call = launches(run)
    ok = call >= 0
    device = np.zeros(len(run.events), np.int64)
    np.add.at(device, call[ok], end[gpu[ok]] - start[gpu[ok]])
    return device


def _merge_repeats(names: np.ndarray, op_kind: np.ndarray, parent: np.ndarray):
    """tb_plugin's remove_dup_nodes (after the autograd profiler's): an operator whose only
    child is an operator of the same name absorbs it (its children, and its runtime calls in
    place of its own). Returns (merged away, effective parent, keeps its calls)."""
    has = parent >= 0
    up = np.maximum(parent, 0)
    count = np.bincount(parent[has], minlength=len(parent))
    merged = has & (count[up] == 1) & (names == names[up]) & op_kind & op_kind[up]
    # The node each merged one became part of, up its chain of merges.
    rep = np.arange(len(parent))
    step = np.flatnonzero(merged)
    rep[step] = parent[step]
    while True:
        nxt = np.where(merged[rep], parent[rep], rep)
        if (nxt == rep).all():
            break
        rep = nxt
    eff_parent = np.where(has, rep[up], -1)
    # A node that absorbed its child ran the child's calls, not its own.
    absorbed = np.zeros(len(parent), bool)
    absorbed[parent[merged]] = True
    return merged, eff_parent, ~absorbed, rep


def _calls_to_nodes(run, kind, nodes):
    """The runtime calls attached to a node by their External id (torch 1.9: 'external
    id'): (call rows, node index of each); and the calls with External id 0 (tb_plugin hangs
    them from its tree's root)."""
    n = len(run.events)
    ext, has_ext = stat_columns.numbers(run.stat_store, "External id", n)
    low, has_low = stat_columns.numbers(run.stat_store, "external id", n)
    ext, has_ext = np.where(has_ext, ext, low), has_ext | has_low
    calls = np.flatnonzero((kind == RUNTIME) & ~on_device(run))
    node_of_ext = pd.Series(np.arange(len(nodes)), index=ext[nodes])[has_ext[nodes]]
    node_of_ext = node_of_ext[~node_of_ext.index.duplicated(keep="first")]
    to = node_of_ext.reindex(ext[calls]).to_numpy()
    got = has_ext[calls] & ~np.isnan(to)
    # tb_plugin matches a call without External id to the first node without one (a
    # module's python_function): its dict of calls by id has them under None.
    no_ext = np.flatnonzero(~has_ext[nodes])
    if len(no_ext):
        first = no_ext[np.argmin(run.events["start_us"].to_numpy()[nodes[no_ext]])]
        to = np.where(has_ext[calls], to, first)
        got |= ~has_ext[calls]
    at_root = calls[has_ext[calls] & (ext[calls] == 0) & ~got]
    return calls[got], to[got].astype(np.int64), at_root


@dataclasses.dataclass
class Tree:
    """tb_plugin's operator trees of a run: ``nodes`` (rows of run.events, tree order),
    ``parent`` (index into nodes after merges, -1 at a root), ``merged`` (absorbed by its
    parent), ``calls`` (runtime-call rows that count) and ``call_node`` (the node each
    belongs to), ``root_calls`` (External id 0: the root's)."""

    nodes: np.ndarray
    parent: np.ndarray
    merged: np.ndarray
    calls: np.ndarray
    call_node: np.ndarray
    root_calls: np.ndarray


@per_run
def operator_tree(run) -> Tree:
    ev = run.events
    kind, node, _ = _kinds(run)
    start, end = times_ps(run)
    nodes = np.flatnonzero(node)
    # Nest per thread, longer first at equal starts (tb_plugin's (start, -end) order).
    line = np.asarray(run.event_line_rows)[nodes]
    order = np.lexsort((-end[nodes], start[nodes], line))
    nodes, line = nodes[order], line[order]
    _, parent = stack_nesting(line, start[nodes], end[nodes])
    names = ev["name"].cat.codes.to_numpy()[nodes]
    merged, parent, own_calls, rep = _merge_repeats(names, kind[nodes] == OPERATOR, parent)
    calls, to, root = _calls_to_nodes(run, kind, nodes)
    keep = own_calls[to]
    return Tree(nodes, parent, merged, calls[keep], rep[to[keep]], root)


@per_run
def _node_figures(run) -> pd.DataFrame:
    """Per operator call: host, name, input shapes, and its four times (µs). Once per run
    (both tables group it); read only."""
    ev = run.events
    n = len(ev)
    kind, _, operator = _kinds(run)
    start, end = times_ps(run)
    tree = operator_tree(run)
    nodes, parent, merged = tree.nodes, tree.parent, tree.merged
    dur = end[nodes] - start[nodes]
    self_host = dur.copy()
    child = (parent >= 0) & ~merged
    np.subtract.at(self_host, parent[child], dur[child])
    # A runtime call belongs to its operator by External id, not by time: only the part of
    # it inside the operator is the operator's (a call past its end made host self < 0).
    node_start, node_end = start[nodes][tree.call_node], end[nodes][tree.call_node]
    inside = np.minimum(end[tree.calls], node_end) - np.maximum(start[tree.calls], node_start)
    np.subtract.at(self_host, tree.call_node, np.maximum(inside, 0))
    self_host = np.maximum(self_host, 0)
    device = _device_time_of_calls(run, kind, start, end)
    self_device = np.zeros(len(nodes), np.int64)
    np.add.at(self_device, tree.call_node, device[tree.calls])
    total_device = _subtree_sums(self_device, np.where(merged, -1, parent))
    rows = np.flatnonzero(operator[nodes] & ~merged)
    shapes, _ = stat_columns.strings(run.stat_store, "Input Dims", n)
    pick = nodes[rows]

    def text(col):  # a categorical column's str values at ``pick``, from its categories
        return np.asarray(col.array.categories.astype(str), object)[
            np.asarray(col.array.codes)[pick]
        ]

    return pd.DataFrame(
        {
            "host": text(ev["host"]),
            "name": text(ev["name"]),
            "input_shapes": pd.Series(shapes[pick], dtype=object).fillna("").to_numpy(),
            "host_self_us": self_host[rows] / 1e6,
            "host_total_us": dur[rows] / 1e6,
            "device_self_us": self_device[rows] / 1e6,
            "device_total_us": total_device[rows] / 1e6,
        }
    )


def _subtree_sums(values: np.ndarray, parent: np.ndarray) -> np.ndarray:
    """Per node: its value plus every descendant's (one hop up the tree per round)."""
    out = values.copy()
    who, carry = (
        np.flatnonzero((parent >= 0) & (values != 0)),
        values[(parent >= 0) & (values != 0)],
    )
    while len(who):
        up = parent[who]
        np.add.at(out, up, carry)
        more = parent[up] >= 0
        who, carry = up[more], carry[more]
    return out


def _grouped(run, keys: list[str], table: dict) -> pd.DataFrame:
    per_call = _node_figures(run)
    if not len(per_call):
        return schema.empty(table)
    cols = ["host", *keys]
    group = group_numbers([per_call[c].to_numpy() for c in cols])
    first = np.unique(group, return_index=True)[1]
    g = per_call[list(_FIGURES)].groupby(group, sort=False)
    out = g.sum()
    out.insert(0, "calls", g.size())
    for i, c in enumerate(cols):
        out.insert(i, c, per_call[c].to_numpy()[first])
    out = out.reset_index(drop=True).sort_values(
        ["host", "device_self_us", "host_self_us"], ascending=[True, False, False], kind="stable"
    )
    out["host"] = pd.Categorical(out["host"].astype(str))
    return schema.conform(out.reset_index(drop=True), table)


@per_run
def torch_ops(run) -> pd.DataFrame:
    """One row per host and operator name (schema.TORCH_OPS), the most device self time
    first."""
    return _grouped(run, ["name"], schema.TORCH_OPS)


@per_run
def torch_ops_by_shape(run) -> pd.DataFrame:
    """One row per host, operator name and input shapes (schema.TORCH_OPS_BY_SHAPE)."""
    return _grouped(run, ["name", "input_shapes"], schema.TORCH_OPS_BY_SHAPE)
