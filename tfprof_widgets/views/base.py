"""The one template every view fills, and how a view reaches the page.

A view fills in parts — :meth:`View.blocks` (summary HTML, plots, tables, for one choice of
its :meth:`~View.choices`), :meth:`~View.findings` (plain-text lines) and optionally
:meth:`~View.static_figure` — and never renders itself. The template turns them into:

* a **payload** (JSON) that the viewer script (``static/views/``, see :mod:`.page.bundle`)
  draws: plots that fill the output's width and follow resizes and the page's light/dark
  theme, tables that sort, filter, scroll and export CSV, choosers (every choice is
  computed here, so the page needs no kernel: an exported notebook and a report stay
  interactive), a pie click that filters the table;
* in a notebook, **two or three outputs** (:meth:`View._ipython_display_`), because one
  mimebundle cannot serve every viewer (JupyterLab picks by rank, sanitizes HTML when
  untrusted, nbconvert escapes it with ``--sanitize-html``):

  1. ``image/png`` of the plots (needs the optional ``png`` extra, kaleido; rendered in the
     background and sent as a display update before the cell ends), or nothing without it;
  2. ``text/html`` with the summary and the top rows of each table as fixed-width text, in
     tags every sanitizer keeps (``<pre><code><b><abbr>``);
  3. ``application/javascript``: the viewer (plotly.js and our script, the first time in a
     notebook; in every output, packed, where outputs do not share a page: Colab, see
     :func:`.page.lib.embed_each`) and the payload. It draws the view and hides outputs 1
     and 2 (found by the ``tfprof-static`` mark on output 2, in any front end's page).

  Script-stripping viewers (GitHub, an untrusted notebook, ``--sanitize-html``) drop output 3
  and show 1 and 2; everything else shows the interactive view;
* in a report, :meth:`View.html` (the payload in a ``<div class="tfprof-mount">``; the report
  embeds the viewer script once).

A view that needs the kernel (zoom that re-samples in Python) returns an ipywidget from
:meth:`~View.live_widget`; output 1 then carries it too, and the viewer output stands down
while the live widget shows and takes over where it cannot (an exported page, a notebook
reopened without a kernel). Views never open files: they take a Run that was already loaded.
"""

from __future__ import annotations

import base64
import dataclasses
import functools
import hashlib
import itertools
import math
from collections.abc import Callable

import plotly.graph_objects as go

from .page import png
from .page.display import (
    esc,
    fig_json,
    lib_moved,
    lib_needed,
    script_safe,
    send_lib_ahead,
    to_json,
    viewer_js,
)
from .tables import Table, encode_column

__all__ = [
    "Choice",
    "Html",
    "Panel",
    "Plot",
    "Plots",
    "TableBlock",
    "View",
    "combine_figures",
]


# -- the parts a view is made of ----------------------------------------------------------------
@dataclasses.dataclass
class Html:
    """Trusted HTML of the view (escape what comes from data with ``esc``). Colours through
    classes: ``tf-muted``, ``tf-bad``, ``tf-good``, ``tf-swatch``."""

    html: str


@dataclasses.dataclass
class Plot:
    """One plotly figure.

    ``click``: a click on a slice/bar filters a table of the view:
    ``{"table": id, "column": name, "others": [keys], "other": key_of_the_rest_slice}`` (the
    key is the point's ``customdata``; the "rest" slice shows the rows of none of ``others``).
    ``ranges``: buttons above the plot that set its x range, ``[(label, [x0, x1])]``.
    ``legend_side``: pies with the legend beside them when wider than ``min_width`` px, else
    below (``{"min_width", "right_share", "height", "margin_b", "narrow_height",
    "narrow_margin_b"}``).
    ``custom``: hover details as columns, ``{trace index: [column, ...]}``, sent compactly and
    set as that trace's ``customdata`` rows in the page (not in :attr:`fig`).
    """

    name: str
    fig: go.Figure
    click: dict | None = None
    ranges: list | None = None
    legend_side: dict | None = None
    custom: dict | None = None
    #: A point click opens a :class:`Panel` of the view: ``{"panel": id, "at": i}``, the key
    #: the ``i``-th entry of the point's customdata row (0 where no ``at``).
    link: dict | None = None


