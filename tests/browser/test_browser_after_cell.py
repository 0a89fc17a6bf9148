"""What a notebook keeps of a cell after it ended, in JupyterLab 4 (headless Chromium, network
blocked; about 60 s; skipped without Chromium):

- issue 42 item 7: a view's cell ends before its image is rendered (the kernel is free for
  the next cell; it stayed busy 2.3-3.2 s after a cold view for its PNG), the image follows
  as a display update after the cell, and the notebook saved from the page holds it;
- issue 42 item 8: a cell that only loads a run (the viewer script goes to the page there,
  views/_lib.py prefetch, as a widget model) has no output; saved and reopened, no row.
"""

import json
import os

import pytest
import trace_viewer_lab as lab
from conftest import ROOT
from test_browser import _AVAILABLE, lab_page

SAMPLE = ROOT / "sample_profiles" / "input_bound"
NB = "window.jupyterapp.shell.currentWidget"
KERNEL_IDLE = f"() => {NB}.sessionContext.session.kernel.status === 'idle'"

pytestmark = pytest.mark.skipif(
    not _AVAILABLE and os.environ.get("CI") != "true",
    reason="needs /usr/bin/chromium, playwright and jupyter",
)


def run_cell(page, i: int) -> None:
    """Run cell ``i`` and wait until it has its execution count and the kernel is idle."""
    page.evaluate(
        f"(i) => {{ {NB}.content.activeCellIndex = i; {NB}.content.deselectAll();"
        " window.jupyterapp.commands.execute('notebook:run-cell'); }",
        i,
    )
    page.wait_for_function(
        f"(i) => {NB}.content.model.cells.get(i).executionCount !== null", arg=i, timeout=120_000
    )
    page.wait_for_function(KERNEL_IDLE, timeout=120_000)


def has_image(page, i: int) -> bool:
    return page.evaluate(
        f"(i) => {NB}.content.model.cells.get(i).outputs.toJSON()"
        ".some(o => o.data && 'image/png' in o.data)",
        i,
    )


def test_a_views_image_follows_its_cell_into_the_saved_notebook(tmp_path, jupyterlab, chromium):
    pytest.importorskip("kaleido")
    path = tmp_path / "image_after.ipynb"
    lab.write_notebook(
        path,
        [
            f"import tfprof_widgets as tw\nrun = tw.load({str(SAMPLE)!r}, progress=False)",
            # The image's work starts 5 s after the view is shown: a cell that waited for it
            # would end after that.
            "import os\nos.environ['TFPROF_WIDGETS_IMAGE_GRACE_S'] = '5'\ntw.views.op_stats(run)",
        ],
    )
    browser, page = lab_page(chromium, jupyterlab.port, jupyterlab.notebook(path))
    run_cell(page, 0)
    run_cell(page, 1)
    assert not has_image(page, 1), "the cell waited for its image"
    page.wait_for_function(
        f"() => {NB}.content.model.cells.get(1).outputs.toJSON()"
        ".some(o => o.data && 'image/png' in o.data)",
        timeout=120_000,
    )
    lab.save_and_shut_down(page)
    browser.close()
    saved = json.loads(path.read_text(encoding="utf-8"))
    outputs = saved["cells"][1]["outputs"]
    assert sum("image/png" in o.get("data", {}) for o in outputs) == 1


def test_a_load_without_a_view_leaves_no_row_when_reopened(tmp_path, jupyterlab, chromium):
    path = tmp_path / "load_only.ipynb"
    lab.write_notebook(
        path,
        [f"import tfprof_widgets as tw\nrun = tw.load({str(SAMPLE)!r}, progress=False)", "x = 1"],
    )
    notebook = jupyterlab.notebook(path)
    browser, page = lab_page(chromium, jupyterlab.port, notebook)
    run_cell(page, 0)
    # The viewer script reached the page (a view coming next finds it), as no output.
    page.wait_for_function("() => !!window.__tfprof", timeout=60_000)
    assert page.evaluate(f"() => {NB}.content.model.cells.get(0).outputs.length") == 0
    run_cell(page, 1)
    lab.save_and_shut_down(page)
    browser.close()
    saved = json.loads(path.read_text(encoding="utf-8"))
    kept = [o.get("data") for o in saved["cells"][0]["outputs"]]
    assert all(not d for d in kept), kept  # nothing a front end would draw
    browser, page = lab_page(chromium, jupyterlab.port, notebook)
    page.wait_for_timeout(1500)  # any script of the reopened outputs ran by now
    heights = page.evaluate(
        f"() => [0, 1].map(i => {NB}.content.widgets[i].node"
        ".querySelector('.jp-Cell-outputWrapper').getBoundingClientRect().height)"
    )
    browser.close()
    assert heights[0] == heights[1], heights  # as tall as the cell with no output
