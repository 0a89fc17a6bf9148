"""``convert()``: a capture (logdir, run directory or file) into a pod dataset, host by host.

Each host is loaded alone into an ordinary :class:`~tfprof_widgets.Run` (one host in memory
per worker at a time), its tables and its per-host analyses are written as Parquet under a
temporary name, the directory is renamed into place, and only then does the host get its
manifest entry. So an interrupted conversion leaves nothing that looks finished: run it again
and converted hosts are skipped (while their source file is unchanged: same size and mtime),
anything half-written is removed and done again. Hosts are converted in parallel, in the
load pool's worker processes (forked by its fork server, never by ``fork`` from the caller,
whose other threads may hold locks). A host whose conversion raises anything is listed as
failed; the others are converted. Nothing is ever written next to the capture (unless the
output is put there), and the capture files are only read.
"""

from __future__ import annotations

import concurrent.futures
import dataclasses
import multiprocessing
import os
import sys
import time
import warnings

from ..analysis.memory import unrecorded_data_type
from ..errors import ProfileError
from ..loading import load
from ..readers.discovery import resolve, text_path
from ..readers.formats import host_sources
from ..readers.xspace import host_pool
from ..run import Run
from . import dataset as ds
from .per_host import host_analyses, host_raw_tables


@dataclasses.dataclass(frozen=True)
class HostJob:
    """What a worker needs to convert one host (picklable)."""

    host: str
    index: int
    files: tuple[str, ...]
    run_dir: str
    out_url: str
    storage_options: dict | None = None

    @property
    def source(self) -> str:
        """What to load (with ``hosts=[host]``): the run directory, so that the host is named
        as in the whole run (a capture's recorded host name, or its file's name where two
        captures record the same one)."""
        return self.run_dir


@dataclasses.dataclass
class ConvertResult:
    """What :func:`convert` did: the dataset, and per host whether it was converted now,
    skipped (already there) or failed (with the reason)."""

    dataset: str
    converted: list[str]
    skipped: list[str]
    failed: dict[str, str]
    seconds: float

    def __repr__(self) -> str:
        return (
            f"<ConvertResult {self.dataset}: {len(self.converted)} converted, "
            f"{len(self.skipped)} already there, {len(self.failed)} failed, "
            f"{self.seconds:.1f} s>"
        )


def convert(
    path: str | os.PathLike[str],
    output: str | os.PathLike[str],
    run: str | None = None,
    *,
    workers: int | None = None,
    storage_options: dict | None = None,
    progress: bool | None = None,
) -> ConvertResult:
    """Convert a capture into a pod dataset at ``output`` (a directory or an fsspec URL).

    ``path`` is what :func:`tfprof_widgets.load` takes: a logdir (its newest run, or
    ``run=``), a run directory or a single capture file. Every host's tables and per-host
    analyses are written as Parquet under ``output/hosts/<host>/``, with ``manifest.json``
    (see :mod:`tfprof_widgets.scale.dataset`). ``workers``: processes converting hosts at
    once (default: the CPU count, at most one per host); 1 converts in this process.

    Running it again resumes: hosts already converted from the same, unchanged file are
    skipped, half-written ones are redone. A host whose file cannot be read does not stop
    the others: they are converted and the manifest lists it as failed, then its
    :class:`~tfprof_widgets.ProfileError` is raised, naming the host (``exc.result`` is the
    :class:`ConvertResult`). An output that holds another run's conversion is refused.
    """
    ds.require("pyarrow", "fsspec")
    t_start = time.perf_counter()
    out_url = text_path(output)
    files = resolve(path, run)
    sources = host_sources(files.files)
    loc = ds.Location(out_url, storage_options)
    _refuse_source_tree(loc, files.path, sources)
    _refuse_links_out(loc)
    ds.require_text_root(loc)
    manifest = _start_manifest(loc, files)
    done = {e["host"]: e for e in manifest["hosts"]}
    # One file given: the workers load that file, not its directory (whose other captures
    # would name the host otherwise, by file, where two record the same host name).
    load_path = files.files[0] if os.path.isfile(text_path(path)) else files.path
    jobs, skipped = _jobs(sources, load_path, out_url, storage_options, loc, done)
    _remove_leftovers(loc, keep={ds.host_dirname(h) for h in done})
    failed: dict[str, str] = {}
    errors: list[tuple[HostJob, dict]] = []
    order = {h: i for i, (h, _) in enumerate(sources)}

    def record(job: HostJob, outcome: dict) -> None:
        if "error" in outcome:
            failed[job.host] = outcome["error"]["problem"]
            errors.append((job, outcome["error"]))
            manifest["failed"] = [f for f in manifest["failed"] if f["host"] != job.host] + [
                {"host": job.host, "files": list(job.files), **outcome["error"]}
            ]
        else:
            done[job.host] = outcome
            manifest["failed"] = [f for f in manifest["failed"] if f["host"] != job.host]
        manifest["hosts"] = sorted(done.values(), key=lambda e: order.get(e["host"], 1 << 30))
        loc.write_json(loc.path(ds.MANIFEST), manifest)

    bar = _bar(len(jobs), progress, f"converting {files.name}")
    try:
        for job, outcome in _run_jobs(jobs, workers):
            record(job, outcome)
            bar.update(1)
    finally:
        bar.close()
    if not jobs:  # nothing to do: still make sure the manifest is there
        loc.write_json(loc.path(ds.MANIFEST), manifest)
    result = ConvertResult(
        dataset=out_url,
        converted=[j.host for j in jobs if j.host not in failed],
        skipped=skipped,
        failed=failed,
        seconds=time.perf_counter() - t_start,
    )
    if errors:
        raise _error_from(errors, result)
    return result


