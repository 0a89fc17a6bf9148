"""Issue 29 item 11, in a real browser: where the viewer script comes ahead of a view, the
page draws a small view off screen while it waits (``warmUp`` in static/views/outputs.js), so
that the first real view does not pay for plotly.js's and the viewer's first run (0.1-0.2 s).
It must draw what the views draw (pies, bars, lines, a table), raise nothing, and leave
nothing in the page. Needs Debian's Chromium and playwright; skipped where missing, except in
CI."""

from __future__ import annotations

import os

import pytest

from tfprof_widgets.views.page.lib import lib_script

CHROMIUM = "/usr/bin/chromium"
_AVAILABLE = (
    os.path.exists(CHROMIUM) and __import__("importlib").util.find_spec("playwright") is not None
)
pytestmark = pytest.mark.skipif(
    not _AVAILABLE and os.environ.get("CI") != "true", reason="needs /usr/bin/chromium, playwright"
)

# Every plotly.newPlot of the warm-up, by trace type, and what the page holds after it.
WARM = """async () => {
  const P = window.__tfprof.Plotly, orig = P.newPlot, kinds = [];
  P.newPlot = function (div, data, ...rest) {
    for (const d of data) kinds.push(d.type + (d.orientation === 'h' ? '-h' : ''));
    return orig.call(this, div, data, ...rest);
  };
  const out = await window.__tfprof.warmUp();
  P.newPlot = orig;
  return {out, kinds, left: document.querySelectorAll('.tfprof-root, .js-plotly-plot').length,
          mounted: window.__tfprof.mountCount()};
}"""


def test_the_warm_up_draws_a_small_view_off_screen_and_leaves_nothing(chromium):
    page = chromium.new_context().new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.route("**/*", lambda r: r.abort())  # nothing fetched
    page.set_content(f"<!doctype html><html><body>{lib_script()}</body></html>")
    r = page.evaluate(WARM)
    assert r["out"] == {"plots": 3, "rows": 3}, r["out"]  # pies+bars row, lines, a 3-row table
    assert set(r["kinds"]) == {"pie", "bar", "bar-h", "scatter"}
    assert r["left"] == 0 and r["mounted"] == 0  # dropped; no view counted as mounted
    assert errors == []
