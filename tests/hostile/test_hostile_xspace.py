"""Hostile XSpace files (issue 20, items 1, 3, 4 and the field-number part of 10): memory is
bounded by what a file really expands to, and the C walker refuses or accepts malformed wire
data exactly where protobuf does. Files are written byte by byte here, so each case is what
it says."""

import gzip

import pytest
from test_walkers_agree import assert_same, load_both

import tfprof_widgets as tw
from tfprof_widgets.readers import columnar
from tfprof_widgets.readers.xspace import reader as xspace


def varint(n: int) -> bytes:
    out = bytearray()
    while True:
        b, n = n & 0x7F, n >> 7
        out.append(b | (0x80 if n else 0))
        if not n:
            return bytes(out)


def field(number: int, payload: bytes) -> bytes:
    """A length-delimited field."""
    return varint(number << 3 | 2) + varint(len(payload)) + payload


def number(n: int, value: int) -> bytes:
    return varint(n << 3) + varint(value)


def xspace_bytes(n_events: int, event_extra: bytes = b"", space_extra: bytes = b"") -> bytes:
    """One plane, one line, ``n_events`` events of metadata 1 lasting 5 ps each, 1 ps apart;
    ``event_extra`` is appended to every event's fields."""
    events = b"".join(
        field(4, number(1, 1) + number(2, i) + number(3, 5) + event_extra) for i in range(n_events)
    )
    line = number(1, 1) + field(2, b"worker") + number(3, 1_000) + events
    metadata = field(4, number(1, 1) + field(2, number(1, 1) + field(2, b"op")))
    stat_md = field(5, number(1, 7) + field(2, number(1, 7) + field(2, b"blob")))
    plane = number(1, 1) + field(2, b"/host:CPU") + field(3, line) + metadata + stat_md
    return field(1, plane) + space_extra


def write(tmp_path, data: bytes, name: str = "h.xplane.pb"):
    path = tmp_path / name
    path.write_bytes(data)
    return path


# -- memory -------------------------------------------------------------------------------------
def test_a_file_of_small_events_is_refused_by_the_walker_within_the_budget(tmp_path, monkeypatch):
    """4 bytes of file per event but ~170 bytes of memory: the walker counts events against
    the memory there is (here pretended to be 10 MB) and stops, naming the file."""
    if xspace._wire is None:
        pytest.skip("the C wire walker is not built here")
    path = write(tmp_path, xspace_bytes(100_000))
    assert len(tw.load(path).events) == 100_000
    monkeypatch.setattr(xspace, "available_memory_bytes", lambda: 10_000_000)
    with pytest.raises(tw.ProfileTooLargeError) as info:
        tw.load(path)
    assert info.value.path == str(path) and "events and stats" in str(info.value)


def test_a_compressed_string_stat_bomb_is_refused(tmp_path, monkeypatch):
    """XStat field 8 (compressed_str_value): 40 KB of gzip holding 40 MB is inflated in
    chunks and stopped past a quarter of the memory there is (here pretended to be 20 MB)."""
    bomb = gzip.compress(b"\0" * 40_000_000, compresslevel=9)
    assert len(bomb) < 100_000
    stat = field(4, number(1, 7) + field(8, bomb))
    path = write(tmp_path, xspace_bytes(1, event_extra=stat))
    monkeypatch.setattr(columnar, "available_memory_bytes", lambda: 20_000_000)
    with pytest.raises(tw.ProfileTooLargeError) as info:
        tw.load(path)
    assert "compressed string stat" in str(info.value)
    small = write(tmp_path, xspace_bytes(1, field(4, number(1, 7) + field(8, gzip.compress(b"x")))))
    assert tw.load(small).stat("blob").tolist() == ["x"]  # an honest one still inflates


@pytest.mark.parametrize("fast", [True, False])
def test_a_file_of_zero_bytes_is_refused_at_byte_zero(tmp_path, fast):
    """A preallocated capture that was never written: field number 0 at byte 0, refused at
    once by both readers (the walker used to copy every zero into a header buffer)."""
    if fast and xspace._wire is None:
        pytest.skip("the C wire walker is not built here")
    path = write(tmp_path, bytes(20_000_000))
    with pytest.raises(tw.ProfileError) as info:
        xspace.read_xspace(str(path), fast=fast)
    assert info.value.path == str(path)
    if fast:
        assert "field number 0" in str(info.value) and "byte 0" in str(info.value)


