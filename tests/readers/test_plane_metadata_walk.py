"""The C walk of a plane's metadata maps reads them as protobuf does, entry by entry.

A plane's event and stat metadata (thousands of entries in a GPU capture) are read in C into
columns; protobuf has parsed the header first. These cases are the map rules where a walk
could differ: an entry holding anything but its key and value is no entry of the map (upb
keeps it among the unknown fields), a later entry of a key replaces an earlier one, a value
given twice is merged, child ids come packed or not.
"""

import pytest
from test_hostile_xspace import varint
from test_walkers_agree import assert_same
from xspace_builder import XSpaceBuilder

import tfprof_widgets as tw
from tfprof_widgets.readers.xspace import reader as xspace


def field(number: int, wire_type: int, payload: bytes) -> bytes:
    tag = varint(number << 3 | wire_type)
    return tag + (varint(len(payload)) + payload if wire_type == 2 else payload)


def metadata(md_id: int, name: str, *extra: bytes) -> bytes:
    """An XEventMetadata value: id 1, name 2, then whatever else."""
    return field(1, 0, varint(md_id)) + field(2, 2, name.encode()) + b"".join(extra)


def event_entry(key: int, value: bytes, *extra: bytes) -> bytes:
    """An event_metadata map entry (XPlane field 4): key 1, value 2."""
    return field(4, 2, b"".join(extra) + field(1, 0, varint(key)) + field(2, 2, value))


def stat_entry(key: int, name: str, *extra: bytes) -> bytes:
    """A stat_metadata map entry (XPlane field 5)."""
    value = field(1, 0, varint(key)) + field(2, 2, name.encode())
    return field(5, 2, b"".join(extra) + field(1, 0, varint(key)) + field(2, 2, value))


def capture(tmp_path, plane_tail: bytes):
    """A one-plane capture whose event uses metadata 1; ``plane_tail`` is appended to the
    plane's bytes (more map entries)."""
    b = XSpaceBuilder()
    p = b.plane("/host:CPU", 0)
    p.event_id("op:Type", stats={"flops": 3})
    p.line("python", 1).event("op:Type", 0, 10, {"step_num": 1})
    # The capture is XSpace{planes=[plane], hostnames=...}: the plane with the tail, then
    # the rest as it was.
    plane = b.space.planes[0].SerializeToString()
    rest = b.space.SerializeToString()[len(field(1, 2, plane)) :]
    data = field(1, 2, plane + plane_tail) + rest
    path = tmp_path / "m.xplane.pb"
    path.write_bytes(bytes(data))
    return path


def load_both(path, monkeypatch):
    if xspace._wire is None:
        pytest.skip("the C wire walker is not built here")
    fast = tw.load(path, progress=False)
    with monkeypatch.context() as m:
        m.setattr(xspace, "_wire", None)
        slow = tw.load(path, progress=False)
    return fast, slow


CASES = {
    "entry with an unknown field": event_entry(7, metadata(7, "x:X"), field(3806, 2, b"xy")),
    "value with the wrong wire type": field(4, 2, field(1, 0, varint(8)) + field(2, 0, b"\x05")),
    "entry with an unknown group": event_entry(
        9, metadata(9, "y:Y"), varint(99 << 3 | 3) + varint(99 << 3 | 4)
    ),
    "stat entry with an unknown field": stat_entry(55, "performance", field(9, 0, b"\x01")),
    "key given again": event_entry(10, metadata(10, "first:A"))
    + event_entry(10, metadata(10, "second:B")),
    "value given twice": field(
        4,
        2,
        field(1, 0, varint(11))
        + field(2, 2, metadata(11, "a:A"))
        + field(2, 2, field(4, 2, b"disp")),
    ),
    "child ids packed and not": event_entry(
        12, metadata(12, "c:C", field(6, 2, varint(1) + varint(300)), field(6, 0, varint(2)))
    ),
    "metadata stats": event_entry(
        13,
        metadata(13, "s:S", field(5, 2, field(1, 0, varint(1)) + field(4, 0, varint(42)))),
    ),
}


@pytest.mark.parametrize("case", list(CASES))
def test_plane_metadata_walk_reads_maps_as_protobuf(case, tmp_path, monkeypatch):
    fast, slow = load_both(capture(tmp_path, CASES[case]), monkeypatch)
    assert_same(fast, slow)
