"""Bad input: every case raises a typed ProfileError naming the file, and writes nothing."""

import gzip
import json
import os

import pytest
from conftest import sample_files, tree_state
from xspace_builder import XSpaceBuilder

import tfprof_widgets as tw


@pytest.fixture
def good_bytes(walker):
    """A real capture's bytes; every test using it runs with both XSpace walkers."""
    (path,) = sample_files("input_bound")
    return path.read_bytes()


def check(path, exc_type, pattern):
    before = tree_state(os.path.dirname(path) if os.path.isfile(path) else path)
    with pytest.raises(exc_type, match=pattern) as info:
        tw.load(path)
    assert isinstance(info.value, tw.ProfileError)
    assert info.value.path == str(path)
    assert str(path) in str(info.value)
    assert "Traceback" not in str(info.value)
    after = tree_state(os.path.dirname(path) if os.path.isfile(path) else path)
    assert before == after
    return info.value


def test_missing_path(tmp_path):
    check(tmp_path / "nope", tw.ProfileNotFoundError, "no such file or directory")


def test_empty_logdir(tmp_path):
    (tmp_path / "plugins" / "profile").mkdir(parents=True)
    check(tmp_path, tw.EmptyProfileError, "no profile runs found")


def test_empty_file(tmp_path):
    p = tmp_path / "h.xplane.pb"
    p.write_bytes(b"")
    check(p, tw.CorruptProfileError, "empty")


@pytest.mark.parametrize("fraction", [0.1, 0.5, 0.9, 0.999])
def test_truncated_protobuf(tmp_path, good_bytes, fraction):
    p = tmp_path / "h.xplane.pb"
    p.write_bytes(good_bytes[: int(len(good_bytes) * fraction)])
    check(p, tw.CorruptProfileError, "not a valid XSpace protobuf.*truncated or damaged")


def test_corrupt_protobuf(tmp_path, good_bytes):
    data = bytearray(good_bytes)
    data[1:5] = b"\xff\xff\xff\xff"  # the first plane's length prefix becomes absurd
    p = tmp_path / "h.xplane.pb"
    p.write_bytes(bytes(data))
    check(p, tw.CorruptProfileError, "not a valid XSpace protobuf")


def test_text_mangled_binary(tmp_path, good_bytes):
    p = tmp_path / "h.xplane.pb"
    p.write_bytes(good_bytes.decode("utf-8", "replace").encode("utf-8"))
    check(p, tw.CorruptProfileError, "re-saved as text.*U\\+FFFD.*binary mode")


@pytest.mark.parametrize(
    "name,content,pattern",
    [
        ("img.png", b"\x89PNG\r\n\x1a\n" + bytes(200), "not a profile"),
        ("x.xplane.pb", b"\x89PNG\r\n\x1a\n" + bytes(200), "a PNG image, not a profile"),
        ("x.xplane.pb", b'{"traceEvents": []}', "JSON or gzip, not an XSpace"),
    ],
)
def test_wrong_kind_of_file(tmp_path, name, content, pattern):
    p = tmp_path / name
    p.write_bytes(content)
    err = check(p, tw.ProfileError, pattern)
    assert isinstance(err, (tw.WrongFormatError, tw.CorruptProfileError))


def test_protobuf_of_another_message(tmp_path, walker):
    # Valid protobuf wire data with only fields XSpace does not have (field 9, varint).
    p = tmp_path / "h.xplane.pb"
    p.write_bytes(b"\x48\x01\x48\x02")
    check(p, tw.WrongFormatError, "not an XSpace capture")


def test_capture_with_no_events(tmp_path, walker):
    b = XSpaceBuilder()
    b.task_environment(1, 2)
    b.plane("/host:CPU").line("python", 1)
    check(b.write(tmp_path / "h.xplane.pb"), tw.NoEventsError, "no trace events")


def test_event_metadata_pointing_nowhere(tmp_path, walker):
    b = XSpaceBuilder()
    p = b.plane("/host:CPU")
    ln = p.line("python", 1)
    ln.event("ok", 0, 10)
    ln.line.events.add(metadata_id=999, offset_ps=5, duration_ps=1)
    check(
        b.write(tmp_path / "h.xplane.pb"),
        tw.CorruptProfileError,
        "event metadata id 999, which the plane does not define",
    )


