"""TF op stats (run.ops) against xprof's framework_op_stats on the same captures."""

import numpy as np
import pandas as pd
import pytest
from conftest import SAMPLES
from golden_tables import data_table, golden, synthetic_gpu_path

import tfprof_widgets as tw
from tfprof_widgets import schema
from tfprof_widgets.analysis.event_index import is_derived_line
from tfprof_widgets.analysis.op_stats import op_stats
from tfprof_widgets.frameworks.tensorflow.op_names import parse_tf_op

KEY = ["host_or_device", "type", "operation"]


def compare(ours: pd.DataFrame, gold: pd.DataFrame) -> pd.DataFrame:
    m = gold.merge(ours, on=KEY, how="outer", indicator=True, suffixes=("_xprof", ""))
    assert (m["_merge"] == "both").all(), m[m["_merge"] != "both"][KEY + ["_merge"]]
    return m


def allocator_ops(run) -> pd.Series:
    """Allocator events carrying a tf_op stat, per op name: xprof (and so do we) counts each
    of them as an occurrence of that op and adds its duration to the op's total."""
    ev = run.events
    mem = ev[ev["name"].isin(["MemoryAllocation", "MemoryDeallocation"]) & ev["tf_op"].notna()]
    names = mem["tf_op"].astype(str).map(lambda s: parse_tf_op(s)[1])
    return names.value_counts()


@pytest.mark.parametrize("sample", ["keras_fit", "custom_loop", "input_bound"])
def test_host_ops_match_xprof(sample):
    run = tw.load(SAMPLES / sample)
    m = compare(run.ops, data_table(golden(sample, "framework_op_stats")[0]))
    for ours, theirs in (
        ("total_time_us", "total_time"),
        ("total_self_time_us", "total_self_time"),
    ):
        np.testing.assert_allclose(m[ours], m[theirs], rtol=0.005, atol=1e-3)
    # Occurrences are xprof's: an allocator event with a tf_op stat is one more occurrence
    # of that op (xprof's host op DB takes every event with a non-empty tf_op stat).
    np.testing.assert_array_equal(m["occurrences_xprof"], m["occurrences"])
    extra = m["operation"].astype(str).map(allocator_ops(run)).fillna(0)
    assert (extra > 0).any()  # the samples do exercise that rule
    # IDLE: each thread's op span minus its ops' self time, summed over threads.
    idle = m[m["type"] == "IDLE"]
    assert len(idle) == 1 and idle["total_time_us"].iloc[0] > 0


def test_percentages_match_xprof():
    run = tw.load(SAMPLES / "input_bound")
    for table, include_idle in ((0, True), (1, False)):
        gold = data_table(golden("input_bound", "framework_op_stats")[table])
        m = compare(op_stats(run, include_idle=include_idle), gold)
        np.testing.assert_allclose(
            m["self_time_percent"] / 100, m["host_total_self_time_percent"], atol=1e-6
        )


def test_device_ops_match_xprof_on_a_gpu_capture():
    run = tw.load(synthetic_gpu_path())
    gold = data_table(golden("synthetic_gpu", "framework_op_stats")[0])
    m = compare(run.ops, gold)
    dev = m[m["host_or_device"] == "Device"]
    assert len(dev) == 4  # three kernels' TF ops and IDLE
    np.testing.assert_allclose(dev["total_time_us"], dev["total_time"])
    np.testing.assert_allclose(dev["total_self_time_us"], dev["total_self_time"])
    np.testing.assert_array_equal(dev["occurrences"], dev["occurrences_xprof"])
    # Host side: the synthetic MemoryAllocation events last 1 µs and carry tf_op; like xprof
    # we add each to the named op (one occurrence, its time), so the rows are xprof's.
    host = m[(m["host_or_device"] == "Host") & (m["type"] != "IDLE")]
    extra = host["operation"].astype(str).map(allocator_ops(run)).fillna(0)
    assert (extra > 0).any()
    np.testing.assert_array_equal(host["occurrences_xprof"], host["occurrences"])
    np.testing.assert_allclose(host["total_time"], host["total_time_us"])


def test_columns_and_order():
    ops = tw.load(SAMPLES / "custom_loop").ops
    assert list(ops.columns) == list(schema.OP_STATS)
    for _, g in ops.groupby(["host", "host_or_device"], observed=True):
        assert g["total_self_time_us"].is_monotonic_decreasing
        assert g["cumulative_self_time_percent"].iloc[-1] == pytest.approx(100)
    ops.to_csv(index=False)  # plain pandas export works


def test_parse_tf_op_rules():
    assert parse_tf_op("dense/MatMul:MatMul") == ("tensorflow", "dense/MatMul", "MatMul")
    assert parse_tf_op("Iterator::Root::Prefetch") == (
        "tf_data",
        "Iterator::Root::Prefetch",
        "Dataset",
    )
    assert parse_tf_op("MemcpyHToD") == ("memcpy", "MemcpyHToD", "MemcpyHToD")
    assert parse_tf_op("ExecutorState::Process")[0] == "unknown"
    assert parse_tf_op("$inspect.py:2751 kind")[0] == "unknown"
    assert parse_tf_op("jit_f/dot_general:dot_general") == (
        "jax",
        "jit_f/dot_general",
        "dot_general",
    )
    assert parse_tf_op("model/conv_3:") == ("jax", "model/conv_3", "conv")


def test_derived_line_ids():
    ids = np.array(
        [
            0xDEADBEEF,
            0xDEADBEEF - (1 << 32),
            0xDEADBEEF + 3,
            -2712749244048203223,
            7672985115908706199,
            14,
        ]
    )
    assert is_derived_line(ids).tolist() == [True, True, True, False, False, False]
