"""Tables of every view: one component, live and static.

A :class:`Table` is a DataFrame with a column layout: numbers first, names last (clipped,
their full text on hover), labels and units for the reader, the raw column names in the CSV (but
:data:`FRAMEWORK_NEUTRAL` keys, exported under their label).
In a page the viewer's table component draws it (sortable by a header click, a filter box,
virtual scrolling for thousands of rows, a CSV of the rows shown, a pie click filters it);
where no script runs, :meth:`Table.static_html` is a fixed-width text table made of the few
tags every sanitizer keeps.

Why our own component and not a library (itables was measured, see the project notes): it is
6 kB instead of 0.97 MB per notebook or report, the same code draws live views, exported
notebooks and reports, and it takes the hooks the views need (pie click → filter, the page's
theme).
"""

from __future__ import annotations

import dataclasses
import html

import numpy as np
import pandas as pd

from ..analysis.results import plural
from .page.display import esc

__all__ = ["Column", "Table", "html_table"]

ROWS_IN_STATIC = 12
STATIC_WIDTH = 100  # characters per line in the static table
# Schema columns named in TensorFlow's words that hold the op of whichever framework made the
# capture (a JAX kernel's HLO op path, a PyTorch operator): their CSV header is their label.
FRAMEWORK_NEUTRAL = frozenset({"tf_op", "tf_op_name"})


@dataclasses.dataclass
class Column:
    """How one column shows.

    ``kind``: ``num`` (``digits`` decimals), ``int``, ``pct``, ``bytes`` (shown in MiB),
    ``bool``, ``text``. ``full``: the column holding the full text of a shortened name (hover
    and CSV). ``color="sign"`` colours positive values as worse (red) and negative as better
    (green). ``hidden`` columns go only to the CSV (and to the filter); ``internal`` ones
    (keys a pie click filters on) to neither. ``ratio=(a, b)``: the column is a / b of two
    other columns, computed in the page (not sent). ``csv``: the column's CSV header
    (default: its name); a column keyed by a TensorFlow schema name that holds any
    framework's op (:data:`FRAMEWORK_NEUTRAL`) exports under its label, so that a JAX or
    PyTorch user's CSV says "op" or "operator", not "tf_op".
    """

    name: str
    label: str | None = None
    kind: str | None = None
    digits: int | None = None
    full: str | None = None
    color: str | None = None
    hidden: bool = False
    internal: bool = False
    title: str | None = None
    missing: str | None = None
    colors: dict | None = None
    ratio: tuple[str, str] | None = None
    csv: str | None = None

    def __post_init__(self) -> None:
        if self.csv is None and self.name in FRAMEWORK_NEUTRAL and self.label:
            self.csv = self.label

    def spec(self) -> dict:
        d = {k: v for k, v in dataclasses.asdict(self).items() if v not in (None, False)}
        return d


def _kind(s: pd.Series) -> str:
    if pd.api.types.is_bool_dtype(s):
        return "bool"
    if pd.api.types.is_integer_dtype(s):
        return "int"
    if pd.api.types.is_numeric_dtype(s):
        return "num"
    return "text"


# Past this magnitude a float64 has no decimals to round away (2^52), and np.round's
# scaling by 10^decimals would overflow to inf near float's limit (1e305 at 4 decimals).
_ROUND_BELOW = 2.0**52


def round_finite(v: np.ndarray, decimals: int) -> np.ndarray:
    """``np.round(v, decimals)`` where that can change a value, ``v`` as it is elsewhere: a
    value above ~1e304 is kept, never made inf by the rounding (the tables' JSON then raised
    "Out of range float values are not JSON compliant")."""
    v = np.asarray(v, dtype=float)
    with np.errstate(over="ignore", invalid="ignore"):
        small = np.abs(v) < _ROUND_BELOW
        return np.where(small, np.round(np.where(small, v, 0.0), decimals), v)


