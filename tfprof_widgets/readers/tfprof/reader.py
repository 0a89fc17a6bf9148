"""TF1-style profiles: serialized ``RunMetadata`` (FULL_TRACE step stats) and tfprof's
``ProfileProto`` (``tf.compat.v1.profiler.Profiler.serialize_to_string()``).

Both become a :class:`~tfprof_widgets.readers.columnar.HostTables` like any capture: one
plane per device (CPU devices on ``/host:CPU``, GPU streams on ``/device:GPU:<n>``), one
line per thread (RunMetadata) or device (ProfileProto), events named ``node:OpType`` so the
TF-op analyses work unchanged, every event tagged with its step (``group_id``), and one
``train`` step marker per step. They also carry two tables that XSpace captures do not
have (columns in :data:`tfprof_widgets.schema.TFPROF_NODES` / ``TFPROF_EXECS``): the graph's
nodes (op types, device, FLOPs, parameters, inputs, code) and each node's execution per
step (times and memory, computed the way tfprof computes them).
"""

from __future__ import annotations

import math
import re

import numpy as np
import pandas as pd
from google.protobuf.message import DecodeError

from ...errors import CorruptProfileError, NoEventsError, WrongFormatError
from ...proto import tfprof_pb2 as pb
from ..columnar import HostTables, LineInfo, PlaneInfo, StatRows
from ..formats import host_of

__all__ = ["read_tfprof_profile", "read_run_metadata"]

_LABEL_OP = re.compile(r"^[^=]*=\s*([A-Za-z0-9_>.]+)\(")
# tfprof: time on these devices is CPU time, on '.../stream:all' accelerator time.
_CPU_TIME_DEVICE = re.compile(r".*/(device:gpu|gpu|device:cpu|cpu):\d+$")


def _parse(message, data: bytes, path: str, what: str):
    if not data:
        raise CorruptProfileError(path, "the file is empty (0 bytes)")
    try:
        message.ParseFromString(data)
    except DecodeError as exc:
        raise CorruptProfileError(
            path, f"not a valid {what} protobuf ({exc}); the file is truncated or damaged"
        ) from None
    return message


def _device_plane(device: str) -> str:
    """Plane for a TF1 device string: CPU devices on the host plane, GPUs on device planes."""
    m = re.search(r"(?:device:)?(gpu|cpu):(\d+)", device.lower())
    if m and m.group(1) == "gpu":
        return f"/device:GPU:{m.group(2)}"
    return "/host:CPU"


def _op_from_label(label: str) -> str:
    m = _LABEL_OP.match(label or "")
    return m.group(1) if m else ""


