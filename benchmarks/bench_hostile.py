"""Memory and time that damaged and hostile inputs cost the readers, and every hostile-input
table of the benchmarks beside it.

    python benchmarks/bench_hostile.py [--per-kind 200] [--seed 0]
    python benchmarks/bench_hostile.py --round-three-hlo   # issue 37: XLA, TPU, tool data

Runs, in this order, the tables of bench_hostile_xspace.py (issue 20's hand-made inputs),
bench_hostile_dirs.py (issue 30: run directories, pods, outputs), bench_hostile_torch.py and
bench_hostile_hlo.py (issue 37), then its own: it mutates real captures (the keras_fit
sample's .xplane.pb, and a Chrome trace of it, plain and gzipped) in each way the fuzz tests
do, adds hand-made hostile files (length prefixes and counts that claim more than the file
holds, a gzip stream that expands to GBs, deeply nested JSON), loads every one and records,
per input, the outcome (ProfileError subclass or success) and the peak resident memory above
the baseline while loading it (benchmarks/hostile_common.py). Prints one row per damage kind:
inputs, outcomes, slowest load, largest peak, and the largest peak per byte of input file;
last, bench_hostile_writes.py (writes and interrupts). Each of those files also runs alone.

``--torch-only``: only issue 37's PyTorch, correlation and view-name cases (and issue 42's
conversion from a process with threads), one row each (``round_three_torch_table``).
"""

from __future__ import annotations

import argparse
import collections
import gzip
import json
import pathlib
import tempfile
import time
import zlib

import numpy as np
from bench_hostile_dirs import round_two_table
from bench_hostile_hlo import round_three_hlo_table
from bench_hostile_torch import round_three_torch_table
from bench_hostile_writes import writes_and_interrupts
from bench_hostile_xspace import issue_table
from hostile_common import ROOT, reset_peak, rss_kb

import tfprof_widgets as tw


def mutations(data: bytes, rng: np.random.Generator, n: int):
    """(kind, bytes) pairs: the damage kinds of tests/hostile/test_fuzz.py."""
    size = len(data)
    for _ in range(n):
        cut = int(rng.integers(0, size))
        yield "truncate", data[:cut]
        b = bytearray(data)
        for pos in rng.integers(0, size, int(rng.integers(1, 9))):
            b[pos] ^= 1 << int(rng.integers(0, 8))
        yield "bit flips", bytes(b)
        a, c = sorted(rng.integers(0, size, 2))
        yield "splice", data[:a] + data[c:] + data[a:c]
        yield "insert", data[:cut] + rng.bytes(int(rng.integers(1, 64))) + data[cut:]
        yield "zero run", data[:cut] + b"\0" * int(rng.integers(1, 4096)) + data[cut + 4096 :]
        yield "re-encode", data.decode("utf-8", "replace").encode("utf-8")


def crafted(xspace: bytes):
    """Hand-made hostile files: what a fuzzer rarely finds."""
    # An XSpace whose first plane claims a length of 2**62 bytes.
    yield "length > file", b"\x0a" + bytes([0xFF] * 8 + [0x3F]) + xspace[:64]
    # A plane that claims 10**12 events via a huge packed field length inside it.
    yield "length > file", b"\x0a\x10\x1a\x0e\x22\xff\xff\xff\xff\x0f" + b"\0" * 6
    comp = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    bomb = comp.compress(b'{"traceEvents": [')
    bomb += b"".join(comp.compress(b" " * (1 << 24)) for _ in range(256))  # 4 GiB
    yield "gzip bomb", bomb + comp.compress(b"]}") + comp.flush()
    yield "deep JSON", b"[" * 200_000 + b"]" * 200_000
    yield "deep JSON", b'{"traceEvents": ' + b'{"a": ' * 100_000 + b"1" + b"}" * 100_001


def chrome_trace_of(run) -> bytes:
    ev = run.events.dropna(subset=["start_us"]).head(3000)
    return json.dumps(
        {
            "traceEvents": [
                {
                    "ph": "X",
                    "name": str(n),
                    "ts": float(t),
                    "dur": float(d),
                    "pid": 1,
                    "tid": str(ln),
                }
                for n, t, d, ln in zip(ev["name"], ev["start_us"], ev["dur_us"], ev["line"])
            ]
        }
    ).encode()


