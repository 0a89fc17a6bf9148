"""A single self-contained HTML report of a run: opens anywhere, with no internet.

It holds the overview, op stats, input pipeline, memory profile, tf.data graph, kernel stats
and a timeline of the slowest step, with plotly.js embedded once in the file.
"""

from __future__ import annotations

import datetime
import html
import os

from . import views
from .views._display import plotter

SECTIONS = ("overview", "timeline", "op_stats", "input_pipeline", "memory", "tf_data", "kernels")


def slowest_step_window(run, pad: float = 0.05) -> tuple[float, float] | None:
    """The time window of the slowest step (with a little margin), or None without steps."""
    steps = run.steps
    if not len(steps) or steps["start_us"].isna().all():  # none, or TensorBoard's (no times)
        return None
    s = steps.loc[steps["step_time_us"].idxmax()]
    margin = pad * s["step_time_us"]
    return float(s["start_us"] - margin), float(s["start_us"] + s["step_time_us"] + margin)


def report_html(run) -> str:
    """The whole report as one HTML document."""
    sections = {
        "overview": views.overview(run),
        "timeline": views.timeline(run, window_us=slowest_step_window(run)),
        "op_stats": views.op_stats(run),
        "input_pipeline": views.input_pipeline(run),
        "memory": views.memory_timeline(run),
        "tf_data": views.tf_data_graph(run),
        "kernels": views.kernel_stats(run),
    }
    if not len(run.kernels):
        sections.pop("kernels")
    plot = plotter(True)  # one plotly.js for the whole file, in its first figure
    parts = [
        f'<section id="{key}">{view.html(plot=plot)}</section>' for key, view in sections.items()
    ]
    nav = " · ".join(f'<a href="#{k}">{k.replace("_", " ")}</a>' for k in sections)
    when = datetime.datetime.now().strftime("%Y-%m-%d %H:%M")
    title = html.escape(f"TensorFlow profile report: {run.name}")
    return (
        "<!doctype html><html><head><meta charset='utf-8'>"
        f"<title>{title}</title><style>body{{font-family:system-ui,sans-serif;margin:16px;"
        "max-width:1400px}} section{margin:24px 0;border-top:1px solid #ddd;"
        "padding-top:8px}</style></head><body>"
        f"<h1 style='margin:0'>{title}</h1><p style='color:#555'>{html.escape(run.path)} · "
        f"hosts: {html.escape(', '.join(run.hosts))} · {len(run.events):,} events · made "
        f"{when} by tfprof_widgets</p><p>{nav}</p>{''.join(parts)}</body></html>"
    )


def write_report(run, path: str | os.PathLike, overwrite: bool = False) -> str:
    """Write the report to ``path`` (refusing to replace an existing file unless told)."""
    path = os.fspath(path)
    if os.path.exists(path) and not overwrite:
        raise FileExistsError(f"{path} exists; choose another name or pass --force")
    with open(path, "w", encoding="utf-8") as f:
        f.write(report_html(run))
    return path
