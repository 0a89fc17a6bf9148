"""The columnar intermediate every reader produces, and its assembly into DataFrames.

A reader turns one file into a :class:`HostCapture`: flat numpy arrays for events and stats
plus small Python lists for planes, lines and metadata. :func:`assemble` merges the captures
of all hosts of a run into the tables documented in :mod:`tfprof_widgets.schema`. Readers
never build DataFrames themselves, so the column conventions live in this one place.
"""

from __future__ import annotations

import dataclasses
import gzip
import re
import zlib

import numpy as np
import pandas as pd

from .. import schema
from ..errors import CorruptProfileError

# Stat value kinds, in the order of their int8 codes.
KINDS = ("int", "uint", "double", "str", "bytes", "none")
KIND_CODE = {k: i for i, k in enumerate(KINDS)}
# XStat oneof field numbers (the wire walker's kind codes) and the proto field names.
WIRE_FIELD = {
    None: 0,
    "double_value": 2,
    "uint64_value": 3,
    "int64_value": 4,
    "str_value": 5,
    "bytes_value": 6,
    "ref_value": 7,
    "compressed_str_value": 8,
}
# Field number -> our kind; ref values and compressed strings are resolved to "str".
_FIELD_KIND = np.full(9, KIND_CODE["none"], np.int8)
_FIELD_KIND[[2, 3, 4, 5, 6, 7, 8]] = [
    KIND_CODE[k] for k in ("double", "uint", "int", "str", "bytes", "str", "str")
]

_DEVICE_RE = re.compile(r"device:(GPU|TPU|CUSTOM|CPU):(\d+)")


