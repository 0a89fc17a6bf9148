"""Memory and time of every hand-made hostile input of issue 20, one row each: XSpace
length prefixes and counts that claim more than the file holds, string-stat and gzip bombs,
deep JSON, TF1 RunMetadata, run directories that change while they load. Per input: the
outcome (a ProfileError subclass or a load), seconds, and peak resident memory above the
baseline, against GOAL_SECS and GOAL_PEAK_MB (benchmarks/hostile_common.py).

    python benchmarks/bench_hostile_xspace.py       (bench_hostile.py runs it first)
"""

from __future__ import annotations

import contextlib
import gzip
import json
import os
import pathlib
import tempfile
import time

import numpy as np
from hostile_common import (
    GOAL_PEAK_MB,
    GOAL_SECS,
    ROOT,
    _gzip_stream,
    _tree,
    reset_peak,
    rss_kb,
)


def issue_cases(work: pathlib.Path):
    """(item, case, file name, bytes) for every input case the issue lists."""
    from test_hostile_xspace import field, number, varint, xspace_bytes
    from xspace_builder import XSpaceBuilder

    from tfprof_widgets.proto import tfprof_pb2

    def xs(fn, host="h"):
        b = XSpaceBuilder(host)
        fn(b, b.plane("/host:CPU", 1))
        return b.bytes()

    def chrome(events, **top):
        return json.dumps({"traceEvents": events, **top}).encode()

    def x(name="a", ts=1, dur=1, **kw):
        return {"ph": "X", "name": name, "ts": ts, "dur": dur, "pid": 1, "tid": 1, **kw}

    gib_of_zeros = _gzip_stream(b"", b"\0" * (1 << 24), 64, b"")  # 1 GiB
    yield (
        1,
        "compressed_str_value stat: gzip of 1 GiB",
        "bomb.xplane.pb",
        xspace_bytes(1, event_extra=field(4, number(1, 7) + field(8, gib_of_zeros))),
    )
    ev = b'{"ph":"X","name":"a","ts":1,"dur":1,"pid":1,"tid":1},'
    yield (
        2,
        "trace.json.gz: 2.5 MB holding 850 MB of events",
        "big.trace.json.gz",
        _gzip_stream(b'{"traceEvents":[', ev * 20_000, 850, ev[:-1] + b"]}"),
    )
    for n, mb in ((20_000_000, 40), (50_000_000, 100)):
        line = number(1, 1) + field(2, b"w") + b"\x22\x00" * n  # n empty events, 2 bytes each
        plane = number(1, 1) + field(2, b"/host:CPU") + field(3, line)
        yield (
            3,
            f"xplane of {n // 1_000_000} M empty events ({mb} MB)",
            "e.xplane.pb",
            field(1, plane),
        )
    yield 4, "1.5 GB of zero bytes (never written)", "zero.xplane.pb", ("sparse", 1_500_000_000)
    for label, events in (
        ("M args a string", [{"ph": "M", "pid": 1, "name": "process_name", "args": "x"}, x()]),
        ("pid a list", [x(pid=[1])]),
        ("async id a list", [{"ph": "b", "pid": 1, "ts": 1, "id": [1], "name": "a", "cat": "c"}]),
        ("E args a list", [{"ph": "B", "pid": 1, "tid": 1, "ts": 1, "name": "a"},
                           {"ph": "E", "pid": 1, "tid": 1, "ts": 2, "args": [1]}]),
        ("ts in epoch ns", [x(ts=1_700_000_000_123_456_000), x(ts=1_700_000_000_123_461_000)]),
        ("ts -1e17", [x(ts=-1e17)]),
        ("pid 2**80", [x(pid=2**80)]),
    ):  # fmt: skip
        yield 5, f"Chrome: {label}", "c.trace.json", chrome(events)
    yield 5, "Chrome: ts 1e400", "c.trace.json", b'{"traceEvents": [{"ph": "X", "ts": 1e400}]}'
    for label, name in (
        ("step_name '\u00b2'", "\u00b2"),
        ("step_name of 5,000 digits", "7" * 5000),
    ):
        yield (
            6,
            f"XSpace: {label}",
            "s.xplane.pb",
            xs(
                lambda b, p, n=name: p.line("l", 1).event(
                    "train", 0, 9, {"group_id": 1, "step_name": n}
                )
            ),
        )

    def start_max(b, p):
        p.line("l", 1).event("a", 0, 9)
        env = b.plane("Task Environment", 99)
        env.add_plane_stat("profile_start_time", np.uint64(2**64 - 1))

    yield 6, "XSpace: profile_start_time 2**64-1", "t.xplane.pb", xs(start_max)
    yield (
        6,
        "XSpace: /device:GPU:<20 digits>",
        "g.xplane.pb",
        xs(lambda b, p: b.plane("/device:GPU:" + "9" * 20, 2).line("s", 1).event("k", 0, 9)),
    )
    yield (
        7,
        "two files, one host name",
        ("h.trace.json", "h.trace.json.gz"),
        (
            chrome([x()]),
            gzip.compress(chrome([x()])),
        ),
    )
    rm = tfprof_pb2.RunMetadata()
    dev = rm.step_stats.dev_stats.add(device="/job:localhost/replica:0/task:0/device:CPU:0")
    dev.node_stats.add(node_name="x", all_start_micros=2**62, all_end_rel_micros=5)
    yield 9, "TF1: µs times overflowing ns", "s.run_metadata.pb", rm.SerializeToString()
    rm = tfprof_pb2.RunMetadata()
    dev = rm.step_stats.dev_stats.add(
        device="/job:localhost/replica:0/task:0/device:GPU:" + "9" * 20
    )
    dev.node_stats.add(node_name="x", all_start_micros=1_700_000_000_000_000, all_end_rel_micros=5)
    yield 9, "TF1: device ordinal beyond int64", "d.run_metadata.pb", rm.SerializeToString()
    for label, extra in (
        ("field 2**32+4 in an event", varint((2**32 + 4) << 3) + varint(1)),
        ("field 2**29 in an event", varint((2**29) << 3) + varint(1)),
        ("field 0 in an event", number(0, 5)),
        ("unknown group in an event", varint(9 << 3 | 3) + number(1, 1) + varint(9 << 3 | 4)),
        ("10-byte varint above 2**64", varint(3 << 3) + bytes([0x85] + [0x80] * 8) + b"\x02"),
        ("invalid UTF-8 str_value", field(4, number(1, 7) + field(5, b"\xff\xfe"))),
    ):
        yield 10, f"walker vs protobuf: {label}", "w.xplane.pb", xspace_bytes(3, event_extra=extra)
    for label, events in (
        ("ts 1 and ts 1e17", [x(ts=1), x(ts=1e17)]),
        ("dur 1e300", [x(dur=1e300)]),
        ("group_id 2**40", [x(args={"group_id": 2**40})]),
    ):
        yield 11, f"Chrome: {label}", "c.trace.json", chrome(events)

    def one(**kw):
        def build(b, p):
            e = p.line("l", 1, 1000).event("a", 0, kw.pop("duration_ps", 10), kw.pop("stats", None))
            for k, v in kw.items():
                setattr(e, k, v)

        return xs(build)

    yield 11, "XSpace: group_id 2**31", "n.xplane.pb", one(stats={"group_id": 2**31})
    yield 11, "XSpace: num_occurrences 2**40", "n.xplane.pb", one(num_occurrences=2**40)
    yield 11, "XSpace: duration_ps -1e12", "n.xplane.pb", one(duration_ps=-(10**12))

    def far(b, p):
        p.line("l", 1, 1000).event("a", 0, 10)
        p.line("m", 2, 1000 + 200 * 86_400 * 10**9).event("b", 0, 10)

    yield 11, "XSpace: two lines 200 days apart", "far.xplane.pb", xs(far)
    yield (
        15,
        'Chrome: pid "1" next to pid 1',
        "p.trace.json",
        chrome([x(pid=1), x(pid="1")]),
        lambda run: f"{len(run.lines)} lines (2 expected)",
    )
    yield from _more_issue_cases(chrome, x, xs, varint, number, field, xspace_bytes)


