"""Issue 14's acceptance for tool data: every tool-data file and run directory of the shared
captures (tensorflow/profiler's demo runs, copied into tests/data/tooldata) loads, and what
we show is what the file says, counted here from the raw protobuf / JSON with no schema.

For the TF 2.2 demo_GPU-input-bound run, the overview and the op-stats tables reproduce the
numbers of its .pb files exactly: every step, every TF-stats row, every figure.
"""

import gzip
import hashlib
import json

import numpy as np
import pytest
from tool_data_files import (
    DEMO_RUNS,
    TOOLDATA,
    demo_run,
    double,
    field,
    fields,
    first_double,
)

import tfprof_widgets as tw
from tfprof_widgets import schema
from tfprof_widgets.analysis.op_stats import op_stats
from tfprof_widgets.analysis.steps import overview_steps

# Every upstream tool-data file we hold a copy of (tests/data/tooldata/SHA256SUMS).
FILES = [
    "demo_GPU-input-bound/localhost.overview_page.pb",
    "demo_GPU-input-bound/localhost.input_pipeline.pb",
    "demo_GPU-input-bound/localhost.tensorflow_stats.pb",
    "demo_GPU-compute-bound/localhost.overview_page.pb",
    "demo_GPU-compute-bound/localhost.input_pipeline.pb",
    "demo_Cloud-TPU/10.240.1.50.tensorflow_stats.pb",
    "demo_Cloud-TPU/10.240.1.50.overview_page.json",
    "demo_Cloud-TPU/10.240.1.50.input_pipeline.json",
    "demo_Cloud-TPU/10.240.1.50.pod_viewer.json",
]


@pytest.fixture(scope="module")
def demos(tmp_path_factory):
    root = tmp_path_factory.mktemp("demos")
    return {name: demo_run(name, root) for name in DEMO_RUNS}


def path_of(demos, rel):
    run, name = rel.split("/")
    return demos[run] / name


# -- the raw files, read with no schema ---------------------------------------------------------
def raw_steps(pipeline: bytes) -> list[tuple[int, float]]:
    """(step_number, step_time_ms) of InputPipelineAnalysisResult.step_details (field 4, each
    an Any: type_url 1, value 2; PerGenericStepDetails: step_number 1, step_time_ms 2)."""
    out = []
    for any_msg in field(pipeline, 4):
        payload = field(any_msg, 2)[0]
        number = field(payload, 1)
        out.append((number[0] if number else 0, first_double(payload, 2)))
    return out


def raw_tf_stats(db: bytes, table: int) -> list[dict]:
    """TfStatsDatabase.with_idle (4) / without_idle (5) records (field 1 of the table)."""
    rows = []
    for tables in field(db, table):
        for rec in field(tables, 1):
            f = dict(fields(rec))
            rows.append(
                {
                    "rank": f.get(1, 0),
                    "host_or_device": f.get(2, b"").decode(),
                    "type": f.get(3, b"").decode(),
                    "operation": f.get(4, b"").decode(),
                    "occurrences": f.get(5, 0),
                    "total_time_us": double(f.get(6, 0)),
                    "avg_time_us": double(f.get(7, 0)),
                    "total_self_time_us": double(f.get(8, 0)),
                    "avg_self_time_us": double(f.get(9, 0)),
                    "self_fraction": double(f.get(10 if f.get(2) == b"Device" else 12, 0)),
                    "cumulative_fraction": double(f.get(11 if f.get(2) == b"Device" else 13, 0)),
                }
            )
    return rows


def datatables(path) -> list[dict]:
    return json.loads(path.read_text())


def table_with(tables, col):
    return next(t for t in tables if col in [c["id"] for c in t.get("cols", [])])


