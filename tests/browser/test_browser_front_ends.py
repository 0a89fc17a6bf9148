"""Views in every notebook front end, emulated offline in Debian's Chromium from executed
notebooks of eight views (issue 39):

* **Colab**: each cell's outputs on a page of their own (its output frame), and the stricter
  case of a page per output; every ``application/javascript`` output evaluated as Colab does
  (no ``element``; ``google.colab.output.getActiveOutputArea()`` gives the cell's output area),
  ``text/html`` with its scripts run. The notebook is executed in a Colab-shaped kernel
  (``google.colab`` and ``google.colab.output`` imported, no ``cellId`` in the requests of
  nbclient): every view carries the viewer, packed, and draws in its own output;
* the same pages from a notebook executed elsewhere (one copy of the viewer, in the first
  view's output): the first view draws, every other one shows its image and text and one line
  saying why it cannot draw and what to do;
* **VS Code**: one page, every output in it, each script wrapped as
  ``microsoft/vscode-notebook-renderers``' ``javascriptRenderer.ts`` wraps it (``element`` a
  jQuery-wrapped node; Debian's jQuery);
* **nbconvert HTML** and **sanitized HTML** (``--sanitize-html``: the PNG and text only) of
  both notebooks.

Every view that draws hides its image and text. Sizes of both notebooks are printed.
Chromium is the session's (tests/conftest.py); no server is started here.
"""

import json
import os
import pathlib

import nbformat
import pytest
from conftest import ROOT
from test_browser import _AVAILABLE, execute, make_notebook, nbconvert, offline_page

pytestmark = pytest.mark.skipif(
    not _AVAILABLE and os.environ.get("CI") != "true",
    reason="needs /usr/bin/chromium, playwright and jupyter",
)

JQUERY = pathlib.Path("/usr/share/javascript/jquery/jquery.min.js")
RUN = ROOT / "sample_profiles" / "gpu_shaped"
INPUT_BOUND = ROOT / "sample_profiles" / "input_bound"
LOAD = (
    f"import tfprof_widgets as tw\nrun = tw.load({str(RUN)!r})\nib = tw.load({str(INPUT_BOUND)!r})"
)
# The eight views; the trace viewer (its own canvas viewer, no plotly) is the last.
VIEW_CELLS = [
    "tw.views.overview(run)",
    "tw.views.op_stats(run)",
    "tw.views.kernel_stats(run)",
    "tw.views.memory_timeline(run)",
    "tw.views.pod_viewer(run)",
    "tw.views.input_pipeline(ib)",
    "tw.views.tf_data_graph(ib)",
    "tw.views.timeline(run)",
]
PLOTLY_VIEWS = len(VIEW_CELLS) - 1
# What Colab's kernel has imported: google.colab, and google.colab.output with the custom
# widget manager that anywidget turns on (recorded here).
FAKE_COLAB = """import sys, types
colab = types.ModuleType("google.colab")
output = types.ModuleType("google.colab.output")
output.enabled = []
output.enable_custom_widget_manager = lambda: output.enabled.append(True)
output._widgets = types.SimpleNamespace(_installed_url="https://colab.invalid/manager.min.js")
colab.output = output
sys.modules["google.colab"] = colab
sys.modules["google.colab.output"] = output"""
PLAIN = "plotly.js (basic - minified) v"


def _executed(path: pathlib.Path, colab: bool) -> pathlib.Path:
    cells = ([FAKE_COLAB] if colab else []) + [LOAD, *VIEW_CELLS]
    if colab:
        cells.append("sorted(k for k in sys.modules if k.startswith('google.colab')), "
                     "output.enabled")  # fmt: skip
    make_notebook(path, cells)
    execute(path)
    return path


@pytest.fixture(scope="module")
def notebooks(tmp_path_factory) -> dict[str, pathlib.Path]:
    """The eight views executed in a plain kernel ("once") and in a Colab-shaped one."""
    d = tmp_path_factory.mktemp("front_ends")
    out = {"once": _executed(d / "once.ipynb", False), "colab": _executed(d / "colab.ipynb", True)}
    for name, p in out.items():
        print(f"\n{name}: {p.stat().st_size:,} bytes")
    return out


