"""Chrome trace phases → timed events, and flow events → producer/consumer links.

Pairing is vectorised: a begin/end sequence per key (a thread for ``B``/``E``; process,
category, id and name for async events) is matched the way a stack would match it, from
running depths (an end with nothing open is ignored, as Chrome does), never by a Python loop
over events. What each phase becomes:

* ``X``: as is (no ``dur``: 0); ``B``/``E``: one event per matched pair, matched in timestamp
  order per thread (file order at equal times; the end's args are merged into the begin's;
  unclosed begins and ends before any begin are counted, and warned about);
* async ``b``/``e`` and legacy ``S``/``F``: one event per pair matched in timestamp order (the
  catapult traces are not sorted), on the process's "Async" line; their steps ``n``/``T``/
  ``p`` are instants there;
* instants ``i``/``I`` and samples ``P`` on their thread; counters ``C`` on the process's
  "Counters" line (one event each, the series values as stats); object events ``N``/``O``/
  ``D`` on its "Objects" line;
* flow events ``s``/``t``/``f`` become links (:func:`flow_links`), not events.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd

from .decode import PH_CODE, PH_OTHER

# The line an event goes to: its thread, or one of the process's own lines.
THREAD, ASYNC, COUNTERS, OBJECTS = 0, 1, 2, 3
SLOT_NAMES = {ASYNC: "Async", COUNTERS: "Counters", OBJECTS: "Objects"}

_P = PH_CODE
_INSTANT_SLOT = {
    _P["i"]: THREAD,
    _P["I"]: THREAD,
    _P["P"]: THREAD,
    _P["n"]: ASYNC,
    _P["T"]: ASYNC,
    _P["p"]: ASYNC,
    _P["C"]: COUNTERS,
    _P["N"]: OBJECTS,
    _P["O"]: OBJECTS,
    _P["D"]: OBJECTS,
}
_FLOW = (_P["s"], _P["t"], _P["f"])


@dataclasses.dataclass
class Timed:
    """The timeline events a trace holds, each from one source event (``src``)."""

    src: np.ndarray  # int64: position in traceEvents of the event (the begin of a pair)
    ts: np.ndarray  # float64 µs
    dur: np.ndarray  # float64 µs
    slot: np.ndarray  # int8: THREAD, ASYNC, COUNTERS or OBJECTS
    ends: np.ndarray  # int64: the source end event of each pair (-1 for single events)
    pairs: np.ndarray  # bool: a B/E pair (a slice flows can bind to, like X)
    unclosed: int  # begins (B, b, S) never ended
    unopened: int  # ends (E, e, F) with nothing open
    skipped: dict  # phase -> count of events of phases we do not load


def _match(keys: np.ndarray, is_begin: np.ndarray) -> tuple[np.ndarray, np.ndarray, int]:
    """Match begins to ends like a stack per key, in the given order.

    Returns (begin positions, end positions, unopened ends); positions index ``keys``.
    """
    n = len(keys)
    if not n:
        return np.zeros(0, np.int64), np.zeros(0, np.int64), 0
    order = np.argsort(keys, kind="stable")
    step = np.where(is_begin[order], 1, -1).astype(np.int64)
    begin = step > 0
    pos, grp, before = _by_level(keys[order], step)
    effective_end = ~begin & (before > 0)
    is_b = begin[pos]
    nxt = np.zeros(len(pos), bool)
    nxt[:-1] = is_b[:-1] & ~is_b[1:] & (grp[:-1] == grp[1:])
    b_pos = order[pos[:-1][nxt[:-1]]] if len(pos) > 1 else np.zeros(0, np.int64)
    e_pos = order[pos[1:][nxt[:-1]]] if len(pos) > 1 else np.zeros(0, np.int64)
    unopened = int((~begin & ~effective_end).sum())
    return b_pos, e_pos, unopened


def _by_level(keys: np.ndarray, step: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Rows (sorted by key) as a stack machine per key: +1 opens, -1 closes the innermost
    open one (ignored when nothing is open), 0 belongs to the innermost open one (ignored
    likewise). Returns the rows that count (positions) grouped by (key, stack level), in row
    order within a group (so a group reads: open, its members, its close, the next open...),
    each one's group number, and each row's depth before it."""
    n = len(keys)
    first = np.ones(n, bool)
    first[1:] = keys[1:] != keys[:-1]
    seg = np.cumsum(first) - 1
    c = np.cumsum(step)
    c = c - (c - step)[first][seg]  # running sum restarting at each key
    # Floored at zero (an end with nothing open is ignored): c - min(0, running min of c).
    big = 2 * n + 4
    low = np.minimum.accumulate(c - seg * big) + seg * big
    depth = c - np.minimum(low, 0)
    before = np.empty(n, np.int64)
    before[0] = 0
    before[1:] = depth[:-1]
    before[first] = 0
    opens = step > 0
    level = np.where(opens, depth, before)
    pos = np.flatnonzero(opens | (before > 0))
    grp = seg[pos] * (int(level.max()) + 2) + level[pos]
    o = np.argsort(grp, kind="stable")
    return pos[o], grp[o], before


