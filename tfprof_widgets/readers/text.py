"""Text that Python can hold but UTF-8 cannot: lone UTF-16 surrogates, from JSON or a file name.

JSON may spell a lone surrogate (``"\\ud800"`` is valid JSON) and Python keeps a file name's
undecodable bytes as lone surrogates (``\\udcff``). Neither is text: pandas' Arrow strings,
a report, a CSV or a widget cannot store or write it. The readers replace each with U+FFFD,
as a UTF-8 decoder shows a byte it cannot decode.
"""

from __future__ import annotations

import os
import re

# Kept with the schema (the analyses cut names too); the readers cut at load.
from ..schema import ELLIPSIS, MAX_NAME_CHARS, cut_text

__all__ = [
    "ELLIPSIS",
    "MAX_NAME_CHARS",
    "cut_text",
    "json_without_lone_surrogates",
    "name_as_text",
]

# Whether a JSON text holds a surrogate escape at all (a scan for a literal: fast).
_SURROGATE_HINT = re.compile(rb"\\u[dD][89a-fA-F]")
_HIGH = rb"\\u[dD][89abAB][0-9a-fA-F]{2}"
_LOW = rb"\\u[dD][c-fC-F][0-9a-fA-F]{2}"
# A high surrogate escape not followed by a low one, or a low one not after a high one
# (both begin with the literal "\\u", which the regex engine scans for quickly).
_LONE = re.compile(
    rb"\\u[dD](?:[89abAB][0-9a-fA-F]{2}(?!"
    + _LOW
    + rb")|[c-fC-F][0-9a-fA-F]{2}(?<!"
    + _HIGH
    + _LOW
    + rb"))"
)
# Stands in for an escaped backslash while the escapes are looked at: "\\ud800" is text,
# not an escape. A JSON text cannot hold a raw NUL, so nothing real is mistaken for it.
_MASK = b"\x00\x01"


def json_without_lone_surrogates(data: bytes) -> bytes:
    """JSON text with each lone surrogate escape made ``\\ufffd``; other bytes untouched."""
    if _SURROGATE_HINT.search(data) is None or b"\x00" in data:  # nothing to do (or not JSON)
        return data
    masked = data.replace(b"\\\\", _MASK)  # pairs from the left, as JSON reads them
    return _LONE.sub(rb"\\ufffd", masked).replace(_MASK, b"\\\\")


def name_as_text(name: str) -> str:
    """A file name as text: its bytes that are not UTF-8 become U+FFFD."""
    try:
        name.encode("utf-8")
        return name
    except UnicodeEncodeError:
        pass
    try:  # the bytes os.listdir() could not decode, back as bytes
        return os.fsencode(name).decode("utf-8", "replace")
    except UnicodeEncodeError:  # a surrogate that no file system byte stands for
        return re.sub("[\ud800-\udfff]", "\ufffd", name)
