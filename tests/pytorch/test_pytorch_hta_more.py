"""HTA's memory bandwidth counters (``tfprof_widgets.frameworks.pytorch.hta_memory_bw``) on every
bundled Kineto trace and its trace diff (``tfprof_widgets.analysis.trace_diff``) of pairs of
them, against HTA 0.5 at exact times (``HTA_DISABLE_NS_ROUNDING=1``): the goldens in
``tests/golden/hta/counters/`` and ``tests/golden/hta/trace_diff/`` made by
``scripts/make_hta_more_goldens.py``."""

from __future__ import annotations

import json
import pathlib

import numpy as np
import pandas as pd
import pytest

import tfprof_widgets as tw
from tfprof_widgets.analysis import trace_diff
from tfprof_widgets.frameworks.pytorch import hta_memory_bw

ROOT = pathlib.Path(__file__).resolve().parents[1]
CHROME = ROOT / "data" / "chrome"
GOLDEN = ROOT / "golden" / "hta"
COUNTERS = sorted((GOLDEN / "counters").glob("*.json"))
DIFFS = sorted((GOLDEN / "trace_diff").glob("*.json"))
TRITON = "hta_sampled_rank0_triton.json.gz"
# The host-side Triton launch that make_hta_goldens.py lays into the rank-0 trace.
TRITON_OP = "triton_poi_fused_add_bitwise_and_bitwise_not_bitwise_or_ge_lt_mul_sub_0"
VARIANTS = {"all": ("all", False), "all_short": ("all", True), "cpu": ("cpu", False),
            "gpu": ("gpu", False)}  # fmt: skip

_RUNS: dict[str, tw.Run] = {}


def _run(name: str):
    if name not in _RUNS:
        _RUNS[name] = tw.load(CHROME / name, progress=False)
    return _RUNS[name]


def test_goldens_cover_every_trace_the_other_hta_goldens_do():
    """Every Kineto trace with HTA goldens (tests/golden/hta/*.json) has its counters golden."""
    traces = {json.loads(p.read_text())["trace"] for p in GOLDEN.glob("*.json")}
    assert len(traces) >= 8
    assert traces == {json.loads(p.read_text())["trace"] for p in COUNTERS}
    assert len(DIFFS) >= 4


@pytest.fixture(scope="module", params=COUNTERS, ids=lambda p: p.stem)
def counters(request):
    ref = json.loads(request.param.read_text())
    return _run(ref["trace"]), ref


def test_memory_bw_time_series_is_htas(counters):
    """Rule (get_memory_bw_time_series): per memory kind, the bandwidth steps up by a copy's
    or memset's Kineto bandwidth where it starts and down where it ends (0 µs lasts 1 µs);
    the same values bit for bit, at the same times (HTA's less its trace's first time)."""
    run, ref = counters
    ours = hta_memory_bw.memory_bw_time_series(run)
    theirs = pd.DataFrame(ref["time_series"])
    assert ours["memory_kind"].astype(str).tolist() == theirs["name"].tolist()
    np.testing.assert_array_equal(ours["memory_bw_gbps"], theirs["memory_bw_gbps"])
    shift = ours["start_us"].to_numpy() - theirs["ts"].to_numpy(np.float64)
    np.testing.assert_allclose(shift, shift[0], rtol=0, atol=1e-5)
    assert len(theirs) == 2 * (theirs["memory_bw_gbps"] > 0).sum() or (
        ours["memory_bw_gbps"] > 0
    ).sum() == sum(ref["summary"]["count"])


def test_memory_bw_summary_is_htas(counters):
    """Rule (get_memory_bw_summary): pandas' describe of each kind's series values above 0."""
    run, ref = counters
    ours = run.memory_bw_summary
    theirs = pd.DataFrame(ref["summary"])
    assert ours["memory_kind"].astype(str).tolist() == theirs["name"].tolist()
    assert ours["count"].tolist() == theirs["count"].astype(int).tolist()
    cols = ["mean", "std", "min", "p25", "p50", "p75", "max"]
    want = theirs[["mean", "std", "min", "25%", "50%", "75%", "max"]].to_numpy(np.float64)
    np.testing.assert_allclose(ours[cols].to_numpy(np.float64), want, rtol=1e-12, atol=0)
    assert run.memory_bw_time_series.equals(hta_memory_bw.memory_bw_time_series(run))


def test_memory_kinds_are_htas_prefixes():
    assert hta_memory_bw.memory_kind("Memcpy HtoD (Pageable -> Device)") == "Memcpy HtoD"
    assert hta_memory_bw.memory_kind("Memset (Device)") == "Memset"
    assert hta_memory_bw.memory_kind("dma_copy") == "Memcpy Unknown"


def test_two_ranks_loaded_together_keep_their_own_bandwidth(tmp_path):
    """Two ranks of one job in one folder: each host's series is its trace's alone (HTA's per
    rank), with the rank its distributedInfo names."""
    for r in (0, 1):
        (tmp_path / f"rank{r}.pt.trace.json.gz").write_bytes(
            (CHROME / f"hta_sampled_rank{r}.json.gz").read_bytes()
        )
    both = tw.load(tmp_path, progress=False).memory_bw_summary
    for r in (0, 1):
        mine = both[both["host"] == f"rank {r}"].reset_index(drop=True)
        assert set(mine["rank"]) == {r}
        alone = _run(f"hta_sampled_rank{r}.json.gz").memory_bw_summary
        cols = ["memory_kind", "count", "mean", "max"]
        pd.testing.assert_frame_equal(mine[cols], alone[cols], check_categorical=False)


