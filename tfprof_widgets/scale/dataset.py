"""A converted pod on disk: its layout, its manifest, and its tables as Parquet.

A dataset is a directory, local or on any filesystem fsspec reaches (``s3://``, ``gs://``,
``file://``, ``memory://``)::

    DATASET/manifest.json                   what is in it (below); rewritten after each host
    DATASET/hosts/<host>/<table>.parquet    one file per table of one host, zstd
    DATASET/hosts/<host>/host.json          that host's manifest entry, written last

Each host holds the tables of :mod:`tfprof_widgets.schema` that a :class:`~tfprof_widgets.Run`
of that host alone has (``RAW_TABLES``: events with their derived ``group_id``/``step``/
``tf_op``, event stats, planes, lines, event metadata and its stats, plane stats, TF1 tfprof
tables), and what the per-host analyses made of them (``ANALYSIS_TABLES``: steps, op stats,
kernels, memory timeline and summary, tf.data bottlenecks, profile options), all computed by
the same pandas code as an in-memory Run. Times are on that host's own clock (``start_us`` 0
at its first event, ``t0_ns`` in the manifest); a pod puts them on one clock when it reads
them.

The manifest (``manifest.json``): ``format``, ``version`` (:data:`DATASET_VERSION`, the
layout), ``schema`` (every table's columns and dtypes when it was written; a dataset written
with other columns is refused, convert it again), ``run`` and ``source`` (the run converted),
``hosts`` (one entry per converted host, in the run's host order: events, stats, time range,
step-group source, source files with size and mtime) and ``failed`` (hosts that could not be
converted, with the reason).
"""

from __future__ import annotations

import base64
import json
import posixpath
import urllib.parse

import numpy as np
import pandas as pd

from .. import schema
from ..errors import CorruptProfileError, ProfileError, ProfileNotFoundError

DATASET_FORMAT = "tfprof_widgets pod dataset"
# The layout's version: bumped when files move or change meaning.
DATASET_VERSION = 1
MANIFEST = "manifest.json"
HOST_ENTRY = "host.json"
HOSTS_DIR = "hosts"
TMP_PREFIX = ".tmp-"
COMPRESSION = "zstd"
# Row groups small enough that DuckDB scans a host's events in parallel, in bounded memory.
ROW_GROUP_ROWS = 131_072

# Table name -> its columns in tfprof_widgets.schema. Run tables, then per-host analyses.
RAW_TABLES: dict[str, dict[str, tuple[str, str]]] = {
    "events": schema.EVENTS,
    "event_stats": schema.EVENT_STATS,
    "planes": schema.PLANES,
    "lines": schema.LINES,
    "event_metadata": schema.EVENT_METADATA,
    "metadata_stats": schema.METADATA_STATS,
    "plane_stats": schema.PLANE_STATS,
    "tfprof_nodes": schema.TFPROF_NODES,
    "tfprof_execs": schema.TFPROF_EXECS,
}
ANALYSIS_TABLES: dict[str, dict[str, tuple[str, str]]] = {
    "steps": schema.STEPS,
    "device_precision": schema.DEVICE_PRECISION,
    "ops": schema.OP_STATS,
    "kernels": schema.KERNELS,
    "memory": schema.MEMORY,
    "memory_summary": schema.MEMORY_SUMMARY,
    "tf_data_bottleneck": schema.TF_DATA_BOTTLENECK,
    "profile_options": schema.PROFILE_OPTIONS,
}
TABLES = {**RAW_TABLES, **ANALYSIS_TABLES}
# Extra columns a host's files carry beyond the schema: how the Run's tables link up.
LINK_COLUMNS = {"events": "line_row", "lines": "plane_row"}

_META_KEY = b"tfprof_widgets"
_BYTES_SUFFIX = "__bytes"


def require(*modules: str) -> None:
    """Import the scale extra's packages, or say how to install them."""
    import importlib

    missing = []
    for m in modules:
        try:
            importlib.import_module(m)
        except ImportError:
            missing.append(m)
    if missing:
        raise ImportError(
            f"pod datasets need {', '.join(missing)}: pip install 'tfprof_widgets[scale]'"
        )


def schema_fingerprint() -> dict[str, list[list[str]]]:
    """Every stored table's columns and dtypes, as the manifest records them."""
    return {t: [[c, d] for c, (d, _) in spec.items()] for t, spec in TABLES.items()}


