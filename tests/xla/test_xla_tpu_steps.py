"""TPU steps, their breakdown and the verdicts (issue 27), against xprof 2.24's
input_pipeline_analyzer and overview_page on the synthetic TPU captures:
tests/support/tpu_builder.py (golden synthetic_tpu) and its variant
tests/support/tpu_steps_builder.py with infeed, outfeed and
host-send ops and a split step (golden synthetic_tpu_feeds); goldens by scripts/make_golden.py.
The rules are tfprof_widgets/frameworks/xla/tpu_steps.py's."""

from __future__ import annotations

import pathlib
import sys

import numpy as np
import pytest
from fidelity_figures import rows
from golden_tables import golden

import tfprof_widgets as tw
from tfprof_widgets import schema
from tfprof_widgets.analysis.overview import overview_summary
from tfprof_widgets.frameworks.base import Framework
from tfprof_widgets.proto import xplane_pb2

ROOT = pathlib.Path(__file__).resolve().parents[2]
INVENTORY = ROOT / "tests" / "data" / "reference" / "xla-capture-inventory.txt"
sys.path.insert(0, str(ROOT / "tests"))
from tpu_builder import tpu_capture  # noqa: E402
from tpu_steps_builder import tpu_feeds_capture, tpu_unmarked_capture  # noqa: E402

CAPTURES = {
    "synthetic_tpu": tpu_capture,
    "synthetic_tpu_feeds": tpu_feeds_capture,
    "synthetic_tpu_unmarked": tpu_unmarked_capture,
}
# xprof's TPU step table (ms) -> ours (µs).
TPU_COLUMNS = {
    "tcComputeTimeMs": "device_compute_us",
    "tcInfeedTimeMs": "input_us",
    "tcOutfeedTimeMs": "output_us",
    "tcIdleTimeMs": "all_others_us",
}


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("tpu_steps")
    return {
        n: tw.load(b().write(tmp / f"{n}.xplane.pb"), progress=False) for n, b in CAPTURES.items()
    }


def _xprof_steps(name: str, tool: str = "input_pipeline_analyzer"):
    return rows(golden(name, tool)[1])


def _pipeline_props(name: str) -> dict:
    return golden(name, "input_pipeline_analyzer")[1]["p"]


@pytest.mark.parametrize("name", CAPTURES)
def test_every_step_and_category_is_xprofs(runs, name):
    """Rule (XProf's TPU step DB): each event of a core's 'Steps' line is a step; the step
    time is its longest 'Steps' event over the cores; per core, idle = step time − its XLA
    ops' self time (device clock) and waiting for the host = infeed + outfeed + host
    send/recv + idle; across cores, TensorCore compute = the least (step − waiting), input
    = the most infeed, output = the mean outfeed, idle = the least step time − the rest.
    Every step and column equal to xprof's to 1e-9 (both its tools print the same table);
    the step time (the step's time on its slowest core) is their sum here."""
    steps = runs[name].steps
    assert schema.mismatches(steps, schema.STEPS) == []
    theirs = _xprof_steps(name)
    assert rows(golden(name, "overview_page")[1]).equals(theirs)
    assert len(steps) == len(theirs) > 0
    for col, ours in TPU_COLUMNS.items():
        np.testing.assert_allclose(
            steps[ours].to_numpy() / 1e3, theirs[col].astype(float), rtol=1e-9, atol=1e-15
        )
    parts = theirs[list(TPU_COLUMNS)].astype(float).sum(axis=1)
    np.testing.assert_allclose(steps["step_time_us"] / 1e3, parts, rtol=1e-9)
    # xprof's tooltips round the step time and the input time to the µs.
    tips = [
        f"step {s}:\nTime waiting for input data = {i / 1e3:.3f} ms, Step time = {t / 1e3:.3f} ms"
        for s, i, t in zip(steps["step"], steps["input_us"], steps["step_time_us"])
    ]
    assert tips == theirs["tooltip"].tolist()
    # No SparseCore here: xprof's SparseCore columns are 0.
    assert (theirs[["scv0ComputeTimeMs", "scv0InfeedTimeMs"]].astype(float) == 0).all().all()


@pytest.mark.parametrize("name", CAPTURES)
def test_steps_are_numbered_after_the_host_groups(runs, name):
    """Rule: XProf numbers a device step by its group id, after the host's own step groups
    in time order: 3, 4, 5... after the capture's three ``train`` markers, 0, 1, 2 when the
    host marks no step."""
    steps = runs[name].steps
    assert [str(s) for s in steps["step"]] == _xprof_steps(name)["stepnum"].tolist()
    assert steps["step"].tolist()[0] == (0 if name == "synthetic_tpu_unmarked" else 3)
    assert steps["group_id"].tolist() == steps["step"].tolist()


