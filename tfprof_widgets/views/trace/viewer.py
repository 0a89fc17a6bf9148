"""The trace viewer of a run, drawn on a canvas, live in a kernel and offline.

The view ``timeline(run)`` (``tw.views.timeline``, the name users call) returns a
:class:`TraceViewer` whose notebook display is three outputs (as every view's, see
:mod:`..base`):

1. the live anywidget (``TraceViewerWidget``): an ES module shipped in the package
   (``static/trace/``, joined by :mod:`..page.bundle`; no CDN, no network) draws on a
   ``<canvas>`` and asks the kernel for each window's marks (:meth:`TraceModel.window`);
2. ``text/html`` with a text summary, for viewers that run no scripts;
3. ``application/javascript``: the same module with an embedded multi-resolution payload (a
   tree of zoom levels and the busiest step in full; its size: docs/speed.md). It hides output 2,
   and stands down while the live widget draws; where none can (an exported notebook, one reopened
   without a kernel) it draws the trace itself, zoomable, saying where its detail ends.

A report embeds the offline viewer (:meth:`TraceViewer.html`).

Protocol between the kernel and the module
------------------------------------------
Synced traits (set once by Python): ``_meta`` (JSON: the lanes, groups, steps, time span,
initial and activity windows, names of the first marks), ``_marks0`` / ``_marks0_header``
(the first window's marks, so the first draw needs no round trip) and ``_overview`` /
``_overview_header`` (the whole capture, drawn where the current window has no data yet).
Synced back by the module: ``window_us`` (the view, µs) and ``selected_row``.

Custom messages, JS -> kernel, each with the view's id ``vid`` and a sequence number ``seq``
that the answer repeats (the module keeps one window request in flight and drops stale ones):

* ``{"type": "window", x0, x1, cols, search}`` -> ``{"type": "marks", marks: header,
  names: {code: name}}`` with one binary buffer (see :meth:`Marks.pack`: little-endian
  columns start f8, end f8, row i4, lane i4, name i4, count u4, [hits u4], depth u2; the
  header gives each column's offset). ``names`` holds only names this view has not had.
* ``{"type": "details", row}`` -> ``{"type": "details", details}`` (:func:`event_details`).
* ``{"type": "search", search}`` -> ``{"type": "search", count}`` or ``{error}``; the count
  is over every event of the run, as ``run.events["name"].str.contains(search)``.
* ``{"type": "next", search, t, row, direction}`` -> ``{"type": "next", event}``.
* any failure -> ``{"type": "error", message}``.
"""

from __future__ import annotations

import base64
import hashlib
import heapq
import html as html_lib
import json
import pathlib
import re
import zlib

import numpy as np

from ...analysis.tool_data import no_trace_note
from ..base import View, _widget_bundle
from ..page import bundle, png
from ..page.display import esc, output_element_js, script_safe
from . import static
from .details import TraceIndex, event_details
from .marks import MAX_MARKS, Marks
from .model import TraceModel

OFFLINE_BUDGET = 2_000_000  # bytes of embedded payload in the offline HTML
TILE_COLS = 1600
TILE_BUDGET = 6000
EXACT_MAX_EVENTS = 25_000  # the busiest step is embedded in full up to this many events
ALL_NAMES_MAX_CHARS = 400_000
# An event's name as sent to the page is cut to this many characters (with an ellipsis): a
# kernel name of 100 KB fills the offline copy's budget alone; the details pane reads the
# full one from the run.
NAME_MAX_CHARS = 2048
# Where a notebook's offline copy ends (a notebook reopened without a kernel, an export).
MORE_DETAIL = "Run the notebook with a kernel for every event."


def _fmt_us(us: float) -> str:
    a = abs(us)
    if a < 1e3:
        return f"{us:,.1f} µs"
    if a < 1e6:
        return f"{us / 1e3:,.2f} ms"
    return f"{us / 1e6:,.4f} s"