@dataclasses.dataclass
class Plots:
    """Figures one under the other, or side by side (``row``; they wrap when narrow)."""

    plots: list[Plot]
    row: bool = False


@dataclasses.dataclass
class TableBlock:
    """A table of the view. The same ``id`` in several choices is one table (its filter and
    sort stay); ``preset`` hides columns / rows for this choice:
    ``{"hide": [names], "exclude": {column: [values]}}``."""

    id: str
    table: Table
    title: str | None = None
    preset: dict | None = None
    #: A row click opens a :class:`Panel` of the view: ``[{"panel": id, "column": key column,
    #: "cell": column clicked}]``; the link without ``cell`` takes a click on any other cell.
    links: list[dict] | None = None


@dataclasses.dataclass
class Panel:
    """Content that a click on a table row or a plot point opens under the view, computed in
    Python for each key it may open with (the page needs no kernel: an exported notebook
    opens it too). ``items``: key -> blocks (:class:`Html`, :class:`Plots`); ``missing``:
    what a key without content shows (``{key}`` replaced by the key)."""

    id: str
    title: str
    items: dict[str, list]
    missing: str = ""


@dataclasses.dataclass
class Choice:
    """A chooser of the view: a select with ``options`` ``[(label, value)]`` or a checkbox
    (``kind="checkbox"``, values False/True). Every combination is computed in Python and sent
    with the view, so keep the options few."""

    id: str
    label: str
    value: object
    options: list[tuple[str, object]] = dataclasses.field(default_factory=list)
    kind: str = "select"

    def values(self) -> list:
        return [False, True] if self.kind == "checkbox" else [v for _, v in self.options]


def _key(v) -> str:
    # The viewer joins String(value) of each choice: true/false for a checkbox.
    return ("true" if v else "false") if isinstance(v, bool) else str(v)


