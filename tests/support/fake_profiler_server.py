"""A stand-in for TensorFlow's profiler service, on 127.0.0.1, that misbehaves on request.

Speaks the two calls of ``tensorflow.ProfilerService`` that tfprof_widgets uses, with
grpcio only (no TensorFlow, so it binds loopback alone and needs no network namespace):

* ``"hang"``: takes a Profile request and never answers (until stopped, or the client
  cancels; ``cancelled`` is set then);
* ``"slow"``: traces for the request's duration, then writes the capture file in small
  pieces over ``chunks * chunk_delay_s`` seconds (as a server saving a big capture does)
  and answers;
* ``"ok"``: writes the capture file at once after the trace and answers.

The capture file is ``<repository_root>/<session_id>/<host_name>.xplane.pb`` holding the
bytes given, as TF's server writes it. Use as a context manager; leaving it stops it.
"""

from __future__ import annotations

import os
import threading
import time
from concurrent import futures

import grpc

from tfprof_widgets.proto import profiler_service_pb2 as pb


class FakeProfilerServer:
    def __init__(
        self, mode: str, capture: bytes = b"", chunks: int = 12, chunk_delay_s: float = 0.3
    ) -> None:
        assert mode in ("hang", "slow", "ok")
        self.mode, self.capture = mode, capture
        self.chunks, self.chunk_delay_s = chunks, chunk_delay_s
        self.requests: list[pb.ProfileRequest] = []
        self.cancelled = threading.Event()
        self._release = threading.Event()
        handlers = {
            "Profile": grpc.unary_unary_rpc_method_handler(
                self._profile,
                request_deserializer=pb.ProfileRequest.FromString,
                response_serializer=pb.ProfileResponse.SerializeToString,
            ),
            "Terminate": grpc.unary_unary_rpc_method_handler(
                lambda request, context: pb.TerminateResponse(),
                request_deserializer=pb.TerminateRequest.FromString,
                response_serializer=pb.TerminateResponse.SerializeToString,
            ),
        }
        self._server = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
        self._server.add_generic_rpc_handlers(
            (grpc.method_handlers_generic_handler("tensorflow.ProfilerService", handlers),)
        )
        self.port = self._server.add_insecure_port("127.0.0.1:0")
        self.address = f"grpc://127.0.0.1:{self.port}"
        self._server.start()

    def _wait(self, seconds: float, context) -> bool:
        """Sleep; False if the client went away or the server is stopping."""
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            if not context.is_active():
                self.cancelled.set()
                return False
            if self._release.wait(0.02):
                return False
        return True

    def _profile(self, request: pb.ProfileRequest, context) -> pb.ProfileResponse:
        self.requests.append(request)
        if self.mode == "hang":
            self._wait(1e9, context)
            return pb.ProfileResponse()
        if not self._wait(request.duration_ms / 1000.0, context):
            return pb.ProfileResponse()
        run_dir = os.path.join(request.repository_root, request.session_id)
        os.makedirs(run_dir, exist_ok=True)
        path = os.path.join(run_dir, f"{request.host_name}.xplane.pb")
        if self.mode == "ok":
            with open(path, "wb") as f:
                f.write(self.capture)
            return pb.ProfileResponse()
        step = -(-len(self.capture) // self.chunks)
        with open(path, "wb") as f:
            for i in range(0, len(self.capture), step):
                if not self._wait(self.chunk_delay_s, context):
                    return pb.ProfileResponse()
                f.write(self.capture[i : i + step])
                f.flush()
        return pb.ProfileResponse()

    def stop(self) -> None:
        self._release.set()
        self._server.stop(grace=None).wait(10)

    def __enter__(self) -> FakeProfilerServer:
        return self

    def __exit__(self, *exc) -> None:
        self.stop()
