"""``Pod``: a converted dataset opened for analysis, the pod-level counterpart of a Run.

It has a Run's names for the same tables: ``hosts``, ``planes``, ``lines``; the analyses
``steps``, ``per_host_steps``, ``ops``, ``kernels``, ``memory``, ``memory_summary``,
``memory_breakdown``, ``input_pipeline``, ``overview_summary``, ``tf_data_bottleneck``,
``profile_options``, HTA's ``idle_time_breakdown``, ``comm_comp_overlap`` and
``queue_length_summary`` per rank (pandas DataFrames or summaries with the columns of
:mod:`tfprof_widgets.schema`, computed when first read and cached, on the pod's one clock);
``events`` and ``event_stats`` are lazy DuckDB relations (they are the big ones), queried
with :meth:`Pod.sql` or :meth:`Pod.top_events`; and :meth:`Pod.host` gives any host as an
ordinary in-memory :class:`~tfprof_widgets.Run`, on which every view works.

Where the numbers come from. Each host's analyses were computed at conversion by the Run's own
pandas code, one host in memory at a time, and stored (:mod:`.dataset`); the pod-level work —
reading them from every host, putting times on one clock, numbering event rows as one run,
ordering, filtering, scanning the events — is SQL in DuckDB, with a memory limit, spilling to
a temporary directory. The analyses of the whole pod that read only those tables (input
pipeline, overview, per-host step table, memory breakdown) are the same functions a Run uses,
called on the pod. With ``client=`` (a ``dask.distributed.Client``) the per-host analyses are
computed again on the cluster from each host's stored tables, one task per host, and combined
by the same SQL (:mod:`.dask_engine`).

Step groups: a dataset numbers derived step groups (captures without a ``group_id`` stat) per
host, as XProf does, so a host's ``group_id`` is the same in the pod and in ``pod.host(h)``;
a multi-host Run loaded in memory numbers them across hosts instead. ``step`` is the same.
"""

from __future__ import annotations

import concurrent.futures
import functools
import html
import os
import shutil
import tempfile
import types
import warnings
import weakref

import pandas as pd

from .. import schema
from ..analysis.input_pipeline import InputPipelineSummary, input_pipeline
from ..analysis.memory import memory_breakdown
from ..analysis.overview import OverviewSummary, overview_summary
from ..analysis.steps import per_host_table
from ..errors import CorruptProfileError, ProfileError
from ..readers.discovery import text_path
from ..readers.text import name_as_text
from ..run import Run
from . import dataset as ds
from . import sql
from .per_host import read_host_run
from .sql import glob_literal as _glob_literal
from .sql import quote as _quote

__all__ = ["Pod", "open_dataset"]

DEFAULT_MEMORY_LIMIT = "2GB"


def open_dataset(
    dataset: str | os.PathLike[str],
    client=None,
    *,
    memory_limit: str | int = DEFAULT_MEMORY_LIMIT,
    temp_directory: str | None = None,
    threads: int | None = None,
    storage_options: dict | None = None,
    recompute: bool = False,
) -> Pod:
    """Open a dataset made by :func:`tfprof_widgets.convert` (a path or an fsspec URL).

    ``client``: a ``dask.distributed.Client`` to compute the per-host analyses on its
    workers (the dataset must be where they can read it: shared or object storage).
    ``memory_limit`` (``"2GB"``, or bytes) bounds DuckDB, which spills to ``temp_directory``
    (default: a new temporary directory, removed when the pod is closed); ``threads``:
    DuckDB's threads (default: the CPU count). ``storage_options`` go to fsspec.
    ``recompute`` (with ``client``): the per-host analyses computed again on the workers from
    each host's stored tables, rather than read as stored (for a dataset whose analyses an
    upgrade has changed; see :mod:`.dask_engine`).

    A host whose files are missing or damaged is left out with a warning naming it and the
    file (``pod.warnings``), as are hosts the conversion could not read; only when no host
    can be opened is a :class:`~tfprof_widgets.ProfileError` raised.
    """
    return Pod(
        dataset,
        client=client,
        memory_limit=memory_limit,
        temp_directory=temp_directory,
        threads=threads,
        storage_options=storage_options,
        recompute=recompute,
    )


