"""Typed stat columns: one stat of a long stats table, as values aligned with its owners.

Events, planes and event metadata carry their stats in long tables that share the value
columns of :data:`tfprof_widgets.schema.STAT_VALUE_COLUMNS`: ``stat`` (the name), ``kind``
(one of :data:`KINDS`), ``int_value``, ``float_value`` and ``str_value``. This module is the
one place that turns the rows of one stat into a typed column (one value per owner: event,
plane or metadata row), whichever way the caller needs it:

* :func:`typed`: the stat as its own type (``Int64``/``UInt64``, float64 or a categorical),
  what ``Run.stat()`` returns;
* :func:`numbers`, :func:`floats`, :func:`strings`: numpy arrays plus a "present" mask, for
  analyses that need plain arrays;
* :func:`categorical`: a string stat as a categorical built from the table's codes;
* :func:`values`: each row's value as a Python object (an event's details, a plane's options).

A table is a run's :class:`~tfprof_widgets.stat_store.StatStore` (``Run.stat_store``: one
stat costs only its own rows), a long DataFrame (``Run.event_stats``, owners in its ``event``
column, or any table with an ``owner`` array given) or the readers' ``StatRows`` (same fields
as arrays, with ``kind`` as int8 codes into :data:`KINDS`). When an owner carries a stat twice,
the last row wins. Nothing here imports the readers or the analyses: both use it.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .stat_store import KIND_CODE, KINDS, StatStore

__all__ = [
    "KINDS",
    "KIND_CODE",
    "categorical",
    "counts",
    "floats",
    "numbers",
    "present",
    "select",
    "strings",
    "typed",
    "values",
]

_INT, _UINT, _DOUBLE, _STR = (KIND_CODE[k] for k in ("int", "uint", "double", "str"))


class _Rows:
    """The rows of one stat, as arrays: owner, kind code, int, float and str values."""

    def __init__(self, stats, name: str, owner) -> None:
        if isinstance(stats, StatStore):
            cols = stats.rows(name)
            self.owner = cols.owner
            self.kind = cols.kind
            self.int_value = cols.int_value
            self.float_value = cols.float_value
            self._str = (cols, None)
        elif isinstance(stats, pd.DataFrame):
            hit = (stats["stat"] == name).to_numpy() if len(stats) else np.zeros(0, bool)
            idx = np.flatnonzero(hit)  # integer takes: cheap when the stat is rare
            own = stats[owner] if isinstance(owner, str) else owner
            self.owner = np.asarray(own)[idx]
            self.kind = stats["kind"].cat.codes.to_numpy()[idx]
            self.int_value = stats["int_value"].to_numpy()[idx]
            self.float_value = stats["float_value"].to_numpy()[idx]
            self._str = (stats["str_value"], idx)
        else:  # the readers' StatRows
            idx = np.flatnonzero(np.asarray(stats.name == name)) if len(stats) else []
            self.owner = stats.owner[idx]
            self.kind = stats.kind[idx]
            self.int_value = stats.int_value[idx]
            self.float_value = stats.float_value[idx]
            self._str = (stats.str_value, idx)

    @property
    def str_value(self) -> pd.Categorical:
        """The string values (only taken when asked for)."""
        column, idx = self._str
        if idx is None:  # a store's rows
            return column.str_value
        values = column.array if isinstance(column, pd.Series) else column
        return values.take(idx)

    def __len__(self) -> int:
        return len(self.owner)

    def last_per_owner(self) -> _Rows:
        """Only the last row of each owner (the value that wins)."""
        if len(self) < 2:
            return self
        rev = self.owner[::-1]
        _, first_in_rev = np.unique(rev, return_index=True)
        keep = np.sort(len(self) - 1 - first_in_rev)
        if len(keep) == len(self):
            return self
        for f in ("owner", "kind", "int_value", "float_value"):
            setattr(self, f, getattr(self, f)[keep])
        column, idx = self._str
        if idx is None:
            column.keep_strings(keep)
        else:
            self._str = (column, np.asarray(idx)[keep])
        return self


def select(stats: pd.DataFrame, name: str) -> pd.DataFrame:
    """The rows of one stat in a long stats table (a DataFrame), all columns kept."""
    return stats[stats["stat"] == name] if len(stats) else stats


def typed(stats, name: str, n: int, owner="event"):
    """One stat as an array of ``n`` values in its own type, missing where an owner lacks it.

    Integer stats come back as ``Int64`` (``UInt64`` when every value was stored unsigned),
    stats that also hold doubles as float64, anything else (strings, bytes) as a categorical
    (numbers stored among strings keep their value). None when no owner carries the stat.
    """
    rows = _Rows(stats, name, owner)
    if not len(rows):
        return None
    rows = rows.last_per_owner()
    idx = rows.owner
    kinds = set(np.unique(rows.kind).tolist())
    if kinds <= {_INT, _UINT}:
        if kinds == {_UINT}:
            out = pd.array(np.zeros(n, np.uint64), dtype="UInt64")
            out[idx] = rows.int_value.view(np.uint64)
        else:
            out = pd.array(np.zeros(n, np.int64), dtype="Int64")
            out[idx] = rows.int_value
        mask = np.ones(n, bool)
        mask[idx] = False
        out[mask] = pd.NA
        return out
    if kinds <= {_INT, _UINT, _DOUBLE}:
        out = np.full(n, np.nan)
        out[idx] = np.where(
            rows.kind == _DOUBLE, rows.float_value, rows.int_value.astype(np.float64)
        )
        return out
    out = np.full(n, None, object)
    str_rows = np.asarray(rows.str_value, dtype=object)
    num = np.where(rows.kind == _DOUBLE, rows.float_value, rows.int_value)
    out[idx] = np.where(pd.isna(str_rows), num.astype(object), str_rows)
    return pd.Categorical(out)


def numbers(stats, name: str, n: int, owner="event") -> tuple[np.ndarray, np.ndarray]:
    """One stat as int64 values aligned with ``n`` owners, and where it is present.

    Doubles are truncated; strings count when they spell a number (Chrome-trace args), and
    are absent otherwise.
    """
    rows = _Rows(stats, name, owner)
    values_ = np.zeros(n, np.int64)
    present = np.zeros(n, bool)
    if not len(rows):
        return values_, present
    kinds = rows.kind
    v = np.where(kinds == _DOUBLE, np.nan_to_num(rows.float_value).astype(np.int64), rows.int_value)
    owners = rows.owner
    is_str = kinds == _STR
    if is_str.any():
        s = np.asarray(pd.to_numeric(np.asarray(rows.str_value, dtype=object), errors="coerce"))
        ok = is_str & ~np.isnan(s)
        v = np.where(ok, np.nan_to_num(s).astype(np.int64), v)
        keep = ~is_str | ok
        owners, v = owners[keep], v[keep]
    values_[owners] = v
    present[owners] = True
    return values_, present


def counts(stats, name: str, n: int, owner="event") -> tuple[np.ndarray, np.ndarray]:
    """A stat that counts (FLOPs, bytes, sizes) as int64 values aligned with ``n`` owners,
    and which owners' values were refused: a uint64 is read unsigned and a double as it
    is, and a value no count can be (below 0, not finite, 2^63 or more: it would wrap int64)
    is refused, 0 in the values. Absent: 0, not refused."""
    rows = _Rows(stats, name, owner)
    values_ = np.zeros(n, np.int64)
    refused = np.zeros(n, bool)
    if not len(rows):
        return values_, refused
    kinds = rows.kind
    ints = rows.int_value
    as_float = np.where(
        kinds == _DOUBLE,
        rows.float_value,
        np.where(kinds == _UINT, ints.view(np.uint64).astype(np.float64), ints.astype(np.float64)),
    )
    counted = np.isin(kinds, (_INT, _UINT, _DOUBLE))
    bad = counted & ~((as_float >= 0) & (as_float < 2.0**63))
    ok = counted & ~bad
    exact = np.where(kinds == _DOUBLE, 0, ints)  # integers as they are, not through float
    v = np.where(kinds == _DOUBLE, np.where(ok, as_float, 0).astype(np.int64), exact)
    values_[rows.owner[ok]] = v[ok]
    refused[rows.owner[bad]] = True
    return values_, refused


def present(stats, name: str, n: int, owner="event") -> np.ndarray:
    """Which of ``n`` owners carry the stat ``name`` (of any kind)."""
    out = np.zeros(n, bool)
    if isinstance(stats, StatStore):
        for seg in stats.segments(name):
            out[stats.segment_owner(seg)] = True
    else:
        out[_Rows(stats, name, owner).owner] = True
    return out


def floats(stats, name: str, n: int, owner="event") -> tuple[np.ndarray, np.ndarray]:
    """One stat as float64 values (doubles as they are, every other kind from its integer
    value), and where it is present; 0.0 where absent."""
    rows = _Rows(stats, name, owner)
    values_ = np.zeros(n)
    present = np.zeros(n, bool)
    if len(rows):
        values_[rows.owner] = np.where(
            rows.kind == _DOUBLE, rows.float_value, rows.int_value.astype(float)
        )
        present[rows.owner] = True
    return values_, present


def strings(stats, name: str, n: int, owner="event") -> tuple[np.ndarray, np.ndarray]:
    """One stat's string values (object array, None where absent or not a string), and where
    it is present."""
    rows = _Rows(stats, name, owner)
    values_ = np.full(n, None, object)
    present = np.zeros(n, bool)
    if len(rows):
        values_[rows.owner] = np.asarray(rows.str_value, dtype=object)
        present[rows.owner] = True
    return values_, present


def categorical(stats, name: str, n: int, owner="event") -> pd.Categorical:
    """A string stat as a categorical aligned with ``n`` owners, built from the table's codes
    (no per-owner Python objects); missing where an owner lacks it."""
    if isinstance(stats, StatStore):
        segs = stats.segments(name)
        texts = [s for s in segs if stats.texts[s] is not None]
        if len(segs) == 1 and len(texts) == 1:
            # One segment of strings (the usual case): its values are its categories.
            seg = texts[0]
            owner = stats.segment_owner(seg)
            codes = np.full(n, -1, stats.values[seg].dtype if n < 2**31 else np.int64)
            codes[owner] = stats.values[seg]
            cats = pd.Index(np.array(stats.texts[seg], dtype=object), dtype=object)
            out = pd.Categorical.from_codes(codes, dtype=pd.CategoricalDtype(cats))
            once = len(owner) < 2 or bool((owner[1:] != owner[:-1]).all())
            return out if once else out.remove_unused_categories()
        rows = stats.rows(name)
        sv = rows.str_value
        codes = np.full(n, -1, np.int64)
        codes[rows.owner] = np.asarray(sv.codes, np.int64)
        out = pd.Categorical.from_codes(codes, dtype=sv.dtype)
        return out.remove_unused_categories()
    sv = stats["str_value"]
    hit = (stats["stat"] == name).to_numpy()
    codes = np.full(n, -1, np.int64)
    if hit.any():
        own = stats[owner] if isinstance(owner, str) else owner
        codes[np.asarray(own)[hit]] = sv.cat.codes.to_numpy()[hit]
    out = pd.Categorical.from_codes(codes, dtype=sv.dtype)
    return out.remove_unused_categories()


def values(rows: pd.DataFrame) -> list:
    """Each row's value as a Python object: int (uint unsigned), float, str or bytes."""
    out = []
    for k, iv, fv, sv in zip(
        rows["kind"].astype(str), rows["int_value"], rows["float_value"], rows["str_value"]
    ):
        if k in ("str", "bytes"):
            out.append(sv)
        elif k == "double":
            out.append(fv)
        elif k == "uint":
            out.append(int(np.int64(iv).view(np.uint64)))
        else:
            out.append(iv)
    return out