# -- every file ------------------------------------------------------------------------------
@pytest.mark.parametrize("rel", FILES)
def test_each_shared_tool_file_loads_as_what_it_says(demos, rel):
    path = path_of(demos, rel)
    with pytest.warns(UserWarning, match="load the directory for all of them"):
        run = tw.load(path)  # one tool's file alone: its siblings are named
    assert len(run.events) == 0 and run.tool_data is not None and run.tool_data.is_source
    td = run.tool_data
    data = path.read_bytes()
    if rel.endswith((".overview_page.pb", ".input_pipeline.pb")):
        pipeline = field(data, 2)[0] if rel.endswith("overview_page.pb") else data
        steps = raw_steps(pipeline)
        assert len(run.steps) == len(steps) == 11  # what the page states
        assert run.steps["step"].tolist() == [n for n, _ in steps]
        assert np.array_equal(run.steps["step_time_us"], np.array([ms for _, ms in steps]) * 1e3)
        assert run.overview_summary.n_steps == len(steps)
        ip = run.input_pipeline
        assert len(ip.input_ops) == len(field(pipeline, 6))
        assert ip.input_percent_avg == first_double(field(pipeline, 3)[0], 1)
        assert len(overview_steps(run.steps)) == 11  # TensorBoard's list: nothing dropped
    if rel.endswith(".overview_page.pb"):
        analysis = field(data, 3)[0]
        top = field(analysis, 4)
        assert len(td.top_ops) == len(top) == 10
        assert np.array_equal(
            td.top_ops["self_time_percent"], [first_double(t, 3) * 100 for t in top]
        )
        verdict = field(field(data, 4)[0], 1)[0].decode()
        assert run.overview_summary.input_classification == verdict
    if rel.endswith(".tensorflow_stats.pb"):
        with_idle, without_idle = raw_tf_stats(data, 4), raw_tf_stats(data, 5)
        assert len(run.ops) == len(with_idle) and len(td.tf_stats_without_idle) == len(without_idle)
        assert (run.ops["type"] == "IDLE").sum() == 2  # one per side, only with IDLE
        for side in ("Host", "Device"):
            ours = run.ops[run.ops["host_or_device"] == side]["total_self_time_us"]
            theirs = [r["total_self_time_us"] for r in with_idle if r["host_or_device"] == side]
            assert np.array_equal(ours, theirs)
        assert len(op_stats(run, include_idle=False)) == len(without_idle)
    if rel.endswith(".overview_page.json") or rel.endswith(".input_pipeline.json"):
        tables = datatables(path)
        steps = table_with(tables, "stepnum")
        assert len(run.steps) == len(steps["rows"]) == 3
        assert run.overview_summary.n_steps == 3
        assert run.overview_summary.step_time_ms_avg == float(steps["p"]["steptime_ms_average"])
        compute = [r["c"][1]["v"] for r in steps["rows"]]
        assert np.array_equal(run.steps["device_compute_us"], np.array(compute) * 1e3)
    if rel.endswith(".overview_page.json"):
        assert len(td.top_ops) == len(table_with(datatables(path), "selfTimePercent")["rows"])
        assert run.overview_summary.device_type == "TPU v2"
    if rel.endswith(".input_pipeline.json"):
        ops = table_with(datatables(path), "opName")
        assert len(run.input_pipeline.input_ops) == len(ops["rows"]) == 7
        assert run.input_pipeline.preprocessing_us == float(ops["p"]["preprocessing_us"])
    if rel.endswith(".pod_viewer.json"):
        doc = json.loads(path.read_text())
        maps = doc["podStatsSequence"]["podStatsMap"]
        assert len(td.pod_viewer) == sum(len(m["podStatsPerCore"]) for m in maps) == 24
        assert len(td.all_reduce_ops) == sum(len(m["allReduceOpDb"]) for m in maps) == 111
        first = maps[0]["podStatsPerCore"]["1"]
        row = td.pod_viewer[(td.pod_viewer["step"] == 0) & (td.pod_viewer["core_id"] == 1)]
        assert row["high_flops_compute_us"].iloc[0] == first["highFlopsComputeUs"]
        assert row["replica_id"].iloc[0] == maps[0]["coreIdToReplicaIdMap"]["1"]


@pytest.mark.parametrize("name", DEMO_RUNS)
def test_each_shared_run_directory_loads_every_tool(demos, name):
    run = tw.load(demos[name])
    files = sorted(p.name for p in demos[name].iterdir())
    assert sorted(run.tool_data.files["path"].map(lambda p: p.rsplit("/", 1)[-1])) == files
    assert run.warnings == []
    expected_steps = 3 if "TPU" in name else 11
    assert len(run.steps) == run.overview_summary.n_steps == expected_steps
    assert len(run.ops) == {"demo_GPU-input-bound": 9749, "demo_Cloud-TPU": 731}.get(name, 0)
    assert "no trace" in repr(run)