def _encode(s: pd.Series, kind: str, digits: int | None):
    """A column as JSON-able data: numbers rounded for the page, strings dictionary-encoded
    when that is shorter."""
    if kind in ("num", "pct", "bytes"):
        v = pd.to_numeric(s, errors="coerce").to_numpy(dtype=float, na_value=np.nan)
        if kind != "bytes":
            v = round_finite(v, (2 if digits is None else digits) + 2)
        v = np.where(np.isfinite(v), v, np.nan)  # JSON has no inf: shown as missing
        out = v.tolist()
        return [None if x != x else x for x in out] if np.isnan(v).any() else out
    if kind == "int":
        v = pd.to_numeric(s, errors="coerce")
        if pd.api.types.is_integer_dtype(v.dtype) and not pd.api.types.is_bool_dtype(v.dtype):
            if not v.hasnans:  # Python ints already: no per-row check (a 10k-row table)
                return v.tolist()
        return [None if pd.isna(x) else int(x) for x in v.tolist()]
    if kind == "bool":
        if s.dtype == bool:  # numpy's bool has no missing value: no per-row check
            return s.to_numpy().astype(np.int64).tolist()
        return [None if pd.isna(x) else int(bool(x)) for x in s.tolist()]
    if isinstance(s.dtype, pd.CategoricalDtype):
        return _categorical_text(s)
    fast = _plain_text(s)
    if fast is not None:
        return fast
    text = s.astype(object).where(s.notna(), None)
    values = [None if v is None else str(v) for v in text.tolist()]
    cats = pd.Categorical(values)
    return _text_payload([str(c) for c in cats.categories], cats.codes, values)


def _categorical_text(s: pd.Series):
    """:func:`_encode` of a categorical text column from its categories and codes: the
    distinct texts of the categories used, sorted as ``pd.Categorical`` sorts them (code
    point order, as np.unique), and each row's code among them; without the Python string
    per row and the pandas string array that a categorical of the row values costs
    (docs/speed.md)."""
    names = np.array([n if type(n) is str else str(n) for n in s.cat.categories.tolist()], object)
    codes = np.asarray(s.array.codes, np.int64)
    used = np.unique(codes[codes >= 0])
    distinct, inverse = np.unique(names[used], return_inverse=True)
    remap = np.full(len(names) + 1, -1, np.int64)
    remap[used] = inverse
    values = np.append(names, None)[codes]
    return _text_payload(distinct.tolist(), remap[codes], values)


def _plain_text(s: pd.Series):
    """:func:`_encode` of a column of strings and missing values, by np.unique (which sorts
    and numbers the strings as ``pd.Categorical`` does) instead of a pandas categorical of
    Python strings; None where some value is not a string."""
    if not (pd.api.types.is_string_dtype(s.dtype) or pd.api.types.is_object_dtype(s.dtype)):
        return None
    v = s.to_numpy(dtype=object)
    missing = pd.isna(v)
    present = v[~missing] if missing.any() else v
    if not all(type(x) is str for x in present.tolist()):
        return None
    names, inverse = np.unique(present, return_inverse=True)
    codes = np.full(len(v), -1, np.int64)
    codes[~missing] = inverse
    if missing.any():
        v = v.copy()
        v[missing] = None
    return _text_payload(names.tolist(), codes, v)


def _text_payload(names: list[str], codes: np.ndarray, values: list | np.ndarray):
    """A text column's JSON from its sorted distinct ``names`` and each row's code: the
    names front-coded where they are long (op paths share long prefixes: each name as
    (length shared with the previous one, the rest)), dictionary-encoded where that is
    shorter, else the values themselves."""
    if sum(map(len, names)) > 2000:
        return {"fc": _front_code(names), "codes": codes.tolist()}
    if len(names) < len(values) * 0.6:
        return {"cats": names, "codes": codes.tolist()}
    return values.tolist() if isinstance(values, np.ndarray) else values


