"""Every speed goal of the project in one table, each a ratio measured in this run.

    python benchmarks/bench_speed.py [--repeat 5] [--quick]

Rows (ours / anchor, median of paired runs in one process unless said):
* each real PyTorch Kineto trace loaded into the events table vs HolisticTraceAnalysis
  0.5's ``parse_trace_dataframe`` (bench_chrome.py; goal <= 0.25);
* load + overview + op stats + memory summary of the real 8-GPU BERT capture vs xprof
  2.24's converters for overview_page + framework_op_stats + memory_profile, each on a
  private copy with ``use_saved_result`` off (goal <= 0.5), and the same on a TF 2.21 CPU
  capture of ~300k events made with the Python tracer (cpu_capture.py makes it once, with
  tensorflow-cpu; goal <= 0.25);
* load + overview + op stats + HLO stats of the largest shared JAX GPU capture (H100, no CUDA
  graphs) vs xprof's overview_page + framework_op_stats + hlo_stats (goal <= 0.5);
* ``load()`` of a 1 M-event xplane on one core vs protobuf's own decode of the file (the
  floor; bench_load.py, pinned, best of N; goals >= 3 M events/s, <= 64 B/event with
  event_stats);
* a run of 8 hosts x 250k events loaded on every core vs one core (bench_multihost.py).
Needs the dev extra (xprof, HolisticTraceAnalysis).
"""

from __future__ import annotations

import argparse
import os
import pathlib
import shutil
import statistics
import sys
import tempfile
import time
import warnings

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "benchmarks")]

import tfprof_widgets as tw  # noqa: E402

BERT = ROOT / "tests" / "data" / "bert_8gpu_multi_worker.xplane.pb"
XPROF_TOOLS = ("overview_page", "framework_op_stats", "memory_profile")


def ours_analyses(path: pathlib.Path) -> float:
    t = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        run = tw.load(path, progress=False)
        tw.overview_summary(run)
        run.ops  # noqa: B018 - computing it is the point
        run.memory_summary  # noqa: B018
    return time.perf_counter() - t


def xprof_analyses(path: pathlib.Path) -> float:
    from xprof.convert import raw_to_tool_data as r

    total = 0.0
    for tool in XPROF_TOOLS:
        with tempfile.TemporaryDirectory(prefix="bench_xprof_") as tmp:
            copy = pathlib.Path(tmp) / path.name
            shutil.copy2(path, copy)
            t = time.perf_counter()
            r.xspace_to_tool_data([str(copy)], tool, {"use_saved_result": False})
            total += time.perf_counter() - t
    return total


def analyses_row(name: str, path: pathlib.Path, goal: str, repeat: int) -> dict:
    ours_analyses(path)  # warm
    xprof_analyses(path)
    ours_t, xprof_t = [], []
    for i in range(repeat):
        pair = [(ours_t, ours_analyses), (xprof_t, xprof_analyses)]
        for times, fn in pair if i % 2 == 0 else pair[::-1]:
            times.append(fn(path))
    o, x = statistics.median(ours_t), statistics.median(xprof_t)
    return {
        "work": f"load + overview + op stats + memory summary, {name} vs xprof's converters",
        "ours_s": o,
        "anchor_s": x,
        "ratio": o / x,
        "goal": goal,
        "extra": f"runs: ours {min(ours_t):.3f}-{max(ours_t):.3f} s, xprof "
        f"{min(xprof_t):.3f}-{max(xprof_t):.3f} s",
    }


# -- XLA: the largest shared JAX GPU capture ----------------------------------------------------
JAX_GPU = ROOT.parent / "shared" / "captures" / "xplane_gpu_jax_h100" / "jax_cnn_nographs.xplane.pb"
JAX_XPROF_TOOLS = ("overview_page", "framework_op_stats", "hlo_stats")


def jax_ours(path: pathlib.Path) -> float:
    """Load + overview + op stats + HLO stats of an XLA capture, seconds."""
    t = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        run = tw.load(path, progress=False)
        tw.overview_summary(run)
        run.ops  # noqa: B018 - computing it is the point
        run.hlo_stats  # noqa: B018
    return time.perf_counter() - t


