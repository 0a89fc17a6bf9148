"""Read XSpace captures (``*.xplane.pb``, what TF/TSL/XProf and JAX profilers write).

Decoding uses our own wire-compatible schema (:mod:`tfprof_widgets.proto.xplane_pb2`), never
TensorFlow. Protobuf's C (upb) parser does the bytes; one pass per line pulls the event
fields and stats into flat lists that become numpy arrays. Nothing is written anywhere.
"""

from __future__ import annotations

import os
from typing import Callable

import numpy as np
from google.protobuf.message import DecodeError

from ..errors import CorruptProfileError, NoEventsError, WrongFormatError
from ..proto import xplane_pb2
from .capture import HostCapture, LineInfo, PlaneInfo, StatRows

XPLANE_SUFFIX = ".xplane.pb"
_REPLACEMENT = "\ufffd".encode()  # what a binary file re-saved as UTF-8 text is full of


def host_from_filename(path: str) -> str:
    """``/run/worker-0.xplane.pb`` -> ``worker-0`` (the name XProf uses for the host)."""
    base = os.path.basename(path)
    return base[: -len(XPLANE_SUFFIX)] if base.endswith(XPLANE_SUFFIX) else base


def parse_xspace(data: bytes, path: str) -> xplane_pb2.XSpace:
    """Decode bytes into an XSpace message, turning every failure into a typed error."""
    if not data:
        raise CorruptProfileError(path, "the file is empty (0 bytes); the capture was not written")
    space = xplane_pb2.XSpace()
    try:
        space.ParseFromString(data)
    except (DecodeError, RuntimeError, ValueError) as exc:
        raise CorruptProfileError(path, _diagnose(data, f"not a valid XSpace protobuf ({exc})"))
    if _unknown_field_count(space) and not space.planes:
        raise WrongFormatError(
            path, "not an XSpace capture: it decodes as protobuf but holds none of XSpace's "
                  "fields (is it another kind of file?)")
    return space


def _diagnose(data: bytes, fallback: str) -> str:
    if data.count(_REPLACEMENT) >= 4:
        return ("the binary capture was re-saved as text: it is full of U+FFFD replacement "
                "characters, so bytes were lost; copy the .xplane.pb in binary mode")
    if data[:1] in (b"{", b"[") or data[:2] == b"\x1f\x8b":
        return "this is JSON or gzip, not an XSpace protobuf; is it a trace.json(.gz)?"
    return fallback + "; the file is truncated or damaged"


def _unknown_field_count(msg) -> int:
    from google.protobuf.unknown_fields import UnknownFieldSet

    return len(UnknownFieldSet(msg))


def read_xspace(path: str, data: bytes | None = None, host: str | None = None,
                on_fraction: Callable[[float], None] | None = None) -> HostCapture:
    """Read one ``.xplane.pb`` into a :class:`HostCapture`.

    Line ``timestamp_ns`` plus event ``offset_ps`` give an event's time. TF writes line
    timestamps relative to the ``profile_start_time`` stat of its 'Task Environment' plane;
    when that stat exists and every line timestamp is smaller than it, it is added so that
    captures of several hosts share one clock.
    """
    if data is None:
        with open(path, "rb") as f:
            data = f.read()
    space = parse_xspace(data, path)
    return space_to_capture(space, path, host or host_from_filename(path), on_fraction)


