"""The viewer script sent ahead of a view (issue 29 item 11): on a fresh page, plotly.js takes
0.35-0.6 s to parse and run. In a notebook's kernel a view sends it as an output of its own
the moment it starts being built, so the page runs it while the kernel computes; the view's
own script then carries only its payload. Outside a kernel, for the trace viewer and for a
report's views, nothing is sent ahead."""

import json

import pytest
from conftest import SAMPLES

import tfprof_widgets as tw
from tfprof_widgets import _kernel, report
from tfprof_widgets.views.page import display as _display
from tfprof_widgets.views.page import lib as _lib
from tfprof_widgets.views.page import png as _png

PLOTLY = "plotly.js (basic - minified) v4.1.1"


class Display:
    """IPython's display(), noting each output and what the view had computed by then."""

    def __init__(self, run):
        self.run, self.outputs = run, []

    def __call__(self, data, raw=False, display_id=None, metadata=None):
        self.outputs.append((data, "steps" in self.run.__dict__))


@pytest.fixture
def run():
    return tw.load(SAMPLES / "input_bound", progress=False)  # fresh: nothing computed yet


@pytest.fixture
def shown(run, monkeypatch):
    import IPython.display

    fake = Display(run)
    monkeypatch.setattr(IPython.display, "display", fake)
    monkeypatch.setattr(_png, "available", lambda: False)
    cells = iter([("c1", 1)] * 50)
    monkeypatch.setattr(_lib, "_cell", lambda: next(cells))
    _display.reset_lib()
    yield fake
    _display.reset_lib()


def scripts(outputs) -> list[str]:
    return [d["application/javascript"] for d, _ in outputs if "application/javascript" in d]


def test_in_a_kernel_the_script_goes_before_the_view_is_built(shown, run, monkeypatch):
    monkeypatch.setattr(_kernel, "in_kernel", lambda: True)
    view = tw.views.overview(run)
    assert len(shown.outputs) == 1  # sent at construction, not at display
    data, computed = shown.outputs[0]
    assert set(data) == {"application/javascript", "text/plain"} and data["text/plain"] == ""
    assert PLOTLY in data["application/javascript"] and not computed  # before the analyses
    assert "hideOutput(element)" in data["application/javascript"]  # an output that hides
    view._ipython_display_()
    tw.views.op_stats(run)._ipython_display_()  # a second view in the same cell
    js = scripts(shown.outputs)
    assert len(js) == 3 and all(PLOTLY not in s for s in js[1:]), "the script went once"
    assert all("var payload = " in s for s in js[1:])


def test_outside_a_kernel_the_view_carries_the_script(shown, run):
    assert not _kernel.in_kernel()
    view = tw.views.op_stats(run)
    assert shown.outputs == []
    view._ipython_display_()
    (js,) = scripts(shown.outputs)
    assert PLOTLY in js and "var payload = " in js


def test_the_trace_viewer_and_a_report_send_nothing_ahead(shown, run, monkeypatch):
    monkeypatch.setattr(_kernel, "in_kernel", lambda: True)
    tw.views.timeline(run)
    report.report_views(run)
    assert shown.outputs == []
    tw.views.kernel_stats(run)  # the first view after them still does
    assert len(shown.outputs) == 1 and PLOTLY in scripts(shown.outputs)[0]


def test_a_view_shown_in_another_cell_carries_the_script_again(shown, run, monkeypatch):
    """Made in one cell (the script went ahead there), shown in the next: if the first cell
    were re-run without the view, the notebook would keep a view with no script to draw it."""
    monkeypatch.setattr(_kernel, "in_kernel", lambda: True)
    cells = iter([("c1", 1), ("c1", 1), ("c2", 2), ("c2", 2), ("c2", 2)])
    monkeypatch.setattr(_lib, "_cell", lambda: next(cells))
    view = tw.views.op_stats(run)  # cell c1
    assert PLOTLY in scripts(shown.outputs)[0]
    view._ipython_display_()  # cell c2
    assert PLOTLY in scripts(shown.outputs)[-1]


class Shell:
    """What prefetch uses of a kernel's IPython: its events."""

    def __init__(self):
        from IPython.core.events import EventManager, available_events

        self.events = EventManager(self, available_events)


class Shown:
    """IPython's display() with display ids: each output and its updates, in order."""

    def __init__(self):
        self.outputs: list[dict] = []

    def __call__(self, data, raw=False, display_id=None, metadata=None):
        self.outputs.append(data)
        if display_id:
            i = len(self.outputs) - 1

            class Handle:
                def update(_self, new, raw=False):
                    self.outputs[i] = new

            return Handle()
        return None


