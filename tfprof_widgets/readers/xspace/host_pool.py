"""A process pool that reads the hosts of a multi-host run on every core.

Decoding one host's capture is CPU-bound Python and C that holds the GIL, so the hosts of a
run directory are read by worker processes, each returning that host's
:class:`~tfprof_widgets.readers.columnar.HostTables` (numpy columns, pickled without
per-event work), and merged by the caller in host order, exactly as a serial load would.

* Workers are started by a fork server (``forkserver``; never ``fork``: the process may hold
  TensorFlow's or a Jupyter kernel's threads) that imported the readers once, and are kept
  for the next load (shut down at exit). They never import the user's ``__main__``: they
  need only the readers, and importing a script again would rerun whatever it does outside
  an ``if __name__ == "__main__"`` guard (a training loop, a second load) in every worker.
* Columns come back without another copy: a worker pickles its result with protocol 5,
  whose numpy buffers travel out of band in one POSIX shared-memory segment (``/dev/shm``,
  memory, not disk); the loader maps it, unlinks it at once, and unpickles the arrays as
  writable views of the mapping, freed when the arrays are. Where shared memory is missing
  or full, the buffers travel through the pipe instead.
* A Ctrl-C stops the workers at once (they may be deep in a C walk of a large file) and
  frees what they left in shared memory; a pool whose worker died is replaced next time.

A load uses the pool only when it pays: at least two hosts, at least
:data:`MIN_PARALLEL_BYTES` of files and :data:`MIN_CORES` cores. ``TFPROF_WIDGETS_LOAD_WORKERS``
sets the number of workers (1: always serial; 2 or more: the pool whatever the size).
"""

from __future__ import annotations

import atexit
import collections
import concurrent.futures as cf
import mmap
import multiprocessing
import multiprocessing.context
import os
import pickle
import secrets
import threading
from collections.abc import Callable, Iterator, Sequence
from multiprocessing import resource_tracker, spawn
from typing import Any, NamedTuple

try:
    from multiprocessing import popen_forkserver
except ImportError:  # Windows: no fork server, so no pool (workers_for says 1)
    popen_forkserver = None

# Below this much capture data a run is read serially: starting or waking workers and
# moving the columns back costs more than it saves.
MIN_PARALLEL_BYTES = 16 << 20
ENV_WORKERS = "TFPROF_WIDGETS_LOAD_WORKERS"
# Two cores are enough: with the columns coming back through shared memory, 8 hosts x 250k
# events load in 0.80-0.88 s on this 2-vCPU machine against 0.91-0.99 s serially
# (benchmarks/bench_multihost.py), where two processes of pure Python run only 1.17x faster
# than one; through the pool's pipe it was 1.16 s against 0.90 s.
MIN_CORES = 2
_SHM_DIR = "/dev/shm"  # where Linux keeps POSIX shared memory (a tmpfs)
SHM_PREFIX = "tfprof_widgets-"  # the name of every segment a worker writes
_ALIGN = 64  # buffer offsets in a segment: cache-line aligned, as numpy allocates

_lock = threading.Lock()
_pool: cf.ProcessPoolExecutor | None = None
_pool_size = 0


def workers_for(n_hosts: int, total_bytes: int) -> int:
    """How many processes should read a run of ``n_hosts`` hosts and ``total_bytes`` of
    files: 1 (serial) unless it pays, else up to one per core."""
    if popen_forkserver is None or "forkserver" not in multiprocessing.get_all_start_methods():
        return 1
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
        # A pool whose worker died (killed for memory) takes no more work: start a new one.
        if _pool is None or _pool_size < workers or getattr(_pool, "_broken", False):
            if _pool is not None:
                _pool.shutdown(wait=False, cancel_futures=True)
            _pool, _pool_size = cf.ProcessPoolExecutor(workers, mp_context=_context()), workers
        return _pool


