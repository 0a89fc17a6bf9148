"""The TPU captures of tests/xla/test_xla_tpu_rates.py: tests/support/tpu_builder.py's as it is
('tpu_rates'), and the same with libtpu's ``memory_access_breakdown`` filled in
('tpu_rates_memory'), so that XProf's roofline rule meets every memory it reads.

tpu_builder.py writes each op's breakdown as one entry of unknown memory space and no bytes
(so every op's HBM traffic is 0 there). The real stat (xla-capture-inventory.txt: on every op
metadata) is a serialized ``MemoryAccessBreakdown``: repeated ``MemoryAccessed
{operation_type (1 read, 2 write), memory_space (1 HBM, 2 CMEM, 3 VMEM), bytes_accessed}``,
per run of the op. The variant gives some ops HBM, CMEM and VMEM reads and writes (sized so
that each memory bounds one op), one op an empty breakdown (XProf then counts all its bytes
as HBM), and the chip a CMEM (100 GB/s each way: tpu_builder's v4 has none).
``scripts/make_golden.py --tpu-rates`` runs xprof on both.
"""

from __future__ import annotations

from tpu_builder import tpu_capture
from xspace_builder import XSpaceBuilder

READ, WRITE = 1, 2
HBM, CMEM, VMEM = 1, 2, 3
# instruction -> its breakdown per run: (operation type, memory space, bytes)
BREAKDOWNS = {
    "conv_general_dilated.2": ((READ, HBM, 60), (WRITE, HBM, 40), (READ, VMEM, 1_000)),
    "dot_general.4": ((READ, HBM, 4_000), (WRITE, HBM, 2_000)),
    "ynn_fusion": ((READ, CMEM, 20_000), (READ, HBM, 500)),
    "ynn_fusion.1": ((WRITE, CMEM, 8_000), (WRITE, VMEM, 100)),
    "subtract_convert_fusion": ((WRITE, VMEM, 500_000), (READ, HBM, 64)),
    "reduce_multiply_fusion": ((READ, VMEM, 300_000),),
    "wrapped_convert.2": ((READ, HBM, 4_096), (WRITE, HBM, 2_048)),
    "transpose_copy_fusion.1": (),  # no entries: all 2,048 bytes are HBM
}
CMEM_GBPS = 100.0


def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        byte, n = n & 0x7F, n >> 7
        out.append(byte | (0x80 if n else 0))
        if not n:
            return bytes(out)


def breakdown(entries) -> bytes:
    """A serialized MemoryAccessBreakdown of (operation type, memory space, bytes) entries."""
    out = b""
    for kind, space, nbytes in entries:
        body = b"\x08" + _varint(kind) + b"\x10" + _varint(space) + b"\x18" + _varint(nbytes)
        out += b"\x0a" + _varint(len(body)) + body
    return out


def tpu_memory_capture() -> XSpaceBuilder:
    """tpu_builder's capture with the breakdowns above and a CMEM on each core."""
    b = tpu_capture()
    for plane in b.space.planes:
        if not plane.name.startswith("/device:TPU:"):
            continue
        names = {m.id: m.name for m in plane.stat_metadata.values()}
        for stat in plane.stats:
            if names[stat.metadata_id].startswith("peak_cmem_"):
                stat.double_value = CMEM_GBPS
        for md in plane.event_metadata.values():
            if md.display_name not in BREAKDOWNS:
                continue
            for stat in md.stats:
                if names[stat.metadata_id] == "memory_access_breakdown":
                    stat.bytes_value = breakdown(BREAKDOWNS[md.display_name])
    return b


BUILDERS = {"tpu_rates": tpu_capture, "tpu_rates_memory": tpu_memory_capture}
