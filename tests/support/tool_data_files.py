"""The tool-data test files (tests/data/tooldata, see tests/data/NOTICE) laid out as the run
directories and logdirs TensorFlow wrote, and a raw protobuf reader for counting what the
files hold independently of tfprof_widgets' messages.
"""

from __future__ import annotations

import gzip
import pathlib
import shutil
import struct

from google.protobuf import empty_pb2
from google.protobuf.unknown_fields import UnknownFieldSet

ROOT = pathlib.Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data"
TOOLDATA = DATA / "tooldata"
BERT = DATA / "bert_8gpu_multi_worker.xplane.pb"
BERT_HOST = "34.83.195.179_6003"
# The public demo runs (tensorflow/profiler's demo, TF ~2.2 and 2019 Cloud TPU).
DEMO_RUNS = ("demo_GPU-input-bound", "demo_GPU-compute-bound", "demo_Cloud-TPU")


def demo_run(name: str, dest: pathlib.Path) -> pathlib.Path:
    """A copy of a demo run directory as TensorFlow wrote it (files stored gzip-compressed
    here are decompressed)."""
    out = dest / name
    out.mkdir(parents=True, exist_ok=True)
    for f in sorted((TOOLDATA / name).iterdir()):
        if f.name.endswith(".pb.gz"):
            (out / f.name[: -len(".gz")]).write_bytes(gzip.decompress(f.read_bytes()))
        else:
            shutil.copy(f, out / f.name)
    return out


def tf22_logdir(dest: pathlib.Path) -> pathlib.Path:
    """A TensorBoard logdir as TF 2.2 left it: two runs of tool data and no xplane, plus the
    empty events file the profiler writes so that TensorBoard shows the Profile tab."""
    logdir = dest / "tf22_logs"
    profile = logdir / "plugins" / "profile"
    profile.mkdir(parents=True)
    for run, name in (
        ("2020_05_20_10_00_00", "demo_GPU-compute-bound"),
        ("2020_05_20_11_00_00", "demo_GPU-input-bound"),
    ):
        demo_run(name, profile).rename(profile / run)
    # TFRecord of one Event{file_version: "brain.Event:2"} (length, masked CRCs not checked).
    event = b"\x1a\x0dbrain.Event:2"
    record = struct.pack("<Q", len(event)) + b"\0" * 4 + event + b"\0" * 4
    (logdir / "events.out.tfevents.1589968800.localhost.profile-empty").write_bytes(record)
    return logdir


def tf2x_run(dest: pathlib.Path) -> pathlib.Path:
    """A TF 2.3-2.10 run directory: the BERT xplane with the trace-viewer JSON, kernel stats
    and memory profile that TensorFlow wrote beside it."""
    run = dest / "tf2x_logs" / "plugins" / "profile" / "2020_06_01_12_00_00"
    run.mkdir(parents=True)
    shutil.copy(BERT, run / f"{BERT_HOST}.xplane.pb")
    for f in (TOOLDATA / "bert_tf2x").iterdir():
        shutil.copy(f, run / f.name)
    return run


def tf21_logdir(dest: pathlib.Path) -> pathlib.Path:
    """A logdir as TF 2.0/2.1 left it: plugins/profile/<run>/local.trace per capture."""
    logdir = dest / "tf21_logs"
    for run, sample in (
        ("2020-01-15_10-00-00", "tf21_cpu"),
        ("2020-01-15_11-00-00", "tf20_gpu_timeline"),
    ):
        d = logdir / "plugins" / "profile" / run
        d.mkdir(parents=True)
        shutil.copy(TOOLDATA / sample / "local.trace", d / "local.trace")
    return logdir


# -- a raw protobuf reader: the wire fields as protobuf's own parser sees them ---------------
def fields(data: bytes) -> list[tuple[int, object]]:
    """(field number, value) of every field of a message, with no schema: parsed as an empty
    message, so that all its fields are unknown. Length-delimited values are bytes, varints
    ints, 64-bit values ints (see :func:`double`)."""
    msg = empty_pb2.Empty()
    msg.ParseFromString(data)
    return [(f.field_number, f.data) for f in UnknownFieldSet(msg)]


def field(data: bytes, number: int) -> list:
    return [v for n, v in fields(data) if n == number]


def double(bits: int) -> float:
    return struct.unpack("<d", struct.pack("<Q", bits))[0]


def first_double(data: bytes, number: int) -> float:
    values = field(data, number)
    return double(values[0]) if values else 0.0
