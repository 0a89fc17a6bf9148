"""On-demand ("sampling mode") capture from programs running a TF profiler server.

The profiled program calls ``tf.profiler.experimental.server.start(port)``; we ask each
server for a trace of ``duration_ms``. With several workers every request names one start
time (``delay_ms`` ahead, like TF's own client) so the hosts' traces cover the same window,
and all of them land in one run directory, one ``<host>_<port>.xplane.pb`` per worker.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import time
import warnings

from ..errors import CaptureError
from ..proto import profiler_service_pb2 as pb
from ..readers.formats import XPLANE_SUFFIX
from .options import CaptureOptions
from .rpc import ProfilerClient, parse_address, wait_for_answers
from .rpc import save_timeout_s as rpc_save_timeout
from .rundir import default_logdir, prepare_logdir, reserve_run_dir

__all__ = ["remote_capture"]

# TF's client delays multi-worker traces so that every request arrives before tracing starts.
_MULTI_WORKER_DELAY_MS = 1000
_NOTHING = (
    "the profiler server answered but no capture file appeared in the run directory (a "
    "server on another machine writes to its own disk: give a logdir both machines see)"
)


def split_addresses(addresses: str | list[str]) -> list[str]:
    """``"grpc://a:1,grpc://b:2"`` or a list -> checked addresses, in order."""
    items = addresses.split(",") if isinstance(addresses, str) else list(addresses)
    items = [a.strip() for a in items if a.strip()]
    if not items:
        raise CaptureError(str(addresses), "no profiler server address given")
    for a in items:
        parse_address(a)
    return items


def remote_capture(
    addresses: str | list[str],
    logdir: str | os.PathLike[str] | None = None,
    *,
    duration_ms: int = 2000,
    options: CaptureOptions | None = None,
    load: bool = True,
    save_timeout_s: float | None = None,
):
    """Trace running programs for ``duration_ms`` and return the :class:`Run` (or run dir).

    ``addresses``: ``grpc://host:port`` of each worker's profiler server, as a list or
    comma-separated. Workers that fail are left out with a warning; if none succeeds,
    :class:`~tfprof_widgets.CaptureError` says why. The run directory is new: nothing in
    ``logdir`` is replaced.

    After its trace each server saves the capture and answers. One still silent
    ``save_timeout_s`` later (default: 5 s, or half the duration for traces over 10 s;
    longer while its file visibly grows in the run directory) is given up on, as hung.
    Ctrl-C cancels the requests.
    """
    if duration_ms <= 0:
        raise ValueError(f"duration_ms must be positive, not {duration_ms}")
    if save_timeout_s is not None and not save_timeout_s > 0:
        raise ValueError(f"save_timeout_s must be positive, not {save_timeout_s}")
    workers = split_addresses(addresses)
    options = options or CaptureOptions()
    if len(workers) > 1 and not options.delay_ms:
        options = dataclasses.replace(options, delay_ms=_MULTI_WORKER_DELAY_MS)
    clients = _connect(workers)
    try:
        logdir = prepare_logdir(os.fspath(logdir)) if logdir else default_logdir()
        run_dir = reserve_run_dir(logdir)
        pending = [_request(c, run_dir, duration_ms, options) for c in clients]
        trace_end = time.monotonic() + (options.delay_ms + duration_ms) / 1000.0
        try:
            wait_for_answers(
                pending,
                trace_end,
                save_timeout_s or rpc_save_timeout(duration_ms),
                run_dir,
            )
        except BaseException:
            _remove_if_empty(run_dir)
            raise
    finally:
        for c in clients:
            c.close()
    errors = {p.address: p.error for p in pending if p.error is not None}
    saved = [f for f in os.listdir(run_dir) if f.endswith(XPLANE_SUFFIX)]
    if not saved:
        _remove_if_empty(run_dir)
        if len(workers) == 1:
            raise CaptureError(workers[0], errors[workers[0]].problem if errors else _NOTHING)
        why = "; ".join(f"{a}: {e.problem}" for a, e in errors.items())
        raise CaptureError(", ".join(workers), why or _NOTHING)
    for address, exc in errors.items():
        warnings.warn(
            f"{address}: left out of the capture: {exc.problem}", RuntimeWarning, stacklevel=2
        )
    if not load:
        return run_dir
    from ..loading import load as load_run

    return load_run(run_dir)


def _connect(workers: list[str]) -> list:
    """A client per worker; each fails fast on an unreachable server (closing the others)."""
    clients = []
    try:
        for a in workers:
            clients.append(ProfilerClient(a))
    except BaseException:
        for c in clients:
            c.close()
        raise
    return clients


def _request(client, run_dir: str, duration_ms: int, options: CaptureOptions):
    """Ask one worker's server to trace into ``run_dir`` (its answer comes later)."""
    host, port = parse_address(client.address)
    request = pb.ProfileRequest(
        duration_ms=duration_ms,
        opts=options.to_proto(duration_ms),
        repository_root=os.path.dirname(run_dir),
        session_id=os.path.basename(run_dir),
        host_name=f"{host}_{port}",
    )
    return client.profile(request)


def _remove_if_empty(run_dir: str) -> None:
    with contextlib.suppress(OSError):
        os.rmdir(run_dir)
