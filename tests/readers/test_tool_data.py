"""Tool data (TensorBoard's Profile-tool outputs in old run directories): logdirs as TF 2.2
and TF 2.3-2.10 left them, run.tool_data beside a trace, the memory profile, kernel stats,
the DataTable and pod-viewer layouts, files we do not read, and damaged files.
"""

import gzip
import json
import os
import shutil

import numpy as np
import pytest
from conftest import tree_state
from tool_data_files import BERT, BERT_HOST, TOOLDATA, demo_run, field, tf2x_run, tf22_logdir

import tfprof_widgets as tw
from tfprof_widgets import report, schema, views
from tfprof_widgets.analysis.memory import memory_breakdown
from tfprof_widgets.catalog import ANALYSES
from tfprof_widgets.proto import tool_data_pb2 as pb


@pytest.fixture(scope="module")
def tf22(tmp_path_factory):
    return tf22_logdir(tmp_path_factory.mktemp("tf22"))


@pytest.fixture(scope="module")
def tf2x(tmp_path_factory):
    return tf2x_run(tmp_path_factory.mktemp("tf2x"))


@pytest.fixture(scope="module")
def bert_run(tf2x):
    return tw.load(tf2x)


# -- logdirs ------------------------------------------------------------------------------------
def test_a_tf22_logdir_lists_and_loads_its_tool_data_runs(tf22):
    before = tree_state(tf22)
    runs = tw.list_runs(tf22)
    assert schema.mismatches(runs, schema.RUNS) == []
    assert runs["run"].tolist() == ["2020_05_20_10_00_00", "2020_05_20_11_00_00"]
    assert runs["hosts"].tolist() == [("localhost",), ("localhost",)]
    assert runs["formats"].tolist() == [
        ("input_pipeline", "overview_page"),
        ("input_pipeline", "overview_page", "tensorflow_stats"),
    ]
    newest = tw.load(tf22)  # the newest run, as for xplane logdirs
    assert newest.name == "2020_05_20_11_00_00"
    assert newest.overview_summary.input_classification == "host"
    older = tw.load(tf22, run="2020_05_20_10_00_00")
    assert older.overview_summary.kernel_launch_classification == "high"
    assert older.overview_summary.device_compute_16bit_percent == pytest.approx(46.299334246)
    assert len(older.ops) == 0  # that run has no tensorflow_stats.pb
    assert np.isnan(older.overview_summary.host_op_time_percent)
    assert tree_state(tf22) == before  # loading writes nothing


def test_a_tf2x_run_takes_its_xplane_and_keeps_tensorboards_numbers(tf2x, bert_run):
    runs = tw.list_runs(tf2x.parents[2])
    assert runs["formats"].iloc[0] == (
        "kernel_stats",
        "memory_profile",
        "trace.json.gz",
        "xplane",
    )
    run = bert_run
    assert run.files == [str(tf2x / f"{BERT_HOST}.xplane.pb")]  # the trace is the xplane
    assert len(run.events) == 23_128
    td = run.tool_data
    assert not td.is_source and td.tools == ["kernel_stats", "memory_profile"]
    assert "kept beside the trace" in repr(td)
    # Our analyses of the xplane reproduce what xprof wrote: the same kernels and peaks.
    ours = run.kernels.sort_values(["kernel_name", "grid_dim", "block_dim"], ignore_index=True)
    theirs = td.kernel_stats.sort_values(
        ["kernel_name", "grid_dim", "block_dim"], ignore_index=True
    )
    assert ours["kernel_name"].tolist() == theirs["kernel_name"].tolist()
    assert ours["occurrences"].tolist() == theirs["occurrences"].tolist()
    assert np.allclose(ours["total_time_us"], theirs["total_time_us"])
    compare = td.compare(run).set_index("figure")
    assert (
        compare.loc["kernel_stats rows", "tensorboard"] == compare.loc["kernel_stats rows", "ours"]
    )
    for allocator in ("GPU_1_bfc", "GPU_4_bfc", "GPU_6_bfc", "gpu_host_bfc"):
        row = compare.loc[f"{allocator} peak bytes"]
        assert row["tensorboard"] == row["ours"], allocator


