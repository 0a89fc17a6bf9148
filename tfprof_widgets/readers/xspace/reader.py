"""Read XSpace captures (``*.xplane.pb``, what TF/TSL/XProf and JAX profilers write).

Decoding never imports TensorFlow. Two walks produce the same columns (:class:`_Walk`):

* the C wire walker (:mod:`._wire`, built with the package where a compiler exists) reads
  events and stats straight into flat arrays, and hands plane/line headers (names, metadata,
  plane stats) to protobuf's parser;
* the fallback parses the whole file with protobuf (upb) and loops over events in Python,
  an order of magnitude slower (docs/speed.md).

Either way the file is only read; nothing is written anywhere.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

import numpy as np
import pandas as pd
from google.protobuf.message import DecodeError

from ...errors import CorruptProfileError, NoEventsError, ProfileTooLargeError, WrongFormatError
from ...proto import xplane_pb2
from ...stat_store import KIND_CODE, StatStore
from ..columnar import (
    FIELD_KIND,
    WIRE_FIELD,
    HostTables,
    LineInfo,
    PlaneInfo,
    StatRows,
    categorical_from_codes,
    gunzip_texts,
    positions,
    unique_inverse,
)
from ..formats import host_of
from ..limits import EVENT_PEAK_BYTES, STAT_PEAK_BYTES, available_memory_bytes, fmt_bytes

try:
    from . import _wire
except ImportError:  # pragma: no cover - built where a C compiler was available
    _wire = None

_REPLACEMENT = "\ufffd".encode()  # what a binary file re-saved as UTF-8 text is full of


def fast_reader_available() -> bool:
    """True when the compiled wire walker is in use."""
    return _wire is not None


@dataclasses.dataclass
class _Walk:
    """What a walk over one XSpace yields, before names and stats are resolved."""

    space: xplane_pb2.XSpace  # errors, warnings, hostnames (planes may be absent)
    planes: list  # XPlane messages; only their non-line fields are read
    plane_headers: list[bytes] | None  # their bytes (the C walker's), else None
    lines: list  # (plane index, XLine message); only non-event fields are read
    ev_line: np.ndarray  # int32
    ev_md: np.ndarray  # int64 metadata ids
    ev_off: np.ndarray  # int64 offset_ps (0 where num_occurrences is set instead)
    ev_dur: np.ndarray  # int64 duration_ps
    occ_idx: np.ndarray  # int64: the events with num_occurrences (aggregated events)...
    occ_val: np.ndarray  # int64: ...and their num_occurrences
    st_owner: np.ndarray  # int32 event index
    st_md: np.ndarray  # int64 stat metadata id
    st_field: np.ndarray  # int8 XStat oneof field number
    st_raw: np.ndarray  # int64 payload
    text_rows: np.ndarray  # int64: the stats of fields 5, 6 and 8...
    text_code: np.ndarray  # int32: ...their payloads, as codes into:
    texts: np.ndarray  # object: the distinct payloads (str for field 5, bytes for 6 and 8)
    text_field: np.ndarray  # int8: the field of each


def _parse(message, data: bytes, path: str, what: str):
    try:
        message.ParseFromString(data)
    except (DecodeError, RuntimeError, ValueError) as exc:
        raise CorruptProfileError(
            path, f"{what}: not a valid XSpace protobuf ({exc}); the file is truncated or damaged"
        ) from None
    return message


def _check_bytes(data: bytes, path: str) -> None:
    if not data:
        raise CorruptProfileError(path, "the file is empty (0 bytes); the capture was not written")
    if _replacements(data) >= 4:
        # Checked first: such a file can still decode, with its strings and numbers wrong.
        try:
            xplane_pb2.XSpace().ParseFromString(data)
            decodes = True
        except (DecodeError, RuntimeError, ValueError):
            decodes = False
        if not decodes:
            raise CorruptProfileError(
                path,
                "the binary capture was re-saved as text: it is full of U+FFFD "
                "replacement characters, so bytes were lost; copy the .xplane.pb in "
                "binary mode",
            )
    if data[:1] in (b"{", b"[") or data[:2] == b"\x1f\x8b":
        raise WrongFormatError(
            path, "this is JSON or gzip, not an XSpace protobuf; is it a trace.json(.gz)?"
        )


def _replacements(data: bytes) -> int:
    """How many U+FFFD are in ``data``, up to 4."""
    if _wire is not None:
        return _wire.count_replacements(data, 4)
    return data.count(_REPLACEMENT)


def _walk_fast(data: bytes, path: str) -> _Walk:
    # A file's size says little about its events (an empty event is 4 bytes, and needs ~170
    # bytes of memory once loaded): the walker counts what it meets against the memory there
    # is, and stops before its columns outgrow it.
    budget = available_memory_bytes() or 0
    try:
        cols = _wire.walk(data, budget, EVENT_PEAK_BYTES, STAT_PEAK_BYTES)
    except MemoryError as exc:
        raise ProfileTooLargeError(
            path,
            f"loading it needs more memory than the {fmt_bytes(budget)} available: it holds "
            f"more events and stats than that can take (stopped after {exc}; each needs about "
            f"{EVENT_PEAK_BYTES} and {STAT_PEAK_BYTES} bytes once loaded)",
        ) from None
    except ValueError as exc:
        raise CorruptProfileError(
            path, f"not a valid XSpace protobuf: {exc}; the file is truncated or damaged"
        ) from None
    space = _parse(xplane_pb2.XSpace(), cols["space"], path, "XSpace fields")
    planes = [
        _parse(xplane_pb2.XPlane(), b, path, f"plane {i}") for i, b in enumerate(cols["planes"])
    ]
    line_plane = np.frombuffer(cols["line_plane"], np.int32).tolist()
    lines = [
        (pi, _parse(xplane_pb2.XLine(), b, path, f"line {li}"))
        for li, (pi, b) in enumerate(zip(line_plane, cols["lines"]))
    ]
    line_n = np.frombuffer(cols["line_n"], np.int64)
    field = np.frombuffer(cols["st_kind"], np.int8)
    texts, text_field = _distinct_texts(cols)
    return _Walk(
        space,
        planes,
        cols["planes"],
        lines,
        np.repeat(np.arange(len(line_n), dtype=np.int32), line_n),
        np.frombuffer(cols["ev_md"], np.int64),
        np.frombuffer(cols["ev_off"], np.int64),
        np.frombuffer(cols["ev_dur"], np.int64),
        np.frombuffer(cols["occ_idx"], np.int64),
        np.frombuffer(cols["occ_val"], np.int64),
        np.frombuffer(cols["st_owner"], np.int32),
        np.frombuffer(cols["st_md"], np.int64),
        field,
        np.frombuffer(cols["st_val"], np.int64),
        np.frombuffer(cols["str_row"], np.int64),
        np.frombuffer(cols["str_code"], np.int32),
        texts,
        text_field,
    )


def _distinct_texts(cols: dict) -> tuple[np.ndarray, np.ndarray]:
    """The walk's distinct string payloads (str for field 5, bytes for 6 and 8), and each
    one's field."""
    texts = np.empty(len(cols["texts"]), object)
    texts[:] = cols["texts"]
    return texts, np.frombuffer(cols["uniq_kind"], np.int8)


