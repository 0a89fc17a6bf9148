"""Live (kernel-backed) figure widgets, created only when a front end asks for them."""

from __future__ import annotations

import plotly.graph_objects as go


def figure_widget(fig: go.Figure):
    """A FigureWidget of ``fig``; plotly's anywidget needs the `anywidget` package."""
    return go.FigureWidget(fig)
