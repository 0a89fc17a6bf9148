"""Build synthetic XSpace captures for what CPU TensorFlow cannot produce here.

Shapes follow a real 8-GPU TF capture (shared/reference/real-gpu-capture-inventory.txt):
'/device:GPU:N' planes with device-property plane stats, 'Stream #N(...)' lines with kernels
carrying 'kernel_details', 'correlation_id', 'group_id'; derived 'TensorFlow Ops' and 'Steps'
lines; '/host:CPU' with step markers, executor events, launch events and allocator events.
"""

from __future__ import annotations

import gzip
import os
import pathlib

import numpy as np

from tfprof_widgets.proto import xplane_pb2


class PlaneBuilder:
    def __init__(self, plane: xplane_pb2.XPlane) -> None:
        self.plane = plane
        self._stat_ids: dict[str, int] = {}
        self._event_ids: dict[str, int] = {}

    def stat_id(self, name: str) -> int:
        if name not in self._stat_ids:
            sid = len(self._stat_ids) + 1
            self._stat_ids[name] = sid
            md = self.plane.stat_metadata[sid]
            md.id, md.name = sid, name
        return self._stat_ids[name]

    def event_id(self, name: str, display_name: str = "", stats: dict | None = None) -> int:
        if name not in self._event_ids:
            eid = len(self._event_ids) + 1
            self._event_ids[name] = eid
            md = self.plane.event_metadata[eid]
            md.id, md.name = eid, name
            if display_name:
                md.display_name = display_name
            for k, v in (stats or {}).items():
                self.set_stat(md.stats.add(), k, v)
        return self._event_ids[name]

    def set_stat(self, stat: xplane_pb2.XStat, name: str, value) -> None:
        """int -> int64, np.uint64 -> uint64, float -> double, str -> str, bytes -> bytes;
        ('ref', s) -> ref_value; ('gz', s) -> compressed_str_value."""
        stat.metadata_id = self.stat_id(name)
        if isinstance(value, tuple) and value[0] == "ref":
            stat.ref_value = self.stat_id(value[1])
        elif isinstance(value, tuple) and value[0] == "gz":
            stat.compressed_str_value = gzip.compress(value[1].encode())
        elif isinstance(value, np.uint64):
            stat.uint64_value = int(value)
        elif isinstance(value, (bool, int, np.integer)):
            stat.int64_value = int(value)
        elif isinstance(value, float):
            stat.double_value = value
        elif isinstance(value, str):
            stat.str_value = value
        elif isinstance(value, bytes):
            stat.bytes_value = value
        else:
            raise TypeError(value)

    def add_plane_stat(self, name: str, value) -> None:
        self.set_stat(self.plane.stats.add(), name, value)

    def line(self, name: str, line_id: int, timestamp_ns: int = 0) -> LineBuilder:
        ln = self.plane.lines.add()
        ln.id, ln.name, ln.timestamp_ns = line_id, name, timestamp_ns
        return LineBuilder(self, ln)


class LineBuilder:
    def __init__(self, plane: PlaneBuilder, line: xplane_pb2.XLine) -> None:
        self.plane, self.line = plane, line

    def event(
        self,
        name: str,
        offset_ps: int,
        duration_ps: int,
        stats: dict | None = None,
        display_name: str = "",
    ) -> xplane_pb2.XEvent:
        ev = self.line.events.add()
        ev.metadata_id = self.plane.event_id(name, display_name)
        ev.offset_ps = offset_ps
        ev.duration_ps = duration_ps
        for k, v in (stats or {}).items():
            self.plane.set_stat(ev.stats.add(), k, v)
        return ev

    def aggregated(self, name: str, num_occurrences: int, duration_ps: int) -> None:
        ev = self.line.events.add()
        ev.metadata_id = self.plane.event_id(name)
        ev.num_occurrences = num_occurrences
        ev.duration_ps = duration_ps


class XSpaceBuilder:
    def __init__(self, hostname: str = "host0") -> None:
        self.space = xplane_pb2.XSpace()
        self.space.hostnames.append(hostname)

    def plane(self, name: str, plane_id: int = 0) -> PlaneBuilder:
        p = self.space.planes.add()
        p.id, p.name = plane_id, name
        return PlaneBuilder(p)

    def task_environment(self, start_ns: int, stop_ns: int) -> None:
        env = self.plane("Task Environment")
        env.add_plane_stat("profile_start_time", np.uint64(start_ns))
        env.add_plane_stat("profile_stop_time", np.uint64(stop_ns))
        env.add_plane_stat("profile_options", b"\x08\x01")

    def bytes(self) -> bytes:
        return self.space.SerializeToString()

    def write(self, path: str | os.PathLike) -> pathlib.Path:
        path = pathlib.Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(self.bytes())
        return path


