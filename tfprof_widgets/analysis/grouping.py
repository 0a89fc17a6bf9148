"""Step grouping: which training step each event belongs to (``group_id`` and ``step``).

Converted and GPU captures carry a ``group_id`` stat, which is used as is. Raw TF captures
carry none, so, like XProf's event grouping, it is derived:

1. *Step markers* are host events with a ``step_num`` (or ``iter_num``) stat that are roots
   (``_r=1``) or whose name the run's frameworks call a step marker
   (:meth:`~.frameworks.Framework.step_marker_names`). Each gets a group id, in time order. A
   capture with no marker at all falls back to the frameworks' implicit markers, where one
   has them (TensorFlow: the repeated calls of one ``tf.function``).
2. Events on a marker's thread that lie inside it join its group.
3. Flow links carry groups across threads: an event with ``_c``/``_ct`` (consumer id and
   type) joins the group of the event of its own host with the same ``_p``/``_pt``
   (producer; flow ids are a capture's own, so hosts reuse them), together with everything
   nested under it on its thread. This repeats until nothing changes.
4. Launches carry groups to devices (XProf's KernelLaunch -> KernelExecute link): a device
   event with a ``correlation_id`` joins the group of the host event of its own host with the
   same ``correlation_id`` (the last such host event, as XProf's map keeps it).
5. Then, per GPU plane in time order, an event still without a group takes the group of the
   latest grouped event before it (XProf's ``ProcessUngroupedEvents``, which its derived GPU
   timelines run before they derive the GPU's ``Steps``).

Everything here is a function of the events table and the event stats (a run's
``stat_store``, or any table :mod:`tfprof_widgets.stat_columns` reads), vectorised per line.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .. import stat_columns
from ..frameworks.registry import RunFrameworks

_MAX_FLOW_ROUNDS = 16


def line_segments(line_rows: np.ndarray) -> list[tuple[int, int]]:
    """(start, stop) row ranges of each line, from each event's line row (``run.event_line_rows``;
    events are sorted by line, then start)."""
    if not len(line_rows):
        return []
    cuts = np.flatnonzero(np.diff(line_rows)) + 1
    bounds = np.concatenate([[0], cuts, [len(line_rows)]])
    return list(zip(bounds[:-1].tolist(), bounds[1:].tolist()))


def nesting_roots(start: np.ndarray, end: np.ndarray, segments) -> np.ndarray:
    """For each event, the row of the top-level event on its line that encloses it."""
    roots = np.arange(len(start))
    for a, b in segments:
        s, e = start[a:b], end[a:b]
        if b - a < 2:
            continue
        reach = np.maximum.accumulate(np.nan_to_num(e, nan=-np.inf))
        is_root = np.ones(b - a, bool)
        is_root[1:] = s[1:] >= reach[:-1]
        idx = np.where(is_root, np.arange(b - a), 0)
        roots[a:b] = a + np.maximum.accumulate(idx)
    return roots


def assign_groups(
    events: pd.DataFrame,
    event_stats,
    line_rows: np.ndarray,
    host_planes: np.ndarray | None = None,
    frameworks: RunFrameworks | None = None,
) -> tuple[pd.array, pd.array]:
    """Return (group_id as Int32, step as Int64) arrays aligned with ``events``.

    ``line_rows``: each event's row in the lines table (``run.event_line_rows``).
    ``host_planes``: boolean mask of events on host planes (markers are only looked for
    there); by default every plane whose name starts with '/host' or has no 'device:'.
    ``frameworks``: the run's frameworks, whose rules say which names mark steps (by
    default XProf's).
    """
    n = len(events)
    gid_stat, has_gid = stat_columns.numbers(event_stats, "group_id", n)
    step_num, has_step = stat_columns.numbers(event_stats, "step_num", n)
    if not has_step.any():
        step_num, has_step = stat_columns.numbers(event_stats, "iter_num", n)
    if has_gid.any():  # the file gives the groups
        group = np.where(has_gid, gid_stat, -1)
        step_of = _steps_for_groups(group, has_gid & has_step, step_num, event_stats, n)
        return _finish(group, step_of)

    if host_planes is None:
        planes = events["plane"].astype(str)
        host_planes = (planes.str.startswith("/host") | ~planes.str.contains("device:")).to_numpy()
    group = np.full(n, -1, np.int64)
    rules = frameworks if frameworks is not None else RunFrameworks(())
    marker_rows, step_num = _step_markers(
        events, event_stats, host_planes, (step_num, has_step), rules
    )
    if not len(marker_rows):
        return _finish(group, {})
    step_of = {}
    for g, row in enumerate(marker_rows):
        group[row] = g
        step_of[g] = int(step_num[row])
    start = events["start_us"].to_numpy()
    end = events["end_us"].to_numpy()
    segments = line_segments(line_rows)
    on_marker_line = _group_by_containment(group, marker_rows, start, end, segments)
    hosts = np.asarray(events["host"].array.codes, np.int64)
    roots = nesting_roots(start, end, segments)
    _group_by_flows(group, event_stats, roots, on_marker_line, hosts)
    _group_by_launches(group, event_stats, host_planes, hosts)
    _group_ungrouped_device_events(group, events, host_planes)
    return _finish(group, step_of)


def _step_markers(events, event_stats, host_planes, step_stat, rules: RunFrameworks):
    """1. The step markers' rows, in (host, time) order (the order of their group ids), and
    the step numbers: explicit markers, else the frameworks' implicit ones."""
    n = len(events)
    step_num, has_step = step_stat
    r_val, has_r = stat_columns.numbers(event_stats, "_r", n)
    # The rule asked once per distinct name, not once per event.
    cats = events["name"].cat.categories
    cat_is_marker = rules.step_marker_names(pd.Series(np.asarray(cats, dtype=object)))
    codes = events["name"].cat.codes.to_numpy()
    named_marker = (
        (cat_is_marker[np.maximum(codes, 0)] & (codes >= 0)) if len(cats) else np.zeros(n, bool)
    )
    start = events["start_us"].to_numpy()
    is_marker = host_planes & has_step & ((has_r & (r_val == 1)) | named_marker) & ~np.isnan(start)
    if not is_marker.any():
        implicit = rules.implicit_step_markers(events, event_stats, host_planes & ~np.isnan(start))
        if implicit is not None:
            is_marker, step_num = implicit
    marker_rows = np.flatnonzero(is_marker)
    host_codes = events["host"].cat.codes.to_numpy()
    marker_rows = marker_rows[np.lexsort((start[marker_rows], host_codes[marker_rows]))]
    return marker_rows, step_num


