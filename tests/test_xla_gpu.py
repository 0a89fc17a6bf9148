"""XLA on GPU (issue 27): JAX captures on an H100 (with and without CUDA graphs) and on AMD
MI300X, against xprof 2.24's own output for them (tests/golden/jax*, made by
``scripts/make_golden.py --xla``). Each test states the rule it checks."""

from __future__ import annotations

import pytest
from conftest import ROOT
from fidelity_figures import differences, our_figures, xprof_figures
from golden_tables import golden

import tfprof_widgets as tw

H100 = ROOT / "tests" / "data" / "xplane_h100_jax"
AMD = ROOT / "tests" / "data" / "xplane_amd_jax"
H100_NAMES = ("jax_cnn_nographs", "jax_cnn_graphs")
AMD_NAMES = tuple(f"jax08_{k}" for k in ("attention", "conv", "elementwise", "gemm"))
TOOLS = ("overview_page", "framework_op_stats", "kernel_stats")
STEP_FIGURES = ("steps", "step_time_ms_avg", "input_statement", "precision_statement")


def path_of(name: str):
    return (H100 if name in H100_NAMES else AMD) / f"{name}.xplane.pb"


_RUNS: dict = {}


def load(name: str):
    if name not in _RUNS:
        _RUNS[name] = tw.load(path_of(name), progress=False)
    return _RUNS[name]


def xprof(name: str) -> dict:
    return xprof_figures({t: golden(name, t) for t in TOOLS})


@pytest.mark.parametrize("name", H100_NAMES)
def test_jax_gpu_steps_are_xprofs(name):
    """Rule (XProf's grouping and device step DB for a host with a GPU): the ``train``
    markers (``step_num``, ``_r=1``) group the Python thread; each kernel joins the group of
    its host launch with the same ``correlation_id``; ungrouped device events take the
    group before them; each GPU's grouped events in time order derive its 'Steps'; a host
    with a GPU counts its device events only. So 10 markers give 10 steps, the overview
    drops the first and last: 8, with every breakdown category, the verdict and the
    precision statement equal to xprof's."""
    theirs = xprof(name)
    assert theirs["steps"] == 8
    ours = our_figures(load(name))
    keys = [k for k in theirs if k in STEP_FIGURES or k.endswith("_ms_avg")]
    assert len(keys) >= 13
    assert (
        differences({k: ours.get(k) for k in keys if k in ours}, {k: theirs[k] for k in keys}) == []
    )
    assert theirs["input_statement"].startswith("Your program is POTENTIALLY input-bound")


def test_jax_steps_carry_the_markers_step_numbers():
    """The steps are numbered by the markers' ``step_num`` (0-9), and each step's device
    compute is the same 0.74 ms XProf shows per step."""
    steps = load("jax_cnn_nographs").steps
    assert steps["step"].tolist() == list(range(10))
    per_step = golden("jax_cnn_nographs", "overview_page")[1]["rows"]
    theirs = [r["c"][1]["v"] for r in per_step]
    ours = (steps["device_compute_us"].to_numpy()[1:-1] / 1000).tolist()
    assert ours == pytest.approx(theirs, rel=1e-4)


@pytest.mark.parametrize("name", AMD_NAMES)
def test_amd_jax_captures_have_no_steps(name):
    """The AMD captures mark no step: no steps, as in xprof."""
    assert xprof(name)["steps"] == 0
    assert len(load(name).steps) == 0
