"""Load + HTA's four per-rank analyses (idle time breakdown, kernel launch statistics,
communication/computation overlap, queue length summary with the time blocked on a full
queue) on each bundled Kineto trace, ours (``tfprof_widgets.frameworks.pytorch.hta``)
vs HolisticTraceAnalysis 0.5's ``TraceAnalysis`` and the same four calls on a private copy
(HTA at exact times, ``HTA_DISABLE_NS_ROUNDING=1``); medians of paired runs, ratio printed
(issue 40's goal: <= 0.25).

    python benchmarks/bench_hta.py [--repeat 3] [TRACE ...]

Needs the dev extra (HolisticTraceAnalysis).
"""

from __future__ import annotations

import argparse
import logging
import os
import pathlib
import shutil
import sys
import tempfile
import time
import warnings

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "benchmarks"), str(ROOT / "scripts")]

from bench_speed import paired_row  # noqa: E402
from make_hta_goldens import DATA, KINETO  # noqa: E402

import tfprof_widgets as tw  # noqa: E402
from tfprof_widgets.frameworks.pytorch import hta  # noqa: E402

GOAL = "<= 0.25"


def ours(path: pathlib.Path) -> float:
    """Load + the four analyses, seconds."""
    t = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        run = tw.load(path, progress=False)
        hta.idle_time_breakdown(run)
        hta.kernel_launch_stats(run)
        hta.comm_comp_overlap(run)
        hta.queue_length_summary(run)
    return time.perf_counter() - t


def theirs(path: pathlib.Path) -> float:
    """HTA's TraceAnalysis and its four analyses on a copy of the trace, seconds."""
    os.environ["HTA_DISABLE_NS_ROUNDING"] = "1"
    from hta.trace_analysis import TraceAnalysis

    logging.disable(logging.WARNING)
    with tempfile.TemporaryDirectory(prefix="bench_hta_") as tmp:
        copy = pathlib.Path(tmp) / ("rank0." + path.name)
        shutil.copyfile(path, copy)
        t = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            a = TraceAnalysis(trace_files={0: str(copy)}, trace_dir=tmp)
            a.get_idle_time_breakdown(ranks=[0], visualize=False)
            a.get_cuda_kernel_launch_stats(ranks=[0], visualize=False)
            a.get_comm_comp_overlap(visualize=False)
            a.get_queue_length_summary(ranks=[0])
            a.get_time_spent_blocked_on_full_queue(a.get_queue_length_time_series(ranks=[0]))
        return time.perf_counter() - t


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("traces", nargs="*", type=pathlib.Path)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    print(f"{'trace':44} {'ours s':>8} {'HTA s':>8} {'ratio':>6}  goal {GOAL}")
    worst = 0.0
    for path in args.traces or [DATA / n for n in KINETO]:
        row = paired_row(
            f"load + HTA's 4 analyses, {path.name}", GOAL,
            lambda p=path: ours(p), lambda p=path: theirs(p), args.repeat, "HTA",
        )  # fmt: skip
        worst = max(worst, row["ratio"])
        print(f"{path.name:44} {row['ours_s']:8.3f} {row['anchor_s']:8.3f} {row['ratio']:6.3f}")
    print(f"worst ratio {worst:.3f} (goal {GOAL})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
