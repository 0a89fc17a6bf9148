"""What a capture is asked to record: TF's ProfilerOptions, checked and made explicit."""

from __future__ import annotations

import dataclasses
import time

from ..proto import profiler_service_pb2

__all__ = ["CaptureOptions"]


@dataclasses.dataclass(frozen=True)
class CaptureOptions:
    """Tracer settings, with the meanings of ``tf.profiler.experimental.ProfilerOptions``.

    host_tracer_level: 1 user ``Trace``/TraceMe events only, 2 also expensive TF ops (TF's
        default), 3 verbose (every op, executor internals).
    python_tracer: trace every Python function call (large captures, real overhead).
    device_tracer_level: 0 no GPU/TPU activity, 1 kernels and copies (default).
    delay_ms: start tracing this long after the capture was asked for.
    include_dataset_ops: keep tf.data iterator events (TF's default; the tf.data views
        need them).
    """

    host_tracer_level: int = 2
    python_tracer: bool = False
    device_tracer_level: int = 1
    delay_ms: int = 0
    include_dataset_ops: bool = True

    def __post_init__(self) -> None:
        if self.host_tracer_level not in (0, 1, 2, 3):
            raise ValueError(f"host_tracer_level must be 0..3, not {self.host_tracer_level!r}")
        if self.device_tracer_level not in (0, 1, 2):
            raise ValueError(f"device_tracer_level must be 0..2, not {self.device_tracer_level!r}")
        if self.delay_ms < 0:
            raise ValueError(f"delay_ms must be >= 0, not {self.delay_ms!r}")

    @property
    def is_default(self) -> bool:
        """True when TF's plain ``start()`` records exactly these settings."""
        return self == CaptureOptions()

    def to_proto(self, duration_ms: int = 0) -> profiler_service_pb2.ProfileOptions:
        """The ProfileOptions message a profiler server runs a session with."""
        start_ns = time.time_ns() + self.delay_ms * 1_000_000 if self.delay_ms else 0
        return profiler_service_pb2.ProfileOptions(
            version=1,
            include_dataset_ops=self.include_dataset_ops,
            host_tracer_level=self.host_tracer_level,
            device_tracer_level=self.device_tracer_level,
            python_tracer_level=int(self.python_tracer),
            start_timestamp_ns=start_ns,
            duration_ms=duration_ms,
        )
