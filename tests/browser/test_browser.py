"""Views in a real browser, with the network off: an executed notebook exported to HTML (plain
and with --sanitize-html), the same notebook opened untrusted and run live in JupyterLab, and
the report. On the real 8-GPU capture and a two-host sample: every view draws or shows its
image, none is wider than its output, the kernel pie has as many slices as legend entries, a
click on a slice filters the table, and the views follow JupyterLab's dark theme.

Needs Debian's Chromium (/usr/bin/chromium) and the dev extra (playwright, jupyterlab,
nbconvert, kaleido); skipped where they are missing, except in CI. The browser tests share
one JupyterLab (127.0.0.1 only) and one Chromium, which tests/conftest.py starts and stops;
each test has its own folder and browser context. Screenshots go to the folder printed by
the test.
"""

import contextlib
import json
import os
import pathlib
import shutil
import socket
import subprocess
import sys
import time

import pytest
from conftest import ROOT

CHROMIUM = "/usr/bin/chromium"
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
_AVAILABLE = (
    os.path.exists(CHROMIUM)
    and shutil.which("jupyter") is not None
    and __import__("importlib").util.find_spec("playwright") is not None
)
# Locally these tests skip without a browser; in CI (.ci/run installs it) they must run.
pytestmark = pytest.mark.skipif(
    not _AVAILABLE and os.environ.get("CI") != "true",
    reason="needs /usr/bin/chromium, playwright and jupyter",
)

GPU = ROOT / "tests" / "data" / "bert_8gpu_multi_worker.xplane.pb"
TWO_HOSTS = ROOT / "sample_profiles" / "gpu_shaped"

# The views notebook: every view on the real GPU capture and on the two-host sample.
VIEW_CELLS = [
    f"import tfprof_widgets as tw\nrun = tw.load({str(GPU)!r})\ntwo = tw.load({str(TWO_HOSTS)!r})",
    "tw.views.overview(run)",
    "tw.views.op_stats(run)",
    "tw.views.kernel_stats(run)",
    "tw.views.memory_timeline(run)",
    "tw.views.input_pipeline(run)",
    "tw.views.tf_data_graph(run)",
    "tw.views.overview(two)",
    "tw.views.pod_viewer(two)",
    "tw.views.op_stats(two)",
    "tw.views.kernel_stats(two)",
    "tw.views.compare(two, run)",
]
VIEWS = len(VIEW_CELLS) - 1
KERNEL_VIEW = 2  # index among the views: kernel_stats(run)

# The timeline notebook (its view re-samples in the kernel): the older sample set.
CELLS = [
    "import tfprof_widgets as tw\n"
    f"run = tw.load({str(ROOT / 'sample_profiles' / 'input_bound')!r})\n"
    f"other = tw.load({str(ROOT / 'sample_profiles' / 'custom_loop')!r})",
    "tw.views.overview(run)",
    "tw.views.op_stats(run)",
    "tw.views.timeline(run)",
    "tw.views.memory_timeline(run)",
    "tw.views.tf_data_graph(run)",
    "tw.views.input_pipeline(run)",
    "tw.views.compare(run, other)",
]
# Plots: step graph, 2 pies, memory, tf.data graph, 2 input charts, 2 compare (the timeline is
# the canvas trace viewer: tests/test_trace_viewer_browser.py drives it).
EXPECTED_PLOTS = 1 + 2 + 1 + 1 + 2 + 2


def make_notebook(path: pathlib.Path, cells=CELLS) -> None:
    import nbformat

    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(src) for src in cells]
    nb.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    nbformat.write(nb, path)


def nbconvert(*args: str, cwd=None) -> None:
    subprocess.run(
        [sys.executable, "-m", "jupyter", "nbconvert", *args],
        check=True,
        capture_output=True,
        timeout=600,
        cwd=cwd,
    )


def execute(nb: pathlib.Path) -> None:
    """Execute in place the way the committed notebooks are kept (no widget state)."""
    nbconvert(
        "--to",
        "notebook",
        "--execute",
        "--inplace",
        "--ExecutePreprocessor.timeout=300",
        "--ExecutePreprocessor.store_widget_state=False",
        str(nb),
    )


@pytest.fixture(scope="module")
def shots_dir(tmp_path_factory):
    """Where the screenshots go: $TFPROF_SHOTS, else pytest's temporary directory (kept for
    the last few sessions, then removed by pytest; not a /tmp/tfprof_* left forever)."""
    shots = os.environ.get("TFPROF_SHOTS")
    d = pathlib.Path(shots) if shots else tmp_path_factory.mktemp("screens")
    d.mkdir(parents=True, exist_ok=True)
    print(f"\nscreenshots: {d}")
    return d


