"""Chrome trace type-confusion campaign: N traces with wrong JSON types
(tests/support/chrome_confusion.py).

    python benchmarks/fuzz_chrome.py [--traces 3000] [--seed 0]
    python benchmarks/fuzz_chrome.py --agree [--traces 3000] [--seed 0]

Each trace is loaded and, when it loads, its analyses computed. Prints how many loaded, how
many raised a ProfileError naming the file, and every other exception (a "bare" one: the
goal is 0), with the seed that reproduces it, plus the slowest case's seconds.

``--agree``: the C Chrome decoder against the msgspec path (tests/support/chrome_agreement.py) on N
seeds, each giving a generated edge-case trace, a type-confused trace and a byte mutation:
counts of what the C decoder did (decoded and loaded, decoded and both raised the same
error, gave up), and every disagreement (the goal is 0) with its seed.
"""

from __future__ import annotations

import argparse
import collections
import pathlib
import random
import sys
import tempfile
import time
import traceback

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "support"))

from chrome_agreement import Edges, check, mutate  # noqa: E402
from chrome_confusion import confused_trace  # noqa: E402

import tfprof_widgets as tw  # noqa: E402

ANALYSES = ("steps", "ops", "kernels", "memory", "overview_summary", "input_pipeline")


def agree(traces: int, seed0: int) -> int:
    """The C decoder against the msgspec path; 1 when any input makes them disagree."""
    import gzip

    small = gzip.decompress((ROOT / "tests/data/chrome/GPU_timeline_01.json.gz").read_bytes())
    kinds: collections.Counter = collections.Counter()
    failures = []
    for seed in range(seed0, seed0 + traces):
        rng = random.Random(seed)
        for what, data in (
            ("edges", Edges(rng).trace()),
            ("confused", confused_trace(rng)),
            ("mutation", mutate(rng, rng.choice([small, confused_trace(rng), Edges(rng).trace()]))),
        ):
            try:
                kinds[f"{what}: {check(data)}"] += 1
            except AssertionError as exc:
                kinds[f"{what}: DISAGREE"] += 1
                failures.append((seed, what, str(exc)[:500]))
    print(f"C decoder vs msgspec path on {3 * traces} inputs (seeds {seed0}..{seed0 + traces - 1})")
    for k, v in sorted(kinds.items()):
        print(f"  {k:32s} {v:6d}")
    for seed, what, msg in failures[:20]:
        print(f"\nseed {seed} ({what}): {msg}")
    return 1 if failures else 0


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--traces", type=int, default=3000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--agree", action="store_true", help="C decoder vs msgspec path")
    a = ap.parse_args()
    if a.agree:
        return agree(a.traces, a.seed)
    outcomes: collections.Counter = collections.Counter()
    bare = []
    slowest = (0.0, None)
    with tempfile.TemporaryDirectory() as tmp:
        path = pathlib.Path(tmp) / "h.trace.json"
        for seed in range(a.seed, a.seed + a.traces):
            path.write_bytes(confused_trace(random.Random(seed)))
            t = time.perf_counter()
            try:
                run = tw.load(path, progress=False)
                for name in ANALYSES:
                    getattr(run, name)
                outcomes["loaded"] += 1
            except tw.ProfileError as exc:
                named = str(path) in str(exc)
                outcomes["ProfileError naming the file" if named else "ProfileError, no path"] += 1
            except Exception as exc:  # noqa: BLE001 - what this campaign looks for
                outcomes["bare exception"] += 1
                bare.append((seed, f"{type(exc).__name__}: {exc}", traceback.format_exc(limit=-2)))
            dt = time.perf_counter() - t
            if dt > slowest[0]:
                slowest = (dt, seed)
    print(f"{a.traces} type-confused Chrome traces (seeds {a.seed}..{a.seed + a.traces - 1})")
    for k, v in sorted(outcomes.items()):
        print(f"  {k:32s} {v:6d}")
    print(f"  slowest: {slowest[0]:.3f} s (seed {slowest[1]})")
    for seed, msg, tb in bare[:20]:
        print(f"\nseed {seed}: {msg}\n{tb}")
    return 1 if bare or outcomes["ProfileError, no path"] else 0


if __name__ == "__main__":
    sys.exit(main())