def space_to_capture(space: xplane_pb2.XSpace, path: str, host: str,
                     on_fraction: Callable[[float], None] | None = None) -> HostCapture:
    """Walk a decoded XSpace into columns. ``on_fraction(f)`` reports progress (0..1)."""
    planes: list[PlaneInfo] = []
    lines: list[LineInfo] = []
    names: list[str] = []
    ev_chunks: list[np.ndarray] = []
    line_idx_chunks: list[np.ndarray] = []
    stat_parts: list[StatRows] = []
    stat_offsets: list[int] = []
    md_plane, md_id, md_name, md_display, md_children, md_bytes = [], [], [], [], [], []
    md_stat_parts: list[StatRows] = []
    md_stat_offsets: list[int] = []
    n_events = 0

    total_events = sum(len(ln.events) for p in space.planes for ln in p.lines) or 1
    start_ns = _profile_start_ns(space)
    max_ts = max((ln.timestamp_ns for p in space.planes for ln in p.lines), default=0)
    base_shift = start_ns if start_ns and max_ts < start_ns // 2 else 0

    for pi, plane in enumerate(space.planes):
        stat_names = {k: m.name for k, m in plane.stat_metadata.items()}
        pstats = [(0, s.metadata_id, s.WhichOneof("value"), _value(s)) for s in plane.stats]
        planes.append(PlaneInfo(plane.name, plane.id,
                                StatRows.from_tuples(pstats, stat_names, path)))

        # Event metadata of this plane -> global name index, looked up by sorted id.
        md_items = sorted(plane.event_metadata.items())
        md_ids = np.array([k for k, _ in md_items], np.int64)
        md_name_idx = np.arange(len(names), len(names) + len(md_items), dtype=np.int32)
        md_rows = []
        for k, m in md_items:
            names.append(m.name)
            row = len(md_id)
            md_plane.append(pi)
            md_id.append(k)
            md_name.append(m.name)
            md_display.append(m.display_name or None)
            md_children.append(len(m.child_id))
            md_bytes.append(len(m.metadata))
            md_rows.extend((row, s.metadata_id, s.WhichOneof("value"), _value(s))
                           for s in m.stats)
        if md_rows:
            md_stat_parts.append(StatRows.from_tuples(md_rows, stat_names, path))
            md_stat_offsets.append(0)

        for line in plane.lines:
            li = len(lines)
            lines.append(LineInfo(
                plane=pi, name=line.name, line_id=line.id,
                display_name=line.display_name, timestamp_ns=line.timestamp_ns,
                duration_ps=line.duration_ps, base_ns=line.timestamp_ns + base_shift))
            events = line.events
            n = len(events)
            if not n:
                continue
            core: list[tuple[int, int, int, int]] = []
            stats: list[tuple] = []
            add_core = core.append
            add_stat = stats.append
            for i, e in enumerate(events, n_events):
                add_core((e.metadata_id, e.offset_ps, e.duration_ps, e.num_occurrences))
                st = e.stats
                if st:
                    for s in st:
                        k = s.WhichOneof("value")
                        add_stat((i, s.metadata_id, k, getattr(s, k) if k else None))
            arr = np.array(core, dtype=np.int64).reshape(n, 4)
            pos = np.searchsorted(md_ids, arr[:, 0])
            pos_clip = np.minimum(pos, max(len(md_ids) - 1, 0))
            bad = (pos >= len(md_ids)) | (md_ids[pos_clip] != arr[:, 0]) if len(md_ids) else \
                np.ones(n, bool)
            if bad.any():
                j = int(np.flatnonzero(bad)[0])
                raise CorruptProfileError(
                    path, f"plane {plane.name!r}, line {line.name!r}: event {j} refers to event "
                          f"metadata id {int(arr[j, 0])}, which the plane does not define "
                          f"({int(bad.sum())} such events)")
            arr[:, 0] = md_name_idx[pos_clip]
            ev_chunks.append(arr)
            line_idx_chunks.append(np.full(n, li, np.int32))
            if stats:
                stat_parts.append(StatRows.from_tuples(stats, stat_names, path))
                stat_offsets.append(0)
            n_events += n
            if on_fraction is not None:
                on_fraction(n_events / total_events)

    if not space.planes:
        raise NoEventsError(path, "the capture holds no planes (nothing was traced)")
    if n_events == 0:
        raise NoEventsError(
            path, f"the capture has {len(space.planes)} plane(s) but no trace events; the "
                  f"profiler ran while nothing executed, or stopped before any work")

    ev = np.concatenate(ev_chunks)
    occ = ev[:, 3]
    aggregated = occ > 0
    return HostCapture(
        host=host, path=path, planes=planes, lines=lines,
        ev_line=np.concatenate(line_idx_chunks),
        ev_name=ev[:, 0].astype(np.int32),
        ev_offset_ps=np.where(aggregated, 0, ev[:, 1]),
        ev_dur_ps=ev[:, 2].copy(),
        ev_occ=np.where(aggregated, occ, 1).astype(np.int32),
        names=names,
        event_stats=StatRows.concat(stat_parts, stat_offsets),
        md_plane=md_plane, md_id=md_id, md_name=md_name, md_display=md_display,
        md_children=md_children, md_bytes=md_bytes,
        metadata_stats=StatRows.concat(md_stat_parts, md_stat_offsets),
        errors=list(space.errors), warnings=list(space.warnings),
        hostnames=list(space.hostnames),
    )


def _value(stat):
    k = stat.WhichOneof("value")
    return getattr(stat, k) if k else None


def _profile_start_ns(space: xplane_pb2.XSpace) -> int:
    for plane in space.planes:
        if not plane.stats:
            continue
        ids = {k for k, m in plane.stat_metadata.items() if m.name == "profile_start_time"}
        for s in plane.stats:
            if s.metadata_id in ids:
                v = _value(s)
                if isinstance(v, int) and v > 0:
                    return v
    return 0