# -- the walker agrees with protobuf ----------------------------------------------------------
REFUSED = {
    "field 0 in an event": number(0, 5),
    "field 0 in a stat": field(4, number(1, 7) + number(0, 1)),
    "a tag beyond 32 bits in an event": varint((2**32 + 4) << 3) + varint(1),
    "an end-group tag alone": varint(9 << 3 | 4),
    "a group never ended": varint(9 << 3 | 3) + number(1, 1),
}
ACCEPTED = {
    "an unknown group in an event": varint(9 << 3 | 3) + number(1, 1) + varint(9 << 3 | 4),
    "nested unknown groups": (
        varint(9 << 3 | 3) + varint(10 << 3 | 3) + varint(10 << 3 | 4) + varint(9 << 3 | 4)
    ),
    "the largest field number": varint((2**29 - 1) << 3) + varint(1),
}


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_the_walker_refuses_what_protobuf_refuses(case, tmp_path, monkeypatch):
    path = write(tmp_path, xspace_bytes(3, event_extra=REFUSED[case]))
    if xspace._wire is None:
        pytest.skip("the C wire walker is not built here")
    for fast in (True, False):
        with pytest.raises(tw.CorruptProfileError):
            xspace.read_xspace(str(path), fast=fast)


@pytest.mark.parametrize("case", sorted(ACCEPTED))
def test_the_walker_accepts_what_protobuf_accepts(case, tmp_path, monkeypatch):
    path = write(tmp_path, xspace_bytes(3, event_extra=ACCEPTED[case]))
    fast, slow = load_both(path, monkeypatch)
    assert_same(fast, slow)
    assert len(fast.events) == 3


def test_an_unknown_group_in_the_xspace_is_skipped_alike(tmp_path, monkeypatch):
    group = varint(20 << 3 | 3) + number(1, 1) + varint(20 << 3 | 4)
    fast, slow = load_both(write(tmp_path, xspace_bytes(3, space_extra=group)), monkeypatch)
    assert_same(fast, slow)


# -- untyped errors (issue 20, items 6 and 8) ---------------------------------------------------
@pytest.mark.parametrize("step_name", ["²", "9" * 5000])
def test_a_step_name_that_only_looks_like_a_number(tmp_path, step_name):
    """'²' passes str.isdigit() and 5,000 digits pass it too; neither is a step number."""
    from xspace_builder import XSpaceBuilder

    b = XSpaceBuilder()
    line = b.plane("/host:CPU", 1).line("l", 1)
    line.event("train", 0, 1000, {"group_id": 1, "step_name": step_name})
    line.event("op", 0, 500, {"group_id": 1})
    run = tw.load(b.write(tmp_path / "s.xplane.pb"), progress=False)
    assert run.events["group_id"].tolist() == [1, 1]


def test_a_device_ordinal_beyond_int32_is_no_ordinal(tmp_path):
    from xspace_builder import XSpaceBuilder

    b = XSpaceBuilder()
    b.plane("/device:GPU:" + "9" * 20, 1).line("Stream #1", 1).event("k", 0, 500)
    planes = tw.load(b.write(tmp_path / "o.xplane.pb"), progress=False).planes
    assert planes["device_kind"].astype(str).tolist() == ["GPU"]
    assert planes["device_ordinal"].isna().all()


def test_a_file_removed_after_listing_is_named(tmp_path, monkeypatch):
    """A run directory being rewritten: a host file listed, then gone before it is read."""
    import shutil

    from conftest import SAMPLES

    from tfprof_widgets import loading

    run_dir = tmp_path / "run"
    shutil.copytree(SAMPLES / "custom_loop", run_dir)
    real = loading.os.path.getsize

    def gone(path):
        if str(path).endswith(".xplane.pb"):
            raise FileNotFoundError(2, "No such file or directory", str(path))
        return real(path)

    monkeypatch.setattr(loading.os.path, "getsize", gone)
    with pytest.raises(tw.ProfileNotFoundError) as info:
        tw.load(run_dir, progress=False)
    assert info.value.path.endswith(".xplane.pb") and "removed" in str(info.value)


@pytest.mark.parametrize(
    "start_us,dur_us", [(2**62, 5), (1_700_000_000_000_000, 2**62)], ids=["start", "duration"]
)
def test_tf1_times_that_overflow_nanoseconds_are_named(tmp_path, start_us, dur_us):
    """TF1 RunMetadata keeps µs; times ×1000 beyond int64 (item 9) are a typed error."""
    from tfprof_widgets.proto import tfprof_pb2

    rm = tfprof_pb2.RunMetadata()
    dev = rm.step_stats.dev_stats.add(device="/job:localhost/replica:0/task:0/device:CPU:0")
    dev.node_stats.add(node_name="x", all_start_micros=start_us, all_end_rel_micros=dur_us)
    path = write(tmp_path, rm.SerializeToString(), "s.run_metadata.pb")
    with pytest.raises(tw.CorruptProfileError, match="beyond what a timestamp can hold"):
        tw.load(path, progress=False)


# -- numbers our columns cannot hold (item 11) ---------------------------------------------------
def one_event_capture(tmp_path, name="n.xplane.pb", **event):
    from xspace_builder import XSpaceBuilder

    b = XSpaceBuilder("h")
    line = b.plane("/host:CPU", 1).line("l", 1, 1000)
    ev = line.event("a", 0, event.pop("duration_ps", 10), event.pop("stats", None))
    for k, v in event.items():
        setattr(ev, k, v)
    return b.write(tmp_path / name)