@dataclasses.dataclass
class StatRows:
    """Stats of many owners (events, planes or metadata), one entry per stat."""

    owner: np.ndarray  # int64: index of the owning event / plane / metadata row
    name: pd.Categorical  # stat name
    kind: np.ndarray  # int8 codes into KINDS
    int_value: np.ndarray  # int64 (uint stored two's complement)
    float_value: np.ndarray  # float64
    str_value: pd.Categorical  # str or bytes; missing where not a string kind

    @classmethod
    def empty(cls) -> StatRows:
        return cls(
            np.zeros(0, np.int64),
            categorical_from_codes(np.zeros(0, np.int64), []),
            np.zeros(0, np.int8),
            np.zeros(0, np.int64),
            np.zeros(0, np.float64),
            categorical_from_codes(np.zeros(0, np.int64), []),
        )

    def __len__(self) -> int:
        return len(self.owner)

    @classmethod
    def from_columns(
        cls,
        owner: np.ndarray,
        name: pd.Categorical,
        field: np.ndarray,
        raw: np.ndarray,
        obj: np.ndarray,
        ref_names: dict[int, str],
        path: str,
    ) -> StatRows:
        """Build from wire-level columns, split by kind with numpy masks.

        ``field`` is the XStat oneof field number (0 = no value), ``raw`` the int64 payload
        (the varint, or the double's IEEE bits), ``obj`` the str/bytes payload of fields 5, 6
        and 8. Ref values (field 7) are resolved through ``ref_names`` (the plane's stat
        metadata) and gzip-compressed strings (field 8) are decompressed. String values
        become a categorical built from codes, never by hashing a million Python objects.
        """
        n = len(owner)
        field = np.asarray(field, np.int8)
        kind = _FIELD_KIND[field]
        ints = np.where((field == 3) | (field == 4), raw, 0).astype(np.int64)
        floats = np.full(n, np.nan)
        m = field == 2
        if m.any():
            floats[m] = raw[m].view(np.float64)
        codes = np.full(n, -1, np.int64)
        values: list = []
        m = field == 7
        if m.any():
            ids, inv = unique_inverse(raw[m])
            codes[m] = inv
            values = [ref_names.get(int(i), f"<ref {int(i)}>") for i in ids]
        for f in (5, 6, 8):
            m = field == f
            if m.any():
                vals = obj[m] if f != 8 else [_gunzip_text(v, path) for v in obj[m]]
                local: dict = {}
                local_codes = np.fromiter(
                    (local.setdefault(v, len(local)) for v in vals), np.int64, int(m.sum())
                )
                codes[m] = local_codes + len(values)
                values.extend(local)
        strs = categorical_from_codes(codes, values)
        return cls(np.asarray(owner, np.int64), name, kind, ints, floats, strs)

    @classmethod
    def from_tuples(
        cls, rows: list[tuple], names_by_id: dict[int, str] | None, path: str
    ) -> StatRows:
        """Build from ``(owner, key, wire_field_name, value)`` tuples.

        ``key`` is a stat metadata id when ``names_by_id`` is given (XSpace plane and
        metadata stats), else the stat name itself (Chrome trace args).
        """
        if not rows:
            return cls.empty()
        owner, key, wire, value = zip(*rows)
        n = len(owner)
        field = np.fromiter((WIRE_FIELD[w] for w in wire), np.int8, n)
        raw = np.zeros(n, np.int64)
        obj = np.empty(n, object)
        obj[:] = value
        for f, dtype in ((4, np.int64), (7, np.int64), (3, np.uint64), (2, np.float64)):
            m = field == f
            if m.any():
                raw[m] = np.array(obj[m].tolist(), dtype=dtype).view(np.int64)
        if names_by_id is not None:
            key = [names_by_id.get(k, f"<stat {k}>") for k in key]
        local: dict = {}
        codes = np.fromiter((local.setdefault(k, len(local)) for k in key), np.int64, n)
        names = categorical_from_codes(codes, list(local))
        return cls.from_columns(
            np.fromiter(owner, np.int64, n), names, field, raw, obj, names_by_id or {}, path
        )

    @classmethod
    def concat(cls, parts: list[StatRows], offsets: list[int]) -> StatRows:
        """Concatenate, shifting each part's owner indices by its offset."""
        parts_offsets = [(p, o) for p, o in zip(parts, offsets) if len(p)]
        if not parts_offsets:
            return cls.empty()
        if len(parts_offsets) == 1 and parts_offsets[0][1] == 0:
            return parts_offsets[0][0]
        return cls(
            np.concatenate([p.owner + o for p, o in parts_offsets]),
            concat_categoricals([p.name for p, _ in parts_offsets]),
            np.concatenate([p.kind for p, _ in parts_offsets]),
            np.concatenate([p.int_value for p, _ in parts_offsets]),
            np.concatenate([p.float_value for p, _ in parts_offsets]),
            concat_categoricals([p.str_value for p, _ in parts_offsets]),
        )

    def take(self, order: np.ndarray) -> StatRows:
        return StatRows(
            self.owner[order],
            self.name[order],
            self.kind[order],
            self.int_value[order],
            self.float_value[order],
            self.str_value[order],
        )

    def value_frame(self) -> pd.DataFrame:
        """The value columns shared by every long stats table (schema.STAT_VALUE_COLUMNS)."""
        return pd.DataFrame(
            {
                "stat": self.name,
                "kind": pd.Categorical.from_codes(self.kind, categories=list(KINDS)),
                "int_value": self.int_value,
                "float_value": self.float_value,
                "str_value": self.str_value,
            }
        )


def positions(keys: np.ndarray, ids: np.ndarray) -> np.ndarray:
    """Index of each key in the sorted unique ``ids`` (-1 when absent).

    Metadata ids are small dense integers in every profiler we know, so a lookup table
    beats a binary search; absurd ids (a damaged file) fall back to searchsorted.
    """
    if not len(ids):
        return np.full(len(keys), -1, np.int64)
    lo, hi = int(ids[0]), int(ids[-1])
    if hi - lo <= 4 * len(keys) + (1 << 20):
        lut = np.full(hi - lo + 1, -1, np.int64)
        lut[ids - lo] = np.arange(len(ids))
        inside = (keys >= lo) & (keys <= hi)
        out = np.full(len(keys), -1, np.int64)
        out[inside] = lut[keys[inside] - lo]
        return out
    pos = np.minimum(np.searchsorted(ids, keys), len(ids) - 1)
    return np.where(ids[pos] == keys, pos, -1)


