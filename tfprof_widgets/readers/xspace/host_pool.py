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
  whose numpy buffers travel out of band in one anonymous shared-memory file
  (``memfd_create``: memory with no name anywhere) whose descriptor the worker hands over
  a socket pair; the loader maps it and unpickles the arrays as writable views of the
  mapping, freed when the arrays are. Where there is no such file or no room, the buffers
  travel through the pipe instead.
* Nothing is left as a name in the file system: the pool has a fork server of its own whose
  listener socket lies in a private directory, and multiprocessing's named semaphores
  (``/dev/shm/sem.mp-*``, which a worker opens by name when it starts); all of them are
  removed once every worker has said it started, before the first load returns. (The
  semaphores and the socket are then only reachable by the processes that hold them, and
  no new worker can be started from that fork server: a pool that needs one is replaced.)
* A Ctrl-C stops the workers at once (they may be deep in a C walk of a large file); a pool
  whose worker died is replaced next time.

A load uses the pool only when it pays: at least two hosts, at least
:data:`MIN_PARALLEL_BYTES` of files and :data:`MIN_CORES` cores. ``TFPROF_WIDGETS_LOAD_WORKERS``
sets the number of workers (1: always serial; 2 or more: the pool whatever the size).
"""

from __future__ import annotations

import atexit
import collections
import concurrent.futures as cf
import io
import mmap
import multiprocessing
import multiprocessing.context
import os
import pickle
import secrets
import socket
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from multiprocessing import process, spawn, synchronize, util
from multiprocessing.context import reduction, set_spawning_popen
from typing import Any, NamedTuple

try:
    from multiprocessing import forkserver, popen_forkserver
except ImportError:  # Windows: no fork server, so no pool (workers_for says 1)
    forkserver = popen_forkserver = None

# Below this much capture data a run is read serially: starting or waking workers and
# moving the columns back costs more than it saves.
MIN_PARALLEL_BYTES = 16 << 20
ENV_WORKERS = "TFPROF_WIDGETS_LOAD_WORKERS"
# Two cores are enough: with the columns coming back through shared memory, an 8-host run
# loads faster on 2 cores than serially, close to what two processes of pure Python gain
# there; through the pool's pipe it was slower than serial (benchmarks/bench_multihost.py;
# the figures: docs/speed.md).
MIN_CORES = 2
# The fork server's private directory under the temporary directory (removed once the
# workers have started), and the label of a worker's shared-memory file (a label only: it
# shows in /proc/<pid>/fd, never in a directory).
NAME_PREFIX = "tfprof_widgets-"
_ALIGN = 64  # buffer offsets in a segment: cache-line aligned, as numpy allocates
# How long a new pool's workers may take to start (the fork server imports the readers
# first: seconds on a busy machine) before the pool is given up and the run read here.
START_TIMEOUT_S = 120.0
# A worker sends a result's shared-memory file before the result itself, so the loading
# process finds it at once; this only bounds the wait should a worker vanish in between.
TAKE_TIMEOUT_S = 60.0

_lock = threading.Lock()
_pool: _Pool | None = None
# The fork server workers are being started from (set while a pool starts, under _lock).
_launching: Any = None
# In a worker: its end of the socket pair its results' memory goes back through.
_channel: socket.socket | None = None


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


def _executor(workers: int) -> _Pool:
    global _pool
    with _lock:
        # A pool whose worker died (killed for memory) takes no more work: start a new one.
        if _pool is None or _pool.size < workers or _pool.broken():
            if _pool is not None:
                old, _pool = _pool, None
                old.close(wait=False)
            _pool = _Pool(workers)
        return _pool


def shutdown() -> None:
    """Stop the workers (also done at exit)."""
    global _pool
    with _lock:
        if _pool is not None:
            old, _pool = _pool, None
            old.close(wait=True)


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
                fut = pool.executor.submit(_packed_call, fn, *jobs[i])
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
        return i, _unpack(packed, pool.inbox.take), None

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


def _stop_now(pool: _Pool) -> None:
    """Stop the workers without waiting for their current host, and free the results they
    sent that nobody took."""
    global _pool
    with _lock:
        if _pool is pool:
            _pool = None
    pool.close(wait=False, terminate=True)


# -- the pool ---------------------------------------------------------------------------------
class _Pool:
    """Worker processes forked by a fork server of their own, and the socket pair their
    results' shared memory comes back through. Started, it has left no name anywhere: the
    fork server's listener socket is unlinked once the workers are forked, the semaphores'
    names once every worker has opened them."""

    def __init__(self, workers: int) -> None:
        self.size = workers
        self.executor: cf.ProcessPoolExecutor | None = None
        self.server = forkserver.ForkServer()
        # The fork server imports the readers once; each worker is a fork of it, ready at once.
        self.server.set_forkserver_preload(["tfprof_widgets.loading"])
        mine, worker_end = _socket_pair()
        self.inbox = _Inbox(mine)
        listener_dir = ctx = None
        try:
            listener_dir = _start_server(self.server)
            ctx = _WorkerContext()
            self.executor = cf.ProcessPoolExecutor(
                workers, mp_context=ctx, initializer=_worker_started, initargs=(worker_end,)
            )
            _start_workers(self.executor, self.server, workers)
            _forget_listener(self.server, listener_dir)  # no more workers from this server
            worker_end.close()  # the workers hold it: end of file here once all are gone
            self._wait_started(workers)
            _unlink_semaphores(ctx.semlocks)
            ctx.semlocks.clear()
            self.inbox.sock.settimeout(TAKE_TIMEOUT_S)
        except BaseException as exc:
            worker_end.close()
            if listener_dir is not None:
                _forget_listener(self.server, listener_dir)
            self.close(wait=False, terminate=True)
            if ctx is not None:  # no worker left to open them
                _unlink_semaphores(ctx.semlocks)
            if isinstance(exc, Exception) and not isinstance(exc, cf.process.BrokenProcessPool):
                raise cf.process.BrokenProcessPool(f"the workers could not start: {exc}") from exc
            raise

    def _wait_started(self, workers: int) -> None:
        """Until each worker has said it started (and so has opened the semaphores that
        came with its arguments); a worker that died on the way breaks the pool."""
        deadline = time.monotonic() + START_TIMEOUT_S
        self.inbox.sock.settimeout(0.25)
        started = 0
        while started < workers:
            try:
                said = self.inbox.sock.recv(64)
            except TimeoutError:
                dead = any(p.exitcode is not None for p in self.executor._processes.values())
                if dead or time.monotonic() > deadline:
                    raise cf.process.BrokenProcessPool("a worker did not start") from None
                continue
            if said != b"started":  # end of file: every worker is gone
                raise cf.process.BrokenProcessPool("the workers stopped while starting")
            started += 1

    def broken(self) -> bool:
        return self.executor is None or getattr(self.executor, "_broken", False)

    def close(self, wait: bool, terminate: bool = False) -> None:
        """Stop the workers (``wait``: after their current job; ``terminate``: at once), the
        fork server, and free the results sent that nobody took."""
        if self.executor is not None:
            processes = list((getattr(self.executor, "_processes", None) or {}).values())
            # A pool never given a job has no thread to tell its workers to stop.
            terminate = terminate or not getattr(self.executor, "_executor_manager_thread", 1)
            self.executor.shutdown(wait=wait, cancel_futures=True)
            if terminate:
                for p in processes:
                    p.terminate()
                for p in processes:
                    p.join(5)
        self.inbox.close()
        _stop_server(self.server, workers_gone=wait or terminate)


class _Inbox:
    """This process's end of the socket pair that the workers send their results'
    shared-memory files through, each under its result's token."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.lock = threading.Lock()
        self.received: dict[str, int] = {}  # token: the file, sent for a result not yet taken

    def take(self, token: str) -> int:
        """The shared-memory file a worker sent under ``token`` (an open descriptor, the
        caller's to close); the files sent for other results are kept for their takers."""
        with self.lock:
            while token not in self.received:
                try:
                    msg, fds, _flags, _addr = socket.recv_fds(self.sock, 64, 1)
                except OSError as exc:  # a timeout too
                    lost = cf.process.BrokenProcessPool(f"a result did not come back: {exc}")
                    raise lost from exc
                if not msg:
                    raise cf.process.BrokenProcessPool("the workers are gone")
                if fds:
                    self.received[msg.decode("ascii", "replace")] = fds[0]
            return self.received.pop(token)

    def close(self) -> None:
        """Free the files sent that nobody took (and any still on their way)."""
        with self.lock:
            for fd in self.received.values():
                os.close(fd)
            self.received.clear()
            self.sock.close()