def _jobs(sources, run_path, out_url, storage_options, loc, done: dict):
    """The hosts to convert (as jobs) and those already converted from their unchanged files
    (skipped; ``done`` keeps only those). The workers (a fork server another load started)
    may work in another directory than this process: they get absolute local paths, or they
    read and write beside the wrong one."""
    jobs, skipped = [], []
    here = out_url if "://" in out_url else os.path.abspath(out_url)
    for i, (host, fs) in enumerate(sources):
        fs_abs = tuple(os.path.abspath(f) for f in fs)
        job = HostJob(host, i, fs_abs, os.path.abspath(run_path), here, storage_options)
        if host in done and _unchanged(done[host], fs) and _own_dir(loc, loc.host_dir(host)):
            skipped.append(host)
        else:
            done.pop(host, None)
            jobs.append(job)
    return jobs, skipped


# -- one host -------------------------------------------------------------------------------
def convert_host(job: HostJob) -> dict:
    """Convert one host (in a worker process): its manifest entry, or ``{"error": ...}``
    when its capture cannot be read."""
    t0 = time.perf_counter()
    loc = ds.Location(job.out_url, job.storage_options)
    try:
        run = load(job.source, hosts=[job.host], progress=False)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # analyses' notes stay in the run, not here
            tables = {**host_raw_tables(run), **host_analyses(run)}
    except ProfileError as exc:
        return {"error": {"type": type(exc).__name__, "path": exc.path, "problem": exc.problem}}
    except Exception as exc:  # noqa: BLE001 - one host's bug must not stop the others
        # Not a problem of the file that we know of: our own error on this host's data. The
        # host is listed as failed with it, the others are converted.
        problem = f"could not be converted ({type(exc).__name__}: {exc}); please report it"
        return {"error": {"type": "ProfileError", "path": job.files[0], "problem": problem}}
    final = loc.host_dir(job.host)
    tmp = loc.path(ds.HOSTS_DIR, f"{ds.TMP_PREFIX}{ds.host_dirname(job.host)}-{ds._token()}")
    loc.fs.makedirs(tmp, exist_ok=True)
    for name, df in tables.items():
        ds.write_table(loc, f"{tmp}/{name}.parquet", df)
    entry = _entry(job, run, tables, time.perf_counter() - t0)
    entry["bytes"] = sum(loc.fs.size(f"{tmp}/{name}.parquet") for name in tables)
    with loc.fs.open(f"{tmp}/{ds.HOST_ENTRY}", "wb") as f:
        import json

        f.write(json.dumps(entry).encode("utf-8"))
    if os.path.lexists(final) if loc.is_local else loc.fs.exists(final):
        _remove(loc, final)
    loc.fs.mv(tmp, final, recursive=True)
    return entry


