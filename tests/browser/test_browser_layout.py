"""Issue 29 item 8, in a real browser (Chromium, network off) at 700 and 1400 px (and 480,
JupyterLab beside a side panel, where main's memory title and legend overlapped): no plot of
the overview, op stats, kernel stats, memory and compare views is wider than its view, no
plot's title and legend overlap, and the pies of a view with few ops take little room (no
single-slice 100 % donut; the legend under a narrow pie has one row per slice, not eleven).

The views are put in one page as a report puts them (their HTML and the viewer script once).
Needs Debian's Chromium (/usr/bin/chromium) and playwright; skipped where missing, except in
CI.
"""

from __future__ import annotations

import itertools
import os
import shutil

import pytest
from conftest import ROOT, SAMPLES

import tfprof_widgets as tw
from tfprof_widgets.report import PAGE_CSS
from tfprof_widgets.views._pies import HEIGHT, LEGEND_ROW_PX
from tfprof_widgets.views.page.display import lib_script

CHROMIUM = "/usr/bin/chromium"
_AVAILABLE = (
    os.path.exists(CHROMIUM) and __import__("importlib").util.find_spec("playwright") is not None
)
pytestmark = pytest.mark.skipif(
    not _AVAILABLE and os.environ.get("CI") != "true", reason="needs /usr/bin/chromium, playwright"
)
JAX = ROOT / "tests" / "data" / "xplane_h100_jax" / "jax_cnn_nographs.xplane.pb"
BERT = ROOT / "tests" / "data" / "bert_8gpu_multi_worker.xplane.pb"


@pytest.fixture(scope="module")
def page_file(tmp_path_factory):
    jax, two, bert = tw.load(JAX), tw.load(SAMPLES / "gpu_shaped"), tw.load(BERT)
    views = {
        "overview_two_hosts": tw.views.overview(two),  # 7 categories: a legend that wraps
        "op_stats_two_hosts": tw.views.op_stats(two),  # 3 ops, 2 op types per side
        "kernels_two_hosts": tw.views.kernel_stats(two),
        "op_stats_jax": tw.views.op_stats(jax),
        "kernels_jax": tw.views.kernel_stats(jax),
        "memory_jax": tw.views.memory_timeline(jax),
        "memory_bert": tw.views.memory_timeline(bert),
        "compare": tw.views.compare(two, jax),
    }
    body = "".join(f'<section id="{k}">{v.html()}</section>' for k, v in views.items())
    html = (
        "<!doctype html><html><head><meta charset='utf-8'>"
        f"<style>{PAGE_CSS}</style></head><body data-tfprof-page=''><main>{body}</main>"
        f"{lib_script()}<script>window.__tfprof.mountAll(document);</script></body></html>"
    )
    out = tmp_path_factory.mktemp("layout") / "views.html"
    out.write_text(html, encoding="utf-8")
    yield out
    shutil.rmtree(out.parent, ignore_errors=True)


# Per plot: its view, the plot's box, its view's box, title and legend boxes (null where the
# plot has none), and whether it is a pie of a row of pies (and that row's height).
LAYOUT = """() => {
  const box = (e) => { if (!e) return null; const r = e.getBoundingClientRect();
    return r.width && r.height ? {l: r.left, t: r.top, r: r.right, b: r.bottom} : null; };
  return [...document.querySelectorAll('.js-plotly-plot')].map((gd) => {
    const view = gd.closest('.tfprof-view'), row = gd.closest('.tfprof-figs.tf-row');
    return {
      section: gd.closest('section').id,
      plot: box(gd.querySelector('.main-svg')), view: box(view),
      view_overflows: view.scrollWidth > view.clientWidth + 1,
      title: box(gd.querySelector('.g-gtitle .gtitle')),
      legend: box(gd.querySelector('.legend')),
      pie: !!gd.querySelector('.pielayer .slice'),
      slices: gd.querySelectorAll('.pielayer .slice').length,
      row_height: row ? row.getBoundingClientRect().height : 0,
      row_pies: row ? row.querySelectorAll('.js-plotly-plot').length : 0,
    };
  });
}"""


