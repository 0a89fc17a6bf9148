"""Structural fuzzing of PyTorch Kineto traces: every analysis and every view on each case.

    python benchmarks/fuzz_kineto.py [--n 2000] [--seed 0] [--no-views] [--keep DIR]

Each seed builds a small trace the way torch.profiler writes one (ProfilerStep#N markers,
operators with External ids, runtime launches and the kernels, copies and sets they launch,
linked by correlation ids, ``[memory]`` events, GPU user annotations, DataLoader batches and
collectives), then breaks its structure in a few seeded ways a byte flip rarely makes:

* steps: numbers of 18 digits, other scripts' digits, markers nested in, overlapping or
  repeating others, steps on other threads, a step with no work or with only orphan kernels;
* correlation and External ids: shared by several launches, pointing at nothing, negative,
  past int64, strings, kernels without a launch, launches without a kernel;
* memory events: Bytes of ±2^62, -2^63, 1e300, strings, totals negative or past int64,
  frees of what was never allocated;
* names: 100 KB names, runs of spaces, templates nested thousands deep, HTML, control and
  right-to-left characters;
* args: occupancy, registers, shared memory, blocks per SM at and past their type's limits.

Each case is loaded, every run analysis computed and (unless ``--no-views``) every view's
payload made, under a 20 s alarm. A case fails when it hangs, raises anything but a
ProfileError naming the file, or gives a number that breaks its invariant: every number
finite where it is a time, size, count or share; times, durations, sizes and counts >= 0;
shares within 0-100 %; step spans that do not overlap (torch-tb-profiler's). Prints the
counts, the slowest case and the failures with the seed that reproduces each.
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import dataclasses
import json
import pathlib
import random
import signal
import sys
import tempfile
import time
import traceback
import warnings

import numpy as np
import pandas as pd

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import tfprof_widgets as tw  # noqa: E402

# Every table a run of a Kineto trace gives (the XLA-only ones are empty but computed too).
ANALYSES = (
    "steps", "torch_steps", "torch_ops", "torch_ops_by_shape", "torch_kernels",
    "torch_gpu_metrics", "kernel_breakdown", "temporal_breakdown", "temporal_breakdown_steps",
    "ops", "kernels", "memory", "memory_summary", "memory_breakdown", "per_host_steps",
    "overview_summary", "input_pipeline", "step_count", "device_precision", "line_summary",
    "hlo_stats", "roofline", "op_profile",
)  # fmt: skip
HANG_S = 20
# Column-name rules for the invariants (units as schema.py writes them).
_NON_NEGATIVE = ("_us", "_bytes", "_count", "count", "occurrences", "_ms", "_ns")
_SHARE = ("_percent", "_pct", "_share")
# Columns whose values are positions or ids, not amounts (may be any number).
_ANY_SIGN = ("address", "group_id", "step", "event", "correlation", "line_id", "plane_id")


# -- the traces ---------------------------------------------------------------------------------
class Trace:
    """A seeded, well-formed Kineto trace and the breakages applied to it."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.events: list[dict] = []
        self.corr = 100
        self.ext = 1
        self.broken: list[str] = []

    def name(self, base: str) -> str:
        r = self.rng.random()
        if r < 0.02:
            return base + "x" * self.rng.choice([30_000, 100_000])
        if r < 0.04:
            return f"void {base}<" + " " * self.rng.choice([100, 30_000]) + "float>(int)"
        if r < 0.05:
            return f"{base}<" * 2000 + ">" * 2000
        if r < 0.07:
            return base + self.rng.choice(["</script><!--", "\u202e\x1b[2J", "\x00\x07", "٣"])
        return base

    def op(self, name, ts, dur, tid=1, cat="cpu_op", **args):
        ev = {"ph": "X", "cat": cat, "name": name, "pid": 1, "tid": tid, "ts": ts, "dur": dur}
        ev["args"] = {"External id": self.ext, **args}
        self.ext += 1
        self.events.append(ev)
        return ev

    def launch(self, ts, corr, name="cudaLaunchKernel"):
        ev = self.op(name, ts, 4, cat="cuda_runtime", correlation=corr)
        return ev

    def device(self, cat, name, ts, dur, corr, stream=7, **args):
        a = {"device": 0, "stream": stream, "correlation": corr, "External id": self.ext}
        if cat == "kernel":
            a.update({"registers per thread": 32, "shared memory": 0, "blocks per SM": 1.5,
                      "est. achieved occupancy %": 50, "grid": [80, 1, 1],
                      "block": [256, 1, 1]})  # fmt: skip
        a.update(args)
        ev = {"ph": "X", "cat": cat, "name": name, "pid": 0, "tid": stream, "ts": ts,
              "dur": dur, "args": a}  # fmt: skip
        self.events.append(ev)
        return ev

    def mem(self, ts, size, addr, total):
        a = {"Device Type": 1, "Device Id": 0, "Addr": addr, "Bytes": size}
        if total is not None:
            a["Total Allocated"] = total
            a["Total Reserved"] = total + 4096
        self.events.append({"ph": "i", "s": "t", "cat": "cpu_instant_event", "name": "[memory]",
                            "pid": 1, "tid": 1, "ts": ts, "args": a})  # fmt: skip

    def build(self) -> Trace:
        rng = self.rng
        n_steps = rng.randint(1, 6)
        t = 1000
        total = 0 if rng.random() < 0.7 else None
        for s in range(n_steps):
            length = rng.randint(200, 2000)
            self.op(f"ProfilerStep#{s + 1}", t, length, cat="user_annotation")
            if rng.random() < 0.3:
                self.op("enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__", t + 1,
                        rng.randint(1, 50), cat="user_annotation")  # fmt: skip
            at = t + 60
            for _ in range(rng.randint(0, 5)):
                what = rng.choice(["aten::mm", "aten::add", "nccl:all_reduce", "aten::copy_"])
                self.op(what, at, 30)
                self.corr += 1
                kind = {"aten::copy_": "gpu_memcpy"}.get(what, "kernel")
                call = "cudaMemcpyAsync" if kind == "gpu_memcpy" else "cudaLaunchKernel"
                self.launch(at + 2, self.corr, call)
                self.device(kind, self.name("ampere_sgemm" if kind == "kernel" else "Memcpy"),
                            at + 10, rng.randint(1, 80), self.corr)  # fmt: skip
                if rng.random() < 0.3 and total is not None:
                    size = rng.choice([512, 4096, 1 << 20])
                    total += size
                    self.mem(at + 1, size, self.corr, total)
                at += 40
            t += length + rng.randint(0, 20)
        return self

    # -- breakages ---------------------------------------------------------------------------
    def breakages(self) -> list:
        return [
            self.step_numbers, self.nested_steps, self.shared_correlation, self.orphan_ids,
            self.bad_ids, self.memory_values, self.kernel_args, self.times, self.annotations,
        ]  # fmt: skip

    def _pick(self, pred):
        found = [e for e in self.events if pred(e)]
        return self.rng.choice(found) if found else None

    def step_numbers(self):
        e = self._pick(lambda e: e["name"].startswith("ProfilerStep#"))
        if e:
            e["name"] = "ProfilerStep#" + self.rng.choice(
                ["123456789012345679", "999999999999999999", "٣", "0", "1" * 19, "-1", ""]
            )

    def nested_steps(self):
        e = self._pick(lambda e: e["name"].startswith("ProfilerStep#"))
        if e:
            ts = e["ts"] + self.rng.choice([0, 5, e["dur"] // 2, e["dur"] - 1])
            dur = self.rng.choice([1, e["dur"] // 3, e["dur"], e["dur"] * 2])
            self.op(e["name"] if self.rng.random() < 0.3 else "ProfilerStep#77", ts, dur,
                    tid=self.rng.choice([1, 2]), cat="user_annotation")  # fmt: skip

    def shared_correlation(self):
        launches = [e for e in self.events if e["cat"] == "cuda_runtime"]
        if len(launches) >= 2:
            a, b = self.rng.sample(launches, 2)
            b["args"]["correlation"] = a["args"]["correlation"]

    def orphan_ids(self):
        r = self.rng.random()
        if r < 0.5:
            k = self._pick(lambda e: e["cat"] == "kernel")
            if k:
                k["args"]["correlation"] = 10**6 + self.rng.randint(0, 9)
        else:
            last = max((e["ts"] + e.get("dur", 0) for e in self.events), default=0)
            self.op("ProfilerStep#999", last + 10, 300, cat="user_annotation")
            self.device("kernel", "orphan", last + 50, 20, 987654)

    def bad_ids(self):
        e = self._pick(lambda e: "correlation" in e.get("args", {}) or "External id" in e["args"])
        if e:
            key = self.rng.choice(["correlation", "External id"])
            e["args"][key] = self.rng.choice([-1, 2**63 - 1, 2**64, -(2**63), "12", "x", 1.5,
                                              None, 1e300])  # fmt: skip

    def memory_values(self):
        ts = self.events[0]["ts"] + 3
        size = self.rng.choice([2**62, -(2**63), 1e300, -1e300, "4096", 2**63 - 1, -4096])
        total = self.rng.choice([None, -5, 2**62, 1e300, 2**63 - 1])
        for i in range(self.rng.choice([1, 2, 3])):
            self.mem(ts + i, size, 7 + i, total)

    def kernel_args(self):
        k = self._pick(lambda e: e["cat"] == "kernel")
        if k:
            key = self.rng.choice(["registers per thread", "shared memory", "blocks per SM",
                                   "est. achieved occupancy %", "grid", "block"])  # fmt: skip
            k["args"][key] = self.rng.choice([1e305, -1, 2**63 - 1, 2**62, -1e300, "x",
                                              [2**31, 2**31, 2**31], [], 0])  # fmt: skip

    def times(self):
        e = self._pick(lambda e: e["ph"] == "X")
        if e:
            r = self.rng.random()
            if r < 0.4:
                e["dur"] = self.rng.choice([0, 10**12, 1e15])
            else:
                e["ts"] = e["ts"] + self.rng.choice([-(10**6), 10**9, 0.001])

    def annotations(self):
        e = self._pick(lambda e: e["cat"] == "kernel")
        if e:
            self.events.append({**e, "cat": "gpu_user_annotation", "name": "ProfilerStep#1",
                                "args": {"correlation": e["args"]["correlation"]}})  # fmt: skip

    def json(self) -> bytes:
        top = {"schemaVersion": 1, "deviceProperties": [{"id": 0, "name": "GPU", "numSms": 80,
               "totalGlobalMem": 16 << 30}], "traceEvents": self.events}  # fmt: skip
        return json.dumps(top).encode()


def case(seed: int) -> tuple[bytes, list[str]]:
    """The trace of ``seed`` and the names of the breakages applied."""
    rng = random.Random(seed)
    trace = Trace(rng).build()
    done = []
    for fn in rng.sample(trace.breakages(), rng.randint(1, 3)):
        fn()
        done.append(fn.__name__)
    return trace.json(), done


# -- the checks -----------------------------------------------------------------------------------
class Hang(Exception):
    pass


@contextlib.contextmanager
def alarm(seconds: int):
    def ring(*_):
        raise Hang(f"over {seconds} s")

    old = signal.signal(signal.SIGALRM, ring)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


def invariant_breaks(name: str, df: pd.DataFrame) -> list[str]:
    """The columns of a table whose numbers break their invariant."""
    out = []
    for col in df.columns:
        s = df[col]
        if not (pd.api.types.is_numeric_dtype(s.dtype) and not pd.api.types.is_bool_dtype(s)):
            continue
        v = s.to_numpy(dtype=float, na_value=np.nan)
        c = str(col).lower()
        if np.isinf(v).any():
            out.append(f"{name}.{col} has inf")
            continue
        if any(k in c for k in _ANY_SIGN):
            continue
        if c.endswith(_NON_NEGATIVE) and (v[~np.isnan(v)] < 0).any():
            out.append(f"{name}.{col} < 0 ({np.nanmin(v)})")
        known = v[~np.isnan(v)]
        if c.endswith(_SHARE) and ((known < -1e-9) | (known > 100 + 1e-6)).any():
            out.append(f"{name}.{col} outside 0-100 ({np.nanmin(v)}..{np.nanmax(v)})")
    return out


def step_breaks(run) -> list[str]:
    """torch-tb-profiler's steps must not overlap (per host, by start)."""
    out = []
    t = run.torch_steps
    for host, g in t.groupby("host", observed=True):
        g = g.sort_values("start_us")
        ends = (g["start_us"] + g["step_time_us"]).to_numpy()
        slack = 1e-6 + 8 * np.spacing(np.abs(ends[:-1]))  # float µs at 1e12 µs: 1e-4 apart
        if (g["start_us"].to_numpy()[1:] < ends[:-1] - slack).any():
            out.append(f"torch_steps of {host} overlap")
    return out


def check(path: pathlib.Path, views: bool) -> tuple[str, list[str]]:
    """Load and compute everything: ('loaded' | 'ProfileError', problems)."""
    problems: list[str] = []
    try:
        run = tw.load(path, progress=False)
    except tw.ProfileError as exc:
        named = str(path) in str(exc)
        return "ProfileError", [] if named else [f"ProfileError without path: {exc}"]
    for name in ANALYSES:
        value = getattr(run, name)
        if isinstance(value, pd.DataFrame):
            problems += invariant_breaks(name, value)
        elif dataclasses.is_dataclass(value):
            for k, v in dataclasses.asdict(value).items():
                if isinstance(v, float) and not np.isfinite(v) and not np.isnan(v):
                    problems.append(f"{name}.{k} = {v}")
    problems += step_breaks(run)
    if views:
        from tfprof_widgets import report

        for key, view in report.report_views(run).items():
            json.loads(view.payload_json())  # raises where a number is not JSON
            if key == "timeline" and not view.note:
                json.dumps(view.offline_payload(800_000), allow_nan=False)
        json.loads(tw.views.operators(run).payload_json())
    return "loaded", problems


@dataclasses.dataclass
class Report:
    cases: int = 0
    outcomes: collections.Counter = dataclasses.field(default_factory=collections.Counter)
    breakages: collections.Counter = dataclasses.field(default_factory=collections.Counter)
    bad: list = dataclasses.field(default_factory=list)
    slowest: tuple = (0.0, None)
    seconds: float = 0.0


def campaign(seeds, tmp: pathlib.Path, views: bool = True, keep: pathlib.Path | None = None):
    """Run the cases of ``seeds``; a :class:`Report`."""
    rep = Report()
    t0 = time.perf_counter()
    path = pathlib.Path(tmp) / "case.pt.trace.json"
    for seed in seeds:
        data, broken = case(seed)
        path.write_bytes(data)
        rep.cases += 1
        rep.breakages.update(broken)
        t = time.perf_counter()
        try:
            with alarm(HANG_S), warnings.catch_warnings():
                warnings.simplefilter("ignore")
                outcome, problems = check(path, views)
        except Hang as exc:
            outcome, problems = "hang", [str(exc)]
        except Exception as exc:  # noqa: BLE001 - what this campaign looks for
            outcome = "bare exception"
            problems = [f"{type(exc).__name__}: {str(exc)[:300]}", traceback.format_exc(limit=-3)]
        rep.outcomes[outcome] += 1
        if problems:
            rep.bad.append((seed, broken, problems))
            if keep is not None:
                keep.mkdir(parents=True, exist_ok=True)
                (keep / f"seed{seed}.pt.trace.json").write_bytes(data)
        dt = time.perf_counter() - t
        if dt > rep.slowest[0]:
            rep.slowest = (dt, seed)
    rep.seconds = time.perf_counter() - t0
    return rep


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--no-views", action="store_true", help="analyses only")
    ap.add_argument("--keep", type=pathlib.Path, help="write failing traces here")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        rep = campaign(range(a.seed, a.seed + a.n), pathlib.Path(tmp), not a.no_views, a.keep)
    what = "analyses" if a.no_views else "analyses and views"
    print(f"{rep.cases} Kineto traces (seeds {a.seed}..{a.seed + a.n - 1}), {what}: ", end="")
    print(f"{rep.seconds:.0f} s")
    for k, v in sorted(rep.outcomes.items()):
        print(f"  {k:32s} {v:6d}")
    print("  breakages applied:", ", ".join(f"{k} {v}" for k, v in sorted(rep.breakages.items())))
    print(f"  slowest: {rep.slowest[0]:.2f} s (seed {rep.slowest[1]})")
    print(f"  cases with a problem: {len(rep.bad)}")
    for seed, broken, problems in rep.bad[:20]:
        print(f"\nseed {seed} ({', '.join(broken)}):")
        for p in problems[:6]:
            print("  " + p.replace("\n", "\n  "))
    return 1 if rep.bad else 0


if __name__ == "__main__":
    sys.exit(main())
