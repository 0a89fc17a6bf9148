"""Text that Python can hold but UTF-8 cannot: lone UTF-16 surrogates, from JSON or a file name.

JSON may spell a lone surrogate (``"\\ud800"`` is valid JSON) and Python keeps a file name's
undecodable bytes as lone surrogates (``\\udcff``). Neither is text: pandas' Arrow strings,
a report, a CSV or a widget cannot store or write it. The readers replace each with U+FFFD,
as a UTF-8 decoder shows a byte it cannot decode.
"""

from __future__ import annotations

import os
import re

__all__ = ["json_without_lone_surrogates", "name_as_text"]

# An escape \uXXXX preceded by an even number of backslashes (so it is an escape, not
# literal text), that is a high surrogate with its low one (a valid pair, kept), a lone
# high surrogate or a lone low surrogate (both replaced).
_SURROGATE_ESCAPE = re.compile(
    rb"(?<!\\)((?:\\\\)*)\\u(?:([dD][89abAB][0-9a-fA-F]{2})(\\u[dD][c-fC-F][0-9a-fA-F]{2})?"
    rb"|[dD][c-fC-F][0-9a-fA-F]{2})"
)


def _replace(m: re.Match) -> bytes:
    if m.group(3):  # a high and a low surrogate: one character, fine
        return m.group(0)
    return m.group(1) + rb"\ufffd"


def json_without_lone_surrogates(data: bytes) -> bytes:
    """JSON text with each lone surrogate escape made ``\\ufffd``; other bytes untouched."""
    if b"\\ud" not in data and b"\\uD" not in data:  # a fast scan first: the common case
        return data
    return _SURROGATE_ESCAPE.sub(_replace, data)


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
