"""The compiled wire walker and the protobuf fallback give identical tables."""

import pandas as pd
import pytest
from conftest import SAMPLES
from xspace_builder import XSpaceBuilder, gpu_capture, write_multi_host_run

import tfprof_widgets as tw
from tfprof_widgets.readers.xspace import reader as xspace

TABLES = (
    "planes",
    "lines",
    "events",
    "event_stats",
    "event_metadata",
    "metadata_stats",
    "plane_stats",
)


def load_both(path, monkeypatch):
    if xspace._wire is None:
        pytest.skip("the C wire walker is not built here")
    fast = tw.load(path)
    with monkeypatch.context() as m:
        m.setattr(xspace, "_wire", None)
        slow = tw.load(path)
    return fast, slow


def assert_same(a, b):
    for t in TABLES:
        pd.testing.assert_frame_equal(getattr(a, t), getattr(b, t), obj=t)
    assert a.t0_ns == b.t0_ns and a.errors == b.errors and a.warnings == b.warnings


@pytest.mark.parametrize("name", ["keras_fit", "custom_loop", "input_bound"])
def test_samples(name, monkeypatch):
    assert_same(*load_both(SAMPLES / name, monkeypatch))


def test_synthetic_multi_host_gpu(tmp_path, monkeypatch):
    write_multi_host_run(tmp_path, hosts=("a", "b", "c"))
    assert_same(*load_both(tmp_path, monkeypatch))


def test_every_stat_kind_and_aggregated_events(tmp_path, monkeypatch):
    import numpy as np

    b = XSpaceBuilder()
    b.space.errors.append("device tracer failed")
    b.space.warnings.append("dropped 3 events")
    p = b.plane("/device:TPU:0", 2)
    p.add_plane_stat("core_count", 2)
    p.event_id("m", display_name="M", stats={"flops": 10, "note": ("ref", "x")})
    ln = p.line("XLA Ops", 1, timestamp_ns=10)
    ln.event(
        "m",
        5,
        3,
        {
            "i": -(2**62),
            "u": np.uint64(2**64 - 1),
            "d": -0.5,
            "s": "é",
            "b": b"\xff",
            "r": ("ref", "y"),
            "z": ("gz", "zz"),
        },
    )
    ln.aggregated("agg", 4, 100)
    ln.line.events.add(metadata_id=p.event_id("m"), offset_ps=9).stats.add(metadata_id=1)
    fast, slow = load_both(b.write(tmp_path / "t.xplane.pb"), monkeypatch)
    assert_same(fast, slow)
    assert fast.errors == ["host0: device tracer failed"]  # the host its XSpace records
    assert (fast.event_stats["kind"] == "none").sum() == 1


def test_gpu_capture_with_unknown_fields(tmp_path, monkeypatch):
    """Fields a newer profiler may add (unknown to our schema) are skipped by both walks."""
    data = gpu_capture().bytes()
    # Append an unknown top-level field (number 15, varint) to the XSpace.
    (tmp_path / "u.xplane.pb").write_bytes(data + b"\x78\x05")
    assert_same(*load_both(tmp_path / "u.xplane.pb", monkeypatch))