@pytest.mark.parametrize(
    "event,message",
    [
        ({"stats": {"group_id": 2**31}}, "group_id stat of 2147483648"),
        ({"stats": {"group_id": 2**40}}, "group_id stat of 1099511627776"),
        ({"num_occurrences": 2**40}, "num_occurrences = 1099511627776"),
        ({"num_occurrences": -3}, "num_occurrences = -3"),
    ],
    ids=["group_id 2**31", "group_id 2**40", "occurrences 2**40", "negative occurrences"],
)
def test_numbers_beyond_their_columns_are_named(tmp_path, event, message):
    """They used to wrap (2**31 -> -2**31) or vanish (2**40 -> 0) without a word."""
    path = one_event_capture(tmp_path, **event)
    for fast in (True, False):
        if fast and xspace._wire is None:
            continue
        with pytest.raises(tw.CorruptProfileError, match=message) as info:
            tw.load(path) if fast else xspace.read_xspace(str(path), fast=False)
        assert info.value.path == str(path) and "line 'l'" in str(info.value)


def test_a_negative_duration_counts_as_zero_with_a_warning(tmp_path):
    run = tw.load(one_event_capture(tmp_path, duration_ps=-(10**12)))
    assert run.events["dur_us"].tolist() == [0.0]
    assert any("negative duration_ps" in w and "-1,000,000,000,000 ps" in w for w in run.warnings)


def test_lines_further_apart_than_int64_picoseconds_are_named(tmp_path):
    """Two lines 200 days apart: their picosecond times overflow int64 (they gave start_us
    1.17e12 and a negative t0_ns); no capture spans that."""
    from xspace_builder import XSpaceBuilder

    b = XSpaceBuilder("h")
    p = b.plane("/host:CPU", 1)
    p.line("l", 1, 1000).event("a", 0, 10)
    p.line("m", 2, 1000 + 200 * 86_400 * 10**9).event("b", 0, 10)
    path = b.write(tmp_path / "far.xplane.pb")
    with pytest.raises(tw.CorruptProfileError, match="line 'm' lies 200 days") as info:
        tw.load(path)
    assert info.value.path == str(path)


def test_a_ten_byte_varint_past_64_bits_loads_like_protobuf(tmp_path, monkeypatch):
    """upb keeps the low 64 bits of a 10-byte varint; the walker used to refuse it. Here each
    event's duration is written again as 5 + 2**64 in ten bytes: both read 5."""
    duration = varint(3 << 3) + bytes([0x85] + [0x80] * 8) + b"\x02"
    fast, slow = load_both(write(tmp_path, xspace_bytes(3, event_extra=duration)), monkeypatch)
    assert_same(fast, slow)
    assert (fast.events["dur_us"] == 5e-6).all()


def test_structured_walker_mutations_agree():
    """A sample of benchmarks/fuzz_walkers.py (which runs 20,000): every kind of structured
    mutation of the real captures, both readers agree and loading raises nothing untyped."""
    import pathlib
    import sys

    if xspace._wire is None:
        pytest.skip("the C wire walker is not built here")
    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "benchmarks"))
    import fuzz_walkers

    results = fuzz_walkers._batch((0, 16 * 20, 7))
    bad = [(kind, name, why) for kind, name, why, _ in results if why not in ("agree", "skipped")]
    assert bad == []
    assert {kind for kind, *_ in results} == set(fuzz_walkers.KINDS)


def test_device_ordinals_beyond_int64_in_tf1_run_metadata(tmp_path):
    from tfprof_widgets.proto import tfprof_pb2

    rm = tfprof_pb2.RunMetadata()
    dev = rm.step_stats.dev_stats.add(
        device="/job:localhost/replica:0/task:0/device:GPU:" + "9" * 20
    )
    dev.node_stats.add(node_name="x", all_start_micros=1_700_000_000_000_000, all_end_rel_micros=5)
    run = tw.load(write(tmp_path, rm.SerializeToString(), "s.run_metadata.pb"), progress=False)
    gpu = run.planes[run.planes["plane"].astype(str).str.startswith("/device:GPU:")]
    assert len(gpu) == 1 and gpu["device_ordinal"].isna().all()


def test_a_profile_start_time_beyond_int64_is_no_start_time(tmp_path):
    """Issue 20 item 6: 2**64-1 ns is not a time; the capture loads on its lines' clocks."""
    import numpy as np
    from xspace_builder import XSpaceBuilder

    b = XSpaceBuilder("h")
    b.plane("/host:CPU", 1).line("l", 1, 1000).event("a", 0, 10)
    b.plane("Task Environment", 9).add_plane_stat("profile_start_time", np.uint64(2**64 - 1))
    run = tw.load(b.write(tmp_path / "t.xplane.pb"), progress=False)
    assert run.t0_ns == 1000 and len(run.events) == 1
