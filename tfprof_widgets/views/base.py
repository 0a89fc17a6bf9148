"""The one contract every view fills: title, header, figures, footer, and controls.

A view shows part of a run two ways, from the same parts:

* live, in a kernel: :meth:`View.widget` is an ipywidgets box of the title, the
  :meth:`~View.controls` (filters, choosers), the header HTML, one FigureWidget per figure
  and the footer HTML; a control redraws the whole body or only the footer;
* static: :meth:`View.html` is the same title, header, figures (plotly.js embedded once, see
  :func:`._display.plotter`) and footer as HTML, which an exported notebook, a report or
  GitHub shows with no kernel and no internet.

A plotly FigureWidget renders nothing in an executed notebook exported to HTML, so
:meth:`View._repr_mimebundle_` carries the live view *and* the static HTML and the plain text;
front ends with a kernel show the live view, everything else the static one. A view only
fills in :meth:`header`, :meth:`figures`, :meth:`footer` (and :meth:`live_footer`),
:meth:`controls`, :meth:`attach` and :meth:`text`; it never writes its own ``html()`` or
``widget()``. Views never open files: they take a Run that was already loaded.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

import plotly.graph_objects as go

from ._display import esc, plotter

__all__ = ["Control", "View"]


@dataclasses.dataclass
class Control:
    """A live control: an ipywidget, what its new value does to the view (``apply``), and
    what is redrawn after it: ``"body"`` (header, figures and footer) or ``"footer"``."""

    widget: object
    apply: Callable[[object], None]
    redraw: str = "body"


class View:
    """Base of every view. Subclasses fill in the parts; the rendering is done here."""

    title = "tfprof_widgets"
    # "column": figures one under the other; "row": side by side (they wrap when narrow).
    figure_layout = "column"

    # -- the parts a view fills in ------------------------------------------------------------
    def header(self) -> str:
        """HTML above the figures (a summary, a verdict)."""
        return ""

    def figures(self) -> dict[str, go.Figure]:
        """The plotly figures this view shows, by name (tests assert on their data)."""
        return {}

    def footer(self) -> str:
        """HTML below the figures in the static rendering (tables, advice)."""
        return ""

    def live_footer(self) -> str:
        """HTML below the figures in the live view (may show more rows than the static)."""
        return self.footer()

    def controls(self) -> list[list[Control]]:
        """Rows of live controls shown above the body; none by default."""
        return []

    def attach(self, figure_widgets: dict[str, object]) -> list:
        """Hook the live figure widgets up (zoom, clicks) after each redraw of the body;
        returns widgets to show under them."""
        return []

    def text(self) -> str:
        """The plain-text summary (``repr`` and the text/plain of the mimebundle)."""
        return self.title

    # -- the rendering, the same for every view -------------------------------------------
    def html(
        self,
        include_plotlyjs: bool | None = None,
        plot: Callable[[go.Figure], str] | None = None,
    ) -> str:
        """Static HTML. ``plot`` (see :func:`._display.plotter`) lets several views share one
        plotly.js embedding, as a report does; otherwise ``include_plotlyjs`` applies to this
        view's first figure (None: the process-wide once-only rule)."""
        plot = plot or plotter(include_plotlyjs)
        figures = [plot(f) for f in self.figures().values()]
        if self.figure_layout == "row":
            body = "".join(f'<div style="display:inline-block">{f}</div>' for f in figures)
            figures_html = f"<div>{body}</div>" if figures else ""
        else:
            figures_html = "".join(figures)
        return (
            f'<div class="tfprof-view"><h3 style="margin:4px 0">{esc(self.title)}</h3>'
            f"{self.header()}{figures_html}{self.footer()}</div>"
        )

    def widget(self):
        """The live view: an ipywidgets box of the controls and the body."""
        import ipywidgets as w

        from ._live import figure_widget

        header, footer = w.HTML(), w.HTML()
        figures = w.HBox() if self.figure_layout == "row" else w.VBox()
        extras = w.VBox()

        def redraw_footer() -> None:
            footer.value = self.live_footer()

        def redraw_body() -> None:
            header.value = self.header()
            live = {k: figure_widget(f) for k, f in self.figures().items()}
            figures.children = list(live.values())
            extras.children = self.attach(live)
            redraw_footer()

        rows = []
        for row in self.controls():
            for c in row:
                c.widget.observe(_on_change(c, redraw_body, redraw_footer), "value")
            rows.append(w.HBox([c.widget for c in row]))
        redraw_body()
        title = w.HTML(f"<h3>{esc(self.title)}</h3>")
        return w.VBox([title, *rows, header, figures, extras, footer])

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


def _on_change(control: Control, redraw_body, redraw_footer):
    def changed(change) -> None:
        control.apply(change["new"])
        (redraw_footer if control.redraw == "footer" else redraw_body)()

    return changed