def _overlap(a, b) -> bool:
    return (
        bool(a and b)
        and a["l"] < b["r"]
        and b["l"] < a["r"]
        and a["t"] < b["b"]
        and b["t"] < a["b"]
    )


@pytest.mark.parametrize("width", [480, 700, 1400])
def test_nothing_clipped_or_overlapping(page_file, width, chromium):
    context = chromium.new_context(viewport={"width": width, "height": 900})  # conftest's
    page = context.new_page()
    page.route(
        "**/*",
        lambda r: r.continue_() if r.request.url.startswith(("file:", "data:")) else r.abort(),
    )
    page.goto(page_file.as_uri())
    page.wait_for_function("() => window.__tfprof !== undefined", timeout=60_000)
    page.evaluate(  # views out of sight draw when scrolled to
        "async () => { const h = document.documentElement.scrollHeight;"
        " for (let y = 0; y < h; y += 600) { window.scrollTo(0, y);"
        " await new Promise(r => setTimeout(r, 30)); } window.scrollTo(0, 0); }"
    )
    page.wait_for_function(
        "() => [...document.querySelectorAll('.tfprof-root')].every(r => r.dataset.drawnMs)",
        timeout=60_000,
    )
    plots = page.evaluate(LAYOUT)
    context.close()
    sections = {p["section"] for p in plots}
    assert sections >= {"overview_two_hosts", "op_stats_two_hosts", "kernels_jax", "memory_jax"}
    for p in plots:
        where = (p["section"], width)
        assert not p["view_overflows"], where
        assert p["plot"]["l"] >= p["view"]["l"] - 1 and p["plot"]["r"] <= p["view"]["r"] + 1, where
        assert not _overlap(p["title"], p["legend"]), (where, p["title"], p["legend"])
        if p["pie"]:
            assert p["slices"] >= 2, where  # no single-slice 100 % donut
            # The row of pies: at most two rows of them (two pies a row from 1400 px), each
            # as tall as the pie and one legend row per slice of the fullest pie (11 at most).
            per_row = 1 if width < 900 else 2
            rows = -(-p["row_pies"] // per_row)
            fullest = max(q["slices"] for q in plots if q["section"] == p["section"] and q["pie"])
            bound = rows * (HEIGHT + LEGEND_ROW_PX * fullest + 10 + 4)
            assert p["row_height"] <= bound + 2, (where, p["row_height"], bound)
    # The two-host sample has 3 ops: its four pies (host and device, by op and by type) of
    # 2-3 slices each fit in 1,510 px at 700 px and in 760 px at 1400 (2,164 / 1,082 before).
    ops = [p for p in plots if p["section"] == "op_stats_two_hosts"]
    assert len(ops) == 4
    if width >= 700:
        assert ops[0]["row_height"] <= (1510 if width == 700 else 760)


PIE_POINT = """(i) => {
  // Pie i scrolled into sight; a point inside its first slice (the largest: slices go
  // clockwise from 12 o'clock) and the full name that slice stands for.
  const gd = [...document.querySelectorAll('.js-plotly-plot')]
    .filter((g) => g.querySelector('.pielayer .slice'))[i];
  if (!gd) return null;
  gd.scrollIntoView({block: 'center'});
  const pie = gd.querySelector('.pielayer .trace').getBoundingClientRect();
  const cx = (pie.left + pie.right) / 2, cy = (pie.top + pie.bottom) / 2;
  const [mx, my] = gd.calcdata[0][0].pxmid;  // the slice's middle at the rim
  return {section: gd.closest('section').id, x: cx + 0.8 * mx, y: cy + 0.8 * my,
          name: gd.data[0].customdata[0][1]};
}"""


def test_pie_hover_names_the_slice(tmp_path, chromium):
    """Issue 36 item 11: every pie's hover read "-" instead of the op or kernel name (plotly.js
    reads a pie's 2-D customdata by the slice's list of points, so %{customdata[1]} was
    undefined), live and in exported HTML alike. Hovering each pie's first slice of a PyTorch
    run's op stats and kernel stats now shows its full name."""
    run = tw.load(ROOT / "tests" / "data" / "chrome" / "resnet50_v100_workers0.pt.trace.json.gz")
    views = {"op_stats": tw.views.op_stats(run), "kernels": tw.views.kernel_stats(run)}
    body = "".join(f'<section id="{k}">{v.html()}</section>' for k, v in views.items())
    page_html = tmp_path / "pies.html"
    page_html.write_text(
        "<!doctype html><html><head><meta charset='utf-8'>"
        f"<style>{PAGE_CSS}</style></head><body data-tfprof-page=''><main>{body}</main>"
        f"{lib_script()}<script>window.__tfprof.mountAll(document);</script></body></html>",
        encoding="utf-8",
    )
    context, page = _open_drawn(chromium, page_html, 1400)
    seen = []
    for i in range(12):
        t = page.evaluate(PIE_POINT, i)
        if t is None:
            break
        page.wait_for_timeout(100)
        page.mouse.move(t["x"], t["y"], steps=4)
        page.wait_for_timeout(300)
        page.mouse.move(t["x"] + 2, t["y"] + 2, steps=2)  # plotly hovers on a move inside
        page.wait_for_function(
            "() => !!document.querySelector('.hoverlayer .hovertext')", timeout=5_000
        )
        text = page.eval_on_selector(".hoverlayer .hovertext", "e => e.textContent")
        seen.append((t["section"], text))
        assert not text.startswith("-"), (t["section"], text)
        assert t["name"] and text.startswith(t["name"][:40]), (t["section"], text, t["name"])
        page.mouse.move(1, 1)
        page.wait_for_timeout(100)
    assert len(seen) >= 3 and {s for s, _ in seen} == {"op_stats", "kernels"}, seen
    context.close()
    tmp_path.joinpath("pies.html").unlink()


# Per plot: its legend's box, whether the legend scrolls, the plot area's box, the texts drawn
# in the plot (annotations and point labels); per table: whether it overflows its box and
# which header cells overflow theirs (a word broken or cut).
FIT = """() => {
  const box = (e) => { if (!e) return null; const r = e.getBoundingClientRect();
    return r.width && r.height ? {l: r.left, t: r.top, r: r.right, b: r.bottom} : null; };
  const plots = [...document.querySelectorAll('.js-plotly-plot')].map((gd) => ({
    section: gd.closest('section').id,
    view: box(gd.closest('.tfprof-view')),
    area: box(gd.querySelector('.nsewdrag')),
    legend: box(gd.querySelector('.legend')),
    legend_scrolls: !!gd.querySelector('.legend .scrollbar') &&
      gd.querySelector('.legend .scrollbar').getBoundingClientRect().height > 0,
    legend_items: [...gd.querySelectorAll('.legend .traces')].map((e) => [e.textContent, box(e)]),
    texts: [...gd.querySelectorAll('.textpoint text, .annotation-text')].map(box).filter(Boolean),
    svg: box(gd.querySelector('.main-svg')),
  }));
  const tables = [...document.querySelectorAll('.tft')].map((t) => {
    const s = t.querySelector('.tft-scroll');
    return {
      section: t.closest('section').id, table: t.dataset.table,
      overflows: s.scrollWidth > s.clientWidth + 1,
      broken_headers: [...t.querySelectorAll('.tft-head>div')]
        .filter((h) => h.scrollWidth > h.clientWidth + 1).map((h) => h.textContent),
    };
  });
  return {plots, tables};
}"""


@pytest.fixture(scope="module")
def trust_page(tmp_path_factory):
    """Issue 36 item 17's views: a PyTorch run's operators, kernels and input pipeline, the JAX
    H100 roofline and memory, and the input-bound sample's tf.data graph."""
    torch = tw.load(ROOT / "tests" / "data" / "chrome" / "resnet50_v100_workers0.pt.trace.json.gz")
    jax = tw.load(JAX)
    views = {
        "operators": tw.views.operators(torch),
        "kernels_torch": tw.views.kernel_stats(torch),
        "input_torch": tw.views.input_pipeline(torch),
        "roofline_jax": tw.views.roofline(jax),
        "memory_jax": tw.views.memory_timeline(jax),
        "tf_data": tw.views.tf_data_graph(tw.load(SAMPLES / "input_bound")),
    }
    body = "".join(f'<section id="{k}">{v.html()}</section>' for k, v in views.items())
    out = tmp_path_factory.mktemp("trust") / "views.html"
    out.write_text(
        "<!doctype html><html><head><meta charset='utf-8'>"
        f"<style>{PAGE_CSS}</style></head><body data-tfprof-page=''><main>{body}</main>"
        f"{lib_script()}<script>window.__tfprof.mountAll(document);</script></body></html>",
        encoding="utf-8",
    )
    yield out
    shutil.rmtree(out.parent, ignore_errors=True)


def _inside(a, b, slack: float = 1) -> bool:
    return (
        a["l"] >= b["l"] - slack
        and a["r"] <= b["r"] + slack
        and a["t"] >= b["t"] - slack
        and a["b"] <= b["b"] + slack
    )


@pytest.mark.parametrize("width", [350, 450, 700, 1050, 1400])
def test_views_fit_their_width(trust_page, width, chromium):
    """Issue 36 item 17: the operators' step-time legend scrolled and hid Kernel, its
    largest entry; in a 1,050 px panel the kernels' last (name) column ran past the table's
    edge, cut without an ellipsis, and headers broke inside words ("boun d by"); at 350-600
    px the roofline's legend took half the plot (~100 px of points, drawn under the legend),
    titles were cut, and the memory view's peak label was cut at the edge ("ntation at the
    peak"), and the tf.data graph's iterator names ran into each other."""
    context, page = _open_drawn(chromium, trust_page, width)
    page.wait_for_timeout(200)
    found = page.evaluate(FIT)
    context.close()
    plots, tables = found["plots"], found["tables"]
    assert {p["section"] for p in plots} >= {"operators", "roofline_jax", "memory_jax"}
    for p in plots:
        where = (p["section"], width)
        assert not p["legend_scrolls"], where
        for name, item in p["legend_items"]:
            assert item and _inside(item, p["svg"]), (where, name)  # every entry in sight
        if p["area"] and p["legend"] and p["section"] != "tf_data":
            assert not _overlap(p["area"], p["legend"]), (where, p["area"], p["legend"])
        for text in p["texts"]:
            assert _inside(text, p["svg"], slack=2), (where, text, p["svg"])
        if p["section"] == "tf_data":  # the iterators' names apart
            for a, b in itertools.combinations(p["texts"], 2):
                assert not _overlap(a, b), (where, a, b)
    steps = next(p for p in plots if p["section"] == "operators" and p["legend_items"])
    assert any(name.strip() == "Kernel" for name, _ in steps["legend_items"])
    roof = next(p for p in plots if p["section"] == "roofline_jax")
    view_w = roof["view"]["r"] - roof["view"]["l"]
    assert roof["area"]["r"] - roof["area"]["l"] >= 0.6 * view_w, (width, roof["area"])
    for t in tables:
        where = (t["section"], t["table"], width)
        assert not t["broken_headers"], (where, t["broken_headers"])
        if width >= 1050:
            assert not t["overflows"], where


def _open_drawn(chromium, path, width: int):
    """The offline page at ``path`` in a new context ``width`` px wide, outside requests
    refused, scrolled through (a view out of sight draws when near) until every view drew."""
    context = chromium.new_context(viewport={"width": width, "height": 900})
    page = context.new_page()
    page.route(
        "**/*",
        lambda r: r.continue_() if r.request.url.startswith(("file:", "data:")) else r.abort(),
    )
    page.goto(path.as_uri())
    page.wait_for_function("() => window.__tfprof !== undefined", timeout=60_000)
    page.evaluate(
        "async () => { const h = document.documentElement.scrollHeight;"
        " for (let y = 0; y < h; y += 600) { window.scrollTo(0, y);"
        " await new Promise(r => setTimeout(r, 30)); } window.scrollTo(0, 0); }"
    )
    page.wait_for_function(
        "() => [...document.querySelectorAll('.tfprof-root')].every(r => r.dataset.drawnMs)",
        timeout=60_000,
    )
    return context, page
