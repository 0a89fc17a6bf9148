"""What keeps a view's build and display cheap (issue 29 item 11: every view drawn within 1 s
of its cell, in a fresh kernel too), each checked for what it must not change:

* a view computes the blocks of each of its choices once, however many outputs read them
  (the static text, the payload, the image, ``tables()``);
* figures are built from plotly.js dicts without plotly.py's validation: built validated
  from the same dicts, every view's payload is the same (so each property is one plotly
  accepts, written as plotly writes it).
"""

import collections
import itertools
import json

import numpy as np
import pandas as pd
import pytest
from conftest import ROOT, SAMPLES

import tfprof_widgets as tw
from tfprof_widgets.views import _common

TORCH = ROOT / "tests" / "data" / "chrome" / "torch_transformer_h100.pt.trace.json.gz"
BERT = ROOT / "tests" / "data" / "bert_8gpu_multi_worker.xplane.pb"
JAX = ROOT / "tests" / "data" / "xplane_h100_jax" / "jax_cnn_nographs.xplane.pb"
VIEWS = (
    "overview",
    "op_stats",
    "kernel_stats",
    "memory_timeline",
    "input_pipeline",
    "tf_data_graph",
    "pod_viewer",
    "compare",
    "operators",
)


@pytest.fixture(scope="module")
def runs() -> dict:
    paths = {"gpu_shaped": SAMPLES / "gpu_shaped", "input_bound": SAMPLES / "input_bound"}
    paths["bert_8gpu"] = BERT
    paths["jax_h100"] = JAX
    paths["torch_h100"] = TORCH
    return {k: tw.load(p, progress=False) for k, p in paths.items()}


def make(name: str, run, other):
    return tw.views.compare(run, other) if name == "compare" else getattr(tw.views, name)(run)


@pytest.mark.parametrize("name", VIEWS)
def test_each_choice_is_computed_once(runs, name, monkeypatch):
    """The outputs of a notebook display and a report all read one computation of each
    choice's blocks: the operator view once computed its default choice twice (tables() and
    the payload each asked blocks()), and each blocks() ran its analyses and figures again."""
    other = runs["input_bound"]
    for cap, run in runs.items():
        view = make(name, run, other)
        calls: collections.Counter = collections.Counter()
        blocks = view.blocks

        def counted(calls=calls, blocks=blocks, **values):
            calls[tuple(sorted(values.items()))] += 1
            return blocks(**values)

        monkeypatch.setattr(view, "blocks", counted)
        view.static_html()
        view.has_static_figure()
        view.tables()
        first = view.payload_json(2)
        view.static_figure()
        view.html()
        assert view.payload_json(2) == first
        choices = view.choices()
        combos = list(itertools.product(*[c.values() for c in choices]))
        assert len(calls) == len(combos), (cap, calls)
        assert set(calls.values()) == {1}, (cap, calls)


def test_figures_built_without_validation_are_what_plotly_validates(runs, monkeypatch):
    """The operator view's step plot, compare's change bars, the input pipeline's plots,
    the tf.data graph and the roofline (validated add_* calls before, 0.1-0.2 s a view)
    beside the views test_views.py checks the same way: each view's payload, on runs where
    those figures are drawn."""
    pairs = [
        ("operators", "torch_h100", None),
        ("compare", "gpu_shaped", "input_bound"),
        ("compare", "bert_8gpu", "input_bound"),
        ("input_pipeline", "input_bound", None),
        ("input_pipeline", "bert_8gpu", None),
        ("tf_data_graph", "input_bound", None),
        ("tf_data_graph", "bert_8gpu", None),
        ("roofline", "jax_h100", None),
    ]
    pairs = [p for p in pairs if p[1] in runs]

    def payloads() -> list[dict]:
        return [json.loads(make(name, runs[a], runs.get(b)).payload_json()) for name, a, b in pairs]

    quick = payloads()
    drawn = {
        f["name"]
        for p in quick
        for blocks in p["variants"].values()
        for b in blocks
        if b["kind"] == "figs"
        for f in b["figs"]
    }
    assert {"delta", "device_side", "host_side", "graph", "roofline"} <= drawn
    assert "steps" in drawn or "torch_h100" not in runs
    monkeypatch.setattr(_common, "VALIDATE_FIGURES", True)
    assert payloads() == quick