def _empty(s: pd.Series) -> bool:
    """Whether a column has no text: all missing, or all empty strings."""
    if isinstance(s.dtype, pd.CategoricalDtype):  # by the categories used, not each row
        codes = np.asarray(s.array.codes)
        if not len(codes) or (codes < 0).all():
            return True
        return bool((codes >= 0).all()) and all(
            str(c) == "" for c in s.cat.categories[np.unique(codes)].tolist()
        )
    if pd.api.types.is_string_dtype(s.dtype) or pd.api.types.is_object_dtype(s.dtype):
        v = s.to_numpy(dtype=object)
        missing = pd.isna(v)
        if missing.all():
            return True
        # A missing value among others is not an empty text (its str is not "").
        return not missing.any() and not any(str(x) != "" for x in v.tolist())
    return bool(s.isna().all()) or bool((s.astype(str).str.len() == 0).all())


def _front_code(names: list[str]) -> list:
    out: list = []
    for n, lo in zip(names, _shared_prefixes(names).tolist()):
        out += [lo, n[lo:]]
    return out


# The most code points _shared_prefixes compares as one array (4 bytes each).
_PREFIX_CELLS = 4_000_000


def _shared_prefixes(names: list[str]) -> np.ndarray:
    """Per name: the length of the longest prefix it shares with the name before it (0 for
    the first). All at once on the names as one array of code points (numpy pads each to
    the longest with zeros, which end a shared prefix like a name's end does), instead of a
    bisection on slices per name; names that numpy cannot hold as they are (a NUL, which it
    strips at the end) or too many code points in all take the bisection."""
    width = max(map(len, names), default=0)
    if not names or len(names) * width > _PREFIX_CELLS or any("\0" in n for n in names):
        return np.array([_shared_prefix(a, b) for a, b in zip([""] + names[:-1], names)])
    cells = np.array(names, dtype=f"<U{max(width, 1)}").view(np.uint32).reshape(len(names), -1)
    differ = cells[1:] != cells[:-1]
    first = np.where(differ.any(axis=1), differ.argmax(axis=1), cells.shape[1])
    lengths = np.fromiter(map(len, names), np.int64, len(names))
    return np.r_[0, np.minimum(first, np.minimum(lengths[1:], lengths[:-1]))].astype(np.int64)


def _shared_prefix(prev: str, n: str) -> int:
    """The longest prefix ``n`` shares with ``prev``, by bisection on slices (compared in C),
    not a Python loop over every character of names hundreds of characters long."""
    lo, hi = 0, min(len(n), len(prev))
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if n[:mid] == prev[:mid]:
            lo = mid
        else:
            hi = mid - 1
    return lo


def encode_column(values, kind: str | None = None, digits: int | None = None):
    """One column (a Series, array or list) as the viewer's JSON (see :class:`Table`)."""
    if kind in (None, "text"):
        fast = _strings(values)
        if fast is not None:
            return fast
    s = values if isinstance(values, pd.Series) else pd.Series(values)
    return _encode(s, kind or _kind(s), digits)


def _strings(values) -> list | dict | None:
    """What :func:`_encode` gives a text column, for a numpy array of strings only (a
    plot's hover columns): without making it a pandas string Series first, which cost
    2 ms a column of a thousand rows (ten columns for each allocator of a memory view).
    None for anything else."""
    if not (isinstance(values, np.ndarray) and values.ndim == 1 and values.dtype.kind in "OU"):
        return None
    if values.dtype.kind == "O" and not all(type(v) is str for v in values.tolist()):
        return None
    # np.unique sorts as pd.Categorical does (code point order) and numbers them alike.
    names, codes = np.unique(values.astype(object), return_inverse=True)
    return _text_payload(names.tolist(), codes, values)


