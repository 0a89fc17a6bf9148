"""Steps, overview and input-pipeline analysis against xprof on the same captures."""

import numpy as np
import pandas as pd
import pytest
from conftest import SAMPLES
from golden_tables import golden
from xspace_builder import STEPS_LINE_ID, US, XSpaceBuilder

import tfprof_widgets as tw
from tfprof_widgets import schema
from tfprof_widgets.analysis.input_pipeline import input_pipeline
from tfprof_widgets.analysis.overview import input_verdict, overview_summary
from tfprof_widgets.analysis.steps import overview_steps

# xprof's pod viewer step breakdown ids -> our columns.
POD_IDS = {
    "1": "device_compute_us",
    "2": "device_to_device_us",
    "3": "device_collectives_us",
    "4": "host_compute_us",
    "5": "kernel_launch_us",
    "6": "input_us",
    "7": "output_us",
    "8": "compile_us",
    "9": "all_others_us",
}


def pod_viewer_steps(sample: str) -> pd.DataFrame:
    rows = []
    for s in golden(sample, "pod_viewer")["podStatsSequence"].get("podStatsMap", []):
        for core in s["podStatsPerCore"].values():
            row = {"group_id": s["stepNum"], "step_time_us": core["totalDurationUs"]}
            row.update({POD_IDS[k]: v for k, v in core["stepBreakdownUs"].items()})
            rows.append(row)
    return pd.DataFrame(rows)


@pytest.mark.parametrize("sample", ["input_bound", "custom_loop"])
def test_step_breakdown_matches_xprof(sample):
    """Each category within 1 % of step time, step by step. xprof numbers steps by group id
    and keeps the well-formed ones (on a host without a device: a group with host compute),
    which leaves out the capture's cut first and last step here; so do we."""
    steps = tw.load(SAMPLES / sample).steps
    gold = pod_viewer_steps(sample)
    assert len(gold) == len(steps)
    m = gold.merge(steps.astype({"group_id": int}), on="group_id", suffixes=("_xprof", ""))
    assert len(m) == len(gold)
    for col in ["step_time_us", *POD_IDS.values()]:
        err = (m[f"{col}_xprof"] - m[col]).abs() / m["step_time_us_xprof"]
        assert err.max() < 0.01, (col, err.max())
    np.testing.assert_allclose(
        steps[list(POD_IDS.values())].sum(axis=1), steps["step_time_us"], rtol=1e-9
    )


def test_keras_callback_steps_found_where_xprof_finds_none():
    """Keras 3's TensorBoard callback marks batches 'Profiled batch' (step_num, no _r):
    xprof 2.24 reports no step; we report the profiled batches as steps, on purpose."""
    assert golden("keras_fit", "pod_viewer")["podStatsSequence"].get("podStatsMap", []) == []
    steps = tw.load(SAMPLES / "keras_fit").steps
    assert steps["step"].tolist() == [2, 3, 4, 5]
    assert (steps["host_compute_us"] > 0).all()


@pytest.mark.parametrize("sample", ["input_bound", "custom_loop"])
def test_overview_matches_xprof(sample):
    run = tw.load(SAMPLES / sample)
    o = overview_summary(run)
    p = golden(sample, "input_pipeline_analyzer")[1]["p"]
    assert o.input_statement == p["input_conclusion"]
    assert o.summary_next_step == p["summary_nextstep"]
    for ours, key in [
        (o.step_time_ms_avg, "steptime_ms_average"),
        (o.step_time_ms_std, "steptime_ms_standard_deviation"),
        (o.step_time_ms_min, "steptime_ms_minimum"),
        (o.step_time_ms_max, "steptime_ms_maximum"),
        (o.breakdown_ms_avg["host_compute_us"], "host_compute_time_ms_avg"),
        (o.breakdown_ms_avg["input_us"], "infeed_time_ms_avg"),
        (o.breakdown_ms_avg["all_others_us"], "other_time_ms_avg"),
    ]:
        assert f"{ours:.1f}" == p[key], key
    env = golden(sample, "overview_page")[2]["p"]
    assert (o.device_type, str(o.device_core_count)) == (
        env["device_type"],
        env["device_core_count"],
    )
    assert (
        f"{o.host_op_time_percent:.1f}%"
        == golden(sample, "overview_page")[0]["p"]["host_tf_op_percent"]
    )


