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
kernels, memory timeline and summary, tf.data bottlenecks, profile options, HTA's idle time,
comm/comp overlap and queue length per rank), all computed by the same pandas code as an
in-memory Run. Times are on that host's own clock (``start_us`` 0
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
import math
import posixpath
import urllib.parse
import warnings

import numpy as np
import pandas as pd

from .. import schema
from ..errors import CorruptProfileError, ProfileError, ProfileNotFoundError
from ..frameworks.pytorch import schema as pt_schema

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
    "input_time": schema.INPUT_TIME,
    # HTA's per-rank figures (PyTorch Kineto ranks; empty or one row on other captures)
    "idle_time_breakdown": pt_schema.IDLE_TIME_BREAKDOWN,
    "comm_comp_overlap": pt_schema.COMM_COMP_OVERLAP,
    "queue_length_summary": pt_schema.QUEUE_LENGTH_SUMMARY,
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


# Longest directory name written for a host (file systems stop at 255 bytes): longer names
# are cut and told apart by a hash of the whole name.
_MAX_DIRNAME = 160


def require_text_root(loc: Location) -> None:
    """A dataset's path must be text (UTF-8): DuckDB, which reads its tables, takes no other.
    A directory whose name holds other bytes (``d\\xe9``) is refused, naming it."""
    try:
        loc.root.encode("utf-8")
    except UnicodeEncodeError:
        raise ProfileError(
            loc.url.encode("utf-8", "surrogateescape").decode("utf-8", "replace"),
            "a dataset's path must be valid UTF-8 (DuckDB reads no other): rename the "
            "directory, or convert into another one",
        ) from None


def host_dirname(host: str) -> str:
    """A host's directory name: one path part, whatever the host is called (``..``, ``.``,
    ``../x``, an empty or a very long name): its name, with anything a filesystem might mind
    escaped, dots alone escaped too, and names too long for a file system cut and hashed."""
    text = host.encode("utf-8", "surrogatepass").decode("utf-8", "replace")
    name = urllib.parse.quote(text, safe="._-@+=,") or "_"
    if not name.strip("."):  # ".", "..": the directory itself, or its parent
        name = name.replace(".", "%2E")
    if len(name) > _MAX_DIRNAME:
        import hashlib

        digest = hashlib.sha1(name.encode("ascii")).hexdigest()[:16]
        name = f"{name[: _MAX_DIRNAME - 17]}~{digest}"
    return name


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