def test_a_run_without_memory_activity_gives_empty_tables():
    run = tw.load(ROOT / "data" / "tf_xla_cpu" / "keras_fit_jit.xplane.pb", progress=False)
    for table in (run.memory_bw_summary, run.memory_bw_time_series):
        assert len(table) == 0 and len(table.columns) >= 6


@pytest.fixture(scope="module", params=DIFFS, ids=lambda p: p.stem)
def diff(request):
    ref = json.loads(request.param.read_text())
    return _run(ref["control"]), _run(ref["test"]), ref


def _hta_frame(golden: dict) -> pd.DataFrame:
    return pd.DataFrame(golden).set_index("name")


def test_compare_traces_is_htas(diff):
    """Rule (TraceDiff.compare_traces): each run's first iteration (the events starting in its
    step marker's window; GPU work by its launching call), counted and summed per name; equal
    to HTA's for all events, host events, GPU events and HTA's short names. One difference, on
    purpose: the host-side Triton launch (a cpu_op with a `stream` arg) is a host event of its
    step here; HTA takes it for GPU work with no launch, in no iteration."""
    control, test, ref = diff
    for key, (device, short) in VARIANTS.items():
        ours = trace_diff.compare_traces(control, test, device=device, use_short_name=short)
        theirs = _hta_frame(ref[key])
        if ref["test"] == TRITON and key != "gpu":
            extra = ours[ours["name"] == TRITON_OP]
            assert extra[["control_count", "test_count", "change"]].values.tolist() == [[0, 1, "+"]]
            ours = ours[ours["name"] != TRITON_OP]
        # HTA's rows come in its outer join's order; ours sorted by name.
        assert ours["name"].tolist() == sorted(theirs.index), key
        theirs = theirs.loc[ours["name"]]
        for mine, hta in (("control_count", "Control_counts"), ("test_count", "Test_counts"),
                          ("diff_count", "diff_counts")):  # fmt: skip
            assert ours[mine].tolist() == theirs[hta].astype(int).tolist(), (key, mine)
        times = (
            ("control_total_us", "Control_total_duration"),
            ("test_total_us", "Test_total_duration"),
            ("diff_us", "diff_duration"),
        )
        for mine, hta in times:
            np.testing.assert_allclose(
                ours[mine].to_numpy(), theirs[hta].to_numpy(np.float64), rtol=1e-9, atol=1e-6
            )
        assert list(ours["change"]) == list(theirs["counts_change_categories"])


def test_ops_diff_is_htas(diff):
    """Rule (TraceDiff.ops_diff): the names by change of count (added, deleted, increased,
    decreased, unchanged)."""
    control, test, ref = diff
    ours = trace_diff.ops_diff(control, test)
    if ref["test"] == TRITON:
        assert ours["added"] == [TRITON_OP]
        ours["added"] = []
    assert ours == ref["ops_diff"]


def test_the_first_iteration_is_the_smallest_step_number(diff):
    control, test, ref = diff
    for run, iterations in zip((control, test), ref["iterations"]):
        host = sorted(run.events["host"].astype(str).unique())[0]
        it = trace_diff.event_iterations(run, host)
        assert sorted(set(it[it >= 0])) == iterations


def test_a_run_without_iterations_cannot_be_diffed():
    """HTA refuses a trace without ProfilerStep markers ("doesn't have any iteration"); so do
    we, and for an iteration or host the run does not have."""
    with pytest.raises(ValueError, match="no iteration"):
        trace_diff.compare_traces(_run("eager_b200.json.gz"), _run("timesformer_h100.json.gz"))
    ranks = _run("hta_sampled_rank0.json.gz"), _run("hta_sampled_rank1.json.gz")
    with pytest.raises(ValueError, match=r"no iteration \[7\]"):
        trace_diff.compare_traces(*ranks, control_iteration=7)
    with pytest.raises(ValueError, match="no host"):
        trace_diff.compare_traces(*ranks, test_host="rank 9")
    both = trace_diff.compare_traces(*ranks, control_iteration=[551, 552], test_iteration=552)
    one = trace_diff.compare_traces(*ranks).set_index("name")["control_count"]
    two = both.set_index("name")["control_count"].reindex(one.index).fillna(0)
    assert (two.to_numpy() >= one.to_numpy()).all() and two.sum() > one.sum()


def test_compare_view_shows_the_trace_diff():
    """The compare view has HTA's trace diff of two PyTorch runs as a table, largest change in
    time first; runs without step markers or Kineto categories have none."""
    a, b = (
        _run("resnet50_v100_workers0.pt.trace.json.gz"),
        _run("resnet50_v100_workers4.pt.trace.json.gz"),
    )
    view = tw.views.compare(a, b)
    blocks = [x for x in view.blocks() if getattr(x, "id", None) == "trace_diff"]
    assert len(blocks) == 1
    d = view.trace_diff()
    want = trace_diff.compare_traces(a, b)
    assert sorted(d["name"]) == sorted(want["name"])
    assert d["diff_us"].abs().is_monotonic_decreasing
    tf = tw.load(ROOT / "data" / "tf_xla_cpu" / "keras_fit_jit.xplane.pb", progress=False)
    assert len(trace_diff.compare_traces(tf, tf)) == 0  # no Kineto events: nothing to read
    assert tw.views.compare(tf, tf).trace_diff() is None
    none = tw.views.compare(_run("eager_b200.json.gz"), b)
    assert none.trace_diff() is None
    assert not [x for x in none.blocks() if getattr(x, "id", None) == "trace_diff"]
