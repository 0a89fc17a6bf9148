"""What every view shares on the way to the page: the viewer script, payload JSON, colours.

The viewer (the modules in ``static/views/``, joined by :mod:`._bundle`) and the vendored
plotly.js basic bundle (``static/plotly-basic.min.js``, bar/pie/scatter, MIT, see
``plotly-basic.LICENSE.txt``) go into a notebook once: with the first view a kernel
displays, and again when the cell that carried them is run again (its outputs, and the script
with them, are replaced). A report embeds them once at its top. Nothing is fetched from a
network.
"""

from __future__ import annotations

import base64
import contextlib
import functools
import html
import json
from importlib import resources

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from _plotly_utils.basevalidators import is_homogeneous_array
from _plotly_utils.utils import to_typed_array_spec
from plotly.io.json import to_json_plotly

from .. import _kernel
from . import _bundle

__all__ = [
    "CATEGORY_COLORS",
    "esc",
    "fig_json",
    "lib_script",
    "reset_lib",
    "lib_moved",
    "send_lib_ahead",
    "to_json",
    "viewer_js",
]

# The plotly.js the bundle was cut from; plotly.py must emit figures for the same version.
PLOTLYJS_VERSION = "4.1.1"

# One colour per step-time category, stable across views. Input (the device waiting for the
# host) is red, as TensorBoard users know it.
CATEGORY_COLORS = {
    "device_compute_us": "#1f77b4",
    "device_to_device_us": "#17becf",
    "device_collectives_us": "#9467bd",
    "host_compute_us": "#2ca02c",
    "kernel_launch_us": "#bcbd22",
    "input_us": "#d62728",
    "output_us": "#ff7f0e",
    "compile_us": "#8c564b",
    "all_others_us": "#7f7f7f",
}


def esc(s: object) -> str:
    return html.escape(str(s))


@functools.cache
def _static(name: str) -> str:
    return (resources.files("tfprof_widgets.views") / "static" / name).read_text(encoding="utf-8")


@functools.cache  # 1.2 MB, joined once per process
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
        "})();\n" + _bundle.views_script() + "\n}\n"
    )


# -- once per notebook ----------------------------------------------------------------------
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


