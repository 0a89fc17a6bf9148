"""How a DataFrame follows one of the schema's tables (:mod:`tfprof_widgets.schema`, which
offers every name here too): an empty frame of a table, a frame conformed to it, how a frame
differs from it; and the text columns' helpers, categoricals of text and names cut to
:data:`MAX_NAME_CHARS`."""

from __future__ import annotations

import numpy as np
import pandas as pd


def dtypes(table: dict[str, tuple[str, str]]) -> dict[str, str]:
    """Column name -> dtype string for one of the tables above."""
    return {name: spec[0] for name, spec in table.items()}


_EMPTY: dict[int, tuple[dict, pd.DataFrame]] = {}


def empty(table: dict[str, tuple[str, str]]) -> pd.DataFrame:
    """An empty DataFrame with the table's columns and dtypes."""
    made = _EMPTY.get(id(table))
    if made is None or made[0] is not table:
        made = _EMPTY[id(table)] = (
            table,
            pd.DataFrame({c: pd.Series(dtype=t) for c, (t, _) in table.items()}),
        )
    return made[1].copy()


# The most characters a name or text of a capture keeps (an op name, a source file, an
# instruction's name): a hostile name of megabytes was copied into every table and view
# that shows it (the peak and the report it made: docs/speed.md). The rest is cut, an
# ellipsis marks the cut.
MAX_NAME_CHARS = 64 << 10
ELLIPSIS = "\u2026"


def cut_text(text: str, limit: int = MAX_NAME_CHARS) -> tuple[str, bool]:
    """(``text`` cut to its first ``limit`` characters and an ellipsis, whether it was
    cut): a capture's names and texts are kept at most this long."""
    if len(text) <= limit:
        return text, False
    return text[:limit] + ELLIPSIS, True


def text_categorical(values) -> pd.Categorical:
    """A categorical of text values (a sequence or object array of str) whose categories
    are the values present, sorted: what ``astype("category")`` makes of them. Made from one
    dict of the few distinct values (pandas' factorize and its index checks cost more than
    the values on the small tables of XLA programs); values that are not all str (missing
    ones) take pandas' own way, with the same result."""
    values = values.tolist() if isinstance(values, np.ndarray) else values
    distinct = set(values)
    if not distinct or not all(type(v) is str for v in distinct):
        codes, uniques = pd.factorize(np.array(values, object), sort=True)
        return pd.Categorical.from_codes(codes, dtype=pd.CategoricalDtype(pd.Index(uniques)))
    names = sorted(distinct)
    at = dict(zip(names, range(len(names))))
    codes = np.fromiter(map(at.__getitem__, values), np.int64, len(values))
    # Codes made here are in range: nothing for from_codes to validate.
    dtype = pd.CategoricalDtype(pd.Index(names))
    return pd.Categorical.from_codes(codes, dtype=dtype, validate=False)


def conform(df: pd.DataFrame, table: dict[str, tuple[str, str]]) -> pd.DataFrame:
    """``df`` with the table's columns, in its order and with its dtypes."""
    # A new frame either way (the caller's stays its own); selecting columns copies them,
    # a shallow copy does not (pandas copies on write).
    df = df[list(table)] if list(df.columns) != list(table) else df.copy(deep=False)
    # The columns are the table's, in its order: their dtypes in one read (a column lookup
    # per name costs more than the small tables it conforms).
    wrong = {
        c: t
        for (c, (t, _)), dtype in zip(table.items(), df.dtypes.tolist())
        if not _same_dtype(dtype, t)
    }
    return df.astype(wrong) if wrong else df


def mismatches(df: pd.DataFrame, table: dict[str, tuple[str, str]]) -> list[str]:
    """How ``df`` differs from the table (columns, order, dtypes); empty when it matches."""
    if list(df.columns) != list(table):
        return [f"columns {list(df.columns)} instead of {list(table)}"]
    return [
        f"{c}: {df[c].dtype} instead of {t}"
        for c, (t, _) in table.items()
        if not _same_dtype(df[c].dtype, t)
    ]


def _same_dtype(dtype, name: str) -> bool:
    if name == "category":
        return isinstance(dtype, pd.CategoricalDtype)
    if name == "str":  # pandas' string dtype; object columns of str before pandas 3
        return str(dtype) in ("str", "string") or (
            pd.api.types.is_object_dtype(dtype) and not _PANDAS_STR
        )
    return str(dtype) == name


_PANDAS_STR = str(pd.Series(["x"]).dtype) == "str"