def read_manifest(loc: Location, notes: list[str] | None = None) -> dict:
    """The manifest of the dataset at ``loc``, checked (:func:`check_manifest`): a
    ProfileError says what is wrong. ``notes`` collects what was repaired (a host listed
    twice); without it, each is a warning."""
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
    except RecursionError:
        raise CorruptProfileError(
            path, "the dataset's manifest nests JSON deeper than Python can read"
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
    check_manifest(manifest, path, notes)
    return manifest


# -- checking a manifest's fields ------------------------------------------------------------
def _text(v) -> bool:
    if not isinstance(v, str):
        return False
    try:
        v.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate: no table or engine can hold it
        return False
    return True


def _count(v) -> bool:
    return isinstance(v, int) and not isinstance(v, bool) and 0 <= v < 2**63


def _int64(v) -> bool:
    return isinstance(v, int) and not isinstance(v, bool) and -(2**63) <= v < 2**63


def _real(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def _path(v) -> bool:
    return isinstance(v, str)  # a file name may hold bytes that are not UTF-8


# The fields of a host's manifest entry: (check, what it must be, required).
_HOST_FIELDS = {
    "host": (_text, "a host name (text)", True),
    "events": (_count, "a whole number >= 0", True),
    "event_stats": (_count, "a whole number >= 0", True),
    "t0_ns": (_int64, "a whole number of nanoseconds (int64)", True),
    "duration_us": (lambda v: _real(v) and v >= 0, "a finite number >= 0", True),
    "steps": (_count, "a whole number >= 0", True),
    "step_groups": (_text, "text", True),
    "unrecorded_data_type": (_text, "text", False),
    "sources": (lambda v: isinstance(v, list) and len(v) > 0, "a non-empty list", True),
    "rows": (lambda v: isinstance(v, dict) and all(_count(n) for n in v.values()),
             "tables' row counts (whole numbers >= 0)", False),
    "bytes": (_count, "a whole number >= 0", False),
    "peak_rss_bytes": (_count, "a whole number >= 0", False),
    "errors": (lambda v: isinstance(v, list) and all(map(_text, v)), "a list of text", False),
    "warnings": (lambda v: isinstance(v, list) and all(map(_text, v)), "a list of text", False),
}  # fmt: skip
_SOURCE_FIELDS = {
    "path": (_path, "a file path", True),
    "size": (_count, "a whole number >= 0", True),
    "mtime": (_real, "a finite number", True),
}


def _check_fields(obj, fields: dict, where: str, path: str) -> None:
    if not isinstance(obj, dict):
        raise CorruptProfileError(path, f"the manifest's {where} is not an object")
    for name, (ok, what, required) in fields.items():
        if name not in obj:
            if required:
                raise CorruptProfileError(path, f"the manifest's {where} has no {name!r}")
            continue
        if not ok(obj[name]):
            raise CorruptProfileError(
                path, f"the manifest's {where}.{name} is {_shown(obj[name])}, not {what}"
            )


def _shown(v) -> str:
    text = json.dumps(v, ensure_ascii=True, default=str)
    return text if len(text) <= 40 else text[:37] + "..."


def check_manifest(manifest: dict, path: str, notes: list[str] | None = None) -> None:
    """Every field the readers use, of the type they use it as: a
    :class:`~tfprof_widgets.CorruptProfileError` naming the manifest and the field
    otherwise. A host listed twice is kept once (the first), with a note in ``notes`` (a
    warning when None)."""
    for name in ("run", "source"):
        if not _path(manifest.get(name)):
            raise CorruptProfileError(
                path, f"the manifest's {name!r} is {_shown(manifest.get(name))}, not text"
            )
    for name in ("hosts", "failed"):
        if not isinstance(manifest.get(name, []), list):
            raise CorruptProfileError(
                path, f"the manifest's {name!r} is {_shown(manifest.get(name))}, not a list"
            )
    manifest.setdefault("failed", [])
    for i, f in enumerate(manifest["failed"]):
        where = f"failed[{i}]"
        _check_fields(f, {"host": _HOST_FIELDS["host"]}, where, path)
        if not _text(f.get("problem", "")):
            raise CorruptProfileError(path, f"the manifest's {where}.problem is not text")
    seen: dict[str, int] = {}
    kept = []
    for i, entry in enumerate(manifest.get("hosts", [])):
        _check_fields(entry, _HOST_FIELDS, f"hosts[{i}]", path)
        for j, src in enumerate(entry["sources"]):
            _check_fields(src, _SOURCE_FIELDS, f"hosts[{i}].sources[{j}]", path)
        host = entry["host"]
        if host in seen:
            note = (
                f"{path}: the manifest lists host {host!r} twice (hosts[{seen[host]}] and "
                f"hosts[{i}]): the first is kept, the other left out"
            )
            if notes is None:
                warnings.warn(note, stacklevel=3)
            else:
                notes.append(note)
            continue
        seen[host] = i
        kept.append(entry)
    manifest["hosts"] = kept


# -- tables <-> Parquet ---------------------------------------------------------------------
def write_table(loc: Location, path: str, df: pd.DataFrame) -> None:
    """One DataFrame as a zstd Parquet file that reads back with the same dtypes,
    categories (their order and unused ones too) and values."""
    import pyarrow.parquet as pq

    table = frame_to_arrow(df)
    with loc.fs.open(path, "wb") as f:
        pq.write_table(table, f, compression=COMPRESSION, row_group_size=ROW_GROUP_ROWS)


def expected_columns(path: str) -> list[str] | None:
    """The columns a dataset's table file must have (by its name), or None if not one."""
    name = posixpath.basename(path).removesuffix(".parquet")
    if name not in TABLES:
        return None
    link = [LINK_COLUMNS[name]] if name in LINK_COLUMNS else []
    return [*TABLES[name], *link]


def check_columns(path: str, names) -> None:
    """A :class:`CorruptProfileError` unless a table file has its table's columns."""
    want = expected_columns(path)
    if want is None:
        return
    missing = [c for c in want if c not in names]
    extra = [c for c in names if c not in want and c.removesuffix(_BYTES_SUFFIX) not in want]
    if missing or extra:
        what = f"no column {missing[0]!r}" if missing else f"a column {extra[0]!r} it should not"
        raise CorruptProfileError(path, f"a damaged table file: it has {what} (another table's?)")


def read_table(loc: Location, path: str, columns: list[str] | None = None) -> pd.DataFrame:
    """A table written by :func:`write_table`, as it was; a file that is not (damaged,
    another table's) is a :class:`CorruptProfileError` naming it."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        with loc.fs.open(path, "rb") as f:
            table = pq.read_table(f, columns=_with_bytes_columns(f, columns))
        if columns is None:
            check_columns(path, table.column_names)
        return arrow_to_frame(table)
    except FileNotFoundError:
        raise CorruptProfileError(path, "a table file of the dataset is missing") from None
    except (OSError, pa.ArrowException, ValueError, KeyError, TypeError, IndexError) as exc:
        if isinstance(exc, CorruptProfileError):
            raise
        raise CorruptProfileError(
            path, f"a damaged table file ({type(exc).__name__}: {str(exc)[:120]})"
        ) from None


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