def view_outputs(nb_path: pathlib.Path) -> list[list[dict]]:
    """The outputs of each view's cell."""
    nb = nbformat.read(nb_path, as_version=4)
    cells = [c for c in nb.cells if c.cell_type == "code"]
    first = next(i for i, c in enumerate(cells) if c.source.startswith("tw.views."))
    return [c.outputs for c in cells[first : first + len(VIEW_CELLS)]]


# -- emulated pages ---------------------------------------------------------------------------
def _items(outputs: list[dict]) -> list[dict]:
    """What each output shows, picked as a notebook front end picks (scripts first)."""
    items = []
    for o in outputs:
        data = o.get("data", {})
        if o.get("output_type") == "stream":
            items.append({"kind": "text", "text": o["text"]})
        elif "application/javascript" in data:
            items.append({"kind": "js", "js": data["application/javascript"]})
        elif "application/vnd.jupyter.widget-view+json" in data:
            items.append({"kind": "widget"})  # no kernel, no widget manager: nothing
        elif "text/html" in data:
            items.append({"kind": "html", "html": data["text/html"]})
        elif "image/png" in data:
            items.append({"kind": "png", "png": data["image/png"]})
        else:
            items.append({"kind": "text", "text": data.get("text/plain", "")})
    return items


# How a front end shows an output that is not a script: an image, HTML (its scripts run where
# ``run_scripts``), text.
SHOW = """function show(out, it, runScripts) {
  if (it.kind === "png") {
    const i = document.createElement("img");
    i.src = "data:image/png;base64," + it.png;
    out.appendChild(i);
  } else if (it.kind === "html") {
    out.innerHTML = it.html;
    if (runScripts) for (const s of out.querySelectorAll("script")) {
      const n = document.createElement("script");
      n.textContent = s.textContent;
      s.replaceWith(n);
    }
  } else if (it.kind === "text") {
    const p = document.createElement("pre");
    p.textContent = it.text;
    out.appendChild(p);
  }
}"""

# Colab's output frame: each output appended to the cell's output area in turn; scripts of
# application/javascript evaluated with no `element` and no node of their own (what they draw
# goes into the active output area), those of text/html run.
COLAB_PAGE = (
    """<!doctype html><html><head><meta charset="utf-8"></head><body>
<div id="output-area"></div>
<script>
const area = document.getElementById("output-area");
window.google = {colab: {output: {getActiveOutputArea: () => area}}};
const items = JSON.parse(document.getElementById("items").textContent);
"""
    + SHOW
    + """
for (const it of items) {
  // A script output adds no node of its own: what it draws goes where it puts it.
  if (it.kind === "js") { (0, eval)(it.js); continue; }
  const out = document.createElement("div");
  out.className = "output";
  area.appendChild(out);
  show(out, it, true);
}
</script></body></html>"""
)

# VS Code's webview: every output of the notebook in one page; a script runs wrapped as
# javascriptRenderer.ts wraps it.
VSCODE_PAGE = (
    """<!doctype html><html><head><meta charset="utf-8">
<script src="JQUERY"></script></head><body><div id="container"></div>
<script>
const cells = JSON.parse(document.getElementById("items").textContent);
const container = document.getElementById("container");
"""
    + SHOW
    + """
cells.forEach((items, c) => {
  const cell = document.createElement("div");
  cell.className = "cell_container";
  container.appendChild(cell);
  items.forEach((it, k) => {
    const box = document.createElement("div"), out = document.createElement("div");
    box.className = "output_container"; out.className = "output"; out.id = `out-${c}-${k}`;
    box.appendChild(out); cell.appendChild(box);
    if (it.kind !== "js") { show(out, it, false); return; }
    const wrapped = `(function(){ const context = {outputs: [{metadata: {}, data: {}}]};
      const ele = $(document.getElementById("${out.id}"));
      (function (element) {\n${it.js}\n}).call(context, ele); })();`;
    const s = document.createElement("script");
    s.textContent = wrapped;
    out.appendChild(s);
  });
});
</script></body></html>"""
)


