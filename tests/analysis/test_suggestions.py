"""suggestions(run): XProf's smart-suggestion rules on a run's analyses
(analysis/suggestions.py), against xprof 2.24's ``smart_suggestion`` tool on the bundled
captures (goldens by scripts/make_suggestion_goldens.py) and on hand-made signals."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pandas as pd
import pytest
from conftest import ROOT

import tfprof_widgets as tw
from tfprof_widgets import schema
from tfprof_widgets.analysis.suggestions import suggestions
from tfprof_widgets.schema import SUGGESTIONS

GOLDENS = {
    p.stem: json.loads(p.read_text())
    for p in sorted((ROOT / "tests" / "golden" / "suggestions").glob("*.json"))
}


@pytest.mark.parametrize("name", sorted(GOLDENS))
def test_the_rules_xprof_runs_fire_where_its_tool_fires(name):
    """xprof's pip build runs BarrierCoresRule alone: ours fires it on exactly the captures
    where xprof's does (none of the bundled ones), and every row has the schema."""
    g = GOLDENS[name]
    run = tw.load(ROOT / g["capture"], progress=False)
    ours = suggestions(run)
    assert schema.mismatches(ours, SUGGESTIONS) == []
    theirs = sorted(s["rule"] for s in g["suggestions"])
    assert sorted(r for r in ours["rule"] if r in g["rules_run"]) == theirs


def test_an_input_bound_run_is_host_processing_bound():
    """sample_profiles/input_bound: 63 % of step time in input, all of it reading and
    preprocessing on the host (no enqueue): HostProcessingBoundRule, high."""
    g = GOLDENS["input_bound"]
    run = tw.load(ROOT / g["capture"], progress=False)
    s = suggestions(run)
    assert s["rule"].tolist() == ["HostProcessingBoundRule"]
    row = s.iloc[0]
    assert row["severity"] == "high" and row["view"] == "input_pipeline"
    assert (
        "input_percent=63.1" in row["evidence"] and "non_enqueue_percent=100.0" in row["evidence"]
    )
    assert "63.1% of the total step time" in row["text"]


def _run(input_percent=0.0, enqueue=0.0, other=0.0, collectives=0.0, idle=0.0,
         hardware="GPU", barrier_us=0.0, step_us=100.0):  # fmt: skip
    return SimpleNamespace(
        overview_summary=SimpleNamespace(
            input_percent=input_percent,
            device_collectives_percent=collectives,
            idle_percent=idle,
            hardware_type=hardware,
        ),
        input_pipeline=SimpleNamespace(
            enqueue_us=enqueue,
            demanded_file_read_us=other,
            advanced_file_read_us=0.0,
            preprocessing_us=0.0,
            unclassified_non_enqueue_us=0.0,
        ),
        events=pd.DataFrame({"name": ["barrier-cores.1", "fusion"], "dur_us": [barrier_us, 5.0]}),
        steps=pd.DataFrame({"step_time_us": [step_us]}),
    )


@pytest.mark.parametrize(
    "signals, fired",
    [
        ({}, []),
        ({"input_percent": 10.0, "other": 5.0}, []),  # XProf: input-bound above 10 %
        ({"input_percent": 10.5, "other": 5.0}, ["HostProcessingBoundRule"]),
        ({"input_percent": 40, "enqueue": 3, "other": 7}, ["HostProcessingBoundRule",
                                                          "DataTransferBoundRule"]),
        ({"input_percent": 40, "enqueue": 8, "other": 2}, ["DataTransferBoundRule"]),
        ({"input_percent": 40}, ["InputBoundRule"]),  # nothing categorised
        ({"collectives": 29.9}, []),
        ({"collectives": 30.0}, ["CollectiveBoundRule"]),
        ({"idle": 50.0}, []),  # only a TPU has a TensorCore
        ({"idle": 10.0, "hardware": "TPU"}, ["TensorCoreIdleBoundRule"]),
        ({"barrier_us": 9.9}, []),
        ({"barrier_us": 10.0}, ["BarrierCoresRule"]),
    ],
)  # fmt: skip
def test_each_rule_fires_at_xprofs_threshold(signals, fired):
    s = suggestions(_run(**signals))
    assert s["rule"].tolist() == fired
    assert schema.mismatches(s, SUGGESTIONS) == []
    assert all(s["evidence"].str.len() > 0)


@pytest.mark.parametrize(
    "capture, fired",
    [
        ("resnet50_v100_workers0.pt.trace.json.gz", ["DataLoaderBoundRule"]),
        (
            "torch_transformer_h100.pt.trace.json.gz",
            ["LaunchBoundRule", "LowDeviceUtilizationRule"],
        ),
    ],
)
def test_a_pytorch_run_gets_torch_tb_profilers_verdicts_as_rows(capture, fired):
    """The rows say what the overview's verdicts say (torch-tb-profiler's rules), with the
    figure each rests on; XProf's plain input-bound rule gives way to the DataLoader's."""
    run = tw.load(ROOT / "tests" / "data" / "chrome" / capture, progress=False)
    s = suggestions(run).set_index("rule")
    assert sorted(s.index) == sorted(fired)
    o = run.overview_summary
    if "DataLoaderBoundRule" in s.index:
        row = s.loc["DataLoaderBoundRule"]
        assert row["text"] == o.input_statement and row["severity"] == "high"
        assert f"input_percent={o.input_percent:.1f}" == row["evidence"]
    if "LaunchBoundRule" in s.index:
        assert s.loc["LaunchBoundRule", "text"] == o.kernel_launch_statement
    if "LowDeviceUtilizationRule" in s.index:
        assert s.loc["LowDeviceUtilizationRule", "text"] == o.all_other_statement
