"""Make the bundled JAX sample with JAX's own profiler (CPU), through tfprof_widgets.capture.

Run from the repository root:  python sample_profiles/make_jax_sample.py

``sample_profiles/jax_cnn_cpu/`` is a logdir holding one capture of six training steps of a
small conv net (conv → relu → mean-pool → dense, SGD on its gradient), each step marked with
``jax.profiler.StepTraceAnnotation('train', step_num=i)``, the XLA programs' HLO protos in
the ``/host:metadata`` plane. Only the ``.xplane.pb`` is kept (JAX also writes a Chrome trace
of the same events). Runs in its own process, with TensorFlow never imported, so the 'auto'
backend is JAX's; the old sample is replaced only after the new capture succeeded.
"""

from __future__ import annotations

import os
import pathlib
import shutil
import subprocess
import sys
import tempfile

HERE = pathlib.Path(__file__).resolve().parent
NAME = "jax_cnn_cpu"

PROGRAM = """
import os, sys
os.environ["JAX_PLATFORMS"] = "cpu"
import jax, jax.numpy as jnp
import tfprof_widgets as tw

def forward(params, x):
    w, d = params
    dims = ("NHWC", "HWIO", "NHWC")
    y = jax.lax.conv_general_dilated(x, w, (1, 1), "SAME", dimension_numbers=dims)
    y = jax.nn.relu(y).mean(axis=(1, 2))
    return y @ d

def loss(params, x, labels):
    return jnp.mean((forward(params, x) - labels) ** 2)

@jax.jit
def train_step(params, x, labels):
    grads = jax.grad(loss)(params, x, labels)
    return jax.tree_util.tree_map(lambda p, g: p - 0.01 * g, params, grads)

key = jax.random.PRNGKey(0)
k1, k2, k3 = jax.random.split(key, 3)
params = (jax.random.normal(k1, (3, 3, 3, 16)) * 0.1, jax.random.normal(k2, (16, 10)) * 0.1)
x = jax.random.normal(k3, (32, 32, 32, 3))
labels = jnp.zeros((32, 10))
params = train_step(params, x, labels)  # compiled before the capture
with tw.capture(sys.argv[1], backend="jax", load=False) as cap:
    for i in range(6):
        with jax.profiler.StepTraceAnnotation("train", step_num=i):
            params = train_step(params, x, labels)
            jax.block_until_ready(params)
assert "tensorflow" not in sys.modules
print(cap.run_dir)
"""


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="jax_sample_") as tmp:
        logdir = pathlib.Path(tmp) / NAME
        done = subprocess.run(
            [sys.executable, "-c", PROGRAM, str(logdir)],
            check=True,
            capture_output=True,
            text=True,
            env={**os.environ, "PYTHONPATH": str(HERE.parent)},
        )
        run_dir = pathlib.Path(done.stdout.strip().splitlines()[-1])
        for f in run_dir.iterdir():
            if not f.name.endswith(".xplane.pb"):
                f.unlink()
        target = HERE / NAME
        shutil.rmtree(target, ignore_errors=True)
        shutil.copytree(logdir, target)
    print(f"wrote {target}")


if __name__ == "__main__":
    main()