def test_hosts_selection_covers_tool_data_hosts(tf22, tmp_path):
    run_dir = tf22 / "plugins" / "profile" / "2020_05_20_11_00_00"
    assert tw.load(run_dir, hosts=["localhost"]).tool_data.hosts == ["localhost"]
    with pytest.raises(tw.ProfileNotFoundError, match="hosts here: localhost"):
        tw.load(run_dir, hosts=["worker-9"])
    with pytest.raises(tw.ProfileError, match="no trace, only TensorBoard's tool data"):
        tw.load(run_dir, window_s=(0, 1))


# -- the memory profile and kernel stats (TF 2.3-2.10 files, from the BERT capture) ------------
def test_memory_profile_file_is_tensorboards_memory_profile(bert_run):
    path = TOOLDATA / "bert_tf2x" / f"{BERT_HOST}.memory_profile.json.gz"
    doc = json.loads(gzip.decompress(path.read_bytes()))
    per = doc["memoryProfilePerAllocator"]
    with pytest.warns(UserWarning, match="load the directory"):
        run = tw.load(path)
    mem = run.memory
    assert schema.mismatches(mem, schema.MEMORY) == []
    assert mem.groupby("allocator", observed=True).size().to_dict() == {
        a: len(p["memoryProfileSnapshots"]) for a, p in per.items()
    }
    g4 = per["GPU_4_bfc"]
    first = g4["memoryProfileSnapshots"][0]
    row = mem[mem["allocator"] == "GPU_4_bfc"].iloc[0]
    assert row["time_us"] == int(first["timeOffsetPs"]) / 1e6
    assert row["heap_allocated_bytes"] == int(first["aggregationStats"]["heapAllocatedBytes"])
    assert row["tf_op"] == first["activityMetadata"]["tfOpName"]
    s = run.memory_summary.set_index("allocator").loc["GPU_4_bfc"]
    summary = g4["profileSummary"]
    assert s["peak_bytes_lifetime_xprof"] == int(summary["peakBytesUsageLifetime"])  # 5,006,386,688
    assert s["memory_capacity_bytes"] == int(summary["memoryCapacity"])
    assert s["peak_heap_bytes"] == int(summary["peakStats"]["heapAllocatedBytes"])
    assert s["peak_time_us"] == int(summary["peakStatsTimePs"]) / 1e6
    # What was live at the peak, as the file lists it; the largest peak's by default.
    bd = run.memory_breakdown
    assert schema.mismatches(bd, schema.MEMORY_BREAKDOWN) == []
    assert len(bd) == len(per["GPU_6_bfc"]["activeAllocations"])
    assert len(memory_breakdown(run, allocator="GPU_4_bfc")) == len(g4["activeAllocations"])
    assert bd["tf_op"].iloc[0] == "unused preallocated device memory"
    # The xplane's own analysis finds the same things live at GPU_4_bfc's peak.
    ours = memory_breakdown(bert_run, allocator="GPU_4_bfc")
    theirs = memory_breakdown(run, allocator="GPU_4_bfc")
    key = ["allocation_bytes", "tf_op"]
    assert (
        ours[key].sort_values(key).values.tolist() == theirs[key].sort_values(key).values.tolist()
    )
    html = views.memory_timeline(run).html()
    assert "GPU_6_bfc" in html and "no trace" not in html


def test_kernel_stats_file_is_tensorboards_kernel_table(tmp_path):
    path = TOOLDATA / "bert_tf2x" / f"{BERT_HOST}.kernel_stats.pb"
    reports = field(path.read_bytes(), 1)
    shutil.copy(path, tmp_path / path.name)
    run = tw.load(tmp_path / path.name)
    k = run.kernels
    assert schema.mismatches(k, schema.KERNELS) == []
    assert len(k) == len(reports) == 15
    assert k["kernel_name"].tolist() == [field(r, 1)[0].decode() for r in reports]
    assert k["occurrences"].tolist() == [field(r, 13)[0] for r in reports]
    assert np.array_equal(k["total_time_us"], [field(r, 7)[0] / 1e3 for r in reports])
    assert k["block_dim"].iloc[0] == "1024,1,1"
    assert "kernel" in views.kernel_stats(run).html()