def test_an_op_joins_the_first_step_it_overlaps(runs):
    """Rule (XProf's GroupQueue): the variant splits the second step's 'Steps' event in two
    halves inside one program run; each op joins the first half it overlaps (the one across
    the cut, ``ynn_fusion.1``, the first), so the run's ops split between two steps of half
    the time each (the exact times are xprof's rows, checked above), and the other steps
    keep their whole run."""
    whole = runs["synthetic_tpu"].steps
    split = runs["synthetic_tpu_feeds"].steps
    assert len(split) == len(whole) + 1
    halves = split["step_time_us"].to_numpy()[1:3]
    np.testing.assert_allclose(halves, [whole["step_time_us"].iloc[1] / 2] * 2, rtol=1e-12)
    # Both halves ran part of the run's ops, each less than a whole run.
    compute = split["device_compute_us"].to_numpy()
    assert 0 < compute[1] < compute[3] and 0 < compute[2] < compute[3]


@pytest.mark.parametrize("name", CAPTURES)
def test_verdicts_are_xprofs_tpu_analysis(runs, name):
    """Rule (ComputeTpuBottleneckAnalysis): the input verdict on the infeed share with no
    'All Others' share (a TensorCore's idle time is not read as input: 21 % idle still
    gives 'NOT input-bound'), the output verdict on the outfeed share, and no kernel-launch,
    all-others or collectives statement. Texts equal to xprof's input conclusion, which its
    overview page carries in its input-analysis table too. We differ on purpose from the
    overview page's own 'statement': xprof reads its TPU step details there through its
    generic (GPU/CPU) analysis, cannot unpack them and leaves the statement empty."""
    o = overview_summary(runs[name])
    props = _pipeline_props(name)
    assert props["hardware_type"] == "TPU"
    assert o.input_statement == props["input_conclusion"] != ""
    assert o.output_statement == props["output_conclusion"]
    assert golden(name, "overview_page")[1]["p"]["input_conclusion"] == o.input_statement
    assert golden(name, "overview_page")[3]["p"]["statement"] == ""
    assert o.kernel_launch_statement == o.all_other_statement == ""
    assert o.device_collectives_statement == ""
    assert o.recommendations[0] == o.input_statement
    assert o.n_steps == len(_xprof_steps(name))


def test_verdict_branches(runs):
    """The plain capture is 'NOT input-bound' (0.0 %) with nothing to do next; the variant
    MODERATELY input-bound (15.4 % infeed) and MODERATELY output-bound (6.8 % outfeed). Next
    steps: xprof's 'You may skip the rest of this page.' where not input-bound; where it is,
    XLA's own words (xprof points at its tf.data section, which a JAX capture has not)."""
    plain = overview_summary(runs["synthetic_tpu"])
    assert plain.input_classification == "device"
    assert plain.summary_next_step == _pipeline_props("synthetic_tpu")["summary_nextstep"]
    feeds = overview_summary(runs["synthetic_tpu_feeds"])
    assert feeds.input_statement.startswith("Your program is MODERATELY input-bound because 15.4%")
    assert feeds.output_statement.startswith("Your program is MODERATELY output-bound because 6.8%")
    assert feeds.input_classification == "both"
    assert "tf.data" in _pipeline_props("synthetic_tpu_feeds")["summary_nextstep"]
    assert (
        feeds.summary_next_step
        == runs["synthetic_tpu_feeds"].framework.advice.no_input_pipeline_next_step
    )


def test_idle_share_is_xprofs_tensor_core_idle(runs):
    """The overview's idle share on TPU is TensorCore idle over step time (xprof's
    tc_idle_percent, from its per-step rows)."""
    for name, run in runs.items():
        theirs = _xprof_steps(name)
        step = theirs[list(TPU_COLUMNS)].astype(float).sum(axis=1).sum()
        want = 100 * theirs["tcIdleTimeMs"].astype(float).sum() / step
        assert overview_summary(run).idle_percent == pytest.approx(want, rel=1e-9)


def test_no_steps_line_no_steps(tmp_path):
    """Without a 'Steps' line on the cores (the real JAX TPU inference capture of the
    inventory has none) XProf builds no TPU step, nor do we: the overview asks for step
    markers."""
    text = INVENTORY.read_text()
    tpu = text[text.index("== JAX on 4 TPU") : text.index("== JAX 0.11.2")]
    assert "line 'XLA Ops'" in tpu and "line 'Steps'" not in tpu
    b = tpu_capture()
    for plane in b.space.planes:
        keep = [line for line in plane.lines if line.name != "Steps"]
        copies = [xplane_pb2.XLine() for _ in keep]
        for copy, line in zip(copies, keep):
            copy.CopyFrom(line)
        del plane.lines[:]
        plane.lines.extend(copies)
    run = tw.load(b.write(tmp_path / "nosteps.xplane.pb"), progress=False)
    assert len(run.steps) == 0
    o = overview_summary(run)
    assert o.n_steps == 0
    assert run.framework.advice.mark_steps in o.recommendations


def test_other_frameworks_build_no_device_steps():
    """The hook's default keeps the step events' steps (GPU, CPU, TF, PyTorch unchanged)."""
    assert Framework().device_steps(None) is None
