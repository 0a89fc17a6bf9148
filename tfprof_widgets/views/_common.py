"""Pieces several views share: a run's readable name, XProf's tools as views, step-time bars."""

from __future__ import annotations

import os
import re
import sys
import weakref
from collections.abc import Callable
from typing import TypeVar

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from ..analysis.memo import once
from ..analysis.steps import CATEGORIES, CATEGORY_LABELS
from .page.display import CATEGORY_COLORS, esc

__all__ = [
    "TOOL_CALLS",
    "legend_under_title",
    "of_run",
    "of_runs",
    "quick_figure",
    "run_label",
    "step_bars",
    "swatches",
]

# The title on top of the figure, then the legend's rows, then the plot (see
# legend_under_title). Pixel sizes of plotly's default 12-17 px fonts.
TITLE_PX = 32
LEGEND_ROW_PX = 22
# The plot area (where a horizontal legend wraps) of a view 700 px wide.
PLOT_AREA_700_PX = 560


def legend_under_title(labels: list[str], narrowest: int = PLOT_AREA_700_PX) -> dict:
    """Layout for the title at the top of the figure and a horizontal legend in rows of its
    own under it, above the plot: the top margin holds as many legend rows as ``labels`` take
    in a plot area ``narrowest`` px wide, so the legend never runs into the title (in a 70 px
    margin a legend that wrapped to two rows covered it). Wider, a row may stay empty.

    Plotly wraps a horizontal legend in columns as wide as its widest entry."""
    if labels:
        entry = 40 + 7.5 * max(len(s) for s in labels)  # swatch and gap, then the text
        per_row = max(1, int(narrowest // entry))
        rows = -(-len(labels) // per_row)
    else:
        rows = 0
    return dict(
        title=dict(y=1, yref="container", yanchor="top", pad=dict(t=8)),
        margin=dict(t=TITLE_PX + rows * LEGEND_ROW_PX + 8),
        legend=dict(orientation="h", x=0, xanchor="left", y=1.0, yanchor="bottom"),
    )


# plotly.py validates every property set on a figure, one by one: a large part of a second
# for one step-time graph (docs/speed.md; the pod viewer builds one per step choice). Figures
# built here from plotly.js dicts skip it (the JSON is the same: tests/views/test_views.py builds
# them both ways and compares); True validates them (tests, debugging).
VALIDATE_FIGURES = os.environ.get("TFPROF_WIDGETS_VALIDATE_FIGURES") == "1"


def quick_figure(data: list[dict], layout: dict) -> go.Figure:
    """A figure from plotly.js trace and layout dicts, without plotly.py's per-property
    validation unless :data:`VALIDATE_FIGURES`."""
    return go.Figure(data=data, layout=layout, _validate=VALIDATE_FIGURES)


def ranked_bars(
    labels: list[str],
    values: list[float],
    texts: list[str],
    title: str,
    unit: str,
    value_format: str,
    row_px: int,
) -> go.Figure:
    """Horizontal bars, the largest on top (``labels``/``values`` given smallest first), with
    ``texts`` in the hover beside the value (``value_format`` a d3 format, ``unit`` its
    unit and the axis title): the memory viewer's buffers, the source lines' lines."""
    traces = [
        {
            "type": "bar",
            "orientation": "h",
            "x": values,
            "y": labels,
            "text": texts,
            "textposition": "none",
            "hovertemplate": f"%{{y}}: %{{x:{value_format}}} {unit}<br>%{{text}}<extra></extra>",
            "marker": {"color": "#1f77b4"},
        }
    ]
    layout = {
        "title": {"text": title},
        "height": 140 + row_px * max(len(labels), 1),
        "margin": {"l": 10, "r": 10, "t": 50, "b": 40},
        "xaxis": {"title": {"text": unit}},
        "yaxis": {"automargin": True},
    }
    return quick_figure(traces, layout)


T = TypeVar("T")


def of_run(run, key: str | tuple, compute: Callable[[], T]) -> T:
    """``compute()`` once per run and ``key``: what a view reads from a loaded run that is
    not one of its cached analyses (an analysis called with arguments, a table built from
    them), so that the view's cell run again, or another view, finds it ready. Kept with
    the analyses' shared inputs (:mod:`tfprof_widgets.analysis.memo`), so
    :meth:`~tfprof_widgets.Run.clear_cache` forgets it too. Views only read what it gives."""
    return once(run, ("views", key), compute)


def of_runs(run_a, run_b, key: str, compute: Callable[[], T]) -> T:
    """:func:`of_run` for a result of two runs, kept on ``run_a`` for as long as ``run_b``
    lives (a weak reference: a run no notebook holds any more is not kept alive)."""
    by_b = of_run(run_a, key, weakref.WeakKeyDictionary)
    if run_b not in by_b:
        by_b[run_b] = compute()
    return by_b[run_b]


_TIMESTAMP = re.compile(r"^\d{4}_\d\d_\d\d_\d\d_\d\d_\d\d(_\d+)?$")

# XProf names its tools; here they are views (what the advice should point at).
TOOL_CALLS = {
    "overview_page": "tw.views.overview(run)",
    "input_pipeline_view": "tw.views.input_pipeline(run)",
    "input_pipeline_analyzer": "tw.views.input_pipeline(run)",
    "trace_viewer": "tw.views.timeline(run)",
    "op_stats": "tw.views.op_stats(run)",
    "tensorflow_stats": "tw.views.op_stats(run)",
    "kernel_stats": "tw.views.kernel_stats(run)",
    "memory_profile": "tw.views.memory_timeline(run)",
    "tf_data_bottleneck_analysis": "tw.views.tf_data_graph(run)",
    "pod_viewer": "tw.views.pod_viewer(run)",
}


def run_label(run) -> str:
    """What to call a run: the notebook variable it lives in (``slow``, ``fast``), else the
    logdir it was captured into when its own folder is only a timestamp, else its name."""
    # Only a running IPython has notebook variables; a script does not import it (slow to
    # import: docs/speed.md).
    ipython = sys.modules.get("IPython")
    ip = ipython.get_ipython() if ipython is not None else None
    if ip is not None:
        names = [
            k
            for k, v in ip.user_ns.items()
            if v is run and not k.startswith("_") and k.isidentifier()
        ]
        if names:
            return names[0]
    name = str(getattr(run, "name", "") or "run")
    if _TIMESTAMP.match(name):
        parts = os.path.normpath(str(getattr(run, "path", ""))).split(os.sep)
        if len(parts) >= 4 and parts[-3:-1] == ["plugins", "profile"]:
            return parts[-4]
    return name


def swatches(values: dict[str, float], unit: str = "ms") -> str:
    """``■ Device compute 1.23 ms, ■ Input 4.56 ms`` in the categories' colours."""
    return ", ".join(
        f'<span class="tf-swatch" style="background:{CATEGORY_COLORS[c]}"></span>'
        f"{esc(CATEGORY_LABELS[c])} {v:,.2f} {unit}"
        for c, v in values.items()
        if v > 0
    )


def step_bars(
    frame: pd.DataFrame,
    x: list[str],
    *,
    title: str,
    xaxis_title: str,
    scale: float = 1e-3,
    unit: str = "ms",
    horizontal: bool = False,
    height: int = 360,
    uid: str = "step",
) -> go.Figure:
    """Stacked bars of the step-time categories (one colour each, input in red), one bar per
    row of ``frame``, legend above the plot so no axis title runs into it."""
    data = []
    for cat in CATEGORIES:
        v = frame[cat].to_numpy(dtype=float) * scale
        if not (v > 0).any():
            continue
        label = CATEGORY_LABELS[cat]
        kw = (
            {"y": x, "x": v, "orientation": "h", "hovertemplate": "%{y}<br>"}
            if horizontal
            else {"x": x, "y": v, "hovertemplate": "%{x}<br>"}
        )
        kw["hovertemplate"] += (
            f"{label}: %{{{'x' if horizontal else 'y'}:,.3f}} {unit}<extra></extra>"
        )
        marker = dict(color=CATEGORY_COLORS[cat])
        data.append(dict(type="bar", name=label, marker=marker, uid=f"{uid}-{cat}", **kw))
    value_axis = dict(title=dict(text=unit if unit != "ms" else "milliseconds"), rangemode="tozero")
    cat_axis = dict(title=dict(text=xaxis_title), type="category")
    if horizontal:  # plotly draws the first category at the bottom; the first goes on top
        cat_axis["autorange"] = "reversed"
    top = legend_under_title([d["name"] for d in data])
    layout = dict(
        barmode="stack",
        title=dict(text=title, **top["title"]),
        height=height,
        margin=dict(b=40, l=10, r=10, **top["margin"]),
        legend=dict(**top["legend"], traceorder="normal"),
        xaxis=value_axis if horizontal else cat_axis,
        yaxis=cat_axis if horizontal else value_axis,
    )
    return quick_figure(data, layout)


def slowest_first_bars(frame: pd.DataFrame, labels: list[str], noun: str, what: str, uid: str):
    """:func:`step_bars` across, one bar per ``labels`` (a host, a rank) in ``frame``'s order
    (the slowest first), each bar's label its click data: the pod viewer's hosts, the job
    view's ranks."""
    fig = step_bars(
        frame,
        labels,
        title=f"Step time per {noun}, {what} (slowest on top)",
        xaxis_title=noun,
        horizontal=True,
        height=150 + 26 * len(labels),
        uid=uid,
    )
    for t in fig.data:
        t.customdata = [[label] for label in labels]
    return fig


def finite(v) -> float:
    """A float, with NaN/None as 0."""
    try:
        f = float(v)
    except (TypeError, ValueError):
        return 0.0
    return f if np.isfinite(f) else 0.0
