"""Make the golden reference files the analyses are tested against, with xprof.

    python scripts/make_golden.py [--step-counts | --xla | --xla-roofline | --tpu-rates |
                                   --only NAME ...]

For every bundled sample, the real 8-GPU capture in tests/data, the XLA captures in tests/data
(JAX on an H100 and on AMD MI300X: also hlo_stats, roofline_model and op_profile), the
TensorFlow-with-XLA CPU capture in tests/data/tf_xla_cpu, and the
synthetic GPU and TPU captures of tests/support/xspace_builder.py, tests/support/tpu_builder.py
and tests/support/tpu_steps_builder.py, this runs xprof's converters (the engine behind
TensorBoard's Profile tab) and writes each tool's JSON to
tests/golden/<name>/<tool>.json (.json.gz above 1 MB). xprof writes cache files next to
the capture it reads, so every call sees its own copy in a temporary directory, and
``use_saved_result`` is off so nothing cached is reused. Needs the dev extra (xprof).
"""

from __future__ import annotations

import gzip
import json
import pathlib
import shutil
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parents[1]
GOLDEN = ROOT / "tests" / "golden"
TOOLS = (
    "overview_page",
    "input_pipeline_analyzer",
    "framework_op_stats",
    "memory_profile",
    "pod_viewer",
    "kernel_stats",
)
BERT = ROOT / "tests" / "data" / "bert_8gpu_multi_worker.xplane.pb"
# TensorFlow with XLA (Keras 3 fit, jit_compile=True) on CPU: scripts/make_tf_xla_capture.py.
TF_XLA = ROOT / "tests" / "data" / "tf_xla_cpu" / "keras_fit_jit.xplane.pb"
# XLA captures (JAX on an H100 with and without CUDA graphs, JAX 0.8 on AMD MI300X) and the
# tools that read their HLO programs.
XLA_CAPTURES = {
    "jax_cnn_nographs": ROOT / "tests" / "data" / "xplane_h100_jax" / "jax_cnn_nographs.xplane.pb",
    "jax_cnn_graphs": ROOT / "tests" / "data" / "xplane_h100_jax" / "jax_cnn_graphs.xplane.pb",
    **{
        f"jax08_{k}": ROOT / "tests" / "data" / "xplane_amd_jax" / f"jax08_{k}.xplane.pb"
        for k in ("attention", "conv", "elementwise", "gemm")
    },
}
XLA_TOOLS = (
    "overview_page",
    "framework_op_stats",
    "kernel_stats",
    "hlo_stats",
    "roofline_model",
    "op_profile",
)
GZIP_ABOVE = 1 << 20


def xprof_tool(xplane: pathlib.Path, tool: str):
    """One xprof tool's output for a capture, parsed, from a private copy of the file."""
    from xprof.convert import raw_to_tool_data as r

    with tempfile.TemporaryDirectory(prefix="tfprof_golden_") as tmp:
        copy = pathlib.Path(tmp) / xplane.name
        shutil.copy2(xplane, copy)
        data, _ = r.xspace_to_tool_data([str(copy)], tool, {"use_saved_result": False})
    text = data.decode() if isinstance(data, bytes) else data
    return json.loads(text)


def run_tools(xplane: pathlib.Path, out_dir: pathlib.Path, tools=TOOLS) -> None:
    out_dir.mkdir(parents=True, exist_ok=True)
    for tool in tools:
        text = json.dumps(xprof_tool(xplane, tool), indent=1, sort_keys=True)
        for old in out_dir.glob(f"{tool}.json*"):
            old.unlink()
        if len(text) > GZIP_ABOVE:
            (out_dir / f"{tool}.json.gz").write_bytes(gzip.compress(text.encode(), mtime=0))
        else:
            (out_dir / f"{tool}.json").write_text(text)
    print(f"{out_dir.relative_to(ROOT)}: {', '.join(tools)}")


def _builders():
    sys.path.insert(0, str(ROOT / "tests" / "support"))
    from tpu_builder import tpu_capture
    from tpu_steps_builder import tpu_feeds_capture, tpu_unmarked_capture
    from xspace_builder import SYNTHETIC_GPU_ARGS, cpu_steps_capture, gpu_capture

    return {
        "synthetic_gpu": lambda: gpu_capture(**SYNTHETIC_GPU_ARGS),
        "synthetic_tpu": tpu_capture,
        # TPU steps with infeed, outfeed and host-send ops and a split step (issue 27).
        "synthetic_tpu_feeds": tpu_feeds_capture,
        "synthetic_tpu_unmarked": tpu_unmarked_capture,  # no host step markers
        "steps_5": lambda: cpu_steps_capture(5),
        "steps_6": lambda: cpu_steps_capture(6),
    }


def goldens() -> dict:
    """name -> (a function giving the capture's path in a temp dir, tools)."""
    out = {}
    for sample in ("keras_fit", "custom_loop", "input_bound"):
        (xplane,) = sorted((ROOT / "sample_profiles" / sample).rglob("*.xplane.pb"))
        out[sample] = (lambda _tmp, x=xplane: x, TOOLS)
    # The JAX CPU sample: XLA's CPU work in the step breakdown (issue 27).
    (jax_cpu,) = sorted((ROOT / "sample_profiles" / "jax_cnn_cpu").rglob("*.xplane.pb"))
    out["jax_cnn_cpu"] = (lambda _tmp: jax_cpu, ("overview_page", "input_pipeline_analyzer"))
    out["bert_8gpu"] = (lambda _tmp: BERT, TOOLS)
    out["tf_xla_cpu"] = (lambda _tmp: TF_XLA, ("overview_page", "framework_op_stats", "hlo_stats"))
    for name, xplane in XLA_CAPTURES.items():
        out[name] = (lambda _tmp, x=xplane: x, XLA_TOOLS)
    for name, build in _builders().items():
        tools = ("overview_page",) if name.startswith("steps_") else TOOLS
        if name == "synthetic_tpu":  # XLA ops: HLO Stats too
            tools = (*TOOLS, "hlo_stats")
        if name in ("synthetic_tpu_feeds", "synthetic_tpu_unmarked"):  # TPU steps, verdicts
            tools = ("overview_page", "input_pipeline_analyzer")
        out[name] = (lambda tmp, b=build, n=name: b().write(tmp / f"{n}.xplane.pb"), tools)
    return out


def main(names: list[str]) -> None:
    every = goldens()
    for name in names or every:
        make, tools = every[name]
        with tempfile.TemporaryDirectory() as tmp:
            run_tools(make(pathlib.Path(tmp)), GOLDEN / name, tools)


if __name__ == "__main__":
    args = sys.argv[1:]
    if args == ["--step-counts"]:  # only the step-count captures
        main(["steps_5", "steps_6"])
    elif args == ["--xla"]:  # only the XLA captures
        main(list(XLA_CAPTURES))
    elif args == ["--xla-roofline"]:  # only the XLA captures' roofline and op profile
        for name, xplane in XLA_CAPTURES.items():
            run_tools(xplane, GOLDEN / name, ("roofline_model", "op_profile"))
    elif args == ["--tpu-rates"]:  # the TPU builder's HLO stats, roofline and op profile
        _builders()  # puts tests/ on the path
        from tpu_rates_builder import BUILDERS

        for name, build in BUILDERS.items():
            with tempfile.TemporaryDirectory() as tmp:
                tpu = build().write(pathlib.Path(tmp) / f"{name}.xplane.pb")
                run_tools(tpu, GOLDEN / name, ("hlo_stats", "roofline_model", "op_profile"))
    elif args[:1] == ["--only"]:
        main(args[1:])
    else:
        main([])
