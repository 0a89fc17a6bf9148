"""Step time and its breakdown, as TensorBoard's overview page and pod viewer show them.

For each step (a ``group_id``) the events grouped into it are classified into XProf's event
types (host compute, waiting for input, kernel launch, device compute, copies, ...). Where
events overlap, on any thread or device, the instant counts once, for the highest-priority
type active then (XProf's priorities: device waiting for host beats compute beats host work).
Time inside the step that no event covers is "all others". Everything is clipped to the
step's time, which is its longest host step marker (or its device step, for GPU runs whose
host marker does not contain the device step). A framework may build a host's steps from its
devices by rules of its own (``Framework.device_steps``: XProf's TPU step database); those
replace the host's.

``step_breakdown(run)`` keeps every step; XProf's overview and input-pipeline pages drop the
first and the last step of a capture that has more than five (they are usually cut by the
capture window), and ``overview_steps(steps)`` does the same.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd

from .. import schema, stat_columns
from ..frameworks import framework_of
from .collective_kinds import collective_kernel_flags
from .event_index import (
    STEP_INFO_LINE_ID,
    event_plane_rows,
    is_derived_line,
    on_device,
    plane_kinds,
    timed,
    times_ps,
)
from .event_ops import event_names
from .event_types import (  # CATEGORIES and CATEGORY_LABELS are read from here too
    CATEGORIES,
    CATEGORY_LABELS,
    DEVICE_COLLECTIVES,
    DEVICE_COMPUTE_16,
    DEVICE_COMPUTE_32,
    DEVICE_WAIT_HOST,
    EVENT_TYPES,
    HOST_COMPUTE,
    HOST_TO_DEVICE,
    HOST_WAIT_INPUT,
)
from .memo import per_run
from .step_edges import DROP_EDGE_STEPS_ABOVE, edge_steps_kept  # noqa: F401 - read from here too

# A step number where an event has none (step numbers are int64: an 18-digit
# ProfilerStep#N is not exact in float64).
NO_STEP = np.iinfo(np.int64).min


def _step_numbers(col: pd.Series) -> np.ndarray:
    """A step-number column as int64, NO_STEP where missing (or not a whole number that
    fits)."""
    if pd.api.types.is_integer_dtype(col.dtype):
        return col.to_numpy(dtype=np.int64, na_value=NO_STEP)
    v = col.to_numpy(dtype=float, na_value=np.nan)
    ok = np.isfinite(v) & (np.abs(v) < 2.0**63)
    return np.where(ok, np.where(ok, v, 0).astype(np.int64), NO_STEP)


# What a step event is (StepEvents.kind).
HOST_MARKER, DEVICE_MARKER, EVENT = 0, 1, 2
_KIND_NAMES = ("host_marker", "device_marker", "event")


def _per_name(cats: pd.Index, codes: np.ndarray, rules) -> tuple[np.ndarray, ...]:
    """``rules(names)`` (a Series of the distinct names these codes use, indexed by their
    codes; it returns one array per rule) as one array per rule, per code."""
    used, inverse = np.unique(codes, return_inverse=True)
    names = pd.Series(cats.to_numpy(dtype=object)[used], index=used, dtype=object)
    return tuple(np.asarray(r)[inverse] for r in rules(names))


@per_run
def _device_hosts(run) -> set[str]:
    """Hosts whose capture has a GPU or TPU plane (even an empty one): XProf builds their
    steps from device events alone."""
    hosts = run.planes["host"].to_numpy(dtype=object)
    return {str(h) for h in hosts[np.isin(plane_kinds(run), ["GPU", "TPU"])]}


@dataclasses.dataclass
class StepEvents:
    """Every event that counts toward some step, with XProf's event type; plus the markers.

    One entry per event: ``host`` (code into ``hosts``), ``group`` (group id), ``kind``
    (HOST_MARKER, DEVICE_MARKER or EVENT), ``type`` (the XProf event type), ``start`` and
    ``end`` (ps), ``step`` (the event's step number, int64, NO_STEP where it has none).
    """

    hosts: np.ndarray  # host names
    host: np.ndarray
    group: np.ndarray
    kind: np.ndarray
    type: np.ndarray
    start: np.ndarray
    end: np.ndarray
    step: np.ndarray

    def __len__(self) -> int:
        return len(self.host)

    def take(self, sel) -> StepEvents:
        return StepEvents(
            self.hosts,
            *(getattr(self, f)[sel] for f in ("host", "group", "kind", "type", "start", "end")),
            self.step[sel],
        )

    def frame(self) -> pd.DataFrame:
        return pd.DataFrame(
            {
                "host": self.hosts[self.host],
                "group_id": self.group,
                "kind": np.asarray(_KIND_NAMES, object)[self.kind],
                "type": self.type,
                "start_ps": self.start,
                "end_ps": self.end,
                "step": pd.arrays.IntegerArray(self.step, self.step == NO_STEP),
            }
        )


def step_events(run) -> pd.DataFrame:
    """Every event that counts toward some step, with XProf's event type; plus the markers.

    Columns: host, group_id, kind ('host_marker', 'device_marker' or 'event'), type (the
    XProf event type), start_ps, end_ps, step. A host whose capture has a GPU plane
    contributes its device events only (XProf's ``ConvertXSpaceToOpStats`` adds host step
    events only when there is no device): markers from the device's 'Steps' line, and
    every event with a correlation id and a group on the device's own lines, kept only for
    groups that the same device also marks. Other hosts contribute their host events.
    """
    return _step_events(run).frame()


@per_run
def _step_events(run) -> StepEvents:
    ev = run.events
    n = len(ev)
    gid = ev["group_id"].array
    grouped = ~np.asarray(gid.isna()) & timed(run)
    device = on_device(run)
    line_ids = run.lines["line_id"].to_numpy()
    line_id = line_ids[run.event_line_rows]
    derived = is_derived_line(line_ids)[run.event_line_rows]
    names = ev["name"]
    codes = names.cat.codes.to_numpy()
    cats = names.cat.categories
    stats = run.stat_store
    host_codes = np.asarray(ev["host"].array.codes, np.int64)
    hosts = ev["host"].cat.categories.astype(str).to_numpy()
    device_hosts = _device_hosts(run)
    on_device_host = np.array([h in device_hosts for h in hosts], bool)[host_codes]

    group = np.where(grouped, np.asarray(gid.to_numpy(dtype=float, na_value=-1)), -1)
    group = group.astype(np.int64)
    frameworks = framework_of(run)
    # Where the framework marks steps on the host even beside a device, a device host's
    # host events count too, and its device events need no device 'Steps' marker (derived
    # or recorded).
    host_marked = frameworks.host_marks_device_steps
    dev_marker, dev_event, derived_marks = _device_marks(
        run,
        group,
        grouped & device & (line_id == STEP_INFO_LINE_ID),
        (grouped & on_device_host, device & ~derived),
        host_marked,
    )

    host = grouped & ~device & (~on_device_host | host_marked)
    on_host = np.flatnonzero(host)
    # Name rules are evaluated once per name, for the names host events use.
    explicit_name, not_real = _per_name(
        cats,
        codes[on_host],
        lambda c: (frameworks.step_marker_names(c), frameworks.host_wrappers(c)),
    )
    explicit = np.zeros(n, bool)
    explicit[on_host] = explicit_name
    implicit = host & stat_columns.present(stats, "step_name", n) & ~explicit
    if not (explicit | implicit).any():  # no markers: the frameworks' implicit ones
        found = frameworks.implicit_step_markers(ev, stats, host)
        if found is not None:
            implicit = found[0]
    op_types = event_names(run)["op_type"].to_numpy()  # per name category
    real = np.zeros(n, bool)
    real[on_host] = ~explicit_name & ~not_real
    real &= ~implicit
    host_rows = np.flatnonzero((explicit | implicit) | real)
    dev_rows = np.flatnonzero(dev_marker | dev_event)
    start, end = times_ps(run)
    step = _step_numbers(ev["step"])
    rows = np.concatenate([host_rows, dev_rows])
    # Listed as XProf collects them: host markers, device markers, host events, device events.
    rank = np.concatenate(
        [np.where((explicit | implicit)[host_rows], 0, 2), np.where(dev_marker[dev_rows], 1, 3)]
    )
    kind = np.array([HOST_MARKER, DEVICE_MARKER, EVENT, EVENT], np.int8)[rank]
    types = np.concatenate(
        [
            _per_name(
                cats,
                codes[host_rows],
                lambda c: (frameworks.host_event_types(c, op_types[c.index]),),
            )[0],
            _device_types(cats, op_types, codes[dev_rows], dev_rows, run, n, frameworks),
        ]
    )
    order = np.argsort(rank * (n + 1) + rows, kind="stable")
    rows, kind, types = rows[order], kind[order], types[order]
    out = StepEvents(
        hosts, host_codes[rows], group[rows], kind, types, start[rows], end[rows], step[rows]
    )
    return _with_derived_markers(out, derived_marks)


def _device_marks(run, group, dev_marker, events, host_marked: bool):
    """XProf's device step events: ``dev_marker``, the markers of the device 'Steps' line
    (XProf compares the 64-bit line id itself with kThreadIdStepInfo, -559038737 as TF
    writes it; a line stored as 0xdeadbeef is derived but holds no markers); of ``events``
    (grouped events of device hosts, events on a device's own lines) those with a
    correlation id; and the derived markers of GPUs a capture leaves XProf to group. Each
    device's are kept only for the groups it both marks and runs (unless the host marks
    them). Returns (dev_marker, dev_event, derived_marks)."""
    on_device_host, device_own = events
    dev_event = on_device_host & device_own
    if dev_event.any():
        corr, has_corr = stat_columns.numbers(run.stat_store, "correlation_id", len(group))
        dev_event &= has_corr & (corr >= 0)
    derived_marks = _derived_device_steps(run, group, dev_event & (not host_marked), device_own)
    if (dev_marker.any() or dev_event.any()) and not host_marked:
        return _marked_on_the_same_device(run, group, dev_marker, dev_event, derived_marks)
    return dev_marker, dev_event, derived_marks


def _with_derived_markers(se: StepEvents, marks: dict) -> StepEvents:
    """``se`` with the derived device markers listed after the other markers."""
    if not len(marks["group"]):
        return se
    m = len(marks["group"])
    at = int(np.searchsorted(se.kind != EVENT, False, side="left")) if len(se) else 0
    at = int((se.kind != EVENT).sum())  # markers come first (host, then device)
    cat = lambda a, b: np.concatenate([a[:at], b, a[at:]])  # noqa: E731
    return StepEvents(
        se.hosts,
        cat(se.host, marks["host"]),
        cat(se.group, marks["group"]),
        cat(se.kind, np.full(m, DEVICE_MARKER, se.kind.dtype)),
        cat(se.type, np.zeros(m, se.type.dtype)),
        cat(se.start, marks["start"]),
        cat(se.end, marks["end"]),
        cat(se.step, marks["step"]),
    )


def _derived_device_steps(run, group: np.ndarray, dev_event: np.ndarray, own: np.ndarray):
    """XProf's derived 'Steps' of GPUs in a capture it groups itself (no ``group_id`` in
    the file; ``DeriveStepEventsFromGroups``): per GPU, its grouped events on its own lines
    in time order, each run of one group one step marker spanning them. Returns the markers'
    plane row, host code, group, start, end and step number."""
    empty = {k: np.zeros(0, np.int64) for k in ("plane", "host", "group", "start", "end")}
    empty["step"] = np.zeros(0, np.int64)
    if "group_id" in run.stat_store or not dev_event.any():
        return empty
    gpu = plane_kinds(run) == "GPU"
    plane = event_plane_rows(run).astype(np.int64)
    rows = np.flatnonzero(own & (group >= 0) & gpu[plane])
    if not len(rows):
        return empty
    start, end = (t[rows] for t in times_ps(run))
    order = np.lexsort((start - end, start, plane[rows]))
    rows, start, end = rows[order], start[order], end[order]
    p, g = plane[rows], group[rows]
    new = np.r_[True, (p[1:] != p[:-1]) | (g[1:] != g[:-1])]
    first = np.flatnonzero(new)
    step = _step_numbers(run.events["step"])[rows[first]]
    return {
        "plane": p[first],
        "host": np.asarray(run.events["host"].array.codes, np.int64)[rows[first]],
        "group": g[first],
        "start": start[first],
        "end": np.maximum.reduceat(end, first),
        "step": step,
    }


def _marked_on_the_same_device(run, group, dev_marker, dev_event, derived: dict):
    """XProf's IntersectCombineStepEvents per device: a device's events count for the groups
    it also marks on its 'Steps' line (in the file, or ``derived`` from its groups), and its
    markers only for groups it has events in."""
    plane = event_plane_rows(run).astype(np.int64)
    key = plane * (1 << 32) + (group & 0xFFFFFFFF)
    derived_key = derived["plane"] * (1 << 32) + (derived["group"] & 0xFFFFFFFF)
    marked = np.union1d(key[dev_marker], derived_key)
    both = np.intersect1d(marked, key[dev_event])
    keep = np.isin(derived_key, both)
    derived = {k: v[keep] for k, v in derived.items()}
    return dev_marker & np.isin(key, both), dev_event & np.isin(key, both), derived


def _device_types(
    cats: pd.Index,
    op_types: np.ndarray,
    codes: np.ndarray,
    rows: np.ndarray,
    run,
    n: int,
    frameworks,
) -> np.ndarray:
    """XProf's event type of device events ``rows`` (their name ``codes``)
    (``ClassifyGpuEvent``): copies by the frameworks' copy op types, NCCL collectives (the
    collective-kernel rule of :mod:`.collectives`, RCCL's too), else
    16- or 32-bit compute: 16-bit when the ``shape`` stat (the kernel's tensor shapes)
    mentions 'half', or, without shapes, when the kernel name has 'half' or 'fp16'.

    XProf's copy rule (``ParseTfOpFullname``) knows only TF's own spelling of copies, so the
    CUPTI copies of GPU captures ('MemcpyH2D', 'MemcpyD2H') count as device compute, as in
    TensorBoard."""
    if not len(rows):
        return np.zeros(0, np.int16)

    def name_rules(names: pd.Series):
        # In Python over the distinct names: pandas' string methods cost more in overhead.
        text = [str(t) for t in names.tolist()]
        return (
            np.fromiter((("half" in t) or ("fp16" in t) for t in text), bool, len(text)),
            collective_kernel_flags(text),
            op_types[names.index],
        )

    half, nccl, op_type = _per_name(cats, codes, name_rules)
    shapes, has_shapes = stat_columns.strings(run.stat_store, "shape", n)
    shapes, has_shapes = shapes[rows], has_shapes[rows]
    shape_half = np.zeros(len(rows), bool)
    if has_shapes.any():
        # Each distinct shape text looked at once.
        sc, su = pd.factorize(shapes[has_shapes], use_na_sentinel=False)
        text = pd.Series(su, dtype=object).fillna("").astype(str)
        shape_half[has_shapes] = text.str.contains("half", regex=False).to_numpy()[sc]
        has_shapes[has_shapes] = (text != "").to_numpy()[sc]
    dtypes = np.full(len(rows), DEVICE_COMPUTE_32, np.int16)
    dtypes[np.where(has_shapes, shape_half, half)] = DEVICE_COMPUTE_16
    dtypes[nccl | _framework_collectives(run, rows)] = DEVICE_COLLECTIVES
    for copy_type, event_type in frameworks.copy_op_types.items():
        dtypes[op_type == copy_type] = event_type
    return dtypes


def _framework_collectives(run, dev_rows: np.ndarray) -> np.ndarray:
    """Per device event of ``dev_rows``: whether a framework records it as a collective
    (XLA's collective HLO instructions, whatever their kernels are named; XProf reads only
    the 'nccl' names, the rule of :func:`_device_types`)."""
    found = [p["row"].to_numpy(np.int64) for p in framework_of(run).collective_ops(run)]
    if not found:
        return np.zeros(len(dev_rows), bool)
    return np.isin(dev_rows, np.concatenate(found))


def _longest_markers(se: StepEvents, kind: int, key: np.ndarray):
    """Per (host, group) key: the first of its longest markers of ``kind`` (as
    StepDetails::StepTime keeps a marker only when it is strictly longer than the one it
    has): keys, start, end, step."""
    rows = np.flatnonzero(se.kind == kind)
    k = key[rows]
    order = np.lexsort((rows, se.start[rows] - se.end[rows], k))
    first = np.concatenate([[True], k[order][1:] != k[order][:-1]]) if len(rows) else []
    pick = rows[order[first]]
    return key[pick], se.start[pick], se.end[pick], se.step[pick]


def _step_spans(se: StepEvents, key: np.ndarray, keys: np.ndarray) -> tuple:
    """Per (host, group) key of ``keys``: the step's time span by XProf's StepTime rule and
    its step number (NaN spans where a group has no marker; NO_STEP where its marker has no
    number)."""
    hk, hs, he, hstep = _longest_markers(se, HOST_MARKER, key)
    dk, ds, de, dstep = _longest_markers(se, DEVICE_MARKER, key)
    h, d = _positions(keys, hk), _positions(keys, dk)
    has_h, has_d = h >= 0, d >= 0
    hs_ = np.where(has_h, hs.astype(float)[h] if len(hk) else np.nan, np.nan)
    he_ = np.where(has_h, he.astype(float)[h] if len(hk) else np.nan, np.nan)
    ds_ = np.where(has_d, ds.astype(float)[d] if len(dk) else np.nan, np.nan)
    de_ = np.where(has_d, de.astype(float)[d] if len(dk) else np.nan, np.nan)
    with np.errstate(invalid="ignore"):  # NaN where a step has no marker of one kind
        use_host = ~has_d | (has_h & (hs_ <= ds_) & (he_ >= de_))
    out_s = np.where(use_host, hs_, ds_)
    out_e = np.where(use_host, he_, de_)
    hstep_ = np.where(has_h, hstep[h] if len(hk) else NO_STEP, NO_STEP)
    dstep_ = np.where(has_d, dstep[d] if len(dk) else NO_STEP, NO_STEP)
    step = np.where(hstep_ == NO_STEP, dstep_, hstep_)
    return out_s, out_e, step


def _positions(keys: np.ndarray, found: np.ndarray) -> np.ndarray:
    """Per key of ``keys`` (sorted, distinct): the index of its entry in ``found`` (distinct),
    -1 where it has none. Markers of groups that are no step (a group without compute, of
    kernels nothing launched) are in ``found`` and not in ``keys``: placing them by search
    alone wrote past the end (IndexError) or onto another group's step."""
    out = np.full(len(keys), -1, np.int64)
    if not len(keys) or not len(found):
        return out
    pos = np.searchsorted(keys, found)
    hit = pos < len(keys)
    hit[hit] = keys[pos[hit]] == found[hit]
    out[pos[hit]] = np.flatnonzero(hit)
    return out


def _non_overlapped(k, types, start, end, n_steps: int) -> np.ndarray:
    """Time per (step index, event type) where that type was the highest active one.

    Events have a step index ``k``, a ``type`` and ``start``/``end`` ps. A sweep over all
    boundaries at once: per-type active counts are running sums within each step (events
    open and close within their step), for the types present only."""
    type_codes = np.array(sorted(EVENT_TYPES))
    out = np.zeros((n_steps, len(type_codes)), np.int64)
    if not len(k):
        return out
    # Event types are small numbers: a table, not a sort, finds the ones present.
    t_idx = np.searchsorted(type_codes, types)
    present = np.flatnonzero(np.bincount(t_idx, minlength=len(type_codes)))
    lut = np.zeros(len(type_codes), np.int64)
    lut[present] = np.arange(len(present))
    t_local = lut[t_idx]
    m = len(present)
    n = len(k)
    times = np.concatenate([start, end]).astype(np.int64)
    steps = np.concatenate([k, k]).astype(np.int64)
    tcol = np.concatenate([t_local, t_local])
    is_start = np.concatenate([np.ones(n, np.int64), np.zeros(n, np.int64)])
    # Ends before starts at equal times; one int64 key when it fits, else lexsort.
    lo, hi = int(times.min()), int(times.max())
    span = hi - lo + 1
    if n_steps * span < 1 << 61:
        order = np.argsort(((steps * span + (times - lo)) << 1) | is_start, kind="stable")
    else:
        order = np.lexsort((is_start, times, steps))
    times, steps, tcol = times[order], steps[order], tcol[order]
    delta = np.where(is_start[order] == 1, 1, -1).astype(np.int32)
    if m == 1:
        top = np.where(np.cumsum(delta) > 0, 0, -1)
    else:
        counts = np.zeros((len(times), m), np.int32)
        counts[np.arange(len(times)), tcol] = delta
        np.cumsum(counts, axis=0, out=counts)
        active = counts > 0
        top = np.where(active.any(axis=1), m - 1 - np.argmax(active[:, ::-1], axis=1), -1)
    # Highest active type after each boundary, held until the next boundary of that step.
    seg = np.diff(times)
    keep = (steps[1:] == steps[:-1]) & (top[:-1] >= 0)
    col = np.where(top[:-1] >= 0, present[np.maximum(top[:-1], 0)], 0)
    flat = steps[:-1][keep] * len(type_codes) + col[keep]
    np.add.at(out.reshape(-1), flat, seg[keep])
    return out


@dataclasses.dataclass
class StepDb:
    """XProf's step database of a run: the steps (schema.STEPS) and, per host, the time each
    precision of device compute took over every step group (schema.DEVICE_PRECISION, the
    overview's 16/32-bit shares)."""

    steps: pd.DataFrame
    precision: pd.DataFrame


@per_run
def step_db(run) -> StepDb:
    """The steps of a run and its device-compute precision, computed once per run.

    A step is kept when it is well formed as XProf requires (ConvertStepDetailsToStepInfo):
    on a host with a device some device compute happened in its group, on other hosts some
    host compute did. The precision shares come from every group's events, unclipped and
    before that filter (ComputePrecisionStats over the non-overlapped step events).
    """
    se = _step_events(run)
    key = (se.host << 32) | (se.group & 0xFFFFFFFF)
    ev = se.take(se.kind == EVENT)
    ev_key = key[se.kind == EVENT]
    # Each (host, group)'s events without clipping: what decides well-formedness and
    # precision (groups in order of their first event).
    g, group_keys = pd.factorize(ev_key)
    group_keys = np.asarray(group_keys, np.int64)
    by_group = _non_overlapped(g, ev.type, ev.start, ev.end, len(group_keys))
    col = {t: i for i, t in enumerate(sorted(EVENT_TYPES))}
    group_host = group_keys >> 32
    c16 = by_group[:, col[DEVICE_COMPUTE_16]]
    c32 = by_group[:, col[DEVICE_COMPUTE_32]]
    host_order = pd.unique(group_host)
    precision = pd.DataFrame(
        {
            "host": pd.Categorical(se.hosts[host_order]),
            "device_compute_16_us": _sums(group_host, c16 / 1e6, host_order),
            "device_compute_32_us": _sums(group_host, c32 / 1e6, host_order),
        }
    )
    device_hosts = _device_hosts(run)
    is_device_host = np.array([h in device_hosts for h in se.hosts], bool)[group_host]
    well_formed = np.where(is_device_host, (c16 + c32) > 0, by_group[:, col[HOST_COMPUTE]] > 0)
    # The well-formed groups that have a marker are the steps.
    sorted_keys = np.sort(group_keys[well_formed])
    s, e, step = _step_spans(se, key, sorted_keys)
    has = ~np.isnan(s)
    spans = _Spans(
        sorted_keys[has] >> 32,
        sorted_keys[has] & 0xFFFFFFFF,
        sorted_keys[has],
        s[has].astype(np.int64),
        e[has].astype(np.int64),
        np.where(step[has] == NO_STEP, (sorted_keys[has] & 0xFFFFFFFF), step[has]),
    )
    return StepDb(
        _with_framework_steps(run, _breakdown(se.hosts, ev, ev_key, spans)),
        schema.conform(precision, schema.DEVICE_PRECISION),
    )


def _with_framework_steps(run, steps: pd.DataFrame) -> pd.DataFrame:
    """``steps`` with the steps a framework builds from its devices by rules of its own
    (``Framework.device_steps``) in place of those of the hosts they name."""
    own = framework_of(run).device_steps(run)
    if not own:
        return steps
    hosts = set().union(*(s["host"].astype(str) for s in own))
    keep = steps[~steps["host"].astype(str).isin(hosts)]
    both = pd.concat([keep.astype({"host": str}), *(s.astype({"host": str}) for s in own)])
    both = both.sort_values(["host", "start_us"], kind="stable", ignore_index=True)
    return schema.conform(both.astype({"host": "category"}), schema.STEPS)


def _sums(group: np.ndarray, values: np.ndarray, order: np.ndarray) -> np.ndarray:
    out = np.zeros(int(group.max()) + 1 if len(group) else 0)
    np.add.at(out, group, values)
    return out[order]


@dataclasses.dataclass
class _Spans:
    """The steps: host code, group id, (host, group) key, start/end ps, step number."""

    host: np.ndarray
    group: np.ndarray
    key: np.ndarray
    start: np.ndarray
    end: np.ndarray
    step: np.ndarray


def step_breakdown(run) -> pd.DataFrame:
    """One row per (host, step) with the step time and its breakdown: schema.STEPS."""
    return step_db(run).steps


def device_precision(run) -> pd.DataFrame:
    """Per host, device compute by precision over every step group (schema.DEVICE_PRECISION):
    XProf's ComputePrecisionStats, not clipped to the steps and before any step is left
    out."""
    return step_db(run).precision


def _breakdown(hosts: np.ndarray, ev: StepEvents, ev_key: np.ndarray, spans: _Spans):
    """Each step's time by category: the events of its group clipped to the step."""
    if not len(spans.key):
        return schema.empty(schema.STEPS)
    # Steps ordered by host name, then start.
    host_rank = np.argsort(np.argsort(hosts, kind="stable"))
    order = np.lexsort((spans.start, host_rank[spans.host]))
    spans = _Spans(
        *(getattr(spans, f)[order] for f in ("host", "group", "key", "start", "end", "step"))
    )
    by_key = np.argsort(spans.key)
    pos = np.searchsorted(spans.key, ev_key, sorter=by_key)
    pos = np.minimum(pos, len(spans.key) - 1)
    k = by_key[pos]
    in_step = spans.key[k] == ev_key
    k = k[in_step]
    start = np.maximum(ev.start[in_step], spans.start[k])
    end = np.minimum(ev.end[in_step], spans.end[k])
    keep = end > start
    by_type = _non_overlapped(
        k[keep], ev.type[in_step][keep], start[keep], end[keep], len(spans.key)
    )
    type_codes = sorted(EVENT_TYPES)
    step_ps = spans.end - spans.start
    covered = by_type.sum(axis=1) - by_type[:, 0]
    by_type[:, 0] = np.maximum(step_ps - covered, 0)  # time no event covers: all others
    col = {t: by_type[:, i] for i, t in enumerate(type_codes)}
    out = {
        "host": pd.Categorical(hosts[spans.host]),
        "step": pd.array(spans.step.astype(np.int64), dtype="Int64"),
        "group_id": pd.array(spans.group.astype(np.int32), dtype="Int32"),
        "start_us": spans.start / 1e6,
        "step_time_us": step_ps / 1e6,
    }
    for name, types in CATEGORIES.items():
        out[name] = sum(col[t] for t in types) / 1e6
    out["device_compute_16_us"] = col[DEVICE_COMPUTE_16] / 1e6
    out["device_compute_32_us"] = col[DEVICE_COMPUTE_32] / 1e6
    out["host_wait_input_us"] = col[HOST_WAIT_INPUT] / 1e6
    out["host_to_device_us"] = (col[HOST_TO_DEVICE] + col[DEVICE_WAIT_HOST]) / 1e6
    return pd.DataFrame({c: out[c] for c in schema.STEPS})


def overview_steps(steps: pd.DataFrame) -> pd.DataFrame:
    """The steps XProf's overview and input-pipeline pages average over: per host, all but
    the first and the last when the host has more than DROP_EDGE_STEPS_ABOVE steps (they
    are usually cut by the capture window); all of them otherwise, and all of them when
    the steps are TensorBoard's own list (a run without a trace), which it already cut.
    Ours, beyond XProf: then also the steps that are mostly compile (:func:`compile_steps`),
    where others remain."""
    kept = edge_steps_kept(steps)
    compiling = compile_steps(kept)
    return kept[~compiling] if compiling.any() and not compiling.all() else kept


# Ours (issue 36 item 12): a step at least this share of which is compile time (the first
# run of an XLA program a capture did not warm up) is left out of the averages too.
COMPILE_STEP_SHARE = 0.5


def compile_steps(steps: pd.DataFrame) -> np.ndarray:
    """Per step: is it mostly compile (compile_us at least COMPILE_STEP_SHARE of its time)?"""
    if "compile_us" not in steps or not len(steps):
        return np.zeros(len(steps), bool)
    comp = steps["compile_us"].to_numpy(float)
    return (comp > 0) & (comp >= COMPILE_STEP_SHARE * steps["step_time_us"].to_numpy(float))


def per_host_steps(run) -> pd.DataFrame:
    """Step time per host side by side (like XProf's pod viewer), one row per step number:
    see :func:`per_host_table`."""
    return per_host_table(run.steps)


def per_host_table(steps: pd.DataFrame) -> pd.DataFrame:
    """Step time per host side by side, from a steps table (``run.steps``).

    Columns (schema.PER_HOST_STEPS): one per host (step time, µs), ``slowest_host``,
    ``spread_us`` (slowest minus fastest host) and ``bottleneck`` (the largest category of
    the slowest host's step).
    """
    if not len(steps):
        return schema.empty(schema.PER_HOST_STEPS)
    wide = steps.pivot_table(
        index="step", columns="host", values="step_time_us", observed=True, aggfunc="max"
    )
    wide.columns = [str(c) for c in wide.columns]
    hosts = list(wide.columns)
    wide["slowest_host"] = wide[hosts].idxmax(axis=1)
    wide["spread_us"] = wide[hosts].max(axis=1) - wide[hosts].min(axis=1)
    cats = list(CATEGORIES)
    # A host may number two steps alike (a ProfilerStep#N repeated on another thread): the
    # bottleneck is the longer one's, the one whose time the table shows.
    longest = steps.sort_values("step_time_us", ascending=False, kind="stable")
    keys = [longest["step"], longest["host"].astype(str)]
    longest = longest[~pd.MultiIndex.from_arrays(keys).duplicated()]
    top = longest.set_index(["step", longest["host"].astype(str)])[cats].idxmax(axis=1)
    wide["bottleneck"] = [
        top.get((s, h), "").removesuffix("_us").replace("_", " ")
        for s, h in zip(wide.index, wide["slowest_host"])
    ]
    wide.index = wide.index.astype("Int64")
    wide.index.name = "step"
    return wide


__all__ = [
    "CATEGORIES",
    "CATEGORY_LABELS",
    "EVENT_TYPES",
    "overview_steps",
    "per_host_steps",
    "step_breakdown",
    "step_events",
]
