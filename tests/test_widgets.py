"""Widgets: figure data equals the analyses, filters work, the timeline stays within budget,
and every view carries a live view plus static HTML."""

import sys

import numpy as np
import pytest
from conftest import ROOT, SAMPLES
from golden_tables import synthetic_gpu_path

import tfprof_widgets as tw
from tfprof_widgets.analysis.steps import CATEGORIES, overview_steps
from tfprof_widgets.views._display import figure_html, reset_plotlyjs
from tfprof_widgets.views.op_stats_view import PIE_SLICES, pie_values
from tfprof_widgets.views.timeline_lod import MAX_MARKS, TimelineModel

sys.path.insert(0, str(ROOT / "benchmarks"))


@pytest.fixture(scope="module")
def ib():
    return tw.load(SAMPLES / "input_bound")


@pytest.fixture(scope="module")
def gpu():
    return tw.load(synthetic_gpu_path())


def test_step_time_graph_equals_run_steps(ib):
    fig = tw.views.overview(ib).figures()["step_time"]
    kept = overview_steps(ib.steps)
    bars = {t.uid.removeprefix("step-"): t for t in fig.data}
    assert set(bars) == {c for c in CATEGORIES if (kept[c] > 0).any()}
    for cat, bar in bars.items():
        np.testing.assert_allclose(bar.y, kept[cat].to_numpy() / 1e3)
        assert list(bar.x) == [str(s) for s in kept["step"]]
    assert bars["input_us"].marker.color == "#d62728"  # waiting for input, in red


def test_pies_equal_run_ops(gpu):
    view = tw.views.op_stats(gpu)
    figs = view.figures()
    assert set(figs) == {"host_operation", "host_type", "device_operation", "device_type"}
    ops = gpu.ops[gpu.ops["type"] != "IDLE"]
    dev = ops[ops["host_or_device"] == "Device"]
    pie = figs["device_operation"].data[0]
    expected = dev.groupby("operation", observed=True)["total_self_time_us"].sum()
    assert dict(zip(pie.labels, pie.values)) == pytest.approx(
        {str(k): v for k, v in expected.items()}
    )
    # IDLE is a slice only when asked for.
    assert "IDLE" not in pie.labels
    with_idle = tw.views.op_stats(gpu, include_idle=True).figures()["device_operation"].data[0]
    assert "IDLE" in with_idle.labels


def test_pie_groups_the_tail_as_other(ib):
    ops = ib.ops
    vals = pie_values(ops[ops["type"] != "IDLE"], "operation")
    assert len(vals) == PIE_SLICES + 1 and vals.index[-1] == "Other"
    total = ops.loc[ops["type"] != "IDLE", "total_self_time_us"].sum()
    assert vals.sum() == pytest.approx(total)


def test_table_filter_and_sort(ib):
    view = tw.views.op_stats(ib)
    rows = view.filtered(name_regex="^irfft2d_[12]$")
    assert sorted(rows["operation"].astype(str)) == ["irfft2d_1", "irfft2d_2"]
    assert (view.filtered(op_type="Dataset")["type"] == "Dataset").all()
    by_occ = view.filtered(sort_by="occurrences", ascending=True)
    assert by_occ["occurrences"].is_monotonic_increasing
    assert len(view.filtered(side="Device")) == 0  # a CPU-only run
    with pytest.raises(ValueError, match="invalid name filter"):
        view.filtered(name_regex="(")
    csv = view.filtered(name_regex="irfft2d_1").to_csv(index=False)
    assert "irfft2d_1" in csv


@pytest.fixture(scope="module")
def ten_million():
    from synthetic_events import synthetic_events, synthetic_lines

    events = synthetic_events(10_000_000)
    return TimelineModel(events, *synthetic_lines(events))


def test_timeline_budget_at_ten_million_events(ten_million):
    m = ten_million
    full = m.window()
    assert len(m) == 10_000_000
    assert len(full) <= MAX_MARKS
    assert full.count.sum() == 10_000_000  # every event counted once, raw or in a block
    # Zooming into 1 ms sends exactly the raw events that overlap it.
    x0 = (m.t_min + m.t_max) / 2
    window = m.window(x0, x0 + 1000.0)
    assert window.raw.all()
    expected = np.flatnonzero((m.start < x0 + 1000.0) & (m.end > x0))
    assert sorted(window.row.tolist()) == sorted(m.row[expected].tolist())