def _group_by_containment(group, marker_rows, start, end, segments) -> np.ndarray:
    """2. Events on a marker's own line that lie inside it join its group. Returns which
    events are on a line with markers."""
    on_marker_line = np.zeros(len(group), bool)
    for a, b in segments:
        m = marker_rows[(marker_rows >= a) & (marker_rows < b)]
        if not len(m):
            continue
        on_marker_line[a:b] = True
        m = m[np.argsort(start[m], kind="stable")]
        ms, me = start[m], end[m]
        k = np.searchsorted(ms, start[a:b], side="right") - 1
        ok = k >= 0
        kk = np.maximum(k, 0)
        inside = ok & (end[a:b] <= me[kk]) & (group[a:b] < 0)
        seg_group = group[a:b]
        seg_group[inside] = group[m[kk[inside]]]
    return on_marker_line


def _group_by_flows(group, event_stats, roots, on_marker_line, hosts) -> None:
    """3. Flow links: a consumer (``_c``/``_ct``) joins its producer's (``_p``/``_pt``) group,
    with its whole nesting tree where its thread has no markers; repeated until nothing
    changes (at most _MAX_FLOW_ROUNDS times). Flow ids are a capture's own: a consumer only
    joins a producer of its own host (the first, in event order, when several match)."""
    n = len(group)
    p_id, has_p = stat_columns.numbers(event_stats, "_p", n)
    p_ty, _ = stat_columns.numbers(event_stats, "_pt", n)
    c_id, has_c = stat_columns.numbers(event_stats, "_c", n)
    c_ty, _ = stat_columns.numbers(event_stats, "_ct", n)
    prod = np.flatnonzero(has_p)
    cons = np.flatnonzero(has_c)
    if not (len(prod) and len(cons)):
        return
    # Producers and consumers keyed by (host, flow type, flow id) in one code space.
    key = _joint_codes(
        np.concatenate([hosts[prod], hosts[cons]]),
        np.concatenate([p_ty[prod], c_ty[cons]]),
        np.concatenate([p_id[prod], c_id[cons]]),
    )
    prod_key, cons_key = key[: len(prod)], key[len(prod) :]
    n_keys = int(key.max()) + 1
    for _ in range(_MAX_FLOW_ROUNDS):
        gp = np.flatnonzero(group[prod] >= 0)
        if not len(gp):
            break
        # Each key's group: its first producer's (assigned in reverse, so the first wins).
        key_group = np.full(n_keys, -1, np.int64)
        key_group[prod_key[gp][::-1]] = group[prod[gp]][::-1]
        got = key_group[cons_key]
        todo = (got >= 0) & (group[cons] < 0)
        if not todo.any():
            break
        targets = cons[todo]
        tgroups = got[todo]
        # The consumer event itself, and its whole tree where its thread has no markers.
        group[targets] = tgroups
        tree = ~on_marker_line[targets]
        root_group = np.full(n, -1, np.int64)
        root_group[roots[targets[tree]][::-1]] = tgroups[tree][::-1]
        fill = root_group[roots]
        newly = (fill >= 0) & (group < 0) & ~on_marker_line
        group[newly] = fill[newly]