def id_codes(*columns: np.ndarray) -> np.ndarray:
    """One int64 key per row from several columns of numbers (codes, where -1, "none", is a
    value like the others), each renumbered by first appearance: rows have equal keys where
    all their values are equal, and keys sort as the values do by first appearance, column
    by column."""
    key = np.zeros(len(columns[0]), np.int64)
    for col in columns:
        codes, uniques = pd.factorize(np.asarray(col))
        key = key * (len(uniques) + 1) + codes
        if len(uniques) and key.max() > 2**40:  # keep the product small: re-factorise
            key = pd.factorize(key)[0].astype(np.int64)
    return key


def timed_events(dec, thread_key: np.ndarray, pid_key: np.ndarray) -> Timed:
    """Resolve the phases of ``dec`` (a :class:`~.chrome_decode.Decoded`) into events.

    ``thread_key``/``pid_key``: an int64 per source event naming its thread / process.
    """
    ph = dec.ph
    parts_src, parts_ts, parts_dur, parts_slot, parts_end, parts_pair = [], [], [], [], [], []

    def add(src, ts, dur, slot, ends, pair):
        parts_src.append(src)
        parts_ts.append(ts)
        parts_dur.append(dur)
        parts_slot.append(np.full(len(src), slot, np.int8) if np.isscalar(slot) else slot)
        parts_end.append(ends)
        parts_pair.append(np.full(len(src), pair, bool))

    x = np.flatnonzero(ph == _P["X"])
    add(x, dec.ts[x], np.nan_to_num(dec.dur[x], nan=0.0), THREAD, np.full(len(x), -1), False)

    be = np.flatnonzero((ph == _P["B"]) | (ph == _P["E"]))
    # Timestamp order, as Perfetto and chrome://tracing pair them (a trace need not be sorted:
    # an E listed before its B is valid); file order where times are equal (back-to-back).
    be = be[np.argsort(dec.ts[be], kind="stable")]
    b, e, unopened = _match(thread_key[be], ph[be] == _P["B"])
    b, e = be[b], be[e]
    add(b, dec.ts[b], np.maximum(dec.ts[e] - dec.ts[b], 0.0), THREAD, e, True)
    unclosed = len(be) - len(b) * 2 - unopened

    for begin, end in (("b", "e"), ("S", "F")):
        sel = np.flatnonzero((ph == _P[begin]) | (ph == _P[end]))
        if not len(sel):
            continue
        # Timestamp order, a begin before an end at the same time.
        sel = sel[np.lexsort((ph[sel] == _P[end], dec.ts[sel]))]
        key = id_codes(pid_key[sel], dec.cat.codes[sel], dec.id.codes[sel], dec.name.codes[sel])
        bb, ee, unop = _match(key, ph[sel] == _P[begin])
        bb, ee = sel[bb], sel[ee]
        add(bb, dec.ts[bb], np.maximum(dec.ts[ee] - dec.ts[bb], 0.0), ASYNC, ee, False)
        unclosed += len(sel) - 2 * len(bb) - unop
        unopened += unop

    inst = np.flatnonzero(np.isin(ph, list(_INSTANT_SLOT)))
    slots = np.zeros(len(PH_CODE) + 2, np.int8)
    for p, s in _INSTANT_SLOT.items():
        slots[p] = s
    add(inst, dec.ts[inst], np.zeros(len(inst)), slots[ph[inst]], np.full(len(inst), -1), False)

    skipped = {}
    other = np.flatnonzero(ph == PH_OTHER)
    if len(other):
        vc = pd.Series(dec.ph_text.codes[other]).value_counts()
        skipped = {dec.ph_text.values[k]: int(v) for k, v in vc.items()}
    return Timed(
        src=np.concatenate(parts_src).astype(np.int64),
        ts=np.concatenate(parts_ts),
        dur=np.concatenate(parts_dur),
        slot=np.concatenate(parts_slot).astype(np.int8),
        ends=np.concatenate(parts_end).astype(np.int64),
        pairs=np.concatenate(parts_pair),
        unclosed=int(unclosed),
        unopened=int(unopened),
        skipped=skipped,
    )


