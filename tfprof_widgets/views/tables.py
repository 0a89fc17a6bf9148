"""HTML tables for widgets: escaped, compact, the same look live and in exported HTML."""

from __future__ import annotations

import base64

import numpy as np
import pandas as pd

from ._display import esc

TABLE_STYLE = "border-collapse:collapse;font:12px/1.35 system-ui,sans-serif;margin:4px 0"
CELL = "padding:2px 8px;border-bottom:1px solid #ddd;text-align:{align}"


def _fmt(v) -> str:
    if isinstance(v, (float, np.floating)):
        if np.isnan(v):
            return ""
        return f"{v:,.3f}" if abs(v) < 1000 else f"{v:,.1f}"
    if isinstance(v, (int, np.integer)) and not isinstance(v, bool):
        return f"{v:,}"
    return str(v)


def html_table(df: pd.DataFrame, max_rows: int = 50, title: str | None = None) -> str:
    """A DataFrame as a compact HTML table (first ``max_rows`` rows)."""
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
    more = (
        f'<div style="font:11px sans-serif;color:#666">{len(df) - max_rows:,} more rows</div>'
        if len(df) > max_rows
        else ""
    )
    cap = f"<b>{esc(title)}</b>" if title else ""
    return (
        f'{cap}<table style="{TABLE_STYLE}"><thead><tr>{head}</tr></thead>'
        f"<tbody>{''.join(rows)}</tbody></table>{more}"
    )


def csv_link(df: pd.DataFrame, filename: str, label: str = "Export CSV") -> str:
    """A download link carrying the CSV itself (works offline and in exported HTML)."""
    data = base64.b64encode(df.to_csv(index=False).encode()).decode()
    return (
        f'<a download="{esc(filename)}" href="data:text/csv;base64,{data}" '
        f'style="font:12px sans-serif">{esc(label)}</a>'
    )
