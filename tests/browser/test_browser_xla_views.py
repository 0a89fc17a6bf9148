"""XProf's remaining XLA tools in a real browser, network off, on the real JAX H100 capture:
the memory viewer, the graph viewer and the source lines draw (bars, nodes and edges), the
suggestions table shows, and a click on an op row of the op profile, or a point of the
roofline, opens the graph around that op, a click on its source cell the lines of the file:
in the exported notebook (no kernel) and live in JupyterLab.

Needs Debian's Chromium (/usr/bin/chromium), playwright, jupyter and nbconvert; skipped where
they are missing (except in CI).
"""

from __future__ import annotations

import pytest
from conftest import ROOT
from test_browser import (  # noqa: F401
    draw_everything,
    execute,
    lab_draw_everything,
    lab_page,
    make_notebook,
    nbconvert,
    offline_page,
    pytestmark,
    run_all_cells,
    shots_dir,  # noqa: F401 - the fixture
)

CAPTURE = ROOT / "tests" / "data" / "xplane_h100_jax" / "jax_cnn_nographs.xplane.pb"
CELLS = [
    f"import tfprof_widgets as tw\nrun = tw.load({str(CAPTURE)!r})",
    "tw.views.hlo_op_profile(run)",
    "tw.views.roofline(run)",
    "tw.views.memory_viewer(run)",
    "tw.views.graph_viewer(run)",
    "tw.views.source_lines(run)",
    'run.suggestions[["rule", "severity", "text", "view"]]',
]
OP_PROFILE, ROOFLINE, MEMORY, GRAPH, SOURCE = range(5)
# The heaviest op of the capture (its graph is among those the page carries).
HEAVIEST = "input_scatter_fusion"

# Per view: its plots' traces' point counts, its tables' rows and its text.
VIEWS_STATE = """() => [...document.querySelectorAll('.tfprof-view')].map(v => ({
  title: (v.querySelector('.tfprof-title') || {}).textContent || '',
  plots: [...v.querySelectorAll('.tfprof-content .js-plotly-plot')].map(
    g => (g.data || []).map(t => (t.x || t.labels || []).length)),
  rows: [...v.querySelectorAll('.tfprof-content .tft')].map(t => +t.dataset.rows),
  text: v.textContent,
}))"""

PANEL = """(i) => { const v = document.querySelectorAll('.tfprof-view')[i];
  const p = v.querySelector('.tfprof-panel');
  if (!p || p.style.display === 'none' || !p.dataset.key) return null;
  const g = p.querySelector('.js-plotly-plot');
  return {panel: p.dataset.panel, key: p.dataset.key, text: p.textContent,
          nodes: g && g.data ? g.data[1].x.length : 0,
          edges: g && g.data ? g.data[0].x.filter(x => x !== null).length / 2 : 0}; }"""


def _panel(page, view: int, panel: str) -> dict:
    page.wait_for_function(
        f"(i) => {{ const s = ({PANEL})(i); return s && s.panel === {panel!r}"
        " && (s.panel !== 'graph' || s.nodes > 0); }",
        arg=view,
        timeout=20_000,
    )
    return page.evaluate(PANEL, view)


