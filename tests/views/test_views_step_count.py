"""Issue 29 item 5: one step count, named the same, in the run's summary, the overview, the
command line and the report (``run.step_count``: the step numbers of ``run.steps``, once
across hosts; the overview averages the ones XProf keeps), with English plurals."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import tfprof_widgets as tw
from tfprof_widgets.analysis.results import StepCount, plural
from tfprof_widgets.cli import summary_text
from tfprof_widgets.report import report_html

ROOT = Path(__file__).resolve().parents[2]
BERT = ROOT / "tests" / "data" / "bert_8gpu_multi_worker.xplane.pb"
BAD_PLURAL = re.compile(r"\b1 steps\b|\b1 hosts\b|\b1 rows\b|\(one step\)|\ballocator\(s\)")


def _texts(run) -> dict[str, str]:
    overview = tw.views.overview(run)
    return {
        "repr": repr(run),
        "overview": overview.text(),
        "overview_html": overview.html(),
        "cli": summary_text(run),
        "input_pipeline": tw.views.input_pipeline(run).text(),
    }


@pytest.mark.parametrize(
    "sample, numbers, count, averaged",
    [
        # Two hosts run steps 0..7: 8 steps (on main the overview said 12, its host-steps).
        ("gpu_shaped", "8 (0..7) on 2 hosts", "8 steps (0..7) on 2 hosts", "6 steps (1..6)"),
        ("custom_loop", "17 (2..18)", "17 steps (2..18)", "15 steps (3..17)"),
        ("keras_fit", "4 (2..5)", "4 steps (2..5)", "all 4 steps"),
    ],
)
def test_one_step_count_on_the_samples(sample, numbers, count, averaged):
    run = tw.load(ROOT / "sample_profiles" / sample)
    c = run.step_count
    assert (str(c), c.numbers(), c.averaged_text()) == (count, numbers, averaged)
    t = _texts(run)
    assert f"steps: {numbers}" in t["repr"]
    assert t["overview"].splitlines()[1].startswith(f"{count}: average step time")
    assert f"over {averaged}" in t["overview"]
    assert f"Steps: {count}" in t["cli"]
    assert f"averaged over {averaged}" in t["cli"]
    for name, text in t.items():
        assert not BAD_PLURAL.search(text), name
        # No other count of steps: the host-steps (12 on gpu_shaped) are not "steps".
        for n in re.findall(r"\b(\d+) steps\b", text):
            assert int(n) in (c.steps, c.averaged), (name, n)


def test_bert_one_step_everywhere():
    """The 8-GPU BERT capture: its events carry 5 step groups but XProf's step database
    (and run.steps) has one step, 0 (xprof 2.24's overview lists step 0 alone). On main the
    summary said ``steps: 5 (0..6)`` and the overview ``(one step)`` / ``1 steps``."""
    run = tw.load(BERT)
    assert str(run.step_count) == "1 step (0)"
    t = _texts(run)
    assert "steps: 1 (0)" in t["repr"]
    assert t["overview"].splitlines()[1].startswith("1 step (0): step time")
    assert "Steps: 1 step (0)" in t["cli"]
    assert "1 step (0)" in report_html(run)
    for name, text in t.items():
        assert not BAD_PLURAL.search(text), name


def test_no_steps_said_in_words():
    run = tw.load(ROOT / "sample_profiles" / "tf1_graph")
    c = StepCount.of(run.steps.iloc[:0], run.steps.iloc[:0])
    assert (str(c), c.numbers(), c.averaged_text(), c.dropped) == ("0 steps", "0", "no step", False)


def test_plural():
    assert [plural(n, "step") for n in (0, 1, 2, 1000)] == [
        "0 steps",
        "1 step",
        "2 steps",
        "1,000 steps",
    ]
    assert plural(1, "more row") == "1 more row"
