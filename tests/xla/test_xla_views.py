"""The XLA views (issue 27 item 3): tw.views.hlo_op_profile (XProf's op profile tree) and
tw.views.roofline (device roofs and a point per HLO op), without a browser: what they send
equals run.op_profile / run.roofline, a point's click filters the op table, the report of an
XLA run has both sections and a TF run has neither, empty runs say what is missing."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest
from conftest import ROOT, SAMPLES

import tfprof_widgets as tw
from tfprof_widgets import report

NOGRAPHS = ROOT / "tests" / "data" / "xplane_h100_jax" / "jax_cnn_nographs.xplane.pb"


@pytest.fixture(scope="module")
def jax():
    if not NOGRAPHS.exists():
        pytest.skip(f"{NOGRAPHS} is absent")
    return tw.load(NOGRAPHS, progress=False)


@pytest.fixture(scope="module")
def tf_run():
    return tw.load(SAMPLES / "keras_fit")


def payload(view) -> dict:
    return json.loads(view.payload_json())


def decode(col):
    """What the viewer's decodeColumn does (plain lists and dictionary-coded columns)."""
    if isinstance(col, dict) and "cats" in col:
        return [None if c < 0 else col["cats"][c] for c in col["codes"]]
    if isinstance(col, dict) and "fc" in col:
        cats, prev = [], ""
        for k in range(0, len(col["fc"]), 2):
            prev = prev[: col["fc"][k]] + col["fc"][k + 1]
            cats.append(prev)
        return [None if c < 0 else cats[c] for c in col["codes"]]
    return col


def test_roofline_plot_has_the_devices_roofs_and_one_point_per_op(jax):
    """The roofs bend at the HBM ridge point and flatten at the peak; every op with FLOPs and
    HBM bytes is one point at (HBM intensity, FLOP rate), coloured by its bound."""
    view = tw.views.roofline(jax)
    fig = view.figure()
    assert fig.layout.xaxis.type == "log" and fig.layout.yaxis.type == "log"
    peaks = jax.roofline_peaks.iloc[0]
    hbm = next(t for t in fig.data if t.name.startswith("HBM roof"))
    assert max(hbm.y) == pytest.approx(peaks["peak_gflops"])
    x, y = np.asarray(hbm.x), np.asarray(hbm.y)
    below = x < peaks["hbm_ridge_point"]
    assert np.allclose(y[below], x[below] * peaks["peak_hbm_gibps"] * 2**30 / 1e9)
    points = [t for t in fig.data if t.mode == "markers"]
    rl = jax.roofline
    want = rl[(rl["flops"] > 0) & (rl["hbm_bytes"] > 0)]
    assert sum(len(t.x) for t in points) == len(want) >= 35
    by_name = want.set_index(want["hlo_op_name"].astype(str))
    for t in points:
        bound = t.name.removeprefix("bound by ")
        for xi, yi, cd in zip(t.x, t.y, t.customdata):
            row = by_name.loc[cd[0]]
            assert xi == pytest.approx(row["hbm_operational_intensity"])
            if row["above_roof"]:  # drawn on the roof (tests/test_trust_xla.py)
                assert t.name.startswith("above a roof") and yi <= row["model_gflops_per_s"]
                continue
            assert row["bound_by"] == bound
            assert yi == pytest.approx(row["model_gflops_per_s"])
        assert "GFLOP/s" in t.hovertemplate and "FLOP/B" in t.hovertemplate
    # trace uids become CSS class names in plotly.js and kaleido: no spaces or slashes
    assert all(re.fullmatch(r"[\w-]+", t.uid) for t in fig.data)


def test_a_point_click_filters_the_roofline_table_to_its_op(jax):
    """The plot's click spec names the op table and its HLO op column; each point's key (its
    customdata[0]) is a value of that column, so the viewer's filter finds its row."""
    view = tw.views.roofline(jax)
    p = payload(view)
    (blocks,) = p["variants"].values()
    (figs,) = [b for b in blocks if b["kind"] == "figs"]
    click = figs["figs"][0]["click"]
    assert click["table"] == "roofline_ops" and click["column"] == "hlo_op_name"
    table = p["tables"]["roofline_ops"]
    names = set(decode(table["data"]["hlo_op_name"]))
    keys = {cd[0] for t in view.figure().data if t.mode == "markers" for cd in t.customdata}
    assert keys and keys <= names
    assert set(click["others"]) == names
    assert table["n"] == len(jax.roofline)


