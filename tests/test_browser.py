"""Widgets in a real browser: an executed notebook exported to HTML shows every plot with
the network off, and the live widgets render and re-sample on zoom in JupyterLab.

Needs Debian's Chromium (/usr/bin/chromium) and the dev extra (playwright, jupyterlab,
nbconvert); skipped where they are missing. Servers listen on 127.0.0.1 only and are
stopped here. Screenshots go to the folder printed by the test.
"""

import json
import os
import pathlib
import shutil
import socket
import subprocess
import sys
import tempfile
import time

import pytest
from conftest import ROOT

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run"]
_AVAILABLE = (os.path.exists(CHROMIUM) and shutil.which("jupyter") is not None and
              __import__("importlib").util.find_spec("playwright") is not None)
# Locally these tests skip without a browser; in CI (.ci/run installs it) they must run.
pytestmark = pytest.mark.skipif(not _AVAILABLE and os.environ.get("CI") != "true",
                                reason="needs /usr/bin/chromium, playwright and jupyter")

CELLS = [
    "import tfprof_widgets as tw\n"
    f"run = tw.load({str(ROOT / 'sample_profiles' / 'input_bound')!r})\n"
    f"other = tw.load({str(ROOT / 'sample_profiles' / 'custom_loop')!r})",
    "tw.overview(run)", "tw.op_stats(run)", "tw.timeline(run)", "tw.memory_timeline(run)",
    "tw.tf_data_graph(run)", "tw.input_pipeline_view(run)", "tw.compare(run, other)",
]
# Plots per cell: step graph, 2 pies, timeline, memory, tf.data graph, 2 input charts, compare
EXPECTED_PLOTS = 1 + 2 + 1 + 1 + 1 + 2 + 1


def make_notebook(path: pathlib.Path) -> None:
    import nbformat

    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(src) for src in CELLS]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                 "language": "python"}
    nbformat.write(nb, path)


@pytest.fixture(scope="module")
def shots_dir():
    d = pathlib.Path(tempfile.mkdtemp(prefix="tfprof_screens_"))
    print(f"\nscreenshots: {d}")
    return d


def offline_page(p):
    browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
    page = browser.new_page(viewport={"width": 1300, "height": 1000})
    page.route("**/*", lambda r: r.continue_() if r.request.url.startswith("file:")
               else r.abort())
    return browser, page