def _entry(job: HostJob, run: Run, tables: dict, seconds: float) -> dict:
    ev = run.events
    timed = ev["start_us"].notna()
    return {
        "host": job.host,
        "dir": ds.host_dirname(job.host),
        "events": len(ev),
        "event_stats": len(run.event_stats),
        "rows": {name: len(df) for name, df in tables.items()},
        "t0_ns": int(run.t0_ns),
        "duration_us": float(run.duration_us) if timed.any() else 0.0,
        "steps": int(len(tables["steps"])),
        "step_groups": "file" if "group_id" in run.stat_names else "derived",
        # what a memory breakdown's row without a tensor (the stack) shows as its dtype: the
        # framework's name, which a pod's slice of one allocator cannot tell without the trace
        "unrecorded_data_type": unrecorded_data_type(run),
        "sources": [
            {"path": os.path.abspath(f), "size": os.path.getsize(f), "mtime": os.path.getmtime(f)}
            for f in job.files
        ],
        "errors": list(run.errors),
        "warnings": list(run.warnings),
        "seconds": round(seconds, 3),
        "peak_rss_bytes": _peak_rss(),
    }


def _peak_rss() -> int:
    """The converting process's peak resident memory so far, bytes (0 where unknown)."""
    try:
        import resource
    except ImportError:  # not on Windows
        return 0
    kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return int(kb if sys.platform == "darwin" else kb * 1024)  # macOS counts bytes


def _error_from(failures: list[tuple[HostJob, dict]], result: ConvertResult) -> ProfileError:
    """The first failed host's error, of its own type, naming the host and what became of
    the others (``exc.host``, ``exc.result``)."""
    from .. import errors

    job, err = min(failures, key=lambda f: f[0].index)
    cls = getattr(errors, err["type"], ProfileError)
    if not (isinstance(cls, type) and issubclass(cls, ProfileError)):
        cls = ProfileError
    others = [j.host for j, _ in failures if j is not job]
    problem = f"host {job.host} not converted: {err['problem']}"
    if others:
        problem += f"; {len(others)} more host(s) failed too: {', '.join(others)}"
    problem += (
        f"; the other {len(result.converted) + len(result.skipped)} host(s) are in {result.dataset}"
    )
    exc = cls(err["path"], problem)
    exc.host = job.host
    exc.result = result
    return exc


# -- running the jobs -----------------------------------------------------------------------
def _run_jobs(jobs: list[HostJob], workers: int | None):
    """Yield (job, outcome) as hosts finish: in worker processes, or here when one worker."""
    if not jobs:
        return
    n = min(workers or os.cpu_count() or 1, len(jobs))
    if n <= 1:
        for job in jobs:
            yield job, convert_host(job)
        return
    if _has_fork_server():
        for i, outcome, exc in host_pool.map_in_pool(
            convert_host, [(job,) for job in jobs], n, here=False
        ):
            if exc is not None:
                raise exc
            yield jobs[i], outcome
        return
    ctx = multiprocessing.get_context("spawn")
    with concurrent.futures.ProcessPoolExecutor(n, mp_context=ctx) as pool:
        futures = {pool.submit(convert_host, job): job for job in jobs}
        try:
            for fut in concurrent.futures.as_completed(futures):
                yield futures[fut], fut.result()
        except BaseException:
            for fut in futures:
                fut.cancel()
            raise


def _has_fork_server() -> bool:
    """Whether the load pool can run here: its workers are forked by a fork server that
    imported the readers (never by ``fork`` from this process, which may hold other threads'
    locks: a worker forked while a thread held one waited for it forever), and they never
    import the caller's ``__main__``. Elsewhere (Windows) spawned workers."""
    return host_pool.popen_forkserver is not None and (
        "forkserver" in multiprocessing.get_all_start_methods()
    )


