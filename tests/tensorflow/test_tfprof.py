"""TF1 tfprof profiles and RunMetadata, checked against tf.compat.v1.profiler on the same data.

tests/tf1_reference.py (run once per session, in its own process: graph mode is
process-wide) trains a small graph-mode model for two FULL_TRACE steps, saves the Profiler's
serialized profile and each RunMetadata, and records TensorFlow's own FLOPs, parameter and
op-view answers.
"""

import json
import os
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
from conftest import ROOT, tree_state

import tfprof_widgets as tw
from tfprof_widgets.frameworks.tensorflow.tfprof_tables import tfprof_node_stats
from tfprof_widgets.proto import tfprof_pb2

if os.environ.get("CI") != "true":
    pytest.importorskip("tensorflow")


@pytest.fixture(scope="module")
def ref(tmp_path_factory):
    out = tmp_path_factory.mktemp("tf1")
    proc = subprocess.run(
        [sys.executable, str(ROOT / "tests" / "support" / "tf1_reference.py"), str(out)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return out, json.loads((out / "reference.json").read_text())


@pytest.fixture(scope="module")
def pool_ref(tmp_path_factory):
    """A second model the other tests do not use (conv, max pool, dense; three steps)."""
    out = tmp_path_factory.mktemp("tf1_pool")
    proc = subprocess.run(
        [sys.executable, str(ROOT / "tests" / "support" / "tf1_reference.py"), str(out), "pool"],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return out, json.loads((out / "reference.json").read_text())


CHAIN = ["name", "exec_us", "total_exec_us", "requested_bytes", "total_requested_bytes", "nodes"]
SAVED = ROOT / "tests" / "data" / "tfprof_conv_pool_dense"


def _time_and_memory_chain(run, **options) -> list:
    """Our op table with time_and_memory()'s options, as tfprof's op view rows."""
    table = tw.tfprof_table(
        run,
        "op",
        min_micros=1,
        min_bytes=1,
        order_by="micros",
        select=["micros", "bytes"],
        max_depth=10000,
        **options,
    )
    return table[CHAIN].values.tolist()


def test_op_view_is_tfprofs_chain(pool_ref):
    """tfprof's op view with ProfileOptionBuilder.time_and_memory(): each row's totals are
    cumulative over the rows from it down, and min_bytes=1 filters those totals, so op types
    with no bytes of their own (ReluGrad, Reshape, ...) show; every row, in tfprof's order,
    with tfprof's own and total figures (Profiler.profile_operations). The preset's
    account_displayed_op_only is our default too; without it the totals also count the
    rows the filters hide, as tfprof's do."""
    out, want = pool_ref
    run = tw.load(out / "model.tfprof")
    got = _time_and_memory_chain(run)
    assert got == want["op_chain"]
    assert _time_and_memory_chain(run, account_displayed_op_only=True) == got
    assert _time_and_memory_chain(run, account_displayed_op_only=False) == want["op_chain_all"]
    table = pd.DataFrame(got, columns=CHAIN)
    zero_bytes = table.loc[table["requested_bytes"] == 0, "name"].tolist()
    assert {"ReluGrad", "Reshape"} <= set(zero_bytes)
    assert table["total_exec_us"].iloc[0] == table["exec_us"].sum()


def test_op_view_counts_only_the_rows_it_shows():
    """Issue 29 item 17, on a saved capture where it shows: time_and_memory() sets
    account_displayed_op_only, so tfprof's op view sums only the rows it shows. Its feed
    node `_arg_y_0_1` (1 µs, no bytes) sorts below the last op type with bytes, where
    min_bytes=1 hides it; counting it anyway put every cumulative total 1 µs above tfprof's
    (2 µs when such hidden rows add up to 2), the rows being the same. Our default is the
    preset's; account_displayed_op_only=False counts the hidden rows, as tfprof does then.
    tfprof's rows for both come from tfprof itself on this file (test below)."""
    want = json.loads((SAVED / "tfprof_op_chains.json").read_text())
    shown, counted = want["account_displayed_op_only=True"], want["account_displayed_op_only=False"]
    run = tw.load(SAVED / "model.tfprof")
    assert _time_and_memory_chain(run) == shown
    assert _time_and_memory_chain(run, account_displayed_op_only=False) == counted
    # The same rows; the difference is the time of the op types hidden below the last one.
    everything = tw.tfprof_table(run, "op", order_by="micros", select=["micros", "bytes"])
    hidden = everything.iloc[len(shown) :]
    assert everything["name"].iloc[: len(shown)].tolist() == [r[0] for r in shown]
    assert hidden.loc[hidden["exec_us"] > 0, "name"].tolist() == ["_arg_y_0_1"]
    assert (hidden["total_requested_bytes"] == 0).all()
    extra = hidden["exec_us"].sum()
    assert extra == 1
    assert [r[0] for r in counted] == [r[0] for r in shown]
    assert [c[2] - s[2] for c, s in zip(counted, shown)] == [extra] * len(shown)


def test_saved_op_chains_are_tfprofs_own():
    """tfprof_op_chains.json is what tfprof itself reads from the saved profile."""
    proc = subprocess.run(
        [sys.executable, str(ROOT / "tests" / "support" / "tf1_reference.py"), "--chains"]
        + [str(SAVED / "model.tfprof")],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    theirs = json.loads(proc.stdout.strip().splitlines()[-1])
    assert theirs == json.loads((SAVED / "tfprof_op_chains.json").read_text())


def test_flops_and_parameters_match_tensorflow(ref):
    out, want = ref
    run = tw.load(out / "model.tfprof")
    assert run.total_float_ops == want["total_float_ops"] > 0
    assert run.total_parameters == want["total_parameters"] == 62_810
    scopes = tw.tfprof_table(
        run, "scope", account_type_regexes=["_trainable_variables"], select=["params"], max_depth=0
    )
    assert dict(zip(scopes["name"], scopes["total_parameters"])) == want["scope_parameters"]


@pytest.mark.parametrize("step,key", [(-1, "op_view_avg"), (0, "op_view_step0")])
def test_op_table_times_and_memory_match_tensorflow(ref, step, key):
    out, want = ref
    table = tw.tfprof_table(
        tw.load(out / "model.tfprof"),
        "op",
        step=step,
        select=["micros", "bytes", "peak_bytes", "residual_bytes", "output_bytes", "float_ops"],
    ).set_index("name")
    assert sorted(table.index) == sorted(want[key])
    for op, w in want[key].items():
        got = table.loc[op]
        assert (
            got["exec_us"],
            got["requested_bytes"],
            got["peak_bytes"],
            got["residual_bytes"],
            got["output_bytes"],
            got["float_ops"],
            got["nodes"],
        ) == (
            w["exec_micros"],
            w["requested_bytes"],
            w["peak_bytes"],
            w["residual_bytes"],
            w["output_bytes"],
            w["float_ops"],
            w["nodes"],
        ), op
    assert table["exec_us"].sum() > 0


def _tfprof_frame_name(name: str) -> str:
    suffix = " (gradient)" if name.endswith(" (gradient)") else ""
    file, line, func = name[: len(name) - len(suffix)].split(":", 2)
    if len(func) >= 20:
        func = func[:17] + "..."
    return f"{file}:{line}:{func}{suffix}"


@pytest.mark.parametrize("cmd", ["scope", "graph", "code"])
def test_tree_tables_match_tensorflow(ref, cmd):
    """Every row of tfprof's scope, graph and code tables (order_by name): same names (tfprof
    shortens code frames), depths, own and total time and memory, in the same order (the
    code table's siblings sort by different names, so its rows are compared as a set)."""
    out, want = ref
    got = tw.tfprof_table(tw.load(out / "model.tfprof"), cmd, select=["micros", "bytes"])
    names = got["name"]
    if cmd == "code":
        names = names.str.replace(r"^.*/", "", regex=True)
    ours = [
        [
            n,
            int(r.depth),
            int(r.exec_us),
            int(r.total_exec_us),
            int(r.requested_bytes),
            int(r.total_requested_bytes),
        ]
        for n, r in zip(names, got.itertuples())
    ]
    theirs = want[f"{cmd}_view"]
    if cmd == "code":  # tfprof cuts function names of 20+ characters to 17 and '...'
        ours = [[_tfprof_frame_name(n), *rest] for n, *rest in ours]
    assert len(ours) == len(theirs) > 20
    if cmd == "code":  # siblings sort by our full path, tfprof's by its short name
        ours, theirs = sorted(ours), sorted(theirs)
    assert ours == theirs


def test_run_metadata_steps_follow_tfprofs_rules(ref):
    """Reading the RunMetadata files ourselves gives, node by node, what tfprof computed
    from them (its ProfileProto); RunMetadata alone has no graph, so no FLOPs or params."""
    out, _ = ref
    prof = tw.load(out / "model.tfprof")
    steps = tw.load(out / "steps")  # both step files: one run, two steps
    assert steps.hosts == ["localhost"] and steps.steps["step"].tolist() == [0, 1]
    cols = [
        "exec_us",
        "cpu_exec_us",
        "run_count",
        "requested_bytes",
        "peak_bytes",
        "residual_bytes",
        "output_bytes",
    ]
    for step in (0, 1, -1):
        a = tfprof_node_stats(prof, step).set_index("node")[cols]
        b = tfprof_node_stats(steps, step).set_index("node")[cols]
        shared = a.index.intersection(b.index)
        assert len(shared) >= 40 and set(b.index) - set(a.index) <= {"_SOURCE"}
        pd.testing.assert_frame_equal(a.loc[shared], b.loc[shared], check_dtype=False)
    assert steps.tfprof_nodes["float_ops"].isna().all()


def test_runs_work_with_the_other_analyses_and_overview(ref):
    out, _ = ref
    run = tw.load(out / "model.tfprof")
    assert run.steps["step"].tolist() == [0, 1]
    assert (run.steps["step_time_us"] > 0).all()
    assert (run.ops["total_self_time_us"] > 0).any()
    summary = run.overview_summary
    assert any("ExpensiveOperationChecker" in r for r in summary.recommendations)
    assert any("No accelerator" in r for r in summary.recommendations)
    bundle = tw.views.overview(run)._repr_mimebundle_()
    assert "ExpensiveOperationChecker" in bundle["text/html"]


def test_table_options(ref):
    out, _ = ref
    run = tw.load(out / "model.tfprof")
    full = tw.tfprof_table(run, "scope", select=["micros"])
    assert full["depth"].max() >= 3
    assert tw.tfprof_table(run, "scope", max_depth=1, select=["micros"])["depth"].max() == 1
    slow = tw.tfprof_table(run, "scope", min_micros=100, select=["micros"])
    assert (slow["total_exec_us"] >= 100).all() and len(slow) < len(full)
    by_time = tw.tfprof_table(run, "op", order_by="micros", select=["micros"])
    assert by_time["total_exec_us"].is_monotonic_decreasing
    hidden = tw.tfprof_table(run, "scope", hide_name_regexes=["gradients.*"], select=["micros"])
    assert not hidden["name"].str.startswith("gradients").any()
    started = tw.tfprof_table(run, "scope", start_name_regexes=["dense"], select=["micros"])
    assert set(started["name"].str.split("/").str[0]) == {"dense"}
    trimmed = tw.tfprof_table(run, "scope", trim_name_regexes=["gradients"], select=["micros"])
    assert (
        "gradients" in set(trimmed["name"])
        and not trimmed["name"].str.startswith("gradients/").any()
    )
    # The graph table's total covers a node and everything it depends on.
    graph = tw.tfprof_table(run, "graph", select=["micros"]).drop_duplicates("name")
    row = graph.set_index("name").loc["dense/add"]
    assert row["total_exec_us"] >= row["exec_us"] and row["nodes"] > 3
    code = tw.tfprof_table(run, "code", order_by="micros", select=["micros"])
    assert code["name"].iloc[0].startswith(str(ROOT / "tests" / "support" / "tf1_reference.py"))
    avg = tfprof_node_stats(run, -1)
    traced = avg["code"].map(len) > 0  # like tfprof, nodes without a traceback are left out
    assert code.loc[code["depth"] == 0, "total_exec_us"].sum() == avg.loc[traced, "exec_us"].sum()
    with pytest.raises(ValueError, match="cmd must be"):
        tw.tfprof_table(run, "tree")


def test_nhwc_on_gpu_is_flagged(tmp_path):
    """OperationChecker on a synthetic GPU profile (CPU TF cannot make one)."""
    prof = tfprof_pb2.ProfileProto(steps=[0])
    for nid, (name, fmt) in enumerate([("conv/Conv2D", b"NHWC"), ("conv2/Conv2D", b"NCHW")]):
        n = prof.nodes[nid]
        n.name, n.op, n.id = name, "Conv2D", nid
        n.canonical_device = "/job:localhost/replica:0/task:0/device:gpu:0"
        n.op_types.extend([n.canonical_device, "Conv2D"])
        n.attrs["data_format"] = b"\x12" + bytes([len(fmt)]) + fmt
        ex = n.execs[0]
        ex.accelerator_execs[n.canonical_device + "/stream:all"].times.add(
            int64_values=[1_700_000_000_000_000 + 100 * nid, 50]
        )
    path = tmp_path / "gpu.tfprof"
    path.write_bytes(prof.SerializeToString())
    run = tw.load(path)
    advice = run.tfprof_advice
    ops = advice[advice["checker"] == "OperationChecker"]["finding"].tolist()
    assert ops == [
        "1 op(s) on GPU use the NHWC data_format (e.g. conv/Conv2D); NCHW is "
        "usually faster for GPU convolutions."
    ]
    util = advice[advice["checker"] == "AcceleratorUtilizationChecker"]["finding"].iloc[0]
    assert util.startswith("/device:GPU:0: 66.7% utilization")
    assert set(run.planes["plane"].astype(str)) == {"/host:CPU", "/device:GPU:0"}


def test_bad_tfprof_and_run_metadata_files(tmp_path, ref):
    out, _ = ref
    good = (out / "model.tfprof").read_bytes()
    cases = {
        "empty.tfprof": (b"", tw.CorruptProfileError, "empty"),
        "cut.tfprof": (good[: len(good) // 2], tw.CorruptProfileError, "truncated or damaged"),
        "text.tfprof": (good.decode("utf-8", "replace").encode(), tw.ProfileError, ""),
        "xspace.tfprof": (
            next((ROOT / "sample_profiles" / "keras_fit").rglob("*.xplane.pb")).read_bytes(),
            tw.ProfileError,
            "",
        ),
        "nostats.run_metadata.pb": (b"", tw.CorruptProfileError, "empty"),
        "other.run_metadata.pb": (
            tfprof_pb2.RunMetadata().SerializeToString() + b"\x12\x00",
            tw.ProfileError,
            "",
        ),
    }
    for name, (data, err, words) in cases.items():
        path = tmp_path / name
        path.write_bytes(data)
        before = tree_state(tmp_path)
        with pytest.raises(err, match=words or None) as info:
            tw.load(path)
        assert str(path) in str(info.value), name
        assert tree_state(tmp_path) == before
    rm = tfprof_pb2.RunMetadata()
    rm.step_stats.SetInParent()
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "s.run_metadata.pb").write_bytes(rm.SerializeToString() or b"\x0a\x00")
    with pytest.raises(tw.WrongFormatError, match="FULL_TRACE"):
        tw.load(tmp_path / "d" / "s.run_metadata.pb")


def test_field_numbers_match_tensorflows_protos():
    from google.protobuf import symbol_database
    from tensorflow.core.framework import step_stats_pb2  # noqa: F401
    from tensorflow.core.profiler import tfprof_log_pb2  # noqa: F401

    db = symbol_database.Default()
    pairs = {
        "ProfileProto": "tensorflow.tfprof.ProfileProto",
        "ProfileNode": "tensorflow.tfprof.ProfileNode",
        "ExecProfile": "tensorflow.tfprof.ExecProfile",
        "ExecMemory": "tensorflow.tfprof.ExecMemory",
        "ExecTime": "tensorflow.tfprof.ExecTime",
        "CodeDef": "tensorflow.tfprof.CodeDef",
        "Tuple": "tensorflow.tfprof.Tuple",
        "StepStats": "tensorflow.StepStats",
        "DeviceStepStats": "tensorflow.DeviceStepStats",
        "NodeExecStats": "tensorflow.NodeExecStats",
        "AllocatorMemoryUsed": "tensorflow.AllocatorMemoryUsed",
        "NodeOutput": "tensorflow.NodeOutput",
        "MemoryStats": "tensorflow.MemoryStats",
        "TensorDescription": "tensorflow.TensorDescription",
        "AllocationDescription": "tensorflow.AllocationDescription",
    }
    for ours, theirs in pairs.items():
        mine = {f.name: f.number for f in getattr(tfprof_pb2, ours).DESCRIPTOR.fields}
        tf = {f.name: f.number for f in db.GetSymbol(theirs).DESCRIPTOR.fields}
        assert mine == tf, ours
    assert np.array_equal([f.number for f in tfprof_pb2.RunMetadata.DESCRIPTOR.fields], [1])


def test_synthetic_captures_leave_no_temporary_directory(tmp_path):
    """Issue 29 item 16: the tests' synthetic GPU/TPU captures (golden_tables) are written
    under one temporary directory that goes when the process ends; they used to stay
    behind as /tmp/tfprof_gpu_* and /tmp/tfprof_tpu_*, one per call."""
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    code = (
        "import sys; sys.path.insert(0, 'tests/support')\n"
        "import tfprof_widgets as tw\n"
        "from golden_tables import synthetic_gpu_path, synthetic_tpu_path\n"
        "paths = [synthetic_gpu_path(), synthetic_gpu_path(), synthetic_tpu_path()]\n"
        "assert len(set(paths)) == 3 and all(p.is_file() for p in paths)\n"
        "assert all(len(tw.load(p).events) for p in paths)\n"
        "print(paths[0])\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=ROOT,
        env={**os.environ, "TMPDIR": str(tmp)},
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.startswith(str(tmp))  # it did write there
    assert list(tmp.iterdir()) == []
