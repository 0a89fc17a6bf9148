"""A pod's memory breakdown names the dtype of its row without a tensor (the stack, memory
nobody annotated) as its host's run does (issue 42 item 5): blank on a JAX capture, where it
read TensorFlow's "INVALID"; XProf's "INVALID" still on TensorFlow."""

from __future__ import annotations

import shutil
import warnings

import pytest
from conftest import ROOT, SAMPLES

import tfprof_widgets as tw

JAX_H100 = ROOT / "tests" / "data" / "xplane_h100_jax" / "jax_cnn_graphs.xplane.pb"


def _both(src, tmp_path):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tw.convert(src, tmp_path / "ds", progress=False, workers=1)
        run = tw.load(src, progress=False)
    return run, tw.open(tmp_path / "ds")


def _rows(t):
    return list(
        zip(t["region_type"].astype(str), t["data_type"].astype(str), t["allocation_bytes"])
    )


def test_a_jax_pods_stack_row_has_the_runs_dtype(tmp_path):
    src = tmp_path / "capture"
    src.mkdir()
    shutil.copy(JAX_H100, src / JAX_H100.name)  # the file alone: its folder holds two hosts
    run, pod = _both(src, tmp_path)
    with pod:
        got = pod.memory_breakdown
    want = run.memory_breakdown
    assert len(want) and "persist/dynamic" in set(want["region_type"].astype(str))
    assert _rows(got) == _rows(want)
    assert "INVALID" not in set(got["data_type"].astype(str))


@pytest.mark.parametrize("sample", ["gpu_shaped"])
def test_a_tensorflow_pod_keeps_xprofs_invalid(tmp_path, sample):
    run, pod = _both(SAMPLES / sample, tmp_path)
    with pod:
        got = pod.memory_breakdown
    assert _rows(got) == _rows(run.memory_breakdown)
    assert "INVALID" in set(got["data_type"].astype(str))
