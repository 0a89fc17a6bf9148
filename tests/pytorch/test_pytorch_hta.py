"""HTA's idle time breakdown, kernel launch statistics, communication/computation overlap and
queue length summary (``tfprof_widgets.frameworks.pytorch.hta``) against HTA 0.5 at
exact times (``HTA_DISABLE_NS_ROUNDING=1``) on every bundled Kineto trace: the goldens in
``tests/golden/hta/`` made by ``scripts/make_hta_goldens.py`` (``exact``: HTA's figures before
it rounds them to 2 decimals)."""

from __future__ import annotations

import gzip
import json
import pathlib
import re

import numpy as np
import pandas as pd
import pytest

import tfprof_widgets as tw
from tfprof_widgets import schema, stat_columns
from tfprof_widgets.frameworks.pytorch import hta

ROOT = pathlib.Path(__file__).resolve().parents[1]
CHROME = ROOT / "data" / "chrome"
GOLDEN = sorted((ROOT / "golden" / "hta").glob("*.json"))
SMALL_QUEUE = 3  # scripts/make_hta_goldens.py's
# HTA takes this derived trace's host-side Triton launch (a cpu_op with a `stream` arg) for
# GPU work; test_hta_counts_a_host_triton_launch_as_gpu_work shows it.
WITH_TRITON = "hta_sampled_rank0_triton.json.gz"
REL = 1e-6
# HTA's times are µs floats of the trace's absolute times less the first: a difference of two
# carries up to ~1e-6 µs of float rounding (ours are exact picoseconds).
ABS_US = 1e-5


@pytest.fixture(scope="module", params=GOLDEN, ids=lambda p: p.stem)
def case(request):
    ref = json.loads(request.param.read_text())
    return tw.load(CHROME / ref["trace"], progress=False), ref


def _close(ours, theirs, atol: float = ABS_US) -> None:
    np.testing.assert_allclose(
        np.asarray(ours, np.float64), np.asarray(theirs, np.float64), rtol=REL, atol=atol
    )


def test_goldens_cover_every_bundled_kineto_trace():
    """Every Kineto trace in tests/data/chrome (the shared captures/kineto ones are bundled
    there) has its golden."""
    runtime = re.compile(rb'"cat": ?"(?:cuda_runtime|Runtime)"')
    kineto = set()
    for p in CHROME.glob("*.json.gz"):
        with gzip.open(p) as f:
            if runtime.search(f.read()):
                kineto.add(p.name)
    assert len(kineto) >= 8
    assert kineto == {json.loads(g.read_text())["trace"] for g in GOLDEN}


def test_idle_time_breakdown_is_htas(case):
    """Rule (get_idle_time_breakdown): each stream's gaps before its kernels, memcpys and
    memsets, as host wait (the launching call began after the previous activity ended),
    kernel wait (< 30 µs) or other; each category's sum and share of the stream's idle time.
    Equal to HTA unrounded, and rounded to 2 decimals to what HTA returns."""
    run, ref = case
    ours = hta.idle_time_breakdown(run)
    for golden, rounded in ((ref["exact"]["idle_time_breakdown"], False),
                            (ref["idle_time_breakdown"], True)):  # fmt: skip
        theirs = pd.DataFrame(golden).sort_values(["stream", "idle_category"])
        assert ours["stream"].tolist() == theirs["stream"].tolist()
        assert ours["idle_category"].astype(str).tolist() == theirs["idle_category"].tolist()
        got = ours[["idle_time_us", "idle_time_ratio"]].to_numpy()
        want = theirs[["idle_time", "idle_time_ratio"]].to_numpy(np.float64)
        if rounded:
            np.testing.assert_array_equal(np.round(got, 2), want)
        else:
            _close(got, want)
    assert set(ours["idle_category"].astype(str)) <= {"host_wait", "kernel_wait", "other"}


