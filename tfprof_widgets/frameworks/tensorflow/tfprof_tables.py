"""tfprof's four tables (scope, op, graph, code), FLOPs and parameter totals, as DataFrames.

tfprof calls them views (its ``cmd``); here a "view" is a widget, so they are tables.

For runs loaded from TF1 tfprof profiles or RunMetadata (``run.tfprof_nodes`` and
``run.tfprof_execs``). The numbers follow ``tf.compat.v1.profiler``: a node's time is its
accelerator plus CPU kernel time; with ``step=-1`` each node's figures are averaged
(integer division, as tfprof does) over the steps it ran in; a node counts only when one of
its account types (op type, device, ``_trainable_variables``...) fully matches one of
``account_type_regexes``. Each row has the node's own ("self") figures and the ``total_*``
ones: the node plus what hangs below it in the table (scope: names under it; graph: the
inputs first reached through it; code: the nodes created under that call stack, gradient
nodes under their forward op's stack; op: the same as self). The scope, graph and code
tables give tfprof's rows and figures (with ``order_by="name"``; the code table names frames
by full path where tfprof shortens them).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np
import pandas as pd

__all__ = [
    "TABLE_METRICS",
    "tfprof_node_stats",
    "tfprof_table",
    "total_float_ops",
    "total_parameters",
]

# Column -> tfprof's `select` / `order_by` name.
TABLE_METRICS = {
    "run_count": "occurrence",
    "exec_us": "micros",
    "accelerator_exec_us": "accelerator_micros",
    "cpu_exec_us": "cpu_micros",
    "requested_bytes": "bytes",
    "peak_bytes": "peak_bytes",
    "residual_bytes": "residual_bytes",
    "output_bytes": "output_bytes",
    "parameters": "params",
    "float_ops": "float_ops",
}
_BY_OPTION = {v: k for k, v in TABLE_METRICS.items()}
_TIME_AND_MEMORY = list(TABLE_METRICS)


def _require(run) -> None:
    if run.tfprof_nodes.empty:
        raise ValueError(
            "this run has no tfprof graph nodes: tfprof tables need a TF1 tfprof "
            "profile (.tfprof) or RunMetadata (.run_metadata.pb)"
        )


def tfprof_node_stats(run, step: int = -1) -> pd.DataFrame:
    """One row per graph node with its figures for ``step`` (-1: average over its steps)."""
    _require(run)
    nodes = run.tfprof_nodes
    ex = run.tfprof_execs
    cols = [
        "run_count",
        "exec_us",
        "accelerator_exec_us",
        "cpu_exec_us",
        "requested_bytes",
        "peak_bytes",
        "residual_bytes",
        "output_bytes",
    ]
    if step >= 0:
        per = ex[ex["step"] == step].groupby(["host", "node"], observed=True)[cols].sum()
    else:
        g = ex.groupby(["host", "node"], observed=True)
        # tfprof: total over the node's steps // number of those steps (int64 arithmetic).
        per = (g[cols].sum() // g["step"].nunique().to_numpy()[:, None]).astype(float)
    out = nodes.join(per, on=["host", "node"])
    out[cols] = out[cols].fillna(0)
    for c in cols[:1] + cols[4:]:
        out[c] = out[c].astype("int64")
    out["float_ops"] = out["float_ops"].fillna(0).astype("int64")
    out["parameters"] = out["parameters"].fillna(0).astype("int64")
    return out


def _accounted(nodes: pd.DataFrame, regexes: Sequence[str]) -> np.ndarray:
    pats = [re.compile(r) for r in regexes]
    types = [t if t else (op,) for t, op in zip(nodes["op_types"], nodes["op"].astype(str))]
    return np.array([any(p.fullmatch(t) for p in pats for t in ts) for ts in types], bool)


def _tree_totals(names: list[str], parent: list[int], own: np.ndarray) -> np.ndarray:
    """Sum each row's own figures over its subtree (rows ordered parents first)."""
    total = own.copy()
    for i in range(len(names) - 1, -1, -1):
        if parent[i] >= 0:
            total[parent[i]] += total[i]
    return total


