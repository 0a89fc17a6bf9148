"""Protobuf's wire format where a few bytes are read without a generated message: a file's
first fields when sniffing its format, XLA's ``memory_access_breakdown`` stat, and the
replica groups our trimmed HLO proto leaves out (:mod:`..frameworks.xla.collectives`)."""


def varint(buf: bytes, i: int) -> tuple[int, int]:
    """A protobuf varint at ``buf[i:]``: (value, position after it). ValueError where the
    bytes end inside it or it runs past 64 bits."""
    value = shift = 0
    while True:
        if i >= len(buf) or shift > 63:
            raise ValueError("truncated varint")
        b = buf[i]
        value |= (b & 0x7F) << shift
        i += 1
        if not b & 0x80:
            return value, i
        shift += 7


def fields(buf: bytes) -> dict[int, list]:
    """A message's fields: number -> values in order (varints as int, length-delimited and
    fixed-width ones as bytes). ValueError where the bytes end inside a field or a wire type
    is none of those (groups)."""
    out: dict[int, list] = {}
    i = 0
    while i < len(buf):
        key, i = varint(buf, i)
        number, kind = key >> 3, key & 7
        if kind == 0:
            value, i = varint(buf, i)
        elif kind in (1, 2, 5):
            if kind == 2:
                size, i = varint(buf, i)
            else:
                size = 8 if kind == 1 else 4
            if i + size > len(buf):
                raise ValueError("truncated field")
            value, i = buf[i : i + size], i + size
        else:
            raise ValueError(f"wire type {kind}")
        out.setdefault(number, []).append(value)
    return out
