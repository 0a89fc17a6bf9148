"""The capture file formats we read: their names, how a file's kind is told, and its host.

Every reader and the directory discovery use these definitions, so a file is recognised, and
its host named, the same way everywhere:

* ``<host>.xplane.pb``: an XSpace (TF 2.x, TSL, XProf, JAX profilers);
* ``<host>.trace.json(.gz)`` (or any ``.json``/``.json.gz`` given directly): Chrome trace
  events, the legacy TF profiler's output and what other tools export;
* ``<name>.tfprof`` or ProfileContext's ``profile_<step>``: a TF1 tfprof ``ProfileProto``;
* ``<name>.run_metadata.pb`` / ``.runmeta`` (or a ``.pb`` that sniffs as one): a TF1
  ``RunMetadata``. Several RunMetadata files in one run are the steps of one session, and
  load as one host, :data:`RUN_METADATA_HOST`;
* ``<host>.trace``: a ``Trace`` of trace_events.proto, what TF 2.0/2.1 wrote as
  ``plugins/profile/<run>/local.trace`` (and the 2019 Cloud TPU profiler as ``<host>.trace``);
* tool data (:data:`TOOL_DATA_SUFFIXES`): the outputs of TensorBoard's Profile tools that TF
  2.2-2.10 wrote into every run directory (``<host>.overview_page.pb``,
  ``.input_pipeline.pb``, ``.tensorflow_stats.pb``, ``.kernel_stats.pb``,
  ``.memory_profile.json.gz``) and the 2019 Cloud TPU profiler's Google DataTable JSON
  (``.overview_page.json``, ``.input_pipeline.json``) and ``.pod_viewer.json``. They hold
  TensorBoard's numbers, not a trace: a run made only of them has tables but no events.

Files that are not profiles are named for what they are (:func:`describe_foreign`): an events
file, a checkpoint, a SavedModel, an image, a profile tool's output we do not read...
"""

from __future__ import annotations

import functools
import os
import re

from ..errors import WrongFormatError
from ..proto.wire import varint as _varint
from .ranks import rank_host, trace_rank
from .text import name_as_text

__all__ = [
    "CAPTURE_SUFFIXES",
    "TOOL_DATA_SUFFIXES",
    "TRACE_PROTO_SUFFIX",
    "UNREAD_TOOL_SUFFIXES",
    "describe_foreign",
    "file_format",
    "is_tool_data_name",
    "tool_of",
    "JSON_SUFFIXES",
    "RUN_METADATA_HOST",
    "RUN_METADATA_SUFFIXES",
    "TFPROF_SUFFIX",
    "TRACE_SUFFIXES",
    "XPLANE_SUFFIX",
    "capture_hosts",
    "file_kind",
    "host_of",
    "host_sources",
    "is_capture_file",
    "is_tfprof_name",
    "sniff_run_metadata",
    "xspace_hostnames",
]

XPLANE_SUFFIX = ".xplane.pb"
# Chrome traces as a profiler names them (what discovery finds in a run directory).
TRACE_SUFFIXES = (".trace.json.gz", ".trace.json")
# Any JSON given directly is read as a Chrome trace.
JSON_SUFFIXES = (".json.gz", ".json")
TFPROF_SUFFIX = ".tfprof"
RUN_METADATA_SUFFIXES = (".run_metadata.pb", ".runmeta")
# TF 2.0/2.1's trace viewer data: a Trace protobuf (trace_events.proto).
TRACE_PROTO_SUFFIX = ".trace"
# What discovery counts as a capture file (a trace) in a directory.
CAPTURE_SUFFIXES = (
    XPLANE_SUFFIX,
    *TRACE_SUFFIXES,
    TFPROF_SUFFIX,
    *RUN_METADATA_SUFFIXES,
    TRACE_PROTO_SUFFIX,
)
# TensorBoard's Profile-tool outputs that we read: suffix -> (tool, encoding). "pb" is the
# tool's protobuf message, "json" its proto3 JSON, "datatable" a list of Google DataTables
# (the 2019 Cloud TPU profiler). Names as the profile plugin's file regex has them: the host
# is everything before the suffix and may hold dots (10.240.1.50.overview_page.json).
TOOL_DATA_SUFFIXES: dict[str, tuple[str, str]] = {
    ".overview_page.pb": ("overview_page", "pb"),
    ".input_pipeline.pb": ("input_pipeline", "pb"),
    ".tensorflow_stats.pb": ("tensorflow_stats", "pb"),
    ".kernel_stats.pb": ("kernel_stats", "pb"),
    ".memory_profile.json.gz": ("memory_profile", "json"),
    ".memory_profile.json": ("memory_profile", "json"),
    ".pod_viewer.json": ("pod_viewer", "json"),
    ".overview_page.json": ("overview_page", "datatable"),
    ".input_pipeline.json": ("input_pipeline", "datatable"),
}
# Files of a profile run that we recognise but do not read: suffix -> what they are.
UNREAD_TOOL_SUFFIXES: dict[str, str] = {
    ".op_profile.json": "TensorBoard's op-profile tool output (TPU/XLA op profile)",
    ".memory_viewer.json": "TensorBoard's memory-viewer tool output (XLA buffer assignment)",
    ".tf_data_bottleneck_analysis.json": (
        "TensorBoard's tf.data bottleneck tool output (run.tf_data_bottleneck computes it "
        "from a trace)"
    ),
    ".tracetable": "a Cloud TPU streaming trace table",
}
# The host of a run's RunMetadata files, which are the steps of one session.
RUN_METADATA_HOST = "localhost"

