"""A large real TF 2.21 CPU capture for the speed benchmarks, made here on first use.

    python benchmarks/cpu_capture.py [--duration-ms 620]

The bundled samples are small (custom_loop: ~100k events); the speed goals are about captures
of the size users profile. This runs ``sample_profiles/make_samples.py``'s custom loop (host
tracer level 3 and the Python tracer, through a profiler server in the process) for a longer
window (400 ms gave 300-350k events and 8-9 MB here), like the 57-step, 318k-event capture of
``shared/reference/tf-2.21-capture-facts.md``. The capture is kept in the user's cache
directory and reused; it needs tensorflow-cpu (the ``dev`` extra).
"""

from __future__ import annotations

import argparse
import os
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]
DEFAULT_DURATION_MS = 400


def cache_dir() -> pathlib.Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return pathlib.Path(base) / "tfprof_widgets" / "benchmarks"


def large_cpu_capture(duration_ms: int = DEFAULT_DURATION_MS) -> pathlib.Path:
    """The .xplane.pb of a custom-loop capture of ``duration_ms``, made once and kept."""
    target = cache_dir() / f"custom_loop_{duration_ms}ms"
    found = sorted(target.rglob("*.xplane.pb"))
    if not found:
        sys.path.insert(0, str(ROOT / "sample_profiles"))
        import make_samples

        target.parent.mkdir(parents=True, exist_ok=True)
        make_samples.make("custom_loop", target, duration_ms)
        found = sorted(target.rglob("*.xplane.pb"))
    return found[0]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--duration-ms", type=int, default=DEFAULT_DURATION_MS)
    print(large_cpu_capture(ap.parse_args().duration_ms))


if __name__ == "__main__":
    main()