# -- flows ------------------------------------------------------------------------------------


@dataclasses.dataclass
class Links:
    """Producer → consumer links between timeline events (positions in the output)."""

    producer: np.ndarray  # int64
    consumer: np.ndarray  # int64
    flow_id: np.ndarray  # int64: unique per link within the file
    flow_type: np.ndarray  # int64: XProf ContextType (0 generic, 9 GPU launch)
    unlinked: int = 0  # flow points that bound to no slice or had no partner

    @classmethod
    def empty(cls) -> Links:
        z = np.zeros(0, np.int64)
        return cls(z, z, z, z, 0)

    @classmethod
    def concat(cls, parts: list[Links]) -> Links:
        return cls(
            *(
                np.concatenate([getattr(p, f) for p in parts])
                for f in ("producer", "consumer", "flow_id", "flow_type")
            ),
            sum(p.unlinked for p in parts),
        )


def bind_to_slices(
    line: np.ndarray,
    ts: np.ndarray,
    next_slice: np.ndarray,
    slices_line,
    slices_start,
    slices_end,
) -> np.ndarray:
    """The slice each flow point binds to (-1 for none), per Chrome's rules.

    A point binds to the innermost slice on its thread that encloses its time (``s``, ``t``
    and ``f`` with ``"bp": "e"``), or, where ``next_slice``, to the first slice that starts at
    or after it (``f`` without a binding point: flow v1's "next slice"). Slices must nest on
    a thread, as Chrome requires; the innermost enclosing one is then the latest-starting
    slice that still contains the time (on equal starts, the shorter one). A point without a
    time binds to none.
    """
    out = np.full(len(line), -1, np.int64)
    if not len(line) or not len(slices_line):
        return out
    order = np.lexsort((-(slices_end - slices_start), slices_start, slices_line))
    s_line, s_start, s_end = slices_line[order], slices_start[order], slices_end[order]
    timed = np.flatnonzero(~np.isnan(ts))
    # (line, time) as one int64 that sorts like the pair: times by their rank among all.
    times = np.unique(np.concatenate([s_start, s_end, ts[timed]]))
    width = len(times) + 1
    start_key = s_line * width + np.searchsorted(times, s_start)
    end_key = s_line * width + np.searchsorted(times, s_end)
    t_key = line[timed] * width + np.searchsorted(times, ts[timed])
    nxt = next_slice[timed]
    # The first slice of the line starting at or after the point.
    k = np.searchsorted(start_key, t_key[nxt], side="left")
    ok = k < len(s_line)
    ok[ok] = s_line[k[ok]] == line[timed[nxt]][ok]
    out[timed[nxt][ok]] = order[k[ok]]
    # The latest-starting slice at or before the point whose end reaches it (the slices of
    # earlier lines have smaller keys, so they never do).
    k = np.searchsorted(start_key, t_key[~nxt], side="right") - 1
    j = _last_at_least(end_key, k, t_key[~nxt])
    out[timed[~nxt][j >= 0]] = order[j[j >= 0]]
    return out


