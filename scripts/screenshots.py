"""Render every widget's static HTML in headless Chromium, offline, and screenshot it.

    python scripts/screenshots.py [OUT_DIR]
    python scripts/screenshots.py --docs      # docs/screenshots/jax_*_{light,dark}.png

``--docs`` writes the overview, op stats and trace viewer of the JAX H100 capture
(tests/data/xplane_h100_jax/jax_cnn_nographs.xplane.pb), each in the light and the dark
scheme, as a report's page shows them (the page follows the system's scheme).

Uses Debian's Chromium (apt-get install chromium) through Playwright, with every request
that is not a local file aborted: what shows up is what an offline reader of an exported
notebook or report sees. Prints each PNG's path and how many plotly plots rendered.
"""

from __future__ import annotations

import pathlib
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "support"))

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


def pages() -> dict[str, str]:
    from golden_tables import synthetic_gpu_path

    import tfprof_widgets as tw
    from tfprof_widgets.views.page.display import reset_lib

    samples = ROOT / "sample_profiles"
    ib, cl = tw.load(samples / "input_bound"), tw.load(samples / "custom_loop")
    gpu = tw.load(synthetic_gpu_path())
    views = {
        "overview": tw.views.overview(ib),
        "op_stats_cpu": tw.views.op_stats(cl),
        "op_stats_gpu": tw.views.op_stats(gpu),
        "timeline": tw.views.timeline(cl),
        "timeline_zoomed": tw.views.timeline(cl, window_us=(20000.0, 21000.0)),
        "memory_timeline": tw.views.memory_timeline(ib),
        "tf_data_graph": tw.views.tf_data_graph(ib),
        "kernel_stats": tw.views.kernel_stats(gpu),
        "input_pipeline": tw.views.input_pipeline(ib),
        "compare": tw.views.compare(ib, cl, names=("input_bound", "custom_loop")),
    }
    out = {}
    for name, view in views.items():
        reset_lib()
        out[name] = (
            "<!doctype html><html><head><meta charset='utf-8'></head>"
            f"<body style='margin:12px;width:1250px'>{view.html()}</body></html>"
        )
    return out


def shoot(out_dir: pathlib.Path) -> dict[str, int]:
    from playwright.sync_api import sync_playwright

    out_dir.mkdir(parents=True, exist_ok=True)
    counts = {}
    with tempfile.TemporaryDirectory() as tmp, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        page.route(
            "**/*",
            lambda route: (
                route.continue_() if route.request.url.startswith("file:") else route.abort()
            ),
        )
        for name, html in pages().items():
            f = pathlib.Path(tmp) / f"{name}.html"
            f.write_text(html, encoding="utf-8")
            page.goto(f.as_uri())
            page.wait_for_load_state("load")
            page.wait_for_timeout(300)
            counts[name] = page.locator(".js-plotly-plot").count()
            png = out_dir / f"{name}.png"
            page.screenshot(path=str(png), full_page=True)
            print(f"{png}  plots: {counts[name]}")
        browser.close()
    return counts


JAX = ROOT / "tests" / "data" / "xplane_h100_jax" / "jax_cnn_nographs.xplane.pb"
DOCS_VIEWS = ("overview", "op_stats", "trace_viewer")


def docs_pages() -> dict[str, str]:
    """The JAX capture's overview, op stats and trace viewer, each a page like a report's."""
    import tfprof_widgets as tw
    from tfprof_widgets.report import PAGE_CSS
    from tfprof_widgets.views.page.display import lib_script, reset_lib

    run = tw.load(JAX)
    views = {
        "overview": tw.views.overview(run),
        "op_stats": tw.views.op_stats(run),
        "trace_viewer": tw.views.timeline(run, offline_bytes=800_000),
    }
    out = {}
    for name, view in views.items():
        reset_lib()
        out[name] = (
            "<!doctype html><html lang='en'><head><meta charset='utf-8'>"
            f"<style>{PAGE_CSS}</style></head><body data-tfprof-page=''><main>"
            f"<section id='{name}'>{view.html()}</section></main>{lib_script()}"
            "<script>window.__tfprof.mountAll(document);</script></body></html>"
        )
    return out


def shoot_docs(out_dir: pathlib.Path = ROOT / "docs" / "screenshots") -> list[pathlib.Path]:
    """docs/screenshots/jax_<view>_<scheme>.png; waits until every view says it drew."""
    from playwright.sync_api import sync_playwright

    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    with tempfile.TemporaryDirectory() as tmp, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        for scheme in ("light", "dark"):
            page = browser.new_page(viewport={"width": 1280, "height": 900}, color_scheme=scheme)
            page.route(
                "**/*",
                lambda route: (
                    route.continue_()
                    if route.request.url.startswith(("file:", "data:", "blob:"))
                    else route.abort()
                ),
            )
            for name, html in docs_pages().items():
                f = pathlib.Path(tmp) / f"{name}.html"
                f.write_text(html, encoding="utf-8")
                page.goto(f.as_uri())
                page.wait_for_function(
                    "() => document.querySelectorAll('.tfprof-root[data-drawn-ms],"
                    " .tfpv[data-window]').length > 0",
                    timeout=60_000,
                )
                page.wait_for_timeout(500)
                png = out_dir / f"jax_{name}_{scheme}.png"
                page.screenshot(path=str(png), full_page=True)
                written.append(png)
                print(png)
            page.close()
        browser.close()
    return written


if __name__ == "__main__":
    if sys.argv[1:] == ["--docs"]:
        shoot_docs()
    else:
        shoot(pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else "screenshots"))
