"""The viewer script and its way into a notebook: plotly.js and the viewer, sent once.

The viewer (the modules in ``static/views/``, joined by :mod:`.bundle`) and the vendored
plotly.js basic bundle (``static/plotly-basic.min.js``, bar/pie/scatter, MIT, see
``plotly-basic.LICENSE.txt``) go into a notebook once: with the first view a kernel
displays, and again when the cell that carried them is run again (its outputs, and the script
with them, are replaced). A report embeds them once at its top. Nothing is fetched from a
network.

A fresh page takes a noticeable part of a second to parse and run the script
(docs/speed.md), so in a kernel it goes to the page
before the view needs it: at the first :func:`~tfprof_widgets.load` (:func:`prefetch`), while
the user's next cells run, and again as the first view starts being built
(:func:`send_lib_ahead`), which then costs the page a few milliseconds (the same text: the
page's JavaScript engine keeps its compiled code). Imports no plotly: ``load()`` uses it.
"""

from __future__ import annotations

import base64
import contextlib
import functools
import gzip
import json
import os
import sys
import threading
from importlib import resources

from ... import _kernel
from . import bundle

__all__ = [
    "EMBED_ENV",
    "embed_each",
    "lib_ahead_js",
    "lib_moved",
    "lib_needed",
    "lib_not_ahead",
    "lib_script",
    "packed_lib",
    "prefetch",
    "reset_lib",
    "send_lib_ahead",
    "viewer_lib",
]


@functools.cache
def _static(name: str) -> str:
    return (resources.files("tfprof_widgets.views") / "static" / name).read_text(encoding="utf-8")


@functools.cache  # megabyte-sized (plotly.js): joined once per process
def viewer_lib() -> str:
    """plotly.js (kept private: a page's own ``window.Plotly`` is left as it was) and the
    viewer, as one script that defines ``window.__tfprof`` once per page."""
    return (
        "if (!window.__tfprof) {\n(function () {\n"
        "var had = Object.prototype.hasOwnProperty.call(window, 'Plotly'), prev = window.Plotly;\n"
        "var hadName = Object.prototype.hasOwnProperty.call(window, 'moduleName'),"
        " prevName = window.moduleName;\n"
        # No CommonJS/AMD detection in the bundle may catch a page's own module system.
        "(function (module, exports, define) {\n"
        + _static("plotly-basic.min.js")
        + "\n}).call(window);\n"
        "window.__tfprofPlotly = window.Plotly;\n"
        "if (had) window.Plotly = prev; else delete window.Plotly;\n"
        "if (hadName) window.moduleName = prevName; else delete window.moduleName;\n"
        "})();\n" + bundle.views_script() + "\n}\n"
    )


# -- once per notebook, or in every output --------------------------------------------------
# Colab shows each cell's outputs in a frame of its own (colabtools #19, #23): a script that one
# cell's output ran is not in the next cell's page, so there every viewer output carries the viewer,
# packed (gzip, base64: less than half the size, docs/speed.md). Kaggle's editor is not known to
# share a page between outputs either. Elsewhere (JupyterLab, Notebook 7, VS Code's one webview, an
# nbconvert export) one copy per notebook serves every output.
EMBED_ENV = "TFPROF_WIDGETS_EMBED"


def embed_each() -> bool:
    """Whether every view's output carries the viewer itself: ``TFPROF_WIDGETS_EMBED=each``
    (``once``: one copy per notebook), else in Colab (``google.colab`` is imported in its
    kernel) and Kaggle (``KAGGLE_KERNEL_RUN_TYPE`` in the environment)."""
    mode = os.environ.get(EMBED_ENV, "").strip().lower()
    if mode in ("each", "once"):
        return mode == "each"
    return "google.colab" in sys.modules or "KAGGLE_KERNEL_RUN_TYPE" in os.environ


@functools.cache  # gzip at level 9 of the whole script: once per process
def packed_lib() -> str:
    """:func:`viewer_lib` gzipped (no timestamp: the same bytes every run) and base64'd."""
    return base64.b64encode(gzip.compress(viewer_lib().encode(), 9, mtime=0)).decode("ascii")


