"""Structured mutations of real XSpace captures: the C wire walker and the protobuf fallback
must agree on every one (the same tables, or both a ProfileError), and neither may crash.

    python benchmarks/fuzz_walkers.py [--n 20000] [--seed 0] [--workers 2]

Each capture is parsed into its message tree (XSpace > XPlane > XLine > XEvent > XStat, the
metadata maps), one field is chosen and mutated in a way a byte flip rarely produces, and
the tree is encoded again with correct enclosing lengths unless the mutation is about
framing: varints of 10 and 11 bytes and values past 2^64, int64 extremes, length prefixes
past the end or short, wrong wire types, field numbers 0, 2^29 and beyond 2^32, unknown
fields and groups (balanced or not), invalid UTF-8 in strings, duplicated, reordered,
deleted and truncated fields, random payloads. Each mutant is loaded with both readers
(``tfprof_widgets.load`` with the walker, then with it switched off) in a worker process;
a worker that dies is a crash. Prints the counts per kind: agreements (both loaded and
equal / both refused), disagreements (with a reproducer written to --keep), crashes.
"""

from __future__ import annotations

import argparse
import collections
import concurrent.futures as cf
import os
import pathlib
import sys
import tempfile
import time

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

# Which fields are messages (by type name) and which are scalars, per message type.
SCHEMA: dict[str, dict[int, str]] = {
    "XSpace": {1: "XPlane", 2: "str", 3: "str", 4: "str"},
    "XPlane": {1: "int", 2: "str", 3: "XLine", 4: "EventMetadataEntry", 5: "StatMetadataEntry",
               6: "XStat"},
    "EventMetadataEntry": {1: "int", 2: "XEventMetadata"},
    "StatMetadataEntry": {1: "int", 2: "XStatMetadata"},
    "XLine": {1: "int", 10: "int", 2: "str", 11: "str", 3: "int", 9: "int", 4: "XEvent"},
    "XEvent": {1: "int", 2: "int", 5: "int", 3: "int", 4: "XStat"},
    "XStat": {1: "int", 2: "f64", 3: "int", 4: "int", 5: "str", 6: "bytes", 7: "int",
              8: "bytes"},
    "XEventMetadata": {1: "int", 2: "str", 4: "str", 3: "bytes", 5: "XStat", 6: "packed"},
    "XStatMetadata": {1: "int", 2: "str", 3: "str"},
}  # fmt: skip
KINDS = (
    "varint 10 bytes past 2^64",
    "varint 11 bytes",
    "int64 extreme",
    "length past end",
    "length short",
    "wrong wire type",
    "huge field number",
    "field number 0",
    "unknown field",
    "unknown group",
    "invalid UTF-8",
    "duplicated field",
    "reordered fields",
    "deleted field",
    "truncated submessage",
    "random payload",
)


# -- wire format ------------------------------------------------------------------------------
def varint(n: int) -> bytes:
    n &= (1 << 64) - 1
    out = bytearray()
    while True:
        b, n = n & 0x7F, n >> 7
        out.append(b | (0x80 if n else 0))
        if not n:
            return bytes(out)


def read_varint(b: bytes, i: int) -> tuple[int, int]:
    shift = value = 0
    while True:
        c = b[i]
        i += 1
        value |= (c & 0x7F) << shift
        shift += 7
        if not c & 0x80:
            return value, i


class Node:
    """One field of a parsed capture, by where it lies in the file: [start, end) is the whole
    field, [body, end) its payload (for a length-delimited field); ``parent`` is the index
    of the enclosing length-delimited field (-1 at the top)."""

    __slots__ = ("num", "wt", "kind", "start", "body", "end", "parent")

    def __init__(self, num, wt, kind, start, body, end, parent):
        self.num, self.wt, self.kind = num, wt, kind
        self.start, self.body, self.end, self.parent = start, body, end, parent


