"""The per-host work of a pod, the same wherever it runs (a conversion worker, this process
or a Dask worker): a host's Run to the tables a dataset stores, and a stored host back into
an ordinary in-memory :class:`~tfprof_widgets.Run`."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..readers.assemble import RunTables
from ..run import Run
from ..run_builder import run_of_tables
from . import dataset as ds


def host_raw_tables(run: Run) -> dict[str, pd.DataFrame]:
    """The Run's tables as a dataset stores them, with each event's line row and each line's
    plane row as columns (``dataset.LINK_COLUMNS``)."""
    out = {name: getattr(run, name) for name in ds.RAW_TABLES}
    out["events"] = out["events"].assign(line_row=run.event_line_rows)
    out["lines"] = out["lines"].assign(plane_row=run.line_plane_rows)
    return out


def host_analyses(run: Run) -> dict[str, pd.DataFrame]:
    """The per-host analysis tables a dataset stores (``dataset.ANALYSIS_TABLES``), computed
    by the Run's own analyses."""
    return {name: getattr(run, name) for name in ds.ANALYSIS_TABLES}


def read_host_run(loc: ds.Location, entry: dict, run_name: str) -> Run:
    """One stored host as the Run that loading its capture alone gives: same tables, same
    dtypes and categories, its own clock (``t0_ns``)."""
    host = entry["host"]
    tables = {name: ds.read_table(loc, loc.table_path(host, name)) for name in ds.RAW_TABLES}
    events, lines = tables["events"], tables["lines"]
    line_rows = events.pop("line_row").to_numpy(np.int32)
    plane_rows = lines.pop("plane_row").to_numpy(np.int32)
    rt = RunTables(
        planes=tables["planes"],
        lines=lines,
        events=events,
        event_stats=tables["event_stats"],
        event_metadata=tables["event_metadata"],
        metadata_stats=tables["metadata_stats"],
        plane_stats=tables["plane_stats"],
        t0_ns=int(entry["t0_ns"]),
        event_line_rows=line_rows,
        line_plane_rows=plane_rows,
        tfprof_nodes=tables["tfprof_nodes"],
        tfprof_execs=tables["tfprof_execs"],
    )
    return run_of_tables(
        rt,
        name=run_name,
        path=loc.fs.unstrip_protocol(loc.host_dir(host))
        if not loc.is_local
        else loc.host_dir(host),
        files=[s["path"] for s in entry["sources"]][:1],
        hosts=[host],
        errors=entry.get("errors", []),
        warnings=entry.get("warnings", []),
    )


def top_events(run: Run, n: int) -> pd.DataFrame:
    """The ``n`` longest events of a run, first in the run's order among equals."""
    return run.events.nlargest(n, "dur_us")