def _scope_rows(stats: pd.DataFrame) -> tuple[list[str], list[int], list[int]]:
    """Scope tree: every name prefix at '/' is a row; (names, parent, node row or -1)."""
    index: dict[str, int] = {}
    names, parent, node_row = [], [], []
    for row, name in enumerate(stats["node"]):
        parts = name.split("/")
        for d in range(1, len(parts) + 1):
            prefix = "/".join(parts[:d])
            if prefix not in index:
                index[prefix] = len(names)
                names.append(prefix)
                parent.append(index["/".join(parts[: d - 1])] if d > 1 else -1)
                node_row.append(-1)
        node_row[index[name]] = row
    order = sorted(range(len(names)), key=lambda i: names[i].count("/"))
    pos = {old: new for new, old in enumerate(order)}
    return (
        [names[i] for i in order],
        [pos[parent[i]] if parent[i] >= 0 else -1 for i in order],
        [node_row[i] for i in order],
    )


def tfprof_table(
    run,
    cmd: str = "scope",
    *,
    max_depth: int = 100,
    min_micros: float = 0,
    min_bytes: int = 0,
    min_peak_bytes: int = 0,
    min_residual_bytes: int = 0,
    min_output_bytes: int = 0,
    min_params: int = 0,
    min_float_ops: int = 0,
    min_occurrence: int = 0,
    order_by: str = "name",
    account_type_regexes: Sequence[str] = (".*",),
    start_name_regexes: Sequence[str] = (".*",),
    trim_name_regexes: Sequence[str] = (),
    show_name_regexes: Sequence[str] = (".*",),
    hide_name_regexes: Sequence[str] = (),
    select: Sequence[str] = ("micros", "bytes", "params", "float_ops", "occurrence"),
    step: int = -1,
    account_displayed_op_only: bool = True,
) -> pd.DataFrame:
    """One of tfprof's tables as a DataFrame, with tfprof's options (``ProfileOptionBuilder``
    names).

    ``cmd`` (tfprof's own name for it): "scope" (name scopes), "op" (one row per op type),
    "graph" (each node with its inputs below it, each node counted once) or "code" (Python
    call stacks that created the nodes). Columns (schema.TFPROF_TABLE): name, depth, parent
    (the row's parent name), nodes (graph nodes in the row and below), then for each selected
    figure its own value and ``total_<figure>``. Rows come in tree order (a parent before its
    children, children ordered by ``order_by``, largest first, or by name). Rows with no
    accounted node in or below them are not shown. ``min_*`` filters hide rows whose *total*
    is below the threshold; ``max_depth`` limits the depth shown; ``start_name_regexes``
    start the display at matching rows, ``trim_name_regexes`` cut everything below a match,
    ``show``/``hide`` keep or drop matching rows (their children still show).

    The "op" table is tfprof's op view, a chain rather than a tree: its rows (op types, by
    ``order_by`` on their own figures) each stand for themselves and every row after them,
    so a row's ``total_*`` is the sum of its own and all later rows' figures, and the
    ``min_*`` filters compare those cumulative totals (an op type with 0 bytes of its own
    shows under ``min_bytes=1`` when later rows have bytes, as in tfprof). With
    ``account_displayed_op_only`` (the default, as in every ``ProfileOptionBuilder`` preset)
    the totals then sum the shown rows only; ``False`` also counts the hidden ones.
    """
    _check_options(cmd, order_by, select)
    stats = tfprof_node_stats(run, step)
    metrics = list(TABLE_METRICS) + ["accounted"]
    stats["accounted"] = _accounted(stats, account_type_regexes).astype(np.int64)
    own = stats[metrics].to_numpy(dtype=np.float64)
    own[stats["accounted"].to_numpy() == 0] = 0

    df = _rows(cmd, stats, own, metrics)
    mins = _mins(
        min_micros,
        min_bytes,
        min_peak_bytes,
        min_residual_bytes,
        min_output_bytes,
        min_params,
        min_float_ops,
    )
    shown = dict(
        max_depth=max_depth,
        order_by=order_by,
        select=select,
        start=start_name_regexes,
        trim=trim_name_regexes,
        show=show_name_regexes,
        hide=hide_name_regexes,
    )
    if cmd == "op":
        return _op_chain(
            df,
            mins=mins,
            min_occurrence=min_occurrence,
            displayed_only=account_displayed_op_only,
            **shown,
        )
    return _display(df, cmd, mins={**mins, "run_count": min_occurrence}, **shown)


