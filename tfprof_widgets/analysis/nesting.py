"""Nesting of events on one thread: which event directly encloses which.

Events on a host thread nest like a call stack (a TF op inside ExecutorState::Process, an
allocation inside the op). XProf measures self time with a stack: every event contributes a
begin and an end, sorted by time (ties kept in the order the events were recorded, begin
before end); a begin is pushed, an end pops the stack down to its own begin. An end whose
begin is not on top discards what lies above it (XProf's ``OpStack::Pop``), so events that
overlap without nesting lose their inner partner. :func:`stack_nesting` reproduces that,
vectorised for lines that nest properly (all real ones we have seen) and with a plain loop
for lines that do not.

Also the numbering of rows by equal values that several tables group by
(:func:`group_numbers`).
"""

from __future__ import annotations

import numpy as np
import pandas as pd


def to_ps(us: np.ndarray) -> np.ndarray:
    """Relative microsecond floats back to exact integer picoseconds."""
    return np.round(np.asarray(us, np.float64) * 1e6).astype(np.int64)


def stack_nesting(
    line: np.ndarray, begin: np.ndarray, end: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """XProf's stack nesting of intervals, per line: (recorded, parent).

    ``line`` groups the intervals (any integer key; intervals of a line need not be
    adjacent); ``begin``/``end`` are int64 picoseconds. The order of the arrays is the order
    in which the intervals were recorded, which breaks ties between equal times.
    ``recorded`` is False for intervals whose end found no begin on the stack (they count
    nowhere); ``parent`` is the index of the interval that encloses each one (-1 at the top),
    the one its time is subtracted from.
    """
    n = len(begin)
    recorded = np.ones(n, bool)
    parent = np.full(n, -1, np.int64)
    if n == 0:
        return recorded, parent
    # Two activities per interval, sorted by (line, time, order recorded, begin first).
    act = np.arange(2 * n) // 2
    is_end = np.tile(np.array([False, True]), n)
    ts = np.empty(2 * n, np.int64)
    ts[0::2], ts[1::2] = begin, end
    lines = np.repeat(np.asarray(line, np.int64), 2)
    order = np.lexsort((np.arange(2 * n), ts, lines))
    act, is_end, lines = act[order], is_end[order], lines[order]
    # Every interval opens and closes on its own line, so the running count is 0 at each
    # line's start: one cumulative sum gives every line's stack depth.
    depth = np.cumsum(np.where(is_end, -1, 1))
    # A begin opens level depth-1; an end closes level depth (after it).
    level = np.where(is_end, depth, depth - 1)
    pos = np.arange(2 * n)
    bpos = pos[~is_end]
    stride = 2 * n + 1
    bkey = level[bpos] * stride + bpos
    korder = np.argsort(bkey, kind="stable")
    bkey, bpos = bkey[korder], bpos[korder]

    def last_begin(lv: np.ndarray, before: np.ndarray) -> np.ndarray:
        """Position of the latest begin at level ``lv`` before ``before`` on the same
        line, -1 if none."""
        i = np.searchsorted(bkey, lv * stride + before) - 1
        found = bpos[np.maximum(i, 0)]
        ok = (i >= 0) & (level[found] == lv) & (lines[found] == lines[before])
        return np.where(ok, found, -1)

    epos = pos[is_end]
    match = last_begin(level[epos], epos)
    good = (match >= 0) & (act[np.maximum(match, 0)] == act[epos])
    bad_lines = np.unique(lines[epos[~good]])
    # Properly nested lines: the parent of a begin at level L is the latest begin at L-1.
    begins = pos[~is_end]
    outer = last_begin(level[begins] - 1, begins)
    has = (outer >= 0) & (level[begins] > 0)
    parent[act[begins[has]]] = act[outer[has]]
    if len(bad_lines):
        _stack_loop(np.isin(lines, bad_lines), lines, act, is_end, recorded, parent)
    return recorded, parent


def _stack_loop(sel, lines, act, is_end, recorded, parent) -> None:
    """XProf's OpStack, one activity at a time, for the lines that do not nest properly."""
    acts = act[sel]
    recorded[acts] = False
    parent[acts] = -1
    stack: list[int] = []
    prev = None
    for ln, a, e in zip(lines[sel].tolist(), acts.tolist(), is_end[sel].tolist()):
        if ln != prev:
            stack, prev = [], ln
        if not e:
            stack.append(a)
            continue
        while stack:  # pop down to this interval's begin, dropping what lies above it
            if stack.pop() == a:
                recorded[a] = True
                parent[a] = stack[-1] if stack else -1
                break


def children_sum(parent: np.ndarray, values: np.ndarray) -> np.ndarray:
    """Sum of ``values`` over each element's direct children."""
    has = parent >= 0
    return np.bincount(parent[has], weights=values[has], minlength=len(parent))


def interval_union(start: np.ndarray, end: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Sorted, disjoint intervals covering the same time as ``start``/``end``."""
    if not len(start):
        return start, end
    order = np.argsort(start, kind="stable")
    s, e = start[order], end[order]
    reach = np.maximum.accumulate(e)
    first = np.flatnonzero(np.r_[True, s[1:] > reach[:-1]])
    return s[first], np.maximum.reduceat(e, first)


def group_numbers(columns: list[np.ndarray]) -> np.ndarray:
    """Per row: the number of its group of equal values in ``columns``, the groups numbered
    in order of first appearance (``groupby(sort=False)``'s order). One integer key in
    place of several object ones: pandas groups by it for a fraction of their cost, with the
    same rows in each group in the same order, so the same sums."""
    code = np.zeros(len(columns[0]) if columns else 0, np.int64)
    for c in columns:
        c_code, distinct = pd.factorize(c)
        code, _ = pd.factorize(code * max(len(distinct), 1) + c_code)
    return np.asarray(code, np.int64)
