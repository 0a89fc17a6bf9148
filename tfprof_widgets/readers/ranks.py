"""PyTorch ranks: the rank a Kineto trace's ``distributedInfo`` names, read from the trace's
header before it is loaded, so that a run's hosts are named by rank (``rank 0``, HTA's name)
wherever its host names are listed (:func:`.formats.capture_hosts`). The loaded trace keeps
the whole ``distributedInfo`` (rank, world size, backend) as its host plane's stats
(:func:`.chrome.kineto.distributed_info`)."""

from __future__ import annotations

import functools
import json
import os
import re
import stat
import zlib

__all__ = ["rank_host", "shared_ranks", "trace_rank"]


def rank_host(rank: int) -> str:
    """The host name of a trace whose ``distributedInfo`` names ``rank`` (HTA's "rank N")."""
    return f"rank {rank}"


# Kineto writes distributedInfo in its header, before traceEvents: 8 GPUs' deviceProperties and
# 70 process groups' pg_config come to ~10 KB (eager_b200); a MiB leaves room for many more.
_HEAD_BYTES = 1 << 20
_DIST_KEY = re.compile(r'"distributedInfo"\s*:\s*')
_EVENTS_KEY = '"traceEvents"'


def trace_rank(path: str) -> int | None:
    """The rank a PyTorch (Kineto) trace's ``distributedInfo`` names, read from the file's
    first MiB (inflated, for ``.gz``), where Kineto writes it; None for a trace without one
    (or whose header is not there: it keeps its file's name). Kept per (path, size, mtime):
    a run's host names are asked for again by every host loaded or converted alone."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return _rank(path, st.st_size, st.st_mtime_ns)


@functools.lru_cache(maxsize=8192)
def _rank(path: str, size: int, mtime_ns: int) -> int | None:
    head = _head_text(path)
    end = head.find(_EVENTS_KEY)
    m = _DIST_KEY.search(head, 0, end if end >= 0 else len(head))
    if m is None:
        return None
    try:
        info, _ = json.JSONDecoder().raw_decode(head, m.end())
    except ValueError:
        return None
    rank = info.get("rank") if isinstance(info, dict) else None
    if isinstance(rank, bool) or not isinstance(rank, int) or not 0 <= rank < 2**31:
        return None
    return rank


def _head_text(path: str) -> str:
    """A JSON trace's text up to its ``traceEvents`` key, at most :data:`_HEAD_BYTES` ("" if
    it cannot be read: the reader then says what is wrong with the file)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except (OSError, ValueError):
        return ""
    with os.fdopen(fd, "rb") as f:
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):  # a FIFO or device named like a trace
                return ""
            return _read_head(f).decode("utf-8", "replace")
        except (OSError, zlib.error):
            return ""


def _read_head(f) -> bytes:
    first = f.read(1 << 16)
    if not first.startswith(b"\x1f\x8b"):
        return first + f.read(_HEAD_BYTES - len(first))
    inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
    out, chunk = b"", first
    # In steps of 64 KiB, up to the header's end: a MiB inflated is ~5 ms a file.
    while chunk and len(out) < _HEAD_BYTES and not inflater.eof:
        out += inflater.decompress(chunk, min(1 << 16, _HEAD_BYTES - len(out)))
        if _EVENTS_KEY.encode() in out[-(1 << 16) - len(_EVENTS_KEY) :]:
            break
        if out.lstrip()[:1] == b"[":  # a bare array of events: no header
            break
        chunk = inflater.unconsumed_tail or f.read(1 << 16)
    return out


def shared_ranks(files: list[str]) -> dict[int, list[str]]:
    """The ranks that more than one of ``files`` names in its ``distributedInfo``, each with
    those files (two traces of one rank: a job profiled twice, or files copied together)."""
    by_rank: dict[int, list[str]] = {}
    for f in files:
        rank = trace_rank(f) if f.endswith((".json", ".json.gz")) else None
        if rank is not None:
            by_rank.setdefault(rank, []).append(f)
    return {r: fs for r, fs in by_rank.items() if len(fs) > 1}