# -- the DataTable and pod-viewer layouts of xprof 2.24 ------------------------------------------
def test_current_datatable_and_pod_viewer_layouts():
    d = TOOLDATA / "xprof_datatables"
    run = tw.load(d)
    steps_table = next(
        t
        for t in json.loads((d / f"{BERT_HOST}.overview_page.json").read_text())
        if "stepnum" in [c["id"] for c in t["cols"]]
    )
    row = steps_table["rows"][0]["c"]
    s = run.steps.iloc[0]
    assert s["step_time_us"] == row[-1]["v"] * 1e3  # stepTimeMs
    assert s["device_compute_us"] == row[1]["v"] * 1e3
    assert s["all_others_us"] == row[9]["v"] * 1e3  # otherTimeMs
    o = run.overview_summary
    assert o.input_classification == "both"
    assert o.input_statement.startswith("Your program is POTENTIALLY input-bound because 30.2%")
    assert o.device_compute_16bit_percent == 30.5
    pods = run.tool_data.pod_viewer
    assert pods["device_compute_us"].iloc[0] == 14875.539  # stepBreakdownUs, by event name
    assert pods["all_others_us"].iloc[0] == 6434.813


def test_tpu_step_details_in_a_pipeline_pb(tmp_path):
    """TPU payloads of the Any fields (PerTpuStepDetails): compute, infeed, idle."""
    result = pb.InputPipelineAnalysisResult(hardware_type="TPU", tag=True)
    for n, (compute, infeed, idle) in enumerate(((10.0, 1.0, 0.5), (11.0, 2.0, 0.25))):
        d = pb.PerTpuStepDetails(
            step_number=n,
            tc_compute_time_ms=compute,
            tc_infeed_time_ms=infeed,
            tc_idle_time_ms=idle,
            infeed_percent_average=5.0,
            max_infeed_time_core_name="core 3",
        )
        result.step_details.add(
            type_url="type.googleapis.com/tensorflow.profiler.PerTpuStepDetails",
            value=d.SerializeToString(),
        )
    (tmp_path / "tpu.input_pipeline.pb").write_bytes(result.SerializeToString())
    run = tw.load(tmp_path / "tpu.input_pipeline.pb")
    assert run.steps["step_time_us"].tolist() == [11500.0, 13250.0]
    assert run.steps["input_us"].tolist() == [1000.0, 2000.0]
    assert run.tool_data.steps["max_infeed_core"].tolist() == ["core 3", "core 3"]


# -- views and schema on runs without a trace ------------------------------------------------------
@pytest.fixture(scope="module", params=["input_bound", "compute_bound", "cloud_tpu"])
def tool_run(request, tmp_path_factory):
    name = {"input_bound": "demo_GPU-input-bound", "compute_bound": "demo_GPU-compute-bound"}
    return tw.load(
        demo_run(name.get(request.param, "demo_Cloud-TPU"), tmp_path_factory.mktemp("r"))
    )


def test_every_analysis_follows_the_schema(tool_run):
    for a in ANALYSES:
        try:
            result = getattr(tool_run, a.name)
        except ValueError:  # the tfprof analyses need a TF1 graph
            assert "tfprof" in a.function
            continue
        if a.table is None:
            assert type(result).__name__ == a.returns
        elif a.table != "PER_HOST_STEPS":
            assert schema.mismatches(result, getattr(schema, a.table)) == [], a.name
    assert schema.mismatches(tool_run.tool_data.steps, schema.TOOL_STEPS) == []
    assert schema.mismatches(tool_run.tool_data.tf_stats, schema.TOOL_TF_STATS) == []
    assert schema.mismatches(tool_run.tool_data.top_ops, schema.TOOL_TOP_OPS) == []
    assert schema.mismatches(tool_run.tool_data.files, schema.TOOL_DATA_FILES) == []
    assert list(tool_run.per_host_steps.columns[:1]) == list(tool_run.hosts)


