"""The capture file formats we read: their names, how a file's kind is told, and its host.

Every reader and the directory discovery use these definitions, so a file is recognised, and
its host named, the same way everywhere:

* ``<host>.xplane.pb``: an XSpace (TF 2.x, TSL, XProf, JAX profilers);
* ``<host>.trace.json(.gz)`` (or any ``.json``/``.json.gz`` given directly): Chrome trace
  events, the legacy TF profiler's output and what other tools export;
* ``<name>.tfprof`` or ProfileContext's ``profile_<step>``: a TF1 tfprof ``ProfileProto``;
* ``<name>.run_metadata.pb`` / ``.runmeta`` (or a ``.pb`` that sniffs as one): a TF1
  ``RunMetadata``. Several RunMetadata files in one run are the steps of one session, and
  load as one host, :data:`RUN_METADATA_HOST`.
"""

from __future__ import annotations

import os
import re

from ..errors import WrongFormatError
from .text import name_as_text

__all__ = [
    "CAPTURE_SUFFIXES",
    "JSON_SUFFIXES",
    "RUN_METADATA_HOST",
    "RUN_METADATA_SUFFIXES",
    "TFPROF_SUFFIX",
    "TRACE_SUFFIXES",
    "XPLANE_SUFFIX",
    "file_kind",
    "host_of",
    "host_sources",
    "is_capture_file",
    "is_tfprof_name",
    "sniff_run_metadata",
]

XPLANE_SUFFIX = ".xplane.pb"
# Chrome traces as a profiler names them (what discovery finds in a run directory).
TRACE_SUFFIXES = (".trace.json.gz", ".trace.json")
# Any JSON given directly is read as a Chrome trace.
JSON_SUFFIXES = (".json.gz", ".json")
TFPROF_SUFFIX = ".tfprof"
RUN_METADATA_SUFFIXES = (".run_metadata.pb", ".runmeta")
# What discovery counts as a capture file in a directory.
CAPTURE_SUFFIXES = (XPLANE_SUFFIX, *TRACE_SUFFIXES, TFPROF_SUFFIX, *RUN_METADATA_SUFFIXES)
# The host of a run's RunMetadata files, which are the steps of one session.
RUN_METADATA_HOST = "localhost"

# ProfileContext writes <dir>/profile_<step>.
_PROFILE_CONTEXT_NAME = re.compile(r"^profile_\d+$")
# Stripped from a file name to name its host, longest first.
_HOST_SUFFIXES = tuple(sorted({*CAPTURE_SUFFIXES, *JSON_SUFFIXES, ".pb"}, key=len, reverse=True))


def is_tfprof_name(name: str) -> bool:
    """A tfprof profile's file name: ``*.tfprof`` or ProfileContext's ``profile_<step>``."""
    return name.endswith(TFPROF_SUFFIX) or bool(_PROFILE_CONTEXT_NAME.match(name))


def is_capture_file(name: str) -> bool:
    """Whether discovery counts a directory entry of this name as a capture file."""
    return name.endswith(CAPTURE_SUFFIXES) or is_tfprof_name(name)


def host_of(path: str) -> str:
    """The host a capture file belongs to: its name without the format's suffix.

    ``worker-0.xplane.pb``, ``worker-0.trace.json.gz``, ``worker-0.json``, ``worker-0.tfprof``
    and ``worker-0.run_metadata.pb`` are all host ``worker-0`` (a name that is nothing but a
    suffix keeps it whole).
    """
    base = name_as_text(os.path.basename(path))  # undecodable bytes become U+FFFD
    for suffix in _HOST_SUFFIXES:
        if base.endswith(suffix) and len(base) > len(suffix):
            return base[: -len(suffix)]
    return base


def _natural_key(path: str) -> list:
    """Sort key that puts run_metadata_2 before run_metadata_10."""
    return [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", os.path.basename(path))]


def host_sources(files: list[str] | tuple[str, ...]) -> list[tuple[str, list[str]]]:
    """Each host of a run with the files it is read from, in the order they load.

    One file per host, except RunMetadata: several RunMetadata files are the steps of one
    session, read together (in natural order, step_2 before step_10) as the host
    :data:`RUN_METADATA_HOST`, which comes first.
    """
    steps = [f for f in files if f.endswith(RUN_METADATA_SUFFIXES)]
    if len(steps) < 2:
        return [(host_of(f), [f]) for f in files]
    rest = [(host_of(f), [f]) for f in files if f not in steps]
    return [(RUN_METADATA_HOST, sorted(steps, key=_natural_key)), *rest]


def sniff_run_metadata(head: bytes) -> bool:
    """RunMetadata starts step_stats(1) > dev_stats(1) > device(1): three length-delimited
    field-1 tags in a row, where an XSpace's plane starts with an id or name field."""
    i = 0
    for _ in range(3):
        if i >= len(head) or head[i] != 0x0A:
            return False
        i += 1
        while i < len(head) and head[i] & 0x80:
            i += 1
        i += 1
    return True


def file_kind(path: str, head: bytes) -> str:
    """'xspace', 'chrome', 'tfprof' (ProfileProto) or 'run_metadata' for a file, by its name,
    else by its first bytes (``head``, 16 are enough)."""
    base = os.path.basename(path)
    if base.endswith(XPLANE_SUFFIX):
        return "xspace"
    if is_tfprof_name(base):
        return "tfprof"
    if base.endswith(RUN_METADATA_SUFFIXES):
        return "run_metadata"
    if base.endswith(".pb"):
        return "run_metadata" if sniff_run_metadata(head) else "xspace"
    if base.endswith(JSON_SUFFIXES):
        return "chrome"
    if head[:2] == b"\x1f\x8b" or head.lstrip()[:1] in (b"{", b"["):
        return "chrome"
    if head[:1] == b"\x0a":  # field 1 (planes), length-delimited: how every XSpace starts
        return "xspace"
    raise WrongFormatError(
        path,
        "not a profile: expected a .xplane.pb capture, a Chrome .trace.json(.gz), a "
        "tfprof profile (.tfprof) or a RunMetadata (.run_metadata.pb); the file's name "
        "and first bytes match none of them",
    )
