"""Load + HTA's four per-rank analyses (idle time breakdown, kernel launch statistics,
communication/computation overlap, queue length summary with the time blocked on a full
queue) on each bundled Kineto trace, ours (``tfprof_widgets.frameworks.pytorch.hta``)
vs HolisticTraceAnalysis 0.5's ``TraceAnalysis`` and the same four calls on a private copy
(HTA at exact times, ``HTA_DISABLE_NS_ROUNDING=1``); medians of paired runs, ratio printed
(issue 40's goal: <= 0.25). Also, per trace, load + the memory bandwidth summary and time
series (``hta_memory_bw``) vs HTA's ``get_memory_bw_summary`` + ``get_memory_bw_time_series``;
and per pair of scripts/make_hta_more_goldens.py, loading both + the trace diff
(``analysis.trace_diff.compare_traces`` + ``ops_diff``) vs HTA's ``LabeledTrace`` of each +
``TraceDiff.compare_traces`` + ``ops_diff``; and load + the frequent kernel sequences of the
``aten::`` operators (``hta_sequences``) vs HTA's ``get_frequent_cuda_kernel_sequences`` (with
the goldens script's numpy 2 fix; HTA also writes its overlaid trace, into a temporary
folder; traces HTA fails on are left out).

    python benchmarks/bench_hta.py [--repeat 3] [TRACE ...]

Needs the dev extra (HolisticTraceAnalysis).
"""

from __future__ import annotations

import argparse
import contextlib
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
from make_hta_more_goldens import DIFF_PAIRS, _float_unique_check  # noqa: E402

import tfprof_widgets as tw  # noqa: E402
from tfprof_widgets.analysis import trace_diff  # noqa: E402
from tfprof_widgets.frameworks.pytorch import hta, hta_memory_bw, hta_sequences  # noqa: E402

GOAL = "<= 0.25"


def _ours(path: pathlib.Path, *analyses) -> float:
    """Load + each of ``analyses`` (functions of the run), seconds."""
    t = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        run = tw.load(path, progress=False)
        for analysis in analyses:
            analysis(run)
    return time.perf_counter() - t


def _hta(path: pathlib.Path, ask, quiet: int = logging.WARNING, guard=contextlib.nullcontext):
    """HTA's TraceAnalysis of a copy of the trace (as rank 0) + ``ask(analysis)``, seconds;
    ``quiet``: the log level it keeps from saying, ``guard``: a context its calls need."""
    os.environ["HTA_DISABLE_NS_ROUNDING"] = "1"
    from hta.trace_analysis import TraceAnalysis

    logging.disable(quiet)
    with tempfile.TemporaryDirectory(prefix="bench_hta_") as tmp:
        copy = pathlib.Path(tmp) / ("rank0." + path.name)
        shutil.copyfile(path, copy)
        t = time.perf_counter()
        with warnings.catch_warnings(), guard():
            warnings.simplefilter("ignore")
            ask(TraceAnalysis(trace_files={0: str(copy)}, trace_dir=tmp))
        return time.perf_counter() - t


def ours(path: pathlib.Path) -> float:
    """Load + the four analyses, seconds."""
    return _ours(
        path, hta.idle_time_breakdown, hta.kernel_launch_stats, hta.comm_comp_overlap,
        hta.queue_length_summary,
    )  # fmt: skip


def _four(a) -> None:
    a.get_idle_time_breakdown(ranks=[0], visualize=False)
    a.get_cuda_kernel_launch_stats(ranks=[0], visualize=False)
    a.get_comm_comp_overlap(visualize=False)
    a.get_queue_length_summary(ranks=[0])
    a.get_time_spent_blocked_on_full_queue(a.get_queue_length_time_series(ranks=[0]))


def theirs(path: pathlib.Path) -> float:
    """HTA's TraceAnalysis and its four analyses on a copy of the trace, seconds."""
    return _hta(path, _four)


def ours_memory_bw(path: pathlib.Path) -> float:
    """Load + the memory bandwidth summary and time series, seconds."""
    return _ours(path, hta_memory_bw.memory_bw_summary, hta_memory_bw.memory_bw_time_series)


