"""%%tfprof into a full disk and a read-only filesystem; run by test_capture.py in its own
mount namespace (isolation.py), where it mounts two small tmpfs of its own.

    python isolated_disk.py WORKDIR

Prints one JSON line: for each case the error shown, whether the cell ran, and what was
left on the filesystem.
"""

import ctypes
import json
import os
import sys

MS_RDONLY = 1


def mount_tmpfs(target: str, size: str, flags: int = 0) -> None:
    os.makedirs(target, exist_ok=True)
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.mount(b"tmpfs", target.encode(), b"tmpfs", flags, f"size={size}".encode()) != 0:
        raise OSError(ctypes.get_errno(), f"mount tmpfs on {target}")


def listing(root: str) -> list[str]:
    return sorted(
        os.path.relpath(os.path.join(d, n), root)
        for d, dirs, files in os.walk(root)
        for n in dirs + files
    )


def main() -> None:
    workdir = sys.argv[1]
    full, ro = os.path.join(workdir, "full"), os.path.join(workdir, "ro")
    mount_tmpfs(full, "256k")
    mount_tmpfs(ro, "256k", MS_RDONLY)
    os.chdir(workdir)
    from IPython.testing.globalipapp import start_ipython

    import tfprof_widgets as tw
    from tfprof_widgets.capturing import rundir

    ip = start_ipython()
    ip.run_line_magic("load_ext", "tfprof_widgets")
    ip.run_cell("import tensorflow as tf\nran = []")
    busy_cell = "ran.append(1)\nfor _ in range(3000):\n    tf.add(tf.ones(2), 1.0)\n"
    out = {}

    def attempt(case: str, logdir: str) -> None:
        ip.user_ns["ran"].clear()
        try:
            ip.run_cell_magic("tfprof", f"--logdir {logdir} --no-display", busy_cell)
            out[case] = {"error": None}
        except (tw.ProfileError, tw.CaptureError) as exc:
            out[case] = {
                "error": type(exc).__name__,
                "message": str(exc),
                "rendered": exc._render_traceback_(),
            }
        out[case]["cell_ran"] = bool(ip.user_ns["ran"])
        out[case]["left"] = listing(logdir) if os.path.isdir(logdir) else None

    attempt("read_only", ro)
    attempt("too_little_space", full)
    # Let the capture start on a disk that then fills up while TF saves it.
    rundir.MIN_FREE_BYTES = 0
    attempt("disk_fills", full)
    rundir.MIN_FREE_BYTES = 64 * 2**20
    attempt("afterwards", os.path.join(workdir, "ok"))
    print(json.dumps(out))


if __name__ == "__main__":
    main()
