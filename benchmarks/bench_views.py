"""Cell run -> view drawn, for every view, in JupyterLab in headless Chromium (issue 29 item 11).

For each capture and each view: restart the kernel, run ``import tfprof_widgets as tw`` and
``run = tw.load(...)`` (their times are printed too), then the view's cell (the first view of
a fresh kernel: "cold") and the same cell again ("warm"). A time is from the moment the cell
is sent to run to the moment its output is drawn (the view's ``data-drawn-ms`` is set, or the
trace viewer drew its first window), read in the page with ``performance.now()``. Each line
splits it as ``drawn = start + build + display + to page + wait + render``: the cell reaching
the kernel; the view's analyses; its payload and outputs (``display()``; the cell notes the
kernel's clock around both, see ``VIEW_CELL``); the outputs' transfer and the viewer script's
parse; the viewer waiting to be in sight; drawing plots and tables. The
first view of each capture runs in a freshly opened page (it parses plotly.js), the others
in a page that already has it (a kernel restarted in an open notebook). "busy" is how long
the kernel stayed busy after the cold view was drawn (the user's next cell waits that long):
it waited for the view's PNG there before issue 42 item 7 (2.3-3.2 s); in JupyterLab the image
now follows after the cell.

    PYTHONPATH=$PWD python benchmarks/bench_views.py                 # the three captures
    PYTHONPATH=$PWD python benchmarks/bench_views.py --views op_stats overview
    PYTHONPATH=$PWD python benchmarks/bench_views.py --no-preload     # without the warm-up
    PYTHONPATH=$PWD python benchmarks/bench_views.py --no-png         # without the images

Captures: the shared JAX H100 capture (jax_cnn_nographs), the PyTorch transformer trace (H100)
and the 8-GPU TF BERT capture, from ``../shared/captures``. Needs /usr/bin/chromium,
playwright and jupyterlab. JupyterLab listens on 127.0.0.1 only, every other request is
blocked, and the server and its temporary folder are removed at the end. On a loaded 2-core
machine the figures vary by 2-3x from run to run: ``--repeat`` takes the best of several.
"""

from __future__ import annotations

import argparse
import json
import pathlib
import shutil
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parents[1]
# The browser tests' JupyterLab harness: a server on 127.0.0.1, a loopback-only page.
sys.path.insert(0, str(ROOT / "tests" / "support"))
import trace_viewer_lab as lab  # noqa: E402

sys.path.insert(0, str(ROOT))
from tfprof_widgets.views.registry import VIEWS as SPECS  # noqa: E402

CAPTURES = ROOT.parent / "shared" / "captures"
RUNS = {
    "jax_h100": CAPTURES / "xplane_gpu_jax_h100" / "jax_cnn_nographs.xplane.pb",
    "torch_h100": CAPTURES / "kineto" / "torch_transformer_h100.pt.trace.json.gz",
    "bert_8gpu": CAPTURES / "xplane_gpu_tf" / "bert_8gpu_multi_worker.xplane.pb",
}
# The views, as the one table of views lists them (tfprof_widgets/views/registry.py); each
# capture draws those of every run and those of its own framework.
VIEWS = {v.name: f"tw.views.{v.name}(run{', run' if v.name == 'compare' else ''})" for v in SPECS}
FRAMEWORK = {"jax_h100": "xla", "torch_h100": "pytorch", "bert_8gpu": "tensorflow"}

# Run cell i (not awaited: awaiting run-all can hang), scrolled to the top of the notebook's
# view first (a view out of sight draws when scrolled near or when the page is idle, by design:
# the last cells of a long notebook waited 0.1-0.5 s for that), and note when it was sent; a
# MutationObserver notes when the cell's output is drawn (a view's root gets data-drawn-ms,
# the trace viewer data-window), whether or not the kernel is still busy (it waits for the
# view's PNG at the end of the cell).
RUN_CELL = """(i) => { const nb = window.jupyterapp.shell.currentWidget;
  nb.content.activeCellIndex = i; nb.content.deselectAll();
  if (nb.content.widgets.filter((c) => nb.content.isSelectedOrActive(c)).length !== 1)
    throw new Error('more than one cell selected');
  const node = nb.content.widgets[i].node;
  node.scrollIntoView({block: 'start'});  // in sight, as the cell a person runs
  window.__drawn = null; window.__idleAt = null; window.__seenBusy = false;
  const drawn = () => node.querySelector('.jp-OutputArea .tfprof-root[data-drawn-ms],'
                                        + ' .jp-OutputArea .tfpv[data-window]');
  if (window.__obs) window.__obs.disconnect();
  window.__obs = new MutationObserver(() => {
    if (window.__drawn === null && drawn()) { window.__drawn = performance.now();
      window.__obs.disconnect(); } });
  window.__obs.observe(node, {subtree: true, childList: true, attributes: true,
                              attributeFilter: ['data-drawn-ms', 'data-window']});
  window.__sent = performance.now();
  window.jupyterapp.commands.execute('notebook:run-cell'); }"""
