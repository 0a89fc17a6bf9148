"""The pod-level SQL, one text for both engines: per-host tables (stored Parquet files, or
what Dask workers computed) put on one clock, numbered as one run and ordered as an in-memory
:class:`~tfprof_widgets.Run` orders them.

Every query reads a ``source`` relation with two columns beside the table's own:
``filename`` (which host file a row comes from) and ``file_row_number`` (its row there),
joined to ``_files`` (one row per host file: ``file``, ``host``, ``idx`` (the host's place
in the run), ``shift_us`` (its clock's offset from the pod's: ``(t0_ns - pod t0_ns) / 1e3``)
and ``event_offset`` (its first event's row in the pod's events)).
"""

from __future__ import annotations

import re

import pandas as pd

from .. import schema
from . import dataset as ds

# Columns that are times on the host's clock, and columns that are rows of its events.
SHIFTED = {
    "events": ("start_us", "end_us"),
    "steps": ("start_us",),
    "memory": ("time_us",),
    "memory_summary": ("peak_time_us",),
}
EVENT_ROWS = {"memory": "event", "event_stats": "event"}
# How a Run orders each analysis over hosts: analyses that sort by the host's name (as a
# string) keep each host's own order within it.
ORDER = {
    "tf_data_bottleneck": "t.max_latency_us DESC, t.host, t.file_row_number",
    "profile_options": "h.idx, t.file_row_number",
    "event_stats": "h.idx, t.file_row_number",
}
DEFAULT_ORDER = "t.host, t.file_row_number"
# The events table without its link column, on the pod's clock, with its row in the pod.
EVENT_COLUMNS = ", ".join(f"t.{c}" for c in schema.EVENTS)


def union(table: str, source: str, where: str | None = None) -> str:
    """One per-host table over every host, as the run of all of them would have it
    (``where``: a condition on the table's own columns, as ``t.<column>``)."""
    repl = [f"t.{c} + h.shift_us AS {c}" for c in SHIFTED.get(table, ())]
    if table in EVENT_ROWS:
        col = EVENT_ROWS[table]
        repl.append(f"t.{col} + h.event_offset AS {col}")
    replace = f" REPLACE ({', '.join(repl)})" if repl else ""
    drop = [
        "filename",
        "file_row_number",
        *([ds.LINK_COLUMNS[table]] if table in ds.LINK_COLUMNS else []),
    ]
    return (
        f"SELECT t.* EXCLUDE ({', '.join(drop)}){replace} "
        f"FROM {source} t JOIN _files h ON t.filename = h.file "
        + (f"WHERE {where} " if where else "")
        + f"ORDER BY {ORDER.get(table, DEFAULT_ORDER)}"
    )


def events(source: str) -> str:
    """Every event of the pod on its clock: the EVENTS columns and ``event``, its row in the
    pod (host after host, in each host's order)."""
    shifted = ", ".join(
        f"t.{c} + h.shift_us AS {c}" if c in SHIFTED["events"] else f"t.{c}" for c in schema.EVENTS
    )
    return (
        f"SELECT {shifted}, t.file_row_number + h.event_offset AS event, h.idx AS host_idx "
        f"FROM {source} t JOIN _files h ON t.filename = h.file"
    )


def top_events(source: str, n: int, where: str | None = None) -> str:
    """The ``n`` longest events, ties in the pod's event order (as ``DataFrame.nlargest``)."""
    cond = f"WHERE {where}" if where else ""
    cols = ", ".join(schema.EVENTS)
    return (
        f"SELECT {cols}, event FROM ({events(source)}) {cond} "
        f"ORDER BY dur_us DESC, host_idx, event LIMIT {int(n)}"
    )


_NULLABLE_INTS = None


def to_frame(table, spec: dict[str, tuple[str, str]] | None) -> pd.DataFrame:
    """A query's Arrow table as a DataFrame with the schema's columns and dtypes."""
    import pyarrow as pa

    for i, field in enumerate(table.schema):
        if field.type == pa.null():  # all missing: text, as from a Parquet file
            table = table.set_column(i, field.name, table.column(i).cast(pa.string()))
    df = table.to_pandas(types_mapper=_int_types().get)
    if spec is None:
        return df
    return schema.conform(df, spec)


def _int_types() -> dict:
    """Arrow integers as pandas' nullable integers: no detour through float (exact int64)."""
    global _NULLABLE_INTS
    if _NULLABLE_INTS is None:
        import pyarrow as pa

        _NULLABLE_INTS = {
            pa.int8(): pd.Int8Dtype(),
            pa.int16(): pd.Int16Dtype(),
            pa.int32(): pd.Int32Dtype(),
            pa.int64(): pd.Int64Dtype(),
            pa.uint32(): pd.UInt32Dtype(),
            pa.uint64(): pd.UInt64Dtype(),
        }
    return _NULLABLE_INTS


def glob_literal(path: str) -> str:
    """A path as a DuckDB file pattern matching only itself: DuckDB reads every path it is
    given as a glob (``ds[12]`` would be ``ds1`` or ``ds2``), so ``[``, ``*`` and ``?`` are
    put in classes of their own (``[[]``); the rows' ``filename`` is still the path."""
    return re.sub(r"[\[*?]", lambda m: f"[{m.group()}]", path)


def quote(s: str) -> str:
    """A text as an SQL string literal."""
    return "'" + str(s).replace("'", "''") + "'"