def _walk_python(data: bytes, path: str, on_fraction: Callable[[float], None] | None) -> _Walk:
    space = _parse(xplane_pb2.XSpace(), data, path, "XSpace")
    total = sum(len(ln.events) for p in space.planes for ln in p.lines) or 1
    lines, core, stats = [], [], []
    add_core, add_stat = core.append, stats.append
    line_of_event: list[int] = []
    n = 0
    for pi, plane in enumerate(space.planes):
        for line in plane.lines:
            li = len(lines)
            lines.append((pi, line))
            events = line.events
            for i, e in enumerate(events, n):
                add_core((e.metadata_id, e.offset_ps, e.duration_ps, e.num_occurrences))
                st = e.stats
                if st:
                    for s in st:
                        k = s.WhichOneof("value")
                        add_stat((i, s.metadata_id, WIRE_FIELD[k], getattr(s, k) if k else None))
            line_of_event.extend([li] * len(events))
            n += len(events)
            if on_fraction is not None and len(events):
                on_fraction(0.8 * n / total)
    ev = np.array(core, dtype=np.int64).reshape(len(core), 4)
    occ_idx = np.flatnonzero(ev[:, 3])
    st_cols = _stat_columns(stats)
    return _Walk(
        space,
        list(space.planes),
        None,
        lines,
        np.array(line_of_event, np.int32),
        ev[:, 0],
        ev[:, 1],
        ev[:, 2],
        occ_idx,
        ev[occ_idx, 3],
        *st_cols,
    )


