"""TF 2.0/2.1 trace files: a ``Trace`` of trace_events.proto (``<run>/local.trace``).

TensorFlow 2.0 and 2.1 saved the trace viewer's data as this message (devices, their
resources, and events with picosecond times relative to the capture start); the 2019 Cloud
TPU profiler wrote ``<host>.trace`` files of it too. Mapped like a RunMetadata, because that
is what TF 2.0/2.1 built it from:

* a device becomes a plane: ``/host:CPU`` and ``.../device:CPU:N`` the host plane,
  ``.../device:GPU:N`` and ``/device:GPU:N/stream:K`` the plane ``/device:GPU:N`` (TPUs
  alike; TF1-style lowercase names too), any other name a plane of its own name;
* a resource (a thread, a stream lane) becomes a line: a stream's ``Stream #K``, the host's
  thread by its name, and on the other devices ``<device> <resource>``, as the RunMetadata
  reader names them, so that a Trace and the RunMetadata it came from load alike. TF 2.0/2.1
  gave unnamed lanes of a device resource ids without entries; they are ``lane N``;
* events keep their name (TF 2.0/2.1: the op type, with the full node name in the
  ``long name`` arg) and every arg as a stat, integers as integers. Times are exact: the
  file's picoseconds, relative to the capture start (the file records no wall-clock time,
  so ``Run.t0_ns`` counts from the capture start, not from the epoch).
"""

from __future__ import annotations

import dataclasses
import itertools
import re

import numpy as np
import pandas as pd

from ...errors import NoEventsError, WrongFormatError
from ...proto import trace_events_pb2 as pb
from ...stat_columns import KIND_CODE
from ..columnar import (
    HostTables,
    LineInfo,
    PlaneInfo,
    StatRows,
    categorical_from_codes,
    unique_inverse,
)
from ..formats import host_of
from ..messages import check_message_budget
from .reader import parse_message

try:
    from ..xspace import _wire
except ImportError:  # no C compiler where this was installed: parsed whole
    _wire = None

__all__ = ["read_trace_proto"]

# Memory one event of a Trace costs as we read it, a run of CHUNK_EVENTS at a time (the protobuf
# objects of the whole file take several times more: docs/speed.md): events are counted against the
# memory there is before any is parsed.
TRACE_EVENT_BYTES = 250
WHOLE_TRACE_EVENT_BYTES = 900  # parsed whole (no C extension to cut the file in runs)
CHUNK_EVENTS = 200_000

_DEVICE = re.compile(r"(?:^|/)(?:device:)?(gpu|tpu|cpu):(\d+)(?:/stream:(\w+))?", re.IGNORECASE)
_INT = re.compile(r"-?(0|[1-9]\d{0,17})")


def _plane_and_stream(device: str) -> tuple[str, str | None]:
    """The plane a Trace device belongs to, and its stream (None when not a stream)."""
    if device.startswith("/host:"):
        return device, None
    m = _DEVICE.search(device)
    if not m:
        return device or "(unnamed device)", None
    kind, ordinal, stream = m.group(1).upper(), m.group(2), m.group(3)
    if kind == "CPU":
        return "/host:CPU", None
    return f"/device:{kind}:{ordinal}", stream


def _line_name(device: str, plane: str, stream: str | None, resource: str, rid: int) -> str:
    label = resource if resource and not resource.isdigit() else f"lane {rid}"
    if stream is not None:
        return f"Stream #{stream}" + ("" if rid == 0 else f" {label}")
    if device == plane:
        return label
    return f"{device} {label}"


def read_trace_proto(path: str, data: bytes, host: str | None = None) -> HostTables:
    """A TF 2.0/2.1 ``Trace`` into one host's tables."""
    if not data:
        raise NoEventsError(path, "the file is empty (0 bytes)")
    ev = _events(path, data)
    n = len(ev.ts)
    if not n:
        raise NoEventsError(path, "the trace holds no events")
    if not ev.devices:
        raise WrongFormatError(path, "a Trace with events but no devices: not TensorFlow's")
    # One line per (device, resource) that has events, in device then resource order.
    keys, ev_line = unique_inverse(ev.dev << 32 | ev.res)
    planes: list[str] = []
    plane_devices: dict[str, list[str]] = {}
    lines: list[LineInfo] = []
    for k in keys.tolist():
        dev_id, rid = k >> 32, k & 0xFFFFFFFF
        d = ev.devices.get(dev_id)
        device = d[0] if d is not None else f"device {dev_id}"
        plane, stream = _plane_and_stream(device)
        if plane not in plane_devices:
            planes.append(plane)
            plane_devices[plane] = []
        if device not in plane_devices[plane]:
            plane_devices[plane].append(device)
        resource = d[1].get(rid, "") if d is not None else ""
        name = _line_name(device, plane, stream, resource, rid)
        lines.append(LineInfo(planes.index(plane), name, rid, name, 0, 0, 0))
    name_codes, name_values = pd.factorize(pd.Series(ev.names, dtype=object), use_na_sentinel=False)
    plane_info = [
        PlaneInfo(
            name,
            i,
            StatRows.from_tuples(
                [(0, "devices", "str_value", ", ".join(plane_devices[name]))], None, path
            ),
        )
        for i, name in enumerate(planes)
    ]
    return HostTables(
        host=host or host_of(path),
        path=path,
        planes=plane_info,
        lines=lines,
        ev_line=ev_line.astype(np.int32),
        ev_name=name_codes.astype(np.int32),
        ev_offset_ps=ev.ts,
        ev_dur_ps=ev.dur,
        ev_occ=np.ones(n, np.int32),
        names=list(name_values),
        event_stats=_arg_stats(ev.arg_owner, ev.arg_keys, ev.arg_values),
    )


