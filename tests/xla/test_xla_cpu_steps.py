"""XLA's CPU work in the step breakdown (issue 27 item 1), on the bundled JAX CPU capture
(sample_profiles/jax_cnn_cpu), against xprof 2.24's overview and input pipeline
(tests/golden/jax_cnn_cpu, made by scripts/make_golden.py)."""

from __future__ import annotations

import pathlib

import numpy as np
import pytest
from fidelity_figures import STEP_COLUMNS, differences, our_figures, rows, xprof_figures
from golden_tables import golden

import tfprof_widgets as tw
from tfprof_widgets.analysis.overview import overview_steps, overview_summary

ROOT = pathlib.Path(__file__).resolve().parents[2]
(CAPTURE,) = sorted((ROOT / "sample_profiles" / "jax_cnn_cpu").rglob("*.xplane.pb"))


@pytest.fixture(scope="module")
def run():
    return tw.load(CAPTURE, progress=False)


def test_every_step_and_category_is_xprofs(run):
    """Rule (XProf's step grouping on a JAX CPU capture): a step is a ``train`` marker with
    ``step_num`` and ``_r=1``; only the events nested under it on its own (Python) thread join
    its group, and their union is host compute. XLA's CPU work counts there only when the
    dispatch runs the program inline (``PjitFunction`` → ``ExecuteHelperOnSingleDevice``
    lasting 28 ms in step 1); when it runs asynchronously on the ``XLAPjRtCpuClient`` /
    ``XLAEigen`` threads (no flow links them to the step), the dispatch takes 0.25 ms and
    the program's time falls to 'All others'. The first and last of the six steps are
    dropped. Every step's every category within 0.5 %."""
    theirs = rows(golden("jax_cnn_cpu", "overview_page")[1])
    kept = overview_steps(run.steps).reset_index(drop=True)
    assert len(kept) == len(theirs) == 4
    assert [f"train {s}" for s in kept["step"]] == theirs["stepnum"].tolist()
    for col, ours in STEP_COLUMNS.items():
        np.testing.assert_allclose(
            kept[ours].to_numpy() / 1e3, theirs[col].astype(float), rtol=5e-3, atol=1e-6
        )
    np.testing.assert_allclose(kept["step_time_us"] / 1e3, theirs["stepTimeMs"], rtol=5e-3)
    # XLA's CPU work is inline in some steps and not in others: 0.25 ms to 28 ms here.
    host = theirs["hostComputeTimeMs"].astype(float)
    assert host.min() < 1 < 20 < host.max()


def test_overview_figures_and_verdict_are_xprofs(run):
    """The averages, the input verdict ('POTENTIALLY input-bound' on 'All Others') and the
    input pipeline's averages."""
    theirs = xprof_figures({"overview_page": golden("jax_cnn_cpu", "overview_page")})
    assert theirs["input_statement"].startswith("Your program is POTENTIALLY input-bound")
    assert differences(our_figures(run), theirs) == []
    ip = next(t["p"] for t in golden("jax_cnn_cpu", "input_pipeline_analyzer") if "p" in t)
    o = overview_summary(run)
    assert o.input_statement == ip["input_conclusion"]
    assert f"{o.breakdown_ms_avg['host_compute_us']:.1f}" == ip["host_compute_time_ms_avg"]
    assert f"{o.breakdown_ms_avg['all_others_us']:.1f}" == ip["other_time_ms_avg"]