US = 1_000_000  # picoseconds per microsecond
# XProf's derived line ids as TensorFlow writes them: 0xdeadbeef as a 32-bit int, stored in
# the 64-bit line id (XProf matches the 'Steps' line by this exact value).
STEPS_LINE_ID = 0xDEADBEEF - (1 << 32)
TF_OPS_LINE_ID = STEPS_LINE_ID + 3

KERNELS = [
    (
        "volta_sgemm_128x64_nn",
        "regs:128 static_shared:16384 dynamic_shared:0 grid:8,4,1 block:256,1,1 occ_pct:25.0",
        "dense/MatMul:MatMul",
        120,
    ),
    (
        "void Eigen::internal::EigenMetaKernel<relu>",
        "regs:16 shm:0 grid:64,1,1 block:1024,1,1",
        "dense/Relu:Relu",
        15,
    ),
    (
        "volta_h884gemm_64x64_nn",
        "regs:96 static_shared:8192 dynamic_shared:0 grid:4,4,1 block:128,1,1 occ_pct:50.0",
        "dense_1/MatMul:MatMul",
        40,
    ),
]


def gpu_capture(
    host: str = "worker0",
    n_steps: int = 3,
    n_gpus: int = 2,
    start_ns: int = 1_700_000_000_000_000_000,
    step_us: int = 1000,
    allocations: bool = True,
) -> XSpaceBuilder:
    """A GPU training capture: host markers, launches, kernels, derived lines, allocator."""
    b = XSpaceBuilder(host)
    b.task_environment(start_ns, start_ns + (n_steps + 1) * step_us * 1000)
    cpu = b.plane("/host:CPU", 0)
    py = cpu.line("python3", 101, timestamp_ns=0)
    ex = cpu.line("tf_Compute/202", 202, timestamp_ns=0)
    alloc_total = 0
    for s in range(n_steps):
        t0 = s * step_us * US
        py.event(
            "train", t0, (step_us - 50) * US, {"step_num": s, "_r": 1, "_p": 1000 + s, "_pt": 3}
        )
        ex.event(
            "ExecutorState::Process",
            t0 + 10 * US,
            (step_us - 100) * US,
            {"_c": 1000 + s, "_ct": 3, "iter_num": s},
        )
        for k, (kname, _, op, _dur) in enumerate(KERNELS):
            ex.event(f"{op}", t0 + (20 + 100 * k) * US, 30 * US)
            ex.event(
                "cuLaunchKernel",
                t0 + (25 + 100 * k) * US,
                5 * US,
                {"correlation_id": s * 100 + k, "kernel_name": ("ref", kname)},
            )
        if allocations:
            for k in range(2):
                alloc_total += 4096 * (k + 1)
                ex.event(
                    "MemoryAllocation",
                    t0 + (30 + 200 * k) * US,
                    1 * US,
                    {
                        "allocator_name": ("ref", "GPU_0_bfc"),
                        "bytes_reserved": 0,
                        "bytes_allocated": alloc_total,
                        "bytes_available": 2**30 - alloc_total,
                        "fragmentation": 0.125,
                        "peak_bytes_in_use": alloc_total,
                        "requested_bytes": 4000 * (k + 1),
                        "allocation_bytes": 4096 * (k + 1),
                        "addr": 0x7F0000000000 + 4096 * (s * 2 + k),  # int64, as TF writes it
                        "tf_op": ("ref", KERNELS[k][2]),
                        "region_type": "output",
                        "data_type": 1,
                        "shape": ("ref", "(32,128)"),
                        "group_id": s,
                    },
                )
            ex.event(
                "MemoryDeallocation",
                t0 + 600 * US,
                1 * US,
                {
                    "allocator_name": ("ref", "GPU_0_bfc"),
                    "bytes_allocated": alloc_total - 4096,
                    "addr": 0x7F0000000000 + 4096 * (s * 2),
                },
            )
    for g in range(n_gpus):
        dev = b.plane(f"/device:GPU:{g}", g + 1)
        for k, v in {
            "clock_rate": 1_530_000,
            "core_count": 80,
            "memory_size": 16 * 2**30,
            "memory_bandwidth": 900 * 10**9,
            "compute_cap_major": 7,
            "compute_cap_minor": 0,
            "device_vendor": "Nvidia",
        }.items():
            dev.add_plane_stat(k, v)
        stream = dev.line("Stream #14(Compute)", 14, timestamp_ns=0)
        ops = dev.line("TensorFlow Ops", TF_OPS_LINE_ID, timestamp_ns=0)
        steps = dev.line("Steps", STEPS_LINE_ID, timestamp_ns=0)
        for s in range(n_steps):
            t0 = s * step_us * US + 40 * US
            steps.event(f"{s}", t0, (step_us - 200) * US, {"group_id": s, "step_name": f"{s}"})
            for k, (kname, details, op, dur) in enumerate(KERNELS):
                st = t0 + 150 * k * US
                stream.event(
                    kname,
                    st,
                    dur * US,
                    {
                        "kernel_details": details,
                        "correlation_id": s * 100 + k,
                        "group_id": s,
                        "tf_op": ("ref", op),
                        "context_id": 1,
                    },
                )
                ops.event(op, st, dur * US, {"group_id": s}, display_name=op.split(":")[-1])
            stream.event(
                "MemcpyH2D",
                t0 + 500 * US,
                20 * US,
                {
                    "memcpy_details": "kind_src:pageable size:65536",
                    "group_id": s,
                    "correlation_id": s * 100 + 9,
                },
            )
    return b


