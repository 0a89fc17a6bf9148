"""Make tests/data/jax_cpu/jax_cnn_cpu_10steps.xplane.pb: JAX's own profiler on CPU, through
tfprof_widgets.capture (what ``%%tfprof --backend jax`` runs), around ten steps of a jitted
conv-net train step (two NHWC convs, relu, mean pool, dense; SGD), each step in
``jax.profiler.StepTraceAnnotation("train", step_num=i)``. The program is NOT compiled
before the capture, so step 0 holds XLA's compile; XLA:CPU runs the convolutions on its
intra-op thread pool (other threads than the Python one). Only the .xplane.pb is kept.

Run from the repository root:  python tests/support/make_jax_cpu_capture.py [OUT_DIR]
               python tests/support/make_jax_cpu_capture.py --golden  (xprof's tools of the file)

``--golden`` writes xprof's overview_page and framework_op_stats of the bundled file to
tests/golden/jax_cpu_10steps/, run on a private copy (``use_saved_result: False``).
"""

from __future__ import annotations

import os
import pathlib
import shutil
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parents[2]
TARGET = ROOT / "tests" / "data" / "jax_cpu" / "jax_cnn_cpu_10steps.xplane.pb"

PROGRAM = """
import os, sys
os.environ["JAX_PLATFORMS"] = "cpu"
import jax, jax.numpy as jnp
import tfprof_widgets as tw

def forward(params, x):
    w1, w2, d = params
    dims = ("NHWC", "HWIO", "NHWC")
    y = jax.nn.relu(jax.lax.conv_general_dilated(x, w1, (1, 1), "SAME", dimension_numbers=dims))
    y = jax.nn.relu(jax.lax.conv_general_dilated(y, w2, (2, 2), "SAME", dimension_numbers=dims))
    return y.mean(axis=(1, 2)) @ d

def loss(params, x, labels):
    return jnp.mean((forward(params, x) - labels) ** 2)

@jax.jit
def train_step(params, x, labels):
    grads = jax.grad(loss)(params, x, labels)
    return jax.tree_util.tree_map(lambda p, g: p - 0.01 * g, params, grads)

k = jax.random.split(jax.random.PRNGKey(0), 4)
params = (jax.random.normal(k[0], (3, 3, 3, 32)) * 0.1,
          jax.random.normal(k[1], (3, 3, 32, 32)) * 0.1,
          jax.random.normal(k[2], (32, 10)) * 0.1)
x = jax.random.normal(k[3], (64, 32, 32, 3))
labels = jnp.zeros((64, 10))
jax.block_until_ready((params, x, labels))
with tw.capture(sys.argv[1], backend="jax", load=False) as cap:
    for i in range(10):
        with jax.profiler.StepTraceAnnotation("train", step_num=i):
            params = train_step(params, x, labels)
            jax.block_until_ready(params)
assert "tensorflow" not in sys.modules
print(cap.run_dir)
"""


GOLDEN = ROOT / "tests" / "golden" / "jax_cpu_10steps"


def golden() -> None:
    """xprof's tools of the bundled capture, as JSON files."""
    import json

    from xprof.convert import raw_to_tool_data as r

    with tempfile.TemporaryDirectory(prefix="jax_cpu_golden_") as tmp:
        run = pathlib.Path(tmp) / "plugins" / "profile" / "run"
        run.mkdir(parents=True)
        shutil.copyfile(TARGET, run / "vm.xplane.pb")
        GOLDEN.mkdir(parents=True, exist_ok=True)
        for tool in ("overview_page", "framework_op_stats"):
            data, _ = r.xspace_to_tool_data(
                [str(run / "vm.xplane.pb")], tool, {"use_saved_result": False}
            )
            out = json.loads(data)
            (GOLDEN / f"{tool}.json").write_text(json.dumps(out, indent=0, sort_keys=True))
    print(f"wrote {GOLDEN}")


def main() -> None:
    if sys.argv[1:] == ["--golden"]:
        golden()
        return
    target = pathlib.Path(sys.argv[1]) / TARGET.name if len(sys.argv) > 1 else TARGET
    with tempfile.TemporaryDirectory(prefix="jax_cpu_capture_") as tmp:
        done = subprocess.run(
            [sys.executable, "-c", PROGRAM, str(pathlib.Path(tmp) / "logs")],
            check=True,
            capture_output=True,
            text=True,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
        )
        run_dir = pathlib.Path(done.stdout.strip().splitlines()[-1])
        (pb,) = run_dir.glob("*.xplane.pb")
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(pb, target)
    print(f"wrote {target} ({target.stat().st_size:,} bytes)")


if __name__ == "__main__":
    main()