@pytest.fixture(scope="module")
def views_notebook(tmp_path_factory):
    """The views notebook, executed (with the PNGs kaleido renders)."""
    nb = tmp_path_factory.mktemp("views_nb") / "views.ipynb"
    make_notebook(nb, VIEW_CELLS)
    execute(nb)
    return nb


def new_page(p, **options):
    """A page and what closes it: a Chromium of its own where ``p`` is a Playwright instance,
    a browser context of its own where ``p`` is the session's Chromium (conftest.chromium)."""
    if hasattr(p, "chromium"):
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        return browser, browser.new_page(**options)
    context = p.new_context(**options)
    return context, context.new_page()


def offline_page(p, viewport=None, color_scheme="light"):
    """A page with every request but file:, data: and blob: blocked (``p``: see new_page)."""
    browser, page = new_page(
        p, viewport=viewport or {"width": 1300, "height": 1000}, color_scheme=color_scheme
    )
    page.route(
        "**/*",
        lambda r: (
            r.continue_() if r.request.url.startswith(("file:", "data:", "blob:")) else r.abort()
        ),
    )
    return browser, page


def draw_everything(page, timeout_ms: int = 60_000) -> None:
    """Scroll through the page so that views waiting out of sight draw, then wait for them."""
    page.wait_for_function("() => window.__tfprof !== undefined", timeout=timeout_ms)
    page.evaluate(
        "async () => { const h = document.documentElement.scrollHeight;"
        " for (let y = 0; y < h; y += 600) { window.scrollTo(0, y);"
        " await new Promise(r => setTimeout(r, 30)); } window.scrollTo(0, 0); }"
    )
    page.wait_for_function(
        "() => [...document.querySelectorAll('.tfprof-root')].every(r => r.dataset.drawnMs"
        " || r.closest('.jp-OutputArea-child')?.style.display === 'none'"
        " || r.parentElement.style.display === 'none')",
        timeout=timeout_ms,
    )


# What a page shows, read in the page: views drawn, widths, images and text left visible.
PAGE_STATE = """() => {
  const vis = (e) => !!(e.offsetParent || e.getClientRects().length);
  const roots = [...document.querySelectorAll('.tfprof-view')];
  return {
    views: roots.length,
    plots: document.querySelectorAll('.tfprof-view .js-plotly-plot').length,
    too_wide: roots.filter(r => {
      const out = r.closest('.jp-OutputArea-output, .tfprof-mount, section') || r.parentElement;
      return r.scrollWidth > r.clientWidth + 1
        || r.getBoundingClientRect().width > out.clientWidth + 1;
    }).length,
    pngs_visible: [...document.querySelectorAll('img')].filter(
      i => (i.src || '').startsWith('data:image/png') && vis(i)).length,
    static_visible: [...document.querySelectorAll('pre code')].filter(vis).length,
    white_plots: [...document.querySelectorAll('.tfprof-view .js-plotly-plot')].filter(
      g => ['#fff', '#ffffff', 'white', 'rgb(255, 255, 255)']
        .includes(g._fullLayout.paper_bgcolor)).length,
  };
}"""


def kernel_pie_and_click(page, view_index: int) -> dict:
    """The kernel pie's slices and legend entries, then a real click on its largest slice:
    the table's row count before and after."""
    root = page.locator(".tfprof-view").nth(view_index)
    root.scroll_into_view_if_needed()
    info = root.evaluate(
        "r => { const gd = r.querySelector('.js-plotly-plot');"
        " return {slices: new Set(gd.calcdata[0].map(s => s.label)).size,"
        " labels: gd.data[0].labels.length,"
        " legend: gd.querySelectorAll('.legend .traces').length,"
        " rows: +r.querySelector('.tft').dataset.rows}; }"
    )
    slice_ = root.locator(".js-plotly-plot .slice path.surface").first
    slice_.scroll_into_view_if_needed()
    slice_.click()
    page.wait_for_function(
        "(i) => { const r = document.querySelectorAll('.tfprof-view')[i];"
        f" return +r.querySelector('.tft').dataset.rows < {info['rows']}; }}",
        arg=view_index,
        timeout=10_000,
    )
    info["rows_after"] = root.evaluate("r => +r.querySelector('.tft').dataset.rows")
    info["chip"] = root.evaluate("r => r.querySelector('.tft-chip').textContent")
    return info


