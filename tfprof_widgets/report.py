"""A single self-contained HTML report of a run: opens anywhere, with no internet.

It holds the overview, the pod viewer (several hosts), a timeline of the slowest step, op
stats, the input pipeline, the memory profile, the tf.data graph and kernel stats: the same
interactive views as a notebook (sortable tables, choosers, pie clicks that filter, plots that
follow the window's width and the system's light/dark setting), with the viewer script and the
plotly.js basic bundle embedded once. Building the page (:func:`report_html`) and writing the
file (:func:`write_report`) are separate steps.
"""

from __future__ import annotations

import datetime
import html
import os

from . import views
from .views._common import run_label
from .views._display import lib_script

SECTIONS = (
    "overview",
    "pod_viewer",
    "timeline",
    "op_stats",
    "input_pipeline",
    "memory",
    "tf_data",
    "kernels",
)

PAGE_CSS = """
:root{color-scheme:light dark}
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:0;
  background:#ffffff;color:#1f1f1f}
main{max-width:1400px;margin:0 auto;padding:12px 20px 40px}
h1{font-size:22px;margin:6px 0 2px}
.meta{color:#616161;margin:0 0 6px;overflow-wrap:anywhere}
nav{position:sticky;top:0;z-index:5;background:inherit;padding:6px 0;
  border-bottom:1px solid #d0d0d0;display:flex;flex-wrap:wrap;gap:4px 14px}
nav a{color:#1a6fd1;text-decoration:none}
section{margin:18px 0;padding-top:6px;border-top:1px solid #d0d0d0;scroll-margin-top:40px}
@media (prefers-color-scheme: dark){
  body{background:#1e1e1e;color:#e0e0e0}
  .meta{color:#a8a8a8}
  nav,section{border-color:#444}
  nav a{color:#6cb2ff}
}
"""


def slowest_step_window(run, pad: float = 0.05) -> tuple[float, float] | None:
    """The time window of the slowest step (with a little margin), or None without steps."""
    steps = run.steps
    if not len(steps):
        return None
    s = steps.loc[steps["step_time_us"].idxmax()]
    margin = pad * s["step_time_us"]
    return float(s["start_us"] - margin), float(s["start_us"] + s["step_time_us"] + margin)


def report_views(run) -> dict[str, views.View]:
    """The views of the report, by section id."""
    out = {
        "overview": views.overview(run),
        "pod_viewer": views.pod_viewer(run),
        "timeline": views.timeline(run, window_us=slowest_step_window(run)),
        "op_stats": views.op_stats(run),
        "input_pipeline": views.input_pipeline(run),
        "memory": views.memory_timeline(run),
        "tf_data": views.tf_data_graph(run),
        "kernels": views.kernel_stats(run),
    }
    if len(run.hosts) < 2:
        out.pop("pod_viewer")
    if not len(run.kernels):
        out.pop("kernels")
    return out


def report_html(run) -> str:
    """The whole report as one HTML document (nothing written)."""
    sections = report_views(run)
    parts = [f'<section id="{key}">{view.html()}</section>' for key, view in sections.items()]
    nav = "".join(f'<a href="#{k}">{k.replace("_", " ")}</a>' for k in sections)
    when = datetime.datetime.now().strftime("%Y-%m-%d %H:%M")
    name = run_label(run)
    title = html.escape(f"TensorFlow profile: {name}")
    meta = (
        f"{html.escape(run.path)} · run {html.escape(run.name)} · hosts: "
        f"{html.escape(', '.join(run.hosts))} · {len(run.events):,} events · made {when} by "
        "tfprof_widgets"
    )
    return (
        "<!doctype html><html lang='en'><head><meta charset='utf-8'>"
        "<meta name='viewport' content='width=device-width,initial-scale=1'>"
        f"<title>{title}</title><style>{PAGE_CSS}</style></head>"
        # data-tfprof-page: the views follow the system's light/dark setting here.
        "<body data-tfprof-page=''><main>"
        f"<h1>{title}</h1><p class='meta'>{meta}</p><nav>{nav}</nav>"
        f"{''.join(parts)}</main>{lib_script()}"
        "<script>window.__tfprof.mountAll(document);</script></body></html>"
    )


def write_report(run, path: str | os.PathLike, overwrite: bool = False) -> str:
    """Write the report to ``path`` (refusing to replace an existing file unless told)."""
    path = os.fspath(path)
    if os.path.exists(path) and not overwrite:
        raise FileExistsError(f"{path} exists; choose another name or pass --force")
    page = report_html(run)
    with open(path, "w", encoding="utf-8") as f:
        f.write(page)
    return path
