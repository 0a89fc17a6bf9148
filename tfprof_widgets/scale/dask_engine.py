"""The Dask engine: the pod's per-host work as tasks on a ``dask.distributed.Client``, where the
dataset is (shared or object storage, named by an fsspec URL every worker can reach).

What is big is read on the workers, only what is needed of each host's stored Parquet
(:mod:`.dataset`): ``memory`` (every allocator event of every host), and for ``top_events``
each batch of hosts' ``n`` longest events, by DuckDB in the task (a top-n: every row's
``dur_us``, whole rows only for the ``n`` it keeps); the client's SQL picks the pod's ``n``
among them. Tasks take hosts in batches (one per worker thread), so a pod of a thousand
hosts is tens of tasks, not thousands; each returns Arrow tables (text, not dictionaries, as
DuckDB reads the files) tagged with ``filename`` and ``file_row_number``, and the client
combines them by the same SQL as the DuckDB engine (:mod:`.sql`). No per-event Python runs
anywhere. The stored analyses of a few rows per host (steps, op stats, kernels...) and one
host's allocator (``memory_of``, ``memory_breakdown``) are read by the client's DuckDB on
either engine (see ``Pod._analysis``).

``recompute=True`` (``open(..., client=, recompute=True)``) instead reruns every per-host
analysis on the cluster from each host's stored tables (one task per host, the Run's own pandas
code): for a dataset converted by an older tfprof_widgets whose analyses have since changed.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..errors import CorruptProfileError
from . import dataset as ds
from .per_host import host_analyses, read_host_run

# Hosts per task: enough that a task's fixed cost (scheduling, a round trip) is shared by
# several file reads, few enough that every worker thread gets work.
TASKS_PER_THREAD = 1


# -- what runs on the workers ---------------------------------------------------------------
def _open(loc: ds.Location, path: str):
    import pyarrow.parquet as pq

    # A local file through Arrow's own reader: fsspec's Python file object costs a third more.
    return pq.ParquetFile(path if loc.is_local else loc.fs.open(path, "rb"))


def _plain(table):
    """Dictionary (categorical) columns as their text, the way DuckDB reads them from the
    file; a column no host filled (null type) as text, as in the file's schema."""
    import pyarrow as pa

    for i, field in enumerate(table.schema):
        if pa.types.is_dictionary(field.type):
            table = table.set_column(i, field.name, table.column(i).cast(field.type.value_type))
        elif field.type == pa.null():
            table = table.set_column(i, field.name, table.column(i).cast(pa.string()))
    return table.replace_schema_metadata(None)


def _damaged(path: str, exc: Exception) -> CorruptProfileError:
    return CorruptProfileError(path, f"cannot be read ({type(exc).__name__}: {str(exc)[:120]})")


def _tagged(table, file: str, rows):
    import pyarrow as pa

    table = _plain(table)
    names = pa.array(np.full(table.num_rows, file, object), pa.string())
    table = table.append_column("filename", names)
    return table.append_column("file_row_number", pa.array(np.asarray(rows, np.int64)))


def _read_batch(url, storage_options, batch) -> list:
    """Each ``(path, file)`` of a batch read whole, tagged with its file and rows."""
    loc = ds.Location(url, storage_options)
    out = []
    for path, file in batch:
        try:
            table = _open(loc, path).read()
        except (OSError, ValueError, KeyError) as exc:
            raise _damaged(path, exc) from None
        out.append(_tagged(table, file, np.arange(table.num_rows, dtype=np.int64)))
    return out


