"""Issue 29 item 8, memory: the dtype column names XLA's PrimitiveType on an XLA capture
(PJRT's allocations record 0, "not recorded", which main showed as TF's "INVALID" in every
row), TensorFlow's DataType otherwise; the header's fragmentation is the number the plot
marks at the peak, with the range of the plotted line beside it."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from conftest import ROOT

import tfprof_widgets as tw
from tfprof_widgets.analysis.memory import _data_types, memory_breakdown
from tfprof_widgets.frameworks.tensorflow.rules import TensorFlow
from tfprof_widgets.frameworks.xla.rules import XLA
from tfprof_widgets.views.memory_view import fragmentation_text

JAX = ROOT / "tests" / "data" / "xplane_h100_jax" / "jax_cnn_nographs.xplane.pb"
BERT = ROOT / "tests" / "data" / "bert_8gpu_multi_worker.xplane.pb"


@pytest.fixture(scope="module")
def jax():
    return tw.load(JAX)


def test_xla_names_primitive_types():
    names = XLA().memory_data_type_names()
    assert (names[11], names[16], names[1], names[0]) == ("f32", "bf16", "pred", "")
    got = _data_types(np.array([11, 16, 0, 11, 99]), names)
    assert list(pd.Series(got).astype(object).where(pd.notna(got), "—")) == [
        "f32",
        "bf16",
        "—",
        "f32",
        "99",
    ]
    # TensorFlow's rule is today's: DataType as XProf names it.
    assert TensorFlow().memory_data_type_names() is None
    assert list(_data_types(np.array([0, 1, 19]))) == ["INVALID", "float", "half"]


def test_jax_capture_dtype_not_invalid(jax):
    assert jax.framework.primary.name == "xla"
    assert jax.memory["data_type"].isna().all()  # 0 in every event: not recorded
    b = memory_breakdown(jax)
    assert not (b["data_type"].astype(str) == "INVALID").any()
    view = tw.views.memory_timeline(jax)
    cols = {c.name: c for c in view.breakdown(view.allocator, view.host).columns}
    assert cols["data_type"].hidden  # nothing to show: the column is left out


def test_tf_capture_keeps_xprofs_names():
    run = tw.load(BERT)
    assert {"half", "float", "INVALID"} <= set(run.memory["data_type"].dropna().astype(str))


def test_fragmentation_header_is_the_plotted_number(jax):
    view = tw.views.memory_timeline(jax)
    for allocator in view.allocators:
        s = view._summary_row(allocator, "vm")
        said = fragmentation_text(s["peak_fragmentation"])
        fig, _, _ = view.figure(allocator, "vm")
        (mark,) = [t for t in fig.data if t.uid == "mem-frag-peak"]
        assert mark.y[0] == pytest.approx(s["peak_fragmentation"])
        assert mark.x[0] == pytest.approx(s["peak_time_us"] / 1e3)
        assert mark.text[0].endswith(said)
        assert f"fragmentation {said}" in view.header(allocator, "vm")
    # The host allocator's line swings 0-33 % while the peak's value is 0: the header says
    # both (main said "0.0 %" beside a plot at a third).
    header = view.header("xla_gpu_host_bfc", "vm")
    assert "fragmentation 0 %; over the capture 0 % to 33.3 %" in header
    assert fragmentation_text(6.2e-5) == "< 0.1 %" and fragmentation_text(0.125) == "12.5 %"
