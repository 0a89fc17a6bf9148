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
from tfprof_widgets.analysis.suggestions_xprof import _name_hits, event_time_percent, signals
from tfprof_widgets.schema import SUGGESTIONS

GOLDENS = {
    p.stem: json.loads(p.read_text())
    for p in sorted((ROOT / "tests" / "golden" / "suggestions").glob("*.json"))
}


XPROF_RULES = {
    "BarrierCoresRule", "CollectiveBoundRule", "ComputeBoundRule", "DataShuffleBoundRule",
    "DataTransferBoundRule", "DebugPrintRule", "HostProcessingBoundRule", "InputBoundRule",
    "MemoryBoundRule", "SparseCoreBoundRule", "TensorCoreIdleBoundRule",
}  # fmt: skip


def _load(g: dict, tmp_path):
    """The golden's capture: a bundled file, or tests/support/tpu_builder.py's synthetic TPU
    capture (the golden script builds the same one)."""
    if g["capture"] == "synthetic_tpu":
        from tpu_builder import tpu_capture

        return tw.load(tpu_capture().write(tmp_path / "tpu.xplane.pb"), progress=False)
    return tw.load(ROOT / g["capture"], progress=False)


@pytest.mark.parametrize("name", sorted(GOLDENS))
def test_the_rules_xprof_runs_fire_where_its_tool_fires(name, tmp_path):
    """xprof's pip build runs BarrierCoresRule alone: ours fires it on exactly the captures
    where xprof's does (none of the bundled ones), and every row has the schema."""
    g = GOLDENS[name]
    run = _load(g, tmp_path)
    ours = suggestions(run)
    assert schema.mismatches(ours, SUGGESTIONS) == []
    theirs = sorted(s["rule"] for s in g["suggestions"])
    assert sorted(r for r in ours["rule"] if r in g["rules_run"]) == theirs


@pytest.mark.parametrize("name", sorted(GOLDENS))
def test_xprofs_other_rules_fire_as_on_its_tools_signals(name, tmp_path):
    """The rules xprof's pip build leaves out, applied by the golden script to the signals of
    xprof's own tools (overview page, input pipeline, HLO stats): ours read the same figures
    and fire the same rules (HostProcessingBoundRule on input_bound, TensorCoreIdleBoundRule
    on the synthetic TPU capture, whose cores idle 21.3 % of step time; none elsewhere). The
    TPU's MXU figure is the one exception: XProf reads a matrix-unit counter the capture
    lacks (0), ours is its FLOP share of the peak (0.1 %); both under 50 %, latency-bound."""
    g = GOLDENS[name]
    run = _load(g, tmp_path)
    ours = signals(run)
    for key, theirs in g["signals"].items():
        if key == "hardware_type":
            assert ours[key] == theirs
        elif theirs is None:  # XProf: no TPU step breakdown, the signal is not ok
            assert ours[key] != ours[key], key
        elif (
            key == "mxu_utilization_percent"
            and theirs == 0
            and g["signals"]["hardware_type"] == "TPU"
        ):
            assert ours[key] < 50
        else:
            assert ours[key] == pytest.approx(theirs, rel=0.01, abs=0.005), key
    fired = sorted(r for r in suggestions(run)["rule"] if r in XPROF_RULES)
    assert fired == g["fired_full_build"]


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
        ({"idle": 10.0, "hardware": "TPU"}, []),  # XProf: above 10 %
        ({"idle": 10.1, "hardware": "TPU"}, ["TensorCoreIdleBoundRule"]),
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
        (
            "resnet50_v100_workers0.pt.trace.json.gz",
            ["DataLoaderBoundRule", "SmallKernelsRule", "CPUBoundRule"],
        ),
        (
            "torch_transformer_h100.pt.trace.json.gz",
            ["LaunchBoundRule", "LowDeviceUtilizationRule", "CPUBoundRule"],
        ),
        ("timesformer_h100.json.gz", ["LowDeviceUtilizationRule"]),
    ],
)
def test_a_pytorch_run_gets_torch_tb_profilers_verdicts_as_rows(capture, fired):
    """The rows say what the overview's verdicts say (torch-tb-profiler's rules), with the
    figure each rests on; XProf's plain input-bound rule gives way to the DataLoader's; the
    small-kernel and CPU-bound rules fire on HTA's figures (not on timesformer: 21 % of its
    launches short, its GPU idle 1 %)."""
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
    if "SmallKernelsRule" in s.index:
        short = 100 * run.kernel_launch_stats["short_kernel"].mean()
        assert (
            short > 50
            and f"short_kernel_percent={short:.1f}" in s.loc["SmallKernelsRule", "evidence"]
        )
        assert s.loc["SmallKernelsRule", "view"] == "kernel_stats"
    if "CPUBoundRule" in s.index:
        it = run.idle_time_breakdown
        host = it.loc[it["idle_category"] == "host_wait", "idle_time_us"].sum()
        share = 100 * host / it["idle_time_us"].sum()
        assert s.loc["CPUBoundRule", "evidence"] == (
            f"device_idle_percent={o.device_idle_percent:.1f}; "
            f"host_wait_percent_of_idle={share:.1f}"
        )