def _top_batch(url, storage_options, batch, n: int):
    """The ``n`` longest events of a batch of hosts' ``(index, path, file)``, whole rows
    tagged with ``filename`` and ``file_row_number``, in the pod's order among equals (the
    hosts' index, then the row): DuckDB in the task, one thread, reading ``dur_us`` and the
    join key for every row and the other columns for the ``n`` it keeps (its top-n)."""
    import duckdb

    from .sql import glob_literal as _glob_literal
    from .sql import quote as _quote

    loc = ds.Location(url, storage_options)
    con = duckdb.connect(config={"threads": 1})
    try:
        if not loc.is_local:
            con.register_filesystem(loc.fs)
        paths = ", ".join(_quote(_glob_literal(loc.for_duckdb(p))) for _, p, _ in batch)
        order = ", ".join(f"({_quote(f)}, {int(i)})" for i, _, f in batch)
        query = (
            f"SELECT t.* FROM read_parquet([{paths}], filename=true, file_row_number=true) t "
            f"JOIN (VALUES {order}) h(file, idx) ON t.filename = h.file "
            f"ORDER BY t.dur_us DESC, h.idx, t.file_row_number LIMIT {int(n)}"
        )
        rel = con.sql(query)
        return (getattr(rel, "to_arrow_table", None) or rel.fetch_arrow_table)()
    except duckdb.Error as exc:
        path = next((p for _, p, _ in batch if p in str(exc)), batch[0][1])
        raise _damaged(path, exc) from None
    finally:
        con.close()


def _analyses_task(url: str, storage_options: dict | None, entry: dict, run_name: str) -> dict:
    loc = ds.Location(url, storage_options)
    return host_analyses(read_host_run(loc, entry, run_name))


def _map_task(url, storage_options, entry, run_name, func):
    loc = ds.Location(url, storage_options)
    return func(read_host_run(loc, entry, run_name))


# -- the client's side ------------------------------------------------------------------------
class DaskEngine:
    """Runs a pod's per-host reads and work as tasks on a Dask client (see the module)."""

    def __init__(self, client, url: str, storage_options: dict | None, run_name: str) -> None:
        self.client = client
        self.url = url
        self.storage_options = storage_options
        self.run_name = run_name
        self._threads: int | None = None

    def _batches(self, items: list) -> list[list]:
        if self._threads is None:
            self._threads = max(1, sum(self.client.nthreads().values()))
        k = max(1, min(len(items), self._threads * TASKS_PER_THREAD))
        return [b for b in (items[i::k] for i in range(k)) if b]

    def _run(self, fn, items: list, *args) -> list:
        """``fn(url, storage_options, batch, *args)`` over batches of ``items``; the results
        of every item, in the items' order."""
        batches = self._batches(items)
        futures = [
            self.client.submit(fn, self.url, self.storage_options, b, *args, pure=False)
            for b in batches
        ]
        results = self.client.gather(futures)
        out: list = [None] * len(items)
        k = len(batches)
        for j, res in enumerate(results):
            out[j::k] = res
        return out

    def read(self, files: list[tuple[str, str]]):
        """The stored table files ``(path, file)`` as one Arrow table, tagged for the SQL."""
        import pyarrow as pa

        parts = self._run(_read_batch, files)
        return pa.concat_tables(parts, promote_options="permissive")

    def top_events(self, files: list[tuple[str, str]], n: int):
        """The pod's ``n`` longest events (host files in the pod's order), as one Arrow table
        tagged for the SQL: each batch's ``n`` longest (the pod's ``n`` are among them), for
        the client's SQL to pick from; one round trip."""
        import pyarrow as pa

        batches = self._batches([(i, p, f) for i, (p, f) in enumerate(files)])
        futures = [
            self.client.submit(_top_batch, self.url, self.storage_options, b, n, pure=False)
            for b in batches
        ]
        return pa.concat_tables(self.client.gather(futures), promote_options="permissive")

    def analyses(self, entries: list[dict]) -> list[dict[str, pd.DataFrame]]:
        """Every stored per-host analysis, recomputed from each host's tables (one task per
        host: the Run's own pandas code)."""
        return self._map(_analyses_task, entries)

    def map_hosts(self, entries: list[dict], func) -> list:
        return self._map(_map_task, entries, func)

    def _map(self, fn, entries: list[dict], *args) -> list:
        n = len(entries)
        futures = self.client.map(
            fn,
            [self.url] * n,
            [self.storage_options] * n,
            entries,
            [self.run_name] * n,
            *[[a] * n for a in args],
            pure=False,
        )
        return self.client.gather(futures)