# ProfileContext writes <dir>/profile_<step>.
_PROFILE_CONTEXT_NAME = re.compile(r"^profile_\d+$")
# Stripped from a file name to name its host, longest first.
_HOST_SUFFIXES = tuple(
    sorted(
        {*CAPTURE_SUFFIXES, *TOOL_DATA_SUFFIXES, *UNREAD_TOOL_SUFFIXES, *JSON_SUFFIXES, ".pb"},
        key=len,
        reverse=True,
    )
)
_TOOL_SUFFIXES_LONGEST_FIRST = sorted(TOOL_DATA_SUFFIXES, key=len, reverse=True)


def is_tfprof_name(name: str) -> bool:
    """A tfprof profile's file name: ``*.tfprof`` or ProfileContext's ``profile_<step>``."""
    return name.endswith(TFPROF_SUFFIX) or bool(_PROFILE_CONTEXT_NAME.match(name))


def is_capture_file(name: str) -> bool:
    """Whether discovery counts a directory entry of this name as a capture file (a trace)."""
    return name.endswith(CAPTURE_SUFFIXES) or is_tfprof_name(name)


def tool_of(name: str) -> tuple[str, str] | None:
    """(tool, encoding) of a tool-data file name (see :data:`TOOL_DATA_SUFFIXES`), else None."""
    base = os.path.basename(name)
    for suffix in _TOOL_SUFFIXES_LONGEST_FIRST:
        if base.endswith(suffix) and len(base) > len(suffix):
            return TOOL_DATA_SUFFIXES[suffix]
    return None


def is_tool_data_name(name: str) -> bool:
    """Whether a file name is one of the tool-data files we read."""
    return tool_of(name) is not None


def file_format(name: str) -> str | None:
    """What a run-directory entry holds, as ``list_runs`` shows it: 'xplane',
    'trace.json.gz', 'trace.json', 'trace' (TF 2.0/2.1 Trace), 'tfprof', 'run_metadata', a
    tool ('overview_page', 'tensorflow_stats'...; '(json)' for the DataTable form), a tool we
    do not read ('op_profile (not read)'), or None for anything else."""
    base = os.path.basename(name)
    tool = tool_of(base)
    if tool is not None:
        return tool[0] + (" (json)" if tool[1] == "datatable" else "")
    for suffix, fmt in (
        (XPLANE_SUFFIX, "xplane"),
        (".trace.json.gz", "trace.json.gz"),
        (".trace.json", "trace.json"),
        (TRACE_PROTO_SUFFIX, "trace"),
        (TFPROF_SUFFIX, "tfprof"),
    ):
        if base.endswith(suffix):
            return fmt
    if base.endswith(RUN_METADATA_SUFFIXES):
        return "run_metadata"
    if is_tfprof_name(base):
        return "tfprof"
    for suffix in UNREAD_TOOL_SUFFIXES:
        if base.endswith(suffix):
            return suffix.lstrip(".").removesuffix(".json") + " (not read)"
    return None