def _torch_like(run, short=None, idle=None, host_wait=None):
    """A PyTorch capture's HTA tables with one signal changed: the share of short launches,
    the device idle share, or the host-wait share of the streams' idle time."""
    k = run.kernel_launch_stats.copy()
    if short is not None:
        n = round(len(k) * short / 100)
        k["short_kernel"] = [True] * n + [False] * (len(k) - n)
    it = run.idle_time_breakdown.copy()
    if host_wait is not None:
        total = it["idle_time_us"].sum()
        it = pd.DataFrame({
            "idle_category": ["host_wait", "other"],
            "idle_time_us": [total * host_wait / 100, total * (1 - host_wait / 100)],
        })  # fmt: skip
    o = run.overview_summary
    return SimpleNamespace(
        kernel_launch_stats=k,
        idle_time_breakdown=it,
        overview_summary=SimpleNamespace(
            device_idle_percent=o.device_idle_percent if idle is None else idle
        ),
    )


@pytest.fixture(scope="module")
def resnet():
    return tw.load(
        ROOT / "tests/data/chrome/resnet50_v100_workers0.pt.trace.json.gz", progress=False
    )


@pytest.mark.parametrize(
    "change, fired",
    [
        ({"short": 50.0}, ["CPUBoundRule"]),  # HTA-short launches: more than half
        ({"short": 51.0}, ["SmallKernelsRule", "CPUBoundRule"]),
        ({"short": 0.0, "idle": 9.9}, []),  # the GPU idle under 10 %
        ({"short": 0.0, "idle": 10.0}, ["CPUBoundRule"]),
        ({"short": 0.0, "host_wait": 49.9}, []),  # host wait under half the idle time
        ({"short": 0.0, "host_wait": 50.0}, ["CPUBoundRule"]),
    ],
)
def test_the_pytorch_rules_fire_at_their_thresholds(resnet, change, fired):
    """Built from resnet50_v100_workers0's HTA tables with one signal changed (the test
    says which): each rule fires exactly past its documented threshold."""
    from tfprof_widgets.frameworks.pytorch.suggestions_rules import suggestion_rows

    rows = suggestion_rows(_torch_like(resnet, **change))
    assert ([] if rows is None else rows["rule"].tolist()) == fired


@pytest.fixture(scope="module")
def cnn():
    return tw.load(ROOT / "tests/data/xplane_h100_jax/jax_cnn_nographs.xplane.pb", progress=False)


def _changed(run, hardware=None, peaks=None, hlo=None, events=None):
    """jax_cnn_nographs' own tables (an H100 capture) with one signal changed: the hardware
    type, the peak rates, the HLO categories or the events."""
    import dataclasses

    o = run.overview_summary
    return SimpleNamespace(
        overview_summary=dataclasses.replace(o, hardware_type=hardware or o.hardware_type),
        input_pipeline=run.input_pipeline,
        steps=run.steps,
        events=run.events if events is None else events,
        hlo_stats=run.hlo_stats if hlo is None else hlo,
        roofline=run.roofline,
        roofline_peaks=run.roofline_peaks if peaks is None else peaks,
    )


def test_the_utilization_rules_read_the_roofline_on_a_tpu_alone(cnn):
    """The H100 capture's FLOP and HBM shares of the peaks (1.6 % and 8.1 %) stay out of
    the rules off a TPU (XProf's overview writes 0 there); with the peaks scaled so that
    one of them is 80 % on a 'TPU', ComputeBound or MemoryBound fires."""
    s = signals(cnn)
    assert s["mxu_utilization_percent"] == 0 == s["hbm_utilization_percent"]
    flop, hbm = s["flop_utilization_percent"], s["hbm_bw_utilization_percent"]
    assert 0 < flop < 50 and 0 < hbm < 50
    peaks = cnn.roofline_peaks.copy()
    fast = _changed(cnn, "TPU", peaks.assign(peak_gflops=peaks["peak_gflops"] * flop / 80))
    assert signals(fast)["mxu_utilization_percent"] == pytest.approx(80)
    assert "ComputeBoundRule" in suggestions(fast)["rule"].tolist()
    full = _changed(cnn, "TPU", peaks.assign(peak_hbm_gibps=peaks["peak_hbm_gibps"] * hbm / 80))
    rules = suggestions(full).set_index("rule")
    assert "MemoryBoundRule" in rules.index and "ComputeBoundRule" not in rules.index
    assert "hbm_utilization_percent=80.0" in rules.loc["MemoryBoundRule", "evidence"]