def lib_unpack_js() -> str:
    """A script that runs :func:`packed_lib` in this page's global scope, once per page
    (``DecompressionStream``: Chrome 80, Firefox 113, Safari 16.4). The views that wait for it
    are in ``window.__tfprofPending``; a failure is left in ``window.__tfprofUnpackError``."""
    return (
        "if (!window.__tfprof && !window.__tfprofUnpacking) {\n"
        "window.__tfprofUnpacking = true;\n"
        "(function (b64) {\n"
        "  if (typeof DecompressionStream === 'undefined') {\n"
        "    window.__tfprofUnpackError = 'this browser has no DecompressionStream'; return; }\n"
        "  var bin = atob(b64), bytes = new Uint8Array(bin.length);\n"
        "  for (var i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);\n"
        "  var text = new Blob([bytes]).stream().pipeThrough(new DecompressionStream('gzip'));\n"
        "  new Response(text).text().then(function (code) { (0, eval)(code); })\n"
        "    .catch(function (e) { window.__tfprofUnpackError = String(e); });\n"
        f'}})("{packed_lib()}");\n'
        "}\n"
    )


_lib_sent_in: tuple[object, object] | None = None  # (cell id, execution count) that carried it


def reset_lib() -> None:
    """Forget that the viewer script was sent (the next view carries it again)."""
    global _lib_sent_in
    _lib_sent_in = None


def _cell() -> tuple[object, object]:
    """The running cell's id (JupyterLab sends it) and execution count, where known."""
    try:
        from IPython import get_ipython

        ip = get_ipython()
        if ip is None:
            return None, None
        cell_id = None
        kernel = getattr(ip, "kernel", None)
        if kernel is not None and hasattr(kernel, "get_parent"):
            cell_id = (kernel.get_parent() or {}).get("metadata", {}).get("cellId")
        return cell_id, ip.execution_count
    except Exception:  # no kernel: a script; the report path embeds the script itself
        return None, None


def lib_needed() -> bool:
    """Whether the next viewer output must carry the script: the first one in this kernel,
    or the first one of a new run of the cell that carried it (its old outputs are gone)."""
    global _lib_sent_in
    here = _cell()
    if _lib_sent_in is None:
        _lib_sent_in = here
        return True
    cell_id, count = _lib_sent_in
    if cell_id is not None and here[0] == cell_id and here[1] != count:
        _lib_sent_in = here
        return True
    return False


# A fresh page takes a noticeable part of a second to parse and run the viewer script
# (plotly.js included; docs/speed.md). Sent
# after the view's analyses, that time came on top of them; sent when a view starts being
# built, the page runs it while the kernel computes (issue 29 item 11).
_ahead_off = 0


@contextlib.contextmanager
def lib_not_ahead():
    """Views made inside this block send no viewer script ahead (a report makes views for a
    file, not for the cell's outputs)."""
    global _ahead_off
    _ahead_off += 1
    try:
        yield
    finally:
        _ahead_off -= 1


def send_lib_ahead() -> tuple[object, object] | None:
    """In a notebook's kernel, where this cell needs the viewer script (:func:`lib_needed`):
    send it now, as an output of its own that hides itself, ahead of the view's outputs
    (their script finds ``window.__tfprof`` there, or waits for it). Returns the cell it
    went into (None: not sent)."""
    if _ahead_off or not _kernel.in_kernel() or embed_each() or not lib_needed():
        return None
    from IPython.display import display

    display({"application/javascript": lib_ahead_js(), "text/plain": ""}, raw=True)
    return _cell()


def lib_moved(sent_in: tuple[object, object] | None) -> bool:
    """Whether a view whose construction sent the script ahead into cell ``sent_in`` is shown
    in another cell (or another run of it): it then carries the script again, or a notebook
    whose first cell is re-run without the view would keep views that cannot draw."""
    return sent_in is not None and sent_in != _cell()


