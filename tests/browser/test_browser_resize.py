"""A plot follows its output down in width (seen in issue 36's browser pass): drawn at
1,400 px, then the window narrowed to 700 px, the overview's step-time graph stayed 1,360 px
wide, its right half cut off, because the relayout for the new width set a height, which
turns plotly's autosize off and freezes the old width. On the real JAX H100 capture, offline
in headless Chromium."""

from __future__ import annotations

from conftest import ROOT
from test_browser import offline_page, pytestmark  # noqa: F401  (skips without a browser)

import tfprof_widgets as tw
from tfprof_widgets.report import PAGE_CSS
from tfprof_widgets.views.page.display import lib_script, reset_lib

CAPTURE = ROOT / "tests" / "data" / "xplane_h100_jax" / "jax_cnn_graphs.xplane.pb"

WIDTHS = """() => [...document.querySelectorAll('.js-plotly-plot')].map(
  g => [g._fullLayout.width, g.parentElement.clientWidth])"""


def test_plots_narrow_with_the_window(tmp_path, chromium):
    run = tw.load(CAPTURE, progress=False)
    reset_lib()
    page_html = (
        f"<!doctype html><html><head><meta charset='utf-8'><style>{PAGE_CSS}</style></head>"
        f"<body data-tfprof-page=''><main><section>{tw.views.overview(run).html()}</section>"
        f"</main>{lib_script()}<script>window.__tfprof.mountAll(document);</script></body></html>"
    )
    f = tmp_path / "overview.html"
    f.write_text(page_html, encoding="utf-8")
    _, page = offline_page(chromium, viewport={"width": 1400, "height": 900})
    page.goto(f.as_uri())
    page.wait_for_function("() => document.querySelector('.tfprof-root[data-drawn-ms]')")
    wide = page.evaluate(WIDTHS)
    assert wide and all(w > 1000 for w, _ in wide)
    page.set_viewport_size({"width": 700, "height": 900})
    page.wait_for_function(f"() => ({WIDTHS})().every(([w, box]) => w <= box + 1)", timeout=10_000)
    narrow = page.evaluate(WIDTHS)
    assert all(w <= box + 1 and w < 700 for w, box in narrow), narrow