def _page(template: str, items, path: pathlib.Path) -> pathlib.Path:
    data = json.dumps(items).replace("</", "<\\/")
    doc = template.replace("JQUERY", JQUERY.as_uri()).replace(
        "<body>", f'<body><script type="application/json" id="items">{data}</script>', 1
    )
    path.write_text(doc, encoding="utf-8")
    return path


# What one page shows: views drawn (with plots), and the images, text and notes left visible.
STATE = """() => {
  const vis = (e) => !!(e.offsetParent || e.getClientRects().length);
  const views = [...document.querySelectorAll('.tfprof-view')];
  return {
    drawn: views.filter(v => v.dataset.drawnMs || v.querySelector('.tfpv, canvas')).length,
    plots: document.querySelectorAll('.tfprof-view .js-plotly-plot').length,
    trace: document.querySelectorAll('.tfprof-view canvas').length,
    pngs: [...document.querySelectorAll('img')].filter(vis).length,
    statics: [...document.querySelectorAll('.tfprof-static')].filter(vis).length,
    notes: [...document.querySelectorAll('.tfprof-missing')].map(n => n.textContent),
  };
}"""
DRAWN = (
    "() => document.querySelector('.tfprof-missing') || ("
    "[...document.querySelectorAll('.tfprof-view')].some(v => v.querySelector('canvas'))) || ("
    "document.querySelectorAll('.tfprof-view').length && [...document.querySelectorAll("
    "'.tfprof-view')].every(v => v.dataset.drawnMs))"
)


def _open(chromium, path: pathlib.Path, timeout_ms: int = 60_000) -> dict:
    browser, page = offline_page(chromium)
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(path.as_uri())
    page.wait_for_function(DRAWN, timeout=timeout_ms)
    page.wait_for_timeout(300)
    state = page.evaluate(STATE)
    browser.close()
    state["errors"] = errors
    return state


# -- Colab -----------------------------------------------------------------------------------
def test_colab_page_per_cell_draws_every_view_in_its_own_output(notebooks, tmp_path, chromium):
    cells = view_outputs(notebooks["colab"])
    states = [
        _open(chromium, _page(COLAB_PAGE, _items(outs), tmp_path / f"cell{i}.html"))
        for i, outs in enumerate(cells)
    ]
    for i, s in enumerate(states):
        assert s["drawn"] == 1 and not s["notes"] and not s["errors"], (VIEW_CELLS[i], s)
        assert s["pngs"] == 0 and s["statics"] == 0, (VIEW_CELLS[i], s)  # fallbacks hidden
    assert all(s["plots"] >= 1 for s in states[:PLOTLY_VIEWS]), states
    assert states[-1]["trace"] >= 1  # the trace viewer's offline copy, no live widget here


def test_colab_page_per_output_draws_every_view(notebooks, tmp_path, chromium):
    """The stricter isolation: each script output on a page of its own still draws."""
    scripts = [
        [it for it in _items(outs) if it["kind"] == "js"]
        for outs in view_outputs(notebooks["colab"])
    ]
    assert all(len(s) == 1 for s in scripts)
    for i, items in enumerate(scripts):
        s = _open(chromium, _page(COLAB_PAGE, items, tmp_path / f"out{i}.html"))
        assert s["drawn"] == 1 and not s["notes"] and not s["errors"], (VIEW_CELLS[i], s)


def test_colab_shaped_kernel_enables_the_widget_manager_and_embeds_each_view(notebooks):
    nb = nbformat.read(notebooks["colab"], as_version=4)
    last = nb.cells[-1].outputs[0]["data"]["text/plain"]
    assert "'google.colab.output'" in last and last.rstrip().endswith("[True])")  # anywidget
    scripts = [
        o["data"]["application/javascript"]
        for outs in view_outputs(notebooks["colab"])[:PLOTLY_VIEWS]
        for o in outs
        if "application/javascript" in o.get("data", {})
    ]
    assert len(scripts) == PLOTLY_VIEWS
    # Packed in each (0.55 MB, not the 1.24 MB script), and no load() output carries it.
    assert all("window.__tfprofUnpacking = true" in s and PLAIN not in s for s in scripts)
    assert all(len(s) < 700_000 + 400_000 for s in scripts)
    assert "__tfprof" not in json.dumps([c.outputs for c in nb.cells[:2]])


