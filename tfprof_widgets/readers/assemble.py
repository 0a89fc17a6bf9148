"""Assembly: the :class:`~.columnar.HostTables` of every host of a run, merged into the run's
DataFrames (columns in :mod:`tfprof_widgets.schema`).

One function per table, in the order they depend on each other: planes, lines, events (with
each event's row in the lines table), event stats, event metadata and its stats, plane
stats. Events are ordered host, plane, line, then start time; ``start_us`` is measured from
the earliest timed event of the whole run.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd

from .. import schema, stat_columns
from ..errors import ClockMismatchError, CorruptProfileError
from ..stat_store import StatStore
from .columnar import HostTables, StatRows, device_kind


def unique_line_names(names: list[str], ids: list[int]) -> list[str]:
    """Make line names unique within one plane by suffixing ' #<id>' to colliding ones."""
    out = list(names)
    if len(out) < 2:
        return out
    repeated = pd.Series(out, dtype=object).duplicated(keep=False).to_numpy()
    for i in np.flatnonzero(repeated).tolist():
        out[i] = f"{names[i]} #{ids[i]}"
    return out


@dataclasses.dataclass
class RunTables:
    """A run's DataFrames (columns in :mod:`tfprof_widgets.schema`) and how they link up."""

    planes: pd.DataFrame
    lines: pd.DataFrame
    events: pd.DataFrame
    # Every event stat: the compact store (a stored pod's host: its long table, which the
    # Run turns into a store).
    event_stats: StatStore | pd.DataFrame
    # The event metadata and their stats; a loaded run's are built when first read
    # (MetadataTables), a stored pod host's are tables already.
    event_metadata: pd.DataFrame | MetadataTables
    metadata_stats: pd.DataFrame | None
    plane_stats: pd.DataFrame
    t0_ns: int  # absolute time of start_us == 0
    event_line_rows: np.ndarray  # int32: each event's row in `lines`
    line_plane_rows: np.ndarray  # int32: each line's row in `planes`
    tfprof_nodes: pd.DataFrame  # TF1 profiles only; empty otherwise
    tfprof_execs: pd.DataFrame


# 2000-01-01 in ns since the Unix epoch. A host whose events begin later counts in epoch time:
# a capture that counts from its own start (0.1 s) or from the machine's boot (weeks) is far
# below it.
EPOCH_FLOOR_NS = 946_684_800 * 10**9


def first_event_ns(h: HostTables) -> int | None:
    """Where a host's first timed event lies on its own clock (ns): the earliest origin of
    a line with timed events (lines, not events, are looked at); None when it has none."""
    timed = h.ev_occ == 1
    if not len(timed) or not timed.any():
        return None
    lines = np.flatnonzero(np.bincount(h.ev_line[timed], minlength=len(h.lines)))
    return min(h.lines[i].base_ns for i in lines.tolist())


def check_one_clock(hosts: list[HostTables], capture: list[int]) -> None:
    """Refuse, with :class:`~tfprof_widgets.ClockMismatchError`, hosts of several captures
    (``capture``: each host's) whose times are not all epoch times: only then are they on one
    clock. XSpace lines carry ns since the epoch (TensorFlow 2.5+, JAX; older TensorFlow
    counted from the session's start); Kineto's ts are epoch µs, or µs from its header's
    ``baseTimeNanoseconds``; TensorFlow's trace.json counts from the session's start."""
    first = [first_event_ns(h) for h in hosts]
    if len({c for c, t in zip(capture, first) if t is not None}) < 2:
        return
    own = [(h, t) for h, t in zip(hosts, first) if t is not None and t < EPOCH_FLOOR_NS]
    if not own:
        _check_near(hosts, first)
        return
    wall = [h.path for h, t in zip(hosts, first) if t is not None and t >= EPOCH_FLOOR_NS]
    path, t = own[0][0].path, own[0][1]
    rest = [h.path for h, _ in own[1:] if h.path != path]
    raise ClockMismatchError(
        path,
        f"its times start {t / 1e9:.6g} s after its clock's zero, not at an epoch time (it "
        "counts from its session's start or the machine's boot), so nothing places it "
        + (f"against {_names(wall)}, which count in epoch time" if wall else "against the rest")
        + (f"; {_names(rest)} count from their own start too" if rest else "")
        + ". Load each directory on its own",
    )


