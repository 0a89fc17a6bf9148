"""Static images of views, for viewers that run no scripts (GitHub, untrusted notebooks,
``nbconvert --sanitize-html``): PNG through kaleido (the optional ``png`` extra).

kaleido drives a Chromium that is already installed (``BROWSER_PATH`` or ``TFPROF_BROWSER``
if set, else ``chromium``/``google-chrome`` on PATH); it never downloads one, and without a
browser or without kaleido the views carry a text summary instead of an image. One browser is
started per process, in the background, and images are built and rendered off the cell's
critical path, after the view's viewer is sent: the view draws at once, its image follows in a
display update, before the cell finishes where the front end reads nothing after it
(nbconvert, nbval), after it in JupyterLab, whose page takes the update whenever it comes and
saves it with the notebook (so the kernel is free for the next cell at once). (Not at a lower
CPU priority: Linux gives a nice-10 process about a tenth of a normal one's share, so on a
loaded machine its 5-16 s start would stretch past :data:`RENDER_TIMEOUT_S`.)
``TFPROF_WIDGETS_PNG=0`` turns the images off.
"""

from __future__ import annotations

import concurrent.futures
import functools
import importlib.util
import json
import os
import shutil
import threading
import time
import warnings
from collections.abc import Callable

import plotly.graph_objects as go
from plotly.io.json import to_json_plotly

from ... import _kernel

__all__ = ["available", "browser_path", "image_spec", "render", "render_async", "wait"]

BROWSERS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "chrome")
WIDTH = 900

# Readable on a light and on a dark page: transparent background, mid-grey text and grid.
STATIC_TEMPLATE = {
    "layout": {
        "paper_bgcolor": "rgba(0,0,0,0)",
        "plot_bgcolor": "rgba(0,0,0,0)",
        "font": {"color": "#808080", "family": "Arial, sans-serif", "size": 12},
        "xaxis": {
            "gridcolor": "rgba(128,128,128,0.3)",
            "zerolinecolor": "rgba(128,128,128,0.6)",
            "linecolor": "rgba(128,128,128,0.6)",
            "automargin": True,
        },
        "yaxis": {
            "gridcolor": "rgba(128,128,128,0.3)",
            "zerolinecolor": "rgba(128,128,128,0.6)",
            "linecolor": "rgba(128,128,128,0.6)",
            "automargin": True,
        },
        "legend": {"bgcolor": "rgba(0,0,0,0)"},
        "title": {"x": 0.01, "xanchor": "left"},
        # The viewer's colours (plotly.js's default, d3's category10).
        "colorway": [
            "#1f77b4",
            "#ff7f0e",
            "#2ca02c",
            "#d62728",
            "#9467bd",
            "#8c564b",
            "#e377c2",
            "#7f7f7f",
            "#bcbd22",
            "#17becf",
        ],
    }
}

_lock = threading.Lock()
_started = False
_pool: concurrent.futures.ThreadPoolExecutor | None = None
_pending: list[concurrent.futures.Future] = []
_hooked = False


def browser_path() -> str | None:
    """The Chromium kaleido will drive, or None."""
    for var in ("TFPROF_BROWSER", "BROWSER_PATH"):
        p = os.environ.get(var)
        if p and os.access(p, os.X_OK):
            return p
    for name in BROWSERS:
        p = shutil.which(name)
        if p:
            return p
    return None


def available() -> bool:
    """Whether views can carry PNG images here (kaleido installed, a browser found, not
    turned off)."""
    if os.environ.get("TFPROF_WIDGETS_PNG", "1").lower() in ("0", "false", "no", "off"):
        return False
    return importlib.util.find_spec("kaleido") is not None and browser_path() is not None


@functools.cache
def _image_template(default: str) -> dict:
    """plotly's default template with :data:`STATIC_TEMPLATE` over it, as plotly.js JSON: the
    template an image's figure had once ``update_layout(template=STATIC_TEMPLATE)`` merged it
    into the default, made once (validated) instead of for every image."""
    import plotly.io as pio

    template = go.layout.Template(pio.templates[default])
    template.update(STATIC_TEMPLATE)
    return json.loads(to_json_plotly(template.to_plotly_json()))


def image_spec(fig: go.Figure) -> dict:
    """What kaleido renders of ``fig``: its plotly.js JSON with the image's template
    (:data:`STATIC_TEMPLATE` over plotly's default), not validated again. A copy through
    ``go.Figure(fig)`` then ``update_layout(template=...)`` validated every property (0.25-0.6
    s of the kernel's time for the trace viewer's 3,000 bars) for the same JSON."""
    import plotly.io as pio

    from .display import fig_json

    spec = json.loads(fig_json(fig))
    spec["layout"]["template"] = _image_template(pio.templates.default)
    return spec


# How long one image may take (the first includes starting the browser), and how often a
# wait checks that kaleido's server thread (which drives the browser) is still alive.
RENDER_TIMEOUT_S = 60.0
_POLL_S = 0.05
# Why images are off for the rest of the process (the browser died), or None.
_broken: str | None = None


class ImageUnavailable(RuntimeError):
    """No image can be rendered here: the browser kaleido drives failed or stopped."""


def _start() -> None:
    global _started
    with _lock:
        if _started:
            return
        import kaleido
        import plotly.io as pio

        # Else every image waits for MathJax from a CDN.
        pio.defaults.mathjax = None
        kaleido.start_sync_server(path=browser_path(), silence_warnings=True)
        # kaleido warns on every call through its server that per-call options are ignored.
        warnings.filterwarnings("ignore", message="The kopts argument is ignored")
        _started = True
        _quiet_server_thread()


_server_error: list[str] = []