def _check_options(cmd: str, order_by: str, select: Sequence[str]) -> None:
    if cmd not in ("scope", "op", "graph", "code"):
        raise ValueError(f"cmd must be 'scope', 'op', 'graph' or 'code', not {cmd!r}")
    if order_by != "name" and order_by not in _BY_OPTION:
        raise ValueError(f"order_by must be 'name' or one of {sorted(_BY_OPTION)}")
    unknown = [s for s in select if s not in _BY_OPTION]
    if unknown:
        raise ValueError(f"unknown select {unknown}; choose from {sorted(_BY_OPTION)}")


def _rows(cmd: str, stats: pd.DataFrame, own: np.ndarray, metrics: list[str]) -> pd.DataFrame:
    """Every row of the table before filtering: name, parent_index, depth, nodes, and each
    metric's own and total value."""
    if cmd == "op":
        keys = stats["op"].astype(str).replace("", "(unknown op)")
        grouped = pd.DataFrame(own, columns=metrics).groupby(keys.to_numpy(), sort=False)
        agg = grouped.sum()
        names, parent = list(agg.index), [-1] * len(agg)
        own_rows, total = agg.to_numpy(), agg.to_numpy()
        counts = grouped.size().reindex(agg.index).to_numpy()
    else:
        names, parent, own_rows, total, counts = _tree(cmd, stats, own, metrics)

    df = pd.DataFrame({"name": names, "parent_index": parent})
    depth = np.zeros(len(df), np.int64)
    for i, p in enumerate(parent):
        depth[i] = depth[p] + 1 if p >= 0 else 0
    df["depth"] = depth
    df["nodes"] = counts
    for j, m in enumerate(metrics):
        df[m] = own_rows[:, j]
        df["total_" + m] = total[:, j]
    return df


def _tree(cmd: str, stats: pd.DataFrame, own: np.ndarray, metrics: list[str]):
    if cmd == "scope":
        names, parent, node_row = _scope_rows(stats)
        own_rows = np.zeros((len(names), len(metrics)))
        has = np.array(node_row) >= 0
        own_rows[has] = own[np.array(node_row)[has]]
        counts = _tree_totals(names, parent, has.astype(float)).astype(np.int64)
        return names, parent, own_rows, _tree_totals(names, parent, own_rows), counts
    if cmd == "code":
        index: dict[tuple, int] = {}
        names, parent = [], []
        own_rows_list: list[np.ndarray] = []
        leaf_of = np.full(len(stats), -1)
        for row, frames in enumerate(_code_stacks(stats)):
            if not frames:  # tfprof leaves nodes without a traceback out of this table
                continue
            for d in range(1, len(frames) + 1):
                key = frames[:d]
                if key not in index:
                    index[key] = len(names)
                    names.append(frames[d - 1])
                    parent.append(index[frames[: d - 1]] if d > 1 else -1)
                    own_rows_list.append(np.zeros(len(metrics)))
            leaf_of[row] = index[frames]
            own_rows_list[index[frames]] = own_rows_list[index[frames]] + own[row]
        own_rows = np.array(own_rows_list) if own_rows_list else np.zeros((0, len(metrics)))
        has = np.bincount(leaf_of[leaf_of >= 0], minlength=len(names)).astype(float)
        counts = _tree_totals(names, parent, has).astype(np.int64)
        return names, parent, own_rows, _tree_totals(names, parent, own_rows), counts
    # graph: tfprof's graph table is a depth-first walk from the nodes nothing consumes, each
    # node's inputs below it (by name); a node is counted once, under the first row that
    # reaches it, so a row's total is itself plus the inputs first reached through it.
    by_name = {n: i for i, n in enumerate(stats["node"])}
    node_names = stats["node"].tolist()
    inputs = [
        list(dict.fromkeys(by_name[x] for x in ins if x in by_name)) for ins in stats["inputs"]
    ]
    consumed = {j for ins in inputs for j in ins}
    roots = sorted((i for i in range(len(stats)) if i not in consumed), key=node_names.__getitem__)
    names, parent, node_row = [], [], []
    placed: set[int] = set()
    stack = [(i, -1) for i in reversed(roots)]
    while stack:
        i, p = stack.pop()
        if i in placed:
            continue
        placed.add(i)
        node_row.append(i)
        names.append(node_names[i])
        parent.append(p)
        me = len(names) - 1
        stack.extend((j, me) for j in reversed(inputs[i]) if j not in placed)
    rows = np.array(node_row, np.int64)
    own_rows = own[rows] if len(rows) else np.zeros((0, own.shape[1]))
    total = _tree_totals(names, parent, own_rows)
    counts = _tree_totals(names, parent, np.ones(len(names))).astype(np.int64)
    return names, parent, own_rows, total, counts


