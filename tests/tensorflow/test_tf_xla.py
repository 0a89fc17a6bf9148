"""TensorFlow with XLA (issue 27's "TF with XLA"): a Keras 3 ``model.fit(..., jit_compile=True)``
captured with TF 2.21's own profiler on CPU (tests/data/tf_xla_cpu, made by
scripts/make_tf_xla_capture.py), against xprof 2.24 on the same file (tests/golden/tf_xla_cpu,
made by scripts/make_golden.py).

What such a capture holds: TF's host events (the tf.function calls, tf.data, eager ops), the
train function's XLA program in ``/host:metadata`` (its ``Hlo Proto``), and XLA's CPU thunks
on the TF compute and Eigen threads, each carrying ``hlo_op``, ``hlo_module`` and
``program_id``, with no device plane."""

from __future__ import annotations

import pathlib

import numpy as np
import pytest
from fidelity_figures import differences, our_figures, rows, xprof_figures
from golden_tables import data_table, golden

import tfprof_widgets as tw

ROOT = pathlib.Path(__file__).resolve().parents[2]
CAPTURE = ROOT / "tests" / "data" / "tf_xla_cpu" / "keras_fit_jit.xplane.pb"
KEY = ["host_or_device", "type", "operation"]


@pytest.fixture(scope="module")
def run():
    return tw.load(CAPTURE, progress=False)


def test_the_run_says_tensorflow_with_xla(run):
    """A mixed run is named as one: TF's rules for its host events, XLA's for its programs."""
    assert run.framework.name == "tensorflow+xla"
    assert run.framework.title == "TensorFlow with XLA"
    assert "framework: TensorFlow with XLA" in repr(run)


def test_op_stats_are_xprofs_row_for_row(run):
    """Every (host/device, type, operation) row of XProf's framework op stats, with its
    occurrences and total and self times. XLA's CPU thunks are no TF ops for XProf; ours
    counts them as host rows beyond XProf (tests/test_xla_cpu_ops.py), left out here."""
    gold = data_table(golden("tf_xla_cpu", "framework_op_stats")[0])
    ops = run.ops[~run.ops["beyond_xprof"]]
    m = gold.merge(ops, on=KEY, how="outer", indicator=True, suffixes=("_xprof", ""))
    assert (m["_merge"] == "both").all(), m[m["_merge"] != "both"][KEY + ["_merge"]]
    assert len(m) > 20
    np.testing.assert_array_equal(m["occurrences_xprof"], m["occurrences"])
    for ours, theirs in (
        ("total_time_us", "total_time"),
        ("total_self_time_us", "total_self_time"),
    ):
        np.testing.assert_allclose(m[ours], m[theirs], rtol=1e-6, atol=1e-3)


def test_hlo_stats_are_empty_as_xprofs(run):
    """HLO stats count device ops; XLA on the CPU runs none (XProf lists no row either)."""
    assert golden("tf_xla_cpu", "hlo_stats")["rows"] == []
    assert run.hlo_stats.empty


def test_each_thunk_names_an_instruction_of_its_program_and_its_tf_op(run):
    """XLA's CPU thunks (``hlo_op`` on the compute threads) are instructions of the program
    the capture carries, and the instructions' metadata names the Keras model's TF ops."""
    ev = run.events.assign(hlo_op=run.stat("hlo_op"), program_id=run.stat("program_id"))
    thunks = ev[ev["hlo_op"].notna()]
    assert len(thunks) > 100
    inst = run.hlo_instructions
    known = set(zip(inst["program_id"].astype(int), inst["instruction"].astype(str)))
    pairs = set(zip(thunks["program_id"].astype(int), thunks["hlo_op"].astype(str)))
    assert pairs <= known, sorted(pairs - known)[:5]
    named = inst[inst["instruction"].isin(thunks["hlo_op"].astype(str).unique())]["op_name"]
    assert named.astype(str).str.startswith("sequential_1/conv2d_1/").any()
    assert named.astype(str).str.startswith("gradient_tape/").any()


def test_steps_are_the_train_function_calls_where_xprof_finds_none(run):
    """Keras 3 marks no step in a plain ``fit``. XProf 2.24 then reports no step; we count
    each call of the most-called tf.function (Keras' train function, six batches) as a
    step, on purpose (docs/capture.md): the only difference from XProf's figures."""
    assert rows(golden("tf_xla_cpu", "overview_page")[1]).empty
    assert (run.step_count.steps, run.step_count.averaged) == (6, 4)
    assert run.steps["step"].tolist() == list(range(6))
    theirs = xprof_figures({"overview_page": golden("tf_xla_cpu", "overview_page")})
    assert theirs["input_statement"].startswith("No step time measured")
    diff = differences(our_figures(run), theirs)
    assert [d.split(":")[0] for d in diff] == ["steps", "input_statement"], diff