def _quiet_server_thread() -> None:
    """kaleido's server thread dies with a traceback on stderr when the browser fails: keep
    its reason for the one warning instead."""
    server, previous = _server_thread(), threading.excepthook

    def hook(args) -> None:
        if server is None or args.thread is not server:
            return previous(args)
        reason = args.exc_value.args[0] if args.exc_value and args.exc_value.args else ""
        _server_error.append(f"{args.exc_type.__name__}: {reason}"[:200])
        return None

    threading.excepthook = hook


def _server_thread():
    """kaleido's server thread (the one that drives the browser), or None if not known."""
    try:
        from kaleido._sync_server import GlobalKaleidoServer
    except ImportError:
        return None
    return getattr(GlobalKaleidoServer(), "_thread", None)


def render(
    fig: go.Figure,
    width: int = WIDTH,
    height: int | None = None,
    timeout: float = RENDER_TIMEOUT_S,
) -> bytes:
    """The figure as PNG bytes (light/dark neutral colours), rendered now.

    Raises :class:`ImageUnavailable` within moments when the browser kaleido drives dies (at
    its start, or under a memory limit: kaleido's server then waits forever), or after
    ``timeout`` seconds; images are then off for the rest of the process."""
    global _broken
    if _broken is not None:
        raise ImageUnavailable(_broken)
    _start()
    import plotly.io as pio

    spec = image_spec(fig)
    h = height or int(spec["layout"].get("height") or 400)
    out: list = []

    def call() -> None:
        # No catch_warnings here: it is not thread-safe, and this thread may never return
        # (its "ignore" would then stay for the whole process); see _start's filter.
        try:
            out.append(
                pio.to_image(spec, format="png", width=width, height=h, scale=1, validate=False)
            )
        except BaseException as exc:  # noqa: BLE001 - handed to the caller
            out.append(exc)

    # A daemon thread: if the browser is gone it waits forever, and must not hold up exit.
    worker = threading.Thread(target=call, name="tfprof-png-call", daemon=True)
    worker.start()
    server = _server_thread()
    deadline = time.monotonic() + timeout
    while worker.is_alive():
        worker.join(_POLL_S)
        if not worker.is_alive():
            break
        if server is not None and not server.is_alive():
            why = f": {_server_error[-1]}" if _server_error else ""
            _broken = f"the browser kaleido drives ({browser_path()}) failed or stopped{why}"
            raise ImageUnavailable(_broken)
        if time.monotonic() > deadline:
            _broken = f"no image from the browser kaleido drives within {timeout:.0f} s"
            raise ImageUnavailable(_broken)
    if isinstance(out[0], BaseException):
        raise out[0]
    return out[0]


# How long after a view is displayed its image work starts. The page draws the view in those
# moments, and kaleido's browser (its start, then each render) would take the CPU from it: on
# two cores, images made views take about twice as long to draw, cold and warm
# (docs/speed.md). The cell ends this much later (it waits for its
# image). TFPROF_WIDGETS_IMAGE_GRACE_S sets another value (0 where no page draws: a batch run).
IMAGE_GRACE_S = 1.0


def _grace() -> float:
    try:
        return max(0.0, float(os.environ.get("TFPROF_WIDGETS_IMAGE_GRACE_S", IMAGE_GRACE_S)))
    except ValueError:
        return IMAGE_GRACE_S


def render_async(
    fig: go.Figure | Callable[[], go.Figure | None], done: Callable[[bytes], None]
) -> concurrent.futures.Future:
    """Render in the background and call ``done(png_bytes)``; a running IPython waits for
    it at the end of the cell (so an executed notebook keeps the image), except in JupyterLab,
    which takes the image after the cell too (:func:`_cell_ends`). ``fig`` may be a
    function that builds the figure (None: no image); it is then called in the background
    too, :data:`IMAGE_GRACE_S` after this call at the earliest."""
    start_at = time.monotonic() + _grace()
    global _pool, _hooked
    with _lock:
        if _pool is None:
            _pool = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="tfprof-png")
        if not _hooked:
            _hooked = _hook_ipython()

    def work():
        time.sleep(max(0.0, start_at - time.monotonic()))
        try:
            figure = fig() if callable(fig) else fig
            if figure is not None:
                done(render(figure))
        except Exception as exc:  # no image, the view still works; say why once
            _warn_once(exc)

    fut = _pool.submit(work)
    _pending[:] = [f for f in _pending if not f.done()]  # JupyterLab's cells never wait
    _pending.append(fut)
    return fut


def wait(*_args) -> None:
    """Block until every image asked for so far has been sent."""
    _pending[:] = [f for f in _pending if not f.done()]
    while _pending:
        fut = _pending.pop(0)
        try:
            fut.result(timeout=120)
        except Exception:  # noqa: BLE001 - reported by the worker already
            pass


def _hook_ipython() -> bool:
    try:
        from IPython import get_ipython

        ip = get_ipython()
    except ImportError:
        return False
    if ip is None:
        return False
    ip.events.register("post_run_cell", _cell_ends)
    return True


def _cell_ends(*_args) -> None:
    """At the end of a cell: wait for its images where the front end reads no output after
    the cell (nbconvert, nbval: the executed notebook keeps the image), not in JupyterLab,
    which takes the image's display update whenever it comes: there the kernel is free for
    the user's next cell at once, where waiting kept it busy seconds after a cold view was
    drawn (issue 42 item 7; docs/speed.md)."""
    if not _kernel.page_keeps_outputs():
        wait()


_warned = False


def _warn_once(exc: Exception) -> None:
    global _warned
    if not _warned:
        _warned = True
        warnings.warn(
            f"tfprof_widgets: no static image for this view ({type(exc).__name__}: {exc}); "
            "exported notebooks show its text summary instead",
            RuntimeWarning,
            stacklevel=2,
        )