def _stat_columns(stats: list[tuple]) -> tuple:
    """The protobuf walk's (owner, metadata id, wire field, value) stats as the C walker's
    columns: owners, metadata ids, fields, raw 64-bit values, the rows holding text, their
    codes into the distinct texts, the texts and each text's field."""
    if not stats:
        return (
            np.zeros(0, np.int32),
            np.zeros(0, np.int64),
            np.zeros(0, np.int8),
            np.zeros(0, np.int64),
            np.zeros(0, np.int64),
            np.zeros(0, np.int32),
            np.zeros(0, object),
            np.zeros(0, np.int8),
        )
    owner, md, field, value = zip(*stats)
    field_arr = np.array(field, np.int8)
    obj = np.empty(len(value), object)
    obj[:] = value
    raw = np.zeros(len(value), np.int64)
    for f, dtype in ((3, np.uint64), (4, np.int64), (7, np.uint64), (2, np.float64)):
        m = field_arr == f
        if m.any():
            raw[m] = np.array(obj[m].tolist(), dtype=dtype).view(np.int64)
    text_rows = np.flatnonzero(np.isin(field_arr, (5, 6, 8)))
    distinct: dict = {}
    text_code = np.fromiter(
        (
            distinct.setdefault((f, v), len(distinct))
            for f, v in zip(field_arr[text_rows].tolist(), obj[text_rows].tolist())
        ),
        np.int32,
        len(text_rows),
    )
    texts = np.empty(len(distinct), object)
    texts[:] = [v for _, v in distinct]
    return (
        np.array(owner, np.int32),
        np.array(md, np.int64),
        field_arr,
        raw,
        text_rows,
        text_code,
        texts,
        np.array([f for f, _ in distinct], np.int8),
    )


def read_xspace(
    path: str,
    data: bytes | None = None,
    host: str | None = None,
    on_fraction: Callable[[float], None] | None = None,
    fast: bool | None = None,
) -> HostTables:
    """Read one ``.xplane.pb`` into a :class:`HostTables`.

    ``fast``: None uses the C walker when it is built; False forces the protobuf fallback
    (tests compare the two). ``on_fraction(f)`` reports progress from 0 to 1.
    """
    if data is None:
        with open(path, "rb") as f:
            data = f.read()
    _check_bytes(data, path)
    use_fast = _wire is not None if fast is None else fast
    walk = _walk_fast(data, path) if use_fast else _walk_python(data, path, on_fraction)
    if on_fraction is not None:
        on_fraction(0.8)  # what is left (names, stats, columns) is about a fifth of the time
    return _to_tables(walk, path, host or host_of(path))