def test_timeline_view_on_a_run():
    run = tw.load(SAMPLES / "custom_loop")
    view = tw.views.timeline(run)
    assert len(view.marks) <= MAX_MARKS
    assert view.marks.count.sum() == (run.events["occurrences"] == 1).sum()
    ev = run.events
    x0 = float(ev["start_us"].median())
    marks = view.zoom(x0, x0 + 500)
    assert marks.raw.all()
    inside = ev[(ev["start_us"] < x0 + 500) & (ev["end_us"] > x0)]
    assert sorted(marks.row.tolist()) == sorted(inside.index.tolist())
    details = view.event_details(int(marks.row[0]))
    assert {"name", "start_us", "dur_us", "step"} <= set(details["field"])
    assert view.payload_bytes() < 2_000_000


def test_timeline_zoom_callback_updates_the_live_figure():
    run = tw.load(SAMPLES / "input_bound")
    view = tw.views.timeline(run)
    box = view.widget()
    (fw,) = [
        w for part in box.children for w in getattr(part, "children", ()) if hasattr(w, "data")
    ]
    before = len(fw.data[0].x)
    x0 = float(run.events["start_us"].median())
    fw.layout.xaxis.range = [x0, x0 + 200]
    assert view.window_us == (x0, x0 + 200)
    assert len(fw.data[0].x) == len(view.marks) != before


def test_memory_timeline(ib):
    view = tw.views.memory_timeline(ib)
    fig = view.figures()["memory"]
    in_use = next(t for t in fig.data if t.uid == "mem-in_use_bytes")
    series = view.series()
    np.testing.assert_allclose(np.asarray(in_use.y) * 2**20, series["in_use_bytes"])
    assert "requested" in in_use.hovertext[0] and "step" in in_use.hovertext[0]
    assert view.allocators == ["mklcpu"]


def test_tf_data_graph(ib):
    view = tw.views.tf_data_graph(ib)
    nodes = view.nodes()
    assert nodes.loc[nodes["is_bottleneck"], "name"].tolist() == ["Map"]
    fig = view.figures()["graph"]
    node_trace = next(t for t in fig.data if t.uid == "tfdata-nodes")
    assert list(node_trace.text) == nodes["name"].tolist()
    assert "num_parallel_calls" in view.header()


def test_kernel_stats_and_input_pipeline(ib, gpu):
    pie = tw.views.kernel_stats(gpu).figures()["top_kernels"].data[0]
    assert sum(pie.values) == pytest.approx(gpu.kernels["total_time_us"].sum())
    assert tw.views.kernel_stats(ib).figures() == {}
    ip = tw.views.input_pipeline(ib).figures()
    wait = next(t for t in ip["device_side"].data if t.uid == "ip-wait")
    kept = overview_steps(ib.steps)
    np.testing.assert_allclose(wait.y, kept["host_wait_input_us"] / 1e3)


def test_compare(ib):
    other = tw.load(SAMPLES / "custom_loop")
    view = tw.views.compare(ib, other)
    assert "faster per step" in view.headline() or "slower per step" in view.headline()
    diff = view.diff
    assert diff["delta_us"].abs().is_monotonic_decreasing
    row = diff[diff["operation"] == "Iterator::Root::ForeverRepeat[0]::BatchV2::Map"].iloc[0]
    assert row["self_time_b_us"] == 0 and row["delta_us"] < 0


@pytest.mark.parametrize(
    "make",
    [
        lambda r, g: tw.views.overview(r),
        lambda r, g: tw.views.op_stats(r),
        lambda r, g: tw.views.timeline(r),
        lambda r, g: tw.views.memory_timeline(r),
        lambda r, g: tw.views.tf_data_graph(r),
        lambda r, g: tw.views.kernel_stats(g),
        lambda r, g: tw.views.input_pipeline(r),
        lambda r, g: tw.views.compare(r, g),
    ],
)
def test_every_view_has_live_and_static_forms(make, ib, gpu):
    view = make(ib, gpu)
    bundle = view._repr_mimebundle_()
    assert {"text/plain", "text/html", "application/vnd.jupyter.widget-view+json"} <= set(bundle)
    assert bundle["text/plain"] == repr(view)


def test_plotlyjs_is_embedded_once(ib):
    reset_plotlyjs()
    first = tw.views.overview(ib).html()
    second = tw.views.memory_timeline(ib).html()
    assert first.count("plotly.js v") >= 1 and len(first) > 3_000_000
    assert "plotly.js v" not in second and len(second) < 500_000
    # Re-rendering gives identical HTML (stable div ids), so notebooks diff cleanly.
    fig = tw.views.overview(ib).figures()["step_time"]
    assert figure_html(fig, False) == figure_html(fig, False)
