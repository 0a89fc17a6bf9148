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

import re

import numpy as np

from ..errors import NoEventsError, WrongFormatError
from ..proto import trace_events_pb2 as pb
from .columnar import HostTables, LineInfo, PlaneInfo, StatRows
from .formats import host_of
from .tool_data import parse_message

__all__ = ["read_trace_proto"]

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
    trace = parse_message(pb.Trace, data, path, "a TF 2.0/2.1 trace (Trace of trace_events.proto)")
    events = trace.trace_events
    if not len(events):
        raise NoEventsError(path, "the trace holds no events")
    device_ids = np.fromiter((e.device_id for e in events), np.int64, len(events))
    resource_ids = np.fromiter((e.resource_id for e in events), np.int64, len(events))
    if not trace.devices:
        raise WrongFormatError(path, "a Trace with events but no devices: not TensorFlow's")
    # One line per (device, resource) that has events, in device then resource order.
    pairs, ev_line = np.unique(np.stack([device_ids, resource_ids], 1), axis=0, return_inverse=True)
    planes: list[str] = []
    plane_devices: dict[str, list[str]] = {}
    lines: list[LineInfo] = []
    for dev_id, rid in pairs.tolist():
        dev = trace.devices.get(dev_id)
        device = dev.name if dev is not None else f"device {dev_id}"
        plane, stream = _plane_and_stream(device)
        if plane not in plane_devices:
            planes.append(plane)
            plane_devices[plane] = []
        if device not in plane_devices[plane]:
            plane_devices[plane].append(device)
        res = dev.resources.get(rid) if dev is not None else None
        name = _line_name(device, plane, stream, res.name if res is not None else "", rid)
        lines.append(LineInfo(planes.index(plane), name, rid, name, 0, 0, 0))
    names: dict[str, int] = {}
    ev_name = np.fromiter(
        (names.setdefault(e.name, len(names)) for e in events), np.int32, len(events)
    )
    stats = [
        (i, key, *_arg_value(value)) for i, e in enumerate(events) for key, value in e.args.items()
    ]
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
        ev_line=ev_line.reshape(-1).astype(np.int32),
        ev_name=ev_name,
        ev_offset_ps=np.fromiter((e.timestamp_ps for e in events), np.uint64, len(events)).astype(
            np.int64
        ),
        ev_dur_ps=np.fromiter((e.duration_ps for e in events), np.uint64, len(events)).astype(
            np.int64
        ),
        ev_occ=np.ones(len(events), np.int32),
        names=list(names),
        event_stats=StatRows.from_tuples(stats, None, path),
    )


def _arg_value(value: str) -> tuple[str, object]:
    """A Trace arg (always a string) as a stat: integers as int64, the rest as strings."""
    if _INT.fullmatch(value):
        return "int64_value", int(value)
    return "str_value", value