def _socket_pair() -> tuple[socket.socket, socket.socket]:
    """A socket pair that keeps each message whole, whichever worker sends it, and says
    end of file once no worker holds the other end (macOS has only datagrams)."""
    try:
        return socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    except (AttributeError, OSError):
        return socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)


def _start_server(server) -> str:
    """Start ``server`` with its listener socket in a new private directory (returned), not
    in the ``pymp-*`` directory multiprocessing keeps for the whole process until exit."""
    config = process.current_process()._config
    base = tempfile.gettempdir()
    # A socket's path holds at most 107 bytes: where the temporary directory's is too long
    # for <dir>/tfprof_widgets-xxxxxxxx/listener-xxxxxxxx, /tmp (the socket is unlinked
    # within the second anyway).
    if len(os.fsencode(base)) > 107 - 40 and os.path.isdir("/tmp"):
        base = "/tmp"
    private = tempfile.mkdtemp(prefix=NAME_PREFIX, dir=base)
    # ensure_running names its socket in the process's multiprocessing directory: ours for
    # this call (a call elsewhere in the process at this very moment would see it too, and
    # then keep the directory: _forget_listener removes it only empty).
    had, before = "tempdir" in config, config.get("tempdir")
    config["tempdir"] = private
    try:
        server.ensure_running()
    except BaseException:
        os.rmdir(private)
        raise
    finally:
        if had:
            config["tempdir"] = before
        else:
            config.pop("tempdir", None)
    return private


