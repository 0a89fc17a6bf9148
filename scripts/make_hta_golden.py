"""Reference figures of the PyTorch (Kineto) captures, from the tools that made them known:
HolisticTraceAnalysis (HTA)'s temporal and GPU kernel breakdowns (as HTA reads a trace by
default, and with its rounding of fractional µs off: ``hta_ns``), and torch-tb-profiler's
step-time breakdown, operator and kernel views and peak memory, written to
``tests/golden/kineto/<trace>.json`` for ``tests/pytorch/test_pytorch.py``; with ``--steps``, HTA's
temporal breakdown of each ``ProfilerStep#N`` window instead (:func:`hta_step_figures`), to
``tests/golden/kineto_steps/<trace>.json`` for ``tests/pytorch/test_pytorch_steps_breakdown.py``.

    python scripts/make_hta_golden.py [--tb-plugin DIR] [--steps] [TRACE ...]

Default traces: every file in ``../shared/captures/kineto/``. HTA reads a trace directory
(and may write beside what it reads), so each trace is copied into a fresh temporary
directory first and HTA is pointed there. torch-tb-profiler (``pip install
torch-tb-profiler==0.4.3``, or its unpacked wheel given as ``--tb-plugin DIR``; it needs
tensorboard, not torch) is optional: without it the file keeps no step figures. Its map of
Kineto categories is given ``cuda_runtime`` -> Runtime (as kineto's later plugin has it) and
``cuda_driver`` -> Runtime (cuBLAS's launches in recent PyTorch), the
trace's GPU user annotations are left out (0.4.3 takes their ``ProfilerStep#N`` copies for
more steps), and a DataLoader batch recorded as a ``user_annotation`` is handed to it as an
operator (0.4.3 drops user annotations): the four rules where ours differ from 0.4.3's on
purpose (see ``tfprof_widgets/frameworks/pytorch/steps.py``).
"""

from __future__ import annotations

import argparse
import gzip
import json
import logging
import os
import pathlib
import shutil
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parents[1]
CAPTURES = ROOT.parent / "shared" / "captures" / "kineto"
OUT = ROOT / "tests" / "golden" / "kineto"
OUT_STEPS = ROOT / "tests" / "golden" / "kineto_steps"
_ROLES = ("kernel", "memcpy", "memset", "communication", "runtime", "dataloader", "cpu_exec")


def stem(path: pathlib.Path) -> str:
    name = path.name
    for suffix in (".gz", ".json", ".trace", ".pt"):
        name = name.removesuffix(suffix)
    return name


def hta_figures(path: pathlib.Path, ns_rounding: bool = True) -> dict:
    """HTA's temporal and kernel-type breakdowns of one trace (on a copy of it). HTA reads a
    trace of fractional µs with every start rounded up and every end rounded down to the µs,
    unless ``HTA_DISABLE_NS_ROUNDING=1`` (``ns_rounding=False``)."""
    from hta.trace_analysis import TraceAnalysis

    os.environ["HTA_DISABLE_NS_ROUNDING"] = "0" if ns_rounding else "1"

    with tempfile.TemporaryDirectory() as tmp:
        copy = pathlib.Path(tmp) / ("rank0." + path.name)
        shutil.copyfile(path, copy)
        before = set(pathlib.Path(tmp).iterdir())
        analysis = TraceAnalysis(trace_files={0: str(copy)}, trace_dir=tmp)
        temporal = analysis.get_temporal_breakdown(visualize=False)
        kinds, _ = analysis.get_gpu_kernel_breakdown(visualize=False, include_memory_kernels=True)
        written = sorted(p.name for p in set(pathlib.Path(tmp).iterdir()) - before)
    row = temporal.iloc[0]
    return {
        "hta_wrote": written,
        "temporal_breakdown": {
            "idle_time_us": float(row["idle_time(us)"]),
            "compute_time_us": float(row["compute_time(us)"]),
            "non_compute_time_us": float(row["non_compute_time(us)"]),
            "kernel_time_us": float(row["kernel_time(us)"]),
            "idle_time_pctg": float(row["idle_time_pctg"]),
            "compute_time_pctg": float(row["compute_time_pctg"]),
            "non_compute_time_pctg": float(row["non_compute_time_pctg"]),
        },
        "kernel_type_breakdown": {
            str(r.kernel_type): {"sum_us": float(r.sum), "percentage": float(r.percentage)}
            for r in kinds.itertuples()
        },
    }


