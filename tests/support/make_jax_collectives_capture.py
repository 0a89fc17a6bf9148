"""Make tests/data/jax_cpu/jax_collectives_cpu4.xplane.pb: JAX's own profiler on four XLA:CPU
devices (``--xla_force_host_platform_device_count=4``) around four steps of a jitted
``shard_map`` body that runs each of XLA's collectives once: ``psum`` (all-reduce),
``all_gather``, ``psum_scatter`` (reduce-scatter), ``ppermute`` (collective-permute, a ring)
and ``all_to_all``, on f32[4096,64] shards, each step in
``jax.profiler.StepTraceAnnotation("train", step_num=i)``. The program is compiled before
the capture. XLA:CPU writes no event per instruction, so the capture's collectives are in its
programs' HLO (``/host:metadata``): their opcodes, replica groups and shapes, all real.

Run from the repository root:  python tests/support/make_jax_collectives_capture.py [OUT_DIR]
"""

from __future__ import annotations

import os
import pathlib
import shutil
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parents[2]
TARGET = ROOT / "tests" / "data" / "jax_cpu" / "jax_collectives_cpu4.xplane.pb"

PROGRAM = """
import os, sys
os.environ["JAX_PLATFORMS"] = "cpu"
os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=4"
import jax, jax.numpy as jnp
from jax.sharding import Mesh, PartitionSpec as P

mesh = Mesh(jax.devices(), ("d",))

def body(x):
    s = jax.lax.psum(x, "d")
    g = jax.lax.all_gather(x, "d", tiled=True)
    r = jax.lax.psum_scatter(g, "d", tiled=True)
    p = jax.lax.ppermute(x, "d", [(i, (i + 1) % 4) for i in range(4)])
    a = jax.lax.all_to_all(x, "d", 0, 0, tiled=True)
    return s + r + p + a + g[: x.shape[0]]

f = jax.jit(jax.shard_map(body, mesh=mesh, in_specs=P("d"), out_specs=P("d")))
x = jnp.arange(4 * 4096 * 64, dtype=jnp.float32).reshape(4 * 4096, 64)
f(x).block_until_ready()
jax.profiler.start_trace(sys.argv[1])
for i in range(4):
    with jax.profiler.StepTraceAnnotation("train", step_num=i):
        x = f(x) * 0.25
        x.block_until_ready()
jax.profiler.stop_trace()
"""


def main(out_dir: pathlib.Path) -> pathlib.Path:
    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ, PYTHONPATH=str(ROOT))
        subprocess.run([sys.executable, "-c", PROGRAM, tmp], check=True, env=env)
        (found,) = pathlib.Path(tmp).rglob("*.xplane.pb")
        out_dir.mkdir(parents=True, exist_ok=True)
        target = out_dir / TARGET.name
        shutil.copyfile(found, target)
    return target


if __name__ == "__main__":
    print(main(pathlib.Path(sys.argv[1]) if len(sys.argv) > 1 else TARGET.parent))
