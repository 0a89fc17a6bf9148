"""Nesting of events on one thread: which event directly encloses which.

Events on a host thread nest like a call stack (a TF op inside ExecutorState::Process,
a kernel launch inside the op). Self time, step containment and tree roots all need the
enclosing event, computed here once per line with integer picosecond times so that equal
boundaries compare exactly.
"""

from __future__ import annotations

import numpy as np


def to_ps(us: np.ndarray) -> np.ndarray:
    """Relative microsecond floats back to exact integer picoseconds."""
    return np.round(np.asarray(us, np.float64) * 1e6).astype(np.int64)


def direct_parents(start: np.ndarray, end: np.ndarray) -> np.ndarray:
    """Index of the innermost enclosing interval of each interval, -1 for top level.

    ``start``/``end`` are one line's intervals in any order. An interval encloses another
    when it starts no later and ends no earlier; of two identical intervals the first one
    (in the order given) is the parent. Intervals that overlap without nesting (malformed
    traces) get no parent.
    """
    n = len(start)
    parent = np.full(n, -1, np.int64)
    if n < 2:
        return parent
    order = np.lexsort((np.arange(n), -end, start))
    s = start[order].tolist()
    e = end[order].tolist()
    stack: list[int] = []  # positions in `order`, innermost last
    par = [-1] * n
    for i in range(n):
        si, ei = s[i], e[i]
        while (
            stack
            and e[stack[-1]] <= si
            and not (e[stack[-1]] == si and s[stack[-1]] == si and ei == si)
        ):
            stack.pop()
        if stack and ei <= e[stack[-1]]:
            par[i] = stack[-1]
        stack.append(i)
    par_arr = np.array(par, np.int64)
    has = par_arr >= 0
    parent[order[has]] = order[par_arr[has]]
    return parent


def children_sum(parent: np.ndarray, values: np.ndarray) -> np.ndarray:
    """Sum of ``values`` over each element's direct children."""
    has = parent >= 0
    return np.bincount(parent[has], weights=values[has], minlength=len(parent))
