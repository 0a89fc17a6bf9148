"""A zoomable trace timeline that stays smooth at millions of events.

Rows are host → plane → thread/stream (→ nesting depth). Each window of time draws at most
5,000 marks (see :mod:`.timeline_lod`): raw events where they are sparse, "n events" blocks
where they are dense. Zooming or panning recomputes the marks for the visible window only;
clicking an event shows all its stats below the plot. Steps are shaded bands with numbers.
"""

from __future__ import annotations

import json
import warnings
import zlib

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from .. import stat_columns
from ..analysis.tool_data import no_trace_note
from ._display import esc
from .base import View
from .tables import html_table
from .timeline_lod import MAX_MARKS, Marks, TimelineModel

PALETTE = [
    "#4e79a7",
    "#f28e2b",
    "#59a14f",
    "#e15759",
    "#76b7b2",
    "#edc948",
    "#b07aa1",
    "#ff9da7",
    "#9c755f",
    "#bab0ac",
]
BLOCK_COLOR = "rgba(110,110,110,0.55)"


def _color(name: str) -> str:
    return PALETTE[zlib.crc32(name.encode()) % len(PALETTE)]


class TimelineView(View):
    title = "Trace timeline"

    def __init__(
        self,
        run,
        window_us: tuple[float, float] | None = None,
        px: int = 1200,
        budget: int = MAX_MARKS,
        model: TimelineModel | None = None,
    ) -> None:
        self.run = run
        self.model = model if model is not None else run.timeline_model
        self.px, self.budget = px, budget
        self.window_us = window_us
        self.marks: Marks = self.model.window(*(window_us or (None, None)), px=px, budget=budget)

    # -- data ---------------------------------------------------------------------------
    def zoom(self, x0: float, x1: float) -> Marks:
        """Recompute the marks for a new window (what a zoom or pan does)."""
        self.window_us = (x0, x1)
        self.marks = self.model.window(x0, x1, px=self.px, budget=self.budget)
        return self.marks

    def trace_data(self, marks: Marks | None = None) -> dict:
        """The arrays sent to the browser for one view."""
        m = self.marks if marks is None else marks
        labels = np.array(self.model.lane_labels, dtype=object)[m.lane]
        dur = m.end_us - m.start_us
        raw = m.raw
        steps = self.run.events["step"].to_numpy(dtype=float, na_value=np.nan)
        step_txt = [
            ("" if r < 0 or np.isnan(steps[r]) else f"<br>step {int(steps[r])}") for r in m.row
        ]
        text = [f"{esc(n)}<br>{d:,.3f} µs{s}" for n, d, s in zip(m.name, dur, step_txt)]
        colors = [(_color(n) if r else BLOCK_COLOR) for n, r in zip(m.name, raw)]
        label = np.where(raw, m.name, "")  # names inside the bars, where they fit
        return {
            "y": labels,
            "base": m.start_us,
            "x": np.maximum(dur, 0.0),
            "text": text,
            "label": label,
            "customdata": m.row,
            "colors": colors,
        }

    def payload_bytes(self, marks: Marks | None = None) -> int:
        d = self.trace_data(marks)
        return len(
            json.dumps(
                {k: (v.tolist() if isinstance(v, np.ndarray) else list(v)) for k, v in d.items()}
            )
        )

    def figure(self) -> go.Figure:
        d = self.trace_data()
        fig = go.Figure(
            go.Bar(
                orientation="h",
                y=d["y"],
                base=d["base"],
                x=d["x"],
                customdata=d["customdata"],
                hovertext=d["text"],
                hoverinfo="text",
                text=d["label"],
                textposition="inside",
                insidetextanchor="start",
                textfont=dict(size=10, color="white"),
                marker=dict(color=d["colors"], line=dict(width=0)),
                uid="timeline-events",
            )
        )
        lanes = self.model.lane_labels
        x0, x1 = self.marks.x0, self.marks.x1
        shapes, notes = self._step_bands(x0, x1)
        fig.update_layout(
            title=f"{len(self.marks):,} marks for {int(self.marks.count.sum()):,} events "
            f"(drag to zoom, double-click to reset)",
            uniformtext=dict(minsize=8, mode="hide"),
            barmode="overlay",
            bargap=0.15,
            height=max(260, 26 * len(lanes) + 90),
            margin=dict(l=10, r=10, t=40, b=30),
            template="plotly_white",
            xaxis=dict(title="µs", range=[x0, x1]),
            shapes=shapes,
            annotations=notes,
            yaxis=dict(
                categoryorder="array",
                categoryarray=list(reversed(lanes)),
                type="category",
                automargin=True,
            ),
            dragmode="zoom",
            showlegend=False,
        )
        return fig

    def _step_bands(self, x0, x1):
        steps = self.run.steps
        steps = steps[
            (steps["start_us"] < x1) & (steps["start_us"] + steps["step_time_us"] > x0)
        ].head(200)
        shapes, notes = [], []
        min_label_width = (x1 - x0) / 40  # narrower bands stay unlabelled
        for i, (s, t, n) in enumerate(zip(steps["start_us"], steps["step_time_us"], steps["step"])):
            shapes.append(
                dict(
                    type="rect",
                    xref="x",
                    yref="paper",
                    x0=s,
                    x1=s + t,
                    y0=0,
                    y1=1,
                    fillcolor="#888" if i % 2 else "#bbb",
                    opacity=0.12,
                    line_width=0,
                    layer="below",
                )
            )
            if t >= min_label_width:
                notes.append(
                    dict(
                        x=max(s, x0),
                        y=1,
                        xref="x",
                        yref="paper",
                        text=f"step {n}",
                        showarrow=False,
                        xanchor="left",
                        yanchor="bottom",
                        font=dict(size=10, color="#555"),
                    )
                )
        return shapes, notes

    def figures(self):
        return {} if no_trace_note(self.run) else {"timeline": self.figure()}

    def header(self) -> str:
        note = no_trace_note(self.run)
        return f"<p style='font:13px sans-serif'><i>{esc(note)}</i></p>" if note else ""

    # -- details ----------------------------------------------------------------------------
    def event_details(self, row: int) -> pd.DataFrame:
        """All there is to know about one event: its columns and every stat."""
        ev = self.run.events.iloc[int(row)]
        base = pd.DataFrame({"field": list(ev.index), "value": [str(v) for v in ev.values]})
        st = self.run.event_stats[self.run.event_stats["event"] == int(row)]
        stats = pd.DataFrame(
            {
                "field": [f"stat: {s}" for s in st["stat"]],
                "value": [str(v) for v in stat_columns.values(st)],
            }
        )
        return pd.concat([base, stats], ignore_index=True)

    def attach(self, figure_widgets: dict) -> list:
        """Zooming and panning recompute the marks; a click shows the event's details."""
        import ipywidgets as w

        if "timeline" not in figure_widgets:  # a run without a trace draws none
            return []
        fw = figure_widgets["timeline"]
        details = w.HTML("<i>Click an event to see its details.</i>")
        status = w.HTML()

        def on_range(layout, xrange):
            if not xrange or xrange[0] is None:
                return
            marks = self.zoom(float(xrange[0]), float(xrange[1]))
            d = self.trace_data(marks)
            with fw.batch_update():
                bar = fw.data[0]
                bar.y, bar.base, bar.x = d["y"], d["base"], d["x"]
                bar.customdata, bar.hovertext, bar.text = d["customdata"], d["text"], d["label"]
                bar.marker.color = d["colors"]
                shapes, notes = self._step_bands(marks.x0, marks.x1)
                fw.layout.shapes, fw.layout.annotations = shapes, notes
            status.value = (
                f"<span style='font:12px sans-serif'>{len(marks):,} marks for "
                f"{int(marks.count.sum()):,} events</span>"
            )

        def on_click(trace, points, state):
            if not points.point_inds:
                return
            row = int(trace.customdata[points.point_inds[0]])
            if row < 0:
                details.value = "<i>A block of many short events: zoom in to see them.</i>"
            else:
                details.value = html_table(
                    self.event_details(row), max_rows=200, title="Event details"
                )

        fw.layout.on_change(on_range, "xaxis.range")
        fw.data[0].on_click(on_click)
        return [status, details]

    def text(self) -> str:
        if no_trace_note(self.run):
            return f"Trace timeline: {no_trace_note(self.run)}"
        return (
            f"Trace timeline: {len(self.model):,} events in {self.model.n_lanes} rows; "
            f"this window draws {len(self.marks):,} marks"
        )


def timeline(run, window_us: tuple[float, float] | None = None, *, window=None) -> TimelineView:
    """The trace timeline of a run; ``window_us=(start_us, end_us)`` picks the first window
    (``window=`` is the old, deprecated name)."""
    if window is not None:
        warnings.warn(
            "timeline(window=...) is deprecated and will be removed in the next release: the "
            "window is in µs, say window_us=(start_us, end_us)",
            DeprecationWarning,
            stacklevel=2,
        )
        window_us = window if window_us is None else window_us
    return TimelineView(run, window_us)