class View:
    """Base of every view; subclasses fill in the parts, the rendering is done here."""

    title = "tfprof_widgets"
    #: Whether the view is drawn by the viewer script (plotly.js and ours); the trace viewer
    #: brings its own.
    viewer_script = True

    def __new__(cls, *_args, **_kwargs):
        # Before the subclass computes anything: the page then parses the viewer script
        # while the kernel builds the view (see page.display.send_lib_ahead).
        view = super().__new__(cls)
        view._lib_sent_in = send_lib_ahead() if cls.viewer_script else None
        return view

    # -- the parts a view fills in ------------------------------------------------------------
    def choices(self) -> list[Choice]:
        """Choosers above the content; none by default."""
        return []

    def blocks(self, **choice) -> list:
        """The content for one value of each choice (keyword = choice id): :class:`Html`,
        :class:`Plots` and :class:`TableBlock` in display order. None by default: a view that
        draws itself (the trace viewer) has no blocks."""
        return []

    def findings(self) -> list[str]:
        """The view's findings as plain-text lines (text/plain, and the static output)."""
        return []

    def panels(self) -> list[Panel]:
        """Content a row or point click opens (:class:`Panel`); none by default."""
        return []

    def text(self) -> str:
        """The plain-text form (``repr`` and every output's text/plain)."""
        return "\n".join([self.title, *self.findings()])

    def figures(self) -> dict[str, go.Figure]:
        """The figures shown for the default choices, by name (tests assert on them)."""
        return {p.name: p.fig for p in self._plots(self.default_blocks())}

    def static_figure(self) -> go.Figure | None:
        """The one figure rendered as the static image: by default the figures of the default
        choices combined (side by side for a row)."""
        blocks = self.default_blocks()
        plots = self._plots(blocks)
        if not plots:
            return None
        row = any(isinstance(b, Plots) and b.row for b in blocks)
        return combine_figures([p.fig for p in plots], cols=2 if row and len(plots) > 1 else 1)

    def has_static_figure(self) -> bool:
        """Whether :meth:`static_figure` has a figure to give, known without building it
        (the view's image is built after its viewer is sent, see :meth:`_ipython_display_`)."""
        return bool(self._plots(self.default_blocks()))

    def live_widget(self):
        """An ipywidget for a view that needs the kernel (the trace viewer's), else None."""
        return None

    def widget(self):
        """The live widget (:meth:`live_widget`), for code that embeds it in its own layout."""
        return self.live_widget()

    # -- the rendering, the same for every view -----------------------------------------------
    def default_choice(self) -> dict:
        return {c.id: c.value for c in self._choice_list}

    @functools.cached_property
    def _choice_list(self) -> list[Choice]:
        """:meth:`choices`, asked once per view (some read the run's tables to decide)."""
        return self.choices()

    @functools.cached_property
    def _panel_list(self) -> list[Panel]:
        """:meth:`panels`, computed once per view."""
        return self.panels()

    def blocks_of(self, **values) -> list:
        """:meth:`blocks` of one choice, computed once per view: the payload, the static text,
        the image and :meth:`tables` all read the same blocks (each computation builds
        figures and tables, and may run analyses)."""
        cache = self.__dict__.setdefault("_blocks_by_choice", {})
        key = tuple(sorted((k, _key(v)) for k, v in values.items()))
        if key not in cache:
            cache[key] = self.blocks(**values)
        return cache[key]

    def default_blocks(self) -> list:
        return self.blocks_of(**self.default_choice())

    @staticmethod
    def _plots(blocks) -> list[Plot]:
        return [p for b in blocks if isinstance(b, Plots) for p in b.plots]

    def tables(self) -> dict[str, TableBlock]:
        """The tables of the default choices, by id."""
        return {b.id: b for b in self.default_blocks() if isinstance(b, TableBlock)}

    def payload_json(self, statics: int = 0, live: bool = False) -> str:
        """The payload the viewer draws, as JSON (see ``static/views/view.js``)."""
        choices = self._choice_list
        figs: list[go.Figure] = []
        tables: dict[str, dict] = {}

        def block_spec(b) -> dict:
            if isinstance(b, Html):
                return {"kind": "html", "html": b.html}
            if isinstance(b, Plots):
                specs = []
                for p in b.plots:
                    figs.append(p.fig)
                    spec = {"name": p.name, "fig": f"@@FIG{len(figs) - 1}@@"}
                    for k in ("click", "ranges", "legend_side", "link"):
                        if getattr(p, k) is not None:
                            spec[k] = getattr(p, k)
                    if p.custom:
                        spec["custom"] = {
                            str(t): [encode_column(c) for c in cols] for t, cols in p.custom.items()
                        }
                    specs.append(spec)
                return {"kind": "figs", "row": b.row, "figs": specs}
            if isinstance(b, TableBlock):
                if b.id not in tables:
                    tables[b.id] = b.table.payload()
                spec = {"kind": "table", "table": b.id, "title": b.title, "preset": b.preset}
                return {**spec, "links": b.links} if b.links else spec
            raise TypeError(f"not a view block: {b!r}")

        variants = {}
        hint = 40
        for b in self.default_blocks():
            if isinstance(b, Plots):
                heights = [int(p.fig.layout.height or 400) for p in b.plots]
                hint += max(heights) if b.row else sum(heights)
            elif isinstance(b, TableBlock):
                hint += 60 + 22 * min(len(b.table), 16)
            else:
                hint += 60
        ids = [c.id for c in choices]
        for combo in itertools.product(*[c.values() for c in choices]):
            blocks = self.blocks_of(**dict(zip(ids, combo)))
            variants["|".join(_key(v) for v in combo)] = [block_spec(b) for b in blocks]
        controls = [
            {
                "id": c.id,
                "label": c.label,
                "kind": c.kind,
                "value": c.value if c.kind == "checkbox" else _key(c.value),
                "options": [[lab, _key(v)] for lab, v in c.options],
            }
            for c in choices
        ]
        panels = {
            p.id: {
                "title": p.title,
                "missing": p.missing,
                "items": {k: [block_spec(b) for b in blocks] for k, blocks in p.items.items()},
            }
            for p in self._panel_list
        }
        payload = {
            "v": 1,
            "title": self.title,
            "controls": controls,
            "variants": variants,
            "tables": tables,
            "statics": statics,
            "live": live,
            "height_hint": hint,
            **({"panels": panels} if panels else {}),
        }
        out = to_json(payload)
        for i, fig in enumerate(figs):
            out = out.replace(f'"@@FIG{i}@@"', fig_json(fig), 1)
        return out

    def static_html(self, image: bool = False) -> str:
        """The text form for viewers that run no scripts (output 2): the summary and the first
        rows of each table, in tags that every HTML sanitizer keeps."""
        lines = [f"<div><b>{esc(self.title)}</b></div>"]
        lines += [f"<div>{esc(s)}</div>" for s in self.findings()]
        for tb in self.tables().values():
            if tb.title:
                lines.append(f"<div><b>{esc(tb.title)}</b></div>")
            lines.append(tb.table.static_html(preset=tb.preset))
        if not image and self._plots(self.default_blocks()) and not png.available():
            lines.append(
                "<div><i>The plots show where scripts run; for an image here as well, "
                "install tfprof_widgets[png].</i></div>"
            )
        return "<div>" + "".join(lines) + "</div>"

    def _ipython_display_(self) -> None:
        from IPython.display import display

        text = self.text()
        live = self.live_widget()
        image = png.available() and self.has_static_figure()
        statics = 0
        first: dict = {"text/plain": text}
        handle = None
        if live is not None or image:
            if live is not None:
                first.update(_widget_bundle(live))
            handle = display(first, raw=True, display_id=True)
            statics += 1
        # Marked, so that the viewer finds the outputs it hides in any front end's page.
        static = f'<div class="tfprof-static">{self.static_html(image)}</div>'
        display({"text/html": static, "text/plain": text}, raw=True)
        statics += 1
        lib = lib_moved(self._lib_sent_in)
        js = viewer_js(self.payload_json(statics, live is not None), lib_needed() or lib)
        display({"application/javascript": js, "text/plain": ""}, raw=True)
        if image and handle is not None:
            # Only now, with the viewer on its way to the page: the image's figure is built
            # and rendered in the background, so that neither it nor the start of kaleido's
            # browser (seconds, the first time) holds up the viewer's output.
            png.render_async(self.static_figure, _updater(handle, first))

    def _repr_mimebundle_(self, include=None, exclude=None):
        # Front ends that ask for one bundle (not IPython, which uses _ipython_display_).
        return {"text/html": self.static_html(), "text/plain": self.text()}

    def html(self, *_args, **_kwargs) -> str:
        """The view for an HTML page that loads the viewer script once (a report): a mount
        point holding the payload."""
        payload = script_safe(self.payload_json())
        return (
            f'<div class="tfprof-mount" id="tfv-{self._id()}">'
            f'<script type="application/json">{payload}</script></div>'
        )

    def _id(self) -> str:
        return hashlib.sha1(f"{type(self).__name__}{id(self)}".encode()).hexdigest()[:10]

    def __repr__(self) -> str:
        return self.text()