def _more_issue_cases(chrome, x, xs, varint, number, field, xspace_bytes):
    """The issue's other input cases: the rest of items 6, 7, 9, 10 and 15, and item 8."""
    from tfprof_widgets.proto import tfprof_pb2

    gpu = "/device:GPU:" + "9" * 20
    meta = {"ph": "M", "pid": 7, "name": "process_name", "args": {"name": gpu}}
    yield (
        6,
        "Chrome: process_name /device:GPU:<20 digits>",
        "c.trace.json",
        chrome([meta, x(pid=7)]),
    )
    src = next((ROOT / "sample_profiles" / "custom_loop").rglob("*.xplane.pb")).read_bytes()
    yield 7, "two U+FFFD names, one capture", (b"\xff.xplane.pb", b"\xfe.xplane.pb"), (src, src)
    steps = sorted((ROOT / "sample_profiles" / "tf1_graph" / "steps").iterdir())
    t0_us = 0  # the steps' own time, so the two captures are of one run
    for f in steps:
        rm = tfprof_pb2.RunMetadata()
        rm.ParseFromString(f.read_bytes())
        t0_us = max(t0_us, rm.step_stats.dev_stats[0].node_stats[0].all_start_micros)
    yield (
        7,
        "RunMetadata steps + localhost.trace.json",
        (*(f.name for f in steps), "localhost.trace.json"),
        (*(f.read_bytes() for f in steps), chrome([x(ts=t0_us)])),
    )
    yield (
        8,
        "a host's file removed between listing and its size",
        ("a.xplane.pb", "b.xplane.pb"),
        (src, src),
        "vanish:b.xplane.pb",
    )

    def tfprof(times=(1_700_000_000_000_000, 5), shape=(), device="/device:GPU:0"):
        prof = tfprof_pb2.ProfileProto()
        node = prof.nodes[1]
        node.name, node.op = "x", "MatMul"
        node.shape.extend(shape)
        ex = node.execs[1]
        ex.run_count, ex.all_start_micros = 1, times[0]
        ex.accelerator_execs[device].times.add().int64_values.extend(times)
        return prof.SerializeToString()

    yield 9, "tfprof: µs times overflowing ns", "m.tfprof", tfprof(times=(2**62, 5))
    yield 9, "tfprof: shape of 2**80 parameters", "m.tfprof", tfprof(shape=(2**40, 2**40))
    yield 9, "tfprof: device ordinal beyond int64", "m.tfprof", tfprof(device=gpu)

    def with_line_extra(extra: bytes) -> bytes:
        """xspace_bytes(3) with ``extra`` in its line's header (before the events)."""
        events = b"".join(field(4, number(1, 1) + number(2, i) + number(3, 5)) for i in range(3))
        line = number(1, 1) + field(2, b"worker") + extra + number(3, 1_000) + events
        md = field(4, number(1, 1) + field(2, number(1, 1) + field(2, b"op")))
        return field(1, number(1, 1) + field(2, b"/host:CPU") + field(3, line) + md)

    group = varint(9 << 3 | 3) + number(1, 1) + varint(9 << 3 | 4)
    for label, data in (
        ("field 2**32+4 in a line", with_line_extra(varint((2**32 + 4) << 3) + varint(1))),
        ("field 0 in a stat", xspace_bytes(1, event_extra=field(4, number(1, 7) + number(0, 5)))),
        ("unknown group in the XSpace", xspace_bytes(3, space_extra=group)),
        (
            "10-byte varint above 2**64 in a line header",
            with_line_extra(varint(3 << 3) + bytes([0x85] + [0x80] * 8) + b"\x02"),
        ),
    ):
        yield 10, f"walker vs protobuf: {label}", "w.xplane.pb", data
    n = (1 << 20) + 2  # more threads than a 20-bit line key holds, one small event each
    events = b",".join(
        b'{"ph":"X","ts":%d,"dur":1,"pid":1,"tid":%d}' % (i % 997, i) for i in range(n)
    )
    yield (
        15,
        "Chrome: 2**20+2 threads, one event each",
        "many.trace.json",
        b'{"traceEvents":[' + events + b"]}",
        lambda run, n=n: f"{len(run.lines):,} lines ({n:,} expected)",
    )


