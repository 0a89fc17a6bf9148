"""JupyterLab in headless Chromium, for the trace viewer's browser tests and its benchmark.

Builds on tests/browser/test_browser.py (Chromium flags, free ports, opening a notebook with its
kernel idle and non-loopback traffic blocked) and adds what the trace viewer needs: running a
notebook while timing when the kernel went idle, and reading the viewer's own state and
timings (``window.__tfprofViewers``: the view, marks, drawn labels, frame times, round trips).
"""

from __future__ import annotations

import pathlib
import sys

# test_browser is a test module (tests/browser, importing tests/conftest.py): importable here
# also from the benchmarks and scripts, which put only tests/support on sys.path.
_TESTS = pathlib.Path(__file__).resolve().parents[1]
sys.path[:0] = [str(_TESTS / "browser"), str(_TESTS)]
from test_browser import ARGS, CHROMIUM, free_port, lab_page, lab_server, open_lab_page  # noqa: E402, F401

# Viewer state as the tests read it (index: the n-th viewer on the page).
STATE_JS = """(i) => { const v = (window.__tfprofViewers || [])[i]; if (!v) return null;
  const m = v.marks; return {x0: v.vx0, x1: v.vx1, n: m.n, events: m.nEvents,
  marks_x0: m.x0, marks_x1: m.x1, complete: m.complete, fetching: v.fetching,
  first_draw: v.stats.firstDraw, created: v.stats.created, requests: v.stats.requests,
  labels: v.stats.labels, selected: v.selected ? v.selected.row : null,
  flows: v.details && v.details.flows ? v.details.flows.map(f => [f.kind, f.dir, f.row]) : [],
  count: v.countEl.dataset.count || null, theme: v.root.dataset.theme,
  details: v.detailsEl.innerText, t_min: v.meta.t_min, t_max: v.meta.t_max,
  W: v.W, H: v.H, scrollY: v.scrollY}; }"""

# Where an event is drawn, in page coordinates (scrolling its lane into view first).
LOCATE_JS = """([i, ev]) => { const v = window.__tfprofViewers[i];
  const g = v.laneGroup[ev.lane];
  if (v.collapsed.has(g)) { v.collapsed.delete(g); v.layout(); v.resize(); }
  const y = v.laneY[ev.lane] + ev.depth * 18; const viewH = v.H - 38;
  if (y < v.scrollY || y + 18 > v.scrollY + viewH) v.scrollBy(y - v.scrollY - viewH / 3);
  v.drawNow();
  v.canvas.scrollIntoView({block: 'center'});
  const r = v.canvas.getBoundingClientRect();
  const a = Math.max(v.xOf(ev.start), v.labelW), b = Math.min(v.xOf(ev.end), v.W - 9);
  const [sy, h] = v.laneScreen(ev.lane, ev.depth);
  return {x: r.left + (a + b) / 2, y: r.top + sy + h / 2, w: b - a}; }"""

TIMINGS_JS = """(i) => { const v = window.__tfprofViewers[i]; const q = (a) => {
  const s = [...a].sort((x, y) => x - y); if (!s.length) return null;
  return {n: s.length, p50: s[Math.floor(s.length / 2)], p95: s[Math.floor(s.length * 0.95)],
  max: s[s.length - 1]}; };
  return {frames: q(v.stats.frames), draws: q(v.stats.draws),
    round_trips: q(v.stats.roundTrips)}; }"""


def write_notebook(path: pathlib.Path, cells: list[str]) -> None:
    import nbformat

    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(src) for src in cells]
    nb.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    nbformat.write(nb, path)


def synthetic_cells(n: int) -> list[str]:
    """Notebook cells that make an ``n``-event synthetic run in the kernel and show it."""
    bench = pathlib.Path(__file__).resolve().parents[2] / "benchmarks"
    return [
        f"import sys\nsys.path.insert(0, {str(bench)!r})\n"
        "from synthetic_events import synthetic_events\n"
        "from bench_trace_viewer import StubRun\n"
        "from tfprof_widgets.views.trace.viewer import timeline as trace_viewer, trace_model\n"
        f"run = StubRun(synthetic_events({n}))\n"
        "trace_model(run);",
        "trace_viewer(run)",
    ]


def drawn_window(page) -> tuple[float, float]:
    """The window the first viewer last drew (µs)."""
    a, b = page.locator(".tfpv").first.get_attribute("data-window").split(",")
    return float(a), float(b)


