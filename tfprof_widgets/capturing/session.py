"""Capturing code in this process: :func:`capture` and the :class:`Capture` it yields.

The backend is TensorFlow's profiler or JAX's (``backend='auto'``: the framework already
imported in the process, TensorFlow first). TensorFlow has two routes, chosen by the
options:

* default options: ``tf.profiler.experimental.start/stop`` into a private staging directory,
  whose run is then moved into a freshly reserved run directory of the logdir;
* tracer options (host level, Python tracer, device level, delay): a ``Profile`` request to
  this process's own profiler server, ended with ``Terminate`` when the code is done. TF 2.21
  ignores the options given to ``start()``; the server honours them, and the capture's
  recorded ``profile_options`` shows it (``run.profile_options``).

JAX has one: ``jax.profiler.start_trace/stop_trace`` into a staging directory, with the
options applied, moved into place like TF's (:mod:`.jax_runtime`).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import threading
import time
import warnings
from collections.abc import Iterator

from ..errors import CaptureError, ProfileError, ProfilerBusyError
from ..loading import CAPTURE_LOG
from ..proto import profiler_service_pb2 as pb
from ..readers.formats import XPLANE_SUFFIX
from . import jax_runtime
from .interrupts import sigint_deferred
from .options import CaptureOptions
from .rpc import save_timeout_s as rpc_save_timeout
from .rpc import wait_for_answers
from .rundir import (
    default_logdir,
    make_staging,
    move_run,
    prepare_logdir,
    reserve_run_dir,
    staged_runs,
)
from .tf_log import TFLog
from .tf_runtime import import_tf, local_server_port, local_session_open, profiler_running

__all__ = ["Capture", "capture", "active_capture", "finish_interrupted", "stop_capture"]

# A server-side trace runs until Terminate; this is only its upper bound.
_MAX_TRACE_MS = 24 * 3600 * 1000
_READY_TIMEOUT_S = 60.0

_active: Capture | None = None
_active_lock = threading.Lock()


def active_capture() -> Capture | None:
    """The capture started by tfprof_widgets that is still recording (or was interrupted
    while stopping and is not saved yet), if any."""
    return _active


def stop_capture() -> Capture | None:
    """Stop a capture left recording or interrupted while stopping; returns it, loaded."""
    cap = _active
    if cap is not None:
        cap.stop()
    return cap


def finish_interrupted() -> Capture | None:
    """Finish the capture whose stop was interrupted (or whose owner asked it to stop and
    was interrupted before it could): TF's profiler is stopped and the capture saved and
    moved into its run directory. Returns that capture (not loaded), or None."""
    cap = _active
    if cap is None or not (cap.state in ("stopping", "saved") or cap._stop_requested):
        return None
    cap.stop(load=False)
    return cap


class Capture:
    """One capture of code in this process.

    Attributes (after :meth:`stop`): ``logdir``; ``run_dir``, the new
    ``<logdir>/plugins/profile/<run>`` directory; ``run``, the loaded
    :class:`~tfprof_widgets.Run` (None when ``load=False``); ``elapsed_s``, the time traced;
    ``options``; ``route``, ``"start/stop"`` or ``"server"`` (TensorFlow) or ``"jax"``;
    ``log``, what the framework
    logged while the capture started and stopped (also ``capture.log`` in the run
    directory); ``state``: ``"new"``, ``"recording"``, ``"stopping"``, ``"saved"`` (TF is
    done; the files are not in place yet), ``"published"`` or ``"failed"``.

    Stopping is safe to interrupt: Ctrl-C waits until the capture is saved and in place
    (main thread), and a stop cut short anyway is finished by calling :meth:`stop` again,
    by the next capture's :meth:`start` or by :func:`stop_capture`.
    """

    def __init__(
        self,
        logdir: str | os.PathLike[str] | None = None,
        options: CaptureOptions | None = None,
        backend: str = "auto",
    ) -> None:
        self.requested_logdir = None if logdir is None else os.fspath(logdir)
        self.options = options or CaptureOptions()
        if jax_runtime.choose_backend(backend) == "jax":
            self.route = "jax"
        else:
            self.route = "start/stop" if self.options.is_default else "server"
        self.logdir: str | None = None
        self.run_dir: str | None = None
        self.run = None
        self.elapsed_s: float | None = None
        self.state = "new"
        self.log = TFLog()
        self._stop_requested = False  # its owner began stopping it (then maybe interrupted)
        self._t0 = 0.0
        self._staging: str | None = None
        self._client = None
        self._session_id: str | None = None
        self._pending = None
        self._lock = threading.RLock()

    @property
    def running(self) -> bool:
        """True while recording."""
        return self.state == "recording"

    # -- starting ------------------------------------------------------------------------
    def start(self) -> Capture:
        """Begin recording. Raises ProfilerBusyError if any profiler already records here.

        A capture of this process interrupted while stopping is finished first.
        """
        global _active
        if self.state != "new":
            raise CaptureError(self.logdir or "(capture)", "this capture was already started")
        where = self.requested_logdir or "(new logdir)"
        finish_interrupted()
        with _active_lock:
            if _active is not None:
                raise ProfilerBusyError(
                    where,
                    f"a tfprof_widgets capture into {_active.logdir} is still recording; "
                    "stop it first (tfprof_widgets.stop_capture())",
                )
            _active = self
            self.state = "starting"
        try:
            with sigint_deferred() as held:
                with self.log.collect():
                    self._start(where)
                if held.received:  # Ctrl-C while starting: undo the start, then raise it
                    self._undo_start()
        except BaseException as exc:
            if self.state == "starting":
                self._abandon_start()
            if isinstance(exc, CaptureError):
                self.log.show()  # why it failed may be in what TensorFlow logged
            raise
        return self

    def _undo_start(self) -> None:
        """Stop a capture that started fully, and remove it: none of the code ran."""
        self._stop_requested = True
        self._finish()
        if self.run_dir:
            shutil.rmtree(self.run_dir, ignore_errors=True)
        self.state = "failed"

    def _abandon_start(self) -> None:
        """Clean up a start cut short halfway (a Ctrl-C forced through, or an error)."""
        global _active
        with contextlib.suppress(Exception):
            if self.route == "start/stop" and self._staging and local_session_open():
                import_tf(self.logdir).profiler.experimental.stop(save=False)
            elif self.route == "jax" and self._staging:
                jax_runtime.stop_trace(self.logdir)
        self._discard_staging()
        if self._pending is not None:
            self._pending.future.cancel()
        if self._client is not None:
            self._client.close()
        if self.run_dir:
            with contextlib.suppress(OSError):
                os.rmdir(self.run_dir)
        with _active_lock:
            _active, self.state = None, "new"

    def _start(self, where: str) -> None:
        if self.route == "jax":
            jax_runtime.import_jax(where)
            self.logdir = self._logdir()
            staging = self._make_staging()
            try:
                jax_runtime.start_trace(self.logdir, staging, self.options)
            except BaseException:  # not ours to stop: another session may be recording
                shutil.rmtree(staging, ignore_errors=True)
                raise
            self._staging = staging
            self._t0 = time.perf_counter()
            self.state = "recording"
            return
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
        self.logdir = self._logdir()
        if self.route == "start/stop":
            self._start_local()
        else:
            self._start_server()
        self._t0 = time.perf_counter()
        self.state = "recording"

    def _logdir(self) -> str:
        if self.requested_logdir:
            return prepare_logdir(self.requested_logdir)
        return default_logdir()

    def _make_staging(self) -> str:
        try:
            return make_staging(self.logdir)
        except OSError as exc:
            raise CaptureError(
                self.logdir, f"cannot create a staging directory: {exc.strerror or exc}"
            ) from None

    def _start_local(self) -> None:
        tf = import_tf(self.logdir)
        self._staging = self._make_staging()
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
        self._pending = self._client.profile(request)
        if self.options.delay_ms:
            return  # tracing begins later by design; nothing to wait for
        deadline = time.monotonic() + _READY_TIMEOUT_S
        while not profiler_running():
            if self._pending.done() or time.monotonic() > deadline:
                self._pending.future.cancel()
                self._pending.settle()
                self._client.close()
                os.rmdir(self.run_dir)
                problem = (
                    self._pending.error.problem
                    if self._pending.error
                    else f"the profiler server did not start tracing within {_READY_TIMEOUT_S:g} s"
                )
                raise CaptureError(self.logdir, problem)
            time.sleep(0.002)

    # -- stopping ------------------------------------------------------------------------
    def stop(self, load: bool = True):
        """Stop recording, save the capture into a new run directory, and load it.

        Returns the :class:`~tfprof_widgets.Run` (or None with ``load=False``). Calling it
        again does nothing more; after an interrupted stop, it finishes the stop.
        """
        global _active
        with self._lock:
            if self.state in ("new", "starting"):
                raise CaptureError(self.logdir or "(capture)", "this capture was not started")
            if self.state == "failed":
                return None
            if self.state != "published":
                self._stop_requested = True
                try:
                    with sigint_deferred():
                        self._finish()
                except CaptureError:
                    with _active_lock:
                        self.state = "failed"
                        if _active is self:
                            _active = None
                    self.log.show()  # why it failed may be in what TensorFlow logged
                    raise
        if load and self.run is None:
            from ..loading import load as load_run

            self.run = load_run(self.run_dir)
        return self.run

    def _finish(self) -> None:
        """Each step once, in order, resumed where an interrupted call left off."""
        global _active
        if self.state == "recording":
            self.elapsed_s = time.perf_counter() - self._t0
            self.state = "stopping"
        if self.state == "stopping":
            with self.log.collect():
                if self.route == "start/stop":
                    self._stop_local()
                elif self.route == "jax":
                    jax_runtime.stop_trace(self.logdir)
                else:
                    self._stop_server()
            self.state = "saved"
        if self.state == "saved":
            if self.route in ("start/stop", "jax"):
                self._publish_local()
            self._save_log()
            with _active_lock:
                self.state = "published"
                if _active is self:
                    _active = None

    def _stop_local(self) -> None:
        tf = import_tf(self.logdir)
        if not local_session_open():
            return  # TF's stop already ran (its caller was interrupted right after)
        try:
            # Safe to repeat: a session whose export already ran (and was cut short just
            # after) exports nothing more and is closed.
            tf.profiler.experimental.stop()
        except tf.errors.OpError as exc:
            self._discard_staging()
            raise CaptureError(
                self.logdir, f"TensorFlow could not save the capture: {exc.message}"
            ) from None

    def _publish_local(self) -> None:
        try:
            if self.run_dir is None:
                runs = staged_runs(self._staging)
                if not runs:
                    self._discard_staging()
                    raise CaptureError(
                        self.logdir,
                        "the profiler stopped but wrote no capture file (is the disk full?)",
                    )
                self.run_dir = reserve_run_dir(self.logdir, os.path.basename(runs[-1]))
            move_run(self._staging, self.logdir, self.run_dir)
        except OSError as exc:
            raise CaptureError(
                self.logdir,
                f"could not move the capture into place ({exc}); it is in {self._staging}",
            ) from None

    def _stop_server(self) -> None:
        # An interrupt leaves the request open (the channel too), for the stop to resume;
        # Terminate is safe to repeat (the server only notes the session is to end).
        try:
            if not self._pending.done():
                self._client.terminate(self._session_id)
                wait_for_answers(
                    [self._pending],
                    time.monotonic(),
                    rpc_save_timeout(1000 * (self.elapsed_s or 0)),
                    self.run_dir,
                    what="capture was stopped",
                    cancel_on_interrupt=False,
                )
        except CaptureError:
            self._client.close()
            raise
        self._pending.settle()
        self._client.close()
        if self._pending.error is not None:
            raise CaptureError(self.logdir, self._pending.error.problem)
        if not any(name.endswith(XPLANE_SUFFIX) for name in os.listdir(self.run_dir)):
            raise CaptureError(
                self.run_dir, "the profiler server saved no capture file here (is the disk full?)"
            )

    def _save_log(self) -> None:
        if os.path.exists(os.path.join(self.run_dir, CAPTURE_LOG)):
            return  # saved before an interruption
        try:
            self.log.save(self.run_dir)
        except OSError as exc:  # the capture matters more than its log
            warnings.warn(
                f"could not save TensorFlow's log of the capture: {exc}",
                RuntimeWarning,
                stacklevel=4,
            )

    def _discard_staging(self) -> None:
        if self._staging:
            shutil.rmtree(self._staging, ignore_errors=True)

    def __repr__(self) -> str:
        where = self.run_dir or self.logdir or "not started"
        return f"<tfprof_widgets.Capture {self.route} {self.state} {where}>"


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
    backend: str = "auto",
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

    ``backend``: 'tf' (TensorFlow's profiler), 'jax' (``jax.profiler``) or 'auto' (the one
    already imported in this process, TensorFlow first; else the one installed).
    """
    cap = Capture(
        logdir,
        CaptureOptions(
            host_tracer_level, python_tracer, device_tracer_level, delay_ms, include_dataset_ops
        ),
        backend,
    )
    cap.start()
    try:
        yield cap
    except BaseException:
        cap._stop_requested = True  # first, so that an interrupt now leaves it finishable
        try:
            cap.stop(load=load)
        except (CaptureError, ProfileError) as exc:
            warnings.warn(
                f"the profiled code raised, and its capture failed too: {exc}",
                RuntimeWarning,
                stacklevel=3,
            )
        raise
    cap._stop_requested = True
    cap.stop(load=load)