# -- where things are ---------------------------------------------------------------------
class Location:
    """A dataset's root on some filesystem: local paths and fsspec URLs alike."""

    def __init__(self, url: str, storage_options: dict | None = None) -> None:
        import fsspec

        self.url = str(url)
        self.fs, self.root = fsspec.core.url_to_fs(self.url, **(storage_options or {}))
        self.root = self.root.rstrip("/") or "/"

    @property
    def is_local(self) -> bool:
        protocol = self.fs.protocol
        return "file" in (protocol if isinstance(protocol, tuple) else (protocol,))

    def path(self, *parts: str) -> str:
        return posixpath.join(self.root, *parts)

    def host_dir(self, host: str) -> str:
        return self.path(HOSTS_DIR, host_dirname(host))

    def table_path(self, host: str, table: str) -> str:
        return posixpath.join(self.host_dir(host), f"{table}.parquet")

    def for_duckdb(self, path: str) -> str:
        """How DuckDB names a file: a local path, else the URL of a registered filesystem."""
        return path if self.is_local else self.fs.unstrip_protocol(path)

    def read_json(self, path: str) -> dict:
        with self.fs.open(path, "rb") as f:
            return json.loads(f.read().decode("utf-8"))

    def write_json(self, path: str, data: dict) -> None:
        """Write through a temporary name and rename, so a reader never sees half of it."""
        tmp = f"{path}{TMP_PREFIX}{_token()}"
        with self.fs.open(tmp, "wb") as f:
            f.write(json.dumps(data, indent=1, sort_keys=False).encode("utf-8"))
        self.fs.mv(tmp, path)


def host_dirname(host: str) -> str:
    """A host's directory name: its name, with anything a filesystem might mind escaped."""
    return urllib.parse.quote(host, safe="._-@+=,") or "_"


def _token() -> str:
    import os

    return f"{os.getpid()}-{os.urandom(4).hex()}"


# -- the manifest ---------------------------------------------------------------------------
def new_manifest(run: str, source: str) -> dict:
    from .. import __version__

    return {
        "format": DATASET_FORMAT,
        "version": DATASET_VERSION,
        "written_by": f"tfprof_widgets {__version__}",
        "run": run,
        "source": source,
        "schema": schema_fingerprint(),
        "hosts": [],
        "failed": [],
    }


def read_manifest(loc: Location) -> dict:
    """The manifest of the dataset at ``loc``, checked: a ProfileError says what is wrong."""
    path = loc.path(MANIFEST)
    if not loc.fs.exists(path):
        if not loc.fs.exists(loc.root):
            raise ProfileNotFoundError(loc.url, "no such dataset (no such directory)")
        raise ProfileNotFoundError(
            loc.url,
            "not a converted dataset (no manifest.json): make one with "
            "`tfprof-widgets convert LOGDIR -o DATASET` or tfprof_widgets.convert()",
        )
    try:
        manifest = loc.read_json(path)
    except (ValueError, UnicodeDecodeError) as exc:
        raise CorruptProfileError(
            path, f"the dataset's manifest is not valid JSON ({exc})"
        ) from None
    if not isinstance(manifest, dict) or manifest.get("format") != DATASET_FORMAT:
        raise CorruptProfileError(path, "not the manifest of a tfprof_widgets pod dataset")
    if manifest.get("version") != DATASET_VERSION:
        raise ProfileError(
            loc.url,
            f"a dataset of layout version {manifest.get('version')}; this tfprof_widgets "
            f"reads version {DATASET_VERSION}: convert the capture again",
        )
    if manifest.get("schema") != schema_fingerprint():
        raise ProfileError(
            loc.url,
            f"written by {manifest.get('written_by', 'another version')} with other table "
            "columns than this tfprof_widgets has: convert the capture again",
        )
    return manifest


# -- tables <-> Parquet ---------------------------------------------------------------------
def write_table(loc: Location, path: str, df: pd.DataFrame) -> None:
    """One DataFrame as a zstd Parquet file that reads back with the same dtypes,
    categories (their order and unused ones too) and values."""
    import pyarrow.parquet as pq

    table = frame_to_arrow(df)
    with loc.fs.open(path, "wb") as f:
        pq.write_table(table, f, compression=COMPRESSION, row_group_size=ROW_GROUP_ROWS)


def read_table(loc: Location, path: str, columns: list[str] | None = None) -> pd.DataFrame:
    """A table written by :func:`write_table`, as it was."""
    import pyarrow.parquet as pq

    with loc.fs.open(path, "rb") as f:
        table = pq.read_table(f, columns=_with_bytes_columns(f, columns))
    return arrow_to_frame(table)


def _with_bytes_columns(f, columns):
    if columns is None:
        return None
    import pyarrow.parquet as pq

    names = pq.read_schema(f).names
    return [c for c in names if c in columns or c.removesuffix(_BYTES_SUFFIX) in columns]