def lib_ahead_js() -> str:
    """The application/javascript of the viewer script sent ahead: the script, then its own
    output hidden (an empty output would still take a row), then a small view like the real
    ones drawn off screen while the page waits (``warmUp`` in static/views/outputs.js)."""
    return (
        viewer_lib() + "(function (element) {\n"
        "var t = window.__tfprof;\n"
        "if (element && t && t.hideOutput) t.hideOutput(element);\n"
        # The page is idle until the view's payload comes: its first plot drawn meanwhile,
        # unless a view came first (a warm-up would then only delay it; its node may not be
        # in the page yet, so the viewer counts the views it mounted).
        "if (t && t.warmUp && !t.warmed) { t.warmed = true; setTimeout(function () {\n"
        "  if (!t.mountCount()) t.warmUp(); }, 0); }\n"
        "})(typeof element !== 'undefined' ? element : null);\n"
    )


def lib_script() -> str:
    """The viewer script as an HTML <script> (a report embeds it once)."""
    return "<script>" + viewer_lib().replace("</script", "<\\/script") + "</script>"


# -- ahead of the first view ------------------------------------------------------------------
# A load's cell keeps nothing of the script in the saved notebook (no plotly.js in it; the first
# view's cell carries the script). In JupyterLab it goes to the page as an anywidget model that
# is never displayed (anywidget runs a model's module when the model is made): no output at
# all. An output, even one emptied when the cell ends, kept an empty row under a cell that
# showed nothing else when the notebook was reopened (issue 42 item 8). Elsewhere (nbconvert,
# VS Code, Colab: undisplayed models not known to run there) it goes as an output, emptied
# when the cell ends (an output with no data).
_prefetched = False
_ahead_comm = None  # the model's comm, kept open for the kernel's life (closing drops the model)
# ipywidgets 8's widget message protocol (the "jupyter.widget" comm target).
WIDGET_PROTOCOL = "2.1.0"


def ahead_module() -> str:
    """The ES module the model carries: it runs the script sent ahead (:func:`lib_ahead_js`)
    as a classic script in the page's global scope (a module's own scope is strict)."""
    return f"(0, eval)({json.dumps(lib_ahead_js())});\nexport default {{ initialize() {{}} }};\n"


def ahead_model_state() -> dict:
    """An anywidget model's state (``AnyModel``, the installed anywidget's version range) whose
    module is :func:`ahead_module`: made by a comm of its own, without importing ipywidgets
    and anywidget (slow to import: docs/speed.md) on the first load's cell."""
    from importlib.metadata import version

    major, minor, patch = (version("anywidget").split(".", 2) + ["0", "0"])[:3]
    semver = f"{major}.{minor}.{patch}" if "a" in patch or "b" in patch else f"~{major}.{minor}.*"
    return {
        "_model_name": "AnyModel",
        "_model_module": "anywidget",
        "_model_module_version": semver,
        "_view_name": "AnyView",
        "_view_module": "anywidget",
        "_view_module_version": semver,
        "_anywidget_id": "tfprof_widgets.viewer_ahead",
        "_esm": ahead_module(),
    }


def prefetch() -> bool:
    """At the first ``load()`` of a notebook's kernel (called by
    :func:`.preload.viewer_ahead`, which checks that this is one and that
    ``TFPROF_WIDGETS_PRELOAD`` is not 0): send the viewer script to the page now, so that a
    fresh page has parsed it and drawn its first view off screen by the time a view comes
    (the user's next cells, the load itself). In JupyterLab as a widget model (no output),
    elsewhere as an output emptied when the cell ends. Returns whether it was sent."""
    global _prefetched, _ahead_comm
    if _prefetched or _ahead_off or threading.current_thread() is not threading.main_thread():
        return False
    if embed_each():  # a load's cell is a page of its own: the views carry the viewer
        return False
    _prefetched = True
    if _kernel.page_keeps_outputs():
        from comm import create_comm

        _ahead_comm = create_comm(
            target_name="jupyter.widget",
            data={"state": ahead_model_state(), "buffer_paths": []},
            metadata={"version": WIDGET_PROTOCOL},
        )
        return True
    from IPython import get_ipython
    from IPython.display import display

    handle = display(
        {"application/javascript": lib_ahead_js(), "text/plain": ""}, raw=True, display_id=True
    )
    shell = get_ipython()

    def hide(*_args) -> None:
        shell.events.unregister("post_run_cell", hide)
        handle.update({}, raw=True)

    shell.events.register("post_run_cell", hide)
    return True