class Pod:
    """A converted pod: the tables and analyses of a Run over every host, under the Run's names
    (a :class:`~tfprof_widgets.runlike.RunLike`; see the module)."""

    def __init__(
        self,
        dataset: str | os.PathLike[str],
        *,
        client=None,
        memory_limit: str | int = DEFAULT_MEMORY_LIMIT,
        temp_directory: str | None = None,
        threads: int | None = None,
        storage_options: dict | None = None,
        recompute: bool = False,
    ) -> None:
        ds.require("duckdb", "pyarrow", "fsspec")
        self.loc = ds.Location(text_path(dataset), storage_options)
        ds.require_text_root(self.loc)
        self.warnings: list[str] = []
        notes: list[str] = []
        self.manifest = ds.read_manifest(self.loc, notes)
        for note in notes:
            self._warn(note.removeprefix(f"{self.loc.path(ds.MANIFEST)}: "))
        self.name: str = self.manifest["run"]
        self.path: str = self.loc.url
        self.source: str = self.manifest["source"]
        self._entries = self._usable_hosts()
        self.hosts: list[str] = [e["host"] for e in self._entries]
        self.files: list[str] = [e["sources"][0]["path"] for e in self._entries]
        self.errors: list[str] = [x for e in self._entries for x in e.get("errors", [])]
        self.t0_ns: int = min(int(e["t0_ns"]) for e in self._entries)
        self._con, self._tmp = _connect(self.loc, memory_limit, temp_directory, threads)
        self._closer = weakref.finalize(self, _close, self._con, self._tmp, temp_directory is None)
        self._file_hosts = self._register_files()
        self._dask = None
        self._recompute = bool(recompute and client is not None)
        if client is not None:
            from .dask_engine import DaskEngine

            self._dask = DaskEngine(client, self.loc.url, storage_options, self.name)
        self._create_views()

    # -- hosts --------------------------------------------------------------------------------
    def _usable_hosts(self) -> list[dict]:
        """The manifest's hosts whose files are all there and readable; a warning for each
        host left out."""
        for f in self.manifest.get("failed", []):
            self._warn(f"host {f['host']} was not converted: {f.get('problem', 'unreadable')}")
        entries = list(self.manifest.get("hosts", []))
        with concurrent.futures.ThreadPoolExecutor(16) as pool:
            problems = list(pool.map(self._host_problem, entries))
        usable = []
        for entry, problem in zip(entries, problems):
            if problem is None:
                usable.append(entry)
            else:
                self._warn(f"host {entry['host']} left out: {problem}")
        if not usable:
            raise ProfileError(
                self.loc.url,
                "no host of this dataset can be opened"
                + (f": {self.warnings[0]}" if self.warnings else " (it lists no host)"),
            )
        return usable

    def _host_problem(self, entry: dict) -> str | None:
        import pyarrow.parquet as pq

        for table in ds.TABLES:
            path = self.loc.table_path(entry["host"], table)
            try:
                with self.loc.fs.open(path, "rb") as f:
                    meta = pq.read_metadata(f)
                rows = meta.num_rows
                ds.check_columns(path, meta.schema.to_arrow_schema().names)
            except FileNotFoundError:
                return f"{path}: missing"
            except CorruptProfileError as exc:
                return f"{path}: damaged ({exc.problem})"
            except Exception as exc:  # any reader error: the file is not a whole Parquet file
                return f"{path}: damaged ({type(exc).__name__}: {exc})"
            expected = entry.get("rows", {}).get(table)
            if expected is not None and rows != expected:
                return f"{path}: damaged ({rows} rows where {expected} were written)"
        return None

    def _warn(self, note: str) -> None:
        self.warnings.append(note)
        warnings.warn(f"{self.loc.url}: {note}", stacklevel=4)

    def _register_files(self) -> dict[str, str]:
        """The ``_files`` table the SQL joins on: every host file with its host's place,
        clock offset and first event row."""
        rows, offset = [], 0
        for idx, e in enumerate(self._entries):
            shift_us = (int(e["t0_ns"]) - self.t0_ns) / 1e3
            for table in ds.TABLES:
                rows.append(
                    {
                        "file": self._file(e["host"], table),
                        "table_name": table,
                        "host": e["host"],
                        "idx": idx,
                        "shift_us": shift_us,
                        "event_offset": offset,
                    }
                )
            offset += int(e["events"])
        files = pd.DataFrame(rows)
        self._con.register("_files_df", files)
        self._con.execute("CREATE OR REPLACE TABLE _files AS SELECT * FROM _files_df")
        self._con.unregister("_files_df")
        return {r["file"]: r["host"] for r in rows}

    def _file(self, host: str, table: str) -> str:
        return self.loc.for_duckdb(self.loc.table_path(host, table))

    def _parquet(self, table: str) -> str:
        files = ", ".join(_quote(_glob_literal(self._file(h, table))) for h in self.hosts)
        return f"read_parquet([{files}], filename=true, file_row_number=true)"

    def _create_views(self) -> None:
        """Views for :meth:`sql`: ``events``, ``event_stats`` and every stored analysis over
        all hosts (on the pod's clock), and ``hosts``. DuckDB reads each file's schema as it
        binds them: one it cannot read is a CorruptProfileError naming it."""
        import duckdb

        try:
            self._bind_views()
        except duckdb.Error as exc:
            self.close()
            raise self._file_error(exc) from None

    def _bind_views(self) -> None:
        self._con.execute(f"CREATE OR REPLACE VIEW events AS {sql.events(self._parquet('events'))}")
        for table in ("event_stats", *ds.ANALYSIS_TABLES):
            self._con.execute(
                f"CREATE OR REPLACE VIEW {table} AS {sql.union(table, self._parquet(table))}"
            )
        ht = self.host_table
        self._con.register("_hosts_df", ht)
        self._con.execute("CREATE OR REPLACE TABLE hosts AS SELECT * FROM _hosts_df")
        self._con.unregister("_hosts_df")

    @functools.cached_property
    def host_table(self) -> pd.DataFrame:
        """One row per host: its events and stats, its time span on the pod's clock (µs),
        steps, where its step groups come from, its source file and the dataset's bytes."""
        rows = []
        for e in self._entries:
            start = (int(e["t0_ns"]) - self.t0_ns) / 1e3
            src = e["sources"][0]
            rows.append(
                {
                    "host": e["host"],
                    "events": int(e["events"]),
                    "event_stats": int(e["event_stats"]),
                    "start_us": start,
                    "end_us": start + float(e["duration_us"]),
                    "steps": int(e["steps"]),
                    "step_groups": e["step_groups"],
                    "source": name_as_text(str(src["path"])),
                    "source_bytes": int(sum(s["size"] for s in e["sources"])),
                    "dataset_bytes": int(e.get("bytes", 0)),
                }
            )
        return pd.DataFrame(rows)

    def host(self, name: str) -> Run:
        """One host as an ordinary in-memory Run (its own clock, as ``load()`` of its file
        alone gives it): every analysis and view works on it."""
        for e in self._entries:
            if e["host"] == name:
                return read_host_run(self.loc, e, self.name)
        raise KeyError(f"no host {name!r} in this pod; hosts: {', '.join(self.hosts[:20])}")

    def map_hosts(self, func, hosts: list[str] | None = None) -> dict:
        """``func(run)`` for each host's Run, ``{host: result}``: on the Dask workers when the
        pod has a client (``func`` must then be picklable), else here, one host at a time."""
        entries = [e for e in self._entries if hosts is None or e["host"] in hosts]
        if self._dask is not None:
            results = self._dask.map_hosts(entries, func)
        else:
            results = [func(read_host_run(self.loc, e, self.name)) for e in entries]
        return {e["host"]: r for e, r in zip(entries, results)}

    # -- SQL ----------------------------------------------------------------------------------
    def sql(self, query: str) -> pd.DataFrame:
        """Run SQL over the pod (DuckDB, within the memory limit) and return a DataFrame.

        Views: ``events`` (EVENTS columns on the pod's clock, ``event`` its row in the pod,
        ``host_idx``), ``event_stats``, ``steps``, ``ops``, ``kernels``, ``memory``,
        ``memory_summary``, ``tf_data_bottleneck``, ``profile_options`` and ``hosts``."""
        return sql.to_frame(self._query(query), None)

    def _query(self, text: str):
        """The result of a query as an Arrow table; a host file DuckDB cannot read is named
        in a CorruptProfileError."""
        import duckdb

        try:
            rel = self._con.sql(text)
            # duckdb >= 1.4 names it to_arrow_table; before, fetch_arrow_table.
            return (getattr(rel, "to_arrow_table", None) or rel.fetch_arrow_table)()
        except duckdb.Error as exc:
            if isinstance(exc, _query_errors()) and not self._names_a_file(exc):
                raise  # the query's own mistake, not the files'
            raise self._file_error(exc) from None

    def _names_a_file(self, exc: Exception) -> bool:
        return any(path in str(exc) for path in self._file_hosts)

    def _file_error(self, exc: Exception) -> CorruptProfileError:
        """What DuckDB could not read, as a CorruptProfileError naming the host's file (or
        the dataset, when DuckDB does not say which file)."""
        msg = str(exc)
        first = (msg.splitlines() or [""])[0][:160]
        for path, host in self._file_hosts.items():
            if path in msg:
                return CorruptProfileError(path, f"host {host}: cannot be read ({first})")
        return CorruptProfileError(
            self.loc.url,
            f"a table file of this dataset cannot be read ({type(exc).__name__}: {first})",
        )

    @property
    def events(self):
        """Every event of the pod (a lazy DuckDB relation: ``.df()``, ``.filter()``,
        ``.aggregate()``, ``.limit()``...), on the pod's clock, with ``event`` (its row)."""
        return self._con.sql("SELECT * FROM events")

    @property
    def event_stats(self):
        """Every event stat (a lazy DuckDB relation); ``event`` is the row in :attr:`events`."""
        return self._con.sql("SELECT * FROM event_stats")

    def top_events(self, n: int = 20, where: str | None = None) -> pd.DataFrame:
        """The ``n`` longest events of the pod (``where``: an SQL condition on the events'
        columns), longest first, indexed by their row in the pod's events: what
        ``run.events.nlargest(n, "dur_us")`` gives on a Run of all hosts."""
        if self._dask is not None and where is None:
            source = self._register_arrow("events", self._dask.top_events(self._files("events"), n))
        else:
            source = self._parquet("events")
        df = sql.to_frame(self._query(sql.top_events(source, n, where)), None)
        index = pd.Index(df.pop("event").astype("int64").to_numpy(), name=None)
        return schema.conform(df, schema.EVENTS).set_axis(index)

    # -- tables ---------------------------------------------------------------------------------
    def _analysis(self, table: str, where: str | None = None) -> pd.DataFrame:
        """A stored analysis over the hosts (``where``: an SQL condition on its columns).
        With Dask, ``memory`` of every host (every allocator event) is read on the workers;
        what is a few rows per host, or one host's file (``where``: ``memory_of``), is read
        here as on DuckDB: a round trip through the scheduler costs more than reading it
        (docs/scale.md, "Dask")."""
        if self._recompute:
            source = self._register_dask(table, [a[table] for a in self._dask_analyses])
        elif self._dask is not None and table == "memory" and where is None:
            source = self._register_arrow(table, self._dask.read(self._files(table)))
        else:
            source = self._parquet(table)
        return sql.to_frame(self._query(sql.union(table, source, where)), ds.TABLES[table])

    def _files(self, table: str) -> list[tuple[str, str]]:
        """A table's file of each host, in the pod's order: the path to read, and the file's
        name in the SQL's ``_files``."""
        return [(self.loc.table_path(h, table), self._file(h, table)) for h in self.hosts]

    def _register_arrow(self, table: str, data) -> str:
        name = f"_dask_{table}"
        self._con.register(name, data)
        return name

    @functools.cached_property
    def _dask_analyses(self) -> list[dict]:
        return self._dask.analyses(self._entries)

    def _register_dask(self, table: str, parts: list[pd.DataFrame]) -> str:
        """Per-host frames recomputed by Dask as a source for the SQL: tagged with the file
        they stand for and their row there, categories as plain strings (DuckDB would sort
        enums by code, not by name)."""
        frames = []
        for e, df in zip(self._entries, parts):
            rows = range(len(df))
            df = df.reset_index(drop=True)
            df = df.assign(filename=self._file(e["host"], table), file_row_number=rows)
            for c in df.columns:
                if isinstance(df[c].dtype, pd.CategoricalDtype):
                    df[c] = df[c].astype(object).where(df[c].notna(), None)
            frames.append(df)
        name = f"_dask_{table}"
        self._con.register(name, pd.concat(frames, ignore_index=True))
        return name

    def _small_table(self, table: str) -> pd.DataFrame:
        """A small Run table over every host, with the Run's categories: hosts in the pod's
        order, planes and lines by first appearance, other categories merged in order."""
        # 16 at a time, as open() reads the footers: one host after another was the pod
        # overview's 1-3 s at 16-64 hosts (docs/scale.md).
        with concurrent.futures.ThreadPoolExecutor(16) as pool:
            parts = list(
                pool.map(
                    lambda h: ds.read_table(self.loc, self.loc.table_path(h, table)), self.hosts
                )
            )
        parts = [
            p.drop(columns=[ds.LINK_COLUMNS[table]]) if table in ds.LINK_COLUMNS else p
            for p in parts
        ]
        if not any(len(p) for p in parts):  # e.g. the tfprof tables of an XSpace capture
            return parts[0]
        out = pd.concat(parts, ignore_index=True)
        for col in out.columns:
            kinds = [p[col].dtype for p in parts]
            if not any(isinstance(k, pd.CategoricalDtype) for k in kinds):
                continue
            if col == "host":
                dtype = pd.CategoricalDtype(pd.Index(self.hosts, dtype=kinds[0].categories.dtype))
            elif col == "plane" and table == "planes" or col == "line" and table == "lines":
                dtype = pd.CategoricalDtype(pd.Index(pd.unique(out[col].dropna().to_numpy())))
            elif col == "plane":
                dtype = self.planes["plane"].dtype
            elif table.endswith("_stats"):  # a Run merges stat tables' categories in order
                dtype = pd.api.types.union_categoricals(
                    [p[col] for p in parts], ignore_order=True
                ).dtype
            else:  # ... and sorts those of the other tables
                dtype = pd.CategoricalDtype(
                    pd.Index(pd.unique(out[col].dropna().astype(object).to_numpy())).sort_values()
                )
            out[col] = pd.Categorical(out[col].astype(object), dtype=dtype)
        return out

    # -- analyses -------------------------------------------------------------------------------
    @functools.cached_property
    def per_host_steps(self) -> pd.DataFrame:
        """Step time per host side by side, one row per step (schema.PER_HOST_STEPS)."""
        return per_host_table(self.steps)

    @functools.cached_property
    def memory(self) -> pd.DataFrame:
        """Every allocator event of every host (schema.MEMORY): can be large; see
        :meth:`memory_of` for one allocator."""
        return self._analysis("memory")

    def memory_of(self, host: str, allocator: str) -> pd.DataFrame:
        """One allocator's events on one host (schema.MEMORY), read alone."""
        if "memory" in self.__dict__ or self._recompute:
            m = self.memory
            return m[(m["host"] == host) & (m["allocator"] == allocator)].reset_index(drop=True)
        where = f"t.host = {_quote(host)} AND t.allocator = {_quote(allocator)}"
        return self._analysis("memory", where)

    @functools.cached_property
    def memory_breakdown(self) -> pd.DataFrame:
        """What was live at the largest peak of any allocator (schema.MEMORY_BREAKDOWN)."""
        return self.memory_breakdown_at()

    def memory_breakdown_at(self, allocator: str | None = None, host: str | None = None):
        """What was live at one allocator's peak (default: the largest peak in the pod)."""
        summary = self.memory_summary
        if not len(summary):
            return schema.empty(schema.MEMORY_BREAKDOWN)
        if allocator is None:
            pick = summary.sort_values("peak_in_use_bytes", ascending=False).iloc[0]
            host, allocator = pick["host"], pick["allocator"]
        elif host is None:
            hosts = summary.loc[summary["allocator"] == allocator, "host"]
            host = hosts.iloc[0] if len(hosts) else None
        entry = next((e for e in self._entries if e["host"] == host), {})
        one = types.SimpleNamespace(
            memory=self.memory_of(host, allocator)
            if host is not None
            else schema.empty(schema.MEMORY),
            memory_summary=summary,
        )
        if "unrecorded_data_type" in entry:  # datasets converted before it was kept: XProf's
            one.unrecorded_data_type = entry["unrecorded_data_type"]
        return memory_breakdown(one, allocator=allocator, host=host)

    @functools.cached_property
    def input_pipeline(self) -> InputPipelineSummary:
        """The input-pipeline analysis of the whole pod (from :attr:`steps` and :attr:`ops`)."""
        return input_pipeline(self)

    @functools.cached_property
    def overview_summary(self) -> OverviewSummary:
        """The overview of the whole pod (from :attr:`steps`, :attr:`ops`, :attr:`planes`)."""
        return overview_summary(self)

    @functools.cached_property
    def tfprof_advice(self) -> pd.DataFrame:
        from ..frameworks.tensorflow.tfprof_advice import tfprof_advice

        return tfprof_advice(self)

    def clear_cache(self) -> None:
        """Forget every table and analysis read so far."""
        for name, value in list(vars(type(self)).items()):
            if isinstance(value, functools.cached_property):
                self.__dict__.pop(name, None)

    # The Run's tables and stored analyses under the Run's names, each read when first used
    # (set below from dataset.RAW_TABLES and dataset.ANALYSIS_TABLES).
    planes: pd.DataFrame
    lines: pd.DataFrame
    steps: pd.DataFrame
    ops: pd.DataFrame
    kernels: pd.DataFrame
    memory_summary: pd.DataFrame

    # -- summaries ------------------------------------------------------------------------------
    @property
    def duration_us(self) -> float:
        """From the first event of any host to the last end, µs."""
        return float(self.host_table["end_us"].max())

    @property
    def engine(self) -> str:
        return "dask" if self._dask is not None else "duckdb"

    def close(self) -> None:
        """Close DuckDB and remove its spill directory (also done when the pod is collected)."""
        self._closer()

    def __enter__(self) -> Pod:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _summary_lines(self) -> list[str]:
        ht = self.host_table
        return [
            f"pod {self.name!r} at {self.path} ({self.engine})",
            f"hosts: {len(self.hosts)} ({', '.join(self.hosts[:8])}"
            + (" ..." if len(self.hosts) > 8 else "")
            + ")",
            f"events: {int(ht['events'].sum()):,} over {self.duration_us / 1e3:,.1f} ms; "
            f"stats: {int(ht['event_stats'].sum()):,}",
            f"steps: {int(ht['steps'].sum()):,} (host, step) rows",
            *(f"warning: {w}" for w in self.warnings[:5]),
        ]

    def __repr__(self) -> str:
        return "<tfprof_widgets.Pod\n  " + "\n  ".join(self._summary_lines()) + "\n>"

    def _repr_html_(self) -> str:
        items = "".join(f"<li>{html.escape(s)}</li>" for s in self._summary_lines())
        return f"<div><b>tfprof_widgets.Pod</b><ul>{items}</ul></div>"