def _to_tables(w: _Walk, path: str, host: str) -> HostTables:
    """Resolve names, stats and times of a walk. Line ``timestamp_ns`` + event ``offset_ps``
    give an event's time; TF writes line timestamps relative to the 'Task Environment'
    plane's ``profile_start_time`` stat, which is added (when every line timestamp is below
    it) so that captures of several hosts share one clock."""
    _check_walk(w, path)
    md = _Metadata(w.planes, path, w.plane_headers)
    start_ns = _profile_start_ns(w.planes, md.stat_names)
    max_ts = max((ln.timestamp_ns for _, ln in w.lines), default=0)
    shift = start_ns if start_ns and max_ts < start_ns // 2 else 0
    lines = [
        LineInfo(
            plane=pi,
            name=ln.name,
            line_id=ln.id,
            display_name=ln.display_name,
            timestamp_ns=ln.timestamp_ns,
            duration_ps=ln.duration_ps,
            base_ns=ln.timestamp_ns + shift,
        )
        for pi, ln in w.lines
    ]
    # Lines are walked plane after plane: each plane's events are one range of rows, and its
    # stats (in event order) one range too.
    line_plane = np.array([pi for pi, _ in w.lines], np.int64)
    per_line = np.bincount(w.ev_line, minlength=len(w.lines)) if len(w.lines) else []
    per_plane = np.bincount(line_plane, weights=per_line, minlength=len(w.planes))
    ev_bounds = np.concatenate([[0], np.cumsum(per_plane.astype(np.int64))])
    ev_name = _event_names(w, ev_bounds, md.lookup, path)
    notes: list[str] = []
    event_stats = _event_stats(w, ev_bounds, md.stat_names, path, notes)
    _check_event_numbers(w, event_stats, path)
    notes += _clamp_negative_durations(w)
    occurrences = np.ones(len(w.ev_md), np.int32)
    occurrences[w.occ_idx] = w.occ_val
    return HostTables(
        host=host,
        path=path,
        planes=md.planes,
        lines=lines,
        ev_line=np.asarray(w.ev_line, np.int32),
        ev_name=ev_name,
        ev_offset_ps=w.ev_off,
        ev_dur_ps=w.ev_dur,
        ev_occ=occurrences,
        names=md.names,
        event_stats=event_stats,
        md_plane=md.plane,
        md_id=md.id,
        md_name=md.name,
        md_display=md.display,
        md_children=md.children,
        md_bytes=md.bytes,
        metadata_stats=StatRows.concat(md.stat_parts, [0] * len(md.stat_parts)),
        errors=list(w.space.errors),
        warnings=list(w.space.warnings) + notes,
        hostnames=list(w.space.hostnames),
    )


def _check_walk(w: _Walk, path: str) -> None:
    """Refuse a walk with no planes, a plane twice, or no events, saying which."""
    if not w.planes:
        if _has_unknown_fields(w.space):
            raise WrongFormatError(
                path,
                "not an XSpace capture: it decodes as protobuf but holds none of "
                "XSpace's fields (is it another kind of file?)",
            )
        raise NoEventsError(path, "the capture holds no planes (nothing was traced)")
    seen: set[str] = set()
    for plane in w.planes:
        if plane.name in seen:
            raise CorruptProfileError(
                path, f"plane {plane.name!r} appears more than once in the capture"
            )
        seen.add(plane.name)
    if not len(w.ev_md):
        raise NoEventsError(
            path,
            f"the capture has {len(w.planes)} plane(s) but no trace events; the "
            f"profiler ran while nothing executed, or stopped before any work",
        )


_INT32 = (-(2**31), 2**31 - 1)


def _check_event_numbers(w: _Walk, event_stats: StatStore, path: str) -> None:
    """Numbers our columns cannot hold as they are, refused naming the field and event: a
    ``num_occurrences`` beyond int32 (the events table's count) or negative, a ``group_id``
    stat beyond int32 (XProf's step groups are int32 too). TensorFlow writes neither."""

    def refuse(i: int, what: str) -> None:
        line = w.lines[int(w.ev_line[i])][1]
        raise CorruptProfileError(
            path, f"event {i} (on line {line.name!r}) has {what}; the file is damaged"
        )

    bad = np.flatnonzero((w.occ_val < 0) | (w.occ_val > _INT32[1]))
    if len(bad):
        refuse(
            int(w.occ_idx[bad[0]]),
            f"num_occurrences = {int(w.occ_val[bad[0]])}, not a count of events",
        )
    for seg in event_stats.segments("group_id"):
        kind = int(event_stats.seg_kind[seg])
        if kind not in (KIND_CODE["int"], KIND_CODE["uint"]):
            continue
        values = event_stats.values[seg]
        out = (values < _INT32[0]) | (values > _INT32[1])
        if out.any():
            j = int(np.flatnonzero(out)[0])
            refuse(
                int(event_stats.segment_owner(seg)[j]),
                f"a group_id stat of {int(values[j])}, beyond the int32 step groups of XProf",
            )


