"""Packing a lane's events into rows by real overlap: each event on the lowest row free when
it starts, so nested events stack as a flame and a GPU stream whose kernels overlap by a hair
(CUDA graphs) takes two rows, as in XProf and Perfetto. Rows come from greedy chains
(:func:`greedy_chain`): the first row takes the chain from the lane's first event, the next row
the chain of what is left, and so on."""

from __future__ import annotations

import numpy as np


def greedy_chain(ks: np.ndarray, ke: np.ndarray) -> np.ndarray:
    """Which events (sorted by start) the greedy chain from the first one takes: after each
    event, the first that starts at or after its end.

    An event that starts after every earlier one has ended (a *cut*: the running maximum of
    ends) is always on the chain, and the chain from a cut stays before the next cut. Where
    events nest properly the cuts are the whole chain (one pass, O(n)); only the stretches
    where an event starts after its cut ended but before the next cut (a partial overlap
    pushed the reach on) are walked by :func:`chain_by_doubling`."""
    m = len(ks)
    reach = np.maximum.accumulate(ke)
    cut = np.empty(m, bool)
    cut[0] = True
    np.greater_equal(ks[1:], reach[:-1], out=cut[1:])
    if cut.all():
        return cut
    # Ends at cuts never decrease (a cut starts after every earlier end), so a running maximum
    # gives each event the end of its stretch's cut: one pass, no gathers.
    cut_end = np.where(cut, ke, -np.inf)
    np.maximum.accumulate(cut_end, out=cut_end)
    late = ks >= cut_end
    late &= ~cut
    if late.any():
        cuts = np.flatnonzero(cut)
        bad = np.unique(np.searchsorted(cuts, np.flatnonzero(late), side="right") - 1)
        a, b = cuts[bad], np.r_[cuts, m][bad + 1]
        lengths = b - a
        idx = np.repeat(a - np.r_[0, np.cumsum(lengths)[:-1]], lengths) + np.arange(lengths.sum())
        cut[idx[chain_by_doubling(ks[idx], ke[idx])]] = True
    return cut


def chain_by_doubling(ks: np.ndarray, ke: np.ndarray) -> np.ndarray:
    """:func:`greedy_chain` on any events, vectorised: an event whose successor does not
    overlap it simply continues to it, so only the others ("jumps", found by binary search)
    form a graph, walked from the first with pointer doubling (log2 of the chain's jumps
    rounds); the chain is then runs of consecutive events between its jumps."""
    m = len(ks)
    jumps = np.empty(m, bool)
    np.less(ks[1:], ke[:-1], out=jumps[:-1])
    jumps[-1] = True
    at = np.flatnonzero(jumps)  # the end of each run of consecutive events
    nxt = np.maximum(np.searchsorted(ks, ke[at]), at + 1)  # m: the chain ends
    hop = np.searchsorted(at, nxt)  # the run that nxt starts in (len(at): none)
    q = len(at)
    seen = np.zeros(q + 1, bool)
    seen[0] = seen[q] = True  # the first run, and "the chain has ended"
    jump = np.r_[hop, q]
    while True:  # seen: runs at 0 .. 2**k - 1 hops; jump: 2**k hops
        to = jump[np.flatnonzero(seen[:q])]
        if seen[to].all():
            break
        seen[to] = True
        jump = jump[jump]
    runs = np.flatnonzero(seen[:q])
    runs = runs[nxt[runs] < m]
    first = np.r_[0, nxt[runs]]
    last = np.r_[at[0], at[hop[runs]]]
    cover = np.bincount(first, minlength=m + 1) - np.bincount(last + 1, minlength=m + 1)
    return np.cumsum(cover[:m]) > 0
