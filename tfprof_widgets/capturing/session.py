"""Capturing code in this process: :func:`capture` and the :class:`Capture` it yields.

Two routes, chosen by the options:

* default options: ``tf.profiler.experimental.start/stop`` into a private staging directory,
  whose run is then moved into a freshly reserved run directory of the logdir;
* tracer options (host level, Python tracer, device level, delay): a ``Profile`` request to
  this process's own profiler server, ended with ``Terminate`` when the code is done. TF 2.21
  ignores the options given to ``start()``; the server honours them, and the capture's
  recorded ``profile_options`` shows it (``run.profile_options``).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import tempfile
import threading
import time
import warnings
from collections.abc import Iterator

from ..errors import CaptureError, ProfileError, ProfilerBusyError
from ..proto import profiler_service_pb2 as pb
from ..readers.formats import XPLANE_SUFFIX
from .options import CaptureOptions
from .rundir import default_logdir, move_run, prepare_logdir, reserve_run_dir
from .tf_runtime import import_tf, local_server_port, profiler_running

__all__ = ["Capture", "capture", "active_capture", "stop_capture"]

# A server-side trace runs until Terminate; this is only its upper bound.
_MAX_TRACE_MS = 24 * 3600 * 1000
_READY_TIMEOUT_S = 60.0

_active: Capture | None = None


def active_capture() -> Capture | None:
    """The capture started by tfprof_widgets that is still recording, if any."""
    return _active if _active is not None and _active.running else None


def stop_capture() -> Capture | None:
    """Stop a capture left recording (e.g. by an interrupted cell); returns it, loaded."""
    cap = active_capture()
    if cap is not None:
        cap.stop()
    return cap


class Capture:
    """One capture of code in this process.

    Attributes (after :meth:`stop`): ``logdir``; ``run_dir``, the new
    ``<logdir>/plugins/profile/<run>`` directory; ``run``, the loaded
    :class:`~tfprof_widgets.Run` (None when ``load=False``); ``elapsed_s``, the time traced;
    ``options``; ``route``, ``"start/stop"`` or ``"server"``.
    """

    def __init__(
        self, logdir: str | os.PathLike[str] | None = None, options: CaptureOptions | None = None
    ) -> None:
        self.requested_logdir = None if logdir is None else os.fspath(logdir)
        self.options = options or CaptureOptions()
        self.route = "start/stop" if self.options.is_default else "server"
        self.logdir: str | None = None
        self.run_dir: str | None = None
        self.run = None
        self.elapsed_s: float | None = None
        self.running = False
        self._t0 = 0.0
        self._staging: str | None = None
        self._client = None
        self._session_id: str | None = None
        self._thread: threading.Thread | None = None
        self._rpc_error: BaseException | None = None

    # -- starting ------------------------------------------------------------------------
    def start(self) -> Capture:
        """Begin recording. Raises ProfilerBusyError if any profiler already records here."""
        global _active
        where = self.requested_logdir or "(new logdir)"
        if active_capture() is not None:
            raise ProfilerBusyError(
                where,
                f"a tfprof_widgets capture into "
                f"{_active.logdir} is still recording; stop it "
                "first (tfprof_widgets.stop_capture())",
            )
        import_tf(where)
        if profiler_running():
            raise ProfilerBusyError(
                where,
                "another TensorFlow profiler session is recording "
                "in this process (tf.profiler.experimental.start, "
                "a TensorBoard callback or a server request); only "
                "one can run. Stop it with "
                "tf.profiler.experimental.stop()",
            )
        self.logdir = (
            prepare_logdir(self.requested_logdir) if self.requested_logdir else default_logdir()
        )
        if self.route == "start/stop":
            self._start_local()
        else:
            self._start_server()
        self._t0 = time.perf_counter()
        self.running = True
        _active = self
        return self

    def _start_local(self) -> None:
        tf = import_tf(self.logdir)
        self._staging = tempfile.mkdtemp(prefix=".tfprof-staging-", dir=self.logdir)
        try:
            tf.profiler.experimental.start(self._staging)
        except tf.errors.AlreadyExistsError:
            self._discard_staging()
            raise ProfilerBusyError(
                self.logdir, "another TensorFlow profiler session is recording in this process"
            ) from None
        except tf.errors.OpError as exc:
            self._discard_staging()
            raise CaptureError(
                self.logdir, f"TensorFlow could not start profiling: {exc.message}"
            ) from None

    def _start_server(self) -> None:
        from .rpc import ProfilerClient

        port = local_server_port(self.logdir)
        self._client = ProfilerClient(f"127.0.0.1:{port}")
        self.run_dir = reserve_run_dir(self.logdir)
        self._session_id = os.path.basename(self.run_dir)
        request = pb.ProfileRequest(
            duration_ms=_MAX_TRACE_MS,
            opts=self.options.to_proto(_MAX_TRACE_MS),
            repository_root=os.path.dirname(self.run_dir),
            session_id=self._session_id,
            host_name=socket.gethostname(),
        )
        self._thread = threading.Thread(
            target=self._profile_rpc, args=(request,), name="tfprof-capture", daemon=True
        )
        self._thread.start()
        if self.options.delay_ms:
            return  # tracing begins later by design; nothing to wait for
        deadline = time.monotonic() + _READY_TIMEOUT_S
        while not profiler_running():
            if not self._thread.is_alive() or time.monotonic() > deadline:
                self._thread.join(timeout=1)
                self._client.close()
                os.rmdir(self.run_dir)
                problem = (
                    str(self._rpc_error)
                    if self._rpc_error
                    else f"the profiler server did not start tracing within {_READY_TIMEOUT_S:g} s"
                )
                raise CaptureError(self.logdir, problem)
            time.sleep(0.002)

    def _profile_rpc(self, request: pb.ProfileRequest) -> None:
        try:
            self._client.profile(request)
        except BaseException as exc:  # reported by stop(), from the caller's thread
            self._rpc_error = exc

    # -- stopping ------------------------------------------------------------------------
    def stop(self, load: bool = True):
        """Stop recording, save the capture into a new run directory, and load it.

        Returns the :class:`~tfprof_widgets.Run` (or None with ``load=False``). Calling it
        again does nothing more.
        """
        global _active
        if not self.running:
            return self.run
        self.elapsed_s = time.perf_counter() - self._t0
        self.running = False
        if _active is self:
            _active = None
        if self.route == "start/stop":
            self._stop_local()
        else:
            self._stop_server()
        if load:
            from ..loading import load as load_run

            self.run = load_run(self.run_dir)
        return self.run

    def _stop_local(self) -> None:
        tf = import_tf(self.logdir)
        try:
            tf.profiler.experimental.stop()
        except tf.errors.OpError as exc:
            self._discard_staging()
            raise CaptureError(
                self.logdir, f"TensorFlow could not save the capture: {exc.message}"
            ) from None
        try:
            self.run_dir = move_run(self._staging, self.logdir)
        except OSError as exc:
            raise CaptureError(
                self.logdir, f"could not move the capture into place: {exc}"
            ) from None

    def _stop_server(self) -> None:
        try:
            self._client.terminate(self._session_id)
            self._thread.join()
        finally:
            self._client.close()
        if self._rpc_error is not None:
            raise CaptureError(self.logdir, str(self._rpc_error))
        if not any(name.endswith(XPLANE_SUFFIX) for name in os.listdir(self.run_dir)):
            raise CaptureError(
                self.run_dir, "the profiler server saved no capture file here (is the disk full?)"
            )

    def _discard_staging(self) -> None:
        if self._staging:
            shutil.rmtree(self._staging, ignore_errors=True)

    def __repr__(self) -> str:
        state = "recording" if self.running else (self.run_dir or "not started")
        return f"<tfprof_widgets.Capture {self.route} {state}>"


@contextlib.contextmanager
def capture(
    logdir: str | os.PathLike[str] | None = None,
    *,
    host_tracer_level: int = 2,
    python_tracer: bool = False,
    device_tracer_level: int = 1,
    delay_ms: int = 0,
    include_dataset_ops: bool = True,
    load: bool = True,
) -> Iterator[Capture]:
    """Profile the code in a ``with`` block::

        with tfprof_widgets.capture() as cap:
            model.fit(ds, epochs=1)
        cap.run.ops

    ``logdir`` defaults to a fresh ``./tfprof_logs/<timestamp>``; an existing run is never
    overwritten. Options mean what they mean in ``tf.profiler.experimental.ProfilerOptions``
    and are really applied (see :mod:`tfprof_widgets.capturing.session`). If the block raises,
    the profiler is still stopped, what was traced is saved and loaded into ``cap.run``, and
    the block's exception propagates.
    """
    cap = Capture(
        logdir,
        CaptureOptions(
            host_tracer_level, python_tracer, device_tracer_level, delay_ms, include_dataset_ops
        ),
    )
    cap.start()
    try:
        yield cap
    except BaseException:
        try:
            cap.stop(load=load)
        except (CaptureError, ProfileError) as exc:
            warnings.warn(
                f"the profiled code raised, and its capture failed too: {exc}",
                RuntimeWarning,
                stacklevel=3,
            )
        raise
    cap.stop(load=load)
