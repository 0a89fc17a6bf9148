"""The Dask engine: the pod's per-host work as tasks on a ``dask.distributed.Client``, where the
dataset is (shared or object storage, named by an fsspec URL every worker can reach).

What is big is read on the workers, only what is needed of each host's stored Parquet
(:mod:`.dataset`): ``memory`` (every allocator event of every host), and for ``top_events``
each host's ``dur_us`` column alone, its ``n`` longest rows found by Arrow's select-k, then
whole rows from only the row groups that hold the pod's ``n`` longest. Tasks take hosts in
batches (one per worker thread), so a pod of a thousand hosts is tens of tasks, not
thousands; each returns Arrow tables (dictionary columns as text, as DuckDB reads the same
file) tagged with ``filename`` and ``file_row_number``, and the client combines them by the
same SQL as the DuckDB engine (:mod:`.sql`). No per-event Python runs anywhere: reads,
selections and takes are Arrow's. The stored analyses of a few rows per host (steps, op
stats, kernels...) and one host's allocator (``memory_of``, ``memory_breakdown``) are read
by the client's DuckDB on either engine (see ``Pod._analysis``).

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


def top_rows(dur: np.ndarray, n: int) -> np.ndarray:
    """The rows of the ``n`` largest durations, ties to the earliest rows, in no particular
    order; missing durations (NaN: null in the file) last, as ``nlargest`` and DuckDB's
    ``ORDER BY dur_us DESC`` have them. Arrow's select-k finds the ``n``-th largest value
    (numpy's partition degrades on the few distinct durations a trace has), then two passes
    take what is above it and the first of its ties."""
    import pyarrow as pa
    import pyarrow.compute as pc

    missing = np.isnan(dur)
    valid = len(dur) - int(missing.sum())
    if n <= 0:
        return np.zeros(0, np.int64)
    if valid <= n:
        return np.concatenate([np.flatnonzero(~missing), np.flatnonzero(missing)[: n - valid]])
    keys = pc.SelectKOptions(n, sort_keys=[("dur_us", "descending")])
    idx = pc.select_k_unstable(pa.array(dur, from_pandas=True), options=keys).to_numpy()
    cut = dur[idx].min()
    above = np.flatnonzero(dur > cut)
    return np.concatenate([above, np.flatnonzero(dur == cut)[: n - len(above)]])


def _top_batch(url, storage_options, batch, n: int) -> list[tuple]:
    """Per ``(index, path, file)``: (index, rows, durations) of its ``n`` longest events, from
    ``dur_us`` alone."""
    loc = ds.Location(url, storage_options)
    out = []
    for i, path, _file in batch:
        try:
            dur = _open(loc, path).read(columns=["dur_us"]).column(0)
            dur = dur.to_numpy().astype(np.float64, copy=False)
        except (OSError, ValueError, KeyError) as exc:
            raise _damaged(path, exc) from None
        rows = top_rows(dur, n)
        out.append((i, rows, dur[rows]))
    return out


def _pick(n: int, *tops: list[tuple]) -> dict[int, np.ndarray]:
    """The pod's ``n`` longest among the hosts' (ties: the pod's order, host then row):
    ``{host index: its rows}``."""
    items = [t for batch in tops for t in batch]
    host = np.concatenate([np.full(len(r), i, np.int64) for i, r, _ in items] or [[]])
    rows = np.concatenate([r for _, r, _ in items] or [[]]).astype(np.int64)
    dur = np.concatenate([d for _, _, d in items] or [[]]).astype(np.float64)
    pick = np.lexsort((rows, host, -dur))[:n]
    return {int(i): np.sort(rows[pick][host[pick] == i]) for i in np.unique(host[pick])}


def _take_picked(url, storage_options, batch, picked: dict) -> list:
    """The picked rows of the batch's ``(index, path, file)`` (none: no file is opened)."""
    mine = [(path, file, picked[i]) for i, path, file in batch if i in picked]
    return _take_batch(url, storage_options, mine)


def _take_batch(url, storage_options, batch) -> list:
    """Per ``(path, file, rows)``: those rows, read from the row groups that hold them."""
    loc = ds.Location(url, storage_options)
    out = []
    for path, file, rows in batch:
        try:
            pf = _open(loc, path)
            sizes = [pf.metadata.row_group(i).num_rows for i in range(pf.num_row_groups)]
            starts = np.concatenate([[0], np.cumsum(sizes)])
            groups = np.unique(np.searchsorted(starts, rows, side="right") - 1)
            part = pf.read_row_groups(groups.tolist())
        except (OSError, ValueError, KeyError) as exc:
            raise _damaged(path, exc) from None
        offsets = np.concatenate([[0], np.cumsum(np.asarray(sizes)[groups])])
        pos = np.searchsorted(groups, np.searchsorted(starts, rows, side="right") - 1)
        local = rows - starts[groups[pos]] + offsets[pos]
        out.append(_tagged(part.take(local), file, rows))
    return out


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
        tagged for the SQL: every host's ``n`` longest from ``dur_us`` alone, the pod's ``n``
        among them picked on a worker, then only their rows read whole, by tasks that wait on
        the pick there: one round trip from the client, not two."""
        import pyarrow as pa

        submit = self.client.submit
        batches = self._batches([(i, p, f) for i, (p, f) in enumerate(files)])
        args = (self.url, self.storage_options)
        tops = [submit(_top_batch, *args, b, n, pure=False) for b in batches]
        picked = submit(_pick, n, *tops, pure=False)
        takes = [submit(_take_picked, *args, b, picked, pure=False) for b in batches]
        parts = [t for got in self.client.gather(takes) for t in got]
        if not parts:  # no event at all: the first file's columns, no row
            parts = _take_batch(*args, [(*files[0], np.zeros(0, np.int64))])
        return pa.concat_tables(parts, promote_options="permissive")

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