@pytest.mark.parametrize(
    "doc,exc,pattern",
    [
        ({}, tw.WrongFormatError, "without 'traceEvents'"),
        ([1, 2, 3], tw.WrongFormatError, r"traceEvents\[0\] is a int"),
        (
            {"traceEvents": [{"ph": "X", "name": "a", "dur": 1}]},
            tw.CorruptProfileError,
            r"traceEvents\[0\] \(ph 'X'\) has no 'ts'",
        ),
        ({"traceEvents": [{"name": "a", "ts": 1}]}, tw.CorruptProfileError, "has no 'ph'"),
        (
            {"traceEvents": [{"ph": "X", "name": "a", "ts": 1, "dur": -4}]},
            tw.CorruptProfileError,
            "dur is negative",
        ),
        (
            {"traceEvents": [{"ph": "M", "name": "process_name", "pid": 1}]},
            tw.NoEventsError,
            "no timed events",
        ),
        ("just a string", tw.WrongFormatError, "JSON str, not a Chrome trace"),
    ],
)
def test_bad_chrome_traces(tmp_path, doc, exc, pattern):
    p = tmp_path / "h.trace.json"
    p.write_text(json.dumps(doc))
    check(p, exc, pattern)


def test_nan_in_trace(tmp_path):
    p = tmp_path / "h.trace.json"
    p.write_text('{"traceEvents": [{"ph": "X", "name": "a", "ts": NaN, "dur": 1}]}')
    check(p, tw.CorruptProfileError, "ts is nan|invalid JSON")


def test_invalid_json_names_the_position(tmp_path):
    p = tmp_path / "h.trace.json"
    p.write_text('{"traceEvents": [{"ph": "X", ')
    check(p, tw.CorruptProfileError, "invalid JSON at byte")