class _Builder:
    """Collects planes, lines, events and their stats, then makes the HostTables."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.planes: list[str] = []
        self.plane_devices: list[list[str]] = []
        self.lines: list[tuple[int, str, int]] = []
        self._line_of: dict[tuple[str, str], int] = {}
        self.names: list[str] = []
        self._name_of: dict[str, int] = {}
        self.ev: list[tuple[int, int, int, int]] = []  # line, name, start ns, dur ns
        self.stats: list[tuple] = []
        self._step_spans: dict[int, tuple[int, int]] = {}  # step -> (first start, last end)

    def line(self, device: str, line_name: str, line_id: int = 0) -> int:
        plane = _device_plane(device)
        key = (plane, line_name)
        if key not in self._line_of:
            if plane not in self.planes:
                self.planes.append(plane)
                self.plane_devices.append([])
            pi = self.planes.index(plane)
            if device not in self.plane_devices[pi]:
                self.plane_devices[pi].append(device)
            self._line_of[key] = len(self.lines)
            self.lines.append((pi, line_name, line_id))
        return self._line_of[key]

    def event(self, line: int, name: str, start_ns: int, dur_ns: int, **stats) -> None:
        ni = self._name_of.setdefault(name, len(self.names))
        if ni == len(self.names):
            self.names.append(name)
        idx = len(self.ev)
        self.ev.append((line, ni, int(start_ns), max(int(dur_ns), 0)))
        for k, v in stats.items():
            self.stats.append((idx, k, "str_value" if isinstance(v, str) else "int64_value", v))

    def node_event(
        self, line: int, node: str, op: str, start_ns: int, dur_ns: int, step: int
    ) -> None:
        """One execution of a graph node, named ``node:OpType`` and tagged with its step."""
        self.event(line, f"{node}:{op}" if op else node, start_ns, dur_ns, group_id=step)
        a, e = self._step_spans.get(step, (start_ns, start_ns + dur_ns))
        self._step_spans[step] = (min(a, start_ns), max(e, start_ns + dur_ns))

    def markers(self) -> None:
        """A 'train' step marker spanning each step's node events, on the host plane."""
        if "/host:CPU" not in self.planes:
            self.planes.insert(0, "/host:CPU")
            self.plane_devices.insert(0, [])
            self.lines = [(pi + 1, n, i) for pi, n, i in self.lines]
        li = len(self.lines)
        self.lines.append((self.planes.index("/host:CPU"), "Steps", -1))
        for step, (a, b) in sorted(self._step_spans.items()):
            self.event(li, "train", a, b - a, step_num=step, group_id=step, _r=1)

    def tables(self, host: str, tables: dict[str, pd.DataFrame]) -> HostTables:
        if not self.ev:
            raise NoEventsError(
                self.path,
                "the profile holds no executed node (was it captured with trace_level=FULL_TRACE?)",
            )
        ev = np.array(self.ev, np.int64)
        base_ns = int(ev[:, 2].min())
        planes = [
            PlaneInfo(
                name,
                i,
                StatRows.from_tuples(
                    [(0, "devices", "str_value", ", ".join(devs))] if devs else [], None, self.path
                ),
            )
            for i, (name, devs) in enumerate(zip(self.planes, self.plane_devices))
        ]
        lines = [
            LineInfo(
                plane=pi,
                name=name,
                line_id=lid,
                display_name=name,
                timestamp_ns=base_ns,
                duration_ps=0,
                base_ns=base_ns,
            )
            for pi, name, lid in self.lines
        ]
        return HostTables(
            host=host,
            path=self.path,
            planes=planes,
            lines=lines,
            ev_line=ev[:, 0].astype(np.int32),
            ev_name=ev[:, 1].astype(np.int32),
            ev_offset_ps=(ev[:, 2] - base_ns) * 1000,
            ev_dur_ps=ev[:, 3] * 1000,
            ev_occ=np.ones(len(ev), np.int32),
            names=self.names,
            event_stats=StatRows.from_tuples(self.stats, None, self.path),
            tables=tables,
        )


# -- RunMetadata ---------------------------------------------------------------------------


def _node_step_row(node: str, step: int, device: str, stats) -> dict:
    """tfprof's per-step numbers for one NodeExecStats (tfprof_node.cc's rules)."""
    end = stats.op_end_rel_micros or 1  # tfprof rounds 0 up to 1 µs
    accel = end if "stream:all" in device.lower() else 0
    cpu = end if not accel and _CPU_TIME_DEVICE.match(device.lower()) else 0
    ms = stats.memory_stats
    persistent = ms.persistent_memory_size + ms.device_persistent_memory_size
    temp = ms.temp_memory_size + ms.device_temp_memory_size
    out_bytes = sum(
        max(
            o.tensor_description.allocation_description.allocated_bytes,
            o.tensor_description.allocation_description.requested_bytes,
        )
        for o in stats.output
    )
    return {
        "node": node,
        "step": step,
        "device": device,
        "run_count": 1 if cpu else 0,
        "exec_us": float(accel + cpu),
        "accelerator_exec_us": float(accel),
        "cpu_exec_us": float(cpu),
        "start_us": float(stats.all_start_micros),
        "requested_bytes": sum(m.total_bytes for m in stats.memory) + persistent + temp,
        "peak_bytes": sum(m.peak_bytes for m in stats.memory) + persistent + temp,
        "residual_bytes": sum(m.live_bytes for m in stats.memory) + persistent,
        "output_bytes": out_bytes,
    }