def test_views_and_report_on_a_run_without_a_trace(tool_run):
    overview = views.overview(tool_run)
    assert len(overview.figures()) == 1  # the step-time graph of TensorBoard's steps
    steps = overview.figures()["step_time"].data[0].x
    assert len(steps) == tool_run.overview_summary.n_steps  # no step dropped again
    assert tool_run.overview_summary.input_statement in overview.html()
    assert len(views.input_pipeline(tool_run).figures()) >= 1
    for view in (views.timeline(tool_run), views.tf_data_graph(tool_run)):
        assert "This capture has no trace" in view.html()
    assert views.tf_data_graph(tool_run).figures() == {}
    assert views.timeline(tool_run).live_widget() is None  # nothing to draw
    assert "This capture has no trace" in views.kernel_stats(tool_run).html()
    assert "no trace" in views.timeline(tool_run).text()
    html = report.report_html(tool_run)
    assert html.count("This capture has no trace") >= 2
    for name in ("overview", "op_stats", "timeline", "memory_timeline", "tf_data_graph"):
        view = getattr(views, name)(tool_run)
        view.widget()  # the live form too (None for views that need no kernel)
        assert view._repr_mimebundle_()  # and what a notebook shows


# -- files we do not read, and damaged ones -----------------------------------------------------
@pytest.mark.parametrize(
    "name,content,error,pattern",
    [
        ("events.out.tfevents.1589968800.localhost.profile-empty", b"\x18" + bytes(30),
         tw.WrongFormatError, "events file .*not a profile"),
        ("model.ckpt-100.index", b"\0" * 40, tw.WrongFormatError, "checkpoint"),
        ("model.ckpt-100.data-00000-of-00001", b"\1" * 40, tw.WrongFormatError, "checkpoint"),
        ("saved_model.pb", b"\x08\x01\x12\x00", tw.WrongFormatError, "SavedModel"),
        ("chart.png", b"\x89PNG\r\n\x1a\n" + bytes(40), tw.WrongFormatError, "PNG image"),
        ("weights.h5", b"\x89HDF\r\n\x1a\n" + bytes(40), tw.WrongFormatError, "HDF5"),
        ("localhost.op_profile.json", b"{}", tw.WrongFormatError, "op-profile tool output"),
        ("h.module.memory_viewer.json", b"{}", tw.WrongFormatError, "memory-viewer"),
        ("overview.json", b'[{"cols":[{"id":"stepnum"}],"rows":[]}]', tw.WrongFormatError,
         "DataTable JSON, not a trace"),
        ("x.overview_page.pb", b"", tw.EmptyProfileError, "empty"),
        ("x.overview_page.pb", b"\x12\xff\xff\xff\x0f", tw.CorruptProfileError,
         "not a valid OverviewPage protobuf .*truncated or damaged"),
        ("x.overview_page.json", b"[{", tw.CorruptProfileError, "not valid JSON"),
        ("x.overview_page.json", b"[1, 2]", tw.WrongFormatError, "not a Google DataTable"),
        ("x.pod_viewer.json", b"[]", tw.WrongFormatError, "no 'podStatsSequence'"),
        ("x.memory_profile.json.gz", gzip.compress(b'{"memoryProfilePerAllocator": '
         b'{"GPU_0_bfc": {"memoryProfileSnapshots": [{"timeOffsetPs": [1]}]}}}', mtime=0),
         tw.CorruptProfileError, "not what that tool writes"),
        ("x.memory_profile.json.gz", b"\x1f\x8b\x08\x00garbage", tw.CorruptProfileError,
         "gzip stream"),
    ],
)  # fmt: skip
def test_files_we_do_not_read_are_named_and_damaged_ones_said_so(
    tmp_path, name, content, error, pattern
):
    p = tmp_path / name
    p.write_bytes(content)
    before = tree_state(tmp_path)
    with pytest.raises(error, match=pattern) as info:
        tw.load(p)
    assert info.value.path == str(p)
    if error is tw.WrongFormatError:
        assert "damaged" not in str(info.value)
    assert tree_state(tmp_path) == before