class Table:
    """A DataFrame laid out for reading; see the module docstring.

    ``columns``: :class:`Column` or plain names, in display order (put numbers first and the
    name last). Columns of ``df`` not listed still go to the CSV, as hidden columns, when
    ``all_in_csv``. ``sort``: the initial order (column, "asc"/"desc"). ``tree``: (node
    column, parent column) of a tree table, whose rows come in tree order: a header click
    then sorts siblings only, each row staying under its parent.
    """

    def __init__(
        self,
        df: pd.DataFrame,
        columns: list[Column | str],
        *,
        csv: str = "table.csv",
        sort: tuple[str, str] | None = None,
        empty: str = "No rows.",
        all_in_csv: bool = False,
        tree: tuple[str, str] | None = None,
    ) -> None:
        self.df = df.reset_index(drop=True)
        self.columns = [c if isinstance(c, Column) else Column(c) for c in columns]
        for c in self.columns:
            if c.kind is None:
                c.kind = _kind(self.df[c.name])
            if c.kind == "text" and not c.hidden and _empty(self.df[c.name]):
                c.hidden = True  # nothing to read (e.g. no TF op recorded); still in the CSV
        named = {c.name for c in self.columns} | {c.full for c in self.columns if c.full}
        if all_in_csv:
            for name in self.df.columns:
                if name not in named:
                    self.columns.append(Column(name, kind=_kind(self.df[name]), hidden=True))
        self.csv, self.sort, self.empty = csv, sort, empty
        self.tree = tree
        self._payload: dict | None = None

    def __len__(self) -> int:
        return len(self.df)

    def payload(self) -> dict:
        """What the viewer's table component draws (encoded once per table: a table that
        several views or choices show, such as the op table of a run, is not encoded again;
        its rows and columns are set when it is made)."""
        if self._payload is None:
            self._payload = self._encoded()
        return self._payload

    def _encoded(self) -> dict:
        data = {}
        for c in self.columns:
            if c.ratio:
                continue
            data[c.name] = _encode(self.df[c.name], c.kind, c.digits)
            if c.full and c.full not in data:
                data[c.full] = _encode(self.df[c.full], "text", None)
        return {
            "columns": [c.spec() for c in self.columns],
            "data": data,
            "n": len(self.df),
            "sort": list(self.sort) if self.sort else None,
            "csv": self.csv,
            "empty": self.empty,
            **({"tree": list(self.tree)} if self.tree else {}),
        }

    # -- where no script runs ---------------------------------------------------------------
    def static_html(
        self, rows: int = ROWS_IN_STATIC, width: int = STATIC_WIDTH, preset: dict | None = None
    ) -> str:
        """The first rows as a fixed-width text table in ``<pre><code>``, with ``<b>`` for the
        header and ``<abbr title=…>`` for clipped names: tags that nbconvert's
        ``--sanitize-html`` and an untrusted JupyterLab keep. ``preset`` as the view's."""
        df = self.df
        preset = preset or {}
        for col, values in (preset.get("exclude") or {}).items():
            df = df[~df[col].astype(str).isin([str(v) for v in values])]
        hide = set(preset.get("hide") or [])
        if self.sort and self.sort[0] in df:
            df = df.sort_values(self.sort[0], ascending=self.sort[1] == "asc", kind="stable")
        shown = [c for c in self.columns if not (c.hidden or c.internal or c.name in hide)]
        head = df.head(rows)
        cells: list[list[str]] = []
        for c in shown:
            cells.append([_static_cell(v, c) for v in head[c.name].tolist()])
        widths = [
            max(len(_label(c)), *(len(v) for v in col)) if len(col) else len(_label(c))
            for c, col in zip(shown, cells)
        ]
        # Numbers keep their width; the last (name) column gets what is left of the line.
        keep, used = [], 0
        for k, w in enumerate(widths):
            last = k == len(shown) - 1
            if not last and used + w + 2 > width - 24:
                continue
            keep.append(k)
            used += w + 2
        lines = []
        room = max(16, width - sum(widths[k] + 2 for k in keep[:-1]))
        header = []
        for k in keep:
            c = shown[k]
            w = widths[k] if k != keep[-1] else min(widths[k], room)
            lab = _label(c)[:w]
            header.append(lab.rjust(w) if c.kind != "text" else lab.ljust(w))
        lines.append("<b>" + esc("  ".join(header).rstrip()) + "</b>")
        for i in range(len(head)):
            parts = []
            for k in keep:
                c = shown[k]
                v = cells[k][i]
                if k == keep[-1]:
                    w = min(widths[k], room)
                    full = head[c.full].iloc[i] if c.full else v
                    if len(v) > w:
                        v = v[: w - 1] + "…"
                    if str(full) != v:
                        parts.append(f'<abbr title="{html.escape(str(full))}">{esc(v)}</abbr>')
                    else:
                        parts.append(esc(v))
                else:
                    w = widths[k]
                    parts.append(esc(v.rjust(w) if c.kind != "text" else v.ljust(w)))
            lines.append("  ".join(parts).rstrip())
        more = len(df) - len(head)
        if more > 0:
            lines.append(esc(f"… {more:,} more rows (all of them in the interactive view)"))
        if not len(df):
            lines.append(esc(self.empty))
        return "<pre><code>" + "\n".join(lines) + "</code></pre>"