# Captures whose first events lie further apart than this are no one job's: their run would
# not fit int64 picoseconds (~106 days, what _check_span refuses in a single capture).
_MAX_APART_NS = 100 * 86400 * 10**9


def _check_near(hosts: list[HostTables], first: list[int | None]) -> None:
    """Refuse epoch-time captures too far apart to share one run's timeline."""
    timed = [(t, h.path) for h, t in zip(hosts, first) if t is not None]
    (t_lo, lo), (t_hi, hi) = min(timed), max(timed)
    if t_hi - t_lo > _MAX_APART_NS:
        raise ClockMismatchError(
            hi,
            f"it begins {(t_hi - t_lo) / 86400e9:,.0f} days after {lo}: both are in epoch "
            "time, but too far apart to be one job's captures on one timeline. Load each "
            "directory on its own",
        )


def _names(paths, most: int = 4) -> str:
    paths = list(dict.fromkeys(paths))
    return ", ".join(paths[:most]) + (f" and {len(paths) - most} more" if len(paths) > most else "")


def assemble(hosts: list[HostTables]) -> RunTables:
    """Merge the host tables of a run into its DataFrames, one table after the other."""
    host_cat = pd.CategoricalDtype([h.host for h in hosts])
    plane_names = pd.CategoricalDtype(list(dict.fromkeys(p.name for h in hosts for p in h.planes)))
    plane_stat_rows = _plane_stat_rows(hosts)
    planes = _planes(hosts, plane_stat_rows, host_cat, plane_names)
    lines, base_ns, line_offsets = _lines(hosts, host_cat, plane_names)
    events, order, line_rows, t0_ns = _events(hosts, lines, base_ns, line_offsets)
    plane_offsets = np.cumsum([0] + [len(h.planes) for h in hosts[:-1]])
    line_plane_rows = np.concatenate(
        [
            np.array([ln.plane for ln in h.lines], np.int64) + off
            for h, off in zip(hosts, plane_offsets)
        ]
        or [np.zeros(0, np.int64)]
    ).astype(np.int32)
    return RunTables(
        planes=planes,
        lines=lines,
        events=events,
        event_stats=_event_stats(hosts, order, len(events)),
        event_metadata=MetadataTables(hosts, host_cat, plane_names),
        metadata_stats=None,
        plane_stats=_plane_stats(plane_stat_rows, planes),
        t0_ns=t0_ns,
        event_line_rows=line_rows,
        line_plane_rows=line_plane_rows,
        tfprof_nodes=_format_table(hosts, "tfprof_nodes", schema.TFPROF_NODES),
        tfprof_execs=_format_table(hosts, "tfprof_execs", schema.TFPROF_EXECS),
    )


def _plane_stat_rows(hosts: list[HostTables]) -> StatRows:
    """Every plane's stats, owned by the plane's row in the planes table."""
    parts = [p.stats for h in hosts for p in h.planes]
    return StatRows.concat(parts, list(range(len(parts))))


def _planes(hosts, plane_stat_rows: StatRows, host_cat, plane_names) -> pd.DataFrame:
    """One row per plane of every host, with the device properties its stats record."""
    host, name, plane_id, kind, ordinal, n_lines, n_events = [], [], [], [], [], [], []
    for hi, h in enumerate(hosts):
        line_plane = np.array([ln.plane for ln in h.lines], np.int64)
        line_counts = np.bincount(line_plane, minlength=len(h.planes))
        ev_per_line = np.bincount(h.ev_line, minlength=len(h.lines))
        ev_per_plane = np.bincount(line_plane, weights=ev_per_line, minlength=len(h.planes))
        for pi, pl in enumerate(h.planes):
            k, o = device_kind(pl.name, int(line_counts[pi]))
            host.append(hi)
            name.append(pl.name)
            plane_id.append(pl.plane_id)
            kind.append(k)
            ordinal.append(o)
            n_lines.append(int(line_counts[pi]))
            n_events.append(int(ev_per_plane[pi]))
    n = len(host)
    has_ordinal = np.array([o is not None for o in ordinal], bool)
    cols = {
        "host": pd.Categorical.from_codes(host, dtype=host_cat),
        "plane": pd.Categorical.from_codes(
            plane_names.categories.get_indexer(name), dtype=plane_names
        ),
        "plane_id": np.array(plane_id, np.int64),
        "device_kind": pd.Categorical(kind),
        "device_ordinal": pd.arrays.IntegerArray(
            np.array([o if o is not None else 0 for o in ordinal], np.int32), ~has_ordinal
        ),
        "n_lines": np.array(n_lines, np.int32),
        "n_events": np.array(n_events, np.int64),
    }
    for prop in schema.DEVICE_PROPERTIES:
        values, present = stat_columns.numbers(plane_stat_rows, prop, n)
        cols[prop] = pd.arrays.IntegerArray(values, ~present)
    return pd.DataFrame(cols)