def test_gzip_cut_short(tmp_path):
    data = gzip.compress(json.dumps({"traceEvents": []}).encode() * 50)
    p = tmp_path / "h.trace.json.gz"
    p.write_bytes(data[: len(data) // 2])
    check(p, tw.CorruptProfileError, "gzip stream is cut short")


def test_run_argument_on_a_file(tmp_path, good_bytes):
    p = tmp_path / "h.xplane.pb"
    p.write_bytes(good_bytes)
    with pytest.raises(tw.ProfileError, match="run= applies to a logdir"):
        tw.load(p, run="x")


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads files regardless of permissions")
def test_unreadable_file(tmp_path, good_bytes):
    p = tmp_path / "h.xplane.pb"
    p.write_bytes(good_bytes)
    p.chmod(0)
    check(p, tw.ProfileError, "permission denied")


def test_errors_are_catchable_as_profile_error(tmp_path):
    for exc in (
        tw.ProfileNotFoundError,
        tw.EmptyProfileError,
        tw.NoEventsError,
        tw.CorruptProfileError,
        tw.WrongFormatError,
    ):
        assert issubclass(exc, tw.ProfileError)
    assert issubclass(tw.ProfileNotFoundError, FileNotFoundError)
    assert issubclass(tw.ProfileTooLargeError, tw.ProfileError)


def test_capture_errors_are_not_input_errors():
    """Capture problems are their own family: `except ProfileError` catches input problems
    only, and a CaptureError still names its path and problem the same way."""
    for exc in (tw.CaptureError, tw.ProfilerBusyError, tw.CaptureUnavailableError):
        assert issubclass(exc, tw.CaptureError)
        assert not issubclass(exc, tw.ProfileError)
    assert issubclass(tw.CaptureUnavailableError, ImportError)
    err = tw.ProfilerBusyError("logs", "another capture is recording")
    assert (err.path, err.problem, str(err)) == (
        "logs",
        "another capture is recording",
        "logs: another capture is recording",
    )


def test_gzip_bomb_is_refused_while_inflating(tmp_path, monkeypatch):
    """1 MB of gzip that would expand to 1 GB of JSON (25 times the 43 MB the limit below
    allows): refused after inflating just past the limit, without ever holding the whole
    stream, and nothing is written. (The stream's size changes nothing past the limit; 8 GB
    took 45 s to compress for the same test.)"""
    import gzip
    import tracemalloc
    import zlib

    from tfprof_widgets.readers.chrome import reader as chrome_trace

    path = tmp_path / "bomb.trace.json.gz"
    comp = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    block = b" " * (1 << 24)
    with open(path, "wb") as f:
        f.write(comp.compress(b'{"traceEvents": ['))
        for _ in range(64):  # 1 GiB of spaces
            f.write(comp.compress(block))
        f.write(comp.compress(b"]}") + comp.flush())
    assert path.stat().st_size < 2 * 2**20
    before = tree_state(tmp_path)
    # As if 1 GB were available: the JSON may then be at most 1 GB / 25.
    monkeypatch.setattr(chrome_trace, "available_memory_bytes", lambda: 2**30)
    tracemalloc.start()
    try:
        with pytest.raises(tw.ProfileTooLargeError, match="expands to more than") as info:
            tw.load(path, max_memory_bytes=2**40)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert str(path) in str(info.value)
    assert peak < 200 * 2**20  # far below the 1 GiB the stream claims
    assert tree_state(tmp_path) == before
    # An honest gzip trace still loads.
    ok = tmp_path / "ok.trace.json.gz"
    ok.write_bytes(
        gzip.compress(
            b'{"traceEvents": [{"ph": "X", "name": "a", "ts": 1, "dur": 2, "pid": 1, "tid": 1}]}'
        )
    )
    assert len(tw.load(ok).events) == 1


# -- TF1 files whose numbers do not fit (issue 20 item 9) ------------------------------------
BIG_GPU = "/job:localhost/replica:0/task:0/device:GPU:99999999999999999999"


def run_metadata_on(tmp_path, device: str):
    from tfprof_widgets.proto import tfprof_pb2

    rm = tfprof_pb2.RunMetadata()
    dev = rm.step_stats.dev_stats.add(device=device)
    dev.node_stats.add(node_name="x", all_start_micros=1_700_000_000_000_000, all_end_rel_micros=5)
    path = tmp_path / "s.run_metadata.pb"
    path.write_bytes(rm.SerializeToString())
    return path


def tfprof_profile(tmp_path, device="/device:GPU:0", times=(1_700_000_000_000_000, 5), shape=()):
    from tfprof_widgets.proto import tfprof_pb2

    prof = tfprof_pb2.ProfileProto()
    node = prof.nodes[1]
    node.name, node.op = "x", "MatMul"
    node.shape.extend(shape)
    ex = node.execs[1]
    ex.run_count, ex.all_start_micros = 1, times[0]
    ex.accelerator_execs[device].times.add().int64_values.extend(times)
    path = tmp_path / "m.tfprof"
    path.write_bytes(prof.SerializeToString())
    return path


@pytest.mark.parametrize("kind", ["run_metadata", "tfprof"])
@pytest.mark.parametrize("device", [BIG_GPU, BIG_GPU + "/stream:all", "/device:GPU:" + "9" * 5000])
def test_tf1_device_ordinal_beyond_int64_is_no_ordinal(tmp_path, kind, device):
    """As for XSpace planes: a GPU whose ordinal no int column holds is a GPU without one."""
    path = (run_metadata_on if kind == "run_metadata" else tfprof_profile)(tmp_path, device)
    run = tw.load(path, progress=False)
    gpu = run.planes[run.planes["device_kind"] == "GPU"]
    assert len(gpu) == 1 and gpu["device_ordinal"].isna().all()
    assert gpu["plane"].iloc[0].startswith("/device:GPU:9999999999")
    assert (run.events["plane"] == gpu["plane"].iloc[0]).sum() == 1


@pytest.mark.parametrize(
    "times", [(2**62, 5), (1_700_000_000_000_000, 2**62)], ids=["start", "duration"]
)
def test_tfprof_times_that_overflow_nanoseconds_are_named(tmp_path, times):
    """A ProfileProto's µs times ×1000 beyond int64: the node and device named, not an
    OverflowError from numpy."""
    path = tfprof_profile(tmp_path, times=times)
    err = check(path, tw.CorruptProfileError, "beyond what a timestamp can hold")
    assert "'x' on /device:GPU:0" in str(err)


def test_tfprof_shape_beyond_int64_parameters_is_named(tmp_path):
    """np.prod would wrap 2^40 x 2^40 round to 0 parameters without a word."""
    path = tfprof_profile(tmp_path, shape=(2**40, 2**40))
    check(path, tw.CorruptProfileError, r"node 'x': its shape .* more parameters than an int64")
    ok = tfprof_profile(tmp_path, shape=(2**20, 2**20))
    assert tw.load(ok, progress=False).tfprof_nodes["parameters"].tolist() == [2**40]