def _label(c: Column) -> str:
    return c.label or c.name


def _static_cell(v, c: Column) -> str:
    if v is None or (isinstance(v, float) and np.isnan(v)) or v is pd.NA:
        return c.missing or ""
    if c.kind in ("num", "pct"):
        return f"{float(v):,.{1 if c.digits is None else c.digits}f}"
    if c.kind == "bytes":
        return f"{float(v) / 2**20:,.{2 if c.digits is None else c.digits}f}"
    if c.kind == "int":
        return f"{int(v):,}"
    if c.kind == "bool":
        return "yes" if v else "no"
    return str(v)


# -- a plain HTML table (event details of the timeline) ---------------------------------------
TABLE_STYLE = "border-collapse:collapse;font:12px/1.35 system-ui,sans-serif;margin:4px 0"
CELL = "padding:2px 8px;border-bottom:1px solid rgba(128,128,128,.35);text-align:{align}"


def _fmt(v) -> str:
    if isinstance(v, (float, np.floating)):
        if np.isnan(v):
            return ""
        return f"{v:,.3f}" if abs(v) < 1000 else f"{v:,.1f}"
    if isinstance(v, (int, np.integer)) and not isinstance(v, bool):
        return f"{v:,}"
    return str(v)


def html_table(df: pd.DataFrame, max_rows: int = 50, title: str | None = None) -> str:
    """A DataFrame as a small HTML table (first ``max_rows`` rows), for detail panes."""
    shown = df.head(max_rows)
    numeric = [
        pd.api.types.is_numeric_dtype(shown[c]) and not pd.api.types.is_bool_dtype(shown[c])
        for c in shown.columns
    ]
    head = "".join(
        f'<th style="{CELL.format(align="right" if n else "left")}">{esc(c)}</th>'
        for c, n in zip(shown.columns, numeric)
    )
    rows = []
    for rec in shown.itertuples(index=False):
        cells = "".join(
            f'<td style="{CELL.format(align="right" if n else "left")}">{esc(_fmt(v))}</td>'
            for v, n in zip(rec, numeric)
        )
        rows.append(f"<tr>{cells}</tr>")
    more = f"<div>{plural(len(df) - max_rows, 'more row')}</div>" if len(df) > max_rows else ""
    cap = f"<b>{esc(title)}</b>" if title else ""
    return (
        f'{cap}<table style="{TABLE_STYLE}"><thead><tr>{head}</tr></thead>'
        f"<tbody>{''.join(rows)}</tbody></table>{more}"
    )