def _forget_listener(server, listener_dir: str) -> None:
    """Unlink the fork server's listener socket and its directory: the server keeps
    listening (and reporting its workers' exits) but no one can reach it any more."""
    address = server._forkserver_address
    for remove, path in ((os.unlink, address), (os.rmdir, listener_dir)):
        try:
            if path:
                remove(path)
        except OSError:
            pass


def _stop_server(server, workers_gone: bool) -> None:
    """Let ``server`` exit (it does once no worker is left holding its pipe either) and
    reap it: here where its workers are gone, else by a thread when they are."""
    pid, alive = server._forkserver_pid, server._forkserver_alive_fd
    server._forkserver_pid = server._forkserver_alive_fd = server._forkserver_address = None
    if pid is None:
        return
    os.close(alive)
    if workers_gone:
        deadline = time.monotonic() + 5.0
        while not _reap(pid, os.WNOHANG) and time.monotonic() < deadline:
            time.sleep(0.01)
        return
    try:
        threading.Thread(target=_reap, args=(pid,), name="tfprof_widgets-reap", daemon=True).start()
    except RuntimeError:  # at interpreter shutdown: the system reaps it after this process
        pass


def _reap(pid: int, flags: int = 0) -> bool:
    """Whether the child ``pid`` has exited (and is reaped)."""
    try:
        return os.waitpid(pid, flags)[0] != 0
    except ChildProcessError:
        return True


def _start_workers(executor: cf.ProcessPoolExecutor, server, workers: int) -> None:
    """Start all the workers now (a pool starts them one per job otherwise), while the
    fork server can be reached and the semaphores have names."""
    global _launching
    _launching = server
    try:
        while len(executor._processes) < workers:
            executor._adjust_process_count()
    finally:
        _launching = None


def _unlink_semaphores(semlocks: list) -> None:
    """Remove the names of the pool's semaphores, which every worker has opened: run now
    the clean-up multiprocessing runs when a semaphore is freed (unlink the name, tell the
    resource tracker), once, so that it does not run again then."""
    ours = {id(s) for s in semlocks}
    for f in list(util._finalizer_registry.values()):
        ref = getattr(f, "_weakref", None)
        target = ref() if ref is not None else None
        if id(target) in ours and f._callback is synchronize.SemLock._cleanup:
            f()


def _worker_started(channel: socket.socket) -> None:
    """A worker's first act: keep the socket its results' memory goes back through, and
    say it started (it has opened the pool's semaphores: they came with its arguments)."""
    global _channel
    _channel = channel
    channel.send(b"started")