def upstream_sums() -> dict[str, str]:
    """SHA-256 of each upstream file, as tests/data/tooldata/SHA256SUMS records it (taken
    from the files of tensorflow/profiler's demo when they were copied here)."""
    lines = (TOOLDATA / "SHA256SUMS").read_text().splitlines()
    return {rel: digest for digest, rel in (ln.split() for ln in lines if not ln.startswith("#"))}


def test_every_copy_has_its_upstream_sum():
    assert sorted(upstream_sums()) == sorted(FILES)


@pytest.mark.parametrize("rel", FILES)
def test_the_copies_are_the_upstream_files(rel):
    """Each copy holds the upstream bytes (gzip-compressed where stored as .gz): the numbers
    the tests below check are those of tensorflow/profiler's files, not of an edited copy."""
    ours = TOOLDATA / rel
    if ours.exists():
        data = ours.read_bytes()
    else:
        data = gzip.decompress((TOOLDATA / (rel + ".gz")).read_bytes())
    assert hashlib.sha256(data).hexdigest() == upstream_sums()[rel]


# -- exactness on the TF 2.2 input-bound run ---------------------------------------------------
@pytest.fixture(scope="module")
def input_bound(demos):
    return tw.load(demos["demo_GPU-input-bound"]), demos["demo_GPU-input-bound"]


def test_input_bound_op_stats_are_the_pb_numbers_exactly(input_bound):
    run, d = input_bound
    data = (d / "localhost.tensorflow_stats.pb").read_bytes()
    for table, ours in (
        (4, run.ops),
        (5, op_stats(run, include_idle=False)),
    ):
        raw = raw_tf_stats(data, table)
        assert len(ours) == len(raw)
        assert ours["host"].astype(str).unique().tolist() == ["localhost"]
        for col in ("host_or_device", "type", "operation"):
            assert ours[col].astype(str).tolist() == [r[col] for r in raw], col
        for col in (
            "occurrences",
            "total_time_us",
            "avg_time_us",
            "total_self_time_us",
            "avg_self_time_us",
        ):
            assert np.array_equal(ours[col].to_numpy(), [r[col] for r in raw]), col
        # The file's fractions of the side's self time, as percents.
        assert np.array_equal(ours["self_time_percent"], [r["self_fraction"] * 100 for r in raw])
        assert np.array_equal(
            ours["cumulative_self_time_percent"], [r["cumulative_fraction"] * 100 for r in raw]
        )
    assert run.tool_data.tf_stats["rank"].tolist() == [r["rank"] for r in raw_tf_stats(data, 4)]
    # Self-time sums from the independent research count (x14: 702,871,100.945 µs host,
    # 98,073,969.635 µs device, IDLE included).
    side = run.ops.groupby("host_or_device", observed=True)["total_self_time_us"].sum()
    assert side["Host"] == pytest.approx(702_871_100.945, abs=1e-3)
    assert side["Device"] == pytest.approx(98_073_969.635, abs=1e-3)