def test_op_profile_table_is_the_tree_and_expands_by_depth(jax):
    """The table holds every node of run.op_profile in tree order; the chooser's depths hide
    the deeper levels (programs only, programs and categories, everything)."""
    view = tw.views.hlo_op_profile(jax)
    p = payload(view)
    (control,) = p["controls"]
    assert [o[1] for o in control["options"]] == ["program", "category", "op"]
    tree = jax.op_profile
    for depth, hidden in (("program", {"category", "op"}), ("category", {"op"}), ("op", set())):
        (block,) = [b for b in p["variants"][depth] if b["kind"] == "table"]
        excluded = set((block.get("preset") or {}).get("exclude", {}).get("level", []))
        assert excluded == hidden
    table = p["tables"]["op_profile"]
    assert decode(table["data"]["path"]) == tree["path"].tolist()
    assert np.allclose(table["data"]["time_us"], tree["time_us"].round(3))
    assert set(c["name"] for c in table["columns"]) >= {
        "time_us",
        "flop_utilization",
        "hbm_bw_utilization",
        "node",
    }
    text = view.text()
    assert "HLO ops" in text and "custom-call" in text


def test_report_has_both_xla_sections_only_for_xla_runs(jax, tf_run):
    assert {"hlo_op_profile", "roofline"} <= set(report.report_views(jax))
    assert not {"hlo_op_profile", "roofline"} & set(report.report_views(tf_run))


def test_views_of_a_run_without_xla_say_what_is_missing(tf_run):
    for view in (tw.views.roofline(tf_run), tw.views.hlo_op_profile(tf_run)):
        (line,) = view.findings()
        assert "XLA" in line
        assert line in view.text() and view.html()


# -- in a browser (Debian's Chromium, network blocked): the report of the JAX H100 capture ------
# Each op point of the roofline plot: where it is on the page and the op it stands for.
POINTS_JS = """(root) => { const gd = root.querySelector('.js-plotly-plot');
  gd.scrollIntoView({block: 'center'});
  const xa = gd._fullLayout.xaxis, ya = gd._fullLayout.yaxis, r = gd.getBoundingClientRect();
  const out = [];
  gd.data.forEach((t, k) => { if (t.mode !== 'markers') return;
    gd.calcdata[k].forEach((c, i) => out.push({x: r.left + xa._offset + xa.c2p(c.x),
      y: r.top + ya._offset + ya.c2p(c.y), key: t.customdata[i][0]})); });
  return out; }"""


def test_report_draws_both_views_and_a_point_click_leaves_its_op(tmp_path):
    """In the report of jax_cnn_nographs both sections draw (the roofline plot with its roofs
    and points, the op profile table with its rows), and a click on a roofline point leaves
    the one row of its op in the table below."""
    test_browser = pytest.importorskip("test_browser")
    if not test_browser._AVAILABLE:
        pytest.skip("needs /usr/bin/chromium and playwright")
    if not NOGRAPHS.exists():
        pytest.skip(f"{NOGRAPHS} is absent")
    from playwright.sync_api import sync_playwright

    from tfprof_widgets import cli

    out = tmp_path / "report.html"
    assert cli.main(["report", str(NOGRAPHS), "-o", str(out), "--quiet"]) == 0
    with sync_playwright() as p:
        browser, page = test_browser.offline_page(p)
        page.goto(out.as_uri())
        test_browser.draw_everything(page)
        profile_rows = int(
            page.locator("section#hlo_op_profile .tfprof-view .tft").first.get_attribute(
                "data-rows"
            )
        )
        root = page.locator("section#roofline .tfprof-view").first
        traces = root.evaluate("r => r.querySelector('.js-plotly-plot').data.length")
        points = root.evaluate(f"r => ({POINTS_JS})(r)")
        clicks = []
        for i in range(min(3, len(points))):
            pt = root.evaluate(f"r => ({POINTS_JS})(r)")[i]  # where it is now
            page.mouse.click(pt["x"], pt["y"])
            page.wait_for_timeout(250)
            rows = int(root.evaluate("r => r.querySelector('.tft').dataset.rows"))
            shown = root.evaluate("r => r.querySelector('.tft').innerText")
            clicks.append((pt["key"], rows, pt["key"] in shown))
        browser.close()
    tree = tw.load(NOGRAPHS, progress=False).op_profile
    # The view opens expanded to categories: programs and categories.
    assert profile_rows == int(tree["level"].isin(["program", "category"]).sum())
    assert traces >= 3 and len(points) >= 10
    assert len(clicks) == 3 and all(rows == 1 and seen for _, rows, seen in clicks), clicks