# The cell's error, if its output shows one.
ERROR = """(i) => { const c = window.jupyterapp.shell.currentWidget.content.widgets[i];
  const err = c.node.querySelector('[data-mime-type="application/vnd.jupyter.stderr"]');
  return err && /Error|Traceback/.test(err.textContent) ? err.textContent.slice(0, 400) : null; }"""
KERNEL = "window.jupyterapp.shell.currentWidget.sessionContext.session.kernel"
WATCH_IDLE = f"""() => {{ const k = {KERNEL};
  if (window.__watching === k) return; window.__watching = k;
  k.statusChanged.connect((_, s) => {{ if (s === 'busy') window.__seenBusy = true;
    if (s === 'idle' && window.__seenBusy && window.__idleAt === null)
      window.__idleAt = performance.now(); }}); }}"""


# Each view's cell notes the kernel's wall clock (time.time(), the page's clock too:
# performance.timeOrigin + now()) when it starts, when the view is built (its analyses run)
# and when display() returned (payload, outputs sent; the image is rendered after that, in
# the background). Read back after the cell with a silent request.
VIEW_CELL = (
    "import time as _bt\n_bt0 = _bt.time()\n_bv = {call}\n_bt1 = _bt.time()\n"
    "display(_bv)\n_bt2 = _bt.time()"
)
READ_CLOCK = f"""async () => {{ const f = {KERNEL}.requestExecute(
    {{code: 'print(_bt0, _bt1, _bt2)', silent: false, store_history: false}});
  let out = ''; f.onIOPub = (m) => {{ if (m.header.msg_type === 'stream') out += m.content.text; }};
  await f.done; return [out, performance.timeOrigin]; }}"""


def kernel_idle(page, timeout_ms: int = 300_000) -> None:
    page.wait_for_function(f"() => {KERNEL} && {KERNEL}.status === 'idle'", timeout=timeout_ms)


def run_cell(page, i: int, drawn: bool, timeout_ms: int = 300_000) -> dict:
    """Run cell ``i``; wait until the kernel is idle again (and its output drawn when
    ``drawn``). Times in seconds from the moment it was sent: to idle and to drawn."""
    page.evaluate(WATCH_IDLE)
    page.evaluate(RUN_CELL, i)
    page.wait_for_function("() => window.__idleAt !== null", timeout=timeout_ms)
    error = page.evaluate(ERROR, i)
    if error:
        raise RuntimeError(error)
    if drawn:
        page.wait_for_function("() => window.__drawn !== null", timeout=timeout_ms)
    t = page.evaluate("() => [window.__sent, window.__idleAt, window.__drawn]")
    # The viewer's own split: mount -> drawn, and the render (plots and tables) in it.
    split = page.evaluate(
        "(i) => { const r = window.jupyterapp.shell.currentWidget.content.widgets[i].node"
        ".querySelector('.tfprof-root[data-drawn-ms]');"
        " return r ? [+r.dataset.drawnMs / 1e3, +r.dataset.renderMs / 1e3] : [null, null]; }",
        i,
    )
    out = {
        "idle": (t[1] - t[0]) / 1e3,
        "drawn": (t[2] - t[0]) / 1e3 if drawn else None,
        "mount_to_drawn": split[0],
        "render": split[1],
    }
    if drawn and split[0] is not None:
        # Where the time went: the cell reaching the kernel; the view's analyses (built);
        # its payload and outputs (display() returned); the outputs' transfer and the viewer
        # script's parse (mounted); waiting to be in sight; the plots and tables (render).
        text, origin = page.evaluate(READ_CLOCK)
        k0, k1, k2 = (float(v) * 1e3 - origin for v in text.split())  # page ms
        mount = t[2] - split[0] * 1e3
        out["split"] = [
            (k0 - t[0]) / 1e3,
            (k1 - k0) / 1e3,
            (k2 - k1) / 1e3,
            (mount - k2) / 1e3,
            split[0] - split[1],
            split[1],
        ]
    return out


SPLIT = "start + build + display + to page + wait + render"


def _split(r: dict) -> str:
    if r.get("split") is None:
        return f"{r['drawn']:5.2f}"
    return f"{r['drawn']:5.2f} = " + " + ".join(f"{v:.2f}" for v in r["split"])


def restart(page) -> None:
    page.evaluate(f"() => {{ window.__watching = null; {KERNEL}.restart(); }}")
    page.wait_for_timeout(500)
    kernel_idle(page)
    page.evaluate(  # clear the outputs so that "drawn" is this run's
        "() => window.jupyterapp.commands.execute('notebook:clear-all-cell-outputs')"
    )


