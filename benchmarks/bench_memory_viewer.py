"""The memory viewer of every XLA program of a capture: ours vs xprof 2.24's converter.

    python benchmarks/bench_memory_viewer.py [--repeat 5] [CAPTURE ...]

Ours: ``tw.load`` + ``hlo_memory`` + ``hlo_memory_peak`` + ``hlo_heap_timeline`` (every
program's buffers, peak and heap over program order), and the three tables alone on a run
already loaded (its programs decoded: what a notebook that has the run pays). xprof, in both
rows its whole conversion: what its plugin does for the same numbers, on a private copy of
the capture with ``use_saved_result`` off: its ``tool_names`` conversion (which writes each
program as ``<module>(<id>).hlo_proto.pb``), then its ``memory_viewer`` tool once per
program. Median of paired runs alternating which goes first (bench_speed.paired_row).
Default captures: the bundled JAX captures (H100 without CUDA graphs: the largest program;
the CPU one: 15 programs). Needs the dev extra (xprof).
"""

from __future__ import annotations

import argparse
import functools
import pathlib
import shutil
import sys
import tempfile
import time
import warnings

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "benchmarks")]

from bench_speed import paired_row  # noqa: E402

import tfprof_widgets as tw  # noqa: E402
from tfprof_widgets.frameworks.xla import memory_viewer as mv  # noqa: E402

CAPTURES = (
    ROOT / "tests" / "data" / "xplane_h100_jax" / "jax_cnn_nographs.xplane.pb",
    ROOT / "tests" / "data" / "jax_cpu" / "jax_cnn_cpu_10steps.xplane.pb",
)


def ours(path: pathlib.Path, loaded: bool = False) -> float:
    """Seconds of load + the three tables (``loaded``: of the tables alone, the run loaded
    and its programs decoded before the clock starts)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t = time.perf_counter()
        run = tw.load(path, progress=False)
        if loaded:
            _ = run.hlo_modules
            t = time.perf_counter()
        mv.hlo_memory(run)
        mv.hlo_memory_peak(run)
        mv.hlo_heap_timeline(run)
    return time.perf_counter() - t


def xprof(path: pathlib.Path) -> float:
    from xprof.convert import raw_to_tool_data as r

    with tempfile.TemporaryDirectory(prefix="bench_memviewer_") as tmp:
        copy = pathlib.Path(tmp) / path.name
        shutil.copy2(path, copy)
        t = time.perf_counter()
        r.xspace_to_tool_names([str(copy)])
        for f in sorted(pathlib.Path(tmp).glob("*.hlo_proto.pb")):
            params = {"use_saved_result": False, "module_name": f.name[: -len(".hlo_proto.pb")]}
            r.xspace_to_tool_data([str(copy)], "memory_viewer", params)
        return time.perf_counter() - t


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("captures", nargs="*", type=pathlib.Path)
    args = ap.parse_args()
    print(f"{'capture':32} {'tables':>6} {'ours s':>8} {'xprof s':>8} {'ratio':>6}  runs")
    for path in args.captures or CAPTURES:
        for loaded in (False, True):
            row = paired_row(
                "memory viewer", "", functools.partial(ours, path, loaded),
                functools.partial(xprof, path), args.repeat, "xprof",
            )  # fmt: skip
            what = "alone" if loaded else "+load"
            print(
                f"{path.name:32} {what:>6} {row['ours_s']:8.3f} {row['anchor_s']:8.3f} "
                f"{row['ratio']:6.2f}  {row['extra']}"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