# Nanoseconds since 1970 that fit int64 (until 2262): TF1's µs times are multiplied by 1000.
_MAX_NS = 2**63 - 1


def _check_ns(path: str, node: str, device: str, start_ns: int, dur_ns: int) -> None:
    """An event's start and end must be nanoseconds an int64 column can hold."""
    if start_ns > _MAX_NS or not 0 <= dur_ns <= _MAX_NS - start_ns:
        raise CorruptProfileError(
            path,
            f"node {node!r} on {device}: its start ({start_ns} ns) or "
            f"duration ({dur_ns} ns) is beyond what a timestamp can hold",
        )


def read_run_metadata(paths: list[str], host: str | None = None) -> HostTables:
    """Serialized RunMetadata files, one per step (in the order given), as one capture."""
    first = paths[0]
    b = _Builder(first)
    exec_rows, ops, devices = [], {}, {}
    for step, path in enumerate(paths):
        with open(path, "rb") as f:
            data = f.read()
        rm = _parse(pb.RunMetadata(), data, path, "RunMetadata")
        if not rm.HasField("step_stats") or not rm.step_stats.dev_stats:
            raise WrongFormatError(
                path,
                "a RunMetadata without step stats: run the session "
                "with RunOptions(trace_level=FULL_TRACE)",
            )
        for dev in rm.step_stats.dev_stats:
            for ns in dev.node_stats:
                start_ns = ns.all_start_nanos or ns.all_start_micros * 1000
                dur_ns = ns.all_end_rel_nanos or ns.all_end_rel_micros * 1000
                if start_ns <= 0:
                    continue
                _check_ns(path, ns.node_name, dev.device, start_ns, dur_ns)
                op = _op_from_label(ns.timeline_label) or ops.get(ns.node_name, "")
                ops.setdefault(ns.node_name, op)
                thread = dev.thread_names.get(ns.thread_id, f"thread {ns.thread_id}")
                li = b.line(dev.device, f"{dev.device} {thread}", ns.thread_id)
                b.node_event(li, ns.node_name, op, start_ns, dur_ns, step)
                if _CPU_TIME_DEVICE.match(dev.device.lower()):
                    devices.setdefault(ns.node_name, dev.device)
                exec_rows.append(_node_step_row(ns.node_name, step, dev.device, ns))
    b.markers()
    execs = pd.DataFrame(exec_rows)
    nodes = pd.DataFrame({"node": list(ops), "op": [ops[n] for n in ops]})
    nodes["device"] = [devices.get(n, "") for n in nodes["node"]]
    return b.tables(
        host or host_of(first), {"tfprof_nodes": nodes, "tfprof_execs": _merge_devices(execs)}
    )


def _merge_devices(execs: pd.DataFrame) -> pd.DataFrame:
    """One row per (node, step): times add over devices, memory is the canonical device's."""
    if not len(execs):
        return execs
    times = execs.groupby(["node", "step"], sort=False).agg(
        run_count=("run_count", "sum"),
        exec_us=("exec_us", "sum"),
        accelerator_exec_us=("accelerator_exec_us", "sum"),
        cpu_exec_us=("cpu_exec_us", "sum"),
        start_us=("start_us", "min"),
    )
    canonical = execs[execs["device"].str.lower().str.match(_CPU_TIME_DEVICE.pattern)]
    mem = canonical.groupby(["node", "step"], sort=False)[
        ["requested_bytes", "peak_bytes", "residual_bytes", "output_bytes"]
    ].sum()
    return times.join(mem).fillna(0).reset_index()


# -- ProfileProto ---------------------------------------------------------------------------