def bench_capture(p, port: int, name: str, views: list[str]) -> list[dict]:
    browser, page = lab.lab_page(p, port, f"{name}.ipynb", timeout_ms=180_000)
    rows = []
    for k, view in enumerate(views):
        restart(page)
        imp = run_cell(page, 0, drawn=False)
        load = run_cell(page, 1, drawn=False)
        page.wait_for_timeout(300)  # a person reads the load's output before the next cell
        try:
            cold = run_cell(page, 2 + k, drawn=True)
            page.evaluate("() => window.jupyterapp.commands.execute('notebook:clear-cell-output')")
            warm = run_cell(page, 2 + k, drawn=True)
        except RuntimeError as exc:  # the view failed in the kernel: say so, go on
            print(f"{name:11} {view:16} failed: {str(exc).strip().splitlines()[-1][:200]}")
            continue
        rows.append(
            {
                "capture": name,
                "view": view,
                "import_s": imp["idle"],
                "load_s": load["idle"],
                "cold_idle_s": cold["idle"],
                "cold_drawn_s": cold["drawn"],
                "cold_busy_s": max(0.0, cold["idle"] - cold["drawn"]),
                "warm_idle_s": warm["idle"],
                "warm_drawn_s": warm["drawn"],
            }  # fmt: skip
        )
        print(
            f"{name:11} {view:16} import {imp['idle']:5.2f}  load {load['idle']:5.2f}  "
            f"cold: kernel {cold['idle']:5.2f} drawn {_split(cold)} "
            f"busy {max(0.0, cold['idle'] - cold['drawn']):4.2f}  "
            f"warm: kernel {warm['idle']:5.2f} drawn {_split(warm)}"
            + ("  (fresh page)" if k == 0 else ""),
            flush=True,
        )
    browser.close()
    return rows


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--captures", nargs="*", default=list(RUNS), choices=list(RUNS))
    ap.add_argument("--views", nargs="*", default=None, choices=list(VIEWS))
    ap.add_argument("--no-preload", action="store_true", help="TFPROF_WIDGETS_PRELOAD=0")
    ap.add_argument("--no-png", action="store_true", help="TFPROF_WIDGETS_PNG=0 (no images)")
    ap.add_argument("--repeat", type=int, default=1, help="best of N per (capture, view)")
    ap.add_argument("--json", help="also write the rows to this file")
    args = ap.parse_args(argv)
    from playwright.sync_api import sync_playwright

    root = pathlib.Path(tempfile.mkdtemp(prefix="tfprof_bench_views_"))
    rows: list[dict] = []
    try:
        plans = {}
        for name in args.captures:
            if not RUNS[name].exists():
                print(f"{name}: {RUNS[name]} is missing, skipped")
                continue
            views = args.views or [v.name for v in SPECS if v.framework in (None, FRAMEWORK[name])]
            lab.write_notebook(
                root / f"{name}.ipynb",
                ["import tfprof_widgets as tw", f"run = tw.load({str(RUNS[name])!r})"]
                + [VIEW_CELL.format(call=VIEWS[v]) for v in views],
            )
            plans[name] = views
        env = {"TFPROF_WIDGETS_PRELOAD": "0" if args.no_preload else "1"}
        if args.no_png:
            env["TFPROF_WIDGETS_PNG"] = "0"
        # No windowing: every cell's output is in the page, so "drawn" can be watched.
        no_windowing = {"@jupyterlab/notebook-extension:tracker": {"windowingMode": "none"}}
        with (
            lab.lab_server(root, env=env, settings=no_windowing) as port,
            sync_playwright() as p,
        ):
            for _ in range(args.repeat):
                for name, views in plans.items():
                    rows += bench_capture(p, port, name, views)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    best: dict[tuple, dict] = {}
    for r in rows:
        key = (r["capture"], r["view"])
        if key not in best or r["cold_drawn_s"] < best[key]["cold_drawn_s"]:
            best[key] = r
    print("\nsplits:", SPLIT)
    print("\ncell run -> drawn (s), best of", args.repeat, "| preload", not args.no_preload)
    print("busy: the kernel still busy after the cold view was drawn (s)")
    print(
        f"{'capture':11} {'view':16} {'cold':>6} {'warm':>6} {'busy':>6}"
        "   (import, load of the cold run)"
    )
    for r in best.values():
        print(
            f"{r['capture']:11} {r['view']:16} {r['cold_drawn_s']:6.2f} {r['warm_drawn_s']:6.2f}"
            f" {r['cold_busy_s']:6.2f}   ({r['import_s']:.2f}, {r['load_s']:.2f})"
        )
    if args.json:
        pathlib.Path(args.json).write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
