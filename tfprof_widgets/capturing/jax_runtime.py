"""The JAX pieces a local capture needs, imported only when a capture starts.

``jax.profiler.start_trace(dir)`` writes the same layout as TensorFlow's profiler
(``<dir>/plugins/profile/<run>/<host>.xplane.pb``, with the programs' HLO protos in the
``/host:metadata`` plane), so a JAX capture is staged, moved into place and loaded like a TF
one. Unlike TF 2.21's ``start()``, ``start_trace`` applies its ``ProfileOptions``.
"""

from __future__ import annotations

import importlib.util
import sys

from ..errors import CaptureError, CaptureUnavailableError, ProfilerBusyError
from .options import CaptureOptions

__all__ = ["BACKENDS", "choose_backend", "import_jax", "start_trace", "stop_trace"]

BACKENDS = ("auto", "tf", "jax")
_INSTALL_HINT = (
    "capturing with --backend jax needs JAX: pip install jax (loading and the widgets work "
    "without it)"
)


def choose_backend(backend: str) -> str:
    """'tf' or 'jax' for ``backend`` ('auto': the framework already imported in this process,
    TensorFlow first; else the one installed, TensorFlow first)."""
    if backend not in BACKENDS:
        raise ValueError(f"backend must be one of {', '.join(BACKENDS)}, not {backend!r}")
    if backend != "auto":
        return backend
    for module, name in (("tensorflow", "tf"), ("jax", "jax")):
        if module in sys.modules:
            return name
    for module, name in (("tensorflow", "tf"), ("jax", "jax")):
        if importlib.util.find_spec(module) is not None:
            return name
    return "tf"  # neither is installed: TensorFlow's install hint says what to do


def import_jax(where: str):
    """``jax``, or a :class:`CaptureUnavailableError` that says how to install it."""
    try:
        import jax
    except ImportError:
        raise CaptureUnavailableError(where, _INSTALL_HINT) from None
    return jax


def profile_options(jax, options: CaptureOptions):
    """``jax.profiler.ProfileOptions`` with our tracer settings."""
    opts = jax.profiler.ProfileOptions()
    opts.host_tracer_level = options.host_tracer_level
    opts.python_tracer_level = int(options.python_tracer)
    opts.include_dataset_ops = options.include_dataset_ops
    opts.advanced_configuration = {"device_tracer_level": options.device_tracer_level}
    return opts


def start_trace(where: str, staging: str, options: CaptureOptions) -> None:
    """Start JAX's profiler into ``staging``; ProfilerBusyError when one already records."""
    jax = import_jax(where)
    if options.delay_ms:
        raise CaptureError(where, "JAX's profiler starts at once: --delay-ms needs --backend tf")
    try:
        jax.profiler.start_trace(staging, profiler_options=profile_options(jax, options))
    except RuntimeError as exc:
        if "already" in str(exc):
            raise ProfilerBusyError(
                where,
                "another JAX profiler session is recording in this process "
                "(jax.profiler.start_trace); only one can run. Stop it with "
                "jax.profiler.stop_trace()",
            ) from None
        raise CaptureError(where, f"JAX could not start profiling: {exc}") from None


def stop_trace(where: str) -> None:
    """Stop JAX's profiler and save its capture (nothing to do when none records: a stop
    cut short after JAX's own stop returned)."""
    jax = import_jax(where)
    try:
        jax.profiler.stop_trace()
    except RuntimeError as exc:
        if "No profile started" in str(exc):
            return
        raise CaptureError(where, f"JAX could not save the capture: {exc}") from None