def _cached(name: str, read, what: str) -> functools.cached_property:
    prop = functools.cached_property(lambda self: read(self, name))
    prop.__doc__ = f"{what} over every host (columns: schema.{name.upper()}), read when first used."
    prop.__set_name__(Pod, name)
    return prop


# The small tables of a Run, and the per-host analyses a dataset stores (memory: its own).
for _name in (
    "planes",
    "lines",
    "event_metadata",
    "metadata_stats",
    "plane_stats",
    "tfprof_nodes",
    "tfprof_execs",
):
    setattr(Pod, _name, _cached(_name, Pod._small_table, f"The Run table ``{_name}``"))
for _name in ds.ANALYSIS_TABLES:
    if _name != "memory":
        setattr(Pod, _name, _cached(_name, Pod._analysis, f"The analysis ``{_name}``"))
del _name


def _connect(loc: ds.Location, memory_limit, temp_directory, threads):
    import duckdb

    tmp = temp_directory or tempfile.mkdtemp(prefix="tfprof_duckdb_")
    limit = f"{int(memory_limit)}B" if isinstance(memory_limit, int) else str(memory_limit)
    config = {
        "memory_limit": limit,
        "temp_directory": tmp,
        "threads": int(threads or os.cpu_count() or 1),
        # Order only where a query asks for it: lets scans stream in bounded memory.
        "preserve_insertion_order": False,
    }
    con = duckdb.connect(config=config)
    if not loc.is_local:
        con.register_filesystem(loc.fs)
    return con, tmp


def _close(con, tmp: str, remove: bool) -> None:
    try:
        con.close()
    finally:
        if remove:
            shutil.rmtree(tmp, ignore_errors=True)


def _query_errors() -> tuple[type, ...]:
    """DuckDB's errors that are a query's own mistake (syntax, names, types)."""
    import duckdb

    names = ("ParserException", "BinderException", "CatalogException", "SyntaxException",
             "ConversionException", "InvalidTypeException", "NotImplementedException")  # fmt: skip
    return tuple(getattr(duckdb, n) for n in names if hasattr(duckdb, n))
