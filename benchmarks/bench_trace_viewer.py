"""Trace viewer speed at 1 M and 10 M events: the kernel side and, in a real browser, the page.

    python benchmarks/bench_trace_viewer.py              # 1 M and 10 M, kernel and browser
    python benchmarks/bench_trace_viewer.py --no-browser # kernel side only
    python benchmarks/bench_trace_viewer.py --sizes 1000000

Kernel side (this process, synthetic events from ``synthetic_events.py``):
  model build   the lane model (TraceModel) of the run; target <= 2 s at 10 M events
  window ms     one window's marks (full capture, 10 %, 1 %, 0.01 %), best of 3
  marks / KB    marks in that window and the bytes of its binary message
  widget s      the live widget's first state (first window, overview, lanes), with
                anywidget already imported
  offline       the embedded multi-resolution payload of the offline HTML (s, MB)
In the browser (JupyterLab in headless Chromium, the kernel holding the same run):
  first draw    ms from the kernel going idle after the cell to the canvas's first draw
                (negative: drawn before the idle message arrived); target <= 1 s
  frame ms      requestAnimationFrame intervals while panning (the d key held 2.5 s, zoomed
                32x in so that windows stream in), p50 / p95 / max; target <= 50 ms
  round trip    ms from a window request to its marks ready to draw, over that pan and 15
                wheel zooms, p50 / p95; target <= 150 ms
"""

from __future__ import annotations

import argparse
import pathlib
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from synthetic_events import synthetic_events  # noqa: E402


class StubRun:
    """Just enough of a Run for the trace viewer: events, no stats, no steps; the model is
    built on first use, as ``Run.trace_model`` does."""

    tool_data = None

    def __init__(self, events, name: str = "synthetic") -> None:
        import pandas as pd

        self.events = events
        self.name = name
        self.steps = pd.DataFrame({"host": [], "step": [], "start_us": [], "step_time_us": []})
        self.model = None

    @property
    def trace_model(self):
        from tfprof_widgets.views.trace.model import TraceModel

        if self.model is None:
            self.model = TraceModel(self.events)
        return self.model


def kernel_side(n: int) -> tuple[dict, StubRun]:
    from tfprof_widgets.views.trace.model import TraceModel
    from tfprof_widgets.views.trace.viewer import TraceViewer

    run = StubRun(synthetic_events(n))
    builds = []
    for _ in range(2):
        t = time.perf_counter()
        model = TraceModel(run.events)
        builds.append(time.perf_counter() - t)
    run.model = model
    out = {"build_s": min(builds), "windows": []}
    span = model.t_max - model.t_min
    for label, frac in (("full", 1.0), ("10 %", 0.1), ("1 %", 0.01), ("0.01 %", 1e-4)):
        x0 = model.t_min + (0.0 if frac == 1.0 else 0.4 * span)
        x1 = x0 + span * frac
        times = []
        for _ in range(3):
            t = time.perf_counter()
            marks = model.window(x0, x1, cols=2 * 1100)
            header, buf = marks.pack()
            times.append(time.perf_counter() - t)
        out["windows"].append((label, 1e3 * min(times), len(marks), len(buf) / 1024))
    import anywidget  # noqa: F401  (imported once per process; not the widget's cost)

    view = TraceViewer(run)
    t = time.perf_counter()
    view.widget()
    out["widget_s"] = time.perf_counter() - t
    t = time.perf_counter()
    payload = view.offline_payload()
    out["offline_s"] = time.perf_counter() - t
    out["offline_mb"] = payload["bytes"] / 1e6
    return out, run


def browser_side(n: int) -> dict | None:
    sys.path.insert(0, str(ROOT / "tests" / "support"))
    try:
        import trace_viewer_lab as lab
        from playwright.sync_api import sync_playwright
    except ImportError as exc:
        print(f"(no browser figures: {exc})")
        return None
    tmp = pathlib.Path(tempfile.mkdtemp(prefix="bench_tv_"))
    lab.write_notebook(tmp / "bench.ipynb", lab.synthetic_cells(n))
    with lab.lab_server(tmp) as port, sync_playwright() as p:
        browser, page = lab.lab_page(p, port, "bench.ipynb")
        times = lab.run_all_and_time(page, timeout_ms=600_000)
        lab.wait_settled(page)
        page.evaluate("() => window.__tfprofViewers[0].canvas.scrollIntoView({block: 'center'})")
        lab.zoom_then_pan(page)  # 32x in, so that panning streams windows from the kernel
        lab.wait_settled(page)
        box = page.locator(".tfpv canvas").bounding_box()
        page.mouse.move(box["x"] + box["width"] * 0.6, box["y"] + 150)
        for _ in range(10):
            page.mouse.wheel(0, -150)
            page.wait_for_timeout(400)
        for _ in range(5):
            page.mouse.wheel(0, 300)
            page.wait_for_timeout(400)
        lab.wait_settled(page)
        timings = page.evaluate(lab.TIMINGS_JS, 0)
        browser.close()
    return {"first_draw_ms": times["draws"][0] - times["idle"][-1], **timings}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="1000000,10000000")
    ap.add_argument("--no-browser", action="store_true")
    args = ap.parse_args()
    sizes = [int(float(s)) for s in args.sizes.split(",")]
    rows = []
    for n in sizes:
        k, run = kernel_side(n)
        del run
        b = None if args.no_browser else browser_side(n)
        rows.append((n, k, b))
    print(f"\n{'events':>11} {'build s':>8} {'window':>8} {'ms':>6} {'marks':>6} {'KB':>5}")
    for n, k, _ in rows:
        for i, (label, ms, marks, kb) in enumerate(k["windows"]):
            head = f"{n:>11,} {k['build_s']:>8.2f}" if i == 0 else f"{'':>11} {'':>8}"
            print(f"{head} {label:>8} {ms:>6.1f} {marks:>6} {kb:>5.0f}")
    print(f"\n{'events':>11} {'widget s':>9} {'offline s':>10} {'offline MB':>11}")
    for n, k, _ in rows:
        print(f"{n:>11,} {k['widget_s']:>9.2f} {k['offline_s']:>10.2f} {k['offline_mb']:>11.2f}")
    if any(b for _, _, b in rows):
        print(
            f"\n{'events':>11} {'first draw ms':>14} {'frame ms p50/p95/max':>22} "
            f"{'round trip ms p50/p95 (n)':>26}"
        )
        for n, _, b in rows:
            if not b:
                continue
            f, r = b["frames"] or {}, b["round_trips"] or {}
            frame = f"{f.get('p50', 0):.1f}/{f.get('p95', 0):.1f}/{f.get('max', 0):.1f}"
            rt = f"{r.get('p50', 0):.0f}/{r.get('p95', 0):.0f} ({r.get('n', 0)})"
            print(f"{n:>11,} {b['first_draw_ms']:>14.0f} {frame:>22} {rt:>26}")


if __name__ == "__main__":
    main()
