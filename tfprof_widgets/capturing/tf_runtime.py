"""The TensorFlow pieces a local capture needs, imported only when a capture starts."""

from __future__ import annotations

import os
import socket
import warnings

from ..errors import CaptureError, CaptureUnavailableError

__all__ = ["import_tf", "profiler_running", "local_session_open", "local_server_port"]

_INSTALL_HINT = (
    "capturing needs TensorFlow: pip install 'tfprof_widgets[capture]' (or "
    "'tfprof_widgets[capture-cpu]' for tensorflow-cpu). Loading and the widgets "
    "work without it."
)
_server_port: int | None = None


def import_tf(where: str):
    """``tensorflow``, or a :class:`CaptureUnavailableError` that says how to install it."""
    try:
        import tensorflow as tf
    except ImportError:
        raise CaptureUnavailableError(where, _INSTALL_HINT) from None
    return tf


def profiler_running() -> bool:
    """Whether some TF profiler session is recording in this process right now.

    TraceMe's "enabled" flag is on exactly while a session records, whoever started it
    (``tf.profiler.experimental.start``, a TensorBoard callback, a server request).
    """
    try:
        from tensorflow.python.profiler.internal import _pywrap_traceme
    except ImportError:  # a TF without this private module: rely on start()'s own error
        return False
    return bool(_pywrap_traceme.traceme_enabled())


def local_session_open() -> bool:
    """Whether ``tf.profiler.experimental.start()`` holds a session that ``stop()`` has not
    closed yet (it may already have stopped recording if ``stop()`` was cut short)."""
    try:
        from tensorflow.python.profiler import profiler_v2
    except ImportError:
        return profiler_running()
    if not hasattr(profiler_v2, "_profiler"):  # a TF that keeps it elsewhere
        return profiler_running()
    return profiler_v2._profiler is not None


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def local_server_port(where: str) -> int:
    """Port of this process's TF profiler server, started on first use.

    Tracer options reach a profiler session only through the server (TF 2.21's ``start()``
    ignores them), so captures with options request a trace from the process itself.
    """
    global _server_port
    if _server_port is not None:
        return _server_port
    tf = import_tf(where)
    port = int(os.environ.get("TFPROF_WIDGETS_SERVER_PORT", 0)) or _free_port()
    try:
        tf.profiler.experimental.server.start(port)
    except Exception as exc:  # TF raises several error types for a port it cannot bind
        raise CaptureError(
            where, f"could not start TensorFlow's profiler server on port {port}: {exc}"
        ) from None
    _server_port = port
    warnings.warn(
        f"tfprof_widgets started TensorFlow's profiler server in this process on port {port}: "
        "tracer options only take effect through it. TensorFlow listens on every network "
        "interface and cannot stop the server before the process exits; anyone who can "
        f"reach port {port} of this machine can profile this process. Captures with the "
        "default options do not need it.",
        RuntimeWarning,
        stacklevel=3,
    )
    return port