def _lines(hosts, host_cat, plane_names) -> tuple[pd.DataFrame, np.ndarray, list[int]]:
    """One row per line of every host; also each line's base time (ns) and where each
    host's lines start in the table. Built column by column (a hostile trace can have a
    million lines)."""
    cols: dict[str, list] = {
        c: []
        for c in ("line", "line_id", "display_name", "timestamp_ns", "duration_ps", "_base_ns")
    }
    host_code, plane_code, n_events, offsets = [], [], [], []
    plane_pos = {p: i for i, p in enumerate(plane_names.categories.tolist())}
    for hi, h in enumerate(hosts):
        offsets.append(len(cols["line"]))
        lines = h.lines
        by_plane: dict[int, list[int]] = {}
        for li, ln in enumerate(lines):
            by_plane.setdefault(ln.plane, []).append(li)
        unique = [""] * len(lines)
        for lis in by_plane.values():
            names = unique_line_names([lines[i].name for i in lis], [lines[i].line_id for i in lis])
            for i, name in zip(lis, names):
                unique[i] = name
        plane_of = np.array([plane_pos[p.name] for p in h.planes] + [0], np.int64)
        host_code.append(np.full(len(lines), hi, np.int64))
        plane_code.append(plane_of[np.array([ln.plane for ln in lines], np.int64)])
        cols["line"] += unique
        cols["line_id"] += [ln.line_id for ln in lines]
        cols["display_name"] += [ln.display_name or ln.name for ln in lines]
        cols["timestamp_ns"] += [ln.timestamp_ns for ln in lines]
        cols["duration_ps"] += [ln.duration_ps for ln in lines]
        cols["_base_ns"] += [ln.base_ns for ln in lines]
        n_events.append(np.bincount(h.ev_line, minlength=len(lines)))
    base_ns = np.array(cols.pop("_base_ns"), np.int64)
    # Categoricals from codes: converting a column of a million names hashes them again.
    codes, uniq = pd.factorize(np.array(cols["line"], dtype=object))
    line_names = pd.CategoricalDtype(list(uniq))  # str categories, as every table has
    empty = np.zeros(0, np.int64)
    lines = pd.DataFrame(
        {
            "host": pd.Categorical.from_codes(np.concatenate(host_code or [empty]), dtype=host_cat),
            "plane": pd.Categorical.from_codes(
                np.concatenate(plane_code or [empty]), dtype=plane_names
            ),
            "line": pd.Categorical.from_codes(codes, dtype=line_names),
            "line_id": np.array(cols["line_id"], np.int64),
            "display_name": pd.Categorical(np.array(cols["display_name"], dtype=object)),
            "timestamp_ns": np.array(cols["timestamp_ns"], np.int64),
            "duration_ps": np.array(cols["duration_ps"], np.int64),
            "n_events": np.concatenate(n_events or [empty]).astype(np.int64),
        }
    )
    return lines, base_ns, offsets


