"""Warm-up of what the first view needs, in a kernel only: plotly's figure classes take about a
second to import and validate a first figure (docs/speed.md), which would otherwise land on the
first view's cell. ``import tfprof_widgets`` in an IPython kernel starts a daemon thread that
imports them while the user's next cells load a run; scripts, the command line and tests
(no kernel) import plotly only when a view is made. ``TFPROF_WIDGETS_PRELOAD=0`` turns it
off, and with it the viewer script sent to the page at the first ``load()``
(:func:`viewer_ahead`). The views wait for the thread (:func:`wait`) before importing
anything of plotly's, so only one thread imports it at a time.
"""

from __future__ import annotations

import os
import threading

from ... import _kernel

__all__ = ["start", "viewer_ahead", "wait"]

_thread: threading.Thread | None = None


def _warm() -> None:
    try:
        import plotly.graph_objects as go

        # The first figure validates through plotly's validators, imported on first use.
        go.Figure(go.Bar(x=[0], y=[0]), layout=dict(title="warm-up")).to_plotly_json()
        go.Figure(go.Pie(labels=["a"], values=[1])).to_plotly_json()
        # The views' static image combines their figures in subplots.
        from plotly.subplots import make_subplots

        make_subplots(rows=1, cols=2, specs=[[{"type": "domain"}, {"type": "xy"}]])
        from . import display, lib  # the viewer script is read and joined once

        display.viewer_lib()
        if lib.embed_each():  # and packed, where every output carries it (Colab)
            lib.packed_lib()
    except Exception:  # noqa: BLE001 - a warm-up only: the view itself reports any error
        pass


def _on() -> bool:
    """In a notebook's kernel, and TFPROF_WIDGETS_PRELOAD is not 0."""
    return os.environ.get("TFPROF_WIDGETS_PRELOAD") != "0" and _kernel.in_kernel()


def start() -> None:
    """Start the warm-up once, in a kernel, unless TFPROF_WIDGETS_PRELOAD=0."""
    global _thread
    if _thread is not None or not _on():
        return
    _thread = threading.Thread(target=_warm, name="tfprof_widgets-preload", daemon=True)
    _thread.start()


def wait() -> None:
    """Let the warm-up finish (if one runs) before this thread imports plotly itself."""
    t = _thread
    if t is not None and t.is_alive() and t is not threading.current_thread():
        t.join()


def viewer_ahead() -> None:
    """At a ``load()``: in a kernel, the viewer script goes to the page now, the first time
    (:func:`.lib.prefetch`), so that a fresh page has it before a view."""
    if not _on():
        return
    from . import lib

    lib.prefetch()