def cpu_steps_capture(n_steps: int, host: str = "cpu") -> XSpaceBuilder:
    """A CPU capture of ``n_steps`` marked steps whose times all differ (step s lasts
    1 + 0.3 s ms), so which steps an average kept shows in its minimum and maximum."""
    b = XSpaceBuilder(host)
    start_ns = 1_700_000_000_000_000_000
    b.task_environment(start_ns, start_ns + (n_steps + 1) * 3_000_000)
    cpu = b.plane("/host:CPU", 0)
    py = cpu.line("python3", 101)
    ex = cpu.line("tf_Compute/202", 202)
    for s in range(n_steps):
        t0 = s * 3000 * US
        py.event("train", t0, (1000 + 300 * s) * US, {"step_num": s, "_r": 1, "_p": s, "_pt": 3})
        ex.event("ExecutorState::Process", t0 + 10 * US, 800 * US, {"_c": s, "_ct": 3})
        ex.event("dense/MatMul:MatMul", t0 + 20 * US, (100 + 10 * s) * US)
    return b


def write_multi_host_run(
    root: str | os.PathLike, hosts=("worker0", "worker1"), n_steps: int = 3
) -> pathlib.Path:
    """A TensorBoard-style logdir with one run holding one GPU capture per host."""
    run_dir = pathlib.Path(root) / "plugins" / "profile" / "2026_01_02_03_04_05"
    for i, host in enumerate(hosts):
        gpu_capture(host, n_steps=n_steps, start_ns=1_700_000_000_000_000_000 + i * 250_000).write(
            run_dir / f"{host}.xplane.pb"
        )
    return run_dir


def protobuf_walk_counts(path: str | os.PathLike) -> dict[tuple[str, str], int]:
    """Events per (plane, line id) by a plain protobuf walk: the reference for reader tests."""
    space = xplane_pb2.XSpace()
    space.ParseFromString(pathlib.Path(path).read_bytes())
    out: dict[tuple[str, str], int] = {}
    for p in space.planes:
        for ln in p.lines:
            if len(ln.events):
                out[(p.name, ln.id)] = out.get((p.name, ln.id), 0) + len(ln.events)
    return out


def protobuf_walk_stat_count(path: str | os.PathLike) -> int:
    space = xplane_pb2.XSpace()
    space.ParseFromString(pathlib.Path(path).read_bytes())
    return sum(len(e.stats) for p in space.planes for ln in p.lines for e in ln.events)


# The synthetic GPU capture that scripts/make_golden.py runs xprof on (tests rebuild it).
SYNTHETIC_GPU_ARGS = {"host": "gpuhost", "n_steps": 6, "n_gpus": 1}