def _events(hosts, lines: pd.DataFrame, base_ns: np.ndarray, line_offsets: list[int]):
    """The events table, sorted by line then start; also the sort order (the position of
    each host-table event in the table), each event's line row and the run's t0_ns."""
    # Every host's names as codes into the run's distinct names (in order of appearance).
    all_names = np.empty(sum(len(h.names) for h in hosts), object)
    all_names[:] = [n for h in hosts for n in h.names]
    name_code, name_cats = pd.factorize(all_names, use_na_sentinel=False)
    name_code = name_code.astype(np.int32)
    starts = np.cumsum([0] + [len(h.names) for h in hosts])
    g_line = np.concatenate(
        [h.ev_line.astype(np.int64) + off for h, off in zip(hosts, line_offsets)]
        or [np.zeros(0, np.int64)]
    )
    g_name = np.concatenate(
        [name_code[a:b][h.ev_name] for h, a, b in zip(hosts, starts[:-1], starts[1:])]
        or [np.zeros(0, np.int32)]
    )
    offset_ps = np.concatenate([h.ev_offset_ps for h in hosts] or [np.zeros(0, np.int64)])
    dur_ps = np.concatenate([h.ev_dur_ps for h in hosts] or [np.zeros(0, np.int64)])
    occ = np.concatenate([h.ev_occ for h in hosts] or [np.zeros(0, np.int32)])
    timed = occ == 1

    # The origins of the lines that have events (counted, not sorted: millions of events).
    has_events = np.bincount(g_line, minlength=len(base_ns)) > 0 if len(g_line) else []
    used_bases = base_ns[has_events] if len(g_line) else np.zeros(1, np.int64)
    ref_ns = int(used_bases.min()) if len(used_bases) else 0
    _check_span(hosts, line_offsets, base_ns, ref_ns, g_line, offset_ps)
    # int64 ps relative to ref_ns: exact, and fits unless a run spans more than ~106 days.
    rel_ps = (base_ns - ref_ns)[g_line] * 1000 + offset_ps if len(g_line) else offset_ps
    t_min_ps = int(rel_ps[timed].min()) if timed.any() else 0
    start_us = (rel_ps - t_min_ps) / 1e6
    start_us[~timed] = np.nan
    dur_us = dur_ps / 1e6
    t0_ns = ref_ns + t_min_ps // 1000

    sort_start = start_us if timed.all() else np.nan_to_num(start_us, nan=np.inf)
    # Profilers write each line's events in time order: then nothing needs sorting or
    # gathering (a million-row lexsort and eight gathers saved).
    order = None if _in_order(g_line, sort_start) else np.lexsort((sort_start, g_line))

    def take(a: np.ndarray) -> np.ndarray:
        return a if order is None else a[order]

    line_rows = take(g_line)
    events = pd.DataFrame(
        {
            "host": pd.Categorical.from_codes(
                lines["host"].cat.codes.to_numpy()[line_rows], dtype=lines["host"].dtype
            ),
            "plane": pd.Categorical.from_codes(
                lines["plane"].cat.codes.to_numpy()[line_rows], dtype=lines["plane"].dtype
            ),
            "line": pd.Categorical.from_codes(
                lines["line"].cat.codes.to_numpy()[line_rows], dtype=lines["line"].dtype
            ),
            "name": pd.Categorical.from_codes(
                take(g_name), dtype=pd.CategoricalDtype(pd.Index(name_cats, dtype="str"))
            ),
            "start_us": take(start_us),
            "dur_us": take(dur_us),
            "end_us": take(start_us) + take(dur_us),
            "occurrences": take(occ).astype(np.int32, copy=False),
        }
    )
    return events, order, line_rows.astype(np.int32), t0_ns


# Picoseconds an int64 holds: about 106 days.
_MAX_SPAN_PS = float(2**63 - 1)


def _check_span(hosts, line_offsets, base_ns, ref_ns, g_line, offset_ps) -> None:
    """Refuse events whose time from the run's earliest line origin does not fit int64
    picoseconds (a capture spanning more than ~106 days: line timestamps or offsets that
    are not times), naming the file and line."""
    if not len(g_line):
        return
    # The farthest event has the smallest or largest offset of a run of one line's events:
    # only those are looked at, where the runs are long.
    starts = np.flatnonzero(np.r_[True, g_line[1:] != g_line[:-1]])
    if len(starts) * 4 < len(g_line):
        lines = g_line[starts]
        lo, hi = np.minimum.reduceat(offset_ps, starts), np.maximum.reduceat(offset_ps, starts)
        g_line = np.concatenate([lines, lines])
        offset_ps = np.concatenate([lo, hi])
    rel = (base_ns - ref_ns).astype(np.float64)[g_line] * 1000 + offset_ps.astype(np.float64)
    worst = int(np.argmax(np.abs(rel)))
    if abs(rel[worst]) < _MAX_SPAN_PS:
        return
    line = int(g_line[worst])
    h = int(np.searchsorted(np.asarray(line_offsets), line, side="right")) - 1
    info = hosts[h].lines[line - line_offsets[h]]
    days = abs(rel[worst]) / 1e12 / 86400
    raise CorruptProfileError(
        hosts[h].path,
        f"an event on line {info.name!r} lies {days:,.0f} days from the run's earliest line "
        "(timestamp_ns + offset_ps); a capture covers seconds to hours, so these are not "
        "times of one capture",
    )


