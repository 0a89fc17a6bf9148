"""Which frameworks a run holds (``run.framework``), and how their rules are asked together.

The rules themselves are tested where they act (steps, op stats, kernels, overview); here:
each framework is told apart on real captures it did not make, a run of two frameworks says
both and asks them in order, and a run of none takes XProf's rules.
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest
from conftest import ROOT, SAMPLES
from xspace_builder import US, XSpaceBuilder, cpu_steps_capture

import tfprof_widgets as tw
from tfprof_widgets.frameworks import FRAMEWORKS, RunFrameworks, rules_of
from tfprof_widgets.frameworks.base import Framework

DATA = ROOT / "tests" / "data"


@pytest.mark.parametrize(
    "path,name",
    [
        (SAMPLES / "input_bound", "tensorflow"),  # TF 2.21 CPU: tf_function_call, tf_Compute
        (SAMPLES / "keras_fit", "tensorflow"),
        (SAMPLES / "tf1_graph" / "model.tfprof", "tensorflow"),  # TF1 tfprof
        (DATA / "bert_8gpu_multi_worker.xplane.pb", "tensorflow"),  # real 8-GPU TF
        (DATA / "tooldata" / "demo_GPU-input-bound", "tensorflow"),  # TF 2.2 tool data
        (DATA / "chrome" / "GPU_timeline_01.json.gz", "tensorflow"),  # tf.client.timeline
        (DATA / "xplane_amd_jax" / "jax08_conv.xplane.pb", "xla"),  # JAX on MI300X
        (SAMPLES / "jax_cnn_cpu", "xla"),  # JAX on CPU, captured by tw.capture(backend="jax")
        (DATA / "chrome" / "resnet50_v100_workers0.pt.trace.json.gz", "pytorch"),  # Kineto
        (DATA / "chrome" / "eager_b200.json.gz", "pytorch"),
        (DATA / "chrome" / "flow.json.gz", "unknown"),  # Chrome's own test trace
    ],
    ids=lambda v: v if isinstance(v, str) else v.name,
)
def test_each_real_capture_names_its_framework(path, name):
    run = tw.load(path, progress=False)
    assert run.framework.name == name
    assert run.framework.title
    assert f"framework: {run.framework.title}" in repr(run)


def test_jax_on_h100_is_xla_not_tensorflow():
    """JAX's runtime names a thread pool 'tf_pjrt_thread_pool' and a host callback
    'ThenExecuteCallback:GetEvent...': neither makes the capture TF's."""
    path = ROOT / "tests" / "data" / "xplane_h100_jax" / "jax_cnn_graphs.xplane.pb"
    assert tw.load(path, progress=False).framework.name == "xla"


def mixed_capture(tmp_path):
    """A TF CPU capture whose GPU also ran an XLA cluster's kernels (hlo_op, program_id)."""
    b = cpu_steps_capture(3)
    gpu = b.plane("/device:GPU:0", 1)
    stream = gpu.line("Stream #7(Compute)", 7)
    stream.event(
        "loop_fusion", 30 * US, 5 * US, {"hlo_op": "fusion.1", "program_id": 4, "correlation_id": 1}
    )
    return b.write(tmp_path / "mixed.xplane.pb")


def test_a_tf_run_with_xla_clusters_says_both(tmp_path):
    run = tw.load(mixed_capture(tmp_path), progress=False)
    assert run.framework.name == "tensorflow+xla"
    assert run.framework.names == ("tensorflow", "xla")
    assert run.framework.title == "TensorFlow with XLA"
    assert "xla" in run.framework and "pytorch" not in run.framework
    assert run.framework.primary.name == "tensorflow"


def test_rules_are_asked_in_order_and_the_first_that_knows_a_name_wins():
    class Upper(Framework):
        name, title, vocabulary = "upper", "Upper", ("UP",)

        def parse_op_names(self, names, memo=None):
            values = np.asarray(names, dtype=object)
            known = np.array([str(v).isupper() for v in values])
            return pd.DataFrame(
                {
                    "category": np.where(known, "upper", "unknown").astype(object),
                    "op_name": values,
                    "op_type": np.where(known, "UPPER", "").astype(object),
                }
            )

    tf = FRAMEWORKS[0]
    both = RunFrameworks((tf, Upper()))
    parsed = both.parse_op_names(pd.Index(["dense/MatMul:MatMul", "ABC"], dtype=object))
    assert parsed["op_type"].tolist() == ["MatMul", "UPPER"]  # TF's name, then Upper's
    assert parsed["category"].tolist() == ["tensorflow", "upper"]


def test_step_markers_are_any_frameworks_and_advice_the_primarys():
    names = pd.Series(["train", "Profiled batch", "train/inner", "ProfilerStep#3"], dtype=object)
    tf_only = RunFrameworks((FRAMEWORKS[0],))
    # XProf's rule plus Keras 3's 'Profiled batch'; a '/' in the name is no marker.
    assert tf_only.step_marker_names(names).tolist() == [True, True, False, False]
    assert "tf.profiler" in tf_only.advice.mark_steps


def test_a_run_of_no_known_framework_takes_xprofs_rules():
    none = RunFrameworks(())
    assert none.name == "unknown" and none.names == ()
    assert [f.name for f in none.rules] == ["tensorflow"]  # XProf's rules are TF's
    assert rules_of(object()).name == "unknown"  # a holder that names no framework