def test_input_bound_overview_is_the_pb_numbers_exactly(input_bound):
    run, d = input_bound
    page = (d / "localhost.overview_page.pb").read_bytes()
    pipeline = field(page, 2)[0]
    o = run.overview_summary
    steps = raw_steps(pipeline)
    per_step = [field(a, 2)[0] for a in field(pipeline, 4)]
    # Every step's numbers (PerGenericStepDetails: 3 unknown, 6 device compute, 8 host
    # compute, 9 host prepare, 11 waiting for input; ms).
    for ours, number in (
        ("all_others_us", 3),
        ("device_compute_us", 6),
        ("host_compute_us", 8),
        ("kernel_launch_us", 9),
        ("host_wait_input_us", 11),
    ):
        assert np.array_equal(
            run.steps[ours], np.array([first_double(s, number) for s in per_step]) * 1e3
        ), ours
    assert np.array_equal(run.steps["input_us"], run.steps["host_wait_input_us"])
    assert run.steps["start_us"].isna().all()  # the files record no step times of day
    # The step-time summary (field 2: average, standard deviation, minimum, maximum).
    summary = field(pipeline, 2)[0]
    assert (o.step_time_ms_avg, o.step_time_ms_std, o.step_time_ms_min, o.step_time_ms_max) == (
        first_double(summary, 1),
        first_double(summary, 2),
        first_double(summary, 3),
        first_double(summary, 4),
    )
    assert o.step_time_ms_avg == pytest.approx(1114.498922909)
    assert o.n_steps == len(steps) == 11
    # Input share: TF 2.2 leaves the result's input_percent unset; the page's figure is the
    # average of the per-step percentages.
    assert o.input_percent == first_double(field(pipeline, 3)[0], 1)
    assert o.input_percent == pytest.approx(81.372162555)
    breakdown = field(field(pipeline, 8)[0], 2)[0]  # Any -> GenericStepTimeBreakdown
    assert o.breakdown_ms_avg["device_compute_us"] == first_double(field(breakdown, 4)[0], 1)
    assert o.breakdown_ms_avg["input_us"] == first_double(field(breakdown, 11)[0], 1)
    # The verdicts, word for word.
    rec = field(page, 4)[0]
    assert o.input_classification == field(rec, 1)[0].decode() == "host"
    assert o.input_statement == field(rec, 2)[0].decode()
    assert o.input_statement.startswith("Your program is HIGHLY input-bound because 81.4%")
    generic = field(field(rec, 6)[0], 2)[0]  # Any -> GenericRecommendation
    assert o.kernel_launch_classification == field(generic, 1)[0].decode() == "no"
    assert o.all_other_classification == field(generic, 3)[0].decode() == "no"
    assert field(generic, 5)[0].decode() in o.recommendations  # the precision statement
    analysis = field(page, 3)[0]
    assert o.device_compute_16bit_percent == first_double(analysis, 9) == 0.0
    assert o.device_compute_32bit_percent == first_double(analysis, 10) == 100.0
    env = dict(fields(field(page, 6)[0]))
    assert (o.device_type, o.device_core_count) == (env[4].decode(), env[5]) == ("GPU", 8)
    # The top ops, with their times from the TF stats.
    top = field(analysis, 4)
    names = [field(t, 1)[0].decode() for t in top]
    assert o.top_ops["operation"].astype(str).tolist() == names
    assert np.array_equal(
        o.top_ops["cumulative_self_time_percent"], [first_double(t, 4) * 100 for t in top]
    )
    dev = run.ops[run.ops["host_or_device"] == "Device"].set_index("operation")
    assert o.top_ops["total_self_time_us"].tolist() == [
        dev.loc[n, "total_self_time_us"] for n in names
    ]


def test_input_bound_input_pipeline_is_the_pb_numbers_exactly(input_bound):
    run, d = input_bound
    pipeline = (d / "localhost.input_pipeline.pb").read_bytes()
    ip = run.input_pipeline
    ops = field(pipeline, 6)
    assert ip.input_ops["operation"].tolist() == [field(o, 1)[0].decode() for o in ops]
    assert np.array_equal(ip.input_ops["total_time_us"], [first_double(o, 3) * 1e3 for o in ops])
    # XProf's total % in its own column; the share of input time needs the trace's calls.
    assert np.array_equal(ip.input_ops["time_percent_xprof"], [first_double(o, 4) for o in ops])
    assert ip.input_ops["time_percent"].isna().all()
    breakdown = field(pipeline, 5)[0]
    assert ip.advanced_file_read_us == first_double(breakdown, 2)
    assert ip.preprocessing_us == first_double(breakdown, 3)
    assert (ip.enqueue_us, ip.demanded_file_read_us) == (0.0, 0.0)
    assert ip.input_percent_std == first_double(field(pipeline, 3)[0], 2)
    assert ip.tf_data_used
    assert schema.mismatches(ip.steps, schema.INPUT_PIPELINE_STEPS) == []
    assert np.allclose(
        ip.steps["input_percent"], 100 * ip.steps["input_us"] / ip.steps["step_time_us"]
    )