def _widget_bundle(widget) -> dict:
    data = widget._repr_mimebundle_()
    if isinstance(data, tuple):
        data = data[0]
    return {k: v for k, v in (data or {}).items() if k.startswith("application/")}


def _updater(handle, first: dict) -> Callable[[bytes], None]:
    def done(image: bytes) -> None:
        handle.update({**first, "image/png": base64.b64encode(image).decode()}, raw=True)

    return done


# -- the static image -------------------------------------------------------------------------
def combine_figures(figs: list[go.Figure], cols: int = 1) -> go.Figure:
    """Several figures as one (a grid of cells), for one static image: each cell its title,
    its plot and a legend of its own beside it (plotly.js's numbered legends), so that a
    pie's slices and a bar chart's series never share one legend's colours (the operators'
    image listed all of them in one legend, blue both an operator and Kernel)."""
    if len(figs) == 1:
        return figs[0]
    if all(t.type == "pie" for f in figs for t in f.data):
        return _pie_grid(figs, cols)
    return _grid(figs, cols)


# plotly.js's default colours, in their order (pies colour their slices so, "Other" grey).
COLORWAY = (
    "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
    "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf",
)  # fmt: skip

# A cell of the static grid: its title above the plot, the x axis' ticks and title under it.
_TITLE_PX, _AXIS_PX, _PAD_PX = 34, 52, 10
_LEGEND_CHARS = 30


