"""What every view shares on the way to the page: payload JSON, colours, and the viewer
script (:mod:`.lib`, re-exported here)."""

from __future__ import annotations

import base64
import html
import json

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from _plotly_utils.basevalidators import is_homogeneous_array
from _plotly_utils.utils import to_typed_array_spec
from plotly.io.json import to_json_plotly

from .lib import (
    EMBED_ENV,
    embed_each,
    lib_ahead_js,
    lib_moved,
    lib_needed,
    lib_not_ahead,
    lib_script,
    lib_unpack_js,
    reset_lib,
    send_lib_ahead,
    viewer_lib,
)

__all__ = [
    "CATEGORY_COLORS",
    "esc",
    "fig_json",
    "lib_ahead_js",
    "lib_moved",
    "lib_needed",
    "lib_not_ahead",
    "lib_script",
    "output_element_js",
    "reset_lib",
    "send_lib_ahead",
    "to_json",
    "viewer_js",
    "viewer_lib",
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
    array), a cost a view's figures feel (docs/speed.md). Here the walk makes new containers along
    the way instead, so nothing is copied twice and the figure is left as it was, the
    template is never copied, and numeric numpy arrays become typed arrays directly
    (:func:`_typed_array`). tests/views/test_fig_json.py compares both on every view's figures."""
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


def output_element_js() -> str:
    """Script that makes ``element`` the node a notebook output draws into: the output's own
    (JupyterLab, Notebook, nbconvert; a jQuery wrapper in VS Code and classic Notebook is
    unwrapped), else a node added where the output runs: Colab's active output area
    (``google.colab.output.getActiveOutputArea``), else after the running ``<script>``, else
    at the end of the page."""
    return (
        "element = element && element.jquery ? element[0] : element;\n"
        "if (!element) {\n"
        "  var gco = window.google && window.google.colab && window.google.colab.output;\n"
        "  var area = gco && gco.getActiveOutputArea ? gco.getActiveOutputArea() : null;\n"
        "  var here = document.currentScript;\n"
        "  element = document.createElement('div');\n"
        "  if (area) area.appendChild(element);\n"
        "  else if (here && here.parentNode)\n"
        "    here.parentNode.insertBefore(element, here.nextSibling);\n"
        "  else document.body.appendChild(element);\n"
        "}\n"
    )


# Shown in the output when the viewer is still not there this long after the output ran.
MISSING_AFTER_MS = 5000
_MISSING_ONCE = (
    "tfprof_widgets: this view cannot draw here: the viewer script came with an earlier "
    "output of this notebook, which this page does not have (a front end that shows each "
    "output on a page of its own, or that output was cleared). The image and text above "
    f"stand in. To draw it, set os.environ['{EMBED_ENV}'] = 'each' in the kernel and run "
    "this cell again."
)
_MISSING_EACH = (
    "tfprof_widgets: this view cannot draw here: the viewer script it carries did not run "
    "in this browser. The image and text above stand in."
)


def viewer_js(payload_json: str, include_lib: bool) -> str:
    """The application/javascript of a view's viewer output: mount the payload into the
    output's element once the viewer script is there — this output's, an earlier one's, or
    (where every output carries it, :func:`embed_each`) unpacked from this output. Where it
    is still not there after :data:`MISSING_AFTER_MS`, one line in the output says why and
    what to do (the viewer removes it if it comes later)."""
    each = embed_each()
    lib = viewer_lib() if include_lib and not each else ""
    why = json.dumps(_MISSING_EACH if each else _MISSING_ONCE)
    return (
        "(function (element) {\n"
        f"var payload = {payload_json};\n"
        f"{lib}"
        f"{output_element_js()}"
        "var go = function () { window.__tfprof.mount(element, payload); };\n"
        "if (window.__tfprof) go();\n"
        "else {\n"
        "(window.__tfprofPending = window.__tfprofPending || []).push(go);\n"
        f"{lib_unpack_js() if each else ''}"
        "setTimeout(function () {\n"
        "  if (window.__tfprof) return;\n"
        "  var note = document.createElement('div');\n"
        "  note.className = 'tfprof-missing';\n"
        "  note.style.cssText = 'font: 13px sans-serif; margin: 4px 0; color: #b22';\n"
        f"  note.textContent = {why}"
        " + (window.__tfprofUnpackError ? ' (' + window.__tfprofUnpackError + ')' : '');\n"
        "  element.appendChild(note);\n"
        f"}}, {MISSING_AFTER_MS});\n"
        "}\n"
        "})(typeof element !== 'undefined' ? element : null);\n"
    )


def check_plotly_version() -> None:
    """The vendored bundle must be the plotly.js that plotly.py writes figures for."""
    import plotly.offline

    have = plotly.offline.get_plotlyjs_version()
    if have != PLOTLYJS_VERSION:  # pragma: no cover - a plotly upgrade without re-vendoring
        raise RuntimeError(
            f"plotly.py {have} writes figures for plotly.js {have}, but the vendored bundle "
            f"is {PLOTLYJS_VERSION}: update tfprof_widgets/views/static/plotly-basic.min.js"
        )
