"""TensorBoard's numbers on captures of other hardware: the real 8-GPU BERT capture (TF 2.x,
2020) and a synthetic TPU capture shaped like libtpu's, against xprof 2.24's own output for
them (tests/golden/, made by scripts/make_golden.py)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from fidelity_figures import differences, our_figures, rows, xprof_figures, xprof_rows_shown
from golden_tables import BERT, golden, synthetic_gpu_path, synthetic_tpu_path

import tfprof_widgets as tw
from tfprof_widgets.analysis.overview import overview_summary
from tfprof_widgets.frameworks.tensorflow.op_names import parse_tf_op

TOOLS = ("overview_page", "framework_op_stats", "memory_profile", "kernel_stats")


@pytest.fixture(scope="module")
def bert():
    return tw.load(BERT)


@pytest.fixture(scope="module")
def tpu():
    return tw.load(synthetic_tpu_path())


def xprof(name: str) -> dict:
    return xprof_figures({t: golden(name, t) for t in TOOLS})


def test_bert_every_headline_figure_is_xprofs(bert):
    """Steps, every breakdown category, the verdict and every statement, the 16-bit share,
    op placement, host and device IDLE, the memory peaks of all four allocators and the
    kernel stats: within 0.5 % (numbers) or equal (text)."""
    theirs = xprof("bert_8gpu")
    assert theirs["steps"] == 1 and theirs["all_others_ms_avg"] > 6
    assert theirs["device_compute_16bit_percent"] == 30.5
    assert len([k for k in theirs if k.startswith("memory ")]) == 4 * 6
    assert differences(our_figures(bert), theirs) == []


def test_bert_verdict_text(bert):
    o = overview_summary(bert)
    assert o.input_statement == (
        "Your program is POTENTIALLY input-bound because 30.2% of the total step time sampled "
        "is spent on 'All Others' time (which could be due to I/O or Python execution or both)."
    )
    # Device steps only (the capture has GPU planes): no host kernel launch or input time.
    assert o.breakdown_ms_avg["kernel_launch_us"] == 0 and o.breakdown_ms_avg["input_us"] == 0


def test_bert_host_rows_are_xprofs_plus_the_smaller_ones(bert):
    """xprof keeps its top 500 host rows (IDLE included): ours has exactly those, with the
    same numbers, and only rows below them besides."""
    gold = rows(golden("bert_8gpu", "framework_op_stats")[0])
    gold = gold[gold["host_or_device"] == "Host"]
    ops = bert.ops
    host = ops[ops["host_or_device"] == "Host"]
    shown = xprof_rows_shown(host)
    assert len(shown) == len(gold) == 500
    m = gold.merge(host, on="operation", suffixes=("_xprof", ""))
    assert len(m) == len(gold)
    np.testing.assert_array_equal(m["occurrences_xprof"], m["occurrences"])
    np.testing.assert_allclose(m["total_time"], m["total_time_us"], rtol=1e-6, atol=1e-3)
    np.testing.assert_allclose(m["total_self_time"], m["total_self_time_us"], rtol=1e-6, atol=1e-3)
    assert (m["type_xprof"].astype(str) == m["type"].astype(str)).all()
    rest = host[~host["operation"].isin(gold["operation"])]
    assert len(rest) > 0
    assert rest["total_self_time_us"].max() <= gold["total_self_time"].min()


def test_bert_device_ops_beyond_xprof(bert):
    """xprof 2.24 reports no device op for this capture (its kernels name their TF op in
    the 'level 0' stat, not in 'tf_op'); we do, marked beyond_xprof, and their time is the
    time of the kernels and copies that carry such a name. IDLE + that time = xprof's IDLE."""
    ops = bert.ops
    dev = ops[(ops["host_or_device"] == "Device") & (ops["type"] != "IDLE")]
    assert len(dev) > 1000 and dev["beyond_xprof"].all()
    ev = bert.events
    level0 = bert.stat("level 0").astype(object).fillna("").astype(str)
    gpu = ev["plane"].astype(str).str.startswith("/device:GPU:").to_numpy()
    # A 'level 0' that names a TF op ("name:Type"); some name TraceMes instead.
    names_op = level0.map(lambda a: parse_tf_op(a)[0] != "unknown").to_numpy()
    attributed = gpu & names_op
    assert dev["total_self_time_us"].sum() == pytest.approx(ev.loc[attributed, "dur_us"].sum())
    idle = ops[(ops["host_or_device"] == "Device") & (ops["type"] == "IDLE")]
    assert idle["beyond_xprof"].all()
    xprof_idle = rows(golden("bert_8gpu", "framework_op_stats")[0])
    xprof_idle = xprof_idle[(xprof_idle["host_or_device"] == "Device")]["total_self_time"].sum()
    assert idle["total_self_time_us"].sum() + dev["total_self_time_us"].sum() == pytest.approx(
        xprof_idle, rel=1e-9
    )
    # The overview's top device ops are ours too, and say so.
    top = overview_summary(bert).top_ops
    assert len(top) == 10 and top["beyond_xprof"].all()