@dataclasses.dataclass
class _Events:
    """A Trace's events as columns, its devices as (name, {resource id: name})."""

    devices: dict
    dev: np.ndarray
    res: np.ndarray
    ts: np.ndarray
    dur: np.ndarray
    names: list
    arg_owner: np.ndarray
    arg_keys: list
    arg_values: list


def _events(path: str, data: bytes) -> _Events:
    """Every event, read a run of :data:`CHUNK_EVENTS` at a time: a run of a message's
    top-level fields parses as the same message, so only one run's protobuf objects are
    alive at once (the whole file's take several times the memory: docs/speed.md)."""
    what = "a TF 2.0/2.1 trace (Trace of trace_events.proto)"
    cuts = _wire.split_fields(data, CHUNK_EVENTS) if _wire is not None else None
    per_event = TRACE_EVENT_BYTES if cuts is not None else WHOLE_TRACE_EVENT_BYTES
    check_message_budget(pb.Trace, data, path, what, per_event)
    cuts = cuts or [0, len(data)]
    devices: dict = {}
    cols: dict[str, list] = {k: [] for k in ("dev", "res", "ts", "dur", "owner")}
    names, keys, values = [], [], []
    n = 0
    for a, b in zip(cuts[:-1], cuts[1:]):
        part = parse_message(pb.Trace, data[a:b], path, what, per_message=0)
        for k, d in part.devices.items():  # a later entry of a key replaces it, as protobuf
            devices[k] = (d.name, {rid: r.name for rid, r in d.resources.items()})
        events = part.trace_events
        if not len(events):
            continue
        # One pass: reading a field of a protobuf object from Python costs about as much as
        # the rest of the work, so each is read once.
        dev, res, nm, ts, dur, args = zip(
            *[
                (e.device_id, e.resource_id, e.name, e.timestamp_ps, e.duration_ps, e.args)
                for e in events
            ]
        )
        for key, col, dtype in (("dev", dev, np.int64), ("res", res, np.int64),
                                ("ts", ts, np.uint64), ("dur", dur, np.uint64)):  # fmt: skip
            cols[key].append(np.array(col, dtype))
        names += nm
        counts = np.fromiter(map(len, args), np.int64, len(args))
        if counts.any():
            # Iterating a protobuf map's keys is C; its items() goes through Python wrappers.
            keys += itertools.chain.from_iterable(args)
            values += [m[k] for m in args for k in m]
            cols["owner"].append(np.repeat(np.arange(n, n + len(args)), counts))
        n += len(events)
        del part, events, args
    joined = {k: np.concatenate(v) if v else np.zeros(0, np.int64) for k, v in cols.items()}
    return _Events(
        devices=devices,
        dev=joined["dev"],
        res=joined["res"],
        ts=joined["ts"].astype(np.uint64).astype(np.int64),
        dur=joined["dur"].astype(np.uint64).astype(np.int64),
        names=names,
        arg_owner=joined["owner"].astype(np.int64),
        arg_keys=keys,
        arg_values=values,
    )


def _arg_stats(owner: np.ndarray, keys: list, values: list) -> StatRows:
    """Every event's args as stats: integer-looking values as int64, the rest as strings.
    Keys and values repeat a lot (op labels), so they are told apart on the unique ones."""
    if not len(owner):
        return StatRows.empty()
    key_codes, key_names = pd.factorize(pd.Series(keys, dtype=object), use_na_sentinel=False)
    codes, uniques = pd.factorize(pd.Series(values, dtype=object), use_na_sentinel=False)
    is_int = np.array([bool(_INT.fullmatch(u)) for u in uniques], bool)
    as_int = np.array([int(u) if i else 0 for u, i in zip(uniques, is_int)], np.int64)
    int_arg = is_int[codes]
    str_codes = np.where(int_arg, -1, codes)
    return StatRows(
        owner=owner,
        name=categorical_from_codes(key_codes, list(key_names)),
        kind=np.where(int_arg, KIND_CODE["int"], KIND_CODE["str"]).astype(np.int8),
        int_value=np.where(int_arg, as_int[codes], 0),
        float_value=np.full(len(owner), np.nan),
        str_value=categorical_from_codes(str_codes, list(uniques)),
    )