def shutdown() -> None:
    """Stop the workers (also done at exit)."""
    global _pool
    with _lock:
        if _pool is not None:
            _pool.shutdown(wait=True, cancel_futures=True)
            _pool = None


atexit.register(shutdown)


def map_in_pool(
    fn: Callable[..., Any], jobs: Sequence[tuple], workers: int, *, here: bool = True
) -> Iterator[tuple[int, Any, BaseException | None]]:
    """Run ``fn(*job)`` for every job on ``workers`` processes; yield ``(index, result,
    error)`` as jobs finish (``error`` is the exception a job raised, re-raised here by the
    caller if it wants). A Ctrl-C (or any exception here) stops the workers at once.

    With ``here`` (the default) this process is one of the ``workers``: it runs jobs from
    the back of the list while ``workers - 1`` worker processes take them from the front,
    so no core waits on another and half the results never need to travel.
    """
    processes = workers - 1 if here else workers
    pool = _executor(max(processes, 1))
    pending = collections.deque(range(len(jobs)))
    running: dict[cf.Future, int] = {}
    lock = threading.Lock()
    stopped = False

    def submit_next(_done: cf.Future | None = None) -> None:
        # A worker that finishes a job takes the next at once (from the pool's own thread),
        # not when this process next looks up from the host it is reading.
        with lock:
            if stopped or not pending:
                return
            i = pending.popleft()
            try:
                fut = pool.submit(_packed_call, fn, *jobs[i])
            except (RuntimeError, cf.process.BrokenProcessPool):  # a dead pool: read it here
                pending.appendleft(i)
                return
            running[fut] = i
        fut.add_done_callback(submit_next)

    def finished(fut: cf.Future) -> tuple[int, Any, BaseException | None]:
        with lock:
            i = running.pop(fut)
        try:
            packed = fut.result()
        except cf.process.BrokenProcessPool:
            raise
        except Exception as exc:  # noqa: BLE001 - handed to the caller as it is
            return i, None, exc
        return i, _unpack(packed), None

    try:
        for _ in range(processes):
            submit_next()
        while True:
            with lock:
                done = [f for f in running if f.done()]
                mine = pending.pop() if pending and here else None
                waiting = list(running)
                left = len(pending)
            for fut in done:
                yield finished(fut)
            if mine is not None:
                try:
                    result = fn(*jobs[mine])
                except Exception as exc:  # noqa: BLE001 - as a worker's would be
                    yield mine, None, exc
                else:
                    yield mine, result, None
            elif not done:
                if not waiting:
                    if not left:
                        break
                    submit_next()  # a job finished before its callback fed the next
                    with lock:
                        if not running:
                            raise cf.process.BrokenProcessPool("no worker takes jobs")
                    continue
                cf.wait(waiting, return_when=cf.FIRST_COMPLETED)
    except BaseException:
        with lock:
            stopped = True
        _stop_now(pool)
        raise


def _stop_now(pool: cf.ProcessPoolExecutor) -> None:
    """Stop the workers without waiting for their current host, and free the segments they
    leave."""
    global _pool
    with _lock:
        if _pool is pool:
            _pool = None
    processes = list((getattr(pool, "_processes", None) or {}).values())  # shutdown drops it
    pool.shutdown(wait=False, cancel_futures=True)
    for p in processes:
        p.terminate()
    for p in processes:
        p.join(5)
    # Segments of results nobody took, and of a worker stopped while writing one: each
    # segment's name starts with its worker's pid.
    pids = tuple(f"{SHM_PREFIX}{p.pid}-" for p in processes)
    try:
        left = [n for n in os.listdir(_SHM_DIR) if n.startswith(pids)] if pids else []
    except OSError:
        left = []
    for name in left:
        _shm_unlink(name)


# -- a result's way back ----------------------------------------------------------------------
class _Packed(NamedTuple):
    """A worker's result as it travels back: the pickle without its buffers, and the
    buffers, either in a shared-memory segment (``spans`` = (offset, size) each) or inline."""

    head: bytes
    segment: str | None
    size: int
    spans: list[tuple[int, int]]
    inline: list[bytes]