def _cut(trace_df, start: float, end: float):
    """The device rows (HTA: ``stream != -1``) of HTA's trace DataFrame clipped to
    [start, end): each interval cut to the window, those left empty dropped; what
    ``tfprof_widgets.analysis.gpu_time.temporal_breakdown_steps`` does to our events."""
    dev = trace_df[trace_df["stream"].ne(-1)].copy()
    ts = dev["ts"].clip(lower=start)
    te = (dev["ts"] + dev["dur"]).clip(upper=end)
    dev["ts"], dev["dur"] = ts, te - ts
    return dev[dev["dur"] > 0]


def hta_step_figures(path: pathlib.Path, ns_rounding: bool = True) -> dict:
    """HTA's own temporal breakdown (``BreakdownAnalysis.get_temporal_breakdown``, run as it is
    on a Trace whose rank-0 DataFrame is cut to the window) of each host ``ProfilerStep#N``
    window [ts, ts + dur] of one trace (on a copy of it). HTA is told to keep the last step's
    kernels (``include_last_profiler_step=True``): each step is judged on its own window."""
    import types

    from hta.analyzers.breakdown_analysis import BreakdownAnalysis
    from hta.trace_analysis import TraceAnalysis

    os.environ["HTA_DISABLE_NS_ROUNDING"] = "0" if ns_rounding else "1"
    with tempfile.TemporaryDirectory() as tmp:
        copy = pathlib.Path(tmp) / ("rank0." + path.name)
        shutil.copyfile(path, copy)
        analysis = TraceAnalysis(
            trace_files={0: str(copy)}, trace_dir=tmp, include_last_profiler_step=True
        )
    t = analysis.t
    df = t.get_trace(0)
    names = t.symbol_table.get_sym_table()
    name = df["name"].map(lambda i: names[i])
    markers = df[name.str.match(r"^ProfilerStep#\d+$") & df["stream"].eq(-1)]
    # A step's window is its longest host marker (some traces repeat it on another thread).
    markers = markers.sort_values("dur", ascending=False).drop_duplicates("name")
    steps = []
    for row in markers.sort_values("ts").itertuples():
        start, end = float(row.ts), float(row.ts + row.dur)
        cut = _cut(df, start, end)
        step = {"step": int(names[row.name].split("#")[1]), "ts": start, "dur": float(row.dur)}
        if len(cut):
            one = types.SimpleNamespace(traces={0: cut}, symbol_table=t.symbol_table)
            r = BreakdownAnalysis.get_temporal_breakdown(one, visualize=False).iloc[0]
            step |= {
                "idle_time_us": float(r["idle_time(us)"]),
                "compute_time_us": float(r["compute_time(us)"]),
                "non_compute_time_us": float(r["non_compute_time(us)"]),
                "kernel_time_us": float(r["kernel_time(us)"]),
                "idle_time_pctg": float(r["idle_time_pctg"]),
                "compute_time_pctg": float(r["compute_time_pctg"]),
                "non_compute_time_pctg": float(r["non_compute_time_pctg"]),
            }
        steps.append(step)
    return {"steps": steps}