def read_tfprof_profile(path: str, data: bytes, host: str | None = None) -> HostTables:
    """A serialized tfprof ProfileProto: the graph with per-step executions."""
    prof = _parse(pb.ProfileProto(), data, path, "tfprof ProfileProto")
    if not prof.nodes:
        raise WrongFormatError(path, "not a tfprof profile: it holds no graph nodes")
    strings = dict(prof.id_to_string)
    name_of = {nid: n.name for nid, n in prof.nodes.items()}
    b = _Builder(path)
    node_rows, exec_rows = [], []
    for nid in sorted(prof.nodes):
        n = prof.nodes[nid]
        shape = list(n.shape)
        params = _parameters(path, n.name, shape)
        node_rows.append(
            {
                "node": n.name,
                "op": n.op,
                "device": n.canonical_device,
                "op_types": tuple(n.op_types),
                "float_ops": n.float_ops,
                "parameters": params,
                "trainable": "_trainable_variables" in n.op_types,
                "inputs": tuple(name_of.get(i, "") for _, i in sorted(n.inputs.items())),
                "data_format": _attr_string(n.attrs.get("data_format", b"")),
                "code": tuple(
                    f"{strings.get(t.file_id, '?')}:{t.lineno}:{strings.get(t.function_id, '?')}"
                    for t in n.trace.traces
                ),
            }
        )
        for step, ex in n.execs.items():
            accel = sum(
                t.int64_values[1]
                for et in ex.accelerator_execs.values()
                for t in et.times
                if len(t.int64_values) > 1
            )
            cpu = sum(
                t.int64_values[1]
                for et in ex.cpu_execs.values()
                for t in et.times
                if len(t.int64_values) > 1
            )
            mem = ex.memory_execs
            exec_rows.append(
                {
                    "node": n.name,
                    "step": step,
                    "run_count": ex.run_count,
                    "exec_us": float(accel + cpu),
                    "accelerator_exec_us": float(accel),
                    "cpu_exec_us": float(cpu),
                    "start_us": float(ex.all_start_micros),
                    "requested_bytes": sum(m.requested_bytes for m in mem),
                    "peak_bytes": sum(m.peak_bytes for m in mem),
                    "residual_bytes": sum(m.residual_bytes for m in mem),
                    "output_bytes": sum(m.output_bytes for m in mem),
                }
            )
            for group in (ex.accelerator_execs, ex.cpu_execs):
                for device, et in group.items():
                    li = b.line(device, device)
                    for t in et.times:
                        if len(t.int64_values) < 2 or t.int64_values[0] <= 0:
                            continue
                        # tfprof keeps µs; a negative duration counts 0 as RunMetadata's do.
                        start_ns = t.int64_values[0] * 1000
                        dur_ns = max(t.int64_values[1], 0) * 1000
                        _check_ns(path, n.name, device, start_ns, dur_ns)
                        b.node_event(li, n.name, n.op, start_ns, dur_ns, int(step))
    b.markers()
    return b.tables(
        host or host_of(path),
        {"tfprof_nodes": pd.DataFrame(node_rows), "tfprof_execs": pd.DataFrame(exec_rows)},
    )


def _parameters(path: str, node: str, shape: list[int]) -> int:
    """A variable's parameter count: its shape's product (0 for an unknown dimension).
    Computed exactly (np.prod wraps around silently); beyond int64 the shape is damaged."""
    if not shape or min(shape) < 0:
        return 0
    params = math.prod(shape)
    if params > _MAX_NS:
        raise CorruptProfileError(
            path, f"node {node!r}: its shape {shape} holds more parameters than an int64"
        )
    return params


def _attr_string(attr: bytes) -> str:
    """The string of a serialized AttrValue (its field 2, ``s``), else ''."""
    if len(attr) < 2 or attr[0] != 0x12:
        return ""
    size, i, shift = 0, 1, 0
    while i < len(attr):
        size |= (attr[i] & 0x7F) << shift
        shift += 7
        i += 1
        if not attr[i - 1] & 0x80:
            break
    return attr[i : i + size].decode("utf-8", "replace")