def test_input_bound_sample_is_diagnosed():
    o = overview_summary(tw.load(SAMPLES / "input_bound"))
    assert o.input_classification == "host"
    assert o.input_statement.startswith("Your program is HIGHLY input-bound because ")
    assert o.input_percent > 20
    assert o.n_steps == 8 and "input_pipeline_view" in o.tools


@pytest.mark.parametrize("sample", ["input_bound", "custom_loop", "keras_fit"])
def test_input_pipeline_host_side_matches_xprof(sample):
    ip = input_pipeline(tw.load(SAMPLES / sample))
    gold = golden(sample, "input_pipeline_analyzer")[2]
    for ours, key in [
        (ip.enqueue_us, "enqueue_us"),
        (ip.demanded_file_read_us, "demanded_file_read_us"),
        (ip.advanced_file_read_us, "advanced_file_read_us"),
        (ip.preprocessing_us, "preprocessing_us"),
        (ip.unclassified_non_enqueue_us, "unclassified_nonequeue_us"),
    ]:
        assert f"{ours:.3f}" == gold["p"][key], key
    from golden_tables import data_table

    g = data_table(gold)
    m = g.merge(ip.input_ops, left_on="opName", right_on="operation")
    assert len(m) == len(g) == len(ip.input_ops)
    np.testing.assert_allclose(m["selfTimeInMs"] * 1e3, m["total_self_time_us"], rtol=1e-6)
    np.testing.assert_allclose(m["selfTimeInPercent"] * 100, m["self_time_percent"], rtol=1e-6)
    assert (m["category_x"] == m["category_y"]).all()


def test_verdict_thresholds():
    assert input_verdict(25.0, 0.0)[0] == "host"
    assert input_verdict(20.0, 0.0)[0] == "host"
    assert input_verdict(5.0, 0.0)[0] == "both" and "MODERATELY" in input_verdict(5, 0)[1]
    assert input_verdict(4.9, 3.0)[0] == "both" and "POTENTIALLY" in input_verdict(4.9, 3)[1]
    assert input_verdict(4.9, 2.9)[0] == "device"


def gpu_step_capture(tmp_path, half=False, wait_input=False, n_steps=3, half_steps=(), shape=None):
    """A GPU capture with device steps, kernels, copies and an input wait: every number of
    its breakdown is known by construction. Kernels are 16-bit with ``half`` (or in the
    steps of ``half_steps``)."""
    b = XSpaceBuilder("g")
    cpu = b.plane("/host:CPU")
    py = cpu.line("python", 1)
    ex = cpu.line("tf_Compute/2", 2)
    dev = b.plane("/device:GPU:0", 1)
    stream = dev.line("Stream #1(Compute)", 1)
    steps_line = dev.line("Steps", STEPS_LINE_ID)
    for s in range(n_steps):
        t0 = s * 1000 * US
        py.event("train", t0, 1000 * US, {"step_num": s, "group_id": s})
        if wait_input:
            py.event("IteratorGetNext", t0 + 10 * US, 100 * US, {"group_id": s})
        ex.event(
            "dense/MatMul:MatMul", t0 + 200 * US, 50 * US, {"group_id": s, "correlation_id": s}
        )
        steps_line.event(str(s), t0 + 100 * US, 800 * US, {"group_id": s})
        kname = "volta_h884gemm_fp16" if half or s in half_steps else "volta_sgemm"
        stats = {"group_id": s, "correlation_id": s, **({"shape": shape} if shape else {})}
        stream.event(kname, t0 + 300 * US, 400 * US, stats)
        stream.event(
            "MemcpyHToD", t0 + 150 * US, 100 * US, {"group_id": s, "correlation_id": 100 + s}
        )
    return tw.load(b.write(tmp_path / "g.xplane.pb"))