def _last_at_least(values: np.ndarray, k: np.ndarray, q: np.ndarray) -> np.ndarray:
    """For each query: the largest j <= k[i] with values[j] >= q[i] (-1 for none).

    A max segment tree walked for all queries at once: from leaf k, climb to the nearest
    ancestor that is a right child and test its left sibling (the positions just before),
    then descend into the first sibling that holds one; O(log n) numpy steps in all, where
    walking back slice by slice is quadratic on a crafted trace."""
    out = np.full(len(k), -1, np.int64)
    n = len(values)
    if not n or not len(k):
        return out
    size = 1 << (n - 1).bit_length()
    tree = np.full(2 * size, np.iinfo(np.int64).min, np.int64)
    tree[size : size + n] = values
    lo = size // 2
    while lo >= 1:
        tree[lo : 2 * lo] = np.maximum(tree[2 * lo : 4 * lo : 2], tree[2 * lo + 1 : 4 * lo : 2])
        lo //= 2
    node = np.where(k >= 0, k, 0) + size
    active = k >= 0
    hit = active & (tree[node] >= q)
    out[hit] = k[hit]
    active &= ~hit
    found = np.zeros(len(k), bool)
    while active.any():
        idx = np.flatnonzero(active)
        v = node[idx]
        v = v // (v & -v)  # up while a left child: those ancestors add only later positions
        at_root = v == 1
        v = v - 1  # the left sibling: the positions just before
        ok = ~at_root & (tree[np.maximum(v, 1)] >= q[idx])
        node[idx] = v
        found[idx[ok]] = True
        active[idx[ok | at_root]] = False
    idx = np.flatnonzero(found)
    v, qq = node[idx], q[idx]
    while (inner := v < size).any():
        right = 2 * v[inner] + 1
        v[inner] = np.where(tree[right] >= qq[inner], right, right - 1)
    out[idx] = v - size
    return out


def flow_links(
    keys: np.ndarray, phase: np.ndarray, ts: np.ndarray, bound: np.ndarray, first_id: int
) -> Links:
    """Replay flow points in time order per (category, id) and link consecutive ones.

    ``s`` opens a flow, ``t`` is a step (linked from the previous point, the flow stays
    open: TF1 timelines end flows with ``t``), ``f`` ends it. Ids are reused in real traces
    (catapult's flow.json: 76 ids over 866 flows; merged TF1 timelines restart them), so a
    new ``s`` with an open id starts its own flow, and an ``f`` closes the latest open one.
    ``bound`` is the slice each point bound to; links need a slice at both ends. Links are
    in the order of their later point.

    A stack per id, replayed in bulk: a point's flow is found from the depth of open flows
    when it comes (:func:`_by_level`), and each ``t``/``f`` links from the point before it
    in its flow.
    """
    n = len(keys)
    if not n:
        return Links.empty()
    rank = np.select([phase == _P["s"], phase == _P["t"]], [0, 1], 2)
    order = np.lexsort((rank, ts, keys))
    step = np.select([rank == 0, rank == 1], [1, 0], -1)[order]
    pos, grp, _ = _by_level(keys[order], step)
    later = np.flatnonzero(step[pos[1:]] <= 0) + 1  # a t or f, after its flow's point
    later = later[grp[later] == grp[later - 1]]
    a, b = order[pos[later - 1]], order[pos[later]]
    ok = (bound[a] >= 0) & (bound[b] >= 0) & (bound[a] != bound[b])
    # In the order of replay: of the later point.
    seq = np.argsort(pos[later][ok], kind="stable")
    prod, cons = bound[a[ok]][seq], bound[b[ok]][seq]
    used = np.zeros(n, bool)
    used[a[ok]] = used[b[ok]] = True
    m = len(prod)
    return Links(
        prod.astype(np.int64),
        cons.astype(np.int64),
        np.arange(first_id, first_id + m, dtype=np.int64),
        np.zeros(m, np.int64),
        int((~used).sum()),
    )
