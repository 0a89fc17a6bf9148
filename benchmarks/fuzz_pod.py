"""Mutations of a converted pod dataset: its manifest and its Parquet files. Every outcome must
be a ProfileError naming a file of the dataset (or the dataset), or an open whose every table
and analysis reads; never another exception, a crash or a hang.

    python benchmarks/fuzz_pod.py [--n 2000] [--seed 0] [--workers 2]

A two-host dataset is converted once (two small captures). Each case copies it (hard links for
the files it does not touch), applies one mutation and, in a worker process, opens it with
``tfprof_widgets.open`` and reads what a user reads: the hosts, ``pod.sql`` over the events,
every stored analysis (steps, ops, kernels, memory, memory summary, tf.data bottleneck,
profile options), the small tables (planes, lines, ...), the overview, the top events and the
first host as a Run. Manifest mutations: a field deleted, of another JSON type (string,
number, bool, null, list, object), a number negative, huge, fractional, NaN or infinite, a
host listed twice, a lone surrogate, JSON nested deep, bytes truncated, flipped, inserted.
Parquet mutations: a file truncated, bit-flipped, zero-filled, emptied, deleted, replaced by
another table's file or another host's. Prints the counts per mutation kind and outcome; a
bare exception is printed with its case and a reproducer kept under ``--keep``.
"""

from __future__ import annotations

import argparse
import collections
import concurrent.futures as cf
import json
import os
import pathlib
import shutil
import sys
import tempfile
import time
import warnings

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "support"))

MANIFEST_KINDS = (
    "field deleted",
    "field retyped",
    "number out of range",
    "host listed twice",
    "lone surrogate",
    "deep JSON",
    "bytes truncated",
    "bytes flipped",
    "bytes inserted",
)
PARQUET_KINDS = (
    "parquet truncated",
    "parquet bit flips",
    "parquet zero run",
    "parquet emptied",
    "parquet deleted",
    "parquet of another table",
    "parquet of another host",
)
KINDS = MANIFEST_KINDS + PARQUET_KINDS


# -- the dataset ----------------------------------------------------------------------------------
def make_dataset(work: pathlib.Path) -> pathlib.Path:
    """Two hosts: a small synthetic capture with steps and one of the bundled samples."""
    import tfprof_widgets as tw

    run = work / "run"
    run.mkdir(parents=True)
    shutil.copy(
        next((ROOT / "sample_profiles" / "keras_fit").rglob("*.xplane.pb")), run / "a.xplane.pb"
    )
    from xspace_builder import XSpaceBuilder

    b = XSpaceBuilder("b")
    line = b.plane("/host:CPU", 1).line("l", 1)
    for i in range(40):
        line.event("op", i * 100, 50)
    (run / "b.xplane.pb").write_bytes(b.bytes())
    out = work / "ds"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tw.convert(run, out, progress=False, workers=1)
    return out


# -- mutations ------------------------------------------------------------------------------------
_ODD_VALUES = ("x", 7, -5, 2**64, 1.5, True, None, [], {}, [1], {"a": 1}, float("nan"))


def _paths(obj, prefix=()):
    """Every (path, value) in a JSON document."""
    yield prefix, obj
    if isinstance(obj, dict):
        for k, v in obj.items():
            yield from _paths(v, (*prefix, k))
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            yield from _paths(v, (*prefix, i))


def _set(doc, path, value):
    node = doc
    for p in path[:-1]:
        node = node[p]
    node[path[-1]] = value