# -- resuming -------------------------------------------------------------------------------
def _start_manifest(loc: ds.Location, files) -> dict:
    """The manifest to continue from: the existing one for the same run, else a new one."""
    source = os.path.abspath(files.path)
    if loc.fs.exists(loc.path(ds.MANIFEST)):
        try:
            manifest = ds.read_manifest(loc)
        except ProfileError:
            manifest = None  # another layout or schema: convert everything again
        if manifest is not None:
            if manifest.get("source") != source:
                raise ProfileError(
                    loc.url,
                    f"already holds the conversion of {manifest.get('source')}; convert "
                    f"{source} into another directory",
                )
            return manifest
        if loc.fs.exists(loc.path(ds.HOSTS_DIR)):
            _remove(loc, loc.path(ds.HOSTS_DIR))
    elif (
        loc.fs.exists(loc.root)
        and loc.fs.ls(loc.root)
        and not loc.fs.exists(loc.path(ds.HOSTS_DIR))
    ):
        raise ProfileError(
            loc.url, "is a directory that holds other files: convert into a new or empty one"
        )
    loc.fs.makedirs(loc.path(ds.HOSTS_DIR), exist_ok=True)
    return ds.new_manifest(files.name, source)


def _unchanged(entry: dict, files: list[str]) -> bool:
    recorded = {s["path"]: (s["size"], s["mtime"]) for s in entry.get("sources", [])}
    try:
        now = {os.path.abspath(f): (os.path.getsize(f), os.path.getmtime(f)) for f in files}
    except OSError:
        return False
    return recorded == now


def _remove_leftovers(loc: ds.Location, keep: set[str]) -> None:
    """Temporary directories of an interrupted run, and host directories the manifest does
    not list (renamed into place just before an interruption): removed, to be redone."""
    hosts_dir = loc.path(ds.HOSTS_DIR)
    if not loc.fs.exists(hosts_dir):
        return
    for entry in loc.fs.ls(hosts_dir, detail=False):
        name = entry.rstrip("/").rsplit("/", 1)[-1]
        if name not in keep:
            _remove(loc, entry)


def _own_dir(loc: ds.Location, path: str) -> bool:
    """Whether ``path`` is a directory of the output itself (not a link to one elsewhere)."""
    if loc.is_local:
        return os.path.isdir(path) and not os.path.islink(path)
    return loc.fs.exists(path)


def _remove(loc: ds.Location, path: str) -> None:
    """Remove a file or directory of the output; a symbolic link is removed itself, never
    what it points to."""
    if loc.is_local and os.path.islink(path):
        os.unlink(path)
    else:
        loc.fs.rm(path, recursive=True)


def _refuse_links_out(loc: ds.Location) -> None:
    """The output's ``hosts/`` (where hosts are removed and rewritten) must be the output's
    own directory: a symbolic link, or a path resolving outside the output, is refused
    before anything is written or removed."""
    if not loc.is_local:
        return
    hosts = loc.path(ds.HOSTS_DIR)
    root = os.path.realpath(loc.root)
    where = os.path.realpath(hosts)
    if os.path.islink(hosts) or (os.path.lexists(hosts) and os.path.dirname(where) != root):
        raise ProfileError(
            hosts,
            f"is a symbolic link (to {where}): a dataset's hosts/ directory must be its own; "
            "convert into a new or empty directory",
        )
    if os.path.lexists(hosts) and not os.path.isdir(hosts):
        raise ProfileError(hosts, "is not a directory: convert into a new or empty directory")


def _refuse_source_tree(loc: ds.Location, run_dir: str, sources) -> None:
    """Writing the dataset over the capture itself would destroy it."""
    if not loc.is_local:
        return
    out = os.path.realpath(loc.root)
    for _, fs in sources:
        for f in fs:
            if os.path.realpath(f) == out or os.path.realpath(f).startswith(out + os.sep):
                raise ProfileError(
                    loc.url, f"holds the capture being converted ({f}): choose another output"
                )


class _NoBar:
    def update(self, n: int) -> None:
        pass

    def close(self) -> None:
        pass


def _bar(total: int, progress: bool | None, desc: str):
    if progress is False or total == 0:
        return _NoBar()
    try:
        from tqdm.auto import tqdm
    except ImportError:
        return _NoBar()
    return tqdm(total=total, desc=desc, unit="host", delay=0 if progress else 1.0, leave=False)