def parse(b: bytes) -> list[Node]:
    """Every field of an XSpace, depth first, with its span."""
    nodes: list[Node] = []

    def walk(lo: int, hi: int, msg: str, parent: int) -> None:
        i, types = lo, SCHEMA[msg]
        while i < hi:
            start = i
            tag, i = read_varint(b, i)
            num, wt = tag >> 3, tag & 7
            kind = types.get(num, "unknown")
            if wt == 0:
                _, i = read_varint(b, i)
                nodes.append(Node(num, wt, kind, start, i, i, parent))
            elif wt in (1, 5):
                i += 8 if wt == 1 else 4
                nodes.append(Node(num, wt, kind, start, i, i, parent))
            elif wt == 2:
                n, body = read_varint(b, i)
                i = body + n
                nodes.append(Node(num, wt, kind, start, body, i, parent))
                if kind in SCHEMA:
                    walk(body, i, kind, len(nodes) - 1)
            else:
                raise ValueError("groups are not expected in a capture")

    walk(0, len(b), "XSpace", -1)
    return nodes


def splice(b: bytes, nodes: list[Node], parent: int, lo: int, hi: int, new: bytes) -> bytes:
    """``b`` with bytes [lo, hi) inside ``parent``'s payload replaced by ``new`` and the
    length of ``parent`` and of every field around it written again."""
    while parent >= 0:
        p = nodes[parent]
        payload = b[p.body : lo] + new + b[hi : p.end]
        tag = varint(p.num << 3 | p.wt)
        new, lo, hi, parent = tag + varint(len(payload)) + payload, p.start, p.end, p.parent
    return b[:lo] + new + b[hi:]


# -- mutations --------------------------------------------------------------------------------
def _tag(num: int, wt: int) -> bytes:
    return varint(num << 3 | wt)


def mutate(b: bytes, nodes: list[Node], kind: str, rng: np.random.Generator) -> bytes | None:
    """``b`` with one field mutated by ``kind``; None when no field fits it."""
    if kind in ("varint 10 bytes past 2^64", "varint 11 bytes", "int64 extreme"):
        cands = [i for i, n in enumerate(nodes) if n.wt == 0]
    elif kind in ("length past end", "length short", "random payload"):
        cands = [i for i, n in enumerate(nodes) if n.wt == 2]
    elif kind == "invalid UTF-8":
        cands = [i for i, n in enumerate(nodes) if n.kind == "str"]
    elif kind == "truncated submessage":
        cands = [i for i, n in enumerate(nodes) if n.kind in SCHEMA and n.end > n.body]
    else:
        cands = list(range(len(nodes)))
    if not cands:
        return None
    k = cands[int(rng.integers(len(cands)))]
    f = nodes[k]
    tag = _tag(f.num, f.wt)
    payload = b[f.body : f.end]
    new = None  # the field's new bytes
    if kind == "varint 10 bytes past 2^64":
        new = tag + bytes([0xFF] * 9) + bytes([int(rng.integers(2, 128))])
    elif kind == "varint 11 bytes":
        new = tag + bytes([0x80] * 10) + b"\x01"
    elif kind == "int64 extreme":
        v = [2**63 - 1, 2**63, 2**64 - 1, -1, -(2**63), 2**31, 2**32, -(2**40), 0]
        new = tag + varint(int(v[int(rng.integers(len(v)))]))
    elif kind == "length past end":
        new = tag + varint(len(payload) + int(rng.integers(1, 1 << 20))) + payload
    elif kind == "length short":
        new = tag + varint(max(0, len(payload) - int(rng.integers(1, 16)))) + payload
    elif kind == "wrong wire type":
        wt = int(rng.choice([w for w in (0, 1, 2, 5) if w != f.wt]))
        body = {0: varint(5), 1: bytes(8), 2: varint(3) + b"abc", 5: bytes(4)}[wt]
        new = _tag(f.num, wt) + body
    elif kind in ("huge field number", "field number 0", "unknown field", "unknown group"):
        if kind == "huge field number":
            num = int(rng.choice([2**29 - 1, 2**29, 2**31, 2**32 + 4, 2**35, 2**61]))
        elif kind == "field number 0":
            num = 0
        else:
            num = int(rng.integers(12, 5000))
        if kind == "unknown group":
            inner = _tag(1, 0) + varint(7)
            shape = ("balanced", "nested", "no end", "end only", "wrong end")[int(rng.integers(5))]
            extra = {
                "balanced": _tag(num, 3) + inner + _tag(num, 4),
                "nested": _tag(num, 3) + _tag(num + 1, 3) + _tag(num + 1, 4) + _tag(num, 4),
                "no end": _tag(num, 3) + inner,
                "end only": _tag(num, 4),
                "wrong end": _tag(num, 3) + inner + _tag(num + 1, 4),
            }[shape]
        else:
            wt = int(rng.choice([0, 1, 2, 5]))
            body = {0: varint(int(rng.integers(0, 1 << 62))), 1: bytes(8), 2: varint(2) + b"xy",
                    5: bytes(4)}[wt]  # fmt: skip
            extra = _tag(num, wt) + body
        # Inserted before or after the chosen field, in the same message.
        at = f.start if rng.integers(2) else f.end
        return splice(b, nodes, f.parent, at, at, extra)
    elif kind == "invalid UTF-8":
        bad = [b"\xff", b"\xc3\x28", b"\xed\xa0\x80", b"\xf4\x90\x80\x80", b"\x80abc"]
        text = payload[: int(rng.integers(0, 8))] + bad[int(rng.integers(len(bad)))]
        new = tag + varint(len(text)) + text
    elif kind == "duplicated field":
        new = b[f.start : f.end] * 2
    elif kind == "reordered fields":
        sib = [i for i, n in enumerate(nodes) if n.parent == f.parent]
        lo, hi = nodes[sib[0]].start, nodes[sib[-1]].end
        parts = [b[nodes[i].start : nodes[i].end] for i in sib]
        return splice(
            b, nodes, f.parent, lo, hi, b"".join(parts[i] for i in rng.permutation(len(parts)))
        )
    elif kind == "deleted field":
        new = b""
    elif kind == "truncated submessage":
        cut = payload[: int(rng.integers(0, len(payload)))]
        new = tag + varint(len(cut)) + cut
    elif kind == "random payload":
        junk = rng.bytes(int(rng.integers(0, 64)))
        new = tag + varint(len(junk)) + junk
    return splice(b, nodes, f.parent, f.start, f.end, new)