def _clamp_negative_durations(w: _Walk) -> list[str]:
    """Durations below zero become 0, with a warning that says how many and where the
    first is: a device tracer can stamp an end before its start when clocks misbehave, and
    one such event should not cost the user the whole capture."""
    bad = np.flatnonzero(w.ev_dur < 0)
    if not len(bad):
        return []
    first = int(bad[0])
    line = w.lines[int(w.ev_line[first])][1]
    note = (
        f"{len(bad):,} event(s) have a negative duration_ps (the first: event {first} on "
        f"line {line.name!r}, {int(w.ev_dur[first]):,} ps); counted as lasting 0"
    )
    w.ev_dur = np.maximum(w.ev_dur, 0)
    return [note]


class _Metadata:
    """The planes (with their stats) and every plane's event and stat metadata."""

    def __init__(self, xplanes, path: str, headers: list[bytes] | None = None) -> None:
        self.planes: list[PlaneInfo] = []
        self.names: list[str] = []
        self.plane, self.id, self.name, self.display = [], [], [], []
        self.children, self.bytes = [], []
        self.stat_parts: list[StatRows] = []
        self.stat_names: list[dict[int, str]] = []
        # Per plane: sorted event metadata ids and the global name index of each.
        self.lookup: list[tuple[np.ndarray, np.ndarray]] = []
        # Every plane's own stats in one table (owner: the plane), their names and refs
        # resolved through each plane's stat metadata.
        rows = []
        for pi, plane in enumerate(xplanes):
            if headers is not None:
                snames = self._from_columns(pi, headers[pi], path)
            else:
                snames = self._from_messages(pi, plane, path)
            for s in plane.stats:
                kind, value = s.WhichOneof("value"), _value(s)
                if kind == "ref_value":
                    kind, value = "str_value", snames.get(value, f"<ref {value}>")
                name = snames.get(s.metadata_id, f"<stat {s.metadata_id}>")
                rows.append((pi, name, kind, value))
        stats = StatRows.from_tuples(rows, None, path) if rows else StatRows.empty()
        for pi, plane in enumerate(xplanes):
            mine = stats.take(np.flatnonzero(stats.owner == pi)) if rows else stats
            mine.owner = np.zeros(len(mine), np.int64)
            self.planes.append(PlaneInfo(plane.name, plane.id, mine))

    def _add_lookup(self, ids: np.ndarray) -> None:
        first = len(self.names)
        self.lookup.append((ids, np.arange(first, first + len(ids), dtype=np.int32)))

    def _from_messages(self, pi: int, plane, path: str) -> dict[int, str]:
        """One plane's metadata from its protobuf message (the fallback reader)."""
        snames = {k: m.name for k, m in plane.stat_metadata.items()}
        self.stat_names.append(snames)
        items = sorted(plane.event_metadata.items())
        self._add_lookup(np.array([k for k, _ in items], np.int64))
        md_rows = []
        for k, m in items:
            row = len(self.id)
            self.names.append(m.name)
            self.plane.append(pi)
            self.id.append(k)
            self.name.append(m.name)
            self.display.append(m.display_name or None)
            self.children.append(len(m.child_id))
            self.bytes.append(len(m.metadata))
            md_rows.extend((row, s.metadata_id, s.WhichOneof("value"), _value(s)) for s in m.stats)
        self.stat_parts.append(StatRows.from_tuples(md_rows, snames, path))
        return snames

    def _from_columns(self, pi: int, header: bytes, path: str) -> dict[int, str]:
        """One plane's metadata from its header's bytes, walked in C into columns (the
        header was parsed by protobuf first, so what is read here is valid)."""
        c = {
            k: v if isinstance(v, list) else np.frombuffer(v, _METADATA_DTYPES.get(k, np.int64))
            for k, v in _wire.plane_metadata(header).items()
        }
        snames = dict(zip(c["sm_key"].tolist(), c["sm_name"]))
        self.stat_names.append(snames)
        keys = c["em_key"]
        # A later entry of the same key replaces an earlier one; entries sorted by key.
        last = len(keys) - 1 - np.unique(keys[::-1], return_index=True)[1]
        self._add_lookup(keys[last])
        row0 = len(self.id)
        names = [c["em_name"][i] for i in last.tolist()]
        display = [c["em_display"][i] for i in last.tolist()]
        self.names += names
        self.plane += [pi] * len(last)
        self.id += keys[last].tolist()
        self.name += names
        self.display += [d or None for d in display]
        self.children += c["em_children"][last].tolist()
        self.bytes += c["em_meta_len"][last].tolist()
        row_of = np.full(len(keys), -1, np.int64)
        row_of[last] = row0 + np.arange(len(last))
        owner = row_of[c["st_owner"]]
        # The stats of the kept entries, in key order (as the entries are listed).
        keep = np.flatnonzero(owner >= 0)
        if not len(keep):
            self.stat_parts.append(StatRows.empty())
            return snames
        keep = keep[np.argsort(owner[keep], kind="stable")]
        field = c["st_kind"]
        obj = np.full(len(field), None, object)
        if len(c["str_row"]):
            texts, _ = _distinct_texts(c)
            obj[c["str_row"]] = texts[c["str_code"]]
        ids, inv = unique_inverse(c["st_md"][keep])
        sname = categorical_from_codes(inv, [snames.get(int(i), f"<stat {int(i)}>") for i in ids])
        self.stat_parts.append(
            StatRows.from_columns(
                owner[keep], sname, field[keep], c["st_val"][keep], obj[keep], snames, path
            )
        )
        return snames