def zoom_then_pan(page, zoom_notches: int = 5, pan_ms: int = 2500):
    """Wheel-zoom at the canvas (2x a notch), wait for the kernel, then hold d to pan while
    the frame and round-trip timings are recorded afresh. Returns the drawn window before
    and after the pan."""
    box = page.locator(".tfpv canvas").bounding_box()
    page.mouse.move(box["x"] + box["width"] * 0.6, box["y"] + 120)
    for _ in range(zoom_notches):
        page.mouse.wheel(0, -100)
        page.wait_for_timeout(200)
    wait_settled(page)
    page.evaluate(
        "() => { const v = window.__tfprofViewers[0]; v.canvas.focus();"
        " v.stats.frames = []; v.stats.roundTrips = []; }"
    )
    before = drawn_window(page)
    page.keyboard.down("d")
    page.wait_for_timeout(pan_ms)
    page.keyboard.up("d")
    page.wait_for_timeout(50)
    return before, drawn_window(page)


def run_all_and_time(page, n_viewers: int = 1, timeout_ms: int = 300_000) -> dict:
    """Run every cell; wait until the kernel is idle again and ``n_viewers`` viewers drew.
    Returns the page times (performance.now) of the kernel going idle and of each first
    draw, so that draw-after-idle can be measured."""
    page.evaluate("""() => { window.__idle = []; const k = window.jupyterapp.shell
      .currentWidget.sessionContext.session.kernel;
      k.statusChanged.connect((_, s) => {
        if (s === 'idle') window.__idle.push(performance.now()); });
      window.jupyterapp.commands.execute('notebook:run-all-cells'); }""")
    page.wait_for_function(
        "(n) => (window.__tfprofViewers || []).filter(v => v.stats.firstDraw).length >= n",
        arg=n_viewers,
        timeout=timeout_ms,
    )
    page.wait_for_function(
        "() => window.jupyterapp.shell.currentWidget.sessionContext.session.kernel.status"
        " === 'idle' && window.__idle.length > 0",
        timeout=timeout_ms,
    )
    return page.evaluate("""() => ({idle: window.__idle.slice(),
      draws: window.__tfprofViewers.map(v => v.stats.firstDraw)})""")


def wait_settled(page, index: int = 0, timeout_ms: int = 30_000) -> dict:
    """Wait until the viewer has no request in flight; return its state."""
    page.wait_for_function(
        f"() => {{ const v = window.__tfprofViewers[{index}]; return v && !v.fetching; }}",
        timeout=timeout_ms,
    )
    page.wait_for_timeout(150)
    return page.evaluate(STATE_JS, index)


def save_and_shut_down(page) -> None:
    """Save the open notebook (its outputs, no widget state: JupyterLab's default) and shut
    its kernel down, as a user closing it for the day does."""
    page.evaluate("() => window.jupyterapp.commands.execute('docmanager:save')")
    page.wait_for_function(
        "() => !window.jupyterapp.shell.currentWidget.context.model.dirty", timeout=30_000
    )
    page.evaluate("() => window.jupyterapp.shell.currentWidget.sessionContext.shutdown()")
    page.wait_for_function(
        "() => !window.jupyterapp.shell.currentWidget.sessionContext.session", timeout=30_000
    )


def reopen_collecting_console(p, port: int, notebook: str, n_viewers: int):
    """Open a saved notebook in a fresh browser (a new kernel starts; the old widgets' models
    are gone) and wait until ``n_viewers`` offline viewers drew and each live-widget output
    gave up. Returns (browser, page, console messages [(type, text)]) with every message
    logged since the page opened."""
    messages = []

    def listen(page) -> None:
        page.on("console", lambda m: messages.append((m.type, m.text)))
        page.on("pageerror", lambda e: messages.append(("pageerror", str(e))))

    browser, page = open_lab_page(p, port, notebook, listen)
    page.wait_for_function(
        "(n) => (window.__tfprofViewers || []).filter(v => v.stats.firstDraw).length >= n"
        " && [...document.querySelectorAll('.jp-OutputArea-output')].filter(e =>"
        " /model not found/.test(e.textContent)).length >= n",
        arg=n_viewers,
        timeout=120_000,
    )
    page.wait_for_timeout(2000)  # any late rerender of the widget outputs logs by now
    return browser, page, messages