def test_kernel_launch_stats_are_htas(case):
    """Rule (get_cuda_kernel_launch_stats): per correlation id, the launching call's and the
    GPU activity's durations and the launch delay (call end to activity start, 0 if
    negative); outliers at HTA's cutoffs. HTA's rows are ours launched by its four calls."""
    run, ref = case
    ours = hta.kernel_launch_stats(run)
    theirs = pd.DataFrame(ref["kernel_launch_stats"]).sort_values("correlation")
    mine = ours[ours["launch"].astype(str).isin(hta.HTA_LAUNCH_STATS_CALLS)]
    assert mine["correlation"].tolist() == theirs["correlation"].tolist()
    _close(mine["cpu_duration_us"], theirs["cpu_duration"])
    _close(mine["gpu_duration_us"], theirs["gpu_duration"])
    _close(mine["launch_delay_us"], theirs["launch_delay"])
    cpu, gpu = theirs["cpu_duration"].to_numpy(), theirs["gpu_duration"].to_numpy()
    # HTA's three plots: short kernels, runtime outliers, launch delay outliers.
    assert mine["short_kernel"].tolist() == ((cpu <= 50) & (gpu < cpu)).tolist()
    assert mine["runtime_outlier"].tolist() == (cpu > 50).tolist()
    assert mine["launch_delay_outlier"].tolist() == (theirs["launch_delay"] > 100).tolist()
    assert (ours["launch_delay_us"] >= 0).all()


def test_launch_stats_also_count_driver_launches():
    """Beyond HTA: cuBLAS's and cuDNN's kernels on recent PyTorch are launched by the
    driver's cuLaunchKernelEx, which HTA's launch statistics leave out (201 of the H100
    transformer's 1,216 launches); ours keep them, named by ``launch``, each with the matrix
    multiply or attention op that launched it."""
    run = tw.load(CHROME / "torch_transformer_h100.pt.trace.json.gz", progress=False)
    stats = hta.kernel_launch_stats(run)
    driver = stats[stats["launch"].astype(str) == "cuLaunchKernelEx"]
    assert len(driver) == 201 and len(stats) == 1216
    assert driver["kernel"].astype(str).str.contains("nvjet|cudnn").all()
    ops = {"aten::mm", "aten::addmm", "aten::_cudnn_attention_forward",
           "aten::_cudnn_attention_backward"}  # fmt: skip
    assert set(driver["aten_op"].astype(str)) == ops