def xspace_hostnames(path: str) -> list[str]:
    """The ``hostnames`` an XSpace file records (field 4 of the message), read by stepping
    over its other top-level fields without decoding them (a few reads, even for a large
    file); [] when the file has none or cannot be read that way (the reader then says what
    is wrong with it). Kept per (path, size, mtime): a run's host names are asked for again
    by every host of it that is loaded or converted on its own."""
    try:
        st = os.stat(path)
    except OSError:
        return []
    return list(_hostnames(path, st.st_size, st.st_mtime_ns))


@functools.lru_cache(maxsize=8192)
def _hostnames(path: str, size: int, mtime_ns: int) -> tuple[str, ...]:
    names: list[str] = []
    try:
        with open(path, "rb") as f:
            size = os.fstat(f.fileno()).st_size
            pos = 0
            for _ in range(_MAX_TOP_LEVEL_FIELDS):
                if pos >= size:
                    return tuple(names)
                f.seek(pos)
                head = f.read(20)
                tag, i = _varint(head, 0)
                field, wire = tag >> 3, tag & 7
                if wire == 2:
                    length, i = _varint(head, i)
                    if field == 4 and length <= _MAX_HOSTNAME:
                        f.seek(pos + i)
                        names.append(f.read(length).decode("utf-8"))
                    pos += i + length
                elif wire == 0:
                    pos += _varint(head, i)[1]
                elif wire in (1, 5):
                    pos += i + (8 if wire == 1 else 4)
                else:
                    return ()
    except (OSError, ValueError, UnicodeDecodeError):
        return ()
    return tuple(names)


_MAX_TOP_LEVEL_FIELDS = 1_000_000
_MAX_HOSTNAME = 1024


def capture_hosts(files: list[str] | tuple[str, ...]) -> list[str]:
    """The host name of each capture file of a run: the one host an XSpace records in
    ``hostnames`` (what XProf's tools call it), ``rank N`` for a PyTorch trace whose
    ``distributedInfo`` names rank N, else the file name without its suffix (what
    TensorBoard lists). Names that would collide in the run fall back to the file names (a
    rank keeps its name with the file's after it: ``rank 0 (a.pt)``), and those to the whole
    file name."""
    names, ranked = [], []
    for f in files:
        recorded = xspace_hostnames(f) if f.endswith(XPLANE_SUFFIX) else []
        rank = trace_rank(f) if f.endswith(JSON_SUFFIXES) else None
        recorded = [rank_host(rank)] if rank is not None else recorded
        ranked.append(rank is not None)
        names.append(recorded[0] if len(recorded) == 1 and recorded[0] else host_of(f))
    stems = [host_of(f) for f in files]
    taken = {}
    for name in names:
        taken[name] = taken.get(name, 0) + 1
    names = [
        n if taken[n] == 1 and (n == s or n not in stems) else f"{n} ({s})" if r else s
        for n, s, r in zip(names, stems, ranked)
    ]
    return _unique(names, [name_as_text(os.path.basename(f)) for f in files])


