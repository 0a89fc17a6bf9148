"""Display helpers shared by the views: figures as offline HTML, colours, escaping.

A figure's static HTML embeds plotly.js once per process (which for a notebook run top to
bottom means once per notebook), or once per report through one :func:`plotter`, so exported
notebooks and reports show every plot with no internet. The colours of the step-time
categories are the same in every view.
"""

from __future__ import annotations

import hashlib
import html
from collections.abc import Callable

import plotly.graph_objects as go
import plotly.io as pio

_PLOTLYJS_EMITTED = False
PLOT_CONFIG = {"displaylogo": False, "responsive": True}

# One colour per step-time category, stable across widgets. Input (the device waiting for
# the host) is red, as TensorBoard users know it.
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


def reset_plotlyjs() -> None:
    """Forget that plotly.js was emitted (a new notebook or report starts)."""
    global _PLOTLYJS_EMITTED
    _PLOTLYJS_EMITTED = False


def figure_html(fig: go.Figure, include_plotlyjs: bool | None = None) -> str:
    """A figure as an HTML fragment with a stable div id (so re-runs give identical output).

    plotly.js is embedded the first time in this process unless ``include_plotlyjs`` says
    otherwise, so an exported notebook or report shows the plot with no internet.
    """
    global _PLOTLYJS_EMITTED
    if include_plotlyjs is None:
        include_plotlyjs = not _PLOTLYJS_EMITTED
    _PLOTLYJS_EMITTED = _PLOTLYJS_EMITTED or bool(include_plotlyjs)
    spec = fig.to_json()
    div_id = "tfprof-" + hashlib.sha1(spec.encode()).hexdigest()[:12]
    return pio.to_html(
        fig,
        full_html=False,
        include_plotlyjs=bool(include_plotlyjs),
        div_id=div_id,
        config=PLOT_CONFIG,
    )


def plotter(include_plotlyjs: bool | None = None) -> Callable[[go.Figure], str]:
    """A figure-to-HTML function whose first figure gets ``include_plotlyjs`` and the rest
    none (None: follow the process-wide rule of :func:`figure_html`)."""
    first = [include_plotlyjs]

    def plot(fig: go.Figure) -> str:
        out = figure_html(fig, first[0])
        if first[0] is not None:
            first[0] = False
        return out

    return plot


def esc(s: object) -> str:
    return html.escape(str(s))