def _in_order(line: np.ndarray, start: np.ndarray) -> bool:
    """Whether events are already sorted by line, then start."""
    if len(line) < 2:
        return True
    step = np.diff(line)
    return bool((step >= 0).all() and ((step != 0) | (np.diff(start) >= 0)).all())


def _event_stats(hosts, order: np.ndarray | None, n_events: int) -> StatStore:
    """Every event stat in one store, its owners re-pointed at the events' rows in the sorted
    table (``order`` None: the events kept their order)."""
    ev_offsets = np.cumsum([0] + [h.n_events for h in hosts[:-1]]).tolist()
    stores = [as_store(h.event_stats, h.n_events) for h in hosts]
    store = StatStore.concat(stores, ev_offsets, n_events)
    if order is not None and len(store):
        inverse = np.empty_like(order)
        inverse[order] = np.arange(len(order))
        store = store.remap(inverse)
    return store


def as_store(stats: StatRows | StatStore, n_owners: int) -> StatStore:
    """A reader's event stats as a store (readers give either)."""
    if isinstance(stats, StatStore):
        return stats
    if not len(stats):
        return StatStore.empty(n_owners)
    return StatStore.from_columns(
        stats.owner,
        np.asarray(stats.name.codes, np.int64),
        list(stats.name.categories),
        stats.kind,
        stats.int_value,
        stats.float_value,
        np.asarray(stats.str_value.codes, np.int64),
        list(stats.str_value.categories),
        n_owners,
    )


# The columns of MetadataTables.stat_rows.
_STAT_ROW_COLUMNS = ("host", "plane", "metadata_id", "stat", "int_value", "str_value")


class MetadataTables:
    """The event metadata of every plane of a run and their stats (schema.EVENT_METADATA,
    schema.METADATA_STATS), built when first asked for: few analyses read them (TPU ops), and
    a GPU capture can hold tens of thousands. Only the hosts' metadata is kept until then."""

    def __init__(self, hosts: list[HostTables], host_cat, plane_names) -> None:
        self._parts = [
            dataclasses.replace(
                h,
                lines=[],
                ev_line=h.ev_line[:0],
                ev_name=h.ev_name[:0],
                ev_offset_ps=h.ev_offset_ps[:0],
                ev_dur_ps=h.ev_dur_ps[:0],
                ev_occ=h.ev_occ[:0],
                event_stats=StatRows.empty(),
                tables={},
            )
            for h in hosts
        ]
        self._dtypes = (host_cat, plane_names)
        self._built: tuple[pd.DataFrame, pd.DataFrame] | None = None

    def stat_rows(self, plane: str, stats: tuple[str, ...]) -> pd.DataFrame:
        """The rows of schema.METADATA_STATS of one plane's metadata whose stat is one of
        ``stats``, in the table's order (host, plane, metadata_id, stat, int_value,
        str_value; plain columns): the few a caller needs (XLA's programs: 'Hlo Proto' and
        'program_id' of '/host:metadata') without building both tables."""
        if self._built is not None:
            ms = self._built[1]
            keep = (ms["plane"] == plane).to_numpy(bool) & ms["stat"].isin(stats).to_numpy(bool)
            return ms[keep]
        cols: dict[str, list] = {c: [] for c in _STAT_ROW_COLUMNS}
        for h in self._parts:
            rows = h.metadata_stats
            if not len(rows):
                continue
            names = np.asarray(rows.name.categories, object)
            codes = np.asarray(rows.name.codes)
            wanted = np.isin(names, np.array(stats, object))
            for i in np.flatnonzero((codes >= 0) & wanted[np.maximum(codes, 0)]):
                md = int(rows.owner[i])
                if h.planes[h.md_plane[md]].name != plane:
                    continue
                code = int(rows.str_value.codes[i])
                values = (
                    h.host, plane, h.md_id[md], names[codes[i]], rows.int_value[i],
                    rows.str_value.categories[code] if code >= 0 else np.nan,
                )  # fmt: skip
                for c, v in zip(_STAT_ROW_COLUMNS, values):
                    cols[c].append(v)
        out = {c: np.array(v, object) for c, v in cols.items()}
        out["metadata_id"] = np.array(cols["metadata_id"], np.int64)
        out["int_value"] = np.array(cols["int_value"], np.int64)
        return pd.DataFrame(out)

    def build(self) -> tuple[pd.DataFrame, pd.DataFrame]:
        if self._built is None:
            self._built = _event_metadata(self._parts, *self._dtypes)
            self._parts = []
        return self._built