# -- exported notebooks ------------------------------------------------------------------------
def test_exported_notebook_draws_every_view_offline(views_notebook, shots_dir, chromium):
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    nbconvert("--to", "html", str(views_notebook))
    html = views_notebook.with_suffix(".html")
    assert html.stat().st_size < 8 * 2**20
    browser, page = offline_page(chromium)
    page.goto(html.as_uri())
    draw_everything(page)
    state = page.evaluate(PAGE_STATE)
    pie = kernel_pie_and_click(page, KERNEL_VIEW)
    page.screenshot(path=str(shots_dir / "exported_views.png"), full_page=True)
    page.set_viewport_size({"width": 700, "height": 1000})  # a narrow window
    # Seventeen plots lay out again for it: on a busy machine that takes more than a moment.
    with contextlib.suppress(PlaywrightTimeout):
        page.wait_for_function(f"() => ({PAGE_STATE})().too_wide === 0", timeout=20_000)
    narrow = page.evaluate(PAGE_STATE)
    browser.close()
    assert state["views"] == VIEWS
    assert state["plots"] >= 17
    assert state["too_wide"] == 0 and narrow["too_wide"] == 0
    assert state["pngs_visible"] == 0 and state["static_visible"] == 0  # the live views instead
    assert pie["slices"] == pie["labels"] == pie["legend"] == 11
    assert pie["rows_after"] < pie["rows"] and pie["chip"].startswith("kernel: ")


def test_sanitized_export_shows_an_image_for_every_plot(views_notebook, shots_dir, chromium):
    """nbconvert --sanitize-html escapes scripts: the PNG and the text table show instead."""
    import nbformat

    nb = nbformat.read(views_notebook, as_version=4)
    with_plots = sum(any("image/png" in o.get("data", {}) for o in c.outputs) for c in nb.cells[1:])
    assert with_plots == VIEWS  # kaleido gave every view an image
    out = views_notebook.with_name("views_sanitized.html")
    nbconvert("--to", "html", "--sanitize-html", "--output", out.name, str(views_notebook))
    text = out.read_text()
    assert "__tfprof" not in text  # no viewer script, not even as escaped text
    browser, page = offline_page(chromium)
    page.goto(out.as_uri())
    page.wait_for_timeout(1000)
    state = page.evaluate(PAGE_STATE)
    shown_text = page.evaluate("() => document.body.innerText")
    page.screenshot(path=str(shots_dir / "exported_sanitized.png"), full_page=True)
    browser.close()
    assert state["views"] == 0
    assert state["pngs_visible"] == VIEWS
    assert state["static_visible"] >= 6  # the tables as text
    assert "<div" not in shown_text and "&lt;" not in shown_text  # no markup shown as text


# -- JupyterLab ------------------------------------------------------------------------------
def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def lab_server(root: pathlib.Path, env: dict | None = None, settings: dict | None = None):
    """JupyterLab on 127.0.0.1 with a private config and data dir (so no notebook is trusted
    from before); stopped on exit. Yields the port. ``env``: more environment for the server
    and its kernels; ``settings``: JupyterLab setting overrides (plugin id -> settings)."""
    port = free_port()
    cfg = root / ".jupyter_config"
    (cfg / "labconfig").mkdir(parents=True, exist_ok=True)
    (cfg / "labconfig" / "page_config.json").write_text(
        json.dumps({"buildCheck": False, "buildAvailable": False})
    )
    data = root / ".jupyter_data"
    data.mkdir(exist_ok=True)
    if settings:
        (data / "lab" / "settings").mkdir(parents=True, exist_ok=True)
        (data / "lab" / "settings" / "overrides.json").write_text(json.dumps(settings))
    env = {
        **os.environ,
        "JUPYTER_CONFIG_DIR": str(cfg),
        "JUPYTER_DATA_DIR": str(data),
        # The kernel imports this checkout, installed or not.
        "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
        **(env or {}),
    }
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "jupyter",
            "lab",
            "--no-browser",
            "--ip",
            "127.0.0.1",
            "--port",
            str(port),
            "--ServerApp.token=",
            "--ServerApp.password=",
            "--ServerApp.port_retries=0",
            "--LabApp.expose_app_in_browser=True",
            "--allow-root",
            f"--ServerApp.root_dir={root}",
            *([f"--LabServerApp.app_settings_dir={data / 'lab' / 'settings'}"] if settings else []),
        ],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.time() + 90
        while time.time() < deadline:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                time.sleep(0.5)
        else:
            raise RuntimeError("JupyterLab did not start")
        yield port
    finally:
        proc.terminate()
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()


