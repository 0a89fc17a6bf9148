"""Pies that read: distinct short labels, one size for every pie of a view, percentages only
on slices big enough to hold them, the full name on hover, a click that filters a table."""

from __future__ import annotations

from collections.abc import Callable

import pandas as pd
import plotly.graph_objects as go

from .base import Plot
from .names import unique_labels

__all__ = ["OTHER", "PIE_SLICES", "pie_plot", "top_slices"]

PIE_SLICES = 10  # the largest slices; the rest is one "Other" slice
OTHER = "Other"
LABEL_MIN_SHARE = 0.04  # slices under 4 % carry no text (it would stack); hover says all
HEIGHT = 300
LEGEND_ROW_PX = 21


def top_slices(values: pd.Series, top: int = PIE_SLICES) -> pd.Series:
    """The ``top`` largest positive values by key, and the rest summed as :data:`OTHER`."""
    s = values[values > 0].sort_values(ascending=False)
    if len(s) > top:
        s = pd.concat([s.iloc[:top], pd.Series({OTHER: s.iloc[top:].sum()})])
    s.index = s.index.astype(str)
    return s


def pie_plot(
    name: str,
    values: pd.Series,
    title: str,
    shorten: Callable[..., str],
    *,
    unit: str = "µs",
    click: dict | None = None,
    fallbacks: tuple = (),
    colors: dict[str, str] | None = None,
) -> Plot:
    """A pie of ``values`` (full key → value, largest first, :data:`OTHER` last). Legend
    beside the pie where the plot is wide, under it where narrow: the same plot area in both,
    so the pies of a view have one size. ``click`` links slices to a table (see
    :class:`~.base.Plot`); each slice's key is its ``customdata[0]``."""
    keys = [str(k) for k in values.index]
    is_other = [k == OTHER for k in keys]
    named = [k for k, o in zip(keys, is_other) if not o]
    labels = unique_labels(named, shorten, fallbacks)
    it = iter(labels)
    labels = [OTHER if o else next(it) for o in is_other]
    v = values.to_numpy(dtype=float)
    share = v / v.sum() if v.sum() > 0 else v
    text = ["%{percent}" if s >= LABEL_MIN_SHARE else "" for s in share]
    full = [
        f"{OTHER}: {len(values) - 1} largest shown, the rest here" if o else k
        for k, o in zip(keys, is_other)
    ]
    custom = [[None if o else k, f] for k, o, f in zip(keys, is_other, full)]
    marker = {}
    if colors:
        marker = dict(colors=[colors.get(k, "#9e9e9e") for k in keys])
    fig = go.Figure(
        go.Pie(
            labels=labels,
            values=v,
            customdata=custom,
            texttemplate=text,
            textposition="inside",
            insidetextorientation="horizontal",
            sort=False,
            direction="clockwise",
            hole=0.35,
            marker=marker,
            hovertemplate="%{customdata[1]}<br>%{value:,.1f} "
            + unit
            + " (%{percent})<extra></extra>",
            uid=f"pie-{name}",
        )
    )
    _lay_out_pie(fig, title)
    if click is not None:
        click = {**click, "others": [k for k in named], "other": None}
    return Plot(name, fig, click=click, legend_side=_LEGEND_SIDE)


# The legend beside the pie where the plot is wide, under it (this much taller) where narrow.
_LEGEND_PX = LEGEND_ROW_PX * (PIE_SLICES + 1) + 10
_LEGEND_SIDE = {
    "min_width": 700,
    "right_share": 0.55,
    "height": HEIGHT,
    "margin_b": 10,
    "narrow_height": HEIGHT + _LEGEND_PX,
    "narrow_margin_b": _LEGEND_PX,
}


def _lay_out_pie(fig: go.Figure, title: str) -> None:
    fig.update_layout(
        title=title,
        height=HEIGHT,
        margin=dict(t=40, b=10, l=10, r=10),
        uniformtext=dict(minsize=10, mode="hide"),
        legend=dict(
            orientation="v",
            x=1.02,
            xanchor="left",
            y=0.5,
            yanchor="middle",
            itemclick="toggle",
            itemdoubleclick="toggleothers",
        ),
    )
