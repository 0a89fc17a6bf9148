"""tf.data bottleneck analysis. xprof 2.24 no longer ships this tool, so the answers are
stated here from how the pipelines were built (see sample_profiles/make_samples.py)."""

import pandas as pd
import pytest
from conftest import SAMPLES
from xspace_builder import US, XSpaceBuilder

import tfprof_widgets as tw
from tfprof_widgets.frameworks.tensorflow.tf_data import (
    SUGGESTIONS,
    tf_data,
    tf_data_bottleneck,
    tf_data_summary,
)


def test_slow_map_is_the_bottleneck_of_the_input_bound_sample():
    """input_bound: a deliberately slow, sequential map, no prefetch. Every call of the
    pipeline runs the map 32 times (one batch); the Map iterator must be the bottleneck."""
    run = tw.load(SAMPLES / "input_bound")
    b = tf_data_bottleneck(run)
    assert len(b) == 1
    row = b.iloc[0]
    assert row["iterator_name"] == "Map"
    assert row["iterator_long_name"] == "Iterator::Root::ForeverRepeat[0]::BatchV2::Map"
    assert row["bottleneck_type"] == "parallel_version"
    assert "num_parallel_calls" in row["suggestion"]
    assert row["iterator_latency_us"] > 0.9 * row["max_latency_us"]
    assert tf_data_summary(b).startswith("Your profile has a tf.data input pipeline slower")


def test_critical_path_and_self_time_of_the_slowest_call():
    stats = tf_data(tw.load(SAMPLES / "input_bound"))
    assert len(stats.executions) == 10 and stats.executions["is_slow"].all()
    its = stats.iterator_stats()
    assert its["name"].tolist() == ["Root", "ForeverRepeat", "BatchV2", "Map", "TensorSlice"]
    assert its["is_blocking"].all()  # a synchronous pipeline: everything is on the path
    assert its.set_index("name").loc["Map", "calls"] == 32  # one batch of 32 elements
    # Self times add up to the root call (children nest without overlapping).
    root = its.set_index("name").loc["Root", "total_us"]
    assert its["self_us"].sum() == pytest.approx(root, rel=1e-9)
    p = stats.pipelines.iloc[0]
    assert p["calls"] == 10 and p["slow_calls"] == 10 and p["pipeline_name"] == "Host:0"


def test_async_child_outside_the_call_is_not_blocking():
    """A prefetching pipeline whose producer runs after the consumer's call returned: the
    producer is not on the critical path; the root's wait is charged to Prefetch."""
    b = XSpaceBuilder("h")
    cpu = b.plane("/host:CPU")
    main = cpu.line("python", 1)
    bg = cpu.line("tf_data_iterator_resource/2", 2)
    main.event("Iterator::Root", 0, 100 * US, {"id": 1})
    main.event("Iterator::Root::Prefetch", 5 * US, 90 * US, {"id": 2, "parent_id": 1})
    bg.event("Iterator::Root::Prefetch::Map", 96 * US, 50 * US, {"id": 3, "parent_id": 2})
    run = tw.load(b.write(__import__("tempfile").mkdtemp() + "/h.xplane.pb"))
    its = tf_data(run).iterator_stats().set_index("name")
    assert its.loc["Prefetch", "is_blocking"] and its.loc["Prefetch", "is_async"]
    assert its.loc["Root", "self_us"] == pytest.approx(10)
    b_ = tf_data_bottleneck(run).iloc[0]
    assert b_["iterator_name"] == "Prefetch" and b_["bottleneck_type"] == "other"


def test_an_iterator_whose_parents_lead_nowhere_has_no_pipeline():
    """Its parent's events were not captured: the iterator is listed without a pipeline and
    its events are left out; the pipeline the capture does hold is analysed as usual."""
    b = XSpaceBuilder("h")
    line = b.plane("/host:CPU").line("python", 1)
    line.event("Iterator::Root", 0, 100 * US, {"id": 1})
    line.event("Iterator::Root::Map", 5 * US, 90 * US, {"id": 2, "parent_id": 1})
    line.event("Iterator::Root::Batch::Map", 200 * US, 10 * US, {"id": 7, "parent_id": 6})
    run = tw.load(b.write(__import__("tempfile").mkdtemp() + "/h.xplane.pb"))
    its = tf_data(run).iterators.set_index("iterator_id")
    assert its["pipeline"].tolist()[:2] == [1, 1] and its.loc[7, "pipeline"] is pd.NA
    assert 7 not in set(tf_data(run).events["iterator_id"])
    assert tf_data_bottleneck(run)["iterator_name"].tolist() == ["Map"]


def test_no_tf_data():
    b = XSpaceBuilder("h")
    b.plane("/host:CPU").line("python", 1).event("train", 0, 10, {"step_num": 1, "_r": 1})
    run = tw.load(b.write(__import__("tempfile").mkdtemp() + "/h.xplane.pb"))
    bottleneck = tf_data_bottleneck(run)
    assert len(bottleneck) == 0
    assert tf_data_summary(bottleneck).startswith("No tf.data activity captured")


def test_every_suggestion_kind_is_worded():
    assert set(SUGGESTIONS) == {
        "slow_source",
        "slow_data_service",
        "slow_remote_source",
        "parallel_version",
        "sequential",
        "other",
    }
