"""The options a capture records about itself: its serialized ``ProfileOptions``.

TensorFlow writes them as the ``profile_options`` stat of the "Task Environment" plane. They
say what the profiler really did, which is not always what was asked for (TF 2.21's
``tf.profiler.experimental.start`` ignores the options it is given), so captures made with
tracer options are checked against them.
"""

from __future__ import annotations

import pandas as pd
from google.protobuf.message import DecodeError

from ... import schema, stat_columns
from ...errors import CorruptProfileError
from ...proto import profiler_service_pb2

__all__ = ["decode_profile_options", "profile_options", "profile_options_table"]


def decode_profile_options(blob: bytes, path: str) -> profiler_service_pb2.ProfileOptions:
    """Parse one serialized ProfileOptions; ``path`` names the capture in errors."""
    msg = profiler_service_pb2.ProfileOptions()
    try:
        msg.ParseFromString(bytes(blob))
    except DecodeError as exc:
        raise CorruptProfileError(
            path, f"its profile_options stat is not a ProfileOptions message ({exc})"
        ) from None
    return msg


def profile_options(run) -> pd.DataFrame:
    """The options each host's profiler really ran with, one row per host that recorded them
    (``run.profile_options`` caches it): columns of ``schema.PROFILE_OPTIONS``."""
    return profile_options_table(run.plane_stats, dict(zip(run.hosts, run.files)))


def profile_options_table(plane_stats: pd.DataFrame, files_by_host: dict[str, str]) -> pd.DataFrame:
    """One row per host that recorded its options; columns of ``schema.PROFILE_OPTIONS``."""
    recorded = stat_columns.select(plane_stats, "profile_options")
    rows = []
    for host, blob in zip(recorded["host"].astype(str), stat_columns.values(recorded)):
        if not isinstance(blob, (bytes, bytearray)):
            continue
        o = decode_profile_options(blob, files_by_host.get(host, host))
        rows.append(
            {
                "host": host,
                "host_tracer_level": o.host_tracer_level,
                "device_tracer_level": o.device_tracer_level,
                "python_tracer_level": o.python_tracer_level,
                "include_dataset_ops": o.include_dataset_ops,
                "start_timestamp_ns": int(o.start_timestamp_ns),
                "duration_ms": o.duration_ms,
                "version": o.version,
            }
        )
    df = pd.DataFrame(rows, columns=list(schema.PROFILE_OPTIONS))
    return df.astype(schema.dtypes(schema.PROFILE_OPTIONS))
