"""HTA's critical path of each golden case (``scripts/make_critical_path_goldens.py``: HTA's
own critical-path traces and the bundled Kineto traces), ours
(``tfprof_widgets.frameworks.pytorch.critical_path``) vs HolisticTraceAnalysis 0.5's
``critical_path_analysis`` on a private copy of the same file (HTA at exact times,
``HTA_DISABLE_NS_ROUNDING=1``, with the pandas-3 fixes the golden script applies); medians of
paired runs, ratio printed (issue 40's goal: <= 0.25). Two rows per trace: load + the
analysis, and the analysis alone (on a loaded run / an HTA TraceAnalysis made beforehand).

    python benchmarks/bench_critical_path.py [--repeat 3] [CASE ...]

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
from make_critical_path_goldens import CASES, DATA, _hta_under_pandas_3  # noqa: E402

import tfprof_widgets as tw  # noqa: E402
from tfprof_widgets.frameworks.pytorch import critical_path as cp  # noqa: E402

GOAL = "<= 0.25"
# The bundled Kineto traces (HTA's own are a few hundred events: start-up costs only).
DEFAULT = ("torch_transformer_h100", "timesformer_h100", "eager_b200", "hta_sampled_rank0")


def _args(case: str) -> tuple:
    """(rank, annotation, instance_id) of a case (the benchmarked traces are rank 0)."""
    _, annotation, instance_id = CASES[case]
    return 0, annotation, instance_id


def ours(path: pathlib.Path, case: str, run=None) -> float:
    """(Load +) the critical path, seconds; ``run``: a loaded run whose memos are cleared."""
    t = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if run is None:
            run = tw.load(path, progress=False)
        else:
            run.clear_cache()
            t = time.perf_counter()
        cp.critical_path(run, *_args(case))
    return time.perf_counter() - t


def _hta(path: pathlib.Path, tmp: str):
    os.environ["HTA_DISABLE_NS_ROUNDING"] = "1"
    _hta_under_pandas_3()
    from hta.trace_analysis import TraceAnalysis

    copy = pathlib.Path(tmp) / ("rank0." + path.name)
    shutil.copyfile(path, copy)
    return TraceAnalysis(trace_files={0: str(copy)}, trace_dir=tmp)


def theirs(path: pathlib.Path, case: str, analysis=None) -> float:
    """HTA's TraceAnalysis (unless given) and its critical path on a copy, seconds."""
    logging.disable(logging.WARNING)
    with tempfile.TemporaryDirectory(prefix="bench_cp_") as tmp:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            t = time.perf_counter()
            a = analysis or _hta(path, tmp)
            _, ok = a.critical_path_analysis(*_args(case))
        assert ok
        return time.perf_counter() - t


def rows(case: str, repeat: int) -> list[dict]:
    """The two paired rows of one case: load + critical path, and the critical path alone."""
    path = DATA / CASES[case][0]
    run = tw.load(path, progress=False)
    out = []
    with tempfile.TemporaryDirectory(prefix="bench_cp_") as tmp:
        analysis = _hta(path, tmp)
        out.append(
            paired_row(
                f"load + critical path, {case}",
                GOAL,
                lambda: ours(path, case),
                lambda: theirs(path, case),
                repeat,
                "HTA",
            )
        )
        out.append(
            paired_row(
                f"critical path, {case}",
                GOAL,
                lambda: ours(path, case, run),
                lambda: theirs(path, case, analysis),
                repeat,
                "HTA",
            )
        )
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("cases", nargs="*", choices=[[], *CASES], default=[])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    print(f"{'work':52} {'ours s':>8} {'HTA s':>8} {'ratio':>6}  goal {GOAL}")
    worst = 0.0
    for case in args.cases or DEFAULT:
        for row in rows(case, args.repeat):
            worst = max(worst, row["ratio"])
            print(
                f"{row['work']:52} {row['ours_s']:8.3f} {row['anchor_s']:8.3f} {row['ratio']:6.3f}"
            )
    print(f"worst ratio {worst:.3f} (goal {GOAL})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