def _memory_bw(a) -> None:
    a.get_memory_bw_summary(ranks=[0])
    a.get_memory_bw_time_series(ranks=[0])


def theirs_memory_bw(path: pathlib.Path) -> float:
    """HTA's TraceAnalysis, memory bandwidth summary and time series on a copy, seconds."""
    return _hta(path, _memory_bw)


def ours_diff(a: pathlib.Path, b: pathlib.Path) -> float:
    """Load both + compare_traces + ops_diff, seconds."""
    t = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ra, rb = tw.load(a, progress=False), tw.load(b, progress=False)
        trace_diff.compare_traces(ra, rb)
        trace_diff.ops_diff(ra, rb)
    return time.perf_counter() - t


def theirs_diff(a: pathlib.Path, b: pathlib.Path) -> float:
    """HTA's LabeledTrace of each (a copy in its own folder) + compare_traces + ops_diff."""
    os.environ["HTA_DISABLE_NS_ROUNDING"] = "1"
    from hta.trace_diff import LabeledTrace, TraceDiff

    logging.disable(logging.WARNING)
    with tempfile.TemporaryDirectory() as da, tempfile.TemporaryDirectory() as db:
        shutil.copyfile(a, pathlib.Path(da) / a.name)
        shutil.copyfile(b, pathlib.Path(db) / b.name)
        t = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            la, lb = LabeledTrace("Control", trace_dir=da), LabeledTrace("Test", trace_dir=db)
            TraceDiff.compare_traces(la, lb)
            TraceDiff.ops_diff(la, lb)
        return time.perf_counter() - t


def ours_sequences(path: pathlib.Path) -> float:
    """Load + the aten:: operators' frequent kernel sequences, seconds."""
    return _ours(path, hta_sequences.frequent_kernel_sequences)


def theirs_sequences(path: pathlib.Path) -> float:
    """HTA's TraceAnalysis + get_frequent_cuda_kernel_sequences('aten::') on a copy, seconds."""
    with tempfile.TemporaryDirectory() as written:
        return _hta(
            path,
            lambda a: a.get_frequent_cuda_kernel_sequences("aten::", written, 3, 0, 5),
            quiet=logging.ERROR,  # its 'not found' where no operator has a pattern
            guard=_float_unique_check,
        )


def _print(label: str, row: dict) -> float:
    print(f"{label:60} {row['ours_s']:8.3f} {row['anchor_s']:8.3f} {row['ratio']:6.3f}")
    return row["ratio"]


def more_rows(traces: list[pathlib.Path], repeat: int) -> float:
    """The memory bandwidth and kernel sequence rows (each trace) and trace diff rows (each
    pair); the worst ratio."""
    worst = 0.0
    for path in traces:
        row = paired_row(
            f"load + memory bw summary/series, {path.name}", GOAL,
            lambda p=path: ours_memory_bw(p), lambda p=path: theirs_memory_bw(p), repeat, "HTA",
        )  # fmt: skip
        worst = max(worst, _print(f"memory bw: {path.name}", row))
    for path in traces:
        if path.name.startswith("resnet50"):
            continue  # HTA fails on them (a string thread id)
        row = paired_row(
            f"load + frequent kernel sequences, {path.name}", GOAL,
            lambda p=path: ours_sequences(p), lambda p=path: theirs_sequences(p), repeat, "HTA",
        )  # fmt: skip
        worst = max(worst, _print(f"kernel sequences: {path.name}", row))
    for a, b in DIFF_PAIRS:
        pa, pb = DATA / a, DATA / b
        row = paired_row(
            f"load both + trace diff, {a} vs {b}", GOAL,
            lambda x=pa, y=pb: ours_diff(x, y), lambda x=pa, y=pb: theirs_diff(x, y), repeat, "HTA",
        )  # fmt: skip
        worst = max(worst, _print(f"trace diff: {a} vs {b}", row))
    return worst


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
    traces = args.traces or [DATA / n for n in KINETO]
    worst_more = more_rows(traces, args.repeat)
    print(f"worst ratio of the memory bw, kernel sequence and trace diff rows {worst_more:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