_METADATA_DTYPES = {
    "st_owner": np.int32,
    "st_kind": np.int8,
    "str_code": np.int32,
    "uniq_kind": np.int8,
}


def _inflated(texts: np.ndarray, field: np.ndarray, path: str, notes: list[str]) -> list:
    """Distinct string payloads, the compressed ones (field 8) inflated to their text (cut
    at 64 MB each, with a note)."""
    out = list(texts)
    packed = np.flatnonzero(field == 8)
    if len(packed):
        for i, t in zip(packed.tolist(), gunzip_texts(texts[packed], path, notes)):
            out[i] = t
    return out


def _event_names(w: _Walk, ev_bounds: np.ndarray, lookup, path: str) -> np.ndarray:
    """Each event's name index: metadata ids are per plane (plane ``p``'s events are rows
    ``ev_bounds[p]:ev_bounds[p + 1]``)."""
    ev_name = np.empty(len(w.ev_md), np.int32)
    for pi, (ids, gidx) in enumerate(lookup):
        a, b = int(ev_bounds[pi]), int(ev_bounds[pi + 1])
        if a == b:
            continue
        pos = positions(w.ev_md[a:b], ids)
        bad = pos < 0
        if bad.any():
            j = a + int(np.flatnonzero(bad)[0])
            li = int(w.ev_line[j])
            raise CorruptProfileError(
                path,
                f"plane {w.planes[pi].name!r}, line {w.lines[li][1].name!r}: an event "
                f"refers to event metadata id {int(w.ev_md[j])}, which the plane does "
                f"not define ({int(bad.sum())} such events)",
            )
        ev_name[a:b] = gidx[pos]
    return ev_name


