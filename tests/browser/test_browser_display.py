"""How the views reach the page, in a real browser (Debian's Chromium, network blocked):

* JupyterLab (the dev extra's, 4.6 here): one trace viewer per cell (the live widget; the
  offline copy stands down), one view per kernel-stats cell and no other output shown there
  (its PNG stays hidden, even after the display update that brings it; the viewer script
  sent ahead of it hides its own output), and a pie click there leaves that slice's rows;
* ``nbconvert --sanitize-html``: the trace viewer shows its static image, and its summary line
  at most once;
* the report: a click on a kernel-stats slice leaves exactly the rows of that slice (on the
  two-host sample and on the JAX H100 capture);
* the trace viewer draws each lane as deep as its events really overlap (a GPU stream of a
  CUDA-graph capture is two rows, not a staircase).

JupyterLab and Chromium are the session's (tests/conftest.py): 127.0.0.1 only, stopped at
the end.
"""

import os
import subprocess
import sys

import numpy as np
import pytest
import trace_viewer_lab as lab
from conftest import ROOT
from test_browser import _AVAILABLE, offline_page

pytestmark = pytest.mark.skipif(
    not _AVAILABLE and os.environ.get("CI") != "true",
    reason="needs /usr/bin/chromium, playwright and jupyter",
)

GPU_SHAPED = ROOT / "sample_profiles" / "gpu_shaped"
JAX_H100 = ROOT / "tests" / "data" / "xplane_h100_jax" / "jax_cnn_graphs.xplane.pb"
ENV = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}

# Where each slice of the n-th pie of a view is, in page coordinates (its middle, 85 % of the
# way out), with the key it stands for.
SLICES_JS = """([root, g]) => { const gd = root.querySelectorAll('.js-plotly-plot')[g];
  gd.scrollIntoView({block: 'center'});
  const cd = gd.calcdata[0], r = gd.getBoundingClientRect();
  return cd.map(c => ({x: r.left + cd[0].cx + c.pxmid[0] * 0.85,
    y: r.top + cd[0].cy + c.pxmid[1] * 0.85, label: c.label,
    key: gd.data[0].customdata[c.i][0]})); }"""


def slice_clicks(page, root_selector: str, kernels, n_slices: int = 3) -> list[tuple]:
    """Click the first slices of each pie of a kernel-stats view: (key, rows the table shows,
    rows of run.kernels that slice stands for) for each."""
    root = page.locator(root_selector).first
    root.scroll_into_view_if_needed()
    out = []
    for g, column in enumerate(("kernel_name", "operation")):
        slices = root.evaluate(f"(r, g) => ({SLICES_JS})([r, g])", g)
        named = [s["key"] for s in slices if s["key"] is not None]
        for i in range(min(n_slices, len(slices))):
            # Where the slice is now: the table a click leaves changes the page's height, and
            # the pie moves with it.
            s = root.evaluate(f"(r, g) => ({SLICES_JS})([r, g])", g)[i]
            page.mouse.click(s["x"], s["y"])
            page.wait_for_timeout(250)
            rows = int(root.evaluate("r => r.querySelector('.tft').dataset.rows"))
            values = kernels[column].astype(str)
            want = (
                (values == s["key"]).sum() if s["key"] is not None else (~values.isin(named)).sum()
            )
            out.append((s["key"], rows, int(want)))
    return out


# -- JupyterLab --------------------------------------------------------------------------------
def test_jupyterlab_shows_one_viewer_per_cell(tmp_path, jupyterlab, chromium):
    import tfprof_widgets as tw

    kernels = tw.load(GPU_SHAPED, progress=False).kernels
    lab.write_notebook(
        tmp_path / "one.ipynb",
        [
            f"import tfprof_widgets as tw\nrun = tw.load({str(GPU_SHAPED)!r})",
            "tw.views.timeline(run)",
            "tw.views.kernel_stats(run)",
            "tw.views.timeline(run, window_us=(1000, 1400))",
        ],
    )
    browser, page = lab.lab_page(
        chromium, jupyterlab.port, jupyterlab.notebook(tmp_path / "one.ipynb")
    )
    errors = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    version = page.evaluate("() => window.jupyterapp.version")
    lab.run_all_and_time(page, n_viewers=2)
    page.wait_for_selector(".tfprof-view .js-plotly-plot", timeout=60_000)
    page.wait_for_timeout(9000)  # past the offline copies' wait for the live widget
    cells = page.evaluate(
        """() => { const vis = (e) => !!(e.offsetParent || e.getClientRects().length);
        return [...document.querySelectorAll('.jp-CodeCell')].map(c => ({
          viewers: [...c.querySelectorAll('.tfpv')].filter(vis).length,
          views: [...c.querySelectorAll('.tfprof-view')].filter(vis).length,
          images: [...c.querySelectorAll('.jp-OutputArea-output img')].filter(vis).length,
          texts: [...c.querySelectorAll('.jp-RenderedHTML')].filter(vis).length,
          outputs: [...c.querySelectorAll('.jp-OutputArea-child')].filter(vis).length})); }"""
    )
    clicks = slice_clicks(page, ".jp-CodeCell:nth-child(3) .tfprof-view", kernels)
    browser.close()
    assert int(version.split(".")[0]) == 4, version
    assert not errors, errors
    for i in (1, 3):  # the trace viewers: the live widget alone
        assert cells[i]["viewers"] == 1, cells
        assert cells[i]["images"] == 0 and cells[i]["texts"] == 0, cells
    assert cells[2]["views"] == 1 and cells[2]["images"] == 0 and cells[2]["texts"] == 0, cells
    # The viewer script came ahead of the view, in an output of its own that hides itself.
    assert cells[2]["outputs"] == 1, cells
    assert clicks and all(rows == want > 0 for _, rows, want in clicks), clicks