def test_aten_op_is_the_innermost_enclosing_one():
    """Rule: a launch's aten op is the innermost ``aten::`` op on its thread whose interval
    holds the call's (HTA's get_aten_op_kernels_and_delay takes the latest-starting one that
    does, on any thread)."""
    run = tw.load(CHROME / "torch_transformer_h100.pt.trace.json.gz", progress=False)
    stats = hta.kernel_launch_stats(run).set_index("correlation")
    ev = run.events
    corr, has = stat_columns.numbers(run.stat_store, "correlation", len(ev))
    name = ev["name"].astype(str)
    calls = ev[name.isin(["cudaLaunchKernel", "cuLaunchKernelEx"]).to_numpy() & has]
    aten = ev[name.str.startswith("aten::")]
    for row, call in calls.iloc[:: max(1, len(calls) // 60)].iterrows():
        if corr[row] not in stats.index:
            continue  # launched in the last step: not counted
        holds = aten[(aten["line"] == call["line"]) & (aten["start_us"] <= call["start_us"])
                     & (aten["end_us"] >= call["end_us"])]  # fmt: skip
        want = holds.sort_values("start_us", kind="stable").iloc[-1]["name"] if len(holds) else None
        assert stats.loc[corr[row], "aten_op"] == want, corr[row]
    assert stats["aten_op"].notna().mean() > 0.9


def test_comm_comp_overlap_is_htas(case):
    """Rule (get_comm_comp_overlap): the time some NCCL kernel and some computation kernel
    both run over the time some NCCL kernel runs, %; NaN without NCCL kernels."""
    run, ref = case
    if ref["trace"] == WITH_TRITON:
        pytest.skip("HTA counts the host-side Triton launch: see the test below")
    ours = hta.comm_comp_overlap(run)["comp_comm_overlap_percent"]
    _close(
        ours, pd.Series(ref["exact"]["comm_comp_overlap"]["comp_comm_overlap_pctg"], dtype=float)
    )
    _close(
        np.round(ours, 2),
        pd.Series(ref["comm_comp_overlap"]["comp_comm_overlap_pctg"], dtype=float),
    )


def test_hta_counts_a_host_triton_launch_as_gpu_work():
    """Where HTA is wrong: torch.compile's host-side Triton launch events carry a ``stream``
    arg, and HTA takes every event with one for GPU work. The same real trace with eager_b200's
    Triton launch event laid over its first NCCL kernel: HTA's overlap jumps from 11.8% to
    20.4% (the host event 'computes' during the collective); ours stays 11.8%, as it is."""
    plain = json.loads((ROOT / "golden" / "hta" / "hta_sampled_rank0.json").read_text())
    with_triton = json.loads(
        (ROOT / "golden" / "hta" / "hta_sampled_rank0_triton.json").read_text()
    )
    hta_plain = plain["exact"]["comm_comp_overlap"]["comp_comm_overlap_pctg"][0]
    hta_triton = with_triton["exact"]["comm_comp_overlap"]["comp_comm_overlap_pctg"][0]
    assert hta_triton > hta_plain + 8
    ours = hta.comm_comp_overlap(tw.load(CHROME / WITH_TRITON, progress=False))
    _close(ours["comp_comm_overlap_percent"], [hta_plain])


def _tied(run) -> bool:
    """Whether some stream's queue changes at two equal times (HTA's order of those is its
    unstable sort's)."""
    series, _ = hta.queue_length_series(run)
    return bool(series.duplicated(["key", "start_us"]).any())


def test_queue_length_summary_is_htas(case):
    """Rule (get_queue_length_summary): a stream's queue length goes up where a launch call
    begins and down where what it launched starts; describe() of its values. Where changes
    tie (whole-µs traces) HTA's mean lies between ours with the launches first and with the
    starts first (HTA's order there is its unstable sort's); elsewhere equal."""
    run, ref = case
    ours = hta.queue_length_summary(run)
    theirs = pd.DataFrame(ref["queue_length_summary"]).sort_values("stream")
    assert ours["stream"].tolist() == theirs["stream"].tolist()
    exact = ["count", "min", "p25", "p50", "p75", "max"]
    _close(ours[exact], theirs[["count", "min", "25%", "50%", "75%", "max"]])
    if not _tied(run):
        _close(ours[["mean", "std"]], theirs[["mean", "std"]])
        return
    starts_first, _ = hta.queue_length_series(run, enqueue_first=False)
    low = starts_first.groupby("key")["queue_length"].mean().to_numpy()
    high = ours["mean"].to_numpy()
    assert ((low <= theirs["mean"] + 1e-9) & (theirs["mean"] <= high + 1e-9)).all()
    # One length in a tie moves by 2 of thousands: the spread within 1e-4.
    np.testing.assert_allclose(ours["std"], theirs["std"], rtol=1e-4)


def test_time_blocked_on_a_full_queue_is_htas(case):
    """Rule (get_time_spent_blocked_on_full_queue): the time from each change that leaves a
    stream's queue at the maximum or above to its next change, and that over the trace's
    duration. At HTA's 1,024 no stream of these traces blocks; at 3 HTA keeps one stream per
    rank (the last it visits): ours equals it there."""
    run, ref = case
    assert (hta.queue_length_summary(run)["blocked_us"] == 0).all()
    assert not ref["blocked_on_full_queue"]["stream"]
    small = hta.queue_length_summary(run, max_queue_length=SMALL_QUEUE).set_index("stream")
    theirs = pd.DataFrame(ref["blocked_on_small_queue"])
    if not len(theirs):  # no stream reaches it (eager_b200)
        assert (small["max"] < SMALL_QUEUE).all() and (small["blocked_us"] == 0).all()
        return
    got = small.loc[theirs["stream"], ["blocked_us", "blocked_ratio"]]
    want = theirs[["duration_at_max_queue_length", "relative_duration_at_max_queue_length"]]
    # Exact on whole-µs traces too: changes at one time hold their lengths for 0 µs but the last.
    _close(got, want)


def test_ranks_of_one_job_loaded_together_are_htas_per_rank(tmp_path):
    """Two ranks of one NCCL job (HTA's own sample) in one folder load as two hosts; each
    host's rows carry the rank its trace's distributedInfo names and equal HTA's analyses of
    that rank alone (correlation ids and the last step are each rank's own)."""
    for r in (0, 1):
        (tmp_path / f"rank{r}.pt.trace.json.gz").write_bytes(
            (CHROME / f"hta_sampled_rank{r}.json.gz").read_bytes()
        )
    run = tw.load(tmp_path, progress=False)
    overlap = hta.comm_comp_overlap(run)
    stats = hta.kernel_launch_stats(run)
    queue = hta.queue_length_summary(run)
    idle = hta.idle_time_breakdown(run)
    for r in (0, 1):
        ref = json.loads((ROOT / "golden" / "hta" / f"hta_sampled_rank{r}.json").read_text())
        host = f"rank {r}"
        mine = overlap[overlap["host"] == host]
        assert mine["rank"].tolist() == [r]
        _close(
            mine["comp_comm_overlap_percent"],
            ref["exact"]["comm_comp_overlap"]["comp_comm_overlap_pctg"],
        )
        launches = stats[stats["host"] == host]
        assert set(launches["rank"]) == {r}
        assert launches["correlation"].tolist() == sorted(ref["kernel_launch_stats"]["correlation"])
        _close(
            launches["launch_delay_us"],
            pd.DataFrame(ref["kernel_launch_stats"]).sort_values("correlation")["launch_delay"],
        )
        q = queue[queue["host"] == host]
        _close(q["mean"], pd.DataFrame(ref["queue_length_summary"]).sort_values("stream")["mean"])
        i = idle[idle["host"] == host]
        _close(
            i["idle_time_us"],
            pd.DataFrame(ref["exact"]["idle_time_breakdown"]).sort_values(
                ["stream", "idle_category"]
            )["idle_time"],
        )


def test_rank_is_missing_without_distributed_info():
    """A trace without distributedInfo names no rank (HTA calls a lone trace rank 0)."""
    run = tw.load(CHROME / "torch_transformer_h100.pt.trace.json.gz", progress=False)
    for table in (hta.comm_comp_overlap(run), hta.idle_time_breakdown(run)):
        assert len(table) and table["rank"].isna().all()


def test_a_run_without_pytorch_gpu_activity_gives_empty_tables():
    """A TensorFlow/XLA capture has no Kineto launches: every table is empty, with its
    columns, and nothing fails."""
    run = tw.load(ROOT / "data" / "tf_xla_cpu" / "keras_fit_jit.xplane.pb", progress=False)
    for fn, table in (
        (hta.idle_time_breakdown, schema.IDLE_TIME_BREAKDOWN),
        (hta.kernel_launch_stats, schema.KERNEL_LAUNCH_STATS),
        (hta.comm_comp_overlap, schema.COMM_COMP_OVERLAP),
        (hta.queue_length_summary, schema.QUEUE_LENGTH_SUMMARY),
    ):
        out = fn(run)
        assert list(out.columns) == list(table) and len(out) == 0, fn.__name__


def test_each_rank_keeps_its_own_last_step(tmp_path):
    """HTA leaves out what each rank launched in its own last ProfilerStep: with two ranks
    in one run, each host's temporal breakdown is the one of its trace loaded alone (rank 1's
    last step begins before rank 0's, so one last step for the run would keep more of it)."""
    from tfprof_widgets.analysis.gpu_time import temporal_breakdown

    for r in (0, 1):
        (tmp_path / f"rank{r}.pt.trace.json.gz").write_bytes(
            (CHROME / f"hta_sampled_rank{r}.json.gz").read_bytes()
        )
    both = temporal_breakdown(tw.load(tmp_path, progress=False)).set_index("host")
    for r in (0, 1):
        alone = temporal_breakdown(tw.load(CHROME / f"hta_sampled_rank{r}.json.gz", progress=False))
        cols = ["span_us", "idle_us", "compute_us", "non_compute_us"]
        _close(both.loc[f"rank {r}", cols].to_numpy(np.float64), alone[cols].to_numpy()[0])
