"""A client for TensorFlow's profiler service (what ``server.start(port)`` serves).

We speak the service's two calls ourselves, with grpcio's generic stubs and our own copy of
the messages, instead of going through ``tf.profiler.experimental.client.trace``: TF 2.21's
client rejects every tracer option ("expects an i value"), cannot stop a trace early, and
needs all of TensorFlow in the notebook. A ``Profile`` call traces until its duration ends
or a ``Terminate`` names its session, then the *server* saves the XSpace as
``<repository_root>/<session_id>/<host_name>.xplane.pb``.
"""

from __future__ import annotations

from ..errors import CaptureError, CaptureUnavailableError
from ..proto import profiler_service_pb2 as pb

__all__ = ["ProfilerClient", "parse_address"]

_SERVICE = "/tensorflow.ProfilerService/"
# The server holds Profile open while it traces; writing a large capture takes a while too.
_SAVE_GRACE_S = 600.0


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

    def profile(self, request: pb.ProfileRequest) -> pb.ProfileResponse:
        """Trace until the request's duration ends or :meth:`terminate`; blocks till saved."""
        timeout = request.opts.duration_ms / 1000.0 + _SAVE_GRACE_S
        if request.opts.start_timestamp_ns:
            timeout += 3600.0
        try:
            return self._profile(request, timeout=timeout)
        except self._grpc.RpcError as exc:
            raise CaptureError(
                self.address,
                f"the profiler server failed the capture: {exc.code().name}: {exc.details()}",
            ) from None

    def terminate(self, session_id: str) -> None:
        """Ask the server to end the trace of ``session_id`` now and save it."""
        try:
            self._terminate(pb.TerminateRequest(session_id=session_id), timeout=30)
        except self._grpc.RpcError as exc:
            raise CaptureError(
                self.address, f"could not stop the capture: {exc.code().name}: {exc.details()}"
            ) from None

    def close(self) -> None:
        self._channel.close()
