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
* a run of 8 hosts x 250k events loaded on every core vs one core (bench_multihost.py);
* load + every PyTorch analysis (steps, torch_steps, torch_ops, torch_ops_by_shape,
  torch_kernels, torch_gpu_metrics, temporal_breakdown, kernel_breakdown, memory, ops,
  kernels) of the largest shared Kineto trace (most events) vs HTA 0.5's ``TraceAnalysis`` +
  ``get_temporal_breakdown`` + ``get_gpu_kernel_breakdown`` on a private copy of it
  (goal <= 0.5);
* issue 41's four views on the same JAX capture, each load + the view's page (its payload:
  tables, figures, every choice) vs xprof's converter for the same thing on a private copy:
  the memory viewer (the program with the largest peak) vs xprof's ``tool_names`` (which
  writes the programs' HloProtos) + ``memory_viewer`` of that program; the graph viewer
  (2 hops around the heaviest op) vs ``tool_names`` + ``graph_viewer`` (``graph_width`` 2,
  dot); the suggestions (``run.suggestions``) vs ``smart_suggestion``; the source lines vs
  ``hlo_stats``, the one xprof table that names each op's ``file:line`` (xprof has no
  per-line tool, and its trace viewer's events carry no Python stack on these captures).
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


TF_ANALYSES = ("ops", "memory_summary")


def ours_analyses(path: pathlib.Path, analyses: tuple[str, ...] = TF_ANALYSES) -> float:
    """Load + the overview + the run attributes named, seconds."""
    t = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        run = tw.load(path, progress=False)
        for name in ("overview_summary", *analyses):
            getattr(run, name)
    return time.perf_counter() - t


def xprof_analyses(path: pathlib.Path, tools: tuple[str, ...] = XPROF_TOOLS) -> float:
    """xprof's converters for the tools named, each on a private copy (they write caches
    beside their input), seconds."""
    from xprof.convert import raw_to_tool_data as r

    total = 0.0
    for tool in tools:
        with tempfile.TemporaryDirectory(prefix="bench_xprof_") as tmp:
            copy = pathlib.Path(tmp) / path.name
            shutil.copy2(path, copy)
            t = time.perf_counter()
            r.xspace_to_tool_data([str(copy)], tool, {"use_saved_result": False})
            total += time.perf_counter() - t
    return total


def paired_row(work: str, goal: str, ours, anchor, repeat: int, anchor_name: str) -> dict:
    """Both sides warmed, then paired runs alternating which goes first; medians."""
    ours()
    anchor()
    ours_t, anchor_t = [], []
    for i in range(repeat):
        pair = [(ours_t, ours), (anchor_t, anchor)]
        for times, fn in pair if i % 2 == 0 else pair[::-1]:
            times.append(fn())
    o, a = statistics.median(ours_t), statistics.median(anchor_t)
    return {
        "work": work,
        "ours_s": o,
        "anchor_s": a,
        "ratio": o / a,
        "goal": goal,
        "extra": f"runs: ours {min(ours_t):.3f}-{max(ours_t):.3f} s, {anchor_name} "
        f"{min(anchor_t):.3f}-{max(anchor_t):.3f} s",
    }


def analyses_row(name: str, path: pathlib.Path, goal: str, repeat: int) -> dict:
    return paired_row(
        f"load + overview + op stats + memory summary, {name} vs xprof's converters", goal,
        lambda: ours_analyses(path), lambda: xprof_analyses(path), repeat, "xprof",
    )  # fmt: skip


# -- PyTorch: the largest shared Kineto trace -------------------------------------------------
KINETO = ROOT.parent / "shared" / "captures" / "kineto"
# Every analysis a PyTorch run has, as run attributes.
TORCH_ANALYSES = (
    "steps",
    "torch_steps",
    "torch_ops",
    "torch_ops_by_shape",
    "torch_kernels",
    "torch_gpu_metrics",
    "temporal_breakdown",
    "kernel_breakdown",
    "memory",
    "ops",
    "kernels",
)


def largest_kineto_trace() -> tuple[pathlib.Path, int] | None:
    """The shared Kineto trace with the most events, and its event count (None if absent)."""
    traces = sorted(KINETO.glob("*.json.gz")) if KINETO.exists() else []
    if not traces:
        return None
    counts = {p: len(tw.load(p, progress=False).events) for p in traces}
    path = max(counts, key=counts.get)
    return path, counts[path]


def ours_torch(path: pathlib.Path) -> float:
    t = time.perf_counter()
    run = tw.load(path, progress=False)
    for name in TORCH_ANALYSES:
        getattr(run, name)
    return time.perf_counter() - t


def hta_torch(path: pathlib.Path) -> float:
    """HTA's TraceAnalysis and its two breakdowns, on a copy (HTA may write beside its
    input), with its default options."""
    import logging

    from hta.trace_analysis import TraceAnalysis

    logging.getLogger("hta").setLevel(logging.ERROR)
    with tempfile.TemporaryDirectory(prefix="bench_hta_") as tmp:
        copy = pathlib.Path(tmp) / ("rank0." + path.name)
        shutil.copy2(path, copy)
        t = time.perf_counter()
        analysis = TraceAnalysis(trace_files={0: str(copy)}, trace_dir=tmp)
        analysis.get_temporal_breakdown(visualize=False)
        analysis.get_gpu_kernel_breakdown(visualize=False, include_memory_kernels=True)
        return time.perf_counter() - t


