"""Pies that read: distinct short labels, one size for every pie of a view, percentages only
on slices big enough to hold them, the full name on hover, a click that filters a table."""

from __future__ import annotations

from collections.abc import Callable

import pandas as pd

from ._common import quick_figure
from .base import COLORWAY, Plot, Plots
from .names import unique_labels

__all__ = [
    "NO_PIE_NOTE",
    "OTHER",
    "PIE_SLICES",
    "pie_plot",
    "pie_row",
    "top_slices",
    "worth_a_pie",
]

PIE_SLICES = 10  # the largest slices; the rest is one "Other" slice
OTHER = "Other"
LABEL_MIN_SHARE = 0.04  # slices under 4 % carry no text (it would stack); hover says all
HEIGHT = 300
LEGEND_ROW_PX = 21
MIN_SLICES = 2  # a pie of one 100 % slice says nothing its table does not, in 300+ px
NO_PIE_NOTE = "No pie: one slice would be the whole (the table says it)."
OTHER_COLOR = "#c7c7c7"
LEGEND_CHARS = 34  # ~260 px of legend text at 12 px


def _fit_legend(labels: list[str]) -> list[str]:
    """Labels a legend beside a pie in half a 1,050 px panel (or under it on a phone) shows
    whole: longer ones keep their head and tail around an ellipsis (the legend cut them
    mid-name), or, where two would read alike, another cut that tells them apart (head
    only, then tail only); a repeat after all that gets " #2". The full name is on hover."""
    n = LEGEND_CHARS - 1
    cuts = (
        lambda x: x[: n - 13] + "…" + x[-13:],
        lambda x: x[:n] + "…",
        lambda x: "…" + x[-n:],
    )
    out = [x if len(x) <= LEGEND_CHARS else cuts[0](x) for x in labels]
    for cut in cuts[1:]:
        counts: dict[str, int] = {}
        for x in out:
            counts[x] = counts.get(x, 0) + 1
        out = [
            cut(full) if counts[x] > 1 and len(full) > LEGEND_CHARS else x
            for x, full in zip(out, labels)
        ]
    seen: dict[str, int] = {}
    final = []
    for x in out:
        seen[x] = seen.get(x, 0) + 1
        final.append(x if seen[x] == 1 else f"{x} #{seen[x]}")
    return final


def worth_a_pie(values: pd.Series) -> bool:
    """Whether ``values`` (a pie's slices) make a pie worth its space: two slices or more."""
    return int((values > 0).sum()) >= MIN_SLICES


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
    labels = _fit_legend(unique_labels(named, shorten, fallbacks))
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
    if colors:
        marker = dict(colors=[colors.get(k, OTHER_COLOR) for k in keys])
    else:  # plotly's colours in order, "Other" grey (the 11th colour is the 1st's blue again)
        named_colors = iter(COLORWAY * (len(keys) // len(COLORWAY) + 1))
        marker = dict(colors=[OTHER_COLOR if o else next(named_colors) for o in is_other])
    pie = dict(
        type="pie",
        labels=labels,
        values=v,
        customdata=custom,
        texttemplate=text,
        textposition="inside",
        insidetextorientation="horizontal",
        sort=False,
        direction="clockwise",
        hole=0.35,
        # The full name by hovertext (%{text} on a pie): plotly.js 4 reads a pie's 2-D
        # customdata by the slice's list of points, so %{customdata[1]} hovered as "-".
        hovertext=full,
        hovertemplate="%{text}<br>%{value:,.1f} " + unit + " (%{percent})<extra></extra>",
        uid=f"pie-{name}",
    )
    pie["marker"] = marker
    fig = quick_figure([pie], _pie_layout(title))
    if click is not None:
        click = {**click, "others": [k for k in named], "other": None}
    return Plot(name, fig, click=click, legend_side=_legend_side(len(keys)))


def pie_row(plots: list[Plot]) -> Plots:
    """The pies of a view side by side, laid out alike: each with the legend room of the
    one with the most slices, so their pies keep one size in the grid's rows."""
    side = max((p.legend_side for p in plots), key=lambda s: s["narrow_height"])
    for p in plots:
        p.legend_side = side
    return Plots(plots, row=True)


def _legend_side(slices: int) -> dict:
    """The legend beside the pie where the plot is wide; under it where narrow, the plot
    then taller by one legend row per slice (not by the most a pie can have: a pie of 2
    slices under 11 rows of blank legend was 240 px too tall). The pie's own area is
    ``HEIGHT`` either way, so the pies of a view keep one size."""
    legend_px = LEGEND_ROW_PX * max(slices, 1) + 10
    return {
        "min_width": 700,
        "right_share": 0.55,
        "height": HEIGHT,
        "margin_b": 10,
        "narrow_height": HEIGHT + legend_px,
        "narrow_margin_b": legend_px,
    }


def _pie_layout(title: str) -> dict:
    return dict(
        title=dict(text=title),
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
