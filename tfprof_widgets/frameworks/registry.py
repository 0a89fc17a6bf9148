"""Which frameworks produced a run, and their rules asked together.

:func:`framework_of` looks at what a run holds (stat, line and event names: a few thousand
strings, never every event) and asks each known framework whether the run is its own. A run
can be several at once: TensorFlow with XLA clusters, or JAX programs beside PyTorch ones.
The neutral analyses ask the result, a :class:`RunFrameworks`, which asks its frameworks in
order and combines their answers by the rule each hook declares in :mod:`.base`. A run of no
known framework (a browser's Chrome trace, say) takes XProf's rules, which are TensorFlow's.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
from collections.abc import Callable

from ..analysis.memo import per_run
from . import pytorch, tensorflow, xla
from .base import ATTRIBUTES, Framework, RunNames, hooks

# The framework packages, the one list of them, in the order their rules are asked: TF first,
# so that TF with XLA clusters reads as TF ops. Each names its rules (FRAMEWORK) and the
# analyses only its captures have (ANALYSES).
PACKAGES = (tensorflow, xla, pytorch)
FRAMEWORKS: tuple[Framework, ...] = tuple(p.FRAMEWORK for p in PACKAGES)
# The rules of a run that no framework claims: XProf's.
_FALLBACK: tuple[Framework, ...] = (FRAMEWORKS[0],)


@dataclasses.dataclass(frozen=True)
class _Found:
    """Which frameworks a run holds; :class:`RunFrameworks` adds their hooks."""

    found: tuple[Framework, ...]

    @property
    def rules(self) -> tuple[Framework, ...]:
        return self.found or _FALLBACK

    @property
    def primary(self) -> Framework:
        return self.rules[0]

    @property
    def name(self) -> str:
        return "+".join(f.name for f in self.found) or "unknown"

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(f.name for f in self.found)

    @property
    def title(self) -> str:
        return " with ".join(f.title for f in self.found) or "unknown framework"

    def __contains__(self, name: str) -> bool:
        return name in self.names

    def __str__(self) -> str:
        return self.name

    def __repr__(self) -> str:
        return f"<frameworks {self.name}>"


def _asks_together(name: str, method: Callable, rule: Callable) -> Callable:
    """RunFrameworks' ``name``: ``method`` asked of every framework of the run, answers
    combined by ``rule``."""
    signature = inspect.signature(method)

    def ask(f: Framework, *args):
        return getattr(f, name)(*args)

    @functools.wraps(method)
    def together(self: RunFrameworks, *args, **kwargs):
        if kwargs:  # the rules take positional arguments only
            args = signature.bind(self, *args, **kwargs).args[1:]
        return rule(self.rules, ask, *args)

    together.__doc__ = f"{method.__doc__}\n\nA run's frameworks together: {rule.__doc__}"
    together.__module__, together.__qualname__ = __name__, f"RunFrameworks.{name}"
    return together


def _attribute_together(name: str, rule: Callable) -> property:
    def together(self: RunFrameworks):
        return rule([getattr(f, name) for f in self.rules])

    together.__doc__ = f"``{name}`` of the run's frameworks: {rule.__doc__}"
    return property(together)


# Every hook and attribute that base declares, asked of the run's frameworks by its rule.
RunFrameworks = type(
    "RunFrameworks",
    (_Found,),
    {
        "__module__": __name__,
        "__doc__": """The frameworks of one run (``run.framework``) and their rules, asked in order.

    ``found``: the frameworks whose events the run holds (empty where none is known);
    ``name``: their names joined by '+' ('tensorflow+xla'), or 'unknown'; ``title``: how
    the views name them ('TensorFlow with XLA'). Every hook of :class:`~.base.Framework`
    (:func:`~.base.hooks`) and attribute (:data:`~.base.ATTRIBUTES`), answered by the
    run's frameworks together as the hook declares.
    """,
        **{n: _asks_together(n, m, m.combine) for n, m in hooks().items()},
        **{n: _attribute_together(n, r) for n, r in ATTRIBUTES.items()},
    },
)


def frameworks_in(run) -> RunFrameworks:
    """The frameworks whose events ``run`` holds (not cached: for a run being built)."""
    names = RunNames.of(run)
    return RunFrameworks(tuple(f for f in FRAMEWORKS if f.present(names)))


@per_run
def framework_of(run) -> RunFrameworks:
    """The run's frameworks and their rules (computed once per run)."""
    return frameworks_in(run)


def rules_of(holder) -> RunFrameworks:
    """The frameworks of a run, or of any holder of a run's tables (a pod) through its
    ``framework`` attribute; XProf's rules for one that names none."""
    found = getattr(holder, "framework", None)
    return found if isinstance(found, RunFrameworks) else RunFrameworks(())
