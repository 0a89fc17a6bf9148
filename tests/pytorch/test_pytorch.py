"""PyTorch (torch.profiler / Kineto) captures: steps, torch-tb-profiler's step-time breakdown,
the overview's verdict in PyTorch's terms, HTA's temporal and kernel breakdowns and the
operator view, on the real traces bundled in tests/data/chrome, against the figures of the
tools themselves (``tests/golden/kineto/``, made by ``scripts/make_hta_golden.py``)."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from conftest import ROOT, kineto_run

import tfprof_widgets as tw
from tfprof_widgets import schema

# The Kineto traces of the shared captures, bundled unchanged (tests/data/NOTICE).
KINETO = ROOT / "tests" / "data" / "chrome"
GOLDEN = ROOT / "tests" / "golden" / "kineto"
# trace -> its ProfilerStep#N numbers
TRACES = {
    "torch_transformer_h100.pt.trace.json.gz": [2, 3, 4, 5],
    "resnet50_v100_workers0.pt.trace.json.gz": [5, 6, 7, 8, 9, 10],
    "resnet50_v100_workers4.pt.trace.json.gz": [5, 6, 7, 8, 9, 10],
    "timesformer_h100.json.gz": [6],
    "eager_b200.json.gz": [],
}


def golden(name: str) -> dict:
    stem = name.removesuffix(".gz").removesuffix(".json").removesuffix(".trace").removesuffix(".pt")
    return json.loads((GOLDEN / f"{stem}.json").read_text())


@pytest.fixture(params=sorted(TRACES), ids=lambda n: n.split(".")[0])
def loaded(request):
    return request.param, kineto_run(KINETO / request.param)


def test_steps_are_the_profiler_steps(loaded):
    """Rule: each host ``ProfilerStep#N`` is step N of run.steps (XProf's table), even on a
    host with a GPU, where XProf would look for a device 'Steps' line; its kernels count as
    device compute, its ``cudaLaunchKernel`` calls as kernel launch."""
    name, run = loaded
    assert run.framework.name == "pytorch"
    steps = run.steps
    assert steps["step"].tolist() == TRACES[name]
    if len(steps):
        assert (steps["device_compute_us"] > 0).all()
        assert (steps["kernel_launch_us"] > 0).all()
        markers = run.events[run.events["name"].astype(str).str.startswith("ProfilerStep#")]
        on_host = markers[markers["plane"] == "/host:CPU"].sort_values("start_us")
        np.testing.assert_allclose(steps["start_us"], on_host["start_us"])
        np.testing.assert_allclose(steps["step_time_us"], on_host["dur_us"], rtol=1e-6)


def test_torch_steps_are_tb_plugins(loaded):
    """Rule (torch-tb-profiler 0.4.3's StepParser/OverallParser): steps end when the GPU work
    they launched ends, and each instant of a step counts once, for the first active role of
    Kernel > Memcpy > Memset > Communication > Runtime > DataLoader > CPU Exec, else Other.
    The golden figures are 0.4.3's own, given cuda_runtime = Runtime and a DataLoader batch
    recorded as a user annotation as an operator (what we do on purpose)."""
    name, run = loaded
    ours = run.torch_steps
    assert not schema.mismatches(ours, schema.TORCH_STEPS)
    theirs = golden(name)["tb_plugin"]["steps"]
    # 0.4.3 leaves out the tail steps we mark incomplete. Its times are sums of float µs
    # differences of 13-digit timestamps: equal to ours within 0.05 µs.
    kept = ours[ours["complete"]]
    # Ours on purpose: a trace with no ProfilerStep is one row for the whole capture, which
    # 0.4.3 numbers 0 and we leave without a number (<NA>): no step the steps table has.
    numbers = [None if pd.isna(n) else int(n) for n in kept["step"]]
    whole = not len(run.steps)
    assert numbers == [None if whole else s["step"] for s in theirs]
    for row, ref in zip(kept.itertuples(), theirs):
        assert row.step_time_us == pytest.approx(ref["total"], rel=1e-6, abs=0.05)
        for role in ("kernel", "memcpy", "memset", "communication", "runtime", "dataloader"):
            assert getattr(row, f"{role}_us") == pytest.approx(ref[role], rel=1e-6, abs=0.05), role
        assert row.cpu_exec_us == pytest.approx(ref["cpu_exec"], rel=1e-6, abs=0.05)
        assert row.other_us == pytest.approx(ref["other"], rel=1e-6, abs=0.05)


def test_overview_verdict_is_in_pytorch_terms():
    """Rule: a PyTorch run's overview judges its torch-tb-profiler roles: DataLoader at 5 % of
    the step time or more is input-bound (tb_plugin's threshold; 20 %: highly), CUDA runtime
    is graded as XProf grades kernel launch (3 % / 15 %), a GPU whose kernels run under 50 % of
    the steps' time (tb_plugin's GPU utilization) is idle; the advice names PyTorch's remedies,
    never tf.data."""
    path = KINETO / "resnet50_v100_workers0.pt.trace.json.gz"
    run = kineto_run(path)
    summary = run.overview_summary
    assert summary.input_classification == "host"  # 0 workers: a third of each step
    assert "DataLoader" in summary.input_statement and "num_workers" in summary.input_statement
    assert summary.recommendations[0] == summary.input_statement
    text = " ".join(summary.recommendations) + summary.summary_next_step
    assert "tf.data" not in text and "TF_GPU_THREAD_MODE" not in text
    workers = tw.load(KINETO / "resnet50_v100_workers4.pt.trace.json.gz").overview_summary
    assert workers.input_classification == "device"  # 4 workers: the input is hidden
    assert workers.kernel_launch_classification == "moderate"
    transformer = tw.load(KINETO / "torch_transformer_h100.pt.trace.json.gz").overview_summary
    assert transformer.kernel_launch_classification == "moderate"
    assert transformer.all_other_statement.startswith("GPU:0 (25.2%) has low utilization")


def test_a_run_without_step_markers_is_told_how_to_mark_them():
    """Rule: without ``ProfilerStep#N`` there is no step (XProf's rule) and the advice says
    how PyTorch marks steps; torch_steps has tb_plugin's one row over the host's ops, the
    whole capture, with no step number (tb_plugin's 0 is none the steps table has)."""
    path = KINETO / "eager_b200.json.gz"
    run = tw.load(path)
    assert run.steps.empty
    assert any("prof.step()" in r for r in run.overview_summary.recommendations)
    assert len(run.torch_steps) == 1 and run.torch_steps["step"].isna().all()


def test_temporal_breakdown_is_htas(loaded):
    """Rule (HTA's get_temporal_breakdown): over the span from the first GPU activity to the
    last, idle = no activity, compute = some computation kernel, non-compute = the rest; with
    two steps or more, only what was launched before the last ProfilerStep began counts.

    Against HTA with its rounding of fractional µs off (HTA_DISABLE_NS_ROUNDING=1): the same
    within 0.1 percentage point (eager_b200: HTA also counts a host op that carries a
    ``stream`` arg as GPU activity). Not against HTA's default within 1 point, on purpose:
    HTA 0.5's parser (``round_down_time_stamps``) moves every start up and every end down to
    the whole µs, a workaround for host events that seemed to overlap in ns-resolution
    traces (pytorch#122425); on the GPU it drops 5.5 % of the transformer's kernel time and
    gives 17 of its kernels a negative duration, so matching it would make our figures
    wrong. HTA's default is within 1.47 points (transformer H100: 1.46; the V100 traces,
    in whole µs, equal), and test_htas_default_is_its_rounding shows that rounding is the
    whole gap."""
    name, run = loaded
    ours = run.temporal_breakdown
    assert not schema.mismatches(ours, schema.TEMPORAL_BREAKDOWN)
    assert len(ours) == 1  # one rank, one GPU
    row = ours.iloc[0]
    assert row.idle_us + row.compute_us + row.non_compute_us == pytest.approx(row.span_us)
    ref = golden(name)
    for figures, within in ((ref["hta_ns"], 0.1), (ref, 1.47)):
        theirs = figures["temporal_breakdown"]
        for kind in ("idle", "compute", "non_compute"):
            assert getattr(row, f"{kind}_percent") == pytest.approx(
                theirs[f"{kind}_time_pctg"], abs=within
            ), kind
    assert row.span_us == pytest.approx(
        ref["hta_ns"]["temporal_breakdown"]["kernel_time_us"], abs=1
    )


def test_htas_default_is_its_rounding(loaded):
    """Why we compare with HTA's rounding off: our temporal breakdown of the same device
    activity with HTA 0.5's default rounding applied (start rounded up, start + duration
    rounded down, to the µs; an event left with a negative duration dropped) is HTA's
    default within 0.1 point, and that rounding loses kernel time: up to 7.9 % of the
    eager B200's and 5.5 % of the transformer H100's (sub-µs kernels cut to nothing or
    less); none of the V100 traces', written in whole µs."""
    from tfprof_widgets.analysis import gpu_time
    from tfprof_widgets.analysis.nesting import interval_union

    name, run = loaded
    rows = gpu_time.device_activity(run)
    ev = run.events
    start, end = ev["start_us"].to_numpy()[rows], ev["end_us"].to_numpy()[rows]
    names = ev["name"].cat.categories.to_series()
    kind = gpu_time.kernel_kinds(names)[ev["name"].cat.codes.to_numpy()[rows]]
    # 1e-6 µs: the float µs of a whole-µs trace must not round a whole step away.
    s, e = np.ceil(start - 1e-6), np.floor(end + 1e-6)
    lost = 100 * (1 - np.maximum(e - s, 0).sum() / (end - start).sum())
    keep = e >= s
    us, ue = interval_union(s[keep], e[keep])
    span = ue[-1] - us[0]
    cs, ce = interval_union(s[keep & (kind == 0)], e[keep & (kind == 0)])
    theirs = golden(name)["temporal_breakdown"]
    assert 100 * (span - (ue - us).sum()) / span == pytest.approx(theirs["idle_time_pctg"], abs=0.1)
    assert 100 * (ce - cs).sum() / span == pytest.approx(theirs["compute_time_pctg"], abs=0.1)
    assert span == pytest.approx(theirs["kernel_time_us"], abs=1)
    expected_loss = {"torch_transformer_h100": 5.5, "eager_b200": 7.9, "timesformer_h100": 0.3}
    assert lost == pytest.approx(expected_loss.get(name.split(".")[0], 0.0), abs=0.05)


def test_kernel_breakdown_is_htas(loaded):
    """Rule (HTA's get_gpu_kernel_breakdown with memory kernels): the time each set of kernel
    kinds runs at once (COMPUTATION, COMMUNICATION = ^nccl.*Kernel, MEMORY = Memcpy/Memset/
    dma), as a share of all kernel time. HTA truncates each of those stretches to whole µs
    (and by default rounds the events' times too): within 0.5 point of HTA without its ns
    rounding, 1.05 with it; equal on the V100 traces, written in whole µs."""
    name, run = loaded
    ours = run.kernel_breakdown
    assert not schema.mismatches(ours, schema.KERNEL_BREAKDOWN)
    share = dict(zip(ours["kernel_type"], ours["percent"]))
    assert sum(share.values()) == pytest.approx(100)
    ref = golden(name)
    whole_us = name.startswith("resnet50")
    for figures, within in ((ref["hta_ns"], 0.5), (ref, 1.05)):
        for kind, theirs in figures["kernel_type_breakdown"].items():
            assert share.get(kind, 0.0) == pytest.approx(
                theirs["percentage"], abs=0.051 if whole_us else within
            ), kind


def test_kernel_kinds_by_name():
    """Rule: HTA's kernel kinds by name; a name that is neither (a 'Sync' event) has none."""
    import pandas as pd

    from tfprof_widgets.analysis.gpu_time import KINDS, kernel_kinds

    names = [
        "ncclDevKernel_AllReduce",
        "Memcpy HtoD (Pageable -> Device)",
        "Memset (Device)",
        "dma_copy",
        "ampere_sgemm_128x64_tn",
        "Event Sync",
        "void at::native::vectorized",
    ]
    got = [KINDS[k] if k < len(KINDS) else None for k in kernel_kinds(pd.Series(names))]
    assert got == [
        "COMMUNICATION",
        "MEMORY",
        "MEMORY",
        "MEMORY",
        "COMPUTATION",
        None,
        "COMPUTATION",
    ]


def test_operator_view_is_tb_plugins(loaded):
    """Rules (torch-tb-profiler 0.4.3's operator view): operators nest per thread; a runtime
    call belongs to the operator with its External id and its device time is that of the
    kernels, copies and memsets with its correlation id; host self = duration - child
    operators - own runtime calls; device self = own calls' device time, device total = self
    + children's totals; an operator whose only child has its name absorbs it (one call);
    DataLoader, Optimizer.* and DataParallel.forward are no rows. Every row of 0.4.3's view
    by name is ours (sums of float µs: within 0.05 µs), and as many rows by input shape."""
    name, run = loaded
    ours = run.torch_ops
    assert not schema.mismatches(ours, schema.TORCH_OPS)
    assert not schema.mismatches(run.torch_ops_by_shape, schema.TORCH_OPS_BY_SHAPE)
    ref = golden(name)["tb_plugin"]
    theirs = ref["operators"]
    ours = ours.set_index("name")
    assert sorted(ours.index) == sorted(theirs)
    for op, figures in theirs.items():
        row = ours.loc[op]
        assert row["calls"] == figures["calls"], op
        for ours_col, key in (
            ("host_total_us", "host_total"),
            ("host_self_us", "host_self"),
            ("device_total_us", "device_total"),
            ("device_self_us", "device_self"),
        ):
            assert row[ours_col] == pytest.approx(figures[key], rel=1e-5, abs=0.05), (op, key)
    assert len(run.torch_ops_by_shape) == ref["operator_shape_groups"]
    by_shape = run.torch_ops_by_shape.groupby("name")["calls"].sum()
    assert (by_shape.reindex(ours.index) == ours["calls"]).all()


def test_operator_view_shows_the_tables_and_the_step_roles():
    """The operator view: a stacked bar per step by tb_plugin's roles (Kernel ... Other), a pie
    per figure (device/host, self/total), and the table by operator or by operator and input
    shapes, and the kernels by the operator that launched them; a run of another framework is
    told to use op stats. Static and viewer forms."""
    path = KINETO / "torch_transformer_h100.pt.trace.json.gz"
    run = kineto_run(path)
    view = tw.views.operators(run)
    assert list(view.figures()) == [
        "steps",
        "device_self_us",
        "device_total_us",
        "host_self_us",
        "host_total_us",
    ]
    bars = view.figures()["steps"].data
    assert [b.name for b in bars][:2] == ["Kernel", "Memcpy"] and len(bars) == 8
    assert sum(bars[0].y) == pytest.approx(run.torch_steps["kernel_us"].sum() / 1e3)
    assert view.html().startswith('<div class="tfprof-mount"')
    bundle = view._repr_mimebundle_()
    assert {"text/plain", "text/html"} <= set(bundle)
    assert "aten::copy_" in view.text()
    assert view.text().splitlines()[1].startswith("/device:GPU:0: GPU utilization 25.2%")
    by_shape = view.table("shape")
    assert "input_shapes" in by_shape.df.columns and len(by_shape.df) > len(run.torch_ops)
    assert run.view.operators().text() == view.text()
    kernels = view.kernel_table().df
    assert len(kernels) == len(run.torch_kernels) and "operator" in kernels.columns
    other = tw.load(ROOT / "sample_profiles" / "input_bound")
    assert "op stats" in tw.views.operators(other).text()


def test_memory_events_are_the_allocator_timeline(loaded):
    """Rule: each ``[memory]`` event (profile_memory=True) is a row of run.memory on its
    device's allocator ('GPU:0', 'CPU'), in use = its Total Allocated, reserved = in use +
    free; the peak per device is torch-tb-profiler's peak memory (the largest Total
    Allocated), with as many records; a free names the op of the allocation it frees.
    Torch 1.9 records sizes only: in use is then their running sum, never below 0."""
    name, run = loaded
    memory = run.memory
    assert not schema.mismatches(memory, schema.MEMORY)
    theirs = golden(name)["tb_plugin"]["memory"]
    assert sorted(memory["allocator"].unique()) == sorted(theirs)
    counts = memory["allocator"].value_counts()
    summary = run.memory_summary.set_index("allocator")
    for allocator, figures in theirs.items():
        assert counts[allocator] == figures["records"]
        if figures["peak_allocated"] is not None:  # torch 1.9 records no totals
            assert summary.loc[allocator, "peak_in_use_bytes"] == figures["peak_allocated"]
    if len(memory):
        allocs = memory[memory["activity"] == "ALLOCATION"]
        assert (allocs["tf_op"].astype(str) != "").mean() > 0.9  # inside an operator
        assert (memory["heap_allocated_bytes"] == memory["in_use_bytes"]).all()
        assert (memory["in_use_bytes"] >= 0).all() and memory["in_use_bytes"].max() > 0
        assert tw.views.memory_timeline(run).html().startswith('<div class="tfprof-mount"')


def test_memory_advice_at_the_device_limit():
    """Rule (torch-tb-profiler): a GPU whose allocated peak passes 90 % of its memory gets
    the gradient-checkpoint / mixed-precision advice; below that, none."""
    import types

    import pandas as pd

    from tfprof_widgets.frameworks.pytorch.steps import memory_advice

    def run_with(peak: int):
        return types.SimpleNamespace(
            memory_summary=pd.DataFrame(
                {"allocator": ["GPU:0", "CPU"], "peak_in_use_bytes": [peak, 10**12]}
            ),
            planes=pd.DataFrame(
                {"plane": ["/device:GPU:0", "/host:CPU"], "memory_size": [100, None]}
            ),
        )

    assert memory_advice(run_with(89)) == []
    (advice,) = memory_advice(run_with(95))
    assert "95.0% of" in advice and "GPU:0" in advice and "Gradient Checkpoint" in advice


def test_kernel_view_is_tb_plugins(loaded):
    """Rules (torch-tb-profiler 0.4.3's kernel view): a kernel belongs to the operator tree
    node whose runtime call launched it ('CallTreeRoot' for External id 0 or no call found);
    per kernel and operator: calls, total time and the duration-weighted blocks per SM and
    estimated achieved occupancy, as tb_plugin sums them over launch configurations."""
    name, run = loaded
    ours = run.torch_kernels
    assert not schema.mismatches(ours, schema.TORCH_KERNELS)
    theirs = golden(name)["tb_plugin"]["kernels"]
    ours = ours.assign(
        bw=ours["mean_blocks_per_sm"] * ours["total_us"],
        ow=ours["mean_est_achieved_occupancy_percent"] * ours["total_us"],
        configs=1,
    )
    got = ours.groupby(["name", "operator"])[["calls", "total_us", "bw", "ow", "configs"]].sum()
    got.index = [f"{k}###{o}" for k, o in got.index]
    assert sorted(got.index) == sorted(theirs)
    for key, ref in theirs.items():
        row = got.loc[key]
        assert row["calls"] == ref["calls"] and row["configs"] == ref["configs"], key
        assert row["total_us"] == pytest.approx(ref["total"], rel=1e-5, abs=0.05), key
        assert row["bw"] == pytest.approx(ref["blocks_x_dur"], rel=1e-4, abs=0.5), key
        assert row["ow"] == pytest.approx(ref["occupancy_x_dur"], rel=1e-4, abs=0.5), key


def test_gpu_metrics_are_tb_plugins(loaded):
    """Rules (torch-tb-profiler 0.4.3's GPUMetricsParser) over the steps' window: GPU
    utilization = time some kernel runs / window; est. SM efficiency = the running kernels'
    blocks per SM summed, capped at 1, averaged over the window; est. achieved occupancy = the
    kernels' occupancy weighted by their time in the window."""
    name, run = loaded
    ours = run.torch_gpu_metrics
    assert not schema.mismatches(ours, schema.TORCH_GPU_METRICS)
    theirs = golden(name)["tb_plugin"]["gpu_metrics"]
    assert sorted(ours["device"]) == sorted(theirs)
    for row in ours.itertuples():
        ref = theirs[row.device]
        assert row.gpu_utilization_percent == pytest.approx(100 * ref["gpu_utilization"], abs=1e-3)
        assert row.est_sm_efficiency_percent == pytest.approx(
            100 * ref["est_sm_efficiency"], abs=1e-3
        )
        assert row.est_achieved_occupancy_percent == pytest.approx(
            ref["est_achieved_occupancy"], abs=1e-3
        )


def _synthetic_collective_trace(path):
    """One step: aten::mm launches a GEMM (30-70 µs), nccl:all_reduce a ring kernel (50-90 µs)
    on another stream; the shared traces hold no collective."""

    def op(name, ts, dur, ext, cat="cpu_op"):
        return {
            "ph": "X",
            "cat": cat,
            "name": name,
            "pid": 1,
            "tid": 1,
            "ts": ts,
            "dur": dur,
            "args": {"External id": ext},
        }

    def launch(ts, corr, ext):
        return {
            "ph": "X",
            "cat": "cuda_runtime",
            "name": "cudaLaunchKernel",
            "pid": 1,
            "tid": 1,
            "ts": ts,
            "dur": 5,
            "args": {"correlation": corr, "External id": ext},
        }

    def kernel(name, ts, dur, stream, corr, ext):
        return {
            "ph": "X",
            "cat": "kernel",
            "name": name,
            "pid": 0,
            "tid": stream,
            "ts": ts,
            "dur": dur,
            "args": {
                "device": 0,
                "stream": stream,
                "correlation": corr,
                "External id": ext,
                "blocks per SM": 2.0,
                "est. achieved occupancy %": 50,
            },
        }

    events = [
        op("ProfilerStep#1", 0, 100, 1, cat="user_annotation"),
        op("aten::mm", 5, 20, 10),
        launch(10, 100, 10),
        op("nccl:all_reduce", 40, 20, 11),
        launch(45, 101, 11),
        kernel("ampere_sgemm_128x64_tn", 30, 40, 7, 100, 10),
        kernel("ncclDevKernel_AllReduce_Sum_f32_RING_LL", 50, 40, 8, 101, 11),
    ]
    path.write_text(json.dumps({"schemaVersion": 1, "traceEvents": events}))
    return path


def test_collectives_on_a_synthetic_trace(tmp_path):
    """Rules on a hand-made step (µs): the ring kernel of nccl:all_reduce is Communication
    where no other kernel runs (70-90) and the op itself counts as Communication too (40-60,
    under the GEMM); the launches' runtime outside kernels (10-15) is Runtime, aten::mm's
    other time CPU Exec (5-10, 15-25), the rest Other (20). HTA's kernel kinds: 20 µs each of
    COMPUTATION, COMPUTATION overlapping COMMUNICATION and COMMUNICATION; its temporal
    breakdown: a 60 µs span, 40 compute, 20 non-compute, no idle."""
    run = tw.load(_synthetic_collective_trace(tmp_path / "ring.pt.trace.json"))
    step = run.torch_steps.iloc[0]
    assert step["step"] == 1 and step["step_time_us"] == pytest.approx(100)
    got = {r: step[f"{r}_us"] for r in ("kernel", "communication", "runtime", "cpu_exec", "other")}
    assert got == pytest.approx(
        {"kernel": 40, "communication": 20, "runtime": 5, "cpu_exec": 15, "other": 20}
    )
    kinds = dict(zip(run.kernel_breakdown["kernel_type"], run.kernel_breakdown["time_us"]))
    assert kinds == pytest.approx(
        {"COMPUTATION": 20, "COMPUTATION overlapping COMMUNICATION": 20, "COMMUNICATION": 20}
    )
    t = run.temporal_breakdown.iloc[0]
    assert (t.span_us, t.idle_us, t.compute_us, t.non_compute_us) == pytest.approx((60, 0, 40, 20))
    ops = run.torch_ops.set_index("name")
    assert ops.loc["aten::mm", "device_self_us"] == pytest.approx(40)
    assert ops.loc["nccl:all_reduce", "device_self_us"] == pytest.approx(40)
    assert ops.loc["aten::mm", "host_self_us"] == pytest.approx(15)
    metrics = run.torch_gpu_metrics.iloc[0]
    assert metrics.gpu_utilization_percent == pytest.approx(60)  # 30-90 of 0-100
    assert metrics.est_sm_efficiency_percent == pytest.approx(60)  # 2 blocks/SM: capped at 1
    assert metrics.est_achieved_occupancy_percent == pytest.approx(50)
