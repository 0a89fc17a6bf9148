"""A table column whose header says "(%)" holds percent, not a fraction (seen in the browser
pass of issue 36: the roofline's "roofline eff. (%)" read 0.6 for an HBM-bound op at 57 % of
its roof, and the op profile's utilisations read 0.10 for 10 %). On the real JAX H100 capture
(CUDA graphs): each such column of the roofline and HLO op profile tables is 100 x the
analysis' fraction, within [0, 100], and its CSV header says percent."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import ROOT

import tfprof_widgets as tw

CAPTURE = ROOT / "tests" / "data" / "xplane_h100_jax" / "jax_cnn_graphs.xplane.pb"


@pytest.fixture(scope="module")
def run():
    if not CAPTURE.exists():
        pytest.skip(f"{CAPTURE} is absent")
    return tw.load(CAPTURE, progress=False)


@pytest.mark.parametrize(
    "view, frame, columns",
    [
        (
            "roofline",
            "roofline",
            ("roofline_efficiency", "compute_efficiency", "max_mem_bw_utilization"),
        ),
        (
            "hlo_op_profile",
            "op_profile",
            ("flop_utilization", "hbm_bw_utilization", "xprof_flop_utilization"),
        ),
    ],
)
def test_percent_headers_hold_percent(run, view, frame, columns):
    table = getattr(tw.views, view)(run).table()
    by_name = {c.name: c for c in table.columns}
    analysis = getattr(run, frame)
    shown = table.df
    for col in columns:
        c = by_name[col]
        assert c.label.endswith("(%)") and c.csv == f"{col}_percent"
        np.testing.assert_allclose(shown[col], analysis[col].to_numpy() * 100.0, rtol=1e-12)
        assert shown[col].between(0, 100).all()
    # Some op runs above 1 % of a roof: as a fraction every value was at most 1.
    assert (shown[columns[-1 if view == "roofline" else 1]] > 1.0).any()