def check_views(page) -> None:
    """Each view drew its marks, and the clicks open the graph and the source line."""
    views = page.evaluate(VIEWS_STATE)
    assert len(views) >= 5, [v["title"] for v in views]
    memory, graph, source = views[MEMORY], views[GRAPH], views[SOURCE]
    # The memory viewer: the heap over program order and the buffers at its peak.
    assert len(memory["plots"]) >= 2 and all(sum(p) > 0 for p in memory["plots"]), memory
    assert "peak" in memory["text"].lower()
    # The graph viewer: nodes (trace 1) and edges (trace 0) around the heaviest op.
    assert graph["plots"][0][1] >= 3 and graph["plots"][0][0] >= 3, graph["plots"]
    assert HEAVIEST in graph["text"] and graph["rows"][0] >= 3
    # The source lines: the top lines' bars and the lines table.
    assert source["plots"] and source["plots"][0][0] >= 3 and source["rows"][0] >= 3
    assert "capture.py" in source["text"]
    # The suggestions: the table of the rules that fired (its header, rows or none).
    assert page.locator("table:has(th:text('rule'))").count() >= 1

    # The op profile, expanded to its ops: a click on the heaviest op's row opens its graph.
    view = page.locator(".tfprof-view").nth(OP_PROFILE)
    view.scroll_into_view_if_needed()
    view.locator("select[data-control=depth]").select_option("op")
    row = view.locator(".tfprof-content .tft-row", has_text=HEAVIEST).first
    row.locator("[data-col=node]").click()
    shown = _panel(page, OP_PROFILE, "graph")
    assert shown["key"].startswith(HEAVIEST + "@") and shown["nodes"] >= 3, shown
    assert shown["edges"] >= 2 and HEAVIEST in shown["text"]
    # ... and its source cell opens the file's lines there, the line marked.
    row.locator("[data-col=source]").click()
    shown = _panel(page, OP_PROFILE, "source")
    assert shown["key"].startswith("/") and ":" in shown["key"], shown
    assert "capture.py" in shown["text"] and "▶" in shown["text"]

    # The roofline: a click on a point opens the graph around its op.
    view = page.locator(".tfprof-view").nth(ROOFLINE)
    view.scroll_into_view_if_needed()
    point = view.evaluate_handle(
        "(v, op) => { const gd = v.querySelector('.tfprof-content .js-plotly-plot');"
        " const traces = gd.querySelectorAll('.scatterlayer .trace');"
        " for (let t = 0; t < gd.data.length; t++) {"
        "  const j = (gd.data[t].customdata || []).findIndex(r => r[0] === op);"
        "  if (j >= 0) return traces[t].querySelectorAll('path.point')[j]; } }",
        HEAVIEST,
    ).as_element()
    point.click(force=True)
    shown = _panel(page, ROOFLINE, "graph")
    # The point under the cursor: the heaviest op's, or one drawn over it (its twin of the
    # other program step, input_scatter_fusion.2); a heavy op either way, its graph sent.
    assert shown["key"].startswith(HEAVIEST) and shown["nodes"] >= 3, shown


@pytest.fixture(scope="module")
def executed(tmp_path_factory):
    nb = tmp_path_factory.mktemp("xla_views") / "xla_views.ipynb"
    make_notebook(nb, CELLS)
    execute(nb)
    return nb


def test_exported_notebook_opens_the_graph_from_the_op_profile(
    executed,
    shots_dir,  # noqa: F811 - test_browser's fixture
    chromium,
):
    nbconvert("--to", "html", str(executed))
    html = executed.with_suffix(".html")
    errors: list[str] = []
    browser, page = offline_page(chromium)
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(html.as_uri())
    draw_everything(page)
    check_views(page)
    page.screenshot(path=str(shots_dir / "xla_views_exported.png"), full_page=True)
    browser.close()
    assert errors == []


def test_live_jupyterlab_opens_the_graph_from_the_op_profile(
    tmp_path,
    shots_dir,  # noqa: F811 - test_browser's fixture
    jupyterlab,
    chromium,
):
    make_notebook(tmp_path / "xla_live.ipynb", CELLS)
    browser, page = lab_page(
        chromium, jupyterlab.port, jupyterlab.notebook(tmp_path / "xla_live.ipynb")
    )
    run_all_cells(page, "() => document.querySelectorAll('.tfprof-view').length >= 5")
    lab_draw_everything(page)
    page.wait_for_function(
        "() => [...document.querySelectorAll('.tfprof-view')].slice(0, 5)"
        ".every(v => v.dataset.drawnMs)",
        timeout=60_000,
    )
    check_views(page)
    page.screenshot(path=str(shots_dir / "xla_views_jupyterlab.png"))
    browser.close()