def _mutate_manifest(text: str, kind: str, rng) -> str:
    doc = json.loads(text)
    # The schema is long and checked as a whole: mutate what the readers use.
    paths = [p for p, _ in _paths(doc) if p and p[0] not in ("schema",)]
    if kind == "field deleted":
        path = paths[int(rng.integers(len(paths)))]
        node = doc
        for p in path[:-1]:
            node = node[p]
        del node[path[-1]]
    elif kind == "field retyped":
        path = paths[int(rng.integers(len(paths)))]
        _set(doc, path, _ODD_VALUES[int(rng.integers(len(_ODD_VALUES)))])
    elif kind == "number out of range":
        nums = [p for p, v in _paths(doc) if isinstance(v, (int, float)) and p[0] != "schema"]
        value = (-1, -(2**63), 2**63, 2**64 - 1, 10**30, 0.5, float("inf"), float("nan"))
        _set(doc, nums[int(rng.integers(len(nums)))], value[int(rng.integers(len(value)))])
    elif kind == "host listed twice":
        doc["hosts"].append(doc["hosts"][int(rng.integers(len(doc["hosts"])))])
    elif kind == "lone surrogate":
        strs = [p for p, v in _paths(doc) if isinstance(v, str) and p[0] != "schema"]
        _set(doc, strs[int(rng.integers(len(strs)))], "\udce9")
    elif kind == "deep JSON":
        depth = int(rng.integers(1_000, 200_000))
        key = next(
            (p[-1] for p in paths[int(rng.integers(len(paths))) :] if isinstance(p[-1], str)), None
        )
        if key is None:
            return "[" * depth + "]" * depth
        tag = json.dumps(key) + ":"
        return json.dumps(doc).replace(tag, tag + "[" * depth + "]" * depth + ",", 1)
    return json.dumps(doc)


def _mutate_bytes(data: bytes, kind: str, rng) -> bytes:
    size = max(len(data), 1)
    if kind in ("bytes truncated", "parquet truncated"):
        return data[: int(rng.integers(0, size))]
    if kind in ("bytes flipped", "parquet bit flips"):
        b = bytearray(data)
        for pos in rng.integers(0, size, int(rng.integers(1, 9))):
            b[pos] ^= 1 << int(rng.integers(0, 8))
        return bytes(b)
    if kind == "bytes inserted":
        cut = int(rng.integers(0, size))
        return data[:cut] + rng.bytes(int(rng.integers(1, 64))) + data[cut:]
    if kind == "parquet zero run":
        cut = int(rng.integers(0, size))
        return data[:cut] + b"\0" * int(rng.integers(1, 4096)) + data[cut + 4096 :]
    if kind == "parquet emptied":
        return b""
    raise ValueError(kind)


def make_case(src: pathlib.Path, dest: pathlib.Path, kind: str, rng) -> str:
    """Copy the dataset to ``dest`` (hard links) and apply one mutation; what it did."""
    for path in src.rglob("*"):
        target = dest / path.relative_to(src)
        if path.is_dir():
            target.mkdir(parents=True, exist_ok=True)
        else:
            target.parent.mkdir(parents=True, exist_ok=True)
            os.link(path, target)
    manifest = dest / "manifest.json"
    if kind in MANIFEST_KINDS:
        text = manifest.read_text()
        out = (
            _mutate_bytes(text.encode(), kind, rng)
            if kind.startswith("bytes")
            else _mutate_manifest(text, kind, rng).encode("utf-8", "surrogatepass")
        )
        manifest.unlink()
        manifest.write_bytes(out)
        return kind
    files = sorted(dest.glob("hosts/*/*.parquet"))
    victim = files[int(rng.integers(len(files)))]
    data = victim.read_bytes()
    victim.unlink()
    if kind == "parquet deleted":
        return f"{kind}: {victim.relative_to(dest)}"
    if kind == "parquet of another table":
        other = [f for f in files if f.parent == victim.parent and f != victim]
        data = (src / other[int(rng.integers(len(other)))].relative_to(dest)).read_bytes()
    elif kind == "parquet of another host":
        other = [f for f in files if f.name == victim.name and f != victim]
        data = (src / other[0].relative_to(dest)).read_bytes() if other else b""
    else:
        data = _mutate_bytes(data, kind, rng)
    victim.write_bytes(data)
    return f"{kind}: {victim.relative_to(dest)}"


