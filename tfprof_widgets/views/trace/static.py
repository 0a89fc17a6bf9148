"""The trace viewer's static image, for viewers that run no scripts (``nbconvert
--sanitize-html``, GitHub, an untrusted notebook): the first view's marks as a plotly figure
(one horizontal bar per mark, lanes top to bottom in the viewer's order), rendered to PNG by
:mod:`..page.png` like every view's image."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from .._common import quick_figure

# The viewer's palette (static/trace/style.js, d3's category20); here a name's colour is
# picked by its name code (the viewer hashes the name itself).
PALETTE = (
    "#1f77b4", "#aec7e8", "#ff7f0e", "#ffbb78", "#2ca02c", "#98df8a", "#d62728", "#ff9896",
    "#9467bd", "#c5b0d5", "#8c564b", "#c49c94", "#e377c2", "#f7b6d2", "#7f7f7f", "#c7c7c7",
    "#bcbd22", "#dbdb8d", "#17becf", "#9edae5",
)  # fmt: skip
MAX_ROWS = 60  # rows of lanes drawn; the rest is left out, and the title says so
ROW_PX = 16
WIDTH_COLS = 900


def lane_rows(view, max_rows: int = MAX_ROWS) -> tuple[np.ndarray, list[tuple[float, str]]]:
    """Each lane's first row in the picture (-1: not drawn) in the viewer's group order,
    groups that start collapsed left out, and the tick (first row, label) of each lane."""
    lanes = view.model.lanes
    first = np.full(len(lanes), -1, np.int64)
    ticks: list[tuple[float, str]] = []
    row = 0
    for g, collapsed in zip(view.groups, view._collapsed()):
        if collapsed:
            continue
        for li in g["lanes"]:
            rows = max(1, int(lanes["depth_rows"].iat[li]))
            if row + rows > max_rows:
                return first, ticks
            first[li] = row
            ticks.append((row, f"{g['label']} · {lanes['label'].iat[li]}"))
            row += rows
    return first, ticks


def static_figure(view) -> go.Figure | None:
    """The first view of a :class:`~.viewer.TraceViewer` as a figure (None without a
    trace): merged blocks as the viewer draws them, named on hover only (a PNG has none)."""
    if view.note or not len(view.model):
        return None
    a, b = view.initial
    marks = view.model.window(a, b, cols=WIDTH_COLS, budget=3000)
    first, ticks = lane_rows(view)
    lane = marks.lane.astype(np.int64)
    y = first[lane] + marks.depth.astype(np.int64)
    keep = first[lane] >= 0
    start = np.maximum(marks.start[keep], a)
    end = np.minimum(marks.end[keep], b)
    width = np.maximum(end - start, (b - a) / WIDTH_COLS)  # at least a pixel column wide
    colors = np.asarray(PALETTE)[np.abs(marks.name[keep].astype(np.int64)) % len(PALETTE)]
    rows = int(y[keep].max()) + 1 if keep.any() else 1
    drawn = int(keep.sum())
    bar = dict(
        type="bar",
        base=((start - a) / 1e3).tolist(),  # as plotly validates "base" (any type): a list
        x=width / 1e3,
        y=y[keep],
        orientation="h",
        marker=dict(color=colors.tolist(), line=dict(width=0)),
        width=0.85,
        hoverinfo="skip",
    )
    layout = dict(
        title=dict(
            text=f"Trace viewer (static image): {drawn:,} marks, {a / 1e3:,.3f}-{b / 1e3:,.3f} ms",
            font=dict(size=13),
        ),
        height=min(1400, 90 + ROW_PX * max(rows, 4)),
        bargap=0,
        showlegend=False,
        margin=dict(l=10, r=20, t=40, b=40),
        xaxis=dict(title=dict(text="ms from the first view's start"), range=[0, (b - a) / 1e3]),
        yaxis=dict(
            autorange="reversed",
            tickvals=[r for r, _ in ticks],
            ticktext=[t if len(t) <= 48 else t[:47] + "…" for _, t in ticks],
            tickfont=dict(size=10),
            showgrid=False,
            zeroline=False,
        ),
    )
    # Built from plotly.js dicts, unvalidated as every view's figures (_common.quick_figure):
    # validating 3,000 bars' arrays and colours took the kernel's time for the same JSON.
    return quick_figure([bar], layout)
