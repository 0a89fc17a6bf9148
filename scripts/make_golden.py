"""Make the golden reference files the analyses are tested against, with xprof.

    python scripts/make_golden.py [--step-counts]

For every bundled sample (and a synthetic GPU capture from tests/xspace_builder.py) this
runs xprof's converters, the engine behind TensorBoard's Profile tab, and writes each tool's
JSON to tests/golden/<name>/<tool>.json. xprof writes cache files next to the capture it
reads, so it only ever sees copies in a temporary directory. Needs the dev extra (xprof).
"""

from __future__ import annotations

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


def run_tools(xplane: pathlib.Path, out_dir: pathlib.Path, tools=TOOLS) -> None:
    from xprof.convert import raw_to_tool_data as r

    with tempfile.TemporaryDirectory(prefix="tfprof_golden_") as tmp:
        copy = pathlib.Path(tmp) / xplane.name
        shutil.copy2(xplane, copy)
        out_dir.mkdir(parents=True, exist_ok=True)
        for tool in tools:
            data, _ = r.xspace_to_tool_data([str(copy)], tool, {})
            text = data.decode() if isinstance(data, bytes) else data
            parsed = json.loads(text)  # validate, and store it stably formatted
            (out_dir / f"{tool}.json").write_text(json.dumps(parsed, indent=1, sort_keys=True))
    print(f"{out_dir.relative_to(ROOT)}: {', '.join(tools)}")


def main() -> None:
    for sample in ("keras_fit", "custom_loop", "input_bound"):
        (xplane,) = sorted((ROOT / "sample_profiles" / sample).rglob("*.xplane.pb"))
        run_tools(xplane, GOLDEN / sample)
    sys.path.insert(0, str(ROOT / "tests"))
    from xspace_builder import SYNTHETIC_GPU_ARGS, gpu_capture

    with tempfile.TemporaryDirectory() as tmp:
        path = gpu_capture(**SYNTHETIC_GPU_ARGS).write(pathlib.Path(tmp) / "gpu.xplane.pb")
        run_tools(path, GOLDEN / "synthetic_gpu")
    make_step_counts()


def make_step_counts() -> None:
    """Overviews of CPU captures with 5 and 6 steps: which steps xprof averages over."""
    sys.path.insert(0, str(ROOT / "tests"))
    from xspace_builder import cpu_steps_capture

    for n in (5, 6):
        with tempfile.TemporaryDirectory() as tmp:
            path = cpu_steps_capture(n).write(pathlib.Path(tmp) / "cpu.xplane.pb")
            run_tools(path, GOLDEN / f"steps_{n}", tools=("overview_page",))


if __name__ == "__main__":
    if sys.argv[1:] == ["--step-counts"]:  # only the step-count captures
        make_step_counts()
    else:
        main()
