"""Issue 42 item 7, what views still did more than once or more than needed: the compare
table encoded again for every view of the same two runs, the trace viewer's image figure and
every image's copy validated by plotly.py, the PyTorch memory advice computing the whole
memory summary for one peak per GPU, and a view's cell holding the kernel until its image was
rendered in JupyterLab, which takes the image after the cell as well."""

import collections
import json
import threading

import _plotly_utils.basevalidators as bv
import plotly.graph_objects as go
import pytest
from conftest import ROOT, SAMPLES
from plotly.io.json import to_json_plotly

import tfprof_widgets as tw
from tfprof_widgets import _kernel
from tfprof_widgets.views import _common, tables
from tfprof_widgets.views.page import png as _png
from tfprof_widgets.views.page.display import fig_json
from tfprof_widgets.views.trace import static as timeline_static

KINETO = ROOT / "tests" / "data" / "chrome" / "torch_transformer_h100.pt.trace.json.gz"


@pytest.fixture
def validated(monkeypatch):
    """Counts plotly.py's property validations (each validator's validate_coerce)."""
    calls: collections.Counter = collections.Counter()
    for name in dir(bv):
        cls = getattr(bv, name)
        if isinstance(cls, type) and "validate_coerce" in cls.__dict__:
            original = cls.__dict__["validate_coerce"]

            def counted(self, *args, _original=original, _name=name, **kwargs):
                calls[_name] += 1
                return _original(self, *args, **kwargs)

            monkeypatch.setattr(cls, "validate_coerce", counted)
    return calls


def test_the_compare_table_is_made_and_encoded_once_per_pair(monkeypatch):
    a = tw.load(SAMPLES / "input_bound", progress=False)
    b = tw.load(SAMPLES / "custom_loop", progress=False)
    encoded: list = []
    encode = tables._encode
    monkeypatch.setattr(tables, "_encode", lambda *args: encoded.append(1) or encode(*args))
    first = tw.views.compare(a, b).payload_json()
    n = len(encoded)
    assert n > 0
    again = tw.views.compare(a, b)  # another view of the pair, or its cell run again
    assert again.payload_json() == first and len(encoded) == n
    assert again.table() is tw.views.compare(a, b).table()
    # Other names are other column titles: a table of its own.
    other = tw.views.compare(a, b, names=("slow", "fast"))
    assert other.table() is not again.table() and "slow" in other.payload_json()


def test_the_trace_viewers_image_figure_is_not_validated(validated, monkeypatch):
    view = tw.views.timeline(tw.load(SAMPLES / "gpu_shaped", progress=False))
    fig = timeline_static.static_figure(view)
    assert len(fig.data[0].x) > 30  # enough bars that validating each would show in the count
    assert sum(validated.values()) < 10, validated  # the figure's own data/layout only
    monkeypatch.setattr(_common, "VALIDATE_FIGURES", True)
    same = json.loads(fig_json(timeline_static.static_figure(view)))
    assert same == json.loads(fig_json(fig))  # the same JSON (keys in another order)


def test_an_images_figure_is_what_the_validated_copy_gave(validated):
    run = tw.load(SAMPLES / "input_bound", progress=False)
    for fig in (
        tw.views.overview(run).static_figure(),
        timeline_static.static_figure(tw.views.timeline(run)),
    ):
        _png.image_spec(fig)  # the image template, made once
        validated.clear()
        spec = _png.image_spec(fig)
        assert sum(validated.values()) == 0, validated
        old = go.Figure(fig)
        old.update_layout(template=_png.STATIC_TEMPLATE)
        assert json.loads(to_json_plotly(old.to_dict())) == json.loads(json.dumps(spec))


def test_memory_advice_reads_only_the_peaks():
    run = tw.load(KINETO, progress=False)
    from tfprof_widgets.frameworks.pytorch.steps import allocator_peaks, memory_advice

    assert memory_advice(run) == []  # 2.2 GB of an 80 GB H100
    assert "memory_summary" not in vars(run)  # not made for it
    peaks = allocator_peaks(run)
    summary = run.memory_summary
    assert peaks.tolist() == summary["peak_in_use_bytes"].tolist()
    assert [a for _, a in peaks.index] == summary["allocator"].astype(str).tolist()


class Kernel:
    """What _png and _kernel read of IPython in a kernel: its events, the request's header."""

    def __init__(self, metadata: dict):
        from IPython.core.events import EventManager, available_events

        self.events = EventManager(self, available_events)
        self.kernel = type("K", (), {"get_parent": lambda _self: {"metadata": metadata}})()


JUPYTERLAB = {"cellId": "c1", "deletedCells": [], "recordTiming": False}


@pytest.mark.parametrize("metadata, waits", [(JUPYTERLAB, False), ({}, True)])
def test_a_cell_waits_for_its_image_only_where_the_front_end_reads_none_after_it(
    metadata, waits, monkeypatch
):
    """JupyterLab routes a display update to the output that showed it after its cell ended
    (the saved notebook gets the image from the page); nbconvert and nbval read nothing of a
    cell after it ends, so there the cell waits for the image."""
    import IPython

    shell = Kernel(metadata)
    monkeypatch.setattr(IPython, "get_ipython", lambda: shell)
    monkeypatch.setattr(_kernel, "in_kernel", lambda: True)
    monkeypatch.setattr(_png, "_hooked", False)
    monkeypatch.setenv("TFPROF_WIDGETS_IMAGE_GRACE_S", "0")
    release, got = threading.Event(), []
    monkeypatch.setattr(_png, "render", lambda fig, **kw: release.wait(30) and b"\x89PNG")
    _png.render_async(go.Figure, got.append)
    cell_end = threading.Thread(target=shell.events.trigger, args=("post_run_cell", None))
    cell_end.start()
    cell_end.join(3)
    assert cell_end.is_alive() == waits
    release.set()
    cell_end.join(30)
    _png.wait()
    assert got == [b"\x89PNG"]  # the image came either way
    assert _kernel.page_keeps_outputs() == (not waits)
