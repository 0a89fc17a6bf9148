"""Text columns of the XLA tables, made without pandas' per-row string conversions (a
categorical's few categories are turned to text once; a new categorical of text is
:func:`tfprof_widgets.schema.text_categorical`). The tables are small, but the HLO Stats
tool and the roofline convert a dozen columns each: done row by row, that was most of their
time."""

from __future__ import annotations

import numpy as np
import pandas as pd


def text(column: pd.Series) -> np.ndarray:
    """A column's values as text (object array), as ``column.astype(str)`` gives them."""
    return text_at(column, slice(None))


def text_at(column: pd.Series, rows, missing: str = "nan") -> np.ndarray:
    """:func:`text` of ``column`` at ``rows`` only (the whole column is never turned into
    text); a missing value reads ``missing`` ("nan", as ``astype(str)`` writes it)."""
    if isinstance(column.dtype, pd.CategoricalDtype):
        names = np.append(np.asarray(column.cat.categories.astype(str), object), missing)
        return names[np.asarray(column.cat.codes, np.int64)[rows]]
    out = column.astype(str).to_numpy(object)[rows]
    if missing != "nan":
        out[column.isna().to_numpy(bool)[rows]] = missing
    return out


def ranks(column: pd.Series) -> tuple[np.ndarray, np.ndarray]:
    """(rank of each value in text order, the distinct texts in that order): a sort key
    that orders rows as sorting the column's text does."""
    if isinstance(column.dtype, pd.CategoricalDtype) and not column.isna().any():
        names = np.asarray(column.cat.categories.astype(str), object)
        if len(names) < 2 or bool((names[:-1] < names[1:]).all()):
            return np.asarray(column.cat.codes, np.int64), names
    uniq, inverse = np.unique(text(column), return_inverse=True)
    return inverse.astype(np.int64), uniq


def with_columns(df: pd.DataFrame, new: dict) -> pd.DataFrame:
    """``df.assign(**new)`` (a column of ``new`` replaces the one of that name in place, the
    others come after ``df``'s), made as one frame: adding columns one at a time re-makes
    the columns' index each time, the most of a small table's cost."""
    cols = {c: (new[c] if c in new else df[c].array) for c in df.columns}
    cols.update((c, v) for c, v in new.items() if c not in cols)
    return pd.DataFrame(cols, index=df.index)


def refused_costs_note(run, hosts: np.ndarray, ops: np.ndarray) -> None:
    """Warn (once, in ``run.warnings``) that the cost stats (``flops``, ``model_flops``,
    ``bytes_accessed``) of these ops were refused: a count of 2^63 or more, below 0 or not
    finite cannot be right (libtpu writes uint64; read as int64 it turned negative). The
    first few ops are named; each refused cost counts as 0."""
    first = ", ".join(f"'{str(o)[:200]}' ({h})" for h, o in zip(hosts[:3], ops[:3]))
    more = f" and {len(ops) - 3} more" if len(ops) > 3 else ""
    note = (
        f"TPU ops {first}{more}: a cost stat (flops, model_flops or bytes_accessed) of 2^63 "
        "or more, below 0 or not finite was refused (counted as 0)"
    )
    note_once(run, note)


def note_once(run, note: str) -> None:
    """Add ``note`` to ``run.warnings`` (what the run tells its user about its data) unless
    it is there already: an analysis computed again warns once."""
    warnings = getattr(run, "warnings", None)
    if isinstance(warnings, list) and note not in warnings:
        warnings.append(note)


__all__ = ["note_once", "ranks", "refused_costs_note", "text", "text_at", "with_columns"]
