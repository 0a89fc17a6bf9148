"""Run a Python script in its own network namespace (only loopback, up) for capture tests.

TensorFlow's profiler server binds every interface (``[::]:port``), so tests that start one
run it in a namespace where the only interface is 127.0.0.1: nothing outside can reach it,
and the test's processes (client and profiled programs) share that namespace. ``mount=True``
adds a private mount namespace, for tests that mount a tiny tmpfs to fill a disk.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest

# Brings loopback up from inside the namespace without needing iproute2.
_LOOPBACK_UP = r"""
import fcntl, socket, struct
_s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
_req = struct.pack('16sH', b'lo', 0)
_flags = struct.unpack('16sH', fcntl.ioctl(_s, 0x8913, _req)[:18])[1]   # SIOCGIFFLAGS
fcntl.ioctl(_s, 0x8914, struct.pack('16sH', b'lo', _flags | 1))          # SIOCSIFFLAGS, IFF_UP
_s.close()
"""


def _unshare_works(flags: str) -> bool:
    exe = shutil.which("unshare")
    if exe is None:
        return False
    probe = subprocess.run([exe, flags, "true"], capture_output=True, timeout=30)
    return probe.returncode == 0


def run_isolated(
    script: str,
    args: list[str],
    *,
    mount: bool = False,
    timeout: int = 300,
    env: dict[str, str] | None = None,
) -> dict:
    """Run ``script`` (a path) in fresh namespaces; it must print one JSON line last."""
    flags = "-rnm" if mount else "-rn"
    if not _unshare_works(flags):
        pytest.skip(
            f"`unshare {flags}` is not permitted here: cannot keep the TF profiler "
            "server off the network"
        )
    code = (
        _LOOPBACK_UP + f"\nimport runpy, sys\nsys.argv = {[script, *args]!r}\n"
        f"runpy.run_path({script!r}, run_name='__main__')\n"
    )
    proc = subprocess.run(
        [shutil.which("unshare"), flags, sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "2", **(env or {})},
    )
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("{")]
    if proc.returncode != 0 or not lines:
        raise AssertionError(
            f"isolated script failed (rc {proc.returncode}):\n"
            f"{proc.stdout[-3000:]}\n{proc.stderr[-5000:]}"
        )
    return json.loads(lines[-1])