# -- the sanitized export ----------------------------------------------------------------------
def test_sanitized_export_shows_the_trace_viewer_as_an_image(tmp_path, chromium):
    import nbformat

    from tfprof_widgets.views.page import png as _png

    nb = tmp_path / "tv.ipynb"
    lab.write_notebook(
        nb,
        [
            f"import tfprof_widgets as tw\nrun = tw.load({str(GPU_SHAPED)!r})",
            "tw.views.timeline(run)",
        ],
    )
    run = [sys.executable, "-m", "jupyter", "nbconvert"]
    subprocess.run(
        [*run, "--to", "notebook", "--execute", "--inplace", "--ExecutePreprocessor.timeout=300",
         "--ExecutePreprocessor.store_widget_state=False", str(nb)],
        check=True, capture_output=True, timeout=600, env=ENV,
    )  # fmt: skip
    outputs = nbformat.read(nb, as_version=4).cells[1].outputs
    image = _png.available()  # the png extra (kaleido, in the dev extra) and a browser
    assert sum("image/png" in o.get("data", {}) for o in outputs) == int(image)
    subprocess.run(
        [*run, "--to", "html", "--sanitize-html", "--output", "tv_sanitized.html", str(nb)],
        check=True, capture_output=True, timeout=300,
    )  # fmt: skip
    html = tmp_path / "tv_sanitized.html"
    browser, page = offline_page(chromium)
    page.goto(html.as_uri())
    page.wait_for_timeout(500)
    images = page.evaluate(
        "() => [...document.querySelectorAll('img')].filter(i =>"
        " (i.src || '').startsWith('data:image/png') && i.naturalWidth > 300).length"
    )
    text = page.evaluate("() => document.body.innerText")
    browser.close()
    assert images == int(image)
    # The summary once: the image's title says it, or without an image the text output.
    assert text.count("Trace viewer: ") == int(not image), text


# -- the report ----------------------------------------------------------------------------------
@pytest.mark.parametrize("capture", [GPU_SHAPED, JAX_H100], ids=["gpu_shaped", "jax_h100"])
def test_a_pie_click_leaves_the_rows_of_its_slice(report_of, capture, chromium):
    from test_browser import draw_everything

    import tfprof_widgets as tw

    out = report_of(capture)
    kernels = tw.load(capture, progress=False).kernels
    browser, page = offline_page(chromium)
    page.goto(out.as_uri())
    draw_everything(page)
    clicks = slice_clicks(page, "section#kernels .tfprof-view", kernels, n_slices=4)
    browser.close()
    assert len(clicks) >= 4
    assert all(rows == want > 0 for _, rows, want in clicks), clicks


# -- lanes ----------------------------------------------------------------------------------------
def test_the_page_draws_each_stream_as_deep_as_its_kernels_overlap(tmp_path, chromium):
    from test_trace_model import max_overlap

    import tfprof_widgets as tw
    from tfprof_widgets.views.trace.viewer import write_html

    run = tw.load(JAX_H100, progress=False)
    out = tmp_path / "trace.html"
    write_html(run, out)
    browser, page = offline_page(chromium)
    page.goto(out.as_uri())
    page.wait_for_function(
        "() => window.__tfprofViewers && window.__tfprofViewers[0].stats.firstDraw !== null",
        timeout=20_000,
    )
    lanes = page.evaluate(
        "() => { const v = window.__tfprofViewers[0];"
        " return v.meta.lanes.map((l, i) => [l.rows, v.laneH[i]]); }"
    )
    browser.close()
    ev, model = run.events, run.trace_model
    key = ev["plane"].astype(str) + "|" + ev["line"].astype(str)
    streams = np.flatnonzero(model.lanes["line"].str.startswith("Stream").to_numpy())
    assert len(streams) and len(lanes) == len(model.lanes)
    for i in streams:
        sel = (key == f"{model.lanes['plane'].iat[i]}|{model.lanes['line'].iat[i]}").to_numpy()
        s = ev["start_us"].to_numpy()[sel]
        e = np.maximum(ev["end_us"].to_numpy()[sel], s)
        rows, height = lanes[i]
        assert rows == max_overlap(s, e) <= 2, (model.lanes["line"].iat[i], rows)
        assert height == rows * 18 + 3  # drawn that deep (ROW_H, LANE_PAD)
