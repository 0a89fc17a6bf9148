"""How much memory a load may use, and how much a capture file will need.

Kept apart from the readers' parsing so that both ``load()`` (which refuses a capture up
front) and the Chrome-trace reader (which bounds a gzip stream while inflating it) use the
same figures.
"""

from __future__ import annotations

import contextlib
import contextvars
import zlib

from ..errors import CorruptProfileError, ProfileTooLargeError
from .formats import JSON_SUFFIXES

__all__ = [
    "EVENT_PEAK_BYTES",
    "MEMORY_PER_FILE_BYTE",
    "STAT_PEAK_BYTES",
    "available_memory_bytes",
    "estimated_need",
    "MAX_STAT_TEXT_BYTES",
    "fmt_bytes",
    "inflate_bounded",
    "inflate_prefix",
    "memory_cap",
]

# Peak memory of a load, per byte of capture file, as benchmarks/bench_load.py measures it
# (docs/speed.md), with room; Chrome JSON needs about as much again for its parse (per byte
# of JSON text, after any gunzip).
MEMORY_PER_FILE_BYTE = {"xspace": 12.0, "chrome": 25.0}

# Peak memory of a load per event and per event stat of an XSpace, whatever their size on
# disk (a file of empty events needs far more memory per file byte than the factor above):
# measured on files of bare events and of events with one stat each (docs/speed.md), with
# room; the C walker counts events and stats against the memory there is as it meets them.
EVENT_PEAK_BYTES = 180
STAT_PEAK_BYTES = 60

# The most text one string stat keeps (a compressed stat of a 4.7 MB file can hold 1 GiB):
# the rest is cut, with a warning.
MAX_STAT_TEXT_BYTES = 64 << 20


# The memory a load may use when its caller set one (``load(max_memory_bytes=...)``): every
# bound the readers keep (walker budget, gzip inflation, stat inflation) then follows it.
_CAP: contextvars.ContextVar[int | None] = contextvars.ContextVar("memory_cap", default=None)


def available_memory_bytes() -> int | None:
    """The memory a load may use: MemAvailable from /proc/meminfo (Linux), or less when the
    process is limited (its address-space limit, ``ulimit -v``, less what it maps; its
    cgroup's ``memory.max`` less its use) or the load was given ``max_memory_bytes`` (see
    :func:`memory_cap`); None when none is known (the checks are then skipped)."""
    figures = [_CAP.get(), _meminfo_available(), _address_space_left(), _cgroup_left()]
    known = [f for f in figures if f is not None]
    return max(0, min(known)) if known else None


def _meminfo_available() -> int | None:
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


def _address_space_left() -> int | None:
    """RLIMIT_AS less the process's virtual size: what a ``ulimit -v`` leaves (past it, an
    allocation fails, and some C code then crashes instead of raising)."""
    try:
        import resource

        soft = resource.getrlimit(resource.RLIMIT_AS)[0]
        if soft == resource.RLIM_INFINITY or soft < 0:
            return None
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmSize:"):
                    return soft - int(line.split()[1]) * 1024
    except (ImportError, OSError, ValueError, IndexError):
        pass
    return None


def _cgroup_left() -> int | None:
    """A cgroup memory limit less the group's use (a container's memory): v2's
    ``memory.max``, else v1's ``memory.limit_in_bytes``."""
    try:
        with open("/proc/self/cgroup") as f:
            entries = [ln.rstrip("\n").split(":", 2) for ln in f]
    except OSError:
        return None
    for _, controllers, rel in (e for e in entries if len(e) == 3):
        if controllers == "":
            files = (f"/sys/fs/cgroup{rel.rstrip('/')}", "memory.max", "memory.current")
        elif "memory" in controllers.split(","):
            files = (f"/sys/fs/cgroup/memory{rel.rstrip('/')}", "memory.limit_in_bytes",
                     "memory.usage_in_bytes")  # fmt: skip
        else:
            continue
        try:
            with open(f"{files[0]}/{files[1]}") as f:
                limit = f.read().strip()
            if limit == "max" or int(limit) >= 1 << 60:
                continue
            with open(f"{files[0]}/{files[2]}") as f:
                return int(limit) - int(f.read().strip())
        except (OSError, ValueError):
            continue
    return None


@contextlib.contextmanager
def memory_cap(max_bytes: int | None):
    """Within this block, :func:`available_memory_bytes` is at most ``max_bytes``."""
    token = _CAP.set(max_bytes)
    try:
        yield
    finally:
        _CAP.reset(token)


def fmt_bytes(n: float) -> str:
    for unit in ("B", "KB", "MB", "GB", "TB"):
        if n < 1024 or unit == "TB":
            return f"{n:,.1f} {unit}" if unit != "B" else f"{int(n)} B"
        n /= 1024
    return f"{n:,.1f} TB"


def estimated_need(path: str, size: int) -> float:
    """Bytes of memory that loading this capture file is expected to need at its peak.

    For ``.json.gz`` this counts the compressed size, so it is low; the gzip trailer's size
    field cannot be trusted (a cut or hostile file declares anything), and the inflate
    itself is bounded instead (chrome_trace.decode_json).
    """
    if path.endswith(JSON_SUFFIXES):
        return size * MEMORY_PER_FILE_BYTE["chrome"]
    return size * MEMORY_PER_FILE_BYTE["xspace"]


def inflate_bounded(data: bytes, path: str, limit: int, what: str) -> bytes:
    """Inflate a gzip stream, stopping with :class:`ProfileTooLargeError` as soon as it
    passes ``limit`` bytes.

    A few MB of gzip can expand to many GB (a "zip bomb", or a huge honest trace; the
    trailer's size field cannot be trusted), so the stream is inflated in chunks. ``what``
    names the stream in messages ("JSON", "a compressed string stat").
    """
    out, total = [], 0
    try:
        inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
        pending = data
        # One call for the first 256 MB (most traces: no join to copy them again), then
        # 16 MB at a time, so that a huge stream can still be interrupted.
        step = 1 << 28
        while pending:
            chunk = inflater.decompress(pending, min(step, max(limit - total, 0) + 1))
            step = 1 << 24
            total += len(chunk)
            if total > limit:
                raise ProfileTooLargeError(
                    path,
                    f"{what} expands to more than {fmt_bytes(limit)} (from "
                    f"{fmt_bytes(len(data))} of gzip); decoding that would need more memory "
                    "than is available",
                )
            out.append(chunk)
            pending = inflater.unconsumed_tail
            if inflater.eof:
                break
        if not inflater.eof:
            raise EOFError("compressed stream ended before the end-of-stream marker")
    except (EOFError, OSError, zlib.error) as exc:
        raise CorruptProfileError(path, f"{what} is cut short or damaged ({exc})") from None
    return out[0] if len(out) == 1 else b"".join(out)


def inflate_prefix(data: bytes, path: str, limit: int, what: str) -> tuple[bytes, bool]:
    """The first ``limit`` bytes a gzip stream inflates to, and whether it holds more (then
    the rest is neither inflated nor checked)."""
    try:
        inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
        out = inflater.decompress(data, max(limit, 0) + 1)
        if len(out) > limit:
            return out[:limit], True
        if not inflater.eof:
            raise EOFError("compressed stream ended before the end-of-stream marker")
    except (EOFError, OSError, zlib.error) as exc:
        raise CorruptProfileError(path, f"{what} is cut short or damaged ({exc})") from None
    return out, False