def _joint_codes(*columns: np.ndarray) -> np.ndarray:
    """One code (0..distinct-1) per row for each distinct tuple of the columns' values
    (int64 arrays of one length, not empty): equal tuples, equal codes. In numpy, one column
    at a time (a pandas MultiIndex's factorize goes through Python tuples)."""
    code = np.zeros(len(columns[0]), np.int64)
    for column in columns:
        _, c = np.unique(column, return_inverse=True)
        # Both codes are < the row count: their pairing is exact in int64.
        _, code = np.unique(code * (int(c.max()) + 1) + c.reshape(-1), return_inverse=True)
        code = code.reshape(-1)
    return code


def _group_by_launches(group, event_stats, host_planes, hosts) -> None:
    """4. A device event with a ``correlation_id`` joins the group of its host's launch with
    that id (a host event carrying it); the last launch of an id wins."""
    n = len(group)
    corr, has = stat_columns.numbers(event_stats, "correlation_id", n)
    launch = np.flatnonzero(has & host_planes & (group >= 0))
    device = np.flatnonzero(has & ~host_planes & (group < 0))
    if not (len(launch) and len(device)):
        return
    key = _joint_codes(
        np.concatenate([hosts[launch], hosts[device]]),
        np.concatenate([corr[launch], corr[device]]),
    )
    key_group = np.full(int(key.max()) + 1, -1, np.int64)
    key_group[key[: len(launch)]] = group[launch]  # later launches overwrite earlier ones
    got = key_group[key[len(launch) :]]
    group[device[got >= 0]] = got[got >= 0]


def _group_ungrouped_device_events(group, events, host_planes) -> None:
    """5. Per GPU plane, in time order: an ungrouped event takes the group of the latest
    grouped event before it."""
    planes = events["plane"].array
    gpu = np.asarray(planes.categories.astype(str).str.startswith("/device:GPU:"), bool)
    codes = np.asarray(planes.codes, np.int64)
    device = np.flatnonzero(~host_planes & (codes >= 0) & gpu[np.maximum(codes, 0)])
    if not len(device) or not (group[device] >= 0).any():
        return
    plane = codes[device]
    host = np.asarray(events["host"].array.codes, np.int64)[device]
    start = events["start_us"].to_numpy()[device]
    dur = events["dur_us"].to_numpy()[device]
    order = np.lexsort((-dur, start, plane, host))
    rows = device[order]
    g = group[rows]
    segment = np.r_[
        True, (plane[order][1:] != plane[order][:-1]) | (host[order][1:] != host[order][:-1])
    ]
    # Index of the latest grouped event so far, restarting on each plane.
    idx = np.where(g >= 0, np.arange(len(rows)), -1)
    seg_start = np.maximum.accumulate(np.where(segment, np.arange(len(rows)), 0))
    last = np.maximum.accumulate(idx)
    fill = (g < 0) & (last >= seg_start) & ~np.isnan(start[order])
    group[rows[fill]] = g[last[fill]]


def _steps_for_groups(group, marks, step_num, event_stats, n) -> dict[int, int]:
    """Step numbers of file-provided groups: a marker's step_num, else a 'Steps' line's
    numeric step_name, else the group id itself (set in _finish)."""
    step_of: dict[int, int] = {}
    for g, s in zip(group[marks].tolist(), step_num[marks].tolist()):
        step_of.setdefault(g, s)
    names, has_name = stat_columns.strings(event_stats, "step_name", n)
    for g, s in zip(group[has_name].tolist(), names[has_name].tolist()):
        s = s.strip() if isinstance(s, str) else ""
        # ASCII digits that fit int64: '²' passes isdigit() and 5,000 digits pass it too.
        if g not in step_of and s.isascii() and s.isdigit() and len(s) <= 18:
            step_of[g] = int(s)
    return step_of


def _finish(group: np.ndarray, step_of: dict[int, int]) -> tuple[pd.array, pd.array]:
    valid = group >= 0
    gid = pd.arrays.IntegerArray(np.where(valid, group, 0).astype(np.int32), ~valid)
    # Step numbers by a table over the group ids (small numbers: one per step).
    top = int(group.max()) if valid.any() else -1
    keys = np.fromiter(step_of.keys(), np.int64, len(step_of))
    inside = (keys >= 0) & (keys <= top)
    if top < 4 * len(group) + (1 << 20):
        table = np.zeros(top + 2, np.int64)
        known = np.zeros(top + 2, bool)
        table[keys[inside]] = np.fromiter(step_of.values(), np.int64, len(step_of))[inside]
        known[keys[inside]] = True
        g = np.maximum(group, 0)
        has_step = valid & known[g]
        steps = table[g]
    else:  # absurd group ids (a damaged file): a lookup per distinct group
        found = pd.Series(group).map(step_of)
        has_step = found.notna().to_numpy()
        steps = found.fillna(0).to_numpy(np.int64)
    # Groups the file gave without any step number fall back to the group id.
    fallback = valid & ~has_step
    steps = np.where(fallback, group, steps)
    return gid, pd.arrays.IntegerArray(steps.astype(np.int64), ~valid)