def unique_inverse(keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """np.unique(keys, return_inverse=True) without sorting all keys when they are small."""
    if len(keys) and 0 <= keys.min() and keys.max() <= 4 * len(keys) + (1 << 20):
        present = np.zeros(int(keys.max()) + 1, bool)
        present[keys] = True
        ids = np.flatnonzero(present)
        return ids, positions(keys, ids)
    return np.unique(keys, return_inverse=True)


def categorical_from_codes(codes: np.ndarray, values: list) -> pd.Categorical:
    """A categorical from codes into ``values`` (-1 = missing); repeated values are merged.

    Categories are kept as plain Python objects so that str and bytes values can share one
    column and categoricals from different files concatenate without dtype clashes.
    """
    first: dict = {}
    remap = np.fromiter((first.setdefault(v, len(first)) for v in values), np.int64, len(values))
    codes = np.asarray(codes, np.int64)
    if len(first) != len(values) and len(codes):
        codes = np.where(codes >= 0, remap[np.maximum(codes, 0)], -1)
    cats = pd.Index(
        np.array(list(first), dtype=object) if first else np.zeros(0, object), dtype=object
    )
    return pd.Categorical.from_codes(codes, dtype=pd.CategoricalDtype(cats))


def concat_categoricals(parts: list[pd.Categorical]) -> pd.Categorical:
    """Concatenate categoricals whose categories differ, by re-coding onto their union."""
    if len(parts) == 1:
        return parts[0]
    values: list = []
    codes = []
    for p in parts:
        c = np.asarray(p.codes, np.int64)
        codes.append(np.where(c >= 0, c + len(values), -1))
        values.extend(p.categories)
    return categorical_from_codes(np.concatenate(codes) if codes else np.zeros(0, np.int64), values)


def _gunzip_text(value: bytes, path: str) -> str:
    try:
        return gzip.decompress(value).decode("utf-8", "replace")
    except (OSError, EOFError, zlib.error) as exc:
        raise CorruptProfileError(
            path, f"a compressed string stat does not decompress: {exc}"
        ) from None


@dataclasses.dataclass
class PlaneInfo:
    name: str
    plane_id: int
    stats: StatRows  # owner is 0 for every row


@dataclasses.dataclass
class LineInfo:
    plane: int  # index into HostCapture.planes
    name: str
    line_id: int
    display_name: str
    timestamp_ns: int  # as stored
    duration_ps: int
    base_ns: int  # absolute-as-far-as-known time of offset 0 on this line, ns


@dataclasses.dataclass
class HostCapture:
    """Everything one capture file holds, column-wise. Produced by each reader."""

    host: str
    path: str
    planes: list[PlaneInfo]
    lines: list[LineInfo]
    # Events, concatenated over lines in line order.
    ev_line: np.ndarray  # int32 index into lines
    ev_name: np.ndarray  # int32 index into names
    ev_offset_ps: np.ndarray  # int64, from the line's base_ns
    ev_dur_ps: np.ndarray  # int64
    ev_occ: np.ndarray  # int32, 1 for timed events, N for aggregated ones
    names: list[str]
    event_stats: StatRows  # owner = event index in this capture
    # Event metadata: one row each, plus their stats (owner = metadata row).
    md_plane: list[int]
    md_id: list[int]
    md_name: list[str]
    md_display: list[str | None]
    md_children: list[int]
    md_bytes: list[int]
    metadata_stats: StatRows
    errors: list[str] = dataclasses.field(default_factory=list)
    warnings: list[str] = dataclasses.field(default_factory=list)
    hostnames: list[str] = dataclasses.field(default_factory=list)
    # Tables only some formats have (TF1 tfprof: "tfprof_nodes", "tfprof_execs").
    tables: dict[str, pd.DataFrame] = dataclasses.field(default_factory=dict)

    @property
    def n_events(self) -> int:
        return len(self.ev_name)

    def select_planes(self, keep) -> HostCapture:
        """A copy holding only the planes for which ``keep(plane_name)`` is true."""
        plane_keep = np.array([keep(p.name) for p in self.planes], bool)
        kept = np.flatnonzero(plane_keep).tolist()
        plane_map = _index_map(plane_keep)
        line_keep = np.array([plane_keep[ln.plane] for ln in self.lines], bool)
        line_map = _index_map(line_keep)
        ev_keep = line_keep[self.ev_line] if len(self.ev_line) else np.zeros(0, bool)
        md_keep = np.array([plane_keep[p] for p in self.md_plane], bool)
        mstats = _kept_stats(self.metadata_stats, md_keep)
        lines = [
            dataclasses.replace(ln, plane=int(plane_map[ln.plane]))
            for ln, k in zip(self.lines, line_keep)
            if k
        ]

        def pick(values):
            return [v for v, k in zip(values, md_keep) if k]

        events = self.select_events(ev_keep)
        return dataclasses.replace(
            events,
            planes=[self.planes[i] for i in kept],
            lines=lines,
            ev_line=line_map[events.ev_line].astype(np.int32),
            md_plane=[int(plane_map[p]) for p in pick(self.md_plane)],
            md_id=pick(self.md_id),
            md_name=pick(self.md_name),
            md_display=pick(self.md_display),
            md_children=pick(self.md_children),
            md_bytes=pick(self.md_bytes),
            metadata_stats=mstats,
        )

    def select_events(self, keep: np.ndarray) -> HostCapture:
        """A copy holding only the events where ``keep`` is true (and their stats)."""
        return dataclasses.replace(
            self,
            ev_line=self.ev_line[keep],
            ev_name=self.ev_name[keep],
            ev_offset_ps=self.ev_offset_ps[keep],
            ev_dur_ps=self.ev_dur_ps[keep],
            ev_occ=self.ev_occ[keep],
            event_stats=_kept_stats(self.event_stats, keep),
        )

    def start_ns(self) -> int | None:
        """When this capture began, epoch ns: the profiler's recorded start time, else the
        first timed event. None if no event has a time."""
        for plane in self.planes:
            hit = np.flatnonzero(np.asarray(plane.stats.name == "profile_start_time"))
            if len(hit):
                return int(plane.stats.int_value[hit[0]])
        abs_ns = self.event_start_ns()
        timed = self.ev_occ == 1
        return int(abs_ns[timed].min()) if timed.any() else None

    def event_start_ns(self) -> np.ndarray:
        """Each event's start, ns on the capture's clock (meaningless for aggregated ones)."""
        base = np.array([ln.base_ns for ln in self.lines], np.int64)
        return (
            base[self.ev_line] + self.ev_offset_ps // 1000
            if len(self.ev_line)
            else np.zeros(0, np.int64)
        )

    def select_window(self, start_s: float, end_s: float) -> HostCapture:
        """Only the events that overlap [start_s, end_s], in seconds from :meth:`start_ns`.

        Events cut by an edge are kept whole; aggregated events (no time) are kept.
        """
        t0 = self.start_ns()
        if t0 is None:
            return self
        begin = self.event_start_ns()
        end = begin + self.ev_dur_ps // 1000
        lo, hi = t0 + int(start_s * 1e9), t0 + int(end_s * 1e9)
        keep = (self.ev_occ != 1) | ((end >= lo) & (begin <= hi))
        return self.select_events(keep)


def _index_map(mask: np.ndarray) -> np.ndarray:
    """Old position -> new position of the kept items (-1 for dropped ones)."""
    out = np.full(len(mask), -1, np.int64)
    out[mask] = np.arange(int(mask.sum()))
    return out


def _kept_stats(stats: StatRows, owner_keep: np.ndarray) -> StatRows:
    """The stats whose owner is kept, with owners renumbered to the kept positions."""
    picked = stats.take(np.flatnonzero(owner_keep[stats.owner]))
    picked.owner = _index_map(owner_keep)[picked.owner]
    return picked


def unique_line_names(names: list[str], ids: list[int]) -> list[str]:
    """Make line names unique within one plane by suffixing ' #<id>' to colliding ones."""
    counts: dict[str, int] = {}
    for n in names:
        counts[n] = counts.get(n, 0) + 1
    return [n if counts[n] == 1 else f"{n} #{i}" for n, i in zip(names, ids)]


def device_kind(plane_name: str, n_lines: int) -> tuple[str, int | None]:
    """Classify a plane by its name: ('GPU', 0) for '/device:GPU:0', ('CPU', None) for host."""
    if plane_name == "/host:CPU":
        return "CPU", None
    m = _DEVICE_RE.search(plane_name)
    if m:
        return m.group(1), int(m.group(2))
    if plane_name.startswith("/host:"):
        return "host", None
    return ("metadata" if n_lines == 0 else "other"), None


def assemble(captures: list[HostCapture]) -> dict[str, object]:
    """Merge host captures into the run's DataFrames (see :mod:`tfprof_widgets.schema`).

    Events are ordered host, plane, line, then start time, and ``start_us`` is measured from
    the earliest timed event of the whole run.
    """
    hosts = [c.host for c in captures]
    host_cat = pd.CategoricalDtype(hosts)

    # Planes ---------------------------------------------------------------------------
    plane_rows = []
    plane_keys: list[tuple[int, int]] = []  # (capture index, plane index) in table order
    for ci, cap in enumerate(captures):
        line_counts = np.bincount([ln.plane for ln in cap.lines], minlength=len(cap.planes))
        ev_per_line = np.bincount(cap.ev_line, minlength=len(cap.lines)) if cap.lines else []
        ev_per_plane = np.zeros(len(cap.planes), np.int64)
        for li, ln in enumerate(cap.lines):
            ev_per_plane[ln.plane] += ev_per_line[li]
        for pi, pl in enumerate(cap.planes):
            kind, ordinal = device_kind(pl.name, int(line_counts[pi]))
            row = {
                "host": cap.host,
                "plane": pl.name,
                "plane_id": pl.plane_id,
                "device_kind": kind,
                "device_ordinal": ordinal,
                "n_lines": int(line_counts[pi]),
                "n_events": int(ev_per_plane[pi]),
            }
            st = pl.stats
            for prop in schema.DEVICE_PROPERTIES:
                hit = np.flatnonzero(st.name == prop)
                row[prop] = (
                    int(st.int_value[hit[0]])
                    if len(hit) and st.kind[hit[0]] in (KIND_CODE["int"], KIND_CODE["uint"])
                    else (
                        int(st.float_value[hit[0]])
                        if len(hit) and st.kind[hit[0]] == KIND_CODE["double"]
                        else None
                    )
                )
            plane_rows.append(row)
            plane_keys.append((ci, pi))
    plane_names = list(dict.fromkeys(r["plane"] for r in plane_rows))
    planes = pd.DataFrame(plane_rows, columns=list(schema.PLANES))
    planes = _apply_dtypes(
        planes, schema.PLANES, {"host": host_cat, "plane": pd.CategoricalDtype(plane_names)}
    )

    # Lines ----------------------------------------------------------------------------
    line_rows = []
    line_offsets = []
    for cap in captures:
        line_offsets.append(len(line_rows))
        by_plane: dict[int, list[int]] = {}
        for li, ln in enumerate(cap.lines):
            by_plane.setdefault(ln.plane, []).append(li)
        unique = {}
        for lis in by_plane.values():
            names = unique_line_names(
                [cap.lines[i].name for i in lis], [cap.lines[i].line_id for i in lis]
            )
            unique.update(zip(lis, names))
        counts = np.bincount(cap.ev_line, minlength=len(cap.lines))
        for li, ln in enumerate(cap.lines):
            line_rows.append(
                {
                    "host": cap.host,
                    "plane": cap.planes[ln.plane].name,
                    "line": unique[li],
                    "line_id": ln.line_id,
                    "display_name": ln.display_name or ln.name,
                    "timestamp_ns": ln.timestamp_ns,
                    "duration_ps": ln.duration_ps,
                    "n_events": int(counts[li]),
                    "_base_ns": ln.base_ns,
                }
            )
    line_names = list(dict.fromkeys(r["line"] for r in line_rows))
    lines_full = pd.DataFrame(line_rows, columns=[*schema.LINES, "_base_ns"])
    base_ns = lines_full.pop("_base_ns").to_numpy(np.int64)
    lines = _apply_dtypes(
        lines_full,
        schema.LINES,
        {
            "host": host_cat,
            "plane": pd.CategoricalDtype(plane_names),
            "line": pd.CategoricalDtype(line_names),
        },
    )

    # Events ---------------------------------------------------------------------------
    name_cats = list(dict.fromkeys(n for cap in captures for n in cap.names))
    name_pos = {n: i for i, n in enumerate(name_cats)}
    g_line = np.concatenate(
        [c.ev_line.astype(np.int64) + off for c, off in zip(captures, line_offsets)]
        or [np.zeros(0, np.int64)]
    )
    g_name = np.concatenate(
        [
            np.array([name_pos[n] for n in c.names], np.int32)[c.ev_name]
            if c.names
            else np.zeros(0, np.int32)
            for c in captures
        ]
        or [np.zeros(0, np.int32)]
    )
    offset_ps = np.concatenate([c.ev_offset_ps for c in captures] or [np.zeros(0, np.int64)])
    dur_ps = np.concatenate([c.ev_dur_ps for c in captures] or [np.zeros(0, np.int64)])
    occ = np.concatenate([c.ev_occ for c in captures] or [np.zeros(0, np.int32)])
    timed = occ == 1

    used_bases = base_ns[np.unique(g_line)] if len(g_line) else np.zeros(1, np.int64)
    ref_ns = int(used_bases.min()) if len(used_bases) else 0
    # int64 ps relative to ref_ns: exact, and fits unless a run spans more than ~106 days.
    rel_ps = (base_ns - ref_ns)[g_line] * 1000 + offset_ps if len(g_line) else offset_ps
    t_min_ps = int(rel_ps[timed].min()) if timed.any() else 0
    start_us = (rel_ps - t_min_ps) / 1e6
    start_us[~timed] = np.nan
    dur_us = dur_ps / 1e6
    t0_ns = ref_ns + t_min_ps // 1000

    line_plane = lines["plane"].cat.codes.to_numpy()
    line_host = lines["host"].cat.codes.to_numpy()
    line_code = lines["line"].cat.codes.to_numpy()
    order = np.lexsort((np.nan_to_num(start_us, nan=np.inf), g_line))
    events = pd.DataFrame(
        {
            "host": pd.Categorical.from_codes(line_host[g_line][order], dtype=host_cat),
            "plane": pd.Categorical.from_codes(
                line_plane[g_line][order], dtype=pd.CategoricalDtype(plane_names)
            ),
            "line": pd.Categorical.from_codes(
                line_code[g_line][order], dtype=pd.CategoricalDtype(line_names)
            ),
            "name": pd.Categorical.from_codes(g_name[order], dtype=pd.CategoricalDtype(name_cats)),
            "start_us": start_us[order],
            "dur_us": dur_us[order],
            "end_us": start_us[order] + dur_us[order],
            "occurrences": occ[order].astype(np.int32),
        }
    )
    inverse = np.empty_like(order)
    inverse[order] = np.arange(len(order))

    # Event stats: owners re-pointed at the sorted event rows.
    ev_offsets = np.cumsum([0] + [c.n_events for c in captures[:-1]]).tolist()
    stats = StatRows.concat([c.event_stats for c in captures], ev_offsets)
    stat_owner = inverse[stats.owner] if len(stats) else stats.owner
    event_stats = stats.value_frame()
    event_stats.insert(0, "event", stat_owner)
    if len(event_stats):
        event_stats = event_stats.iloc[np.argsort(stat_owner, kind="stable")].reset_index(drop=True)

    # Event metadata and its stats -------------------------------------------------------
    md_frames, md_stat_parts, md_offsets = [], [], []
    n_md = 0
    for cap in captures:
        md_offsets.append(n_md)
        n_md += len(cap.md_id)
        md_frames.append(
            pd.DataFrame(
                {
                    "host": cap.host,
                    "plane": [cap.planes[p].name for p in cap.md_plane],
                    "metadata_id": np.array(cap.md_id, np.int64),
                    "name": cap.md_name,
                    "display_name": cap.md_display,
                    "n_stats": np.bincount(
                        cap.metadata_stats.owner, minlength=len(cap.md_id)
                    ).astype(np.int32)
                    if len(cap.md_id)
                    else np.zeros(0, np.int32),
                    "n_children": np.array(cap.md_children, np.int32),
                    "metadata_bytes": np.array(cap.md_bytes, np.int64),
                }
            )
        )
        md_stat_parts.append(cap.metadata_stats)
    event_metadata = (
        pd.concat(md_frames, ignore_index=True)
        if md_frames
        else pd.DataFrame(columns=list(schema.EVENT_METADATA))
    )
    event_metadata = _apply_dtypes(
        event_metadata,
        schema.EVENT_METADATA,
        {"host": host_cat, "plane": pd.CategoricalDtype(plane_names)},
    )
    md_stats = StatRows.concat(md_stat_parts, md_offsets)
    metadata_stats = md_stats.value_frame()
    md_owner = md_stats.owner
    metadata_stats.insert(
        0, "host", pd.Categorical(event_metadata["host"].to_numpy()[md_owner], dtype=host_cat)
    )
    metadata_stats.insert(
        1,
        "plane",
        pd.Categorical(
            event_metadata["plane"].to_numpy()[md_owner], dtype=pd.CategoricalDtype(plane_names)
        ),
    )
    metadata_stats.insert(2, "metadata_id", event_metadata["metadata_id"].to_numpy()[md_owner])

    # Plane stats --------------------------------------------------------------------------
    ps_parts = [captures[ci].planes[pi].stats for ci, pi in plane_keys]
    ps = StatRows.concat(ps_parts, list(range(len(ps_parts))))
    plane_stats = ps.value_frame()
    plane_stats.insert(
        0, "host", pd.Categorical(planes["host"].to_numpy()[ps.owner], dtype=host_cat)
    )
    plane_stats.insert(
        1,
        "plane",
        pd.Categorical(
            planes["plane"].to_numpy()[ps.owner], dtype=pd.CategoricalDtype(plane_names)
        ),
    )

    return {
        "planes": planes,
        "lines": lines,
        "events": events,
        "event_stats": event_stats,
        "event_metadata": event_metadata,
        "metadata_stats": metadata_stats,
        "plane_stats": plane_stats,
        "t0_ns": t0_ns,
    }


def _apply_dtypes(
    df: pd.DataFrame, table: dict[str, tuple[str, str]], overrides: dict[str, object]
) -> pd.DataFrame:
    out = {}
    for col, (dtype, _) in table.items():
        out[col] = df[col].astype(overrides.get(col, dtype))
    return pd.DataFrame(out, index=pd.RangeIndex(len(df)))
