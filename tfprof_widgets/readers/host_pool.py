"""A process pool that reads the hosts of a multi-host run on every core.

Decoding one host's capture is CPU-bound Python and C that holds the GIL, so the hosts of a
run directory are read by worker processes, each returning that host's
:class:`~tfprof_widgets.readers.columnar.HostTables` (numpy columns, pickled without
per-event work), and merged by the caller in host order, exactly as a serial load would.

The pool starts workers with the ``forkserver`` method (never ``fork``: the process may
hold TensorFlow's or a Jupyter kernel's threads), keeps them for the next load, and is shut
down at exit. A load uses it only when it pays: at least two hosts, at least
:data:`MIN_PARALLEL_BYTES` of files and :data:`MIN_CORES` cores. ``TFPROF_WIDGETS_LOAD_WORKERS``
sets the number of workers (1: always serial; 2 or more: the pool whatever the size).
"""

from __future__ import annotations

import atexit
import concurrent.futures as cf
import mmap
import multiprocessing
import os
import pickle
import tempfile
import threading
from collections.abc import Callable, Iterator, Sequence
from typing import Any

# Below this much capture data a run is read serially: starting or waking workers and
# moving the columns back costs more than it saves.
MIN_PARALLEL_BYTES = 16 << 20
ENV_WORKERS = "TFPROF_WIDGETS_LOAD_WORKERS"
# Two cores are enough: with the columns coming back through shared memory, 8 hosts x 250k
# events load in 0.80-0.88 s on this 2-vCPU machine against 0.91-0.99 s serially
# (benchmarks/bench_multihost.py), where two processes of pure Python run only 1.17x faster
# than one; through the pool's pipe it was 1.16 s against 0.90 s.
MIN_CORES = 2

_lock = threading.Lock()
_pool: cf.ProcessPoolExecutor | None = None
_pool_size = 0


def workers_for(n_hosts: int, total_bytes: int) -> int:
    """How many processes should read a run of ``n_hosts`` hosts and ``total_bytes`` of
    files: 1 (serial) unless it pays, else up to one per core."""
    env = os.environ.get(ENV_WORKERS, "").strip()
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    wanted = int(env) if env.isdigit() and int(env) > 0 else (cores or 1)
    if n_hosts < 2 or wanted < 2:
        return 1
    if not env and (total_bytes < MIN_PARALLEL_BYTES or wanted < MIN_CORES):
        return 1
    return min(wanted, n_hosts)


def _executor(workers: int) -> cf.ProcessPoolExecutor:
    global _pool, _pool_size
    with _lock:
        if _pool is None or _pool_size < workers:
            if _pool is not None:
                _pool.shutdown(wait=False, cancel_futures=True)
            ctx = multiprocessing.get_context("forkserver")
            ctx.set_forkserver_preload(["tfprof_widgets.loading"])
            _pool, _pool_size = cf.ProcessPoolExecutor(workers, mp_context=ctx), workers
        return _pool


def shutdown() -> None:
    """Stop the workers (also done at exit)."""
    global _pool
    with _lock:
        if _pool is not None:
            _pool.shutdown(wait=True, cancel_futures=True)
            _pool = None


atexit.register(shutdown)


# Columns come back through a file in shared memory, not the pool's pipe: the worker writes
# the result's array buffers (pickle protocol 5, out of band) to one file, and the loader
# maps it and builds the arrays on the mapping without copying them.
_SHM_DIR = "/dev/shm" if os.path.isdir("/dev/shm") else None


def _shared_result(fn: Callable[..., Any], *args) -> tuple:
    """Run ``fn(*args)`` (in a worker) and hand back its result by a shared-memory file."""
    buffers: list[pickle.PickleBuffer] = []
    head = pickle.dumps(fn(*args), protocol=5, buffer_callback=buffers.append)
    views = [b.raw() for b in buffers]
    fd, path = tempfile.mkstemp(prefix="tfprof_widgets_", dir=_SHM_DIR)
    try:
        with os.fdopen(fd, "wb") as f:
            for v in views:
                f.write(v)
    except BaseException:
        os.unlink(path)
        raise
    return head, path, [v.nbytes for v in views]


def _receive(head: bytes, path: str, sizes: list[int]) -> Any:
    """The result a worker left in ``path`` (removed here), its arrays on a private
    copy-on-write mapping of the file."""
    try:
        if not sum(sizes):
            return pickle.loads(head, buffers=[b""] * len(sizes))
        with open(path, "rb") as f:
            mapped = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_COPY)
    finally:
        os.unlink(path)
    views, at = [], 0
    whole = memoryview(mapped)
    for n in sizes:
        views.append(whole[at : at + n])
        at += n
    return pickle.loads(head, buffers=views)


def map_in_pool(
    fn: Callable[..., Any], jobs: Sequence[tuple], workers: int
) -> Iterator[tuple[int, Any, BaseException | None]]:
    """Run ``fn(*job)`` for every job in worker processes; yield ``(index, result, error)``
    as jobs finish (``error`` is the exception a job raised, re-raised here by the caller
    if it wants). A Ctrl-C cancels what has not started and stops the pool."""
    pool = _executor(workers)
    futures = {pool.submit(_shared_result, fn, *job): i for i, job in enumerate(jobs)}
    try:
        for fut in cf.as_completed(futures):
            try:
                yield futures[fut], _receive(*fut.result()), None
            except cf.process.BrokenProcessPool:
                raise
            except Exception as exc:  # noqa: BLE001 - handed to the caller as it is
                yield futures[fut], None, exc
    except BaseException:
        for fut in futures:
            fut.cancel()
        if not isinstance(_pool, cf.ProcessPoolExecutor) or _pool is not pool:
            raise
        shutdown()
        raise