def _short(label) -> str:
    text = str(label)
    return text if len(text) <= _LEGEND_CHARS else text[: _LEGEND_CHARS - 1] + "…"


def _pie_cell(t, k: int, legend: str, domain: dict):
    """Pie trace ``t`` as the ``k``-th cell of a grid: labels cut to a legend's width yet
    distinct (two labels cut alike would merge their slices), told apart from the other
    pies' (plotly.js lists a label once over all pies, so a later pie's legend lost every
    label an earlier one had) and coloured as the pie is alone."""
    t = go.Figure(t).data[0]
    full = [str(x) for x in t.labels]
    cut = [_short(x) for x in full]
    if len(set(cut)) < len(cut):  # cut alike: the ends tell them apart
        cut = [x if len(x) <= _LEGEND_CHARS else x[:14] + "…" + x[-15:] for x in full]
    if len(set(cut)) < len(cut):
        cut = full
    colors = t.marker.colors if t.marker and t.marker.colors is not None else None
    if colors is None:  # a pie made elsewhere: plotly's colours, in order
        colors = [COLORWAY[i % len(COLORWAY)] for i in range(len(full))]
    t.update(
        labels=[x + "\u200b" * k for x in cut],  # zero-width: each pie's labels its own
        marker=dict(colors=list(colors)),
        domain=domain,
        legend=legend,
    )
    return t


def _xy_cell(out: go.Figure, layout: dict, f: go.Figure, axes: int, x: tuple, y: list):
    """Figure ``f``'s traces on axes of their own in a grid cell (``x``: its left edge and
    width; ``y``: the plot's bottom and top, paper), its axes' titles and types kept, a
    second y axis on the right where it has one. Returns the axes used so far and where its
    legend goes."""
    x0, w = x
    second = any(t.yaxis == "y2" for t in f.data)
    axes += 1
    xa, ya = f"x{axes if axes > 1 else ''}", f"y{axes if axes > 1 else ''}"
    right = x0 + (0.55 if second else 0.6) * w
    layout[f"xaxis{xa[1:]}"] = {
        **f.layout.xaxis.to_plotly_json(),
        "domain": [x0 + 0.12 * w, right],
        "anchor": ya,
    }
    layout[f"yaxis{ya[1:]}"] = {**f.layout.yaxis.to_plotly_json(), "domain": y, "anchor": xa}
    y2 = ya
    if second:
        axes += 1
        y2 = f"y{axes}"
        layout[f"yaxis{axes}"] = {
            **f.layout.yaxis2.to_plotly_json(),
            "overlaying": ya,
            "side": "right",
            "anchor": xa,
        }
    for t in f.data:
        t = go.Figure(t).data[0]
        t.update(
            xaxis=xa,
            yaxis=y2 if t.yaxis == "y2" else ya,
            name=_short(t.name),
            # A lone unnamed series (a plot alone shows no legend for it) lists as None.
            showlegend=t.showlegend if t.name is not None else False,
        )
        out.add_trace(t)
    return axes, x0 + (0.7 if second else 0.64) * w


