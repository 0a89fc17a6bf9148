"""The columnar tables every reader produces: one :class:`HostTables` per capture file.

A reader turns one file into flat numpy arrays for events and stats (:class:`StatRows`) plus
small Python lists for planes, lines and metadata; :func:`~.assemble.assemble` merges the
``HostTables`` of all hosts of a run into the DataFrames documented in
:mod:`tfprof_widgets.schema`. Readers never build those DataFrames themselves. The
categorical helpers here build pandas categoricals from integer codes, never by hashing a
million Python objects.
"""

from __future__ import annotations

import dataclasses
import re
import warnings

import numpy as np
import pandas as pd

from .. import stat_columns
from ..errors import ProfileTooLargeError
from ..schema import DEVICE_KINDS
from ..stat_columns import KIND_CODE, KINDS
from ..stat_store import StatStore
from . import limits
from .limits import available_memory_bytes, fmt_bytes

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
FIELD_KIND = np.full(9, KIND_CODE["none"], np.int8)
FIELD_KIND[[2, 3, 4, 5, 6, 7, 8]] = [
    KIND_CODE[k] for k in ("double", "uint", "int", "str", "bytes", "str", "str")
]

# '/device:GPU:0' and the like: the device kind and its ordinal.
_DEVICE_RE = re.compile(r"device:(" + "|".join((*DEVICE_KINDS, "CPU")) + r"):(\d+)")


_NO_NAMES: pd.Categorical | None = None


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
        # An empty categorical is shared: a run has many stat-less planes, and building one
        # costs more than the rest of an empty table.
        global _NO_NAMES
        if _NO_NAMES is None:
            _NO_NAMES = categorical_from_codes(np.zeros(0, np.int64), [])
        return cls(
            np.zeros(0, np.int64),
            _NO_NAMES,
            np.zeros(0, np.int8),
            np.zeros(0, np.int64),
            np.zeros(0, np.float64),
            _NO_NAMES,
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
        kind = FIELD_KIND[field]
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
        # Strings, bytes and inflated strings, coded in the order they come.
        texts = np.flatnonzero((field == 5) | (field == 6) | (field == 8))
        if len(texts):
            vals = obj[texts]
            packed = field[texts] == 8
            if packed.any():
                vals = vals.copy()
                vals[packed] = gunzip_texts(vals[packed], path)
            local: dict = {}
            local_codes = np.fromiter(
                (local.setdefault(v, len(local)) for v in vals), np.int64, len(texts)
            )
            codes[texts] = local_codes + len(values)
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
    # Each distinct value's code: its rank in order of first appearance (dicts, in C).
    first = dict(zip(dict.fromkeys(values), range(len(values))))
    remap = np.fromiter(map(first.__getitem__, values), np.int64, len(values))
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


def gunzip_texts(values, path: str, notes: list[str] | None = None) -> list[str]:
    """The compressed string stats (XStat field 8) of a file, inflated together within a
    quarter of the memory available: a small file may hold a gzip stream of gigabytes. One
    stat's text is kept to its first :data:`~.limits.MAX_STAT_TEXT_BYTES` (64 MB), with a
    note in ``notes`` (a warning when None) saying how many were cut."""
    avail = available_memory_bytes()
    left = avail // 4 if avail else 1 << 62
    out = []
    cut = 0
    for v in values:
        limit = min(left, limits.MAX_STAT_TEXT_BYTES)
        raw, truncated = limits.inflate_prefix(bytes(v), path, limit, "a compressed string stat")
        if truncated and limit < limits.MAX_STAT_TEXT_BYTES:  # the file's budget, not one stat's
            raise ProfileTooLargeError(
                path,
                f"its compressed string stats expand to more than {fmt_bytes(left)}; decoding "
                "them would need more memory than is available",
            )
        cut += truncated
        left -= len(raw)
        out.append(raw.decode("utf-8", "replace"))
    if cut:
        note = (
            f"{path}: {cut} compressed string stat(s) hold more than "
            f"{fmt_bytes(limits.MAX_STAT_TEXT_BYTES)} of text each: only their first "
            f"{fmt_bytes(limits.MAX_STAT_TEXT_BYTES)} are kept"
        )
        if notes is None:
            warnings.warn(note, stacklevel=2)
        else:
            notes.append(note)
    return out


@dataclasses.dataclass
class PlaneInfo:
    name: str
    plane_id: int
    stats: StatRows  # owner is 0 for every row


@dataclasses.dataclass
class LineInfo:
    plane: int  # index into HostTables.planes
    name: str
    line_id: int
    display_name: str
    timestamp_ns: int  # as stored
    duration_ps: int
    base_ns: int  # absolute-as-far-as-known time of offset 0 on this line, ns


@dataclasses.dataclass
class HostTables:
    """Everything one capture file holds, column-wise. Produced by each reader, one per host."""

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
    event_stats: StatRows | StatStore  # owner = event index in this capture
    # Event metadata (XSpace only): one row each, plus their stats (owner = metadata row).
    md_plane: list[int] = dataclasses.field(default_factory=list)
    md_id: list[int] = dataclasses.field(default_factory=list)
    md_name: list[str] = dataclasses.field(default_factory=list)
    md_display: list[str | None] = dataclasses.field(default_factory=list)
    md_children: list[int] = dataclasses.field(default_factory=list)
    md_bytes: list[int] = dataclasses.field(default_factory=list)
    metadata_stats: StatRows = dataclasses.field(default_factory=lambda: StatRows.empty())
    errors: list[str] = dataclasses.field(default_factory=list)
    warnings: list[str] = dataclasses.field(default_factory=list)
    hostnames: list[str] = dataclasses.field(default_factory=list)
    # Tables only some formats have (TF1 tfprof: "tfprof_nodes", "tfprof_execs").
    tables: dict[str, pd.DataFrame] = dataclasses.field(default_factory=dict)

    @property
    def n_events(self) -> int:
        return len(self.ev_name)

    def select_planes(self, keep) -> HostTables:
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

    def select_events(self, keep: np.ndarray) -> HostTables:
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
            start, present = stat_columns.numbers(plane.stats, "profile_start_time", 1)
            if present[0]:
                return int(start[0])
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

    def select_window(self, start_s: float, end_s: float) -> HostTables:
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


def _kept_stats(stats: StatRows | StatStore, owner_keep: np.ndarray) -> StatRows | StatStore:
    """The stats whose owner is kept, with owners renumbered to the kept positions."""
    if isinstance(stats, StatStore):
        return stats.select(owner_keep)
    picked = stats.take(np.flatnonzero(owner_keep[stats.owner]))
    picked.owner = _index_map(owner_keep)[picked.owner]
    return picked


def device_kind(plane_name: str, n_lines: int) -> tuple[str, int | None]:
    """Classify a plane by its name: ('GPU', 0) for '/device:GPU:0', ('CPU', None) for host."""
    if plane_name == "/host:CPU":
        return "CPU", None
    m = _DEVICE_RE.search(plane_name)
    # An ordinal beyond int32 is no device index (the ordinal column is int32-sized): no ordinal.
    if m:
        ordinal = m.group(2)
        return m.group(1), int(ordinal) if len(ordinal) <= 9 else None
    if plane_name.startswith("/host:"):
        return "host", None
    return ("metadata" if n_lines == 0 else "other"), None