def test_a_cell_run_again_reuses_what_its_view_read_of_the_run(runs, monkeypatch):
    """What a view computes from a run beyond its cached analyses (the op table without
    IDLE and its merge and encoding, each allocator's breakdown at the peak, the op diff of
    two runs) is kept on the run: the same view again (a cell run again, 0.05-0.12 s warm
    on the BERT capture) reads it, gives the same payload, and clear_cache forgets it."""
    from tfprof_widgets.views import compare_view, memory_view

    run, other = runs["bert_8gpu"], runs["input_bound"]
    makers = [
        lambda: tw.views.op_stats(run),
        lambda: tw.views.op_stats(run, include_idle=True),
        lambda: tw.views.memory_timeline(run),
        lambda: tw.views.compare(run, other),
    ]
    first = [m().payload_json() for m in makers]
    assert len(json.loads(first[2])["variants"]) > 1  # every allocator's breakdown in it

    def computed(*args, **kwargs):
        raise AssertionError("computed again")

    monkeypatch.setattr(memory_view, "memory_breakdown", computed)
    monkeypatch.setattr(compare_view, "op_diff", computed)
    monkeypatch.setattr("tfprof_widgets.analysis.op_stats.op_stats", computed)  # imported late
    assert [m().payload_json() for m in makers] == first
    run.clear_cache()
    with pytest.raises(AssertionError, match="computed again"):
        tw.views.memory_timeline(run).payload_json()
    monkeypatch.undo()
    assert [m().payload_json() for m in makers] == first


def test_a_cell_run_again_encodes_no_table_again(runs, monkeypatch):
    """The op table, each allocator's breakdown and the operator and kernel tables of a
    PyTorch run are encoded for the page once per run (thousands of rows: 0.03-0.1 s)."""
    from tfprof_widgets.views import tables

    makers = [
        lambda: tw.views.op_stats(runs["bert_8gpu"]),
        lambda: tw.views.memory_timeline(runs["bert_8gpu"]),
    ]
    if "torch_h100" in runs:
        makers.append(lambda: tw.views.operators(runs["torch_h100"]))
    first = [m().payload_json() for m in makers]

    def encoded(self):
        raise AssertionError("encoded again")

    monkeypatch.setattr(tables.Table, "_encoded", encoded)
    assert [m().payload_json() for m in makers] == first


def test_string_hover_columns_encode_as_a_series_of_them_does(runs):
    """A plot's hover columns that are numpy arrays of strings are encoded without a pandas
    Series (2 ms a column): the same JSON as the Series path gives, on the memory views'
    own columns and on strings that take each of its forms (plain, categories, front-coded)."""
    from tfprof_widgets.views import tables

    rng = np.random.default_rng(0)
    long = [f"/very/long/op/path/{'x' * 40}/{i % 70}" for i in range(300)]
    columns = [
        np.array(["b", "a", "b", "µs", "Ω", "a"], dtype=object),
        np.array(["b", "a", "c"]),  # <U
        np.array([], dtype=object),
        np.array(long, dtype=object),
        np.array([str(v) for v in rng.integers(0, 5, 200)], dtype=object),
        np.array(["a", None, "b"], dtype=object),  # not strings only: the Series path
        np.array(["a", 1], dtype=object),
    ]
    for run in runs.values():
        view = tw.views.memory_timeline(run)
        for p in base_plots(view):
            for cols in (p.custom or {}).values():
                columns += [c for c in cols if isinstance(c, np.ndarray)]
    assert len(columns) > 20
    forms = set()
    for c in columns:
        fast = tables.encode_column(c)
        assert fast == tables._encode(pd.Series(c), tables._kind(pd.Series(c)), None)
        forms.add(next(iter(fast)) if isinstance(fast, dict) else "values")
    assert forms == {"values", "cats", "fc"}


def base_plots(view) -> list:
    from tfprof_widgets.views.base import View

    return View._plots(view.default_blocks())