@pytest.mark.parametrize(
    "category, rule", [("gather", "DataShuffleBoundRule"), ("all-reduce", "CollectiveBoundRule")]
)
def test_the_category_rules_fire_on_a_changed_hlo_category(cnn, category, rule):
    """The H100 capture's HLO ops, their time scaled to 35 % of the kept steps' time and
    their category changed to a data shuffle or a collective: the rule fires at 35 %."""
    assert signals(cnn)["data_shuffle_percent"] < 0.1  # the capture as is: 0.06 %
    hlo = cnn.hlo_stats.copy()
    steps_us = cnn.steps["step_time_us"].iloc[1:-1].sum()  # XProf keeps all but the edges
    hlo["total_self_time_us"] *= 0.35 * steps_us / hlo["total_self_time_us"].sum()
    hlo["category"] = pd.Categorical([category] * len(hlo))
    s = suggestions(_changed(cnn, hlo=hlo)).set_index("rule")
    assert list(s.index) == [rule]
    assert s["evidence"].iloc[0].endswith("=35.0")


def test_the_latency_rules_fire_on_a_tpu_only(cnn):
    """TensorCore idle and SparseCore time (XProf reads them from a TPU step breakdown): the
    H100 capture as is fires neither; called a TPU (MXU and HBM under 50 %: latency-bound)
    its 86 % idle fires TensorCoreIdleBoundRule, and SparseCore steps added on a
    'Sparse Core Steps' line at 20 % of the mean step fire SparseCoreBoundRule."""
    assert {"TensorCoreIdleBoundRule", "SparseCoreBoundRule"}.isdisjoint(suggestions(cnn)["rule"])
    assert suggestions(_changed(cnn, "TPU"))["rule"].tolist() == ["TensorCoreIdleBoundRule"]
    ev = cnn.events
    sc = ev.iloc[:3].copy()
    sc["line"] = pd.Categorical(["Sparse Core Steps"] * 3)
    sc["dur_us"] = 0.2 * cnn.steps["step_time_us"].mean()
    tpu = _changed(cnn, "TPU", events=pd.concat([ev, sc], ignore_index=True))
    s = suggestions(tpu).set_index("rule")
    assert "sparse_core_percent=20.0" == s.loc["SparseCoreBoundRule", "evidence"]


@pytest.mark.parametrize(
    "needle, share, rule",
    [("barrier-cores", 10.0, "BarrierCoresRule"), ("debug_print", 5.0, "DebugPrintRule"),
     ("barrier-cores", 9.0, None), ("debug_print", 4.0, None)],
)  # fmt: skip
def test_the_event_fraction_rules_fire_on_renamed_events(cnn, needle, share, rule):
    """The H100 capture's events with its longest device op renamed (barrier-cores or
    debug_print) and stretched to a share of the host's step time on its one GPU: XProf's
    event-time-fraction rules fire from 10 % and 5 %."""
    ev = cnn.events.copy()
    names = ev["name"].astype(str).to_numpy(copy=True)
    longest = int(ev["dur_us"].to_numpy().argmax())
    names[longest] = f"{needle}.7"
    ev["name"] = pd.Categorical(names)
    dur = ev["dur_us"].to_numpy(copy=True)
    dur[longest] = share / 100 * cnn.steps["step_time_us"].sum()
    ev["dur_us"] = dur
    fired = suggestions(_changed(cnn, events=ev))["rule"].tolist()
    assert fired == ([rule] if rule else [])


def test_names_are_matched_once_per_distinct_name_categorical_or_not():
    """The event-name match runs on the categorical's categories (or the factorised values of
    plain strings) and spreads by the codes: the same hits either way, missing names none."""
    plain = pd.Series(["barrier-cores.1", "fusion", None, "barrier-cores.1", "x barrier-cores"])
    hits = [True, False, False, True, True]
    assert _name_hits(plain, "barrier-cores").tolist() == hits
    assert _name_hits(plain.astype("category"), "barrier-cores").tolist() == hits
    run = SimpleNamespace(
        events=pd.DataFrame({"host": ["a", "a", "b"], "plane": ["p0", "p1", "p0"],
                             "name": ["barrier-cores", "barrier-cores", "fusion"],
                             "dur_us": [10.0, 30.0, 5.0]}),
        steps=pd.DataFrame({"host": ["a", "b"], "step_time_us": [100.0, 100.0]}),
    )  # fmt: skip
    # host a: 40 µs over 100 µs on each of its two chips that ran it = 20 %.
    assert event_time_percent(run, "barrier-cores").to_dict() == {"a": 20.0}