def keras_batches_capture(tmp_path):
    """Keras 3's 'Profiled batch' markers: a step_num but no _r=1, so only a framework rule
    that knows the name makes them steps."""
    b = XSpaceBuilder("cpu")
    b.task_environment(1_700_000_000_000_000_000, 1_700_000_000_010_000_000)
    cpu = b.plane("/host:CPU", 0)
    py = cpu.line("python3", 101)
    for s in range(3):
        py.event("Profiled batch", s * 3000 * US, 1000 * US, {"step_num": s})
    return b.write(tmp_path / "keras.xplane.pb")


def test_steps_come_from_the_rules_a_run_is_given(tmp_path):
    from tfprof_widgets.analysis.grouping import assign_groups

    class Markerless(Framework):
        name, title, vocabulary = "markerless", "Markerless", ("-",)

        def step_marker_names(self, names):
            return np.zeros(len(names), bool)

    run = tw.load(keras_batches_capture(tmp_path), progress=False)
    assert run.framework.name == "tensorflow"
    assert run.events["step"].dropna().nunique() == 3  # TF's rule knows 'Profiled batch'
    ev = run.events.drop(columns=["group_id", "step"])
    args = (ev, run.stat_store, run.event_line_rows, None)
    _, step = assign_groups(*args, RunFrameworks((Markerless(),)))
    assert pd.Series(step).dropna().nunique() == 0
    _, step = assign_groups(*args, RunFrameworks((FRAMEWORKS[0],)))
    assert pd.Series(step).dropna().nunique() == 3


def overview_lines(path) -> list[str]:
    return repr(tw.views.overview(tw.load(path, progress=False))).splitlines()


def test_an_overview_without_steps_says_only_what_the_capture_supports():
    """A PyTorch trace with no step the analyses can use: no input verdict, no TF advice,
    the no-steps statement once, ops named as the framework names them."""
    lines = overview_lines(DATA / "chrome" / "eager_b200.json.gz")
    text = "\n".join(lines)
    assert "not the bottleneck" not in text and "skip the rest" not in text
    assert "tf.profiler" not in text and "tf.data" not in text and "TF op" not in text
    assert sum("No step time measured" in line for line in lines) == 1


def test_a_tf_overview_keeps_tfs_words():
    text = "\n".join(overview_lines(SAMPLES / "input_bound"))
    assert "TF op executions" in text and "tw.views.tf_data_graph(run)" in text
    assert "Section 3" not in text  # TensorBoard's page layout, as our views


@pytest.mark.parametrize(
    "path,title",
    [
        (SAMPLES / "input_bound", "TensorFlow"),
        (SAMPLES / "jax_cnn_cpu", "XLA"),
        (DATA / "chrome" / "eager_b200.json.gz", "PyTorch"),
    ],
    ids=["tf", "jax", "torch"],
)
def test_titles_name_the_captures_framework(path, title):
    from tfprof_widgets.cli import summary_text
    from tfprof_widgets.report import report_html

    run = tw.load(path, progress=False)
    assert tw.views.op_stats(run).title == f"{title} op stats"
    assert f"<title>{title} profile: " in report_html(run)
    # The op column of the kernel stats and the CLI's top ops name the framework's ops too.
    label = {"TensorFlow": "TF op", "XLA": "op", "PyTorch": "operator"}[title]
    if len(run.kernels):
        columns = {c.name: c.label for c in tw.views.kernel_stats(run).table().columns}
        assert columns["operation"] == label
    top = re.search(r"Top \d+ (.+) by self time", summary_text(run))
    assert top is None or top.group(1) == f"{label}s", top


class _First(Framework):
    name, op_label, input_op_types, copy_op_types = "first", "first op", ("X",), {"C": 1}

    def duty_cycle(self, run):
        return 1.0, 2.0

    def overview_verdicts(self, run):
        return {"from": "first"}

    def device_rows_in_steps(self, run, rows):
        return rows[rows > 1]


class _Second(Framework):
    name, op_label, input_op_types, copy_op_types = "second", "2nd op", ("Y", "X"), {"C": 2, "D": 3}
    host_marks_device_steps = True

    def duty_cycle(self, run):
        return 10.0, 20.0

    def hlo_16bit_percent(self, run):
        return 50.0

    def overview_verdicts(self, run):
        return {"from": "second"}

    def device_rows_in_steps(self, run, rows):
        return rows[rows < 4]


def test_each_hook_combines_the_frameworks_answers_by_the_rule_base_declares():
    from tfprof_widgets.frameworks.base import ATTRIBUTES, hooks

    both = RunFrameworks((_First(), _Second()))
    assert both.duty_cycle(None) == (11.0, 22.0)  # summed
    assert both.hlo_16bit_percent(None) == 50.0  # the first that is not None
    assert both.overview_verdicts(None) == {"from": "first"}
    assert both.device_rows_in_steps(None, np.arange(6)).tolist() == [2, 3]  # chained
    assert both.memory_data_type_names() is None  # the primary framework's
    assert both.op_label == "first op" and both.input_op_types == ("X", "Y")
    assert both.copy_op_types == {"C": 1, "D": 3} and both.host_marks_device_steps
    # Every hook base declares is asked of a run's frameworks, and says how.
    assert all(callable(m.combine) for m in hooks().values())
    assert set(hooks()) | set(ATTRIBUTES) <= set(dir(RunFrameworks))
    assert "duty_cycle" in hooks() and "present" not in hooks()
