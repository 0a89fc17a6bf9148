"""The same input gives the same bytes (issue 42 item 2): every analysis table, summary and
view (text, static HTML, JSON payload) of a TensorFlow, a JAX H100, an AMD, a PyTorch, a TPU
and a two-host capture hashes the same in two fresh processes with different hash seeds (set
iteration, hash order, thread timing would show here)."""

from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
CAPTURES = (
    "bert_8gpu_multi_worker.xplane.pb",
    "xplane_h100_jax/jax_cnn_graphs.xplane.pb",
    "xplane_amd_jax/jax08_conv.xplane.pb",
    "chrome/torch_transformer_h100.pt.trace.json.gz",
    "tpu_hlo/synthetic_tpu_capture",
    "sample_profiles/gpu_shaped",
)


def _hashes(seed: str) -> dict:
    env = dict(os.environ, PYTHONHASHSEED=seed, PYTHONPATH=str(ROOT))
    out = subprocess.run(
        [sys.executable, str(ROOT / "tests" / "support" / "output_hashes.py"), *CAPTURES],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=True,
    )
    return json.loads(out.stdout)


def test_two_fresh_processes_give_the_same_bytes():
    a, b = _hashes("1"), _hashes("2")
    assert set(a) == set(CAPTURES)
    for capture in CAPTURES:
        assert len(a[capture]) > 20  # the tables and views were all hashed
        differ = sorted(k for k in a[capture] if a[capture][k] != b[capture].get(k))
        assert not differ, f"{capture}: differs between two runs: {differ}"