def trace_model(run) -> TraceModel:
    """The run's :class:`TraceModel`, built once and cached on the run (``run.trace_model``:
    the run's name for it)."""
    return run.trace_model


def _trace_index(run) -> TraceIndex:
    """Flows between events (launch -> kernel, producer -> consumer), built on first use and
    kept beside the run's model."""
    model = trace_model(run)
    index = getattr(model, "trace_index", None)
    if index is None:
        index = model.trace_index = TraceIndex(run)
    return index


def _steps(run) -> list[list]:
    """Step bands: (step, start, duration) of the host with the most steps."""
    try:
        steps = run.steps
    except Exception:  # a run without what the step analysis needs
        return []
    if steps is None or not len(steps):
        return []
    if "host" in steps:
        host = steps["host"].value_counts().index[0]
        steps = steps[steps["host"] == host]
    steps = steps.sort_values("start_us").head(5000)
    return [
        [int(s), float(a), float(d)]
        for s, a, d in zip(steps["step"], steps["start_us"], steps["step_time_us"])
    ]


class TraceViewer(View):
    """A trace viewer of a run (see the module docstring). ``window_us`` picks the first
    view (default: where the events are), ``group_order`` the order of host/plane groups
    (glob patterns; default devices first), ``height`` the canvas height in px."""

    viewer_script = False  # its own canvas viewer, not plotly.js

    title = "Trace viewer"

    def __init__(
        self,
        run,
        window_us: tuple[float, float] | None = None,
        group_order: list[str] | None = None,
        height: int = 620,
        budget: int = MAX_MARKS,
        model: TraceModel | None = None,
        offline_bytes: int = OFFLINE_BUDGET,
        more_detail: str | None = None,
    ) -> None:
        self.run = run
        # What the offline copy tells its reader to do for every event where its detail
        # ends; "{window}" becomes the window shown, as (start_us, end_us).
        self.more_detail = more_detail or MORE_DETAIL
        self.offline_bytes = int(offline_bytes)  # the offline copy's embedded payload, at most
        # A run of TensorBoard's tool data only has no trace to draw.
        self.note = no_trace_note(run)
        self.model = model if model is not None else trace_model(run)
        self.budget = budget
        self.height = int(height)
        self.groups = self.model.arrange(group_order)
        self.activity = tuple(float(v) for v in self.model.activity_window())
        self.initial = (
            tuple(float(v) for v in window_us) if window_us is not None else self.activity
        )
        self._window_given = window_us is not None

    # -- shared by the live and the offline view ----------------------------------------------
    def meta(self, name_codes=()) -> dict:
        m = self.model
        lanes = m.lanes
        group_of = {}
        for gi, g in enumerate(self.groups):
            for li in g["lanes"]:
                group_of[li] = gi
        lane_list = []
        for i in range(len(lanes)):
            line_id = int(lanes["line_id"].iat[i])
            tip = (
                f"{lanes['line'].iat[i]}"
                + (f" (id {line_id})" if line_id != -1 else "")
                + f"\n{int(lanes['n_events'].iat[i]):,} events · "
                f"{int(lanes['depth_rows'].iat[i])} rows (events that overlap)"
            )
            lane_list.append(
                {
                    "label": str(lanes["label"].iat[i]),
                    "tooltip": tip,
                    "group": group_of.get(i, 0),
                    "rows": max(1, int(lanes["depth_rows"].iat[i])),
                    "n": int(lanes["n_events"].iat[i]),
                }
            )
        return {
            "version": 1,
            "t_min": m.t_min,
            "t_max": m.t_max,
            "initial": list(self.initial),
            "activity": list(self.activity),
            "lanes": lane_list,
            "groups": [
                {
                    "label": g["label"],
                    "device": g["device"],
                    "n": g["n"],
                    "lanes": [int(i) for i in g["lanes"]],
                    "collapsed": c,
                }
                for g, c in zip(self.groups, self._collapsed())
            ],
            "steps": _steps(self.run),
            "height": self.height,
            "names": self._names(name_codes),
            "n_events": int(m.n_rows),
            "n_timed": len(m),
        }

    def _collapsed(self) -> list[bool]:
        """Groups start collapsed when they have no event in the first view (so the first
        screen shows lanes with events), unless that would collapse them all."""
        per_lane = self.model.lane_counts(*self.initial)
        empty = [not per_lane[g["lanes"]].any() for g in self.groups]
        return [False] * len(empty) if all(empty) else empty

    def _names(self, codes) -> dict:
        cats = self.model.name_categories
        return {
            str(int(c)): _cut(str(cats[int(c)]))
            for c in np.unique(np.asarray(codes, np.int64))
            if 0 <= c < len(cats)
        }

    def first_window(self) -> tuple[float, float, int]:
        """The window the module asks for first: the view and half a view each side."""
        a, b = self.initial
        w = b - a
        return a - 0.5 * w, b + 0.5 * w, 2 * 1100

    # -- live -------------------------------------------------------------------------------
    def live_widget(self):
        """The live view: a ``TraceViewerWidget`` (anywidget) fed by this run's model (None
        for a run without a trace)."""
        if self.note:
            return None
        self.live = _widget_class()(self)
        return self.live

    def widget(self):
        return self.live_widget()

    live = None  # the last live widget made (its view and selection sync back from the page)

    @property
    def window_us(self) -> tuple[float, float]:
        """The window shown (µs): as the page last reported it, else the first view."""
        w = getattr(self.live, "window_us", None)
        return (float(w[0]), float(w[1])) if w and w[1] > w[0] else self.initial

    @property
    def selected_row(self) -> int | None:
        """The row of Run.events selected in the page (None when nothing is)."""
        row = getattr(self.live, "selected_row", -1)
        return None if row is None or row < 0 else int(row)

    # -- offline ----------------------------------------------------------------------------
    def offline_payload(self, budget_bytes: int = OFFLINE_BUDGET) -> dict:
        """The embedded payload, within ``budget_bytes`` of JSON (names included): the
        whole capture, the busiest step in full (when small enough), and a tree of tiles,
        each cut in four where it still had merged blocks, filled level by level (busiest
        tiles first) while the budget lasts. Tiles are deflated and base64-encoded."""
        m = self.model
        cats = m.name_categories
        counts = m.name_counts()
        name_cost = (
            np.minimum(np.asarray(cats.str.len(), dtype=np.int64), NAME_MAX_CHARS) + 16
            if len(cats)
            else np.zeros(0, np.int64)
        )
        meta = self.meta(())
        used = len(json.dumps(meta)) + 200
        named = np.zeros(len(cats), bool)
        if name_cost.sum() <= min(ALL_NAMES_MAX_CHARS, budget_bytes // 4):
            named[:] = True  # every name: the offline search then counts every event
            used += int(name_cost.sum())
        tiles: list[dict] = []

        def tile(x0: float, x1: float, level: int, exact: bool = False) -> tuple[dict, Marks]:
            return _tile(m, x0, x1, level, exact)

        def cost(parts: list[tuple[dict, Marks]]) -> tuple[int, np.ndarray]:
            new = np.unique(np.concatenate([mk.name for _, mk in parts]))
            new = new[(new >= 0) & ~named[new]]
            size = sum(len(t["data"]) + len(json.dumps(t["header"])) + 80 for t, _ in parts)
            return size + int(name_cost[new].sum()), new

        def add(parts: list[tuple[dict, Marks]], always: bool = False) -> bool:
            nonlocal used
            size, new = cost(parts)
            if used + size > budget_bytes and not always:
                return False
            used += size
            named[new] = True
            tiles.extend(t for t, _ in parts)
            return True

        root = tile(m.t_min, max(float(np.nextafter(m.t_max, np.inf)), m.t_min + 1e-3), 0)
        add([root], always=True)  # the whole capture, whatever it costs
        span = self._exact_span()
        if span is not None:
            t = tile(span[0], span[1], -1, exact=True)
            t[0]["label"] = f"{span[2]} ({_fmt_us(span[0])} to {_fmt_us(span[1])})"
            if cost([t])[0] <= budget_bytes * 0.6:
                add([t])
        queue = [(0, -root[1].n_events, 0)] if not root[1].complete else []
        while queue:
            level, _, i = heapq.heappop(queue)
            parent = tiles[i]
            a, b = parent["x0"], parent["x1"]
            q = (b - a) / 4
            kids = [tile(a + k * q, a + (k + 1) * q, level + 1) for k in range(4)]
            first = len(tiles)
            if not add(kids):
                continue
            parent["children"] = list(range(first, first + 4))
            for k, (_, km) in enumerate(kids):
                if not km.complete:
                    heapq.heappush(queue, (level + 1, -km.n_events, first + k))
        meta["names"] = self._names(np.flatnonzero(named))
        meta["offline_note"] = _offline_note(tiles, self.more_detail)
        return {
            "meta": meta,
            "tiles": tiles,
            "name_counts": {k: int(counts[int(k)]) for k in meta["names"]},
            "bytes": used,
        }

    def _exact_span(self) -> tuple[float, float, str] | None:
        """What the offline copy keeps in full: the first view when one was asked for (a
        report's slowest step), else the busiest step (most events), when it holds at most
        EXACT_MAX_EVENTS; else the widest span around the busiest moment of it (or of the
        activity window, without steps) that does."""
        m = self.model
        a, b = self.initial
        if self._window_given and b > a and 0 < m.count(a, b) <= EXACT_MAX_EVENTS:
            return a, b, "the first view"
        steps = _steps(self.run)
        if steps:
            best = max(steps, key=lambda s: m.count(s[1], s[1] + s[2]))
            a, b, label = best[1], best[1] + best[2], f"step {best[0]}"
            if 0 < m.count(a, b) <= EXACT_MAX_EVENTS:
                return a, b, label
        else:
            a, b = self.activity
        if not b > a or not m.count(a, b):
            return None
        dens = m.density(a, b, 256)
        c = a + (int(np.argmax(dens)) + 0.5) * (b - a) / 256
        lo, hi = 0.0, b - a
        for _ in range(40):  # the widest span around c within the event limit
            mid = (lo + hi) / 2
            if m.count(c - mid / 2, c + mid / 2) <= EXACT_MAX_EVENTS:
                lo = mid
            else:
                hi = mid
        if lo <= 0:
            return None
        return c - lo / 2, c + lo / 2, f"the busiest {_fmt_us(lo)}"

    def html(self, *_args, **_kwargs) -> str:
        """The offline viewer for an HTML page: the module inline, the payload embedded (no
        network)."""
        if self.note:
            return f"<div class='tfprof-view'><p><i>{esc(self.note)}</i></p></div>"
        payload = self.offline_payload(self.offline_bytes)
        data = script_safe(json.dumps(payload, separators=(",", ":")))
        uid = "tfpv-" + hashlib.sha1(data.encode()).hexdigest()[:12]
        js = offline_module()
        return (
            f'<div class="tfprof-view"><h3 style="margin:4px 0">{esc(self.title)}</h3>'
            f'<div id="{uid}" class="tfprof-trace-offline"></div>'
            f'<script type="application/json" id="{uid}-data">{data}</script>'
            f'<script type="module">{js}\nrenderOffline(document.getElementById("{uid}"),'
            f' JSON.parse(document.getElementById("{uid}-data").textContent));</script>'
            f"</div>"
        )

    def text(self) -> str:
        if self.note:
            return f"Trace timeline: {self.note}"
        m = self.model
        a, b = self.initial
        return (
            f"Trace viewer: {len(m):,} events in {len(m.lanes)} lanes, "
            f"{len(self.groups)} groups; opens on {a / 1e3:,.3f}-{b / 1e3:,.3f} ms"
        )

    def findings(self) -> list[str]:
        return [self.text()]

    def static_html(self, image: bool = False) -> str:
        """Output 2, for viewers that run no scripts: what the trace holds, as text."""
        lines = [f"<div><b>{esc(self.title)}</b></div>", f"<div>{esc(self.text())}</div>"]
        if not self.note:
            lines.append(
                "<div><i>The trace viewer draws where scripts run (JupyterLab, VS Code, an "
                "exported HTML page).</i></div>"
            )
        return "<div>" + "".join(lines) + "</div>"

    def _ipython_display_(self) -> None:
        from IPython.display import display

        text = self.text()
        if self.note:
            display({"text/html": self.static_html(), "text/plain": text}, raw=True)
            return
        # Output 1, the live widget, has no text of its own: where it cannot show (an
        # export), output 2 says what the trace holds, once; with the png extra a display
        # update turns output 2 into the static image (its title says the same).
        display({"text/plain": "", **_widget_bundle(self.live_widget())}, raw=True)
        # Marked, so that output 3 finds the outputs it hides in any front end's page.
        second = {"text/html": f'<div class="tfprof-static">{self.static_html()}</div>',
                  "text/plain": text}  # fmt: skip
        handle = display(second, raw=True, display_id=True)
        display({"application/javascript": self.viewer_js(), "text/plain": ""}, raw=True)
        # Built and rendered in the background, after the viewer; outside IPython display()
        # gives no handle, so there is no output for an image to go to.
        if png.available() and handle is not None:
            png.render_async(self.static_figure, _image_updater(handle, text))

    def static_figure(self):
        """The first view as a plotly figure, for the static image (see
        :mod:`.static`); None without a trace."""
        return static.static_figure(self)

    def _repr_mimebundle_(self, include=None, exclude=None):
        return {"text/html": self.static_html(), "text/plain": self.text()}

    def viewer_js(self) -> str:
        """Output 3: the offline viewer as a classic script run with the output's element
        (``static/trace/notebook_output.js``): it hides output 2 and, in a notebook
        app, stands down while the live widget (output 1) draws; where none can (an exported
        page, a notebook reopened without a kernel) it hides output 1 too and draws the trace
        from the embedded payload."""
        # An exported page puts this output inside a <script>: no "</" may end it early.
        payload = script_safe(
            json.dumps(self.offline_payload(self.offline_bytes), separators=(",", ":"))
        )
        return (
            "(function (element) {\n"
            f"{output_element_js()}"
            f"var payload = {payload};\n"
            f"{offline_classic()}\n"
            "window.__tfpvMountOutput(element, payload);\n"
            "})(typeof element !== 'undefined' ? element : null);\n"
        )


def _image_updater(handle, text: str):
    def done(image: bytes) -> None:
        handle.update({"image/png": base64.b64encode(image).decode(), "text/plain": text}, raw=True)

    return done


def offline_module() -> str:
    """The viewer as an ES module (:func:`.bundle.trace_esm`), safe to inline in a
    ``<script>`` element."""
    return re.sub(r"</(script)", r"<\\/\1", bundle.trace_esm(), flags=re.IGNORECASE)


def offline_classic() -> str:
    """The viewer as a classic script that defines ``window.__tfpvRenderOffline`` and
    ``window.__tfpvMountOutput`` once per page (a notebook's JavaScript output cannot be a
    module; :func:`.bundle.trace_script`)."""
    return re.sub(r"</(script)", r"<\\/\1", bundle.trace_script(), flags=re.IGNORECASE)


def write_html(run, path, **kwargs) -> str:
    """Write a self-contained HTML page with the trace viewer of ``run`` (offline)."""
    view = TraceViewer(run, **kwargs)
    title = html_lib.escape(f"Trace: {getattr(run, 'name', '')}")
    doc = (
        "<!doctype html><html><head><meta charset='utf-8'>"
        "<meta name='color-scheme' content='light dark'>"
        f"<title>{title}</title><style>body{{font-family:system-ui,sans-serif;margin:12px;"
        "background:Canvas;color:CanvasText}</style></head>"
        f"<body>{view.html()}</body></html>"
    )
    pathlib.Path(path).write_text(doc, encoding="utf-8")
    return str(path)


def timeline(run, window_us: tuple[float, float] | None = None, **kwargs) -> TraceViewer:
    """The trace viewer of a run (see :class:`TraceViewer`): ``window_us=(start_us, end_us)``
    picks the first view (default: where the events are), ``group_order`` the order of
    host/plane groups (glob patterns; default devices first), ``height`` the canvas height in
    px."""
    return TraceViewer(run, window_us=window_us, **kwargs)


_WIDGET_CLASS = None


def _widget_class():
    """The anywidget class, defined on first use (importing this module needs no anywidget)."""
    global _WIDGET_CLASS
    if _WIDGET_CLASS is None:
        _WIDGET_CLASS = _make_widget_class()
    return _WIDGET_CLASS


def __getattr__(name: str):
    if name == "TraceViewerWidget":
        return _widget_class()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _cut(name: str) -> str:
    """A name as the page gets it: at most NAME_MAX_CHARS characters."""
    return name if len(name) <= NAME_MAX_CHARS else name[: NAME_MAX_CHARS - 1] + "…"


def _tile(model, x0: float, x1: float, level: int, exact: bool) -> tuple[dict, Marks]:
    """One tile of the offline copy: the marks of ``[x0, x1)`` packed, deflated and
    base64-encoded (every event of the window where ``exact``)."""
    marks = model.window(x0, x1, cols=TILE_COLS, budget=10**9 if exact else TILE_BUDGET)
    header, buf = marks.pack()
    data = base64.b64encode(zlib.compress(buf, 1)).decode("ascii")
    tile = {
        "x0": x0,
        "x1": x1,
        "level": level,
        "exact": exact,
        "header": header,
        "deflate": True,
        "data": data,
        "children": None,
    }
    return tile, marks


def _offline_note(tiles: list[dict], more_detail: str = MORE_DETAIL) -> str:
    """What the offline copy says where its detail ends: the span it keeps in full, and how
    to see every event elsewhere (``more_detail``; the page puts the window shown for
    "{window}")."""
    exact = [t for t in tiles if t["exact"]]
    where = f" Every event of {exact[0]['label']} is kept." if exact else ""
    return f"Offline copy: detail ends here.{where} {more_detail}"


def _first_marks(view: TraceViewer) -> tuple[Marks, Marks]:
    """The marks a live viewer starts with: its first window, and the whole capture."""
    m = view.model
    a, b, cols = view.first_window()
    first = m.window(a, b, cols=cols, budget=view.budget)
    overview = m.window(
        m.t_min,
        max(float(np.nextafter(m.t_max, np.inf)), m.t_min + 1e-3),
        cols=1600,
        budget=min(view.budget, 4000),
    )
    return first, overview


def answer_request(view: TraceViewer, content: dict, reply: dict, new_names) -> tuple[dict, list]:
    """The live viewer's answer to one request of its module (a window of marks, an event's
    details, a search's count, the next match): the message and its binary buffers.
    ``new_names(vid, codes)``: the names of ``codes`` that view has not been sent yet."""
    m = view.model
    kind = content.get("type")
    if kind == "window":
        state = None
        if content.get("search"):
            try:
                state = m.search(content["search"])
            except re.error:
                state = None
        cols = int(min(max(int(content.get("cols", 1200)), 1), 8192))
        x0, x1 = float(content["x0"]), float(content["x1"])
        marks = m.window(x0, x1, cols=cols, budget=view.budget, search=state)
        header, buf = marks.pack()
        names = new_names(reply["vid"], marks.name)
        return {**reply, "type": "marks", "marks": header, "names": names}, [buf]
    if kind == "details":
        d = event_details(view.run, m, _trace_index(view.run), int(content["row"]))
        return {**reply, "type": "details", "details": framework_fields(view.run, d)}, []
    if kind == "search":
        try:
            state = m.search(str(content.get("search") or ""))
        except re.error as exc:
            return {**reply, "type": "search", "error": str(exc)}, []
        return {**reply, "type": "search", "count": state.count}, []
    if kind == "next":
        state = m.search(str(content.get("search") or ""))
        t, row = float(content.get("t", m.t_min)), int(content.get("row", -1))
        ev = m.next_match(state, t, row, int(content.get("direction", 1)))
        return {**reply, "type": "next", "event": ev}, []
    raise ValueError(f"unknown request {kind!r}")


def framework_fields(run, details: dict) -> dict:
    """An event's details in its framework's words: the events' ``tf_op`` column is the op
    that ran the event (TensorFlow's name for it), named as the framework names its ops
    ('op' on XLA, 'operator' on PyTorch), and left out where the event has none (a PyTorch
    trace read "tf_op —" on every event)."""
    from ...frameworks import rules_of

    rules = rules_of(run)
    label = "tf_op" if "tensorflow" in rules else rules.op_label
    fields = []
    for k, v in details.get("fields", []):
        if k == "tf_op":
            if v in ("—", ""):
                continue
            k = label
        fields.append([k, v])
    return {**details, "fields": fields}


def _make_widget_class():
    import anywidget
    import traitlets

    class TraceViewerWidget(anywidget.AnyWidget):
        """The live trace viewer: an anywidget answering the module's window, details and
        search requests from the run's :class:`TraceModel`."""

        _esm = bundle.trace_esm()
        _meta = traitlets.Dict().tag(sync=True)
        _marks0 = traitlets.Bytes(b"").tag(sync=True)
        _marks0_header = traitlets.Dict().tag(sync=True)
        _overview = traitlets.Bytes(b"").tag(sync=True)
        _overview_header = traitlets.Dict().tag(sync=True)
        window_us = traitlets.List([0.0, 0.0]).tag(sync=True)
        selected_row = traitlets.Int(-1).tag(sync=True)

        def __init__(self, view: TraceViewer) -> None:
            m = view.model
            first, overview = _first_marks(view)
            h0, b0 = first.pack()
            h1, b1 = overview.pack()
            meta = view.meta(np.concatenate([first.name, overview.name]))
            super().__init__(
                _meta=meta,
                _marks0=b0,
                _marks0_header=h0,
                _overview=b1,
                _overview_header=h1,
                window_us=list(view.initial),
            )
            self._view = view
            self._sent: dict[str, np.ndarray] = {}
            self._known = np.zeros(len(m.name_categories), bool)
            self._known[[int(k) for k in meta["names"]]] = True
            self.on_msg(self._on_msg)

        @property
        def view(self) -> TraceViewer:
            return self._view

        def _new_names(self, vid: str, codes: np.ndarray) -> dict:
            sent = self._sent.get(vid)
            if sent is None:
                if len(self._sent) > 32:
                    self._sent.clear()
                sent = self._sent[vid] = self._known.copy()
            codes = np.unique(codes[codes >= 0])
            new = codes[~sent[codes]]
            sent[new] = True
            return self._view._names(new)

        def _on_msg(self, _widget, content, buffers) -> None:
            vid, seq = content.get("vid"), content.get("seq")
            reply = {"vid": vid, "seq": seq}
            try:
                self._answer(content, reply)
            except Exception as exc:  # the module shows it; the kernel keeps serving
                self.send({**reply, "type": "error", "message": f"{type(exc).__name__}: {exc}"})

        def _answer(self, content: dict, reply: dict) -> None:
            message, buffers = answer_request(self._view, content, reply, self._new_names)
            self.send(message, buffers)

    return TraceViewerWidget