def _event_metadata(hosts, host_cat, plane_names) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The event metadata of every plane, and their stats."""
    frames, stat_parts, offsets = [], [], []
    n_md = 0
    for h in hosts:
        offsets.append(n_md)
        n_md += len(h.md_id)
        frames.append(
            pd.DataFrame(
                {
                    "host": h.host,
                    "plane": [h.planes[p].name for p in h.md_plane],
                    "metadata_id": np.array(h.md_id, np.int64),
                    "name": h.md_name,
                    "display_name": h.md_display,
                    "n_stats": np.bincount(h.metadata_stats.owner, minlength=len(h.md_id)).astype(
                        np.int32
                    )
                    if len(h.md_id)
                    else np.zeros(0, np.int32),
                    "n_children": np.array(h.md_children, np.int32),
                    "metadata_bytes": np.array(h.md_bytes, np.int64),
                }
            )
        )
        stat_parts.append(h.metadata_stats)
    event_metadata = (
        pd.concat(frames, ignore_index=True)
        if frames
        else pd.DataFrame(columns=list(schema.EVENT_METADATA))
    )
    event_metadata = _apply_dtypes(
        event_metadata, schema.EVENT_METADATA, {"host": host_cat, "plane": plane_names}
    )
    md_stats = StatRows.concat(stat_parts, offsets)
    metadata_stats = md_stats.value_frame()
    owner = md_stats.owner
    metadata_stats.insert(
        0, "host", pd.Categorical(event_metadata["host"].to_numpy()[owner], dtype=host_cat)
    )
    metadata_stats.insert(
        1, "plane", pd.Categorical(event_metadata["plane"].to_numpy()[owner], dtype=plane_names)
    )
    metadata_stats.insert(2, "metadata_id", event_metadata["metadata_id"].to_numpy()[owner])
    return event_metadata, metadata_stats


def _plane_stats(rows: StatRows, planes: pd.DataFrame) -> pd.DataFrame:
    """Every plane stat, with its plane's host and name."""
    plane_stats = rows.value_frame()
    for i, col in enumerate(("host", "plane")):
        values = planes[col].to_numpy()[rows.owner]
        plane_stats.insert(i, col, pd.Categorical(values, dtype=planes[col].dtype))
    return plane_stats


def _format_table(hosts, key: str, spec: dict[str, tuple[str, str]]) -> pd.DataFrame:
    """A table only some formats carry (``HostTables.tables[key]``), over every host, typed
    as ``spec`` says; empty when no host has it."""
    parts = [h.tables[key].assign(host=h.host) for h in hosts if key in h.tables]
    if not parts:
        return schema.empty(spec)
    df = pd.concat(parts, ignore_index=True)
    df = df.reindex(columns=list(spec))
    defaults = {"op_types": (), "inputs": (), "code": (), "data_format": ""}
    for col, empty in defaults.items():
        if col in spec:
            df[col] = df[col].map(lambda v, e=empty: v if isinstance(v, type(e)) else e)
    return df.astype({c: t for c, (t, _) in spec.items() if c not in defaults})


def _apply_dtypes(
    df: pd.DataFrame, table: dict[str, tuple[str, str]], overrides: dict[str, object]
) -> pd.DataFrame:
    out = {}
    for col, (dtype, _) in table.items():
        want = overrides.get(col, dtype)
        out[col] = df[col] if df[col].dtype == want else df[col].astype(want)
    return pd.DataFrame(out, index=pd.RangeIndex(len(df)))