def jax_xprof(path: pathlib.Path) -> float:
    """xprof's overview_page + framework_op_stats + hlo_stats, each on a private copy."""
    from xprof.convert import raw_to_tool_data as r

    total = 0.0
    for tool in JAX_XPROF_TOOLS:
        with tempfile.TemporaryDirectory(prefix="bench_xprof_") as tmp:
            copy = pathlib.Path(tmp) / path.name
            shutil.copy2(path, copy)
            t = time.perf_counter()
            r.xspace_to_tool_data([str(copy)], tool, {"use_saved_result": False})
            total += time.perf_counter() - t
    return total


def jax_row(repeat: int, path: pathlib.Path = JAX_GPU) -> dict | None:
    """The JAX GPU row (None where the shared capture is absent): paired runs, alternating
    which side goes first, medians."""
    if not path.exists():
        return None
    jax_ours(path)  # warm both
    jax_xprof(path)
    ours_t, xprof_t = [], []
    for i in range(repeat):
        pair = [(ours_t, jax_ours), (xprof_t, jax_xprof)]
        for times, fn in pair if i % 2 == 0 else pair[::-1]:
            times.append(fn(path))
    o, x = statistics.median(ours_t), statistics.median(xprof_t)
    n = len(tw.load(path, progress=False).events)
    return {
        "work": f"load + overview + op stats + hlo_stats, JAX on an H100 ({path.name}, "
        f"{n // 1000}k events) vs xprof's overview_page + framework_op_stats + hlo_stats",
        "ours_s": o,
        "anchor_s": x,
        "ratio": o / x,
        "goal": "<= 0.5",
        "extra": f"runs: ours {min(ours_t):.3f}-{max(ours_t):.3f} s, xprof "
        f"{min(xprof_t):.3f}-{max(xprof_t):.3f} s",
    }


def load_row(events: int, repeat: int) -> dict:
    from bench_load import build_capture, measure

    with tempfile.TemporaryDirectory(prefix="bench_load_") as tmp:
        path = os.path.join(tmp, "bench.xplane.pb")
        with open(path, "wb") as f:
            f.write(build_capture(events))
        floor = measure("protobuf", path, repeat)
        ours = measure("load", path, repeat)
    n = ours["events"]
    with_stats = (ours["events_bytes"] + ours["stats_bytes"]) / n
    return {
        "work": f"load() of a {n / 1e6:.2f} M-event xplane, one core, vs protobuf's decode",
        "ours_s": ours["seconds"],
        "anchor_s": floor["seconds"],
        "ratio": ours["seconds"] / floor["seconds"],
        "goal": ">= 3 M events/s, <= 64 B/event with stats",
        "extra": f"{n / ours['seconds'] / 1e6:.2f} M events/s (a second load in the same "
        f"process: {n / ours['again'] / 1e6:.2f} M), "
        f"{ours['events_bytes'] / n:.1f} B/event, {with_stats:.1f} with every stat (the "
        f"store; the long event_stats table, built when first read: "
        f"{ours['long_stats_bytes'] / n:.1f} more)",
    }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--quick", action="store_true", help="3 repeats, 2 hosts x 100k")
    a = ap.parse_args()
    repeat = 3 if a.quick else a.repeat
    from bench_chrome import speed_rows as chrome_rows
    from bench_multihost import speed_rows as multihost_rows
    from cpu_capture import large_cpu_capture

    rows = chrome_rows(repeat)
    rows.append(analyses_row("the real 8-GPU BERT capture (23k events)", BERT, "<= 0.5", repeat))
    cpu = large_cpu_capture()
    n_cpu = len(tw.load(cpu, progress=False).events)
    rows.append(
        analyses_row(f"a TF 2.21 CPU capture ({n_cpu // 1000}k events)", cpu, "<= 0.25", repeat)
    )
    rows += [r for r in (jax_row(repeat),) if r]
    rows.append(load_row(1_000_000, 3))
    rows += multihost_rows(*((2, 100_000) if a.quick else (8, 250_000)), repeat=3)
    print("| work | ours s | anchor s | ratio | goal | notes |\n|---|---:|---:|---:|---|---|")
    for r in rows:
        print(
            f"| {r['work']} | {r['ours_s']:.3f} | {r['anchor_s']:.3f} | {r['ratio']:.2f} | "
            f"{r['goal']} | {r['extra']} |"
        )


if __name__ == "__main__":
    main()
