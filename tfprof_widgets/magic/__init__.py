"""IPython magics: ``%load_ext tfprof_widgets`` registers ``%%tfprof`` and ``%tfprof``;
:mod:`.errors` shows a ProfileError in a notebook as its one line."""

from __future__ import annotations

__all__ = ["TfprofMagics"]


def __getattr__(name: str):
    # The magics import IPython: only when asked for (``import tfprof_widgets`` in a kernel
    # imports this package for :mod:`.errors`, and a script not at all).
    if name == "TfprofMagics":
        from .magics import TfprofMagics

        return TfprofMagics
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
