"""On-demand ("sampling mode") capture from programs running a TF profiler server.

The profiled program calls ``tf.profiler.experimental.server.start(port)``; we ask each
server for a trace of ``duration_ms``. With several workers every request names one start
time (``delay_ms`` ahead, like TF's own client) so the hosts' traces cover the same window,
and all of them land in one run directory, one ``<host>_<port>.xplane.pb`` per worker.
"""

from __future__ import annotations

import dataclasses
import os
import threading
import warnings

from ..errors import CaptureError
from ..proto import profiler_service_pb2 as pb
from ..readers.formats import XPLANE_SUFFIX
from .options import CaptureOptions
from .rpc import ProfilerClient, parse_address
from .rundir import default_logdir, prepare_logdir, reserve_run_dir

__all__ = ["remote_capture"]

# TF's client delays multi-worker traces so that every request arrives before tracing starts.
_MULTI_WORKER_DELAY_MS = 1000


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
):
    """Trace running programs for ``duration_ms`` and return the :class:`Run` (or run dir).

    ``addresses``: ``grpc://host:port`` of each worker's profiler server, as a list or
    comma-separated. Workers that fail are left out with a warning; if none succeeds,
    :class:`~tfprof_widgets.CaptureError` says why. The run directory is new: nothing in
    ``logdir`` is replaced.
    """
    if duration_ms <= 0:
        raise ValueError(f"duration_ms must be positive, not {duration_ms}")
    workers = split_addresses(addresses)
    options = options or CaptureOptions()
    if len(workers) > 1 and not options.delay_ms:
        options = dataclasses.replace(options, delay_ms=_MULTI_WORKER_DELAY_MS)
    clients = [ProfilerClient(a) for a in workers]  # fails fast on an unreachable server
    logdir = prepare_logdir(os.fspath(logdir)) if logdir else default_logdir()
    run_dir = reserve_run_dir(logdir)
    opts = options.to_proto(duration_ms)
    errors: dict[str, BaseException] = {}

    def trace(client: ProfilerClient) -> None:
        host, port = parse_address(client.address)
        request = pb.ProfileRequest(
            duration_ms=duration_ms,
            opts=opts,
            repository_root=os.path.dirname(run_dir),
            session_id=os.path.basename(run_dir),
            host_name=f"{host}_{port}",
        )
        try:
            client.profile(request)
        except BaseException as exc:
            errors[client.address] = exc
        finally:
            client.close()

    threads = [threading.Thread(target=trace, args=(c,), daemon=True) for c in clients]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    saved = [f for f in os.listdir(run_dir) if f.endswith(XPLANE_SUFFIX)]
    if not saved:
        os.rmdir(run_dir)
        why = "; ".join(f"{a}: {e}" for a, e in errors.items()) or "no capture file written"
        raise CaptureError(workers[0] if len(workers) == 1 else ", ".join(workers), why)
    for address, exc in errors.items():
        warnings.warn(f"{address}: left out of the capture: {exc}", RuntimeWarning, stacklevel=2)
    if not load:
        return run_dir
    from ..loading import load as load_run

    return load_run(run_dir)
