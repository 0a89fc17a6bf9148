"""What the hostile-input benchmarks (benchmarks/bench_hostile*.py) share: the peak resident
memory of this process (Linux: the high-water mark, reset through /proc/self/clear_refs before
each case, so C allocations count too), the goals every case is held to, and the small
builders and probes several of them use."""

from __future__ import annotations

import os
import pathlib
import sys
import zlib

ROOT = pathlib.Path(__file__).resolve().parents[1]
# This checkout, the tests' helpers (tests/support) and the hostile-input tests whose cases the
# benchmarks run at sizes a unit test cannot afford (tests/hostile, which import tests/readers').
TESTS = [ROOT / "tests" / d for d in ("support", "hostile", "readers", "")]
sys.path[:0] = [str(ROOT), *map(str, TESTS)]
from xspace_builder import XSpaceBuilder  # noqa: E402


def rss_kb(field: str) -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise RuntimeError(field)


def reset_peak() -> None:
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")


GOAL_PEAK_MB, GOAL_SECS = 1536, 10.0


def _gzip_stream(head: bytes, body: bytes, times: int, tail: bytes) -> bytes:
    comp = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    parts = [comp.compress(head)]
    parts += [comp.compress(body) for _ in range(times)]
    return b"".join(parts) + comp.compress(tail) + comp.flush()


def _tree(root: pathlib.Path) -> dict[str, tuple[int, int]]:
    out = {}
    for p in root.rglob("*"):
        st = p.lstat()
        out[str(p.relative_to(root))] = (st.st_size, st.st_mtime_ns)
    return out


def _cli(*argv) -> str:
    import contextlib
    import io

    from tfprof_widgets import cli

    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        code = cli.main([str(a) for a in argv])
    lines = err.getvalue().splitlines()
    return f"exit {code}" + (f", {len(lines)} line(s): {lines[0][:60]}" if lines else "")


def capture(d, host, name=None, events=5):
    b = XSpaceBuilder(host)
    line = b.plane("/host:CPU", 1).line("l", 1)
    for i in range(events):
        line.event("op", i * 100, 50)
    d.mkdir(parents=True, exist_ok=True)
    name = name or f"{host}.xplane.pb"
    path = os.path.join(os.fsencode(d), name if isinstance(name, bytes) else name.encode())
    with open(path, "wb") as f:
        f.write(b.bytes())


def shutil_rmtree(d: pathlib.Path) -> None:
    import shutil

    for p in d.rglob("*"):
        if p.is_symlink():
            p.unlink()
    shutil.rmtree(os.fsencode(d), ignore_errors=True)