@pytest.fixture
def kernel(monkeypatch):
    import IPython
    import IPython.display

    shell, shown = Shell(), Shown()
    monkeypatch.setattr(IPython, "get_ipython", lambda: shell)
    monkeypatch.setattr(IPython.display, "display", shown)
    monkeypatch.setattr(_kernel, "in_kernel", lambda: True)
    monkeypatch.setattr(_lib, "_prefetched", False)
    monkeypatch.setattr(_png, "available", lambda: False)
    monkeypatch.delenv("TFPROF_WIDGETS_PRELOAD", raising=False)
    cells = iter([("c2", 2)] * 50)  # the view's cell
    monkeypatch.setattr(_lib, "_cell", lambda: next(cells))
    _display.reset_lib()
    yield shell, shown
    _display.reset_lib()


def test_the_first_load_in_a_kernel_sends_the_script_and_keeps_it_out_of_the_notebook(kernel):
    shell, shown = kernel
    run = tw.load(SAMPLES / "input_bound", progress=False)
    assert len(shown.outputs) == 1
    sent = shown.outputs[0]["application/javascript"]
    assert sent == _lib.lib_ahead_js() and PLOTLY in sent
    tw.load(SAMPLES / "input_bound", progress=False)  # once per kernel
    assert len(shown.outputs) == 1
    shell.events.trigger("post_run_cell", None)  # the load's cell ends
    # Nothing left in the saved notebook that a front end would draw: an output that hid
    # itself by a script showed as an empty row where the notebook was reopened without a
    # view (no viewer came to run the hiding) or untrusted (its empty text/plain shown).
    assert shown.outputs[0] == {}
    assert shell.events.callbacks["post_run_cell"] == []  # its hook went with it
    # The first view still carries the script in its own cell (the notebook needs it), in the
    # very text the page ran at the load: its JavaScript engine compiles that only once.
    view = tw.views.op_stats(run)
    assert shown.outputs[1]["application/javascript"] == sent
    view._ipython_display_()
    assert PLOTLY not in shown.outputs[-1]["application/javascript"]


def test_in_jupyterlab_the_first_load_sends_the_script_as_a_model_not_an_output(
    kernel, monkeypatch
):
    """Issue 42 item 8: any output of a load's cell (one that hid itself, or one emptied at
    the end) kept an empty row under the cell when the notebook was reopened. In JupyterLab
    the script goes as an anywidget model never displayed (anywidget runs its module when
    the model is made), by a comm of its own: the state anywidget itself would send."""
    import anywidget
    import comm

    class Same(anywidget.AnyWidget):
        _esm = "export default {}"

    theirs = Same().get_state()
    _, shown = kernel
    opened = []
    monkeypatch.setattr(_kernel, "page_keeps_outputs", lambda: True)
    monkeypatch.setattr(comm, "create_comm", lambda **kw: opened.append(kw) or object())
    tw.load(SAMPLES / "input_bound", progress=False)
    tw.load(SAMPLES / "input_bound", progress=False)  # once per kernel
    assert shown.outputs == []
    (sent,) = opened
    assert sent["target_name"] == "jupyter.widget"
    assert sent["metadata"] == {"version": __import__("ipywidgets").__protocol_version__}
    state = sent["data"]["state"]
    assert state["_esm"] == _lib.ahead_module() and json.dumps(_lib.lib_ahead_js()) in state["_esm"]
    for key in ("_model_name", "_model_module", "_model_module_version", "_view_name"):
        assert state[key] == theirs[key], key


def test_no_script_at_load_outside_a_kernel_or_with_preload_off(kernel, monkeypatch):
    _, shown = kernel
    monkeypatch.setenv("TFPROF_WIDGETS_PRELOAD", "0")
    tw.load(SAMPLES / "input_bound", progress=False)
    assert shown.outputs == []
    monkeypatch.delenv("TFPROF_WIDGETS_PRELOAD")
    monkeypatch.setattr(_kernel, "in_kernel", lambda: False)
    tw.load(SAMPLES / "input_bound", progress=False)
    assert shown.outputs == []
    with _lib.lib_not_ahead():  # a report's loads
        monkeypatch.setattr(_kernel, "in_kernel", lambda: True)
        tw.load(SAMPLES / "input_bound", progress=False)
    assert shown.outputs == []
