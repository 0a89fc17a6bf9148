"""Time every analysis on a large synthetic capture (target: all of them < 3 s here).

    python benchmarks/bench_analyses.py [--events 1000000]

Uses the capture of bench_load.py (host threads with step markers and flows, executor ops,
allocator events, tf.data iterators, GPU kernels), loads it once, then times each analysis
on a fresh Run (nothing cached between rows) and prints a table.
"""

from __future__ import annotations

import argparse
import os
import pathlib
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from bench_load import build_capture  # noqa: E402

import tfprof_widgets as tw  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--events", type=int, default=1_000_000)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="tfprof_bench_") as tmp:
        path = os.path.join(tmp, "bench.xplane.pb")
        with open(path, "wb") as f:
            f.write(build_capture(args.events))
        t = time.perf_counter()
        run = tw.load(path, progress=False)
        load_s = time.perf_counter() - t
        steps = [
            ("steps (step_breakdown)", lambda r: r.steps),
            ("ops (op_stats)", lambda r: r.ops),
            ("kernels", lambda r: r.kernels),
            ("memory timeline", lambda r: r.memory),
            ("memory_summary + breakdown", lambda r: (r.memory_summary, r.memory_breakdown)),
            ("tf_data + bottleneck", lambda r: r.tf_data_bottleneck),
            ("overview_summary", lambda r: r.overview_summary),
            ("input_pipeline", lambda r: r.input_pipeline),
        ]
        print(f"{len(run.events):,} events, load {load_s:.2f} s")
        print(f"{'analysis':<30} {'seconds':>8}")
        total = 0.0
        for name, fn in steps:
            run.clear_cache()  # each row measures its analysis and what it depends on
            t = time.perf_counter()
            fn(run)
            dt = time.perf_counter() - t
            total += dt
            print(f"{name:<30} {dt:>8.3f}")
        run.clear_cache()
        t = time.perf_counter()
        for _, fn in steps:
            fn(run)
        print(f"{'all analyses, one Run':<30} {time.perf_counter() - t:>8.3f}")


if __name__ == "__main__":
    main()