def torch_row(repeat: int) -> dict | None:
    """Load + every PyTorch analysis vs HTA on the largest shared trace (None if absent)."""
    found = largest_kineto_trace()
    if found is None:
        return None
    path, n = found
    return paired_row(
        f"load + every PyTorch analysis, {path.name} ({n // 1000}k events) vs HTA's "
        "TraceAnalysis + temporal + kernel breakdowns", "<= 0.5",
        lambda: ours_torch(path), lambda: hta_torch(path), repeat, "HTA",
    )  # fmt: skip


# -- XLA: the largest shared JAX GPU capture ----------------------------------------------------
JAX_GPU = ROOT.parent / "shared" / "captures" / "xplane_gpu_jax_h100" / "jax_cnn_nographs.xplane.pb"
JAX_XPROF_TOOLS = ("overview_page", "framework_op_stats", "hlo_stats")


def jax_row(repeat: int, path: pathlib.Path = JAX_GPU) -> dict | None:
    """Load + overview + op stats + HLO stats of the JAX GPU capture vs xprof's converters
    (None where the shared capture is absent)."""
    if not path.exists():
        return None
    n = len(tw.load(path, progress=False).events)
    return paired_row(
        f"load + overview + op stats + hlo_stats, JAX on an H100 ({path.name}, {n // 1000}k "
        "events) vs xprof's overview_page + framework_op_stats + hlo_stats", "<= 0.5",
        lambda: ours_analyses(path, ("ops", "hlo_stats")),
        lambda: xprof_analyses(path, JAX_XPROF_TOOLS), repeat, "xprof",
    )  # fmt: skip


# -- issue 41: the memory viewer, graph viewer, suggestions and source lines ------------------
def ours_view(path: pathlib.Path, make) -> float:
    """Load + ``make(run)``, seconds (a view: its payload, what the page draws)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t = time.perf_counter()
        made = make(tw.load(path, progress=False))
        if hasattr(made, "payload_json"):
            made.payload_json()
    return time.perf_counter() - t


def xprof_tool(path: pathlib.Path, tool: str, options=None, programs: bool = False) -> float:
    """xprof's ``tool`` on a private copy, seconds; ``programs``: after its ``tool_names``
    conversion (which writes the HloProtos its HLO tools read), counted too; ``options``:
    a function of the programs' names giving the tool's parameters."""
    from xprof.convert import raw_to_tool_data as r

    with tempfile.TemporaryDirectory(prefix="bench_xprof41_") as tmp:
        copy = pathlib.Path(tmp) / path.name
        shutil.copy2(path, copy)
        t = time.perf_counter()
        names = []
        if programs:
            r.xspace_to_tool_names([str(copy)])
            names = [
                f.name[: -len(".hlo_proto.pb")] for f in pathlib.Path(tmp).glob("*.hlo_proto.pb")
            ]
        params = {"use_saved_result": False, **(options(names) if options else {})}
        r.xspace_to_tool_data([str(copy)], tool, params)
        return time.perf_counter() - t


def _module_of(names: list[str], program: int) -> str:
    return next(n for n in names if n.endswith(f"({program})"))


# The bundled copy of the shared JAX capture (the same bytes): the rows run in any checkout.
JAX_BUNDLED = ROOT / "tests" / "data" / "xplane_h100_jax" / "jax_cnn_nographs.xplane.pb"


def views41_rows(repeat: int, path: pathlib.Path = JAX_BUNDLED) -> list[dict]:
    """The four rows of issue 41."""
    run = tw.load(path, progress=False)
    program = tw.views.memory_viewer(run).program
    graph = tw.views.graph_viewer(run).graph
    op, graph_program = graph.op, graph.program_id
    what = f"JAX on an H100 ({path.name})"

    def memory(names):
        return {"module_name": _module_of(names, program)}

    def graph_options(names):
        options = {"module_name": _module_of(names, graph_program), "node_name": op,
                   "graph_width": 2, "merge_fusion": 0, "type": "graph",
                   "format": "dot"}  # fmt: skip
        return {"graph_viewer_options": options}

    cases = (
        (f"load + memory viewer (program {program}), {what} vs xprof's tool_names + "
         "memory_viewer", lambda r: tw.views.memory_viewer(r),
         lambda: xprof_tool(path, "memory_viewer", memory, programs=True)),
        (f"load + graph viewer ({op}, 2 hops), {what} vs xprof's tool_names + graph_viewer",
         lambda r: tw.views.graph_viewer(r),
         lambda: xprof_tool(path, "graph_viewer", graph_options, programs=True)),
        (f"load + run.suggestions, {what} vs xprof's smart_suggestion",
         lambda r: r.suggestions, lambda: xprof_tool(path, "smart_suggestion")),
        (f"load + source lines view, {what} vs xprof's hlo_stats (its source_info; xprof "
         "has no per-line tool)", lambda r: tw.views.source_lines(r),
         lambda: xprof_tool(path, "hlo_stats")),
    )  # fmt: skip
    return [
        paired_row(work, "report", lambda m=make: ours_view(path, m), anchor, repeat, "xprof")
        for work, make, anchor in cases
    ]


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
    rows += views41_rows(repeat)
    rows.append(load_row(1_000_000, 3))
    rows += multihost_rows(*((2, 100_000) if a.quick else (8, 250_000)), repeat=3)
    rows += [r for r in (torch_row(repeat),) if r]
    print("| work | ours s | anchor s | ratio | goal | notes |\n|---|---:|---:|---:|---|---|")
    for r in rows:
        print(
            f"| {r['work']} | {r['ours_s']:.3f} | {r['anchor_s']:.3f} | {r['ratio']:.2f} | "
            f"{r['goal']} | {r['extra']} |"
        )


if __name__ == "__main__":
    main()