def open_lab_page(p, port: int, notebook: str, listen=None):
    """A Chromium page opening a JupyterLab notebook, non-loopback traffic off (``p``: see
    new_page); ``listen`` (a function of the page) attaches listeners before the page loads."""
    browser, page = new_page(p, viewport={"width": 1400, "height": 1000})
    if listen is not None:
        listen(page)
    page.route(
        "**/*",
        lambda r: (
            r.continue_()
            if "127.0.0.1" in r.request.url or r.request.url.startswith(("data:", "blob:"))
            else r.abort()
        ),
    )
    page.goto(f"http://127.0.0.1:{port}/lab/tree/{notebook}?reset")
    return browser, page


def lab_page(p, port: int, notebook: str, timeout_ms: int = 120_000):
    """A Chromium page on a JupyterLab notebook (its kernel idle), non-loopback traffic off."""
    browser, page = open_lab_page(p, port, notebook)
    page.wait_for_function(
        "() => window.jupyterapp && window.jupyterapp.shell.currentWidget && "
        "window.jupyterapp.shell.currentWidget.sessionContext && "
        "window.jupyterapp.shell.currentWidget.sessionContext.session && "
        "window.jupyterapp.shell.currentWidget.sessionContext.session.kernel && "
        "window.jupyterapp.shell.currentWidget.sessionContext.session.kernel.status"
        " === 'idle'",
        timeout=timeout_ms,
    )
    return browser, page


def run_all_cells(page, ready_js: str, timeout_ms: int = 240_000) -> None:
    """Run every cell; wait until ``ready_js`` holds in the page and the kernel is idle."""
    # Trigger run-all without awaiting it (awaiting can hang), then wait on the DOM.
    page.evaluate("() => { window.jupyterapp.commands.execute('notebook:run-all-cells'); }")
    page.wait_for_function(ready_js, timeout=timeout_ms)
    page.wait_for_function(
        "() => window.jupyterapp.shell.currentWidget.sessionContext.session.kernel.status"
        " === 'idle'",
        timeout=timeout_ms,
    )


def lab_draw_everything(page, timeout_ms: int = 60_000) -> None:
    """Scroll JupyterLab's notebook top to bottom so every output renders and draws."""
    page.evaluate(
        "async () => { const sc = document.querySelector('.jp-WindowedPanel-outer')"
        " || document.querySelector('.jp-Notebook');"
        " for (let y = 0; y < sc.scrollHeight; y += 500) { sc.scrollTop = y;"
        " await new Promise(r => setTimeout(r, 60)); } }"
    )
    page.wait_for_timeout(500)


def test_untrusted_notebook_in_jupyterlab_shows_images(
    views_notebook, tmp_path, shots_dir, jupyterlab, chromium
):
    """Opened without being trusted, JupyterLab drops the viewer scripts: every view's image
    and text show instead of an empty block."""
    shutil.copy(views_notebook, tmp_path / "views.ipynb")
    browser, page = lab_page(
        chromium, jupyterlab.port, jupyterlab.notebook(tmp_path / "views.ipynb")
    )
    trusted = page.evaluate(
        "() => window.jupyterapp.shell.currentWidget.content.model.cells.get(1).trusted"
    )
    lab_draw_everything(page)
    imgs = page.evaluate(
        "() => [...document.querySelectorAll('.jp-RenderedImage img')]"
        ".filter(i => i.naturalWidth > 100).length"
    )
    state = page.evaluate(PAGE_STATE)
    page.screenshot(path=str(shots_dir / "jupyterlab_untrusted.png"))
    browser.close()
    assert not trusted
    assert imgs == VIEWS
    assert state["views"] == 0


