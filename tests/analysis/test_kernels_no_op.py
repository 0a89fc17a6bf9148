"""Kernel time no op accounts for (issue 36, invariant 'figures_agree'), on the real JAX
MI300X captures: ROCm runs the inputs' copies as kernels (``__amd_rocclr_copyBuffer.kd``)
on a copy stream with no HLO op, and a launch can lose its annotation. XProf's kernel_stats
lists those launches; its framework_op_stats counts their time as device IDLE (so do ours).
So the kernel stats' total is the op stats' device op time plus that time: the kernel table
says how much of each row is in no op (``no_op_time_us``), and the view says why its total
is more than the op stats'.
"""

from __future__ import annotations

import functools

import pytest
from conftest import ROOT
from golden_tables import data_table, golden

import tfprof_widgets as tw

AMD = ("jax08_attention", "jax08_conv", "jax08_elementwise", "jax08_gemm")


@functools.cache
def _run(name: str):
    return tw.load(ROOT / "tests" / "data" / "xplane_amd_jax" / f"{name}.xplane.pb", progress=False)


def _device_op_us(ops) -> float:
    dev = ops[(ops["host_or_device"] == "Device") & (ops["type"] != "IDLE")]
    return float(dev["total_self_time_us"].sum())


@pytest.mark.parametrize("name", AMD)
def test_kernel_time_is_device_op_time_plus_the_launches_of_no_op(name):
    run = _run(name)
    k = run.kernels
    total, no_op = float(k["total_time_us"].sum()), float(k["no_op_time_us"].sum())
    assert no_op > 0
    assert total - no_op == pytest.approx(_device_op_us(run.ops), rel=1e-9)
    # XProf's own two tables differ by the same time: its kernel_stats total is ours, its
    # op stats' device op time (IDLE left out) ours too.
    xk = data_table(golden(name, "kernel_stats"))
    xo = data_table(golden(name, "framework_op_stats")[0])
    xdev = xo[(xo["host_or_device"] == "Device") & (xo["type"] != "IDLE")]
    assert float(xk["total_duration_us"].sum()) == pytest.approx(total, abs=0.01)
    assert float(xdev["total_self_time"].sum()) == pytest.approx(total - no_op, abs=0.01)


def test_gemm_copy_kernels_on_the_copy_stream_are_the_no_op_time():
    """jax08_gemm: 24 copyBuffer launches in one row (as XProf's kernel_stats has them);
    the 12 on Stream #16 are HLO copy.1's (op stats: 12 launches, 27.64 µs), the 12 on the
    copy stream Stream #17 (60.24 µs) are no op's."""
    run = _run("jax08_gemm")
    k = run.kernels.set_index("kernel_name")
    row = k.loc["__amd_rocclr_copyBuffer.kd"]
    assert row["occurrences"] == 24 and row["total_time_us"] == pytest.approx(87.88)
    assert row["no_op_time_us"] == pytest.approx(60.24)
    ev = run.events
    stream17 = ev[(ev["line"] == "Stream #17(Kernel)")]
    assert float(stream17["dur_us"].sum()) == pytest.approx(60.24)
    assert (k.drop(index="__amd_rocclr_copyBuffer.kd")["no_op_time_us"] == 0).all()
    copy = run.ops[run.ops["operation"] == "copy.1"].iloc[0]
    assert copy["occurrences"] == 12 and copy["total_self_time_us"] == pytest.approx(27.64)


def test_kernels_view_says_why_its_total_is_more_than_the_op_stats():
    run = _run("jax08_gemm")
    view = tw.views.kernel_stats(run)
    text = view.text()
    assert "60.2 µs of the 3,475.5 µs of kernel time ran in launches no op accounts for" in text
    assert "device IDLE" in text and "3,415.2 µs" in text
    cols = {c.name: c for c in view.table().columns}
    assert not cols["no_op_time_us"].hidden and "µs" in cols["no_op_time_us"].label


def test_no_note_where_every_launch_is_an_op_s():
    run = tw.load(ROOT / "tests" / "data" / "xplane_h100_jax" / "jax_cnn_nographs.xplane.pb",
                  progress=False)  # fmt: skip
    assert (run.kernels["no_op_time_us"] == 0).all()
    view = tw.views.kernel_stats(run)
    assert "no op accounts for" not in view.text()
    assert {c.name: c for c in view.table().columns}["no_op_time_us"].hidden