def _event_stats(
    w: _Walk, ev_bounds: np.ndarray, stat_names, path: str, notes: list[str]
) -> StatStore:
    """Event stats as a store: names and ref values resolve through their own plane's stat
    metadata (a name several planes define is one stat)."""
    n = len(w.st_owner)
    n_events = len(w.ev_md)
    if not n:
        return StatStore.empty(n_events)
    st_bounds = np.searchsorted(w.st_owner, ev_bounds)
    name_pos: dict[str, int] = {}
    name_code = np.empty(n, np.int64)
    field = w.st_field
    str_code = np.full(n, -1, np.int64)
    texts: list = []
    for pi, snames in enumerate(stat_names):
        a, b = int(st_bounds[pi]), int(st_bounds[pi + 1])
        if a == b:
            continue
        ids, inv = unique_inverse(w.st_md[a:b])
        codes = [
            name_pos.setdefault(snames.get(i, f"<stat {i}>"), len(name_pos)) for i in ids.tolist()
        ]
        name_code[a:b] = np.asarray(codes, np.int64)[inv]
        refs = a + np.flatnonzero(field[a:b] == 7)
        if len(refs):
            ref_ids, ref_inv = unique_inverse(w.st_raw[refs])
            str_code[refs] = ref_inv + len(texts)
            texts += [snames.get(i, f"<ref {i}>") for i in ref_ids.tolist()]
    texts += _inflated(w.texts, w.text_field, path, notes)
    str_code[w.text_rows] = w.text_code.astype(np.int64) + (len(texts) - len(w.texts))
    # Each string once (a ref's name can equal a string stat, or another plane's ref).
    merged, distinct = pd.factorize(np.array(texts, dtype=object), use_na_sentinel=False)
    if len(distinct) < len(texts):
        has = str_code >= 0
        str_code[has] = merged[str_code[has]]
    owner, raw = w.st_owner, w.st_raw
    keep = out_of_range_bytes(name_pos, name_code, field, raw, path, notes)
    if keep is not None:
        owner, name_code, field, raw, str_code = (
            a[keep] for a in (owner, name_code, field, raw, str_code)
        )
    return StatStore.from_columns(
        owner,
        name_code,
        list(name_pos),
        FIELD_KIND[field],
        raw,
        raw.view(np.float64),
        str_code,
        list(distinct),
        n_events,
        distinct_strings=True,
    )


# Stats that count bytes (the allocator's): a value no int64 holds, a negative one, NaN or
# inf is no byte count (a uint64-max peak_bytes_in_use became a peak of -1 bytes).
BYTE_COUNT_STATS = frozenset(
    {
        "bytes_allocated",
        "bytes_reserved",
        "bytes_available",
        "peak_bytes_in_use",
        "requested_bytes",
        "allocation_bytes",
    }
)


# The most bytes a byte-count stat may say (4 EiB): sums of two (stack + heap) stay in int64.
MAX_BYTES = 1 << 62


def out_of_range_bytes(name_pos: dict, name_code, field, raw, path: str, notes: list[str]):
    """Which stat rows to keep (None: all) when byte-count stats hold values that are not a
    byte count; a note names each such stat and how many values were dropped."""
    codes = [c for n, c in name_pos.items() if n in BYTE_COUNT_STATS]
    if not codes:
        return None
    rows = np.isin(name_code, codes)
    as_float = raw.view(np.float64)
    bad_double = (field == 2) & ~((as_float >= 0) & (as_float < MAX_BYTES))  # NaN, inf, < 0
    bad_int = ((field == 3) | (field == 4)) & ((raw < 0) | (raw >= MAX_BYTES))
    bad = rows & (bad_int | bad_double)
    if not bad.any():
        return None
    names = list(name_pos)
    for code, count in zip(*np.unique(name_code[bad], return_counts=True)):
        notes.append(
            f"{path}: {count} value(s) of the stat {names[int(code)]!r} are no byte count "
            "(negative, 4 EiB or more, NaN or inf) and were dropped"
        )
    return ~bad


def _has_unknown_fields(msg) -> bool:
    from google.protobuf.unknown_fields import UnknownFieldSet

    return len(UnknownFieldSet(msg)) > 0


def _value(stat):
    k = stat.WhichOneof("value")
    return getattr(stat, k) if k else None


def _profile_start_ns(planes, stat_names: list[dict[int, str]]) -> int:
    for plane, names in zip(planes, stat_names):
        for s in plane.stats:
            if names.get(s.metadata_id) == "profile_start_time":
                v = _value(s)
                # ns since 1970 that int64 can hold; anything else is no start time.
                if isinstance(v, int) and 0 < v < 2**63:
                    return v
    return 0