def test_bert_kernel_stats_row_by_row(bert):
    """Grouped by (kernel name, launch dims, registers, shared memory, TF op), as xprof's
    KernelStatsDb is; sorted by total time."""
    gold = rows(golden("bert_8gpu", "kernel_stats"))
    k = bert.kernels
    assert len(k) == len(gold) == 15
    np.testing.assert_array_equal(k["kernel_name"].astype(str), gold["kernel_name"])
    np.testing.assert_array_equal(k["occurrences"], gold["occurrences"])
    np.testing.assert_allclose(k["total_time_us"], gold["total_duration_us"], atol=1e-3)


def test_host_names_come_from_the_capture(bert, tmp_path):
    """XSpace.hostnames names the host (what xprof's pages show); a capture without them is
    named after its file; ``hosts=`` accepts either name."""
    assert bert.hosts == ["34.83.195.179:6003"]
    assert tw.load(BERT, hosts=["bert_8gpu_multi_worker"]).hosts == bert.hosts
    gpu = tw.load(synthetic_gpu_path())
    assert len(gpu.hosts) == 1


def test_synthetic_gpu_figures():
    theirs = xprof("synthetic_gpu")
    assert differences(our_figures(tw.load(synthetic_gpu_path())), theirs) == []


# -- TPU (device ops, IDLE, idle shares and duty cycle: tests/test_xla_tpu.py) ------------------


def test_tpu_allocators_by_index_on_host(tpu):
    """TPU allocator events name their memory by index_on_host / device_ordinal (no
    allocator_name): one allocator each, as xprof lists them."""
    gold = golden("synthetic_tpu", "memory_profile")
    assert sorted(tpu.memory_summary["allocator"].astype(str)) == sorted(gold["memoryIds"])
    assert len(gold["memoryIds"]) >= 3


def test_tpu_events_carry_device_times(tpu):
    """XLA ops with device_offset_ps/device_duration_ps have those times in run.events; the
    XEvent's own are in run.xevent_times, one row per such event."""
    ev = tpu.events
    raw = tpu.xevent_times
    assert len(raw) > 0
    dur = tpu.stat("device_duration_ps").astype("float64").to_numpy()
    rows_ = raw["event"].to_numpy()
    np.testing.assert_allclose(ev["dur_us"].to_numpy()[rows_], dur[rows_] / 1e6)
    assert (raw["xevent_dur_us"].to_numpy() != ev["dur_us"].to_numpy()[rows_]).any()
    # Still sorted by (line, start), as every events table is.
    key = pd.DataFrame({"line": tpu.event_line_rows, "start": ev["start_us"]})
    assert key.equals(key.sort_values(["line", "start"], kind="stable").reset_index(drop=True))


def test_views_say_what_tensorboard_does_not_show(bert, tpu):
    """Device ops of ours are marked as ours in the op table, its pies and the overview; the
    overview names op placement by executions (TensorBoard's) beside time, and on TPUs the
    duty cycle and idle shares."""
    ops_view = tw.views.op_stats(bert)
    assert any("are ours only" in line for line in ops_view.findings())
    assert "ours only" in ops_view.html()
    over = tw.views.overview(bert).findings()
    assert any(line.startswith("TF op executions: host 100.0 %") for line in over)
    assert any(line.startswith("TF op time: host") for line in over)
    assert any("'ours only'" in line for line in over)
    tpu_lines = tw.views.overview(tpu).findings()
    assert any(line.startswith("TPU duty cycle 72.9 %") for line in tpu_lines)
    assert not any("'ours only'" in line for line in tpu_lines)
