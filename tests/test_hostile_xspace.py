"""Hostile XSpace files (issue 20, items 1, 3, 4 and the field-number part of 10): memory is
bounded by what a file really expands to, and the C walker refuses or accepts malformed wire
data exactly where protobuf does. Files are written byte by byte here, so each case is what
it says."""

import gzip

import pytest
from test_walkers_agree import assert_same, load_both

import tfprof_widgets as tw
from tfprof_widgets.readers import columnar, xspace


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