def test_gpu_step_breakdown_by_construction(tmp_path):
    """With a GPU plane, XProf builds steps from device events alone
    (ConvertXSpaceToOpStats: host step events only when there is no device): the step is
    the device's 'Steps' marker (100-900 µs into each 1000 µs host step), and the host's
    IteratorGetNext and kernel launch count nowhere."""
    steps = gpu_step_capture(tmp_path, wait_input=True).steps
    assert len(steps) == 3
    row = steps.iloc[1]
    assert row["step_time_us"] == 800
    assert row["device_compute_us"] == 400
    assert row["device_compute_32_us"] == 400 and row["device_compute_16_us"] == 0
    # The device copy is named 'MemcpyHToD', the one spelling XProf's rule knows: input.
    assert row["host_to_device_us"] == 100 and row["input_us"] == 100
    assert row["host_wait_input_us"] == 0
    assert row["kernel_launch_us"] == 0 and row["host_compute_us"] == 0
    assert row["all_others_us"] == 800 - 400 - 100


@pytest.mark.parametrize(
    "half,shape,want",
    [(True, "(float[32,64])", 0.0), (False, "(half[32,64], half[64])", 100.0)],
    ids=["fp16 name, float shapes", "sgemm name, half shapes"],
)
def test_precision_reads_the_shape_stat_before_the_name(tmp_path, half, shape, want):
    """TF records a kernel's tensor shapes in the 'shape' stat; XProf's ClassifyGpuEvent calls
    a kernel 16-bit when they mention 'half', and looks at the name ('half', 'fp16') only
    when there are no shapes (the real 8-GPU capture: 30.5 %, by names it would be 99.97 %)."""
    o = overview_summary(gpu_step_capture(tmp_path, half=half, shape=shape))
    assert o.device_compute_16bit_percent == want


def test_gpu_precision(tmp_path):
    run = gpu_step_capture(tmp_path, half=True)
    o = overview_summary(run)
    assert o.device_compute_16bit_percent == 100.0
    assert o.hardware_type == "GPU" and o.device_core_count == 1


@pytest.mark.parametrize("n_steps", [5, 6])
def test_overview_averages_drop_the_edge_steps_only_past_five(n_steps, tmp_path):
    """XProf averages over all of a host's steps, dropping the first and the last (usually cut
    by the capture window) only when it has more than five: tests/golden/steps_<n> is xprof
    2.24's overview of CPU captures whose step s lasts 1 + 0.3 s ms."""
    from xspace_builder import cpu_steps_capture

    run = tw.load(cpu_steps_capture(n_steps).write(tmp_path / "cpu.xplane.pb"))
    o = overview_summary(run)
    gold = {}
    for table in golden(f"steps_{n_steps}", "overview_page"):
        gold.update(table.get("p", {}))
    assert o.n_steps == (n_steps if n_steps <= 5 else n_steps - 2)
    assert f"{o.step_time_ms_min:.1f}" == gold["steptime_ms_minimum"]
    assert f"{o.step_time_ms_max:.1f}" == gold["steptime_ms_maximum"]
    assert f"{o.step_time_ms_avg:.1f}" == gold["steptime_ms_average"]
    assert len(input_pipeline(run).steps) == o.n_steps  # the input-pipeline page keeps the same


