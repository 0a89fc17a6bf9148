"""How several frameworks' answers to one hook make the run's answer.

A run can hold several frameworks (TF with XLA clusters; JAX beside PyTorch), asked in the
order of :data:`~.registry.FRAMEWORKS`. Each hook of :class:`~.base.Framework` names one of
these rules (:func:`~.base.hook`), and :class:`~.registry.RunFrameworks` applies it, so a new
hook is declared in ``base`` alone.

A rule for a method is ``rule(frameworks, ask, *args)``: ``ask(f, *args)`` is framework
``f``'s answer; a rule asks lazily, so that "first" stops at the first answer. A rule for a
class attribute (:data:`~.base.ATTRIBUTES`) is ``rule(values)``, the frameworks' values in
order.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import pandas as pd

UNKNOWN_OP = "unknown"  # the category of a name that is no op of any framework

Ask = Callable[..., object]


# -- methods --------------------------------------------------------------------------------
def primary(frameworks: Sequence, ask: Ask, *args):
    """The first framework's answer alone (the run's primary framework decides)."""
    return ask(frameworks[0], *args)


def first(frameworks: Sequence, ask: Ask, *args):
    """The first answer that is not None (None where every framework answers None)."""
    for f in frameworks:
        found = ask(f, *args)
        if found is not None:
            return found
    return None


def first_marking(frameworks: Sequence, ask: Ask, *args):
    """The first answer ``(is_marker, ...)`` that marks any event (None where none does)."""
    for f in frameworks:
        found = ask(f, *args)
        if found is not None and found[0].any():
            return found
    return None


def any_true(frameworks: Sequence, ask: Ask, *args) -> bool:
    """True where some framework says so (asked until one does)."""
    return any(ask(f, *args) for f in frameworks)


def each_any(frameworks: Sequence, ask: Ask, *args) -> np.ndarray:
    """Per element (a bool array each): true where some framework says so."""
    return np.logical_or.reduce([ask(f, *args) for f in frameworks])


def summed(frameworks: Sequence, ask: Ask, *args) -> tuple[float, ...]:
    """Element-wise sum of the frameworks' tuples of numbers."""
    answers = [ask(f, *args) for f in frameworks]
    return tuple(float(sum(parts)) for parts in zip(*answers))


def collected(frameworks: Sequence, ask: Ask, *args) -> list:
    """Every non-empty answer, in order (None and empty frames left out)."""
    found = (ask(f, *args) for f in frameworks)
    return [a for a in found if a is not None and len(a)]


def chained(frameworks: Sequence, ask: Ask, *args):
    """The last argument passed through every framework in turn (each keeps what it keeps)."""
    *head, value = args
    for f in frameworks:
        value = ask(f, *head, value)
    return value


def rows_and_idle(frameworks: Sequence, ask: Ask, *args) -> tuple[pd.DataFrame, pd.Series]:
    """``(rows, idle)`` answers: the rows of every framework concatenated, idle summed per
    host."""
    tables = [t for t in (ask(f, *args) for f in frameworks) if len(t[0])]
    if not tables:
        return pd.DataFrame(), pd.Series(dtype=float)
    rows = pd.concat([t[0] for t in tables], ignore_index=True)
    idle = pd.concat([t[1] for t in tables]).groupby(level=0).sum()
    return rows, idle


def first_known_op(frameworks: Sequence, ask: Ask, names, memo=None) -> pd.DataFrame:
    """Op-name tables: each name by the first framework that knows it as an op (category
    not 'unknown')."""
    out = ask(frameworks[0], names, memo)
    for f in frameworks[1:]:
        unknown = (out["category"] == UNKNOWN_OP).to_numpy()
        if not unknown.any():
            break
        other = ask(f, names, memo)
        known = unknown & (other["category"] != UNKNOWN_OP).to_numpy()
        out.loc[known] = other.loc[known]
    return out


def filled(frameworks: Sequence, ask: Ask, *args):
    """Per element: the first framework's non-missing answer (None where none answers)."""
    out = None
    for f in frameworks:
        found = ask(f, *args)
        if found is None:
            continue
        out = found if out is None else np.where(pd.isna(out), found, out)
    return out


def owner_of_op_type(frameworks: Sequence, ask: Ask, name: str, op_type: str):
    """The answer of the first framework that lists ``op_type`` among its input op types,
    else the primary framework's."""
    for f in frameworks:
        if op_type in f.input_op_types:
            return ask(f, name, op_type)
    return ask(frameworks[0], name, op_type)


# -- class attributes -----------------------------------------------------------------------
def first_value(values: Sequence):
    """The primary framework's value."""
    return values[0]


def any_value(values: Sequence) -> bool:
    """True where some framework's value is."""
    return any(values)


def union(values: Sequence) -> tuple:
    """Every framework's items, each once, in the frameworks' order."""
    return tuple(dict.fromkeys(item for v in values for item in v))


def merged(values: Sequence) -> dict:
    """The frameworks' dicts merged; where two name the same key, the earlier one's value."""
    out: dict = {}
    for v in reversed(values):
        out.update(v)
    return out