# A fresh page parses and runs the viewer script (plotly.js: 1.2 MB) in 0.35-0.6 s. Sent
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
    if _ahead_off or not _kernel.in_kernel() or not lib_needed():
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
    output hidden (an empty output would still take a row), then the first plot of the page
    drawn off screen while it waits for the view."""
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


# -- JSON -------------------------------------------------------------------------------------
def script_safe(json_text: str) -> str:
    """JSON text made safe inside a <script> of an HTML page: ``<``, ``>`` and ``&`` as
    ``\\u003c``, ``\\u003e`` and ``\\u0026`` (they can only occur inside JSON strings), so that
    no name can end the script (``</script>``) or switch the page's parser into a state that
    swallows the rest of it (``<!--<script>``)."""
    return json_text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def to_json(obj: object) -> str:
    """JSON that is safe inside a <script> of an HTML page (:func:`script_safe`) and ASCII
    only (so a lone surrogate in an event name cannot break writing the page)."""
    return script_safe(json.dumps(obj, separators=(",", ":"), ensure_ascii=True, allow_nan=False))


def fig_json(fig: go.Figure) -> str:
    """A figure as plotly.js JSON (numpy arrays as typed arrays), without plotly.py's default
    template: the viewer applies the page's theme.

    The JSON of ``fig.to_plotly_json()`` with the template emptied, made without its costs:
    it deep-copies the figure (plotly's whole default template included) and then walks the
    copy to turn arrays into typed arrays (``convert_to_base64``, through narwhals for each
    array): 0.1 s for the 10 figures of a view. Here the walk makes new containers along
    the way instead, so nothing is copied twice and the figure is left as it was, the
    template is never copied, and numeric numpy arrays become typed arrays directly
    (:func:`_typed_array`). tests/test_fig_json.py compares both on every view's figures."""
    if fig._frame_objs:  # animation frames: none of our views has them; plotly's own way
        d = fig.to_plotly_json()
        d["layout"] = {**d.get("layout", {}), "template": {}}
        return script_safe(to_json_plotly(d))
    data = [_plotly_json(t) for t in fig._data]
    layout = _plotly_json(fig._layout, skip={"template"})
    layout["template"] = {}  # in the key order plotly's dict has it (after what came first)
    return script_safe(to_json_plotly({"data": data, "layout": layout}))


def _plotly_json(obj, skip: frozenset | set = frozenset()):
    """``convert_to_base64`` of plotly (``_plotly_utils.utils``) on a copy that shares the
    leaves: a dict's homogeneous arrays (numpy, pandas) become plotly.js typed-array specs,
    except under the keys plotly skips (``range``, ``geojson``, ``layer(s)``); lists and
    dicts are walked. Keys in ``skip`` keep their place with their value left out (filled
    in by the caller)."""
    if isinstance(obj, dict):
        out = {}
        for k, v in obj.items():
            if k in skip:
                out[k] = None
            elif k in _SKIPPED_KEYS:
                out[k] = v
            elif isinstance(v, (dict, list, tuple)):
                out[k] = _plotly_json(v)
            elif is_homogeneous_array(v):
                out[k] = _typed_array(v)
            else:
                out[k] = v
        return out
    if isinstance(obj, (list, tuple)):
        if not any(isinstance(v, (dict, list, tuple)) for v in obj):
            return obj  # scalars (labels, numbers): nothing to convert in them
        return [_plotly_json(v) if isinstance(v, (dict, list, tuple)) else v for v in obj]
    return obj


# The keys whose values convert_to_base64 leaves as they are (_plotly_utils.utils).
_SKIPPED_KEYS = frozenset(["geojson", "layer", "layers", "range"])
_SHORT_TYPES = {
    "int8": "i1",
    "uint8": "u1",
    "int16": "i2",
    "uint16": "u2",
    "int32": "i4",
    "uint32": "u4",
    "float32": "f4",
    "float64": "f8",
}


def _typed_array(v):
    """plotly's ``to_typed_array_spec`` (its typed-array JSON: ``{"dtype", "bdata"}``, int64
    narrowed to the smallest integer type that holds the values), without its narwhals
    round trip, for numeric numpy arrays and pandas Series/Index of numpy numeric dtypes;
    anything else goes through plotly's own function."""
    if isinstance(v, (pd.Series, pd.Index)) and isinstance(v.dtype, np.dtype):
        v = v.to_numpy()
    if not (isinstance(v, np.ndarray) and v.dtype.kind in "iuf" and v.size):
        return to_typed_array_spec(v)
    dtype = v.dtype.name
    if dtype in ("int64", "uint64"):
        lo, hi = v.min(), v.max()
        for small in (
            ("int8", "int16", "int32") if dtype == "int64" else ("uint8", "uint16", "uint32")
        ):
            info = np.iinfo(small)
            if lo >= info.min and hi <= info.max:
                v = v.astype(small)
                break
        else:
            return to_typed_array_spec(v)
    short = _SHORT_TYPES.get(v.dtype.name)
    if short is None:
        return to_typed_array_spec(v)
    spec = {"dtype": short, "bdata": base64.b64encode(np.ascontiguousarray(v)).decode("ascii")}
    if v.ndim > 1:
        spec["shape"] = str(v.shape)[1:-1]
    return spec


def viewer_js(payload_json: str, include_lib: bool) -> str:
    """The application/javascript of a view's viewer output: mount the payload into the
    output's element, once the viewer script is there (this output's or an earlier one's)."""
    lib = viewer_lib() if include_lib else ""
    return (
        "(function (element) {\n"
        f"var payload = {payload_json};\n"
        f"{lib}"
        "var go = function () { window.__tfprof.mount(element, payload); };\n"
        "if (window.__tfprof) go();\n"
        "else (window.__tfprofPending = window.__tfprofPending || []).push(go);\n"
        "})(typeof element !== 'undefined' ? element : null);\n"
    )


def lib_script() -> str:
    """The viewer script as an HTML <script> (a report embeds it once)."""
    return "<script>" + viewer_lib().replace("</script", "<\\/script") + "</script>"


def check_plotly_version() -> None:
    """The vendored bundle must be the plotly.js that plotly.py writes figures for."""
    import plotly.offline

    have = plotly.offline.get_plotlyjs_version()
    if have != PLOTLYJS_VERSION:  # pragma: no cover - a plotly upgrade without re-vendoring
        raise RuntimeError(
            f"plotly.py {have} writes figures for plotly.js {have}, but the vendored bundle "
            f"is {PLOTLYJS_VERSION}: update tfprof_widgets/views/static/plotly-basic.min.js"
        )