def test_views_live_in_jupyterlab(tmp_path, shots_dir, jupyterlab, chromium):
    """Run live: every view draws at its output's width, a pie click filters, the dark theme
    reaches every plot and table."""
    make_notebook(tmp_path / "live_views.ipynb", VIEW_CELLS)
    browser, page = lab_page(
        chromium, jupyterlab.port, jupyterlab.notebook(tmp_path / "live_views.ipynb")
    )
    run_all_cells(page, f"() => document.querySelectorAll('.tfprof-view').length >= {VIEWS}")
    lab_draw_everything(page)
    state = page.evaluate(PAGE_STATE)
    pie = kernel_pie_and_click(page, KERNEL_VIEW)
    page.screenshot(path=str(shots_dir / "jupyterlab_views_light.png"))
    page.evaluate(
        "() => window.jupyterapp.commands.execute('apputils:change-theme',"
        " {theme: 'JupyterLab Dark'})"
    )
    page.wait_for_function(
        "() => document.body.getAttribute('data-jp-theme-light') === 'false'", timeout=30_000
    )
    page.wait_for_timeout(1500)
    dark = page.evaluate(PAGE_STATE)
    table_bg = page.evaluate(
        "() => getComputedStyle(document.querySelector('.tft-head')).backgroundColor"
    )
    page.screenshot(path=str(shots_dir / "jupyterlab_views_dark.png"))
    browser.close()
    assert state["views"] == VIEWS and state["too_wide"] == 0
    assert state["pngs_visible"] == 0 and state["static_visible"] == 0
    assert pie["slices"] == pie["legend"] == 11 and pie["rows_after"] < pie["rows"]
    assert dark["white_plots"] == 0 and state["white_plots"] == state["plots"]
    r, g, b = (int(x) for x in table_bg[table_bg.index("(") + 1 : -1].split(",")[:3])
    assert max(r, g, b) < 80  # the table went dark too


def test_live_views_render_in_jupyterlab(tmp_path, jupyterlab, chromium, shots_dir):
    """Every view of the older sample set draws live; the trace viewer's live widget draws
    and its offline copy (the output after it) stands down."""
    make_notebook(tmp_path / "live.ipynb")
    browser, page = lab_page(
        chromium, jupyterlab.port, jupyterlab.notebook(tmp_path / "live.ipynb")
    )
    run_all_cells(
        page,
        f"() => document.querySelectorAll('.js-plotly-plot').length >= {EXPECTED_PLOTS}"
        " && document.querySelector('.tfpv canvas')",
    )
    page.wait_for_timeout(3000)  # past the offline copy's wait for the live widget
    n = page.locator(".js-plotly-plot").count()
    traces = page.evaluate(
        "() => [...document.querySelectorAll('.tfpv')]"
        ".filter(e => e.offsetParent || e.getClientRects().length).length"
    )
    page.screenshot(path=str(shots_dir / "jupyterlab_live.png"), full_page=False)
    browser.close()
    assert n >= EXPECTED_PLOTS
    assert traces == 1  # the live viewer; the offline copy stood down


def test_quickstart_notebook_runs_in_jupyterlab(tmp_path, jupyterlab, chromium, shots_dir):
    """The quickstart, run for real: %%tfprof captures in the Lab kernel, and the overview
    and op-stats views draw."""
    shutil.copy(ROOT / "notebooks" / "01_quickstart.ipynb", tmp_path / "quickstart.ipynb")
    browser, page = lab_page(
        chromium, jupyterlab.port, jupyterlab.notebook(tmp_path / "quickstart.ipynb")
    )
    run_all_cells(
        page,
        f"() => document.querySelectorAll('.tfprof-view').length >= "
        f"{NOTEBOOK_VIEWS['01_quickstart.ipynb']}",
        timeout_ms=400_000,
    )
    page.wait_for_timeout(1000)
    views = page.locator(".tfprof-view").count()
    errors = page.evaluate(
        "() => { const cells = window.jupyterapp.shell.currentWidget.content.model.cells;"
        " let n = 0; for (let i = 0; i < cells.length; i++) { const c = cells.get(i);"
        " if (c.type !== 'code') continue;"
        " for (let j = 0; j < c.outputs.length; j++)"
        " if (c.outputs.get(j).type === 'error') n++; } return n; }"
    )
    # The magic's status line, as the kernel last updated it (read from the model: the
    # windowed notebook does not render cells scrolled out of view).
    status = page.evaluate(
        "() => { const cells = window.jupyterapp.shell.currentWidget.content.model.cells;"
        " const out = []; for (let i = 0; i < cells.length; i++) { const c = cells.get(i);"
        " if (c.type !== 'code') continue;"
        " for (let j = 0; j < c.outputs.length; j++) { const d = c.outputs.get(j).data;"
        " if (d && typeof d['text/plain'] === 'string') out.push(d['text/plain']); } }"
        " return out; }"
    )
    page.screenshot(path=str(shots_dir / "quickstart_lab_end.png"), full_page=False)
    browser.close()
    assert views >= NOTEBOOK_VIEWS["01_quickstart.ipynb"]
    assert errors == 0  # no traceback in any output (an assert failing would show one)
    assert any("captured" in s and "16 steps" in s for s in status), status