def _args() -> argparse.Namespace:
    ap = argparse.ArgumentParser()
    ap.add_argument("--per-kind", type=int, default=200)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--writes-only", action="store_true", help="only the writes/interrupts")
    ap.add_argument("--issue-only", action="store_true", help="only the issues' cases")
    ap.add_argument(
        "--round-two-only", action="store_true", help="only issue 30's cases (round two)"
    )
    ap.add_argument(
        "--torch-only", action="store_true", help="only issue 37's PyTorch and view cases"
    )
    ap.add_argument(
        "--round-three-hlo",
        action="store_true",
        help="only issue 37's XLA program, TPU and tool-data cases (round three)",
    )
    return ap.parse_args()


def main() -> None:
    args = _args()
    if args.writes_only:
        return writes_and_interrupts()
    if args.torch_only:
        return round_three_torch_table()
    if args.round_three_hlo:
        return round_three_hlo_table()
    if not args.round_two_only:
        issue_table()
        print()
    round_two_table()
    print()
    round_three_torch_table()
    print()
    round_three_hlo_table()
    print()
    if args.issue_only or args.round_two_only:
        return None

    sample = next((ROOT / "sample_profiles" / "keras_fit").rglob("*.xplane.pb")).read_bytes()
    trace = chrome_trace_of(tw.load(ROOT / "sample_profiles" / "keras_fit"))
    sources = [
        (".xplane.pb", sample),
        (".trace.json", trace),
        (".trace.json.gz", gzip.compress(trace)),
    ]
    rng = np.random.default_rng(args.seed)
    rows = collections.defaultdict(
        lambda: {
            "n": 0,
            "outcomes": collections.Counter(),
            "peak_kb": 0,
            "per_byte": 0.0,
            "secs": 0.0,
        }
    )
    with tempfile.TemporaryDirectory() as tmp:
        inputs = [
            (f"{kind} ({suffix})", suffix, data)
            for suffix, src in sources
            for kind, data in mutations(src, rng, args.per_kind)
        ]
        inputs += [
            (
                kind,
                ".trace.json.gz"
                if kind == "gzip bomb"
                else ".trace.json"
                if "JSON" in kind
                else ".xplane.pb",
                data,
            )
            for kind, data in crafted(sample)
        ]
        for i, (kind, suffix, data) in enumerate(inputs):
            path = pathlib.Path(tmp) / f"in{i}{suffix}"
            path.write_bytes(data)
            reset_peak()
            base = rss_kb("VmRSS")
            t0 = time.perf_counter()
            try:
                tw.load(path, progress=False)
                outcome = "loaded"
            except tw.ProfileError as exc:
                outcome = type(exc).__name__
            secs = time.perf_counter() - t0
            peak = max(0, rss_kb("VmHWM") - base)
            path.unlink()
            r = rows[kind]
            r["n"] += 1
            r["outcomes"][outcome] += 1
            r["peak_kb"] = max(r["peak_kb"], peak)
            r["per_byte"] = max(r["per_byte"], peak * 1024 / max(len(data), 1))
            r["secs"] = max(r["secs"], secs)
    print(
        f"{'damage kind':28} {'inputs':>6} {'slowest s':>9} {'peak MB':>8} "
        f"{'peak/byte':>9}  outcomes"
    )
    for kind, r in rows.items():
        outs = ", ".join(f"{k} {v}" for k, v in r["outcomes"].most_common())
        print(
            f"{kind:28} {r['n']:6d} {r['secs']:9.3f} {r['peak_kb'] / 1024:8.1f} "
            f"{r['per_byte']:9.1f}  {outs}"
        )
    total = sum(r["n"] for r in rows.values())
    worst = max(rows.items(), key=lambda kv: kv[1]["peak_kb"])
    print(
        f"\n{total} inputs; largest peak above baseline: {worst[1]['peak_kb'] / 1024:.1f} MB "
        f"({worst[0]})"
    )
    print()
    writes_and_interrupts()


if __name__ == "__main__":
    main()
