"""Flow binding and linking (readers/chrome/pairs.py) are vectorised: they give exactly what
the per-point loops they replaced gave (kept here as the reference), on random flows and
slices, reused ids, unmatched ends, equal times, and points without a time."""

import numpy as np
import pytest

from tfprof_widgets.readers.chrome.decode import PH_CODE
from tfprof_widgets.readers.chrome.pairs import bind_to_slices, flow_links

S, T, F = PH_CODE["s"], PH_CODE["t"], PH_CODE["f"]


def bind_reference(line, ts, next_slice, slices_line, slices_start, slices_end):
    """The loop bind_to_slices was: per line, per point, walking back over the slices."""
    out = np.full(len(line), -1, np.int64)
    if not len(line) or not len(slices_line):
        return out
    order = np.lexsort((-(slices_end - slices_start), slices_start, slices_line))
    s_line, s_start, s_end = slices_line[order], slices_start[order], slices_end[order]
    bounds = np.searchsorted(s_line, np.arange(int(max(s_line.max(), line.max())) + 2))
    for ln in np.unique(line).tolist():
        lo, hi = bounds[ln], bounds[ln + 1]
        q = np.flatnonzero(line == ln)
        if lo == hi:
            continue
        starts, ends = s_start[lo:hi], s_end[lo:hi]
        reach = np.maximum.accumulate(ends)
        t = ts[q]
        nxt = next_slice[q]
        k_next = lo + np.searchsorted(starts, t, side="left")
        ok_next = nxt & (k_next < hi)
        out[q[ok_next]] = order[k_next[ok_next]]
        k = np.searchsorted(starts, t, side="right") - 1
        for qi, ki, ti in zip(q[~nxt].tolist(), k[~nxt].tolist(), t[~nxt].tolist()):
            while ki >= 0 and reach[ki] >= ti:
                if ends[ki] >= ti:
                    out[qi] = order[lo + ki]
                    break
                ki -= 1
    return out


def links_reference(keys, phase, ts, bound, first_id):
    """The loop flow_links was: a stack per id, point by point in time order."""
    rank = np.select([phase == S, phase == T], [0, 1], 2)
    order = np.lexsort((rank, ts, keys))
    prod, cons = [], []
    used = np.zeros(len(keys), bool)
    open_: dict[int, list[int]] = {}
    for i, p, k in zip(order.tolist(), phase[order].tolist(), keys[order].tolist()):
        stack = open_.setdefault(k, [])
        if p == S:
            stack.append(i)
            continue
        if not stack:
            continue
        a = stack.pop() if p == F else stack[-1]
        if p != F:
            stack[-1] = i
        if bound[a] >= 0 and bound[i] >= 0 and bound[a] != bound[i]:
            prod.append(int(bound[a]))
            cons.append(int(bound[i]))
            used[a] = used[i] = True
    return prod, cons, int((~used).sum())


@pytest.mark.parametrize("seed", range(300))
def test_binding_matches_the_loop(seed):
    rng = np.random.default_rng(seed)
    n_lines = int(rng.integers(1, 5))
    m = int(rng.integers(0, 60))
    grid = float(rng.choice([1.0, 0.5, 10.0]))  # coarse times: many equal starts and ends
    s_line = rng.integers(0, n_lines, m)
    s_start = np.round(rng.uniform(0, 100, m) / grid) * grid
    s_end = s_start + np.round(rng.exponential(20, m) / grid) * grid * (rng.random(m) < 0.9)
    k = int(rng.integers(0, 60))
    line = rng.integers(0, n_lines + 1, k)  # a line without slices too
    ts = np.round(rng.uniform(-5, 130, k) / grid) * grid
    ts[rng.random(k) < 0.05] = np.nan
    nxt = rng.random(k) < 0.3
    got = bind_to_slices(line, ts, nxt, s_line, s_start, s_end)
    assert got.tolist() == bind_reference(line, ts, nxt, s_line, s_start, s_end).tolist()


@pytest.mark.parametrize("seed", range(300))
def test_linking_matches_the_loop(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(0, 80))
    keys = rng.integers(0, int(rng.integers(1, 6)), n).astype(np.int64)
    phase = rng.choice([S, T, F], n, p=rng.dirichlet([1, 1, 1])).astype(np.int8)
    ts = rng.integers(0, 20, n).astype(float)  # many equal times
    bound = rng.integers(-1, 6, n).astype(np.int64)
    got = flow_links(keys, phase, ts, bound, first_id=5)
    prod, cons, unlinked = links_reference(keys, phase, ts, bound, 5)
    assert got.producer.tolist() == prod and got.consumer.tolist() == cons
    assert got.flow_id.tolist() == list(range(5, 5 + len(prod)))
    assert got.unlinked == unlinked


def test_a_crafted_staircase_binds_in_linear_time():
    """200,000 slices nested into a staircase and as many points: walking back slice by slice
    took minutes (quadratic); the segment tree takes well under a second."""
    import time

    n = 200_000
    start = np.arange(n, dtype=float)
    end = 2.0 * n - start  # each slice inside the previous one
    line = np.zeros(n, np.int64)
    ts = np.full(n, 1.5 * n)  # inside the outer half only: a long walk back from the inner
    t = time.perf_counter()
    got = bind_to_slices(line, ts, np.zeros(n, bool), line, start, end)
    assert time.perf_counter() - t < 5
    assert (got == n // 2).all()  # the innermost slice that still reaches 1.5 n: end 1.5 n