def test_once_per_notebook_outputs_say_why_they_cannot_draw_in_colab(notebooks, tmp_path, chromium):
    """A notebook executed where outputs share a page, opened in Colab's frames: the view that
    carries the viewer draws; the others keep their image and text and say what to do."""
    cells = view_outputs(notebooks["once"])
    states = [
        _open(chromium, _page(COLAB_PAGE, _items(outs), tmp_path / f"cell{i}.html"), 30_000)
        for i, outs in enumerate(cells[:3])
    ]
    assert states[0]["drawn"] == 1 and not states[0]["notes"]
    for s in states[1:]:
        assert s["drawn"] == 0 and len(s["notes"]) == 1, s
        assert "TFPROF_WIDGETS_EMBED" in s["notes"][0] and s["pngs"] == 1 and s["statics"] == 1


# -- VS Code ----------------------------------------------------------------------------------
@pytest.mark.parametrize("mode", ["once", "colab"])
def test_vscode_webview_draws_every_view(notebooks, mode, tmp_path, chromium):
    if not JQUERY.exists():
        pytest.skip("Debian's jQuery (libjs-jquery) is not here")
    items = [_items(outs) for outs in view_outputs(notebooks[mode])]
    page_path = _page(VSCODE_PAGE, items, tmp_path / "vscode.html")
    browser, page = offline_page(chromium)
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(page_path.as_uri())
    page.evaluate(
        "async () => { for (let y = 0; y < document.body.scrollHeight; y += 600) {"
        " window.scrollTo(0, y); await new Promise(r => setTimeout(r, 40)); } }"
    )
    page.wait_for_function(
        f"() => [...document.querySelectorAll('.tfprof-view')].filter(v => v.dataset.drawnMs)"
        f".length >= {PLOTLY_VIEWS} && document.querySelector('.tfprof-view canvas')",
        timeout=90_000,
    )
    state = page.evaluate(STATE)
    browser.close()
    assert not errors, errors
    assert state["drawn"] == len(VIEW_CELLS) and not state["notes"], state
    assert state["pngs"] == 0 and state["statics"] == 0, state


# -- exports -----------------------------------------------------------------------------------
@pytest.mark.parametrize("mode", ["once", "colab"])
def test_nbconvert_html_draws_and_sanitized_html_shows_images(notebooks, mode, chromium):
    from test_browser import draw_everything

    nb = notebooks[mode]
    nbconvert("--to", "html", "--output", f"{mode}_plain.html", str(nb))
    nbconvert("--to", "html", "--sanitize-html", "--output", f"{mode}_clean.html", str(nb))
    plain, clean = nb.with_name(f"{mode}_plain.html"), nb.with_name(f"{mode}_clean.html")
    print(f"\n{mode}: html {plain.stat().st_size:,} bytes, sanitized {clean.stat().st_size:,}")
    browser, page = offline_page(chromium)
    page.goto(plain.as_uri())
    draw_everything(page)
    page.wait_for_function("() => document.querySelector('.tfprof-view canvas')", timeout=30_000)
    state = page.evaluate(STATE)
    page.goto(clean.as_uri())
    page.wait_for_timeout(500)
    sanitized = page.evaluate(STATE)
    browser.close()
    assert state["drawn"] == len(VIEW_CELLS) and state["plots"] >= PLOTLY_VIEWS, state
    assert state["pngs"] == 0 and not state["notes"], state
    assert sanitized["drawn"] == 0 and sanitized["pngs"] == len(VIEW_CELLS), sanitized
    assert "__tfprof" not in clean.read_text()


def test_notebook_sizes(notebooks):
    """One plain copy of the viewer in the notebook executed elsewhere; a packed copy in each
    of the Colab one's seven plotly views (no plain copy)."""
    once = notebooks["once"].read_text()
    colab = notebooks["colab"].read_text()
    assert once.count(PLAIN) == 1 and colab.count(PLAIN) == 0
    assert colab.count("window.__tfprofUnpacking = true") == PLOTLY_VIEWS
    assert len(colab) - len(once) < PLOTLY_VIEWS * 600_000