def test_another_tools_message_under_a_tool_name_is_named(tmp_path):
    kernels = (TOOLDATA / "bert_tf2x" / f"{BERT_HOST}.kernel_stats.pb").read_bytes()
    (tmp_path / "h.overview_page.pb").write_bytes(kernels)
    with pytest.raises(tw.WrongFormatError, match="not TensorBoard's overview-page tool output"):
        tw.load(tmp_path / "h.overview_page.pb")


def test_a_renamed_tool_pb_is_named_not_called_damaged(tmp_path):
    src = TOOLDATA / "demo_GPU-input-bound" / "localhost.overview_page.pb"
    shutil.copy(src, tmp_path / "profile.pb")
    with pytest.raises(tw.WrongFormatError, match="decodes as TensorBoard's overview-page"):
        tw.load(tmp_path / "profile.pb")


def test_one_bad_tool_file_leaves_the_others_loaded(tmp_path):
    run_dir = demo_run("demo_GPU-compute-bound", tmp_path)
    (run_dir / "localhost.kernel_stats.pb").write_bytes(b"\x0a\xff\xff\xff\xff\x0f")
    with pytest.warns(UserWarning, match="kernel_stats.pb: not loaded"):
        run = tw.load(run_dir)
    assert run.tool_data.tools == ["input_pipeline", "overview_page"]
    assert len(run.steps) == 11


def test_a_run_with_only_unread_files_is_not_a_run(tmp_path):
    d = tmp_path / "logs" / "plugins" / "profile" / "r1"
    d.mkdir(parents=True)
    (d / "h.op_profile.json").write_text("{}")
    with pytest.raises(tw.EmptyProfileError, match="no profile runs found"):
        tw.load(tmp_path / "logs")


def test_xplane_and_tool_data_of_two_hosts(tmp_path):
    """A host with an xplane and another with tool data only: the xplane is the source."""
    shutil.copy(BERT, tmp_path / "a.xplane.pb")
    shutil.copy(TOOLDATA / "demo_GPU-compute-bound" / "localhost.overview_page.pb", tmp_path)
    run = tw.load(tmp_path)
    # The xplane's host is the name its XSpace records (what xprof shows), not its file's.
    assert run.hosts == ["34.83.195.179:6003"] and not run.tool_data.is_source
    assert run.tool_data.hosts == ["localhost"]
    assert run.overview_summary is not run.tool_data.overview_page
    assert os.path.basename(run.tool_data.files["path"].iloc[0]) == "localhost.overview_page.pb"


@pytest.mark.parametrize(
    "name,host,fmt",
    [
        ("10.240.1.50.overview_page.json", "10.240.1.50", "overview_page (json)"),
        ("localhost.tensorflow_stats.pb", "localhost", "tensorflow_stats"),
        ("34.83.195.179_6003.memory_profile.json.gz", "34.83.195.179_6003", "memory_profile"),
        ("10.240.1.50.pod_viewer.json", "10.240.1.50", "pod_viewer"),
        ("local.trace", "local", "trace"),
        ("h.trace.json.gz", "h", "trace.json.gz"),
        ("10.240.1.50.op_profile.json", "10.240.1.50", "op_profile (not read)"),
        ("h.module.memory_viewer.json", "h.module", "memory_viewer (not read)"),
        ("ALL_HOSTS.op_stats_v2.pb", "ALL_HOSTS.op_stats_v2", None),  # xprof's cache
    ],
)
def test_tool_file_names(name, host, fmt):
    from tfprof_widgets.readers.formats import file_format, host_of

    assert host_of(f"/logs/plugins/profile/run/{name}") == host
    assert file_format(name) == fmt


def test_an_unreadable_trace_leaves_tensorboards_numbers(tmp_path):
    """TF 2.2 wrote a Chrome trace beside the tool data; if it cannot be read, the run is
    its tool data, with a warning naming the trace."""
    run_dir = demo_run("demo_GPU-compute-bound", tmp_path)
    (run_dir / "localhost.trace.json.gz").write_bytes(gzip.compress(b"[{"))
    with pytest.warns(UserWarning, match="trace.json.gz: not loaded"):
        run = tw.load(run_dir)
    assert run.tool_data.is_source and len(run.steps) == 11
