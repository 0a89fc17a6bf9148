"""IPython magics: ``%load_ext tfprof_widgets`` registers ``%%tfprof`` and ``%tfprof``."""

from .magics import TfprofMagics

__all__ = ["TfprofMagics"]
