"""Every analysis's output has the columns and dtypes that tfprof_widgets.schema documents,
on CPU, GPU, multi-host and TF1 runs, empty results included; and the list of analyses in
tfprof_widgets.analysis is what a Run and the package expose."""

import pytest
from conftest import SAMPLES
from golden_tables import synthetic_gpu_path

import tfprof_widgets as tw
from tfprof_widgets import schema
from tfprof_widgets.catalog import ANALYSES
from tfprof_widgets.run import Run

NOT_TF1 = ValueError  # tfprof analyses of a run without a TF1 graph


@pytest.fixture(scope="module", params=["input_bound", "keras_fit", "gpu", "multi_host", "tf1"])
def run(request, tmp_path_factory):
    if request.param == "gpu":
        return tw.load(synthetic_gpu_path())
    if request.param == "multi_host":
        from xspace_builder import write_multi_host_run

        root = tmp_path_factory.mktemp("multi")
        write_multi_host_run(root, hosts=("a", "b"), n_steps=4)
        return tw.load(root)
    if request.param == "tf1":
        return tw.load(SAMPLES / "tf1_graph" / "model.tfprof")
    return tw.load(SAMPLES / request.param)


def check(table, spec):
    assert schema.mismatches(table, spec) == []


@pytest.mark.parametrize("analysis", ANALYSES, ids=lambda a: a.name)
def test_each_analysis_returns_what_the_list_says(run, analysis):
    try:
        result = getattr(run, analysis.name)
    except NOT_TF1:
        assert run.tfprof_nodes.empty and "tfprof" in analysis.function
        return
    assert getattr(run, analysis.name) is result  # cached
    if analysis.table is None:
        assert type(result).__name__ == analysis.returns
        return
    spec = getattr(schema, analysis.table)
    if analysis.table == "PER_HOST_STEPS":  # one step-time column per host, then these
        assert list(result.columns[: len(run.hosts)]) == sorted(map(str, set(run.steps["host"])))
        result = result[list(spec)]
    check(result, spec)


def test_tables_inside_the_results(run):
    ip = run.input_pipeline
    check(ip.steps, schema.INPUT_PIPELINE_STEPS)
    check(ip.input_ops, schema.INPUT_OPS)
    t = run.tf_data
    check(t.iterators, schema.TF_DATA_ITERATORS)
    check(t.executions, schema.TF_DATA_EXECUTIONS)
    check(t.pipelines, schema.TF_DATA_PIPELINES)
    check(t.events, schema.TF_DATA_EVENTS)
    check(t.iterator_stats(), schema.TF_DATA_ITERATOR_STATS)
    check(t.to_frame(), schema.TF_DATA_PIPELINES)
    o = run.overview_summary
    check(o.top_ops, schema.OP_STATS)
    check(o.to_frame(), schema.SUMMARY_FRAME)
    check(ip.to_frame(), schema.SUMMARY_FRAME)
    check(run.line_summary(), schema.LINE_SUMMARY)
    check(tw.op_diff(run, run), schema.OP_DIFF)


def test_tf1_tables():
    from tfprof_widgets.frameworks.tensorflow.tfprof_tables import (
        TABLE_METRICS,
        tfprof_node_stats,
    )

    run = tw.load(SAMPLES / "tf1_graph" / "model.tfprof")
    check(tfprof_node_stats(run), schema.TFPROF_NODE_STATS)
    table = tw.tfprof_table(run, "scope", select=["micros", "params"])
    assert list(table.columns[:4]) == list(schema.TFPROF_TABLE)
    check(table[list(schema.TFPROF_TABLE)], schema.TFPROF_TABLE)
    assert list(table.columns[4:]) == ["exec_us", "total_exec_us", "parameters", "total_parameters"]
    assert set(TABLE_METRICS) >= {c.removeprefix("total_") for c in table.columns[4:]}


def test_every_analysis_is_a_run_attribute_and_has_no_second_facade():
    names = [a.name for a in ANALYSES]
    assert len(set(names)) == len(names)
    for a in ANALYSES:
        assert callable(a.resolve())
        assert isinstance(Run.__dict__[a.name].__doc__, str)
        assert a.table is None or hasattr(schema, a.table)
    # One facade (issue 38): an analysis is read on the run (run.steps), the package has no
    # function of the same name (or of its old one) returning what the run caches.
    for name in [*names, "step_breakdown"]:
        assert name not in tw.__all__ and not hasattr(tw, name), name
