"""A browser pass over every view of a JAX GPU, a TPU and a PyTorch capture, in JupyterLab.

    python scripts/browser_pass.py [OUT_DIR]        # default /tmp/tfprof_browser_pass

For each capture it writes a notebook (one cell loads the run, then one view per cell: the
views a report of that run would hold, tfprof_widgets/report.py), runs it in one JupyterLab
on 127.0.0.1 with one headless Debian Chromium (every non-loopback request blocked), then
screenshots each view's output at 1,400 and 700 px wide, in JupyterLab's light and dark
themes: OUT_DIR/<capture>_<view>_<width>_<theme>.png. It prints a table of view x capture x
width x theme -> drawn (every view root says it drew, every plotly plot has its SVG, no console
error while that capture/width/theme was shown) or what was missing. The server and the
browser it starts are stopped on exit.

Captures: the JAX H100 capture under CUDA graphs (tests/data/xplane_h100_jax), the synthetic
TPU capture the invariants suite builds from the real XLA programs of tests/data/tpu_hlo
(tests/support/tpu_builder.py, written to a temporary folder), and a PyTorch Kineto trace of a
transformer on an H100 (tests/data/chrome).
"""

from __future__ import annotations

import pathlib
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "tests" / "support"), str(ROOT / "tests" / "browser")]

WIDTHS = (1400, 700)
# No "get notified about Jupyter news?" toast over the outputs.
NO_NEWS = {"@jupyterlab/apputils-extension:notification": {"fetchNews": "false"}}
THEMES = {"light": "JupyterLab Light", "dark": "JupyterLab Dark"}

# Which views a report of the run holds, by section (tfprof_widgets/views/registry.py, the table
# report.py reads), asked in the notebook without building every view.
APPLIES = (
    "from tfprof_widgets.views.registry import report_specs\n"
    "APPLIES = {spec.section for spec in report_specs(run)}"
)


def sections() -> list[tuple[str, str]]:
    """(report section, tw.views function) of every view a report can hold, in its order;
    compare needs two runs and is no section of a report: it is left out here."""
    from tfprof_widgets.views.registry import VIEWS

    return [(spec.section, spec.name) for spec in VIEWS if spec.section is not None]


def captures(tmp: pathlib.Path) -> dict[str, pathlib.Path]:
    from tpu_builder import tpu_capture

    return {
        "jax_gpu": ROOT / "tests/data/xplane_h100_jax/jax_cnn_graphs.xplane.pb",
        "tpu": tpu_capture().write(tmp / "tpu.xplane.pb"),
        "pytorch": ROOT / "tests/data/chrome/torch_transformer_h100.pt.trace.json.gz",
    }


def notebook_cells(path: pathlib.Path) -> list[str]:
    """Cell 0 loads the run; then one cell per candidate view, showing it where it applies and
    saying 'not applicable' where a report would leave it out."""
    cells = [
        f"import tfprof_widgets as tw\nrun = tw.load({str(path)!r})\n{APPLIES}\n"
        "print(sorted(APPLIES))"
    ]
    for key, name in sections():
        cells.append(
            f"# {key}\ntw.views.{name}(run) if {key!r} in APPLIES else print('not applicable')"
        )
    return cells


# One output area's state: roots drawn, plots with their SVG, trace viewers drawn.
OUTPUT_STATE = """(cell) => {
  const vis = (e) => !!(e.offsetParent || e.getClientRects().length);
  const out = cell.querySelector('.jp-OutputArea');
  if (!out) return {na: false, roots: 0};
  const text = out.innerText || '';
  const roots = [...out.querySelectorAll('.tfprof-root')].filter(vis);
  const plots = [...out.querySelectorAll('.js-plotly-plot')].filter(vis);
  const tpv = [...out.querySelectorAll('.tfpv')].filter(vis);
  return {
    na: /^not applicable/.test(text.trim()),
    traceback: !!out.querySelector('[data-mime-type="application/vnd.jupyter.stderr"] pre')
      && /Traceback|Error/.test(text),
    roots: roots.length + tpv.length,
    undrawn: roots.filter(r => !r.dataset.drawnMs && !r.querySelector('.tfpv')).length
      + tpv.filter(v => !v.dataset.window).length,
    plots: plots.length,
    bare_plots: plots.filter(g => !g.querySelector('svg.main-svg')).length,
    too_wide: roots.filter(r => r.scrollWidth > r.clientWidth + 1).length,
  };
}"""


