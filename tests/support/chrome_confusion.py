"""Chrome traces with wrong JSON types where the format has ids, times, args and phases.

``confused_trace(rng)`` builds one trace from a small valid one (a Kineto-like, TF1-like or
plain trace with every phase) and swaps 1-4 of its fields ``pid``, ``tid``, ``id``, ``ts``,
``dur``, ``args``, ``ph`` (and a few others) for a value of another JSON type or an extreme
number. Used by tests/hostile/test_chrome_fuzz.py (a bounded count in CI) and
benchmarks/fuzz_chrome.py (the full campaign).
"""

from __future__ import annotations

import json
import random

FIELDS = ("pid", "tid", "id", "ts", "dur", "args", "ph", "name", "cat", "bp", "id2", "s")
ODD_VALUES = (
    None, True, False, 0, -1, 1.5, -0.0, 2**31, 2**63, 2**64, 2**80, -(2**80), 1e17, -1e17,
    1e300, -1e300, 1e-300, "", "1", "0x1f", "stream 7", "²", "\ud7ff", "a" * 300, [], [1],
    [[1, 2], {}], {}, {"name": 1}, {"local": "0x1"}, {"a": [1, {"b": None}]}, "X", "B", "M",
    "s", "f", "C", "b", "e", "S", "F", "i", "q",
)  # fmt: skip
RAW_ODD = ("1e400", "-1e400", "1" + "0" * 400, "123456789012345678901234567890")


def base_events(kind: str) -> list[dict]:
    ev = [
        {"ph": "M", "pid": 1, "name": "process_name", "args": {"name": "/host:CPU"}},
        {"ph": "M", "pid": 1, "tid": 2, "name": "thread_name", "args": {"name": "main"}},
        {"ph": "X", "pid": 1, "tid": 2, "name": "step", "ts": 0, "dur": 100, "cat": "cpu_op",
         "args": {"step_num": 1, "_r": 1, "group_id": 0}},
        {"ph": "X", "pid": 1, "tid": 2, "name": "cudaLaunchKernel", "ts": 10, "dur": 5,
         "cat": "cuda_runtime", "args": {"correlation": 9}},
        {"ph": "B", "pid": 1, "tid": 2, "name": "b", "ts": 20},
        {"ph": "E", "pid": 1, "tid": 2, "ts": 30, "args": {"x": 1}},
        {"ph": "b", "pid": 1, "tid": 2, "name": "a", "cat": "c", "id": 5, "ts": 21},
        {"ph": "e", "pid": 1, "tid": 2, "name": "a", "cat": "c", "id": 5, "ts": 29},
        {"ph": "S", "pid": 1, "tid": 2, "name": "l", "cat": "c", "id": "0x2", "ts": 22},
        {"ph": "T", "pid": 1, "tid": 2, "name": "l", "cat": "c", "id": "0x2", "ts": 23},
        {"ph": "F", "pid": 1, "tid": 2, "name": "l", "cat": "c", "id": "0x2", "ts": 28},
        {"ph": "i", "pid": 1, "tid": 2, "name": "mark", "ts": 40, "s": "t"},
        {"ph": "C", "pid": 1, "name": "mem", "ts": 41, "args": {"bytes": 10}},
        {"ph": "s", "pid": 1, "tid": 2, "name": "fl", "cat": "f", "id": 3, "ts": 11},
        {"ph": "f", "pid": 3, "tid": 4, "name": "fl", "cat": "f", "id": 3, "ts": 51, "bp": "e"},
        {"ph": "X", "pid": 3, "tid": 4, "name": "kern", "ts": 51, "dur": 9, "cat": "kernel",
         "args": {"device": 0, "stream": 7, "correlation": 9, "grid": [1, 2, 3],
                  "block": [4, 1, 1], "registers per thread": 8, "shared memory": 0}},
        {"ph": "X", "pid": 3, "tid": 4, "name": "annot", "ts": 50, "dur": 11,
         "cat": "gpu_user_annotation"},
        {"ph": "s", "pid": 1, "tid": 2, "name": "ac2g", "cat": "ac2g", "id": 9, "ts": 10},
        {"ph": "f", "pid": 3, "tid": 4, "name": "ac2g", "cat": "ac2g", "id": 9, "ts": 51,
         "bp": "e"},
        {"ph": "N", "pid": 1, "tid": 2, "name": "obj", "id": "0x3", "ts": 42},
        {"ph": "X", "pid": 1, "tid": 2, "name": "ProfilerStep#4", "ts": 0, "dur": 200,
         "cat": "user_annotation"},
    ]  # fmt: skip
    if kind == "tf1":
        ev.insert(0, {"ph": "M", "pid": 3, "name": "process_name",
                      "args": {"name": "/gpu:0/stream:7 Compute"}})  # fmt: skip
    return ev


def confused_trace(rng: random.Random) -> bytes:
    """One trace, as bytes: a valid base with a few fields of the wrong type or range."""
    kind = rng.choice(["plain", "kineto", "tf1", "tf2", "array"])
    events = base_events(kind)
    raw_subst = []
    for _ in range(rng.randint(1, 4)):
        ev = rng.choice(events)
        field = rng.choice(FIELDS)
        if rng.random() < 0.1:
            marker = f"__RAW{len(raw_subst)}__"
            raw_subst.append((marker, rng.choice(RAW_ODD)))
            ev[field] = marker
        elif rng.random() < 0.1 and field in ev:
            del ev[field]
        elif field == "args" and rng.random() < 0.5:
            ev["args"] = {
                rng.choice(
                    [
                        "device",
                        "stream",
                        "correlation",
                        "name",
                        "group_id",
                        "grid",
                        "registers per thread",
                    ]
                ): rng.choice(ODD_VALUES)
            }
        else:
            ev[field] = rng.choice(ODD_VALUES)
    if kind == "array":
        doc: object = events
    else:
        doc = {"traceEvents": events}
        if kind == "kineto":
            doc["schemaVersion"] = 1
            doc["deviceProperties"] = rng.choice([[{"id": 0, "numSms": 80}], "x", [1], None])
            doc["baseTimeNanoseconds"] = rng.choice([0, 10**18, -5, "x", 2**70, None])
        if kind == "tf2":
            doc["displayTimeUnit"] = "ns"
    text = json.dumps(doc, ensure_ascii=rng.random() < 0.5)
    for marker, raw in raw_subst:
        text = text.replace(f'"{marker}"', raw)
    if kind == "tf2" and rng.random() < 0.5:
        text = text[:-2] + ",{}]}"
    return text.encode("utf-8", "surrogatepass")