def count_plots_offline(html: pathlib.Path, screenshot: pathlib.Path) -> int:
    """Open a local HTML file with every non-file request blocked; count plotly plots."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser, page = offline_page(p)
        page.goto(html.as_uri())
        page.wait_for_load_state("load")
        page.wait_for_timeout(500)
        n = page.locator(".js-plotly-plot").count()
        page.screenshot(path=str(screenshot), full_page=True)
        browser.close()
    return n


def test_exported_notebook_shows_every_plot_offline(tmp_path, shots_dir):
    nb = tmp_path / "widgets.ipynb"
    make_notebook(nb)
    subprocess.run([sys.executable, "-m", "jupyter", "nbconvert", "--to", "notebook",
                    "--execute", "--inplace", "--ExecutePreprocessor.timeout=300",
                    "--ExecutePreprocessor.store_widget_state=False", str(nb)],
                   check=True, capture_output=True, timeout=600)
    subprocess.run([sys.executable, "-m", "jupyter", "nbconvert", "--to", "html", str(nb)],
                   check=True, capture_output=True, timeout=300)
    html = tmp_path / "widgets.html"
    assert html.stat().st_size < 20 * 2**20
    assert count_plots_offline(html, shots_dir / "exported_notebook.png") == EXPECTED_PLOTS


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def jupyterlab(tmp_path):
    """JupyterLab on 127.0.0.1 with a private config; stopped when the test ends."""
    port = free_port()
    cfg = tmp_path / "jupyter_config"
    (cfg / "labconfig").mkdir(parents=True)
    (cfg / "labconfig" / "page_config.json").write_text(
        json.dumps({"buildCheck": False, "buildAvailable": False}))
    env = {**os.environ, "JUPYTER_CONFIG_DIR": str(cfg)}
    proc = subprocess.Popen(
        [sys.executable, "-m", "jupyter", "lab", "--no-browser", "--ip", "127.0.0.1",
         "--port", str(port), "--ServerApp.token=", "--ServerApp.password=",
         "--ServerApp.port_retries=0", "--LabApp.expose_app_in_browser=True",
         "--allow-root", f"--ServerApp.root_dir={tmp_path}"],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.time() + 90
        while time.time() < deadline:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                time.sleep(0.5)
        else:
            pytest.fail("JupyterLab did not start")
        yield port
    finally:
        proc.terminate()
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()


def test_live_widgets_render_and_zoom_in_jupyterlab(tmp_path, jupyterlab, shots_dir):
    from playwright.sync_api import sync_playwright

    make_notebook(tmp_path / "live.ipynb")
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        page.route("**/*", lambda r: r.continue_() if "127.0.0.1" in r.request.url
                   else r.abort())
        page.goto(f"http://127.0.0.1:{jupyterlab}/lab/tree/live.ipynb?reset")
        page.wait_for_function(
            "() => window.jupyterapp && window.jupyterapp.shell.currentWidget && "
            "window.jupyterapp.shell.currentWidget.sessionContext && "
            "window.jupyterapp.shell.currentWidget.sessionContext.session && "
            "window.jupyterapp.shell.currentWidget.sessionContext.session.kernel && "
            "window.jupyterapp.shell.currentWidget.sessionContext.session.kernel.status"
            " === 'idle'", timeout=120_000)
        # Trigger run-all without awaiting it (awaiting can hang), then wait on the DOM.
        page.evaluate("() => { window.jupyterapp.commands.execute("
                      "'notebook:run-all-cells'); }")
        page.wait_for_function(
            f"() => document.querySelectorAll('.js-plotly-plot').length >= {EXPECTED_PLOTS}",
            timeout=240_000)
        page.wait_for_timeout(1000)
        n = page.locator(".js-plotly-plot").count()
        page.screenshot(path=str(shots_dir / "jupyterlab_live.png"), full_page=False)
        # Zoom the timeline (the 5th plot: step graph, 2 pies, then the timeline) by a drag.
        plots = page.locator(".js-plotly-plot")
        timeline = plots.nth(3)
        # JupyterLab scrolls its notebook panel, not the page: bring the plot to the top
        # of that scroll container (twice: the windowed notebook re-lays out on scroll).
        for _ in range(2):
            page.evaluate(
                "(i) => { const g = document.querySelectorAll('.js-plotly-plot')[i];"
                " const sc = g.closest('.jp-WindowedPanel-outer') || g.closest('.jp-Notebook');"
                " sc.scrollTop += g.getBoundingClientRect().top - "
                "sc.getBoundingClientRect().top - 80; }", 3)
            page.wait_for_timeout(600)
        before = page.evaluate(
            "(i) => document.querySelectorAll('.js-plotly-plot')[i].data[0].x.length", 3)
        drag = timeline.locator(".nsewdrag").first
        box = drag.bounding_box()
        # A drag across 30 % of the plot (plotly ignores drags under 8 px).
        page.mouse.move(box["x"] + box["width"] * 0.40, box["y"] + box["height"] / 2)
        page.mouse.down()
        page.mouse.move(box["x"] + box["width"] * 0.70, box["y"] + box["height"] / 2,
                        steps=8)
        page.mouse.up()
        page.wait_for_function(
            f"(i) => document.querySelectorAll('.js-plotly-plot')[i].data[0].x.length "
            f"!= {before}", arg=3, timeout=30_000)
        after = page.evaluate(
            "(i) => document.querySelectorAll('.js-plotly-plot')[i].data[0].x.length", 3)
        timeline.screenshot(path=str(shots_dir / "jupyterlab_timeline_zoomed.png"))
        browser.close()
    assert n >= EXPECTED_PLOTS
    assert after != before  # the Python side re-sampled the zoomed window


def test_report_shows_every_plot_offline(tmp_path, shots_dir):
    from tfprof_widgets import cli

    out = tmp_path / "report.html"
    assert cli.main(["report", str(ROOT / "sample_profiles" / "input_bound"), "-o",
                     str(out)]) == 0
    assert out.stat().st_size < 10 * 2**20
    assert out.read_text().count("plotly.js v") == 1  # embedded exactly once
    # overview 1, slowest-step timeline 1, op pies 2, input pipeline 2, memory 1, tf.data 1
    assert count_plots_offline(out, shots_dir / "report.png") == 8