# -- loading both ways ------------------------------------------------------------------------
TABLES = ("planes", "lines", "events", "event_stats", "event_metadata", "metadata_stats",
          "plane_stats")  # fmt: skip


def _read(path: str, fast: bool):
    import tfprof_widgets as tw
    from tfprof_widgets.readers.xspace import reader as xspace

    try:
        return xspace.read_xspace(path, fast=fast)
    except tw.ProfileError as exc:
        return exc
    except Exception as exc:  # noqa: BLE001 - a bare exception is a finding, reported
        return ("bare", f"{type(exc).__name__}: {exc}"[:300])


def _equal(a, b) -> bool:
    """Deep equality of two readers' HostTables (arrays, categoricals, lists, dataclasses)."""
    import dataclasses

    import pandas as pd

    if dataclasses.is_dataclass(a):
        return type(a) is type(b) and all(
            _equal(getattr(a, f.name), getattr(b, f.name)) for f in dataclasses.fields(a)
        )
    if isinstance(a, np.ndarray):
        return (
            a.dtype == b.dtype
            and a.shape == b.shape
            and np.array_equal(a, b, equal_nan=a.dtype.kind == "f")
        )
    if isinstance(a, pd.Categorical):
        return list(a.astype(object)) == list(b.astype(object))
    if isinstance(a, pd.DataFrame):
        return a.equals(b)
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(_equal(x, y) for x, y in zip(a, b))
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_equal(a[k], b[k]) for k in a)
    return a == b or (a != a and b != b)


def _same(a, b) -> str:
    """'' when two reads agree, else what differs."""
    from tfprof_widgets import ProfileError

    if isinstance(a, tuple) or isinstance(b, tuple):
        return f"bare exception: walker {a if isinstance(a, tuple) else 'ok'}, " + (
            f"protobuf {b if isinstance(b, tuple) else 'ok'}"
        )
    if isinstance(a, ProfileError) and isinstance(b, ProfileError):
        return ""
    if isinstance(a, ProfileError) or isinstance(b, ProfileError):
        which = "walker refused" if isinstance(a, ProfileError) else "protobuf refused"
        exc = a if isinstance(a, ProfileError) else b
        return f"{which}: {exc.problem[:200]}"
    return "" if _equal(a, b) else "the tables differ"


