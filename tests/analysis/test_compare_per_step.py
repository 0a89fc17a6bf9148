"""Issue 29 item 7: compare says per step what got faster or slower (totals differ with the
capture's length alone), and with no steps it says so in words and draws no step chart."""

from __future__ import annotations

import json

import numpy as np
import pytest
from conftest import ROOT, SAMPLES
from test_views import decode

import tfprof_widgets as tw

AMD = ROOT / "tests" / "data" / "xplane_amd_jax"


@pytest.fixture(scope="module")
def view():
    # input_bound: 10 steps of 15.5 ms; custom_loop: 17 steps of 8.0 ms.
    return tw.views.compare(tw.load(SAMPLES / "input_bound"), tw.load(SAMPLES / "custom_loop"))


def test_ops_compare_per_step(view):
    d = view.diff
    assert d.attrs["steps"] == (10, 17)
    np.testing.assert_allclose(d["self_time_a_per_step_us"], d["self_time_a_us"] / 10)
    np.testing.assert_allclose(d["self_time_b_per_step_us"], d["self_time_b_us"] / 17)
    both = (d["self_time_a_us"] > 0) & (d["self_time_b_us"] > 0)
    np.testing.assert_allclose(
        d.loc[both, "ratio"],
        d.loc[both, "self_time_b_per_step_us"] / d.loc[both, "self_time_a_per_step_us"],
    )
    # Largest change per step first.
    change = d["delta_per_step_us"].abs().to_numpy()
    assert (np.diff(change) <= 1e-9).all()
    # An op that takes longer in total in custom_loop (it ran 17 steps, not 10) but less
    # per step is "faster": on main it read "slower" from the totals.
    flipped = d[both & (d["delta_us"] > 0) & (d["delta_per_step_us"] < 0)]
    assert len(flipped) >= 5
    table = json.loads(view.payload_json())["tables"]["diff"]["data"]
    ops = list(d["operation"].astype(str))
    change_text = decode(table["change"])
    for op in flipped["operation"].astype(str).head(5):
        assert change_text[ops.index(op)].endswith("faster"), op
    # The headline and the findings say per step.
    text = view.text()
    assert "custom_loop is 1.95x faster per step than input_bound" in text
    assert "µs per step" in view.findings()[1]
    assert set(view.figures()) == {"step_time", "delta"}
    assert "per step" in view.figures()["delta"].layout.title.text


@pytest.mark.parametrize("pair", ["neither", "one"])
def test_without_steps_no_step_chart(pair):
    gemm = tw.load(AMD / "jax08_gemm.xplane.pb")  # the AMD JAX captures mark no steps
    if pair == "neither":
        v = tw.views.compare(gemm, tw.load(AMD / "jax08_conv.xplane.pb"), names=("gemm", "conv"))
        words = "Neither run has steps"
    else:
        v = tw.views.compare(tw.load(SAMPLES / "input_bound"), gemm, names=("ib", "gemm"))
        words = "Only ib has steps; gemm has none"
    assert words in v.headline() and "compared by their total self time" in v.headline()
    assert "step_time" not in v.figures()  # no chart of zeros
    p = json.loads(v.payload_json())
    names = [f["name"] for blk in p["variants"][""] if blk["kind"] == "figs" for f in blk["figs"]]
    assert "step_time" not in names and "delta" in names
    assert np.isnan(v.diff["delta_per_step_us"]).all()
    assert "per step" not in v.text()
