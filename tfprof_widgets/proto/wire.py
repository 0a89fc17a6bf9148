"""Protobuf's wire format where a few bytes are read without a generated message: a file's
first fields when sniffing its format, and XLA's ``memory_access_breakdown`` stat."""


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