def check(data: bytes, tmp: str, tag: str) -> str:
    """'' when both readers agree on ``data`` and, where they load it, the rest of loading
    (assembly into a Run) raises nothing but a ProfileError; else what went wrong."""
    import warnings

    import tfprof_widgets as tw

    path = os.path.join(tmp, f"{tag}.xplane.pb")
    with open(path, "wb") as f:
        f.write(data)
    try:
        a = _read(path, True)
        why = _same(a, _read(path, False))
        if why or isinstance(a, tw.ProfileError):
            return why
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                tw.load(path, progress=False)
        except tw.ProfileError:
            pass
        except Exception as exc:  # noqa: BLE001
            return f"load raised {type(exc).__name__}: {str(exc)[:200]}"
        return ""
    finally:
        os.unlink(path)


def bases() -> list[pathlib.Path]:
    """Real captures: the TF CPU samples' smaller ones, the JAX/MI300X ones, the BERT GPU."""
    found = [
        *sorted((ROOT / "sample_profiles" / "keras_fit").rglob("*.xplane.pb")),
        *sorted((ROOT / "tests" / "data" / "xplane_amd_jax").glob("*.xplane.pb")),
    ]
    return [p for p in found if p.stat().st_size < 1 << 20]


def _batch(args) -> list[tuple[str, str, str, bytes | None]]:
    """Run mutations ``start..start+count`` (seeded per mutation): (kind, base, outcome,
    mutant if something went wrong)."""
    start, count, seed = args
    originals = {p.name: p.read_bytes() for p in bases()}
    parsed = {name: parse(data) for name, data in originals.items()}
    names = sorted(originals)
    out = []
    with tempfile.TemporaryDirectory() as tmp:
        for k in range(start, start + count):
            rng = np.random.default_rng([seed, k])
            name = names[k % len(names)]
            kind = KINDS[(k // len(names)) % len(KINDS)]
            data = mutate(originals[name], parsed[name], kind, rng)
            if data is None:
                out.append((kind, name, "skipped", None))
                continue
            why = check(data, tmp, f"m{k}")
            out.append((kind, name, why or "agree", data if why else None))
    return out


def run(n: int, seed: int, workers: int, keep: pathlib.Path | None) -> dict:
    per = 50
    jobs = [(s, min(per, n - s), seed) for s in range(0, n, per)]
    counts = collections.defaultdict(collections.Counter)
    findings = []
    crashed = 0
    with cf.ProcessPoolExecutor(workers) as pool:
        futures = {pool.submit(_batch, j): j for j in jobs}
        for fut in cf.as_completed(futures):
            try:
                results = fut.result()
            except cf.process.BrokenProcessPool:
                crashed += futures[fut][1]
                continue
            for kind, name, outcome, data in results:
                label = "agree" if outcome in ("agree", "skipped") else "disagree"
                counts[kind][label if outcome != "skipped" else "skipped"] += 1
                if label == "disagree":
                    findings.append((kind, name, outcome, data))
    if keep and findings:
        keep.mkdir(parents=True, exist_ok=True)
        for i, (kind, name, _, data) in enumerate(findings[:50]):
            (keep / f"{i:03d}_{kind.replace(' ', '_')}_{name}").write_bytes(data)
    return {"counts": counts, "findings": findings, "crashed": crashed}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=20_000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--keep", type=pathlib.Path, help="write disagreeing mutants here")
    args = ap.parse_args()
    t0 = time.perf_counter()
    res = run(args.n, args.seed, args.workers, args.keep)
    print("| mutation | tried | agree | disagree |\n|---|---:|---:|---:|")
    total = collections.Counter()
    for kind in KINDS:
        c = res["counts"][kind]
        tried = c["agree"] + c["disagree"]
        total.update({"tried": tried, "agree": c["agree"], "disagree": c["disagree"]})
        print(f"| {kind} | {tried:,} | {c['agree']:,} | {c['disagree']:,} |")
    print(f"| **all** | {total['tried']:,} | {total['agree']:,} | {total['disagree']:,} |")
    print(f"\ncrashed workers' mutations: {res['crashed']}; {time.perf_counter() - t0:.0f} s")
    for kind, name, why, _ in res["findings"][:20]:
        print(f"- {kind} on {name}: {why}")


if __name__ == "__main__":
    main()