def run_pass(out_dir: pathlib.Path) -> list[tuple]:
    from playwright.sync_api import sync_playwright
    from test_browser import lab_page, lab_server
    from trace_viewer_lab import write_notebook

    out_dir.mkdir(parents=True, exist_ok=True)
    rows = []
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = pathlib.Path(tmp_name)
        caps = captures(tmp)
        for name, path in caps.items():
            write_notebook(tmp / f"{name}.ipynb", notebook_cells(path))
        with lab_server(tmp, settings=NO_NEWS) as port, sync_playwright() as p:
            from test_browser import ARGS, CHROMIUM

            browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
            errors: list[tuple[str, str]] = []
            phase = ["start"]
            context = browser.new_context(viewport={"width": 1400, "height": 1000})

            class _P:  # lab_page opens its page through new_context on this
                def new_context(self, **_):
                    return context

            page = None
            for name in caps:
                if page is not None:
                    page.evaluate(
                        "() => window.jupyterapp.shell.currentWidget.sessionContext.shutdown()"
                    )
                    page.close()
                t0 = time.time()
                _, page = lab_page(_P(), port, f"{name}.ipynb")
                page.on(
                    "console",
                    lambda m: errors.append((phase[0], m.text)) if m.type == "error" else None,
                )
                page.on("pageerror", lambda e: errors.append((phase[0], str(e))))
                page.evaluate(
                    "() => { const s = window.jupyterapp.shell; s.collapseLeft();"
                    " s.collapseRight(); }"
                )
                set_theme(page, "light")
                phase[0] = f"{name} run"
                page.evaluate(
                    "() => { window.jupyterapp.commands.execute('notebook:run-all-cells'); }"
                )
                page.wait_for_function(
                    "() => { const c = [...document.querySelectorAll('.jp-CodeCell"
                    " .jp-InputPrompt')]; return c.length && c.every(e => /\\[\\d+\\]/"
                    ".test(e.textContent)) && window.jupyterapp.shell.currentWidget"
                    ".sessionContext.session.kernel.status === 'idle'; }",
                    timeout=600_000,
                )
                print(f"{name}: ran in {time.time() - t0:.0f} s", flush=True)
                for theme in THEMES:
                    set_theme(page, theme)
                    for width in WIDTHS:
                        phase[0] = f"{name} {width} {theme}"
                        page.set_viewport_size({"width": width, "height": 1000})
                        page.wait_for_timeout(1200)
                        rows += shoot_views(page, name, width, theme, out_dir, errors, phase[0])
            page.close()
            context.close()
            browser.close()
    for ph, text in errors:
        print(f"console error ({ph}): {text[:300]}")
    return rows


def set_theme(page, theme: str) -> None:
    page.evaluate(
        f"() => window.jupyterapp.commands.execute('apputils:change-theme',"
        f" {{theme: {THEMES[theme]!r}}})"
    )
    light = "true" if theme == "light" else "false"
    page.wait_for_function(
        f"() => document.body.getAttribute('data-jp-theme-light') === '{light}'",
        timeout=30_000,
    )
    page.wait_for_timeout(1000)


def shoot_views(page, capture, width, theme, out_dir, errors, phase) -> list[tuple]:
    rows = []
    cells = page.locator(".jp-Notebook .jp-CodeCell")
    for i, (key, _) in enumerate(sections(), start=1):
        cell = cells.nth(i)
        cell.scroll_into_view_if_needed()
        try:
            page.wait_for_function(
                "(c) => { const r = [...c.querySelectorAll('.tfprof-root')];"
                " return /not applicable/.test(c.innerText) || (r.length && r.every(x =>"
                " x.dataset.drawnMs || x.querySelector('.tfpv[data-window]') ||"
                " !(x.offsetParent || x.getClientRects().length))); }",
                arg=cell.element_handle(),
                timeout=30_000,
            )
        except Exception:  # noqa: BLE001 - recorded below as undrawn
            pass
        page.wait_for_timeout(400)
        st = cell.evaluate(OUTPUT_STATE)
        if st["na"]:
            continue
        out = cell.locator(".jp-OutputArea").first
        png = out_dir / f"{capture}_{key}_{width}_{theme}.png"
        # A window tall enough for the whole output (an element's screenshot is clipped to
        # the notebook's scrolling panel); the width, which the plots follow, stays.
        tall = min(4000, int(out.bounding_box()["height"]) + 300)
        page.set_viewport_size({"width": width, "height": max(1000, tall)})
        page.wait_for_timeout(300)
        out.scroll_into_view_if_needed()
        out.screenshot(path=str(png))
        errs = [e for ph, e in errors if ph == phase]
        problems = []
        if st.get("traceback"):
            problems.append("traceback")
        if not st["roots"]:
            problems.append("no view")
        if st.get("undrawn"):
            problems.append(f"{st['undrawn']} undrawn")
        if st.get("bare_plots"):
            problems.append(f"{st['bare_plots']} plots without SVG")
        if st.get("too_wide"):
            problems.append("wider than output")
        if errs:
            problems.append(f"{len(errs)} console errors")
        rows.append((key, capture, width, theme, st.get("plots", 0), "; ".join(problems)))
    return rows


def table(rows: list[tuple]) -> str:
    lines = [
        "| view | capture | width | theme | plots | drawn |",
        "|---|---|---|---|---|---|",
    ]
    for key, cap, w, th, plots, prob in rows:
        lines.append(f"| {key} | {cap} | {w} | {th} | {plots} | {'drawn' if not prob else prob} |")
    return "\n".join(lines)


if __name__ == "__main__":
    out = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else "/tmp/tfprof_browser_pass")
    result = run_pass(out)
    print(table(result))
    print(f"screenshots: {out}")