def test_precision_shares_are_over_every_step(tmp_path):
    """The overview averages over the kept steps (first and last dropped past five steps) but
    computes the 16/32-bit shares of device compute over every step, as XProf does: its
    precision stats come from all the non-overlapped step events (ComputePrecisionStats in
    xprof/convert/xplane_to_op_stats.cc), while only the step database used for the averages
    drops the edge steps (ConvertStepEventsToStepDb). Here only the first step, which the
    averages leave out, runs 16-bit kernels: 1 of 8 equal steps."""
    run = gpu_step_capture(tmp_path, n_steps=8, half_steps={0})
    o = overview_summary(run)
    assert o.n_steps == 6 and overview_steps(run.steps)["step"].tolist() == list(range(1, 7))
    assert (overview_steps(run.steps)["device_compute_16_us"] == 0).all()
    assert o.device_compute_16bit_percent == pytest.approx(100 / 8)
    assert o.device_compute_32bit_percent == pytest.approx(700 / 8)


def test_multi_host_steps_and_comparison(tmp_path):
    from xspace_builder import write_multi_host_run

    from tfprof_widgets.analysis.steps import per_host_steps

    write_multi_host_run(tmp_path, hosts=("w0", "w1", "w2"), n_steps=4)
    run = tw.load(tmp_path)
    assert set(run.steps["host"]) == {"w0", "w1", "w2"}
    table = per_host_steps(run)
    assert list(table.columns) == ["w0", "w1", "w2", "slowest_host", "spread_us", "bottleneck"]
    assert len(table) == 4 and table.index.name == "step"
    # The synthetic hosts run identical steps: no spread, any host is "slowest".
    assert (table["spread_us"] == 0).all()
    assert (table["bottleneck"] != "").all()


def test_columns():
    steps = tw.load(SAMPLES / "input_bound").steps
    assert list(steps.columns) == list(schema.STEPS)
    assert len(overview_steps(steps)) == len(steps) - 2


def test_every_table_has_host_on_a_multi_host_run(tmp_path):
    from xspace_builder import write_multi_host_run

    write_multi_host_run(tmp_path, hosts=("a", "b"), n_steps=3)
    run = tw.load(tmp_path)
    for name, table in [
        ("steps", run.steps),
        ("ops", run.ops),
        ("kernels", run.kernels),
        ("memory", run.memory),
        ("memory_summary", run.memory_summary),
    ]:
        assert set(table["host"].astype(str)) == {"a", "b"}, name
    ops = run.ops
    # Each host's percentages add up on its own.
    for _, g in ops.groupby(["host", "host_or_device"], observed=True):
        assert g["self_time_percent"].sum() == pytest.approx(100)
    # The two hosts ran the same program: identical per-host op tables.
    a = ops[ops["host"] == "a"].drop(columns="host").reset_index(drop=True)
    b = ops[ops["host"] == "b"].drop(columns="host").reset_index(drop=True)
    pd.testing.assert_frame_equal(a, b)


def test_overview_summary_as_a_table():
    o = overview_summary(tw.load(SAMPLES / "input_bound"))
    table = o.to_frame().set_index("name")["value"]
    assert table["input_classification"] == "host"
    assert table["n_steps"] == 8
    assert table["avg_input_us"] == pytest.approx(o.breakdown_ms_avg["input_us"])
    assert "HIGHLY input-bound" in repr(o)


def test_flows_link_within_their_own_host(tmp_path):
    """Flow ids are a capture's own: two hosts that both use producer id s for their step s
    keep their executor work in their own steps (a consumer never joins the group of the
    other host's producer with the same id)."""
    from xspace_builder import cpu_steps_capture

    run_dir = tmp_path / "plugins" / "profile" / "2026_01_01_00_00_00"
    for host in ("a", "b"):
        cpu_steps_capture(4, host).write(run_dir / f"{host}.xplane.pb")
    run = tw.load(run_dir, progress=False)
    ev = run.events
    for host in ("a", "b"):
        mine = ev[ev["host"] == host]
        markers = mine[mine["name"] == "train"]
        work = mine[mine["name"] == "ExecutorState::Process"]
        assert sorted(work["group_id"].tolist()) == sorted(markers["group_id"].tolist())
    steps = run.steps
    assert steps.groupby("host", observed=True).size().to_dict() == {"a": 4, "b": 4}
