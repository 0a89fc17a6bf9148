"""The previous release's names still work for one release, each with a DeprecationWarning
that names the new spelling (everywhere else in the tests such a warning is an error)."""

import importlib
import sys
import warnings

import pandas as pd
import pytest
from conftest import SAMPLES

import tfprof_widgets as tw
from tfprof_widgets import _deprecated


@pytest.fixture(scope="module")
def run():
    return tw.load(SAMPLES / "input_bound")


def deprecated(call, new: str):
    """Call, and check that exactly the deprecation naming ``new`` was raised."""
    with pytest.warns(DeprecationWarning, match="will be removed in the next release") as rec:
        out = call()
    assert any(new in str(w.message) for w in rec), [str(w.message) for w in rec]
    return out


@pytest.mark.parametrize("old", sorted(_deprecated.NAMES))
def test_every_old_top_level_name_warns_and_works(old, run):
    module, name, spelled = _deprecated.NAMES[old]
    func = deprecated(lambda: getattr(tw, old), spelled)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        args = (run, run) if old == "compare" else (run,)
        if old == "tfprof_view":
            tf1 = tw.load(SAMPLES / "tf1_graph" / "model.tfprof")
            got = func(tf1, view="op", select=["micros"])
            assert got.equals(tw.tfprof_table(tf1, "op", select=["micros"]))
            return
        old_view = func(*args)
    assert type(old_view) is type(getattr(importlib.import_module(module), name)(*args))
    assert old not in tw.__all__


def test_unknown_names_still_raise():
    with pytest.raises(AttributeError):
        tw.no_such_thing  # noqa: B018


@pytest.mark.parametrize(
    "old,attr,new,new_module",
    [
        (
            "tfprof_widgets.widgets.lod",
            "downsample_minmax",
            "downsample_minmax",
            "views.timeline_lod",
        ),
        ("tfprof_widgets.widgets.op_stats", "pie_values", "pie_values", "views.op_stats_view"),
        ("tfprof_widgets.widgets.timeline", "timeline", "timeline", "views.timeline_view"),
        ("tfprof_widgets.widgets.tables", "html_table", "html_table", "views.tables"),
        ("tfprof_widgets.capture.session", "Capture", "Capture", "capturing.session"),
        ("tfprof_widgets.capture.rundir", "reserve_run_dir", "reserve_run_dir", "capturing.rundir"),
        ("tfprof_widgets.magic.tfprof", "TfprofMagics", "TfprofMagics", "magic.magics"),
        (
            "tfprof_widgets.analysis.tfprof_views",
            "tfprof_node_stats",
            "tfprof_node_stats",
            "frameworks.tensorflow.tfprof_tables",
        ),
    ],
)
def test_old_module_paths_import_the_new_modules(old, attr, new, new_module):
    sys.modules.pop(old, None)
    module = deprecated(lambda: importlib.import_module(old), "tfprof_widgets." + new_module)
    target = importlib.import_module("tfprof_widgets." + new_module)
    assert getattr(module, attr) is getattr(target, new)


@pytest.mark.parametrize(
    "package,name,new",
    [
        ("tfprof_widgets.widgets", "overview", "tfprof_widgets.views.overview"),
        ("tfprof_widgets.widgets", "input_pipeline_view", "tfprof_widgets.views.input_pipeline"),
        ("tfprof_widgets.widgets", "op_diff", "tfprof_widgets.analysis.compare.op_diff"),
        ("tfprof_widgets.capture", "remote_capture", "tfprof_widgets.capturing.remote_capture"),
    ],
)
def test_old_packages_give_their_names(package, name, new):
    old = importlib.import_module(package)  # registered up front; warns on use
    got = deprecated(lambda: getattr(old, name), new)
    module, _, attr = new.rpartition(".")
    assert got is getattr(importlib.import_module(module), attr)


def test_the_capture_function_is_not_shadowed_by_the_old_package():
    """tfprof_widgets.capture is the capture() function, also after its old package path was
    imported (the subpackage is capturing/ now)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        from tfprof_widgets.capture.session import Capture  # noqa: F401
    assert tw.capture is importlib.import_module("tfprof_widgets.capturing").capture
    assert callable(tw.capture)


def test_renamed_classes_keywords_and_arguments(run):
    from tfprof_widgets.analysis import input_pipeline
    from tfprof_widgets.frameworks.tensorflow import tf_data
    from tfprof_widgets.views import timeline_lod, timeline_view
    from tfprof_widgets.views.timeline_lod import TraceModel

    assert deprecated(lambda: input_pipeline.InputPipelineAnalysis, "InputPipelineSummary") is (
        input_pipeline.InputPipelineSummary
    )
    assert deprecated(lambda: tf_data.TfDataStats, "TfDataSummary") is tf_data.TfDataSummary
    view = deprecated(lambda: tw.views.timeline(run, window=(0.0, 1000.0)), "window_us")
    assert view.window_us == (0.0, 1000.0)
    # The plotly timeline and its model were replaced by the trace viewer and its model.
    assert deprecated(lambda: timeline_lod.TimelineModel, "TraceModel") is TraceModel
    assert deprecated(lambda: timeline_view.TimelineView, "TraceViewer") is type(view)
    model = run.timeline_model
    assert isinstance(model, TraceModel)
    marks = deprecated(lambda: model.view(0.0, 1000.0), "TimelineModel.window()")
    assert len(marks) == len(model.window(0.0, 1000.0))
    table = deprecated(lambda: tw.per_host_steps(run.steps), "per_host_steps(run)")
    pd.testing.assert_frame_equal(table, tw.per_host_steps(run))
    diff = deprecated(lambda: tw.op_diff(run.ops, run.ops), "pass the runs")
    # Op tables carry no steps: the old form gives the totals alone (per-step columns NaN).
    totals = [c for c in diff.columns if "per_step" not in c]
    pd.testing.assert_frame_equal(diff[totals], tw.op_diff(run, run)[totals])
    assert diff["delta_per_step_us"].isna().all()
    load = deprecated(
        lambda: importlib.import_module("tfprof_widgets.run").load, "tfprof_widgets.load"
    )
    assert load is tw.load


def test_our_own_code_uses_no_deprecated_name():
    """pytest turns these DeprecationWarnings into errors (pyproject.toml), so every other
    test, notebook and the report run without touching an old name."""
    with pytest.raises(DeprecationWarning):
        warnings.warn("x will be removed in the next release: use y", DeprecationWarning, 1)