def issue_table() -> None:
    """Load every case of :func:`issue_cases` with the goal's memory budget
    (``max_memory_bytes`` = 1.5 GB: every reader bound follows it) and print outcome, peak
    RSS above the baseline, seconds, whether anything was written, and the goals met."""
    import tfprof_widgets as tw

    print(
        f"{'item':>4} {'case':48} {'seconds':>7} {'peak MB':>7} {'writes':>6} {'goals':>5}  outcome"
    )
    with tempfile.TemporaryDirectory() as tmp:
        work = pathlib.Path(tmp)
        for item, case, names, data, *extra in issue_cases(work):
            d = work / f"case{item}"
            d.mkdir(exist_ok=True)
            names = names if isinstance(names, tuple) else (names,)
            blobs = data if isinstance(data, tuple) and not isinstance(data[0], str) else (data,)
            for name, blob in zip(names, blobs):
                path = os.path.join(os.fsencode(d), name) if isinstance(name, bytes) else d / name
                if isinstance(blob, tuple):  # ("sparse", size): a file of zeros, not in memory
                    with open(path, "wb") as f:
                        f.truncate(blob[1])
                else:
                    with open(path, "wb") as f:
                        f.write(blob)
            target = d if len(names) > 1 else d / names[0]
            check = next((e for e in extra if callable(e)), None)
            vanish = next((e[7:] for e in extra if isinstance(e, str)), None)
            before = _tree(d)
            reset_peak()
            base = rss_kb("VmRSS")
            t0 = time.perf_counter()
            try:
                with _removed_when_sized(d / vanish if vanish else None):
                    run = tw.load(target, progress=False, max_memory_bytes=GOAL_PEAK_MB << 20)
                outcome = f"loaded: {len(run.events)} event(s), hosts {run.hosts}"
                if check is not None:
                    outcome += f"; {check(run)}"
                if run.warnings:
                    outcome += f"; warns: {run.warnings[0][:60]}"
            except tw.ProfileError as exc:
                named = str(exc.path).startswith(str(d))
                outcome = f"{type(exc).__name__}{'' if named else ' (NOT NAMING THE FILE)'}: "
                outcome += exc.problem[:70]
            except Exception as exc:  # noqa: BLE001 - the bench reports it as a failure
                outcome = f"BARE {type(exc).__name__}: {str(exc)[:60]}"
            secs = time.perf_counter() - t0
            peak = max(0, rss_kb("VmHWM") - base) / 1024
            writes = "none" if _tree(d) == before or vanish else "WROTE"
            ok = (
                secs <= GOAL_SECS
                and peak <= GOAL_PEAK_MB
                and writes == "none"
                and not outcome.startswith("BARE")
                and "NOT NAMING" not in outcome
            )
            print(
                f"{item:>4} {case[:48]:48} {secs:7.2f} {peak:7.0f} {writes:>6} "
                f"{'met' if ok else 'MISS':>5}  {outcome}"
            )
            for p in os.listdir(os.fsencode(d)):
                os.unlink(os.path.join(os.fsencode(d), p))


@contextlib.contextmanager
def _removed_when_sized(path: pathlib.Path | None):
    """Remove ``path`` when the loader asks for its size, as a writer replacing a run's
    files does between the listing and the read (item 8)."""
    if path is None:
        yield
        return
    real = os.path.getsize

    def getsize(p):
        if os.fspath(p) == str(path) and path.exists():
            path.unlink()
        return real(p)

    os.path.getsize = getsize
    try:
        yield
    finally:
        os.path.getsize = real


if __name__ == "__main__":
    issue_table()