def _unique(names: list[str], bases: list[str]) -> list[str]:
    """``names`` with every repeated one replaced by its file's whole name (``w.trace.json``
    next to ``w.trace.json.gz``), numbered if even those repeat: a run's hosts are
    distinct."""
    count: dict[str, int] = {}
    for n in names:
        count[n] = count.get(n, 0) + 1
    out = [n if count[n] == 1 else b for n, b in zip(names, bases)]
    seen: dict[str, int] = {}
    for i, n in enumerate(out):
        seen[n] = seen.get(n, 0) + 1
        if seen[n] > 1:
            out[i] = f"{n} ({seen[n]})"
    return out


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

    Hosts are named by :func:`capture_hosts`. One file per host, except RunMetadata:
    several RunMetadata files are the steps of one session, read together (in natural
    order, step_2 before step_10) as the host :data:`RUN_METADATA_HOST`, which comes first.
    """
    steps = [f for f in files if f.endswith(RUN_METADATA_SUFFIXES)]
    if len(steps) < 2:
        return [(h, [f]) for h, f in zip(capture_hosts(files), files)]
    others = [f for f in files if f not in steps]
    # The steps' host is one more name of the run: another capture named like it (a
    # localhost.trace.json beside the steps) is told apart by its file's whole name.
    names = _unique(
        [RUN_METADATA_HOST, *capture_hosts(others)],
        [RUN_METADATA_HOST, *(name_as_text(os.path.basename(f)) for f in others)],
    )
    rest = [(h, [f]) for h, f in zip(names[1:], others)]
    return [(names[0], sorted(steps, key=_natural_key)), *rest]


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


_CHECKPOINT_DATA = re.compile(r"\.data-\d{5}-of-\d{5}$")
_MAGIC = (
    (b"\x89PNG", "a PNG image"),
    (b"\xff\xd8\xff", "a JPEG image"),
    (b"GIF8", "a GIF image"),
    (b"%PDF", "a PDF document"),
    (b"\x89HDF\r\n\x1a\n", "an HDF5 file (a Keras .h5 model or weights?)"),
    (b"PK\x03\x04", "a zip archive (a .keras model?)"),
    (b"\x7fELF", "a compiled program or library (ELF)"),
)
# How JSON that is not a Chrome trace starts (the writers' first key).
_JSON_HEADS = (
    (b'[{"cols"', "TensorBoard tool output as Google DataTable JSON"),
    (b'{"cols"', "TensorBoard tool output as Google DataTable JSON"),
    (b'{"memoryProfilePerAllocator"', "TensorBoard's memory-profile tool output"),
    (b'{"podStatsSequence"', "TensorBoard's pod-viewer tool output"),
    (b'{"hloInfoMap"', "TensorBoard's pod-viewer tool output"),
)


def describe_foreign(path: str, head: bytes) -> str | None:
    """What a file that is not a profile we read is, by its name and first bytes (``head``,
    64 are enough): the problem to report in a :class:`WrongFormatError`, else None."""
    base = os.path.basename(path)
    if "tfevents" in base:
        return (
            "a TensorBoard events file (summaries), not a profile: profiles are the files "
            "under plugins/profile/<run>/ beside it; load the logdir"
        )
    for suffix, what in UNREAD_TOOL_SUFFIXES.items():
        if base.endswith(suffix):
            return (
                f"{what}, which tfprof_widgets does not read; load its run directory for the "
                "tools it does (trace, overview page, input pipeline, TF stats, kernel stats, "
                "memory profile)"
            )
    if base in ("saved_model.pb", "saved_model.pbtxt", "keras_metadata.pb", "fingerprint.pb"):
        return "part of a TensorFlow SavedModel, not a profile"
    if (
        base == "checkpoint"
        or base.endswith((".index", ".ckpt", ".ckpt.index"))
        or _CHECKPOINT_DATA.search(base)
    ):
        return "a TensorFlow checkpoint file, not a profile"
    for magic, what in _MAGIC:
        if head.startswith(magic):
            return f"{what}, not a profile"
    stripped = head.lstrip()
    for start, what in _JSON_HEADS:
        if stripped.startswith(start):
            return (
                f"{what}, not a trace. Tool outputs are read under TensorBoard's names "
                "(<host>.overview_page.json, <host>.input_pipeline.json, "
                "<host>.pod_viewer.json, <host>.memory_profile.json.gz); this name is "
                "none of them. Load its run directory"
            )
    return None


def file_kind(path: str, head: bytes) -> str:
    """'xspace', 'chrome', 'tfprof' (ProfileProto), 'run_metadata', 'trace_proto' (TF
    2.0/2.1 Trace) or 'tool_data' for a file, by its name, else by its first bytes
    (``head``, 64 are enough). A file that is none of them raises :class:`WrongFormatError`
    saying what it is, where :func:`describe_foreign` can tell."""
    base = os.path.basename(path)
    if is_tool_data_name(base):
        return "tool_data"
    foreign = describe_foreign(path, head)
    if foreign is not None:
        raise WrongFormatError(path, foreign)
    if base.endswith(TRACE_PROTO_SUFFIX):
        return "trace_proto"
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
        "tfprof profile (.tfprof), a RunMetadata (.run_metadata.pb), a TF 2.0/2.1 .trace or "
        "a TensorBoard tool-data file (<host>.overview_page.pb ...); the file's name and "
        "first bytes match none of them",
    )