# -- one case -------------------------------------------------------------------------------------
def read_everything(path: str) -> str:
    """Open the dataset and read what a user reads; the outcome in words."""
    import tfprof_widgets as tw

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            with tw.open(path, memory_limit="256MB", threads=1) as pod:
                n = int(pod.sql("SELECT count(*) AS n FROM events")["n"][0])
                for name in ("steps", "ops", "kernels", "memory", "memory_summary",
                             "tf_data_bottleneck", "profile_options", "planes", "lines",
                             "event_metadata", "plane_stats", "per_host_steps"):  # fmt: skip
                    getattr(pod, name)
                _ = pod.overview_summary, pod.top_events(5), pod.host(pod.hosts[0]).events
                return f"opened, {len(pod.hosts)} host(s) ({n} events)"
        except tw.ProfileError as exc:
            named = os.path.realpath(str(exc.path)).startswith(os.path.realpath(path))
            return f"{type(exc).__name__}" + ("" if named else " NOT NAMING A DATASET FILE")
        except Exception as exc:  # noqa: BLE001 - the fuzzer's finding
            return f"BARE {type(exc).__name__}: {str(exc)[:160]}"


def run_case(args: tuple[str, str, str, int]) -> tuple[str, str, str, float]:
    src, dest, kind, seed = args
    rng = np.random.default_rng(seed)
    what = make_case(pathlib.Path(src), pathlib.Path(dest), kind, rng)
    t0 = time.perf_counter()
    outcome = read_everything(dest)
    secs = time.perf_counter() - t0
    if not outcome.startswith("BARE") and "NOT NAMING" not in outcome:
        shutil.rmtree(dest, ignore_errors=True)
    return kind, what, outcome, secs


def fuzz(n: int, seed: int, workers: int, keep: pathlib.Path | None = None) -> dict:
    """Run ``n`` cases; {kind: Counter(outcome class)} and the failures."""
    counts: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
    failures, slowest = [], 0.0
    with tempfile.TemporaryDirectory() as tmp:
        work = pathlib.Path(tmp)
        src = make_dataset(work)
        jobs = [
            (str(src), str(work / f"case{i}"), KINDS[i % len(KINDS)], seed * 1_000_003 + i)
            for i in range(n)
        ]
        with cf.ProcessPoolExecutor(workers) as pool:
            for kind, what, outcome, secs in pool.map(run_case, jobs, chunksize=4):
                slowest = max(slowest, secs)
                label = outcome.split(" (")[0] if outcome.startswith("opened") else outcome
                if outcome.startswith("BARE") or "NOT NAMING" in outcome:
                    failures.append((what, outcome))
                    label = "FAILED"
                counts[kind][label] += 1
        if keep is not None and failures:
            keep.mkdir(parents=True, exist_ok=True)
            for i, (what, outcome) in enumerate(failures[:20]):
                (keep / f"failure{i}.txt").write_text(f"{what}\n{outcome}\n")
    return {"counts": counts, "failures": failures, "slowest": slowest}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--keep", type=pathlib.Path, default=None)
    args = ap.parse_args()
    t0 = time.perf_counter()
    got = fuzz(args.n, args.seed, args.workers, args.keep)
    print(f"{'mutation':28} {'cases':>5}  outcomes")
    for kind in KINDS:
        c = got["counts"].get(kind, collections.Counter())
        print(
            f"{kind:28} {sum(c.values()):5d}  " + ", ".join(f"{k} {v}" for k, v in c.most_common())
        )
    total = sum(sum(c.values()) for c in got["counts"].values())
    print(
        f"\n{total} cases in {time.perf_counter() - t0:.0f} s (slowest {got['slowest']:.1f} s); "
        f"{len(got['failures'])} failures"
    )
    for what, outcome in got["failures"][:20]:
        print(f"  {what}: {outcome}")


if __name__ == "__main__":
    main()