def _tree_rows_js(label: str, clicks: int) -> str:
    """JS: click the op profile table's header `label` `clicks` times, then each drawn row's
    node path (the node cell's title), in the order shown."""
    return f"""(root) => {{
  const t = root.querySelector('.tft');
  const h = [...t.querySelectorAll('*')].find((e) => e.children.length === 0 &&
    (e.textContent || '').trim().replace(/ [▲▼]$/, '') === {json.dumps(label)});
  for (let k = 0; k < {clicks}; k++) h.click();
  return [...t.querySelectorAll('.tft-row')].sort((a, b) => parseFloat(a.style.top) -
    parseFloat(b.style.top)).map((r) => r.lastElementChild.title); }}"""


def test_sorting_the_op_profile_sorts_within_each_parent(tmp_path):
    """A header click on the HLO op profile table sorts each node's children, not the rows:
    every program stays followed by its own categories (and they by their ops), in the order
    clicked. Sorted by time % ascending, a flat sort would put the smallest category above
    its program; the tree keeps the program first."""
    test_browser = pytest.importorskip("test_browser")
    if not test_browser._AVAILABLE:
        pytest.skip("needs /usr/bin/chromium and playwright")
    if not NOGRAPHS.exists():
        pytest.skip(f"{NOGRAPHS} is absent")
    from playwright.sync_api import sync_playwright

    from tfprof_widgets import cli

    out = tmp_path / "report.html"
    assert cli.main(["report", str(NOGRAPHS), "-o", str(out), "--quiet"]) == 0
    tree = tw.load(NOGRAPHS, progress=False).op_profile
    shown = tree[tree["level"].isin(["program", "category"])]
    time = dict(zip(shown["path"], shown["time_us"]))
    parent = dict(zip(shown["path"], shown["parent"]))
    # the check means something: a flat ascending sort puts some category above its program
    flat = sorted(time, key=time.get)
    assert any(parent[q] and flat.index(parent[q]) > k for k, q in enumerate(flat))
    with sync_playwright() as p:
        browser, page = test_browser.offline_page(p)
        page.goto(out.as_uri())
        test_browser.draw_everything(page)
        root = page.locator("section#hlo_op_profile .tfprof-view").first
        rows = root.evaluate(f"r => ({_tree_rows_js('time (%)', 2)})(r)")  # desc, then asc
        browser.close()
    assert sorted(rows) == sorted(shown["path"]), rows
    for k, path in enumerate(rows):
        up = parent[path]
        if up:  # its parent is above it, with only the parent's other descendants between
            start = rows.index(up)
            assert start < k and all(r.startswith(up + "/") for r in rows[start + 1 : k]), path
    siblings: dict = {}
    for path in rows:
        siblings.setdefault(parent[path], []).append(time[path])
    for group in siblings.values():  # ascending (ties within the shown rounding)
        assert all(b >= a - 0.05 * max(a, 1e-9) for a, b in zip(group, group[1:])), group
    assert parent[rows[0]] == ""


def test_the_overview_gives_no_16bit_advice_its_own_16bit_line_contradicts():
    """XProf reads op names only and advises "Only 0.0% of device computation is 16 bit"
    on this bf16 program; the overview's 16-bit line says 79.8 % from the programs' output
    types, so the advice says that instead of XProf's (issue 29 item 4: only what the
    capture supports)."""
    run = tw.load(NOGRAPHS, progress=False)
    summary = run.overview_summary
    assert any(
        r.startswith("Only 0.0% of device computation is 16 bit") for r in summary.recommendations
    )
    text = tw.views.overview(run).text()
    assert "Only 0.0% of device computation" not in text
    assert f"{summary.program_16bit_percent:.1f} % of device op time is already 16-bit" in text