# -- a result's way back ----------------------------------------------------------------------
class _Packed(NamedTuple):
    """A worker's result as it travels back: the pickle without its buffers, and the
    buffers, either in a shared-memory file sent under ``segment`` (``spans`` = (offset,
    size) each) or inline."""

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
    segment = _shm_send(views, spans, end)
    if segment is None:
        return _Packed(head, None, 0, [], [bytes(v) for v in views])
    return _Packed(head, segment, end, spans, [])


def _shm_send(views, spans, size: int) -> str | None:
    """The buffers written into a new anonymous shared-memory file, sent to the loading
    process: the token it goes under, or None where there is no such file, no room or no
    one to send it to (the caller then sends the buffers through the pipe)."""
    if not size or _channel is None or not hasattr(os, "memfd_create"):
        return None
    token = secrets.token_hex(8)
    try:
        fd = os.memfd_create(NAME_PREFIX + token, os.MFD_CLOEXEC)
    except OSError:
        return None
    try:
        # Reserve the pages now: no room is an error here, not a SIGBUS while copying.
        os.posix_fallocate(fd, 0, size)
        with mmap.mmap(fd, size) as mm:
            for v, (offset, n) in zip(views, spans):
                mm[offset : offset + n] = v
        socket.send_fds(_channel, [token.encode()], [fd])
    except OSError:
        return None
    finally:
        os.close(fd)  # the loading process holds it now (or no one: the memory is freed)
    return token


def _unpack(packed: _Packed, take: Callable[[str], int]) -> Any:
    """A worker's result in this process: its arrays are views of the shared memory's
    mapping (``take`` gives the file sent under a token)."""
    if packed.segment is None:
        return pickle.loads(packed.head, buffers=packed.inline)
    fd = take(packed.segment)
    try:
        mm = mmap.mmap(fd, packed.size)
    finally:
        os.close(fd)  # the mapping keeps the memory until the arrays go
    whole = memoryview(mm)
    return pickle.loads(packed.head, buffers=[whole[o : o + n] for o, n in packed.spans])


# -- the worker processes ------------------------------------------------------------------------
class _NoMainPopen(popen_forkserver.Popen if popen_forkserver else object):
    """Starts a worker from the pool's fork server (:data:`_launching`) without the user's
    ``__main__`` (see above)."""

    def _launch(self, process_obj) -> None:
        # CPython's popen_forkserver.Popen._launch (3.10-3.13), asking the pool's own fork
        # server rather than the process's, with no __main__ to import.
        prep_data = spawn.get_preparation_data(process_obj._name)
        prep_data.pop("init_main_from_path", None)
        prep_data.pop("init_main_from_name", None)
        buf = io.BytesIO()
        set_spawning_popen(self)
        try:
            reduction.dump(prep_data, buf)
            reduction.dump(process_obj, buf)
        finally:
            set_spawning_popen(None)
        if _launching is None:
            raise RuntimeError("a load worker is started only with its pool")
        self.sentinel, w = _launching.connect_to_new_process(self._fds)
        # The worker watches this end: it exits when this process does.
        parent_w = os.dup(w)
        self.finalizer = util.Finalize(self, util.close_fds, (parent_w, self.sentinel))
        with open(w, "wb", closefd=True) as f:
            f.write(buf.getbuffer())
        self.pid = forkserver.read_signed(self.sentinel)


class _WorkerProcess(multiprocessing.context.ForkServerProcess):
    @staticmethod
    def _Popen(process_obj):
        return _NoMainPopen(process_obj)


class _WorkerContext(multiprocessing.context.ForkServerContext):
    """The pool's context: its workers are ours, and it keeps the semaphores it makes (the
    pool's queues' locks) to unlink their names once the workers have opened them."""

    Process = _WorkerProcess

    def __init__(self) -> None:
        self.semlocks: list = []

    def _kept(self, semlock):
        self.semlocks.append(semlock)
        return semlock

    def Lock(self):  # noqa: N802 - multiprocessing's names
        return self._kept(super().Lock())

    def RLock(self):  # noqa: N802
        return self._kept(super().RLock())

    def Semaphore(self, value=1):  # noqa: N802
        return self._kept(super().Semaphore(value))

    def BoundedSemaphore(self, value=1):  # noqa: N802
        return self._kept(super().BoundedSemaphore(value))
