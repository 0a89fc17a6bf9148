"""How every widget shows itself: live in a kernel, and still there in exported HTML.

A plotly FigureWidget renders nothing in an executed notebook exported to HTML (see the team's
notebook-rendering facts), so each View emits a mimebundle holding the live ipywidgets view
*and* a static ``text/html`` rendering (plotly figures with plotly.js embedded once per
process, which for a notebook run top to bottom means once per notebook) plus ``text/plain``.
Front ends with a kernel show the live view; nbconvert, GitHub and offline HTML fall back to
the static HTML. Widgets never open files: they take a Run that was already loaded.
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
CATEGORY_LABELS = {
    "device_compute_us": "Device compute",
    "device_to_device_us": "Device to device",
    "device_collectives_us": "Device collectives",
    "host_compute_us": "Host compute",
    "kernel_launch_us": "Kernel launch",
    "input_us": "Input (waiting for data)",
    "output_us": "Output",
    "compile_us": "Compilation",
    "all_others_us": "All others",
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


class View:
    """Base of every widget: ``widget()`` builds the live ipywidgets view, ``html()`` the
    static rendering, ``text()`` the plain-text summary; the notebook gets all three."""

    title = "tfprof_widgets"

    def figures(self) -> dict[str, go.Figure]:
        """The plotly figures this view shows (tests assert on their data)."""
        return {}

    def text(self) -> str:
        return self.title

    def html_body(self, plot: Callable[[go.Figure], str]) -> str:
        """Static HTML; ``plot(fig)`` turns a figure into an embeddable fragment."""
        return "".join(plot(f) for f in self.figures().values())

    def html(
        self, include_plotlyjs: bool | None = None, plot: Callable[[go.Figure], str] | None = None
    ) -> str:
        """Static HTML. ``plot`` (see :func:`plotter`) lets several views share one
        plotly.js embedding, as a report does; otherwise ``include_plotlyjs`` applies to
        this view's first figure (None: the process-wide once-only rule)."""
        plot = plot or plotter(include_plotlyjs)
        return (
            f'<div class="tfprof-view"><h3 style="margin:4px 0">{esc(self.title)}</h3>'
            f"{self.html_body(plot)}</div>"
        )

    def widget(self):
        """The live view: an ipywidgets box of FigureWidgets and controls."""
        import ipywidgets as w

        from ._live import figure_widget

        return w.VBox(
            [w.HTML(f"<h3>{esc(self.title)}</h3>")]
            + [figure_widget(f) for f in self.figures().values()]
        )

    def _repr_mimebundle_(self, include=None, exclude=None):
        bundle = {"text/plain": self.text(), "text/html": self.html()}
        try:
            live = self.widget()
            view = live._repr_mimebundle_(include=include, exclude=exclude)
        except Exception:  # no widget support here (plain IPython): the static view serves
            return bundle
        if isinstance(view, tuple):
            view = view[0]
        data = {k: v for k, v in (view or {}).items() if k.startswith("application/")}
        bundle.update(data)
        return bundle

    def __repr__(self) -> str:
        return self.text()
