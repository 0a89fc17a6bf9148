"""A client for TensorFlow's profiler service (what ``server.start(port)`` serves).

We speak the service's two calls ourselves, with grpcio's generic stubs and our own copy of
the messages, instead of going through ``tf.profiler.experimental.client.trace``: TF 2.21's
client rejects every tracer option ("expects an i value"), cannot stop a trace early, and
needs all of TensorFlow in the notebook. A ``Profile`` call traces until its duration ends
or a ``Terminate`` names its session, then the *server* saves the XSpace as
``<repository_root>/<session_id>/<host_name>.xplane.pb``.
"""

from __future__ import annotations

import os
import threading
import time

from ..errors import CaptureError, CaptureUnavailableError
from ..proto import profiler_service_pb2 as pb

__all__ = ["ProfilerClient", "Pending", "parse_address", "save_timeout_s", "wait_for_answers"]

_SERVICE = "/tensorflow.ProfilerService/"
# After its trace a server saves the capture, then answers. Saving a few seconds' trace
# takes well under a second; a long trace of a busy GPU program can take several. Past this
# wait (longer while the capture file visibly grows) the server is taken to be hung.
_MIN_SAVE_TIMEOUT_S = 5.0  # "duration + a few seconds" when nothing answers
_POLL_S = 0.25  # how often a growing capture file is looked at


def save_timeout_s(duration_ms: float) -> float:
    """How long to wait for a server to save and answer after its trace ended, by default:
    5 s, or half the trace's duration for traces over 10 s."""
    return max(_MIN_SAVE_TIMEOUT_S, duration_ms / 2000.0)


def parse_address(address: str) -> tuple[str, int]:
    """``grpc://host:port``, ``host:port`` or ``[v6]:port`` -> (host, port)."""
    text = address.strip()
    if text.startswith("grpc://"):
        text = text[len("grpc://") :]
    host, sep, port = text.rpartition(":")
    if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise CaptureError(
            address,
            "not a profiler server address; expected grpc://host:port, e.g. grpc://127.0.0.1:6009",
        )
    return host.strip("[]"), int(port)


class ProfilerClient:
    """One connection to one profiler server."""

    def __init__(self, address: str, connect_timeout_s: float = 10.0) -> None:
        try:
            import grpc
        except ImportError:
            raise CaptureUnavailableError(
                address, "remote capture needs grpcio: pip install 'tfprof_widgets[capture]'"
            ) from None
        self._grpc = grpc
        self.address = address
        host, port = parse_address(address)
        target = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
        self._channel = grpc.insecure_channel(target)
        try:
            grpc.channel_ready_future(self._channel).result(timeout=connect_timeout_s)
        except grpc.FutureTimeoutError:
            self._channel.close()
            raise CaptureError(
                address,
                f"no profiler server answered within "
                f"{connect_timeout_s:g} s; is "
                "tf.profiler.experimental.server.start(port) running "
                "in that program?",
            ) from None
        self._profile = self._channel.unary_unary(
            _SERVICE + "Profile",
            request_serializer=pb.ProfileRequest.SerializeToString,
            response_deserializer=pb.ProfileResponse.FromString,
        )
        self._terminate = self._channel.unary_unary(
            _SERVICE + "Terminate",
            request_serializer=pb.TerminateRequest.SerializeToString,
            response_deserializer=pb.TerminateResponse.FromString,
        )

    def profile(self, request: pb.ProfileRequest) -> Pending:
        """Send the request; the server traces until its duration ends or :meth:`terminate`,
        saves, then answers. Returns at once: :func:`wait_for_answers` waits for the answer.
        """
        return Pending(self, self._profile.future(request))

    def terminate(self, session_id: str, timeout_s: float = 10.0) -> None:
        """Ask the server to end the trace of ``session_id`` now and save it."""
        try:
            self._terminate(pb.TerminateRequest(session_id=session_id), timeout=timeout_s)
        except self._grpc.RpcError as exc:
            raise CaptureError(
                self.address, f"could not stop the capture: {exc.code().name}: {exc.details()}"
            ) from None

    def close(self) -> None:
        self._channel.close()


class Pending:
    """A Profile request sent to one server, its answer still to come."""

    def __init__(self, client: ProfilerClient, future) -> None:
        self.client = client
        self.future = future
        self.error: CaptureError | None = None  # set when it failed or was given up on

    @property
    def address(self) -> str:
        return self.client.address

    def done(self) -> bool:
        return self.future.done()

    def settle(self) -> None:
        """Turn a finished call's failure into :attr:`error` (a CaptureError)."""
        grpc = self.client._grpc
        try:
            self.future.result(timeout=0)
        except grpc.FutureCancelledError:
            self.error = self.error or CaptureError(self.address, "the request was cancelled")
        except grpc.RpcError as exc:
            self.error = self.error or CaptureError(
                self.address,
                f"the profiler server failed the capture: {exc.code().name}: {exc.details()}",
            )

    def give_up(self, problem: str) -> None:
        self.error = CaptureError(self.address, problem)
        self.future.cancel()


def _bytes_in(directory: str | None) -> int:
    if not directory:
        return -1
    try:
        with os.scandir(directory) as entries:
            return sum(e.stat(follow_symlinks=False).st_size for e in entries if e.is_file())
    except OSError:
        return -1


def wait_for_answers(
    pending: list[Pending],
    trace_end: float,
    save_timeout: float,
    run_dir: str | None = None,
    what: str = "trace",
    cancel_on_interrupt: bool = True,
) -> None:
    """Wait until every request is answered, or give up on those still silent.

    ``trace_end`` is when the traces end (``time.monotonic()``); a server then has
    ``save_timeout`` seconds to save and answer, counted again from each time the files in
    ``run_dir`` (where the server writes, if this machine sees it) grow. A server still
    silent then is given up on: its request is cancelled and its :attr:`Pending.error` says
    so. Ctrl-C cancels every request still pending (unless ``cancel_on_interrupt`` is
    False: the caller waits again later), and is raised.
    """
    done = threading.Event()
    for p in pending:
        p.future.add_done_callback(lambda _f: done.set())
    deadline = trace_end + save_timeout
    seen = _bytes_in(run_dir)
    try:
        while True:
            done.clear()
            waiting = [p for p in pending if not p.done()]
            if not waiting:
                break
            now = time.monotonic()
            size = _bytes_in(run_dir)
            if size != seen:  # the capture is still being written: not hung
                seen = size
                deadline = max(deadline, now + save_timeout)
            if now >= deadline:
                for p in waiting:
                    p.give_up(
                        f"the profiler server took the request but did not answer within "
                        f"{save_timeout:g} s after the {what} ended; gave up. If it is still "
                        "saving a large capture, give it longer (save_timeout_s= or "
                        "--save-timeout-s)"
                    )
                break
            done.wait(min(_POLL_S, deadline - now))
    except BaseException:
        if cancel_on_interrupt:
            for p in pending:
                p.future.cancel()
        raise
    for p in pending:
        p.settle()