def _grid(figs: list[go.Figure], cols: int) -> go.Figure:
    """Pies and x/y plots in a grid of cells laid out in pixels (the image's height is the
    sum of its rows'): a title, the plot on the cell's left part and its own legend on the
    right; x/y plots keep their axes' titles and types."""
    rows = math.ceil(len(figs) / cols)
    heights = [
        max(int(f.layout.height or 360) for f in figs[r * cols : (r + 1) * cols])
        for r in range(rows)
    ]
    total = sum(heights) + 2 * _PAD_PX

    def at(px: float) -> float:  # pixels from the top -> paper y
        return 1 - px / total

    out = go.Figure()
    layout: dict = {}
    notes = []
    axes = 0
    barmode = next((f.layout.barmode for f in figs if f.layout.barmode), None)
    top = _PAD_PX
    for k, f in enumerate(figs):
        r, c = divmod(k, cols)
        if c == 0 and r:
            top += heights[r - 1]
        x0, w = c / cols, 1 / cols
        y_top, y_end = top, top + heights[r]
        legend = "legend" if k == 0 else f"legend{k + 1}"
        notes.append(
            dict(
                text=f.layout.title.text or "",
                x=x0 + 0.01 * w,
                y=at(y_top),
                xref="paper",
                yref="paper",
                xanchor="left",
                yanchor="top",
                showarrow=False,
                font=dict(size=14),
            )
        )
        plot_top = y_top + _TITLE_PX
        if any(t.type == "pie" for t in f.data):
            plot_end, legend_x = y_end - _PAD_PX, x0 + 0.45 * w
            domain = dict(x=[x0 + 0.01 * w, x0 + 0.42 * w], y=[at(plot_end), at(plot_top)])
            for t in f.data:
                t = _pie_cell(t, k, legend, domain)
                t.update(title=None)
                out.add_trace(t)
        else:
            plot_end = y_end - _AXIS_PX
            axes, legend_x = _xy_cell(out, layout, f, axes, (x0, w), [at(plot_end), at(plot_top)])
            for t in out.data[-len(f.data) :]:
                t.update(legend=legend)
        layout[legend] = dict(
            x=legend_x,
            xanchor="left",
            y=(at(plot_top) + at(plot_end)) / 2,
            yanchor="middle",
            orientation="v",
            font=dict(size=10),
            bgcolor="rgba(0,0,0,0)",
        )
    out.update_layout(
        height=total,
        barmode=barmode,
        showlegend=True,
        annotations=notes,
        margin=dict(t=0, b=0, l=10, r=10),
        **layout,
    )
    return out


def _pie_grid(figs: list[go.Figure], cols: int) -> go.Figure:
    """Pies in a grid, each with its own legend (plotly.js's numbered legends) on its right."""
    rows = math.ceil(len(figs) / cols)
    cell_h = 300
    out = go.Figure()
    layout: dict = {}
    for k, f in enumerate(figs):
        r, c = divmod(k, cols)
        x0, w = c / cols, 1 / cols
        y1, h = 1 - r / rows, 1 / rows
        legend = "legend" if k == 0 else f"legend{k + 1}"
        for t in f.data:
            domain = dict(x=[x0 + 0.01 * w, x0 + 0.42 * w], y=[y1 - 0.9 * h, y1 - 0.12 * h])
            t = _pie_cell(t, k, legend, domain)
            t.update(title=dict(text=f.layout.title.text or "", position="top center"))
            out.add_trace(t)
        layout[legend] = dict(
            x=x0 + 0.45 * w,
            xanchor="left",
            y=y1 - 0.5 * h,
            yanchor="middle",
            font=dict(size=10),
            bgcolor="rgba(0,0,0,0)",
        )
    out.update_layout(height=rows * cell_h + 20, margin=dict(t=10, b=10, l=10, r=10), **layout)
    return out