_GRADIENT_NODE = re.compile(r"^gradients(?:_\d+)?/(.*?)_grad/")


def _code_stacks(stats: pd.DataFrame) -> list[tuple]:
    """Each node's call stack for the code table. Like tfprof, a gradient node
    ('gradients/<op>_grad/...') is shown under its forward op's stack, each frame marked
    ' (gradient)', since the stack that built it is the optimizer's, not the model's."""
    code = dict(zip(stats["node"], stats["code"]))
    out = []
    for name, frames in zip(stats["node"], stats["code"]):
        m = _GRADIENT_NODE.match(name)
        forward = code.get(m.group(1)) if m else None
        out.append(tuple(f + " (gradient)" for f in forward) if forward else frames)
    return out


def _mins(micros, nbytes, peak, residual, output, params, float_ops) -> dict[str, float]:
    return {
        "exec_us": micros,
        "requested_bytes": nbytes,
        "peak_bytes": peak,
        "residual_bytes": residual,
        "output_bytes": output,
        "parameters": params,
        "float_ops": float_ops,
    }


def _matches(name: str, regexes) -> bool:
    return any(re.fullmatch(r, name) for r in regexes)


def _op_chain(
    df: pd.DataFrame,
    *,
    max_depth,
    order_by,
    select,
    mins,
    min_occurrence,
    start,
    trim,
    show,
    hide,
    displayed_only,
) -> pd.DataFrame:
    """tfprof's op view (``tfprof_op.cc``): op types in name order, then sorted by their own
    ``order_by`` figure, largest first (a stable sort: TF 2.21's tfprof keeps name order
    among equal figures, 40 op types checked); only accounted types take part; each row's
    totals are the suffix sums over the rows from it down; rows are shown from the first
    that matches ``start`` until ``trim`` matches or ``max_depth`` rows, when their
    cumulative totals reach every ``min_*`` and the type has at least ``min_occurrence``
    graph nodes. With ``displayed_only`` the totals are then the suffix sums over the shown
    rows: an op type hidden below the last shown row (a 0-byte feed ``_arg_*`` node of 1-2
    µs under ``min_bytes=1``) is neither shown nor counted. (The scope, graph and code
    tables do not use it: their totals count every accounted node below a row, tfprof's
    figure whenever nothing below is hidden.)"""
    df = df[df["accounted"] > 0].sort_values("name", kind="stable")
    if order_by != "name":
        df = df.sort_values(_BY_OPTION[order_by], ascending=False, kind="stable")
    df = df.reset_index(drop=True)
    metrics = list(TABLE_METRICS)
    own = df[metrics].to_numpy(np.float64)
    total = np.cumsum(own[::-1], axis=0)[::-1]
    col = {m: j for j, m in enumerate(metrics)}
    names = df["name"].astype(str).tolist()
    first = next((i for i, n in enumerate(names) if _matches(n, start)), len(names))
    shown = []
    for depth, i in enumerate(range(first, len(names))):
        if _matches(names[i], trim) or depth > max_depth:
            break
        if (
            all(total[i, col[m]] >= v for m, v in mins.items() if v)
            and df["nodes"].iat[i] >= min_occurrence
            and _matches(names[i], show)
            and not _matches(names[i], hide)
        ):
            shown.append(i)
    rows = np.array(shown, np.int64)
    if displayed_only:
        total = np.zeros_like(own)
        total[rows] = np.cumsum(own[rows][::-1], axis=0)[::-1]
    res = df.iloc[rows].copy()
    for m in metrics:
        res["total_" + m] = total[rows, col[m]]
    res["depth"] = 0
    res["parent"] = ""
    picked = [_BY_OPTION[s] for s in select]
    cols = ["name", "depth", "parent", "nodes"] + [c for m in picked for c in (m, "total_" + m)]
    res = res[cols].reset_index(drop=True)
    res.attrs["cmd"] = "op"
    return res


