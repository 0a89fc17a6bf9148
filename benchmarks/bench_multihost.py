"""A multi-host run loaded on every core against one core.

    python benchmarks/bench_multihost.py [--hosts 8] [--events 250000] [--repeat 3]

Writes a synthetic pod (``make_synthetic_pod.py``: each host bench_load.py's capture, its
own clock) to a temporary directory, then, in one process, loads it alternately with one
worker (``TFPROF_WIDGETS_LOAD_WORKERS=1``: the serial load) and with one worker per core
(the pool warmed by a first load, as it stays warm in a session; the loading process reads
hosts too), and prints the medians: seconds, events/s and the speed-up, the first load's
time, and the ratio the machine itself gives perfectly parallel work at that moment (other
processes sharing these cores bound the speed-up; ideally 1/cores). It also prints the CPU
seconds the loading process spends, parallel against serial: where other processes keep the
cores busy, that ratio still says what the seconds' ratio is on free cores (the workers
read beside the loading process, which merges what they send back).
"""

from __future__ import annotations

import argparse
import os
import pathlib
import statistics
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "benchmarks")]

from make_synthetic_pod import make_pod  # noqa: E402

import tfprof_widgets as tw  # noqa: E402
from tfprof_widgets.readers.xspace import host_pool  # noqa: E402


def timed_load(path: str, workers: int) -> tuple[float, tw.Run, float]:
    """Seconds a load takes, its Run, and the CPU seconds this process spent on it (the
    load's critical path: what the seconds come to where no other process needs the cores;
    the workers' share runs beside it)."""
    os.environ[host_pool.ENV_WORKERS] = str(workers)
    cpu, t = time.process_time(), time.perf_counter()
    run = tw.load(path, progress=False)
    return time.perf_counter() - t, run, time.process_time() - cpu


def _burn(n: int) -> int:
    total = 0
    for i in range(n):
        total += i
    return total


def machine_ceiling(cores: int, n: int = 6_000_000, repeat: int = 3) -> float:
    """What ``cores`` processes gain here right now on work that is perfectly parallel (a
    pure-Python loop per process) against one process doing it all: the best ratio a
    parallel load could reach while other processes share these cores (ideally 1/cores)."""
    import concurrent.futures
    import multiprocessing

    ratios = []
    ctx = multiprocessing.get_context("forkserver")
    with concurrent.futures.ProcessPoolExecutor(cores, mp_context=ctx) as pool:
        list(pool.map(_burn, [1] * cores))  # started
        for _ in range(repeat):
            t = time.perf_counter()
            for _ in range(cores):
                _burn(n)
            one = time.perf_counter() - t
            t = time.perf_counter()
            list(pool.map(_burn, [n] * cores))
            ratios.append((time.perf_counter() - t) / one)
    return statistics.median(ratios)


def speed_rows(hosts: int = 8, events: int = 250_000, repeat: int = 3) -> list[dict]:
    """The multi-host row of the speed table (see bench_speed.py)."""
    cores = len(os.sched_getaffinity(0))
    with tempfile.TemporaryDirectory() as tmp:
        run_dir = make_pod(tmp, hosts=hosts, events=events, jobs=cores)
        cold, _, _ = timed_load(run_dir, cores)  # starts the fork server and the pool's workers
        serial, parallel, serial_cpu, parallel_cpu = [], [], [], []
        for i in range(repeat):
            order = [(1, serial, serial_cpu), (cores, parallel, parallel_cpu)]
            for workers, times, cpus in order if i % 2 == 0 else order[::-1]:
                t, run, cpu = timed_load(run_dir, workers)
                times.append(t)
                cpus.append(cpu)
                n = len(run.events)
        os.environ.pop(host_pool.ENV_WORKERS, None)
    s, p = statistics.median(serial), statistics.median(parallel)
    s_cpu, p_cpu = statistics.median(serial_cpu), statistics.median(parallel_cpu)
    ceiling = machine_ceiling(cores)
    return [
        {
            "work": f"load a {hosts}-host run ({hosts} x {events // 1000}k events), {cores} cores "
            "vs one",
            "ours_s": p,
            "anchor_s": s,
            "ratio": p / s,
            "goal": f"< 1 (ideal 1/{cores})",
            "extra": f"{n / p / 1e6:.2f} M events/s on {cores} cores, {n / s / 1e6:.2f} on one; "
            f"first load {cold:.2f} s (starting the workers); the machine's own ratio for "
            f"perfectly parallel work just after: {ceiling:.2f} (load average "
            f"{os.getloadavg()[0]:.1f}: other processes share these cores); the loading "
            f"process's CPU {p_cpu:.2f} s vs {s_cpu:.2f} s serial, ratio {p_cpu / s_cpu:.2f} "
            "(about the seconds' ratio where the cores are free)",
        }
    ]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--hosts", type=int, default=8)
    ap.add_argument("--events", type=int, default=250_000)
    ap.add_argument("--repeat", type=int, default=3)
    a = ap.parse_args()
    for r in speed_rows(a.hosts, a.events, a.repeat):
        print(
            f"{r['work']}: {r['ours_s']:.2f} s vs {r['anchor_s']:.2f} s serial, ratio "
            f"{r['ratio']:.2f} (goal {r['goal']}); {r['extra']}"
        )


if __name__ == "__main__":
    main()
