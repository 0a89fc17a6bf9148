"""Write a synthetic pod: one run directory holding N hosts' captures of ~M events each.

    python benchmarks/make_synthetic_pod.py DIR [--hosts 64] [--events 1000000] [--jobs 2]

Each host is bench_load.py's capture (host threads with step markers and flows, executor ops,
allocator events, tf.data iterators, a GPU with kernels) with its own random seed and its own
clock (hosts start 0.25 ms apart, as a pod's do), its steps marked by the host's step markers
(the kernels' ``group_id`` stats are dropped). One host in sixteen is a straggler: every
event on it lasts longer and starts later by ``--straggle`` (default 1.3x), so its steps are
that much slower. Hosts are written in parallel (``--jobs`` processes).

``--from CAPTURE.xplane.pb``: every host is that real capture instead (its events, stats and
step groups as recorded), with the same own clock per host and the same stragglers: a pod of
real events (``--events`` is then the capture's own count).
"""

from __future__ import annotations

import argparse
import concurrent.futures
import os
import pathlib
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from bench_load import build_capture  # noqa: E402

from tfprof_widgets.proto import xplane_pb2  # noqa: E402

RUN = "2026_06_01_00_00_00"


def host_name(i: int) -> str:
    return f"worker-{i:04d}"


def is_straggler(i: int) -> bool:
    return i % 16 == 5


def write_host(
    run_dir: str, i: int, events: int, straggle: float, source: str | None = None
) -> tuple[str, int]:
    if source is None:
        data = build_capture(events, seed=i)
    else:
        with open(source, "rb") as f:
            data = f.read()
    space = xplane_pb2.XSpace()
    space.ParseFromString(data)
    for plane in space.planes:
        # Steps come from the host's step markers: kernels keep no file-given group_id
        # (with one, the groups would be the file's and the markers would form no steps).
        # A real capture keeps its own groups.
        gid = [] if source else [k for k, m in plane.stat_metadata.items() if m.name == "group_id"]
        for line in plane.lines:
            if gid:
                for ev in line.events:
                    keep = [st for st in ev.stats if st.metadata_id not in gid]
                    if len(keep) != len(ev.stats):
                        del ev.stats[:]
                        ev.stats.extend(keep)
            line.timestamp_ns += i * 250_000  # each host's own clock
            if is_straggler(i):
                for ev in line.events:
                    ev.offset_ps = int(ev.offset_ps * straggle)
                    ev.duration_ps = int(ev.duration_ps * straggle)
    path = os.path.join(run_dir, f"{host_name(i)}.xplane.pb")
    with open(path + ".tmp", "wb") as f:
        f.write(space.SerializeToString())
    os.replace(path + ".tmp", path)
    return path, os.path.getsize(path)


def make_pod(
    root: str,
    hosts: int = 64,
    events: int = 1_000_000,
    jobs: int = 2,
    straggle: float = 1.3,
    source: str | None = None,
) -> str:
    """Write the pod's run directory under ``root`` (a logdir) and return its path; hosts
    already written are kept."""
    run_dir = os.path.join(root, "plugins", "profile", RUN)
    os.makedirs(run_dir, exist_ok=True)
    todo = [
        i
        for i in range(hosts)
        if not os.path.exists(os.path.join(run_dir, f"{host_name(i)}.xplane.pb"))
    ]
    with concurrent.futures.ProcessPoolExecutor(jobs) as pool:
        list(
            pool.map(
                write_host,
                [run_dir] * len(todo),
                todo,
                [events] * len(todo),
                [straggle] * len(todo),
                [source] * len(todo),
            )
        )
    return run_dir


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dir")
    ap.add_argument("--hosts", type=int, default=64)
    ap.add_argument("--events", type=int, default=1_000_000)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--straggle", type=float, default=1.3)
    ap.add_argument("--from", dest="source", default=None, help="a real .xplane.pb per host")
    args = ap.parse_args()
    t = time.perf_counter()
    run_dir = make_pod(args.dir, args.hosts, args.events, args.jobs, args.straggle, args.source)
    size = sum(f.stat().st_size for f in pathlib.Path(run_dir).iterdir())
    print(f"{run_dir}: {args.hosts} hosts, {size / 1e9:.2f} GB, {time.perf_counter() - t:.0f} s")


if __name__ == "__main__":
    main()
