"""Views: a Run's tools as interactive plots and tables, in a notebook, an exported notebook and
a report.

Every view is a function of a loaded run (views never open files), also reachable from the
run itself: ``tfprof_widgets.views.op_stats(run)`` is ``run.view.op_stats()``.

The views, what each shows, the framework whose tool it is and the report's section are one
table, :data:`.registry.VIEWS`: this package exports what it lists, ``run.view`` offers the
same functions with the same options (:mod:`.accessor`) and a report holds its sections in
its order.

Each module is named ``<what>_view`` so that the function exported here never hides it. All
views fill one template, :class:`.base.View` (how a view reaches a notebook, an exported
notebook and a report is explained there); ``tables`` is the table component, ``names`` the
short kernel and op names, ``_pies`` the pies. Two rooms of their own: :mod:`.trace`, the
trace viewer (``timeline``), and :mod:`.page`, the page plumbing every view shares (the
viewer script, static images, the kernel's warm-up).
"""

from __future__ import annotations

import importlib

from .registry import VIEWS

# Each view's module, imported when the view is first asked for: ``import tfprof_widgets``
# and ``tfprof_widgets.views`` import no plotly (the first view does, and the kernel's
# preload may have done it already: see :mod:`.page.preload`).
_MODULES = {"View": "base", **{v.name: v.module for v in VIEWS}}


def __getattr__(name: str):
    module = _MODULES.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from .page import preload

    preload.wait()  # one thread imports plotly at a time (no import-lock races)
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value  # found directly from now on
    return value


def __dir__() -> list[str]:
    """The views only: ``tw.views.`` + Tab lists what a user calls, not the modules (they
    stay importable by name)."""
    return sorted(__all__)


__all__ = sorted(_MODULES)
