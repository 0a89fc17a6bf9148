"""The Dask engine: the per-host analyses mapped over a ``dask.distributed.Client``, one task
per host, each running the Run's own pandas analyses on that host's stored tables where the
worker is (the dataset on shared or object storage, named by an fsspec URL every worker can
reach). The small per-host results come back and are combined by the same SQL as the DuckDB
engine's (:mod:`.sql`).
"""

from __future__ import annotations

import pandas as pd

from . import dataset as ds
from .per_host import host_analyses, read_host_run
from .per_host import top_events as _top_events


def _analyses_task(url: str, storage_options: dict | None, entry: dict, run_name: str) -> dict:
    loc = ds.Location(url, storage_options)
    return host_analyses(read_host_run(loc, entry, run_name))


def _top_events_task(url, storage_options, entry, run_name, n) -> pd.DataFrame:
    loc = ds.Location(url, storage_options)
    return _top_events(read_host_run(loc, entry, run_name), n)  # indexed by event row


def _map_task(url, storage_options, entry, run_name, func):
    loc = ds.Location(url, storage_options)
    return func(read_host_run(loc, entry, run_name))


class DaskEngine:
    """Runs per-host work as tasks on a Dask client (``client.map``, one task per host)."""

    def __init__(self, client, url: str, storage_options: dict | None, run_name: str) -> None:
        self.client = client
        self.url = url
        self.storage_options = storage_options
        self.run_name = run_name

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

    def analyses(self, entries: list[dict]) -> list[dict[str, pd.DataFrame]]:
        """Every stored per-host analysis, recomputed from each host's tables."""
        return self._map(_analyses_task, entries)

    def top_events(self, entries: list[dict], n: int) -> list[pd.DataFrame]:
        return self._map(_top_events_task, entries, n)

    def map_hosts(self, entries: list[dict], func) -> list:
        return self._map(_map_task, entries, func)