def _display(
    df: pd.DataFrame, cmd: str, *, max_depth, order_by, select, mins, start, trim, show, hide
) -> pd.DataFrame:
    def matches(name: str, regexes) -> bool:
        return any(re.fullmatch(r, name) for r in regexes)

    n = len(df)
    children: list[list[int]] = [[] for _ in range(n)]
    roots = []
    for i, p in enumerate(df["parent_index"]):
        (children[p] if p >= 0 else roots).append(i)
    key = "name" if order_by == "name" else "total_" + _BY_OPTION[order_by]
    vals = df[key].to_numpy()

    def ordered(ids):
        return (
            sorted(ids, key=lambda i: vals[i])
            if key == "name"
            else sorted(ids, key=lambda i: (-vals[i], df["name"].iat[i]))
        )

    out: list[tuple[int, int, int]] = []  # (row, shown depth, shown parent row)

    def walk(i: int, depth: int, started: bool, shown_parent: int) -> None:
        name = str(df["name"].iat[i])
        started = started or matches(name, start)
        keep = (
            started
            and depth <= max_depth
            and matches(name, show)
            and df["total_accounted"].iat[i] > 0
            and not matches(name, hide)
            and all(df["total_" + m].iat[i] >= v for m, v in mins.items() if v)
        )
        me = shown_parent
        if keep:
            out.append((i, depth, shown_parent))
            me = i
        if matches(name, trim) or depth >= max_depth:
            return
        for c in ordered(children[i]):
            walk(c, depth + 1 if keep else depth, started, me)

    for r in ordered(roots):
        walk(r, 0, False, -1)

    rows = [r for r, _, _ in out]
    res = df.iloc[rows].copy()
    res["depth"] = [d for _, d, _ in out]
    res["parent"] = [str(df["name"].iat[p]) if p >= 0 else "" for _, _, p in out]
    picked = [_BY_OPTION[s] for s in select]
    cols = ["name", "depth", "parent", "nodes"] + [c for m in picked for c in (m, "total_" + m)]
    res = res[cols].reset_index(drop=True)
    res.attrs["cmd"] = cmd
    return res


def total_float_ops(run) -> int:
    """Floating-point operations of one run of the graph, as tfprof's float_operation()
    reports them (every node with a registered FLOPs statistic)."""
    _require(run)
    return int(run.tfprof_nodes["float_ops"].fillna(0).sum())


def total_parameters(run, trainable_only: bool = True) -> int:
    """Variable elements, as tfprof's trainable_variables_parameter() reports them."""
    _require(run)
    nodes = run.tfprof_nodes
    keep = (
        nodes["trainable"].fillna(False).to_numpy(bool)
        if trainable_only
        else nodes["op"].astype(str).str.contains("Variable|VarHandle").to_numpy()
    )
    return int(nodes.loc[keep, "parameters"].fillna(0).sum())
