"""How much memory a load may use, and how much a capture file will need.

Kept apart from the readers' parsing so that both ``load()`` (which refuses a capture up
front) and the Chrome-trace reader (which bounds a gzip stream while inflating it) use the
same figures.
"""

from __future__ import annotations

from .formats import JSON_SUFFIXES

__all__ = ["MEMORY_PER_FILE_BYTE", "available_memory_bytes", "fmt_bytes", "estimated_need"]

# Peak memory of a load, per byte of capture file: ~12x measured on a 30 MB, 1 M-event
# capture (benchmarks/bench_load.py); Chrome JSON needs about as much again for its parse
# (per byte of JSON text, after any gunzip).
MEMORY_PER_FILE_BYTE = {"xspace": 12.0, "chrome": 25.0}


def available_memory_bytes() -> int | None:
    """MemAvailable from /proc/meminfo (Linux), else None (the check is then skipped)."""
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        return None
    return None


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
