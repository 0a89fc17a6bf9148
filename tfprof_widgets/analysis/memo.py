"""The analyses' memo cache: what several analyses of one run need, computed once per run.

The analyses are plain functions of a run's tables, and several of them start from the same
intermediate results (the parsed op names, the step database, each event's line and plane).
:func:`per_run` memoises such a function on the run, so that the overview, the input
pipeline and the op table share them instead of each computing them again;
:meth:`tfprof_widgets.Run.clear_cache` forgets them with the analyses.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")

CACHE_ATTRIBUTE = "_analysis_memo"


def shared(run) -> dict:
    """The run's cache of shared results (key -> value), made when first asked for;
    :meth:`~tfprof_widgets.Run.clear_cache` drops it whole."""
    return run.__dict__.setdefault(CACHE_ATTRIBUTE, {})


def once(run, key: object, compute: Callable[[], T]) -> T:
    """``compute()`` the first time ``key`` is asked for on this run, then what it gave."""
    cache = shared(run)
    if key not in cache:
        cache[key] = compute()
    return cache[key]


def per_run(fn: Callable[..., T]) -> Callable[..., T]:
    """Memoise ``fn(run)`` on the run (keyed by the function)."""
    key = f"{fn.__module__}.{fn.__qualname__}"

    @functools.wraps(fn)
    def wrapper(run) -> T:
        return once(run, key, lambda: fn(run))

    def seed(run, value: T) -> None:
        """Keep ``value`` as ``fn(run)`` (a result the run already computed while it was
        built, equal to what ``fn`` gives; :meth:`~tfprof_widgets.Run.clear_cache`
        forgets it like the others)."""
        shared(run)[key] = value

    wrapper.seed = seed
    return wrapper


def tool_data_source(run):
    """The run's tool data (:class:`~tfprof_widgets.analysis.tool_data.ToolData`) when it is
    the source of its tables (a run without a trace), else None."""
    td = getattr(run, "tool_data", None)
    return td if td is not None and td.is_source else None