def tb_plugin_figures(path: pathlib.Path) -> dict | None:
    """torch-tb-profiler's steps and their role costs (µs), or None without it."""
    try:
        from torch_tb_profiler.profiler import trace
        from torch_tb_profiler.profiler.data import RunProfileData
    except ImportError:
        return None
    trace.EventTypeMap.setdefault("cuda_runtime", trace.EventTypes.RUNTIME)
    trace.EventTypeMap.setdefault("cuda_driver", trace.EventTypes.RUNTIME)
    with gzip.open(path) if path.suffix == ".gz" else open(path, "rb") as f:
        data = json.load(f)
    events = []
    for e in data["traceEvents"]:
        if e.get("cat") == "gpu_user_annotation":
            continue
        name = str(e.get("name", ""))
        if e.get("cat") == "user_annotation" and name.startswith("enumerate(DataLoader)#"):
            e = {**e, "cat": "cpu_op"}
        events.append(e)
    data["traceEvents"] = events
    profile = RunProfileData.from_json("worker", "span", data)
    steps = []
    for name, costs in zip(profile.steps_names, profile.steps_costs):
        c = costs.costs
        steps.append(
            {"step": int(name), **{r: float(c[i]) for i, r in enumerate(_ROLES)}}
            | {"other": float(c[len(_ROLES)]), "total": float(c[len(_ROLES) + 1])}
        )
    ops = {
        a.name: {
            "calls": a.calls,
            "host_total": float(a.host_duration),
            "host_self": float(a.self_host_duration),
            "device_total": float(a.device_duration),
            "device_self": float(a.self_device_duration),
        }
        for a in profile.op_list_groupby_name
    }
    by_shape = len(profile.op_list_groupby_name_input)
    kernels: dict = {}
    for k in profile.kernel_list_groupby_name_op or []:
        row = kernels.setdefault(f"{k.name}###{k.op_name}", [0, 0.0, 0.0, 0.0, 0])
        row[0] += k.calls
        row[1] += float(k.total_duration)
        row[2] += float(k.blocks_per_sm)  # duration-weighted sums
        row[3] += float(k.occupancy)
        row[4] += 1  # launch configurations
    kernels = {
        key: {"calls": c, "total": t, "blocks_x_dur": b, "occupancy_x_dur": o, "configs": g}
        for key, (c, t, b, o, g) in kernels.items()
    }
    memory = {}
    snapshot = getattr(profile, "memory_snapshot", None)
    if snapshot is not None:
        peaks = snapshot.get_peak_memory()
        devices = {(r.device_type, r.device_id) for r in snapshot.memory_records}
        for dtype, dev in devices:
            name = "CPU" if int(dtype) == 0 else f"GPU:{dev}"
            records = [
                r for r in snapshot.memory_records if (r.device_type, r.device_id) == (dtype, dev)
            ]
            peak = peaks.get((dtype, dev))  # none without 'Total Allocated' (torch 1.9)
            memory[name] = {"peak_allocated": None if peak is None else int(peak)}
            memory[name]["records"] = len(records)
    gpu = profile.gpu_metrics_parser
    metrics = {
        f"/device:GPU:{g}": {
            "gpu_utilization": gpu.gpu_utilization[g],
            "est_sm_efficiency": gpu.avg_approximated_sm_efficiency_per_device[g],
            "est_achieved_occupancy": gpu.avg_occupancy_per_device[g],
        }
        for g in sorted(gpu.gpu_ids)
    }
    return {
        "gpu_metrics": metrics,
        "version": _version(),
        "steps": steps,
        "recommendations": profile.recommendations,
        "operators": ops,
        "operator_shape_groups": by_shape,
        "memory": memory,
        "kernels": kernels,
    }


def _version() -> str:
    import torch_tb_profiler

    return str(getattr(torch_tb_profiler, "__version__", "?"))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("traces", nargs="*", type=pathlib.Path)
    parser.add_argument("--tb-plugin", type=pathlib.Path, help="unpacked torch-tb-profiler")
    parser.add_argument("--steps", action="store_true", help="HTA per step window only")
    args = parser.parse_args(argv)
    if args.tb_plugin:
        sys.path.insert(0, str(args.tb_plugin))
    logging.disable(logging.WARNING)
    traces = args.traces or sorted(p for p in CAPTURES.iterdir() if p.is_file())
    if args.steps:
        return _write_steps(traces)
    OUT.mkdir(parents=True, exist_ok=True)
    for path in traces:
        import hta

        figures = {"trace": path.name, "hta_version": getattr(hta, "__version__", "0.5.0")}
        figures |= hta_figures(path)
        figures["hta_ns"] = hta_figures(path, ns_rounding=False)
        tb = tb_plugin_figures(path)
        if tb is not None:
            figures["tb_plugin"] = tb
        out = OUT / f"{stem(path)}.json"
        out.write_text(json.dumps(figures, indent=1, sort_keys=True) + "\n")
        print(out.relative_to(ROOT))
    return 0


def _write_steps(traces: list[pathlib.Path]) -> int:
    import hta

    OUT_STEPS.mkdir(parents=True, exist_ok=True)
    for path in traces:
        figures = {"trace": path.name, "hta_version": getattr(hta, "__version__", "0.5.0")}
        figures["hta_ns"] = hta_step_figures(path, ns_rounding=False)
        figures["hta_default"] = hta_step_figures(path)
        out = OUT_STEPS / f"{stem(path)}.json"
        out.write_text(json.dumps(figures, indent=1, sort_keys=True) + "\n")
        print(out.relative_to(ROOT))
    return 0


if __name__ == "__main__":
    sys.exit(main())