def _packed_call(fn: Callable[..., Any], *job) -> _Packed:
    """``fn(*job)`` in a worker, packed for the way back (its exceptions travel as they are)."""
    buffers: list[pickle.PickleBuffer] = []
    head = pickle.dumps(fn(*job), protocol=5, buffer_callback=buffers.append)
    views = [b.raw() for b in buffers]
    spans, end = [], 0
    for v in views:
        spans.append((end, v.nbytes))
        end += -(-v.nbytes // _ALIGN) * _ALIGN
    segment = _shm_write(views, spans, end)
    if segment is None:
        return _Packed(head, None, 0, [], [bytes(v) for v in views])
    return _Packed(head, segment, end, spans, [])


def _shm_write(views, spans, size: int) -> str | None:
    """The buffers written into a new shared-memory segment: its name, or None where there
    is none or no room (the caller then sends them through the pipe)."""
    if not size or not os.path.isdir(_SHM_DIR):
        return None
    name = f"{SHM_PREFIX}{os.getpid()}-{secrets.token_hex(8)}"
    path = os.path.join(_SHM_DIR, name)
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o600)
    except OSError:
        return None
    try:
        # If the loading process dies before taking it, the resource tracker unlinks it.
        resource_tracker.register("/" + name, "shared_memory")
        # Reserve the pages now: a full /dev/shm is ENOSPC here, not a SIGBUS while copying.
        os.posix_fallocate(fd, 0, size)
        with mmap.mmap(fd, size) as mm:
            for v, (offset, n) in zip(views, spans):
                mm[offset : offset + n] = v
    except OSError:
        _shm_unlink(name)
        return None
    finally:
        os.close(fd)
    return name


def _unpack(packed: _Packed) -> Any:
    """A worker's result in this process: its arrays are views of the segment's mapping."""
    if packed.segment is None:
        return pickle.loads(packed.head, buffers=packed.inline)
    try:
        fd = os.open(os.path.join(_SHM_DIR, packed.segment), os.O_RDWR)
        try:
            mm = mmap.mmap(fd, packed.size)
        finally:
            os.close(fd)
    finally:
        _shm_unlink(packed.segment)  # the mapping keeps the memory until the arrays go
    whole = memoryview(mm)
    return pickle.loads(packed.head, buffers=[whole[o : o + n] for o, n in packed.spans])


def _shm_unlink(name: str) -> None:
    try:
        os.unlink(os.path.join(_SHM_DIR, name))
    except FileNotFoundError:
        return  # already gone (or never registered): nothing for the tracker either
    resource_tracker.unregister("/" + name, "shared_memory")


# -- the worker processes ------------------------------------------------------------------------
class _NoMainPopen(popen_forkserver.Popen if popen_forkserver else object):
    """Starts a worker from the fork server without the user's ``__main__`` (see above)."""

    def _launch(self, process_obj) -> None:
        real = spawn.get_preparation_data

        def without_main(name):
            data = real(name)
            data.pop("init_main_from_path", None)
            data.pop("init_main_from_name", None)
            return data

        spawn.get_preparation_data = without_main  # read by the next line only
        try:
            super()._launch(process_obj)
        finally:
            spawn.get_preparation_data = real


class _WorkerProcess(multiprocessing.context.ForkServerProcess):
    @staticmethod
    def _Popen(process_obj):
        return _NoMainPopen(process_obj)


class _WorkerContext(multiprocessing.context.ForkServerContext):
    Process = _WorkerProcess


def _context() -> multiprocessing.context.BaseContext:
    ctx = _WorkerContext()
    # The fork server imports the readers once; each worker is a fork of it, ready at once.
    # (When the program already runs a fork server, it is reused as it is.)
    ctx.set_forkserver_preload(["tfprof_widgets.loading"])
    return ctx