# Views each committed notebook shows: 01 overview + op stats; 02 overview + compare; 03
# memory + tf.data graph; 04 overview + pod viewer + kernel stats + timeline; 05 overview; 06
# overview + input pipeline + the Kineto trace's timeline (the run of tool data only has no trace:
# its timeline is a note); 07 overview + operators + op stats + kernel stats + memory + timeline;
# 08 overview + op stats + HLO op profile + roofline + kernel stats +
# timeline.
# 09 the job view of two ranks + the job view of the BERT capture's GPUs.
NOTEBOOK_VIEWS = {
    "01_quickstart.ipynb": 2,
    "02_input_bound.ipynb": 2,
    "03_memory_and_tf_data.ipynb": 2,
    "04_gpu_capture_tour.ipynb": 4,
    "05_tf1_tfprof.ipynb": 1,
    "06_old_logdirs_and_other_profilers.ipynb": 3,
    "07_pytorch_transformer.ipynb": 6,
    "08_jax_gpu_capture.ipynb": 9,
    "09_distributed_job.ipynb": 2,
}


def test_committed_notebooks_export_with_every_view_offline(tmp_path, shots_dir, chromium):
    names = sorted(p.name for p in (ROOT / "notebooks").glob("*.ipynb"))
    assert names == sorted(NOTEBOOK_VIEWS)
    for name in names:
        assert (ROOT / "notebooks" / name).stat().st_size < 8 * 2**20
        shutil.copy(ROOT / "notebooks" / name, tmp_path / name)
    # One nbconvert for the eight: each run of it spends seconds starting before it converts.
    nbconvert("--to", "html", *names, cwd=tmp_path)
    browser, page = offline_page(chromium)
    for name in names:
        page.goto((tmp_path / name.replace(".ipynb", ".html")).as_uri())
        draw_everything(page)
        state = page.evaluate(PAGE_STATE)
        page.screenshot(
            path=str(shots_dir / name.replace(".ipynb", "_exported.png")), full_page=True
        )
        assert state["views"] == NOTEBOOK_VIEWS[name], name
        assert state["too_wide"] == 0, name
    browser.close()


# -- the report --------------------------------------------------------------------------------
def test_report_of_the_gpu_capture_offline(report_of, shots_dir, chromium):
    out = report_of(GPU)
    text = out.read_text()
    # plotly.js (1.2 MB) once, and the zoomable trace of the slowest step (at most 0.8 MB).
    assert out.stat().st_size <= 3_000_000
    assert text.count("plotly.js (basic - minified) v") == 1  # embedded exactly once
    assert "<title>TensorFlow profile: bert_8gpu_multi_worker.xplane.pb</title>" in text
    browser, page = offline_page(chromium)
    page.goto(out.as_uri())
    draw_everything(page)
    state = page.evaluate(PAGE_STATE)
    kernels = page.evaluate(
        "() => [...document.querySelectorAll('.tfprof-view')]"
        ".findIndex(r => r.closest('section').id === 'kernels')"
    )
    pie = kernel_pie_and_click(page, kernels)
    page.screenshot(path=str(shots_dir / "report_gpu.png"), full_page=True)
    browser.close()
    browser, page = offline_page(chromium, color_scheme="dark")
    page.goto(out.as_uri())
    draw_everything(page)
    dark = page.evaluate(PAGE_STATE)
    bg = page.evaluate("() => getComputedStyle(document.body).backgroundColor")
    page.screenshot(path=str(shots_dir / "report_gpu_dark.png"), full_page=True)
    browser.close()
    # overview, timeline, op stats, input pipeline, memory, tf.data, kernel stats
    assert state["views"] == 7 and state["too_wide"] == 0
    assert pie["slices"] == pie["legend"] == 11 and pie["rows_after"] < pie["rows"]
    assert dark["white_plots"] == 0 and bg == "rgb(30, 30, 30)"


def test_report_of_two_hosts_has_the_pod_viewer(report_of, chromium):
    out = report_of(TWO_HOSTS)
    assert "<title>TensorFlow profile: gpu_shaped</title>" in out.read_text()
    browser, page = offline_page(chromium, viewport={"width": 800, "height": 1000})
    page.goto(out.as_uri())
    draw_everything(page)
    state = page.evaluate(PAGE_STATE)
    sections = page.evaluate("() => [...document.querySelectorAll('section')].map(s => s.id)")
    browser.close()
    assert "pod_viewer" in sections
    assert state["views"] == len(sections) and state["too_wide"] == 0
