"""The report of a PyTorch trace in a real browser, network off: every section is drawn with
its plots and tables (the operator view among them), and the page raises no error.

Needs Debian's Chromium (/usr/bin/chromium) and playwright (the dev extra); skipped where they
are missing (except in CI).
"""

from __future__ import annotations

import re

from conftest import ROOT
from test_browser import draw_everything, offline_page, pytestmark  # noqa: F401

TRACE = ROOT / "tests" / "data" / "chrome" / "torch_transformer_h100.pt.trace.json.gz"

# What each section shows: (views, plotly plots, tables) at least; the trace viewer draws on
# a canvas of its own.
EXPECTED = {
    "overview": (1, 1, 1),
    "timeline": (1, 0, 0),
    # Host ops by name and by type, device ops by name: every device op of this trace is an
    # aten op, and a single-slice donut is not drawn.
    "op_stats": (1, 3, 1),
    "operators": (1, 5, 2),
    "input_pipeline": (1, 1, 0),
    "memory": (1, 1, 1),
    "kernels": (1, 2, 1),
}

SECTIONS = """() => [...document.querySelectorAll('section')].map(s => ({
  id: s.id,
  views: s.querySelectorAll('.tfprof-view').length,
  undrawn: [...s.querySelectorAll('.tfprof-root')].filter(r => !r.dataset.drawnMs).length,
  plots: s.querySelectorAll('.js-plotly-plot').length,
  empty_plots: [...s.querySelectorAll('.js-plotly-plot')].filter(
    g => !(g.data || []).length || !g.querySelector('.main-svg')).length,
  tables: s.querySelectorAll('.tft-body').length,
  empty_tables: [...s.querySelectorAll('.tft-body')].filter(
    b => !b.querySelector('.tft-row')).length,
  canvases: [...s.querySelectorAll('canvas')].filter(c => c.width > 0 && c.height > 0).length,
  text: s.innerText,
}))"""


def test_report_of_the_transformer_trace_draws_every_view(tmp_path, chromium):
    from tfprof_widgets import cli

    out = tmp_path / "report.html"
    assert cli.main(["report", str(TRACE), "-o", str(out)]) == 0
    assert "<title>PyTorch profile: torch_transformer_h100.pt.trace.json.gz</title>" in (
        out.read_text()
    )
    errors: list[str] = []
    browser, page = offline_page(chromium)
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.goto(out.as_uri())
    draw_everything(page)
    sections = page.evaluate(SECTIONS)
    browser.close()
    assert errors == []
    by_id = {s["id"]: s for s in sections}
    assert list(by_id) == list(EXPECTED)
    for sid, (n_views, n_plots, n_tables) in EXPECTED.items():
        s = by_id[sid]
        assert s["views"] == n_views and s["undrawn"] == 0, sid
        assert s["plots"] >= n_plots and s["empty_plots"] == 0, sid
        assert s["tables"] >= n_tables and s["empty_tables"] == 0, sid
    # The trace viewer drew its canvas, with marks for the slowest step's events.
    timeline = by_id["timeline"]
    marks = re.search(r"([\d,]+) marks for ([\d,]+) events", timeline["text"])
    assert timeline["canvases"] >= 1 and marks and int(marks[1].replace(",", "")) > 1000
    # PyTorch's operators where a PyTorch user looks: op stats, operator view, kernels.
    for sid in ("op_stats", "operators", "kernels"):
        assert "aten::" in by_id[sid]["text"], sid
    assert "GPU utilization" in by_id["operators"]["text"]
