"""``run.view``: a run's views, named and called like the functions of
:mod:`tfprof_widgets.views`.

``run.view.op_stats()`` is ``tfprof_widgets.views.op_stats(run)``, the way xarray puts its
plots under ``da.plot``. The methods are made from the table of views
(:data:`.registry.VIEWS`) when this module is imported (the run imports it when ``run.view``
is first used): each has its function's signature without the run, and its docstring, so
``help(run.view)`` and a notebook's completion show every option.
"""

from __future__ import annotations

import functools
import inspect

from .registry import VIEWS, ViewSpec

__all__ = ["ViewAccessor"]


class ViewAccessor:
    """The views of one run; each method takes the options of its function in ``views``."""

    def __init__(self, run) -> None:
        self._run = run

    def __repr__(self) -> str:
        names = [n for n in dir(self) if not n.startswith("_")]
        return f"<views of run {self._run.name!r}: {', '.join(names)}>"


def _method(spec: ViewSpec):
    """``spec``'s function as a method of :class:`ViewAccessor`: the run passed first."""
    function = spec.function

    @functools.wraps(function)
    def method(self, *args, **kwargs):
        return function(self._run, *args, **kwargs)

    self_param = inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD)
    sig = spec.signature
    method.__signature__ = sig.replace(parameters=[self_param, *sig.parameters.values()])
    method.__doc__ = f"{spec.title}\n\n{inspect.getdoc(function) or ''}".rstrip()
    method.__qualname__ = f"ViewAccessor.{spec.name}"
    del method.__wrapped__  # inspect reads __signature__, not the function's (run first)
    return method


for _spec in VIEWS:
    setattr(ViewAccessor, _spec.name, _method(_spec))
del _spec