def frame_to_arrow(df: pd.DataFrame):
    """A DataFrame as an Arrow table, with what pandas needs to rebuild it exactly in the
    schema metadata: categoricals become string dictionaries (bytes values, which TF keeps
    for some stats, go to a ``<column>__bytes`` binary column), tuples become lists."""
    import pyarrow as pa

    arrays, names, meta = [], [], {}
    for col in df.columns:
        s = df[col]
        m: dict = {"dtype": str(s.dtype)}
        if isinstance(s.dtype, pd.CategoricalDtype):
            cats = s.cat.categories
            m["categories"] = [_encode_value(v) for v in cats]
            m["categories_dtype"] = str(cats.dtype)
            codes = s.cat.codes.to_numpy()
            is_bytes_cat = np.array([isinstance(v, bytes) for v in cats], bool)
            is_bytes = (codes >= 0) & is_bytes_cat[np.maximum(codes, 0)] if len(cats) else None
            dictionary = pa.array(
                ["" if b else str(v) for v, b in zip(cats, is_bytes_cat)], type=pa.string()
            )
            mask = codes < 0 if is_bytes is None else (codes < 0) | is_bytes
            arrays.append(
                pa.DictionaryArray.from_arrays(
                    pa.array(codes.astype(np.int32), mask=mask), dictionary
                )
            )
            names.append(col)
            if is_bytes is not None and is_bytes.any():
                values = np.full(len(s), None, dtype=object)
                values[is_bytes] = cats.to_numpy(dtype=object)[codes[is_bytes]]
                arrays.append(pa.array(values, type=pa.binary()))
                names.append(col + _BYTES_SUFFIX)
        elif s.dtype == object and len(s) and any(isinstance(v, tuple) for v in s):
            m["tuples"] = True
            arrays.append(pa.array([list(v) if isinstance(v, tuple) else None for v in s]))
            names.append(col)
        else:
            arrays.append(pa.Array.from_pandas(s.to_numpy() if s.dtype == object else s))
            if arrays[-1].type == pa.null():  # an all-missing object column: keep it text
                arrays[-1] = arrays[-1].cast(pa.string())
            names.append(col)
        meta[col] = m
    table = pa.Table.from_arrays(arrays, names=names)
    return table.replace_schema_metadata({_META_KEY: json.dumps(meta).encode("utf-8")})


_NULLABLE = {"Int32": "int32", "Int64": "int64", "UInt64": "uint64", "boolean": "bool"}


def arrow_to_frame(table) -> pd.DataFrame:
    """The DataFrame :func:`frame_to_arrow` was made from."""
    meta = json.loads((table.schema.metadata or {}).get(_META_KEY, b"{}"))
    out = {}
    names = table.column_names
    for col in names:
        if col.endswith(_BYTES_SUFFIX) and col.removesuffix(_BYTES_SUFFIX) in meta:
            continue
        m = meta.get(col, {})
        arr = table.column(col)
        if "categories" in m:
            blobs = table.column(col + _BYTES_SUFFIX) if col + _BYTES_SUFFIX in names else None
            out[col] = _categorical(arr, m, blobs)
        elif m.get("tuples"):
            out[col] = pd.Series(
                [tuple(v) if v is not None else () for v in arr.to_pylist()], dtype=object
            )
        else:
            s = arr.to_pandas()
            want = m.get("dtype")
            if want and str(s.dtype) != want:
                s = s.astype(want)
            out[col] = s
    return pd.DataFrame(out, index=pd.RangeIndex(table.num_rows))


def _categorical(arr, m: dict, blobs) -> pd.Categorical:
    """The stored categories in their order and dtype; bytes values from ``blobs``."""
    cats = [_decode_value(v) for v in m["categories"]]
    want = m["categories_dtype"]
    index = pd.Index(cats, dtype=object) if want == "object" else pd.Index(cats).astype(want)
    file_cat = arr.to_pandas()
    if not isinstance(file_cat.dtype, pd.CategoricalDtype):
        file_cat = file_cat.astype("category")
    file_codes = file_cat.cat.codes.to_numpy()
    mapping = index.get_indexer(pd.Index(file_cat.cat.categories, dtype=object))
    codes = np.full(len(file_codes), -1, np.int64)
    has = file_codes >= 0
    codes[has] = mapping[file_codes[has]]
    if blobs is not None:
        values = np.array(blobs.to_pylist(), dtype=object)
        present = np.array([b is not None for b in values], bool)
        if present.any():
            codes[present] = index.get_indexer(pd.Index(list(values[present]), dtype=object))
    return pd.Categorical.from_codes(codes.astype(np.int64), dtype=pd.CategoricalDtype(index))


def _encode_value(v):
    if isinstance(v, bytes):
        return {"b64": base64.b64encode(v).decode("ascii")}
    if isinstance(v, np.generic):
        return v.item()
    return v


def _decode_value(v):
    if isinstance(v, dict) and "b64" in v:
        return base64.b64decode(v["b64"])
    return v
