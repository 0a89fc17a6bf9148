"""``fig_json`` (views/_display.py) writes a figure's plotly.js JSON without plotly.py's
``to_plotly_json`` (a deep copy of the figure and its default template, then a walk that
turns arrays into typed arrays through narwhals: 0.1 s for a view's 10 figures, issue 29
item 11). Its JSON must be exactly what that way gave: compared here on every figure of
every view and choice, on real captures, with both of plotly's JSON engines, and on the
array kinds plotly treats specially."""

import importlib.util
import itertools

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import plotly.io as pio
import pytest
from conftest import ROOT, SAMPLES
from plotly.io.json import to_json_plotly

import tfprof_widgets as tw
from tfprof_widgets.views import _common, base, registry
from tfprof_widgets.views.page import display as _display

CAPTURES = {
    "gpu_shaped": SAMPLES / "gpu_shaped",
    "input_bound": SAMPLES / "input_bound",
    "bert_8gpu": ROOT / "tests" / "data" / "bert_8gpu_multi_worker.xplane.pb",
    "torch_h100": ROOT / "tests" / "data" / "chrome" / "torch_transformer_h100.pt.trace.json.gz",
    "jax_h100": ROOT / "tests" / "data" / "xplane_h100_jax" / "jax_cnn_nographs.xplane.pb",
}
# Every view of the table but the trace viewer (a canvas of its own: no plotly figures).
VIEWS = tuple(v.name for v in registry.VIEWS if v.name != "timeline")
# plotly writes JSON with orjson where it is installed (it is optional), else with json.
ENGINES = ["json"] + (["orjson"] if importlib.util.find_spec("orjson") else [])


def plotly_way(fig: go.Figure) -> str:
    """What fig_json gave before: plotly.py's own dict, the template emptied."""
    d = fig.to_plotly_json()
    d["layout"] = {**d.get("layout", {}), "template": {}}
    return _display.script_safe(to_json_plotly(d))


def every_figure(view) -> list[tuple[str, go.Figure]]:
    """Each figure of each choice of the view, named ``choice values/plot name``."""
    out = []
    choices = view.choices()
    for combo in itertools.product(*[c.values() for c in choices]):
        blocks = view.blocks(**dict(zip([c.id for c in choices], combo)))
        out += [(f"{combo}/{p.name}", p.fig) for p in base.View._plots(blocks)]
    return out


@pytest.fixture(scope="module")
def figures() -> list[tuple[str, go.Figure]]:
    out = []
    for cap, path in CAPTURES.items():
        run = tw.load(path, progress=False)
        for name in VIEWS:
            make = getattr(tw.views, name)
            view = make(run, run) if name == "compare" else make(run)
            out += [(f"{cap}/{name}/{k}", f) for k, f in every_figure(view)]
    return out


@pytest.mark.parametrize("engine", ENGINES)
def test_every_view_figure_gives_the_json_plotly_gave(figures, engine, monkeypatch):
    monkeypatch.setattr(pio.json.config, "default_engine", engine)
    names = {k.split("/")[1] for k, _ in figures}
    # Quick (unvalidated) and validated figures, pies, bars, lines, scatters: all views.
    assert {"overview", "op_stats", "memory_timeline", "compare", "pod_viewer"} <= names
    assert len(figures) > 40
    differ = [k for k, f in figures if _display.fig_json(f) != plotly_way(f)]
    assert not differ


def test_fig_json_neither_copies_nor_changes_the_figure(figures, monkeypatch):
    """No to_plotly_json (the deep copy) on the way, and the figure is as it was after."""
    name, fig = next((k, f) for k, f in figures if "memory_timeline" in k)
    before = plotly_way(fig)
    arrays = {id(v) for t in fig._data for v in t.values() if isinstance(v, np.ndarray)}

    def no_copy(self):
        raise AssertionError("to_plotly_json deep-copies the figure")

    monkeypatch.setattr(go.Figure, "to_plotly_json", no_copy)
    first = _display.fig_json(fig)
    assert _display.fig_json(fig) == first
    monkeypatch.undo()
    assert plotly_way(fig) == before == first
    assert arrays == {id(v) for t in fig._data for v in t.values() if isinstance(v, np.ndarray)}


ARRAYS = {
    "float64": np.array([0.5, -1.25, np.nan, 3e12]),
    "float32": np.array([1.5, 2.5], dtype=np.float32),
    "float16": np.array([1.5, 2.5], dtype=np.float16),  # no typed array: a list
    "int8 range": np.array([-128, 127], dtype=np.int64),
    "int16 range": np.array([-129, 200], dtype=np.int64),
    "int32 range": np.array([-40_000, 70_000], dtype=np.int64),
    "int64 range": np.array([0, 2**40], dtype=np.int64),  # too big: a list
    "uint64": np.array([1, 70_000], dtype=np.uint64),
    "uint64 big": np.array([1, 2**40], dtype=np.uint64),
    "int32": np.array([1, 2], dtype=np.int32),
    "uint8": np.array([1, 2], dtype=np.uint8),
    "bool": np.array([True, False]),
    "empty": np.array([], dtype=float),
    "2-d": np.arange(6, dtype=float).reshape(2, 3),
    "strided": np.arange(10, dtype=float)[::3],
    "objects": np.array(["a", 1], dtype=object),
    "strings": np.array(["a", "b"]),
    "datetimes": np.array(["2024-01-01T00:00:00"], dtype="datetime64[ns]"),
    "series": pd.Series([1.0, 2.0], index=[5, 7]),
    "int series": pd.Series([1, 300]),
    "nullable series": pd.Series([1, None], dtype="Int64"),
    "category series": pd.Series(["a", "b", "a"], dtype="category"),
    "index": pd.Index([1.0, 2.0]),
    "list": [1, 2.5, None],
}


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("kind", list(ARRAYS))
def test_arrays_plotly_treats_specially(kind, engine, monkeypatch):
    """Each kind of array in a trace, under a skipped key (``range``), inside a list and
    in a nested dict, as plotly's own conversion gives it."""
    monkeypatch.setattr(pio.json.config, "default_engine", engine)
    v = ARRAYS[kind]
    trace = {"type": "scatter", "x": v, "customdata": [v, {"y": v}], "marker": {"color": v}}
    layout = {"xaxis": {"range": v}, "annotations": [{"text": "a", "x": v}], "title": "t"}
    for fig in (
        _common.quick_figure([trace], layout),
        go.Figure(data=[trace], layout=layout, _validate=False),
    ):
        assert outcome(_display.fig_json, fig) == outcome(plotly_way, fig)


def outcome(write, fig) -> tuple:
    """The JSON, or the error's type where plotly cannot write it (float16 with orjson)."""
    try:
        return ("json", write(fig))
    except Exception as exc:
        return ("error", type(exc))
