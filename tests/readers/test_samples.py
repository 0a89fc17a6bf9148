"""Real TF 2.21 captures in sample_profiles/: the reader agrees with a plain protobuf walk."""

import numpy as np
import pandas as pd
import pytest
from conftest import SAMPLES, sample_files, tree_state
from xspace_builder import protobuf_walk_counts, protobuf_walk_stat_count

import tfprof_widgets as tw
from tfprof_widgets import schema


def test_every_sample_is_present_and_small():
    for name in ("keras_fit", "custom_loop", "input_bound"):
        files = sample_files(name)
        assert len(files) == 1, name
        assert files[0].stat().st_size < 4 * 2**20


def test_counts_equal_protobuf_walk(sample):
    run = tw.load(sample)
    (path,) = sample_files(sample.name)
    expected = protobuf_walk_counts(path)
    got = (
        run.events.merge(run.lines[["plane", "line", "line_id"]], on=["plane", "line"])
        .groupby(["plane", "line_id"], observed=True)
        .size()
    )
    assert {(str(p), int(i)): int(n) for (p, i), n in got.items()} == {
        (p, int(i)): n for (p, i), n in expected.items()
    }
    assert len(run.event_stats) == protobuf_walk_stat_count(path)
    assert run.lines["n_events"].sum() == len(run.events)
    assert run.planes["n_events"].sum() == len(run.events)


def test_tables_follow_the_schema(sample):
    run = tw.load(sample)
    for table, spec in [
        (run.events, schema.EVENTS),
        (run.event_stats, schema.EVENT_STATS),
        (run.planes, schema.PLANES),
        (run.lines, schema.LINES),
        (run.event_metadata, schema.EVENT_METADATA),
        (run.plane_stats, schema.PLANE_STATS),
        (run.metadata_stats, schema.METADATA_STATS),
    ]:
        assert list(table.columns) == list(spec)
        for col, (dtype, _) in spec.items():
            assert str(table[col].dtype) == dtype or (
                dtype == "category" and isinstance(table[col].dtype, pd.CategoricalDtype)
            ), col


def test_times_are_relative_and_consistent(sample):
    run = tw.load(sample)
    ev = run.events
    assert ev["start_us"].min() == 0.0
    assert (ev["dur_us"] >= 0).all()
    np.testing.assert_allclose(ev["end_us"], ev["start_us"] + ev["dur_us"])
    # Sorted by line, then start time.
    for _, g in ev.groupby(["host", "plane", "line"], observed=True):
        assert g["start_us"].is_monotonic_increasing
    # t0 is the capture's wall-clock start (epoch ns, late 2026 for these samples).
    start = run.plane_stats.query("stat == 'profile_start_time'")["int_value"].iloc[0]
    assert start <= run.t0_ns < start + 10**10


def test_every_stat_value_is_reachable(sample):
    run = tw.load(sample)
    (path,) = sample_files(sample.name)
    from tfprof_widgets.proto import xplane_pb2

    space = xplane_pb2.XSpace()
    space.ParseFromString(path.read_bytes())
    plane = space.planes[0]
    names = {k: m.name for k, m in plane.stat_metadata.items()}
    # Compare a per-name count and the string values of ref stats with the raw walk.
    raw = {}
    for ln in plane.lines:
        for e in ln.events:
            for s in e.stats:
                raw[names[s.metadata_id]] = raw.get(names[s.metadata_id], 0) + 1
    got = run.event_stats.groupby("stat", observed=True).size().to_dict()
    assert got == raw
    refs = run.event_stats[run.event_stats["kind"] == "str"]["str_value"].astype(str)
    assert not refs.str.startswith("<ref ").any()


@pytest.mark.parametrize("name,steps", [("keras_fit", 4), ("input_bound", 10)])
def test_steps_found(name, steps):
    run = tw.load(SAMPLES / name)
    assert run.events["step"].nunique() == steps
    markers = run.events[run.events["name"].isin(["train", "Profiled batch"])]
    assert len(markers) == steps
    assert markers["group_id"].notna().all()


def test_custom_loop_has_level3_and_python_events():
    run = tw.load(SAMPLES / "custom_loop")
    names = run.events["name"].astype(str)
    assert (names == "ExecutorPropagateOutputs").sum() > 100  # host tracer level 3
    assert names.str.startswith("$").sum() > 1000  # Python tracer
    assert run.events["step"].nunique() >= 8


def test_ops_run_on_executor_threads_inside_steps():
    run = tw.load(SAMPLES / "input_bound")
    ev = run.events
    # TF ops read 'op_name:OpType' (one colon); 'Class::Method' events are runtime internals.
    is_op = ev["name"].astype(str).str.fullmatch(r"[^:]+:[A-Za-z0-9_]+")
    ops = ev[is_op & ev["line"].astype(str).str.startswith("tf_Compute")]
    assert len(ops) > 100
    # Every TF op on an executor thread of the training function belongs to some step.
    assert ops["step"].notna().all()


def test_loading_writes_nothing(sample):
    before = tree_state(sample)
    tw.load(sample)
    tw.list_runs(sample)
    assert tree_state(sample) == before


def test_profile_options_record_what_the_profiler_did():
    """custom_loop was captured through a profiler server with host level 3 and the Python
    tracer; keras_fit with TF's plain start(), whose defaults it records."""
    import tfprof_widgets as tw

    loop = tw.load(SAMPLES / "custom_loop").profile_options
    assert loop[["host_tracer_level", "python_tracer_level", "device_tracer_level"]].iloc[
        0
    ].tolist() == [3, 1, 1]
    fit = tw.load(SAMPLES / "keras_fit").profile_options
    assert fit[["host_tracer_level", "python_tracer_level"]].iloc[0].tolist() == [2, 0]
    assert bool(fit["include_dataset_ops"].iloc[0])
