"""Hostile run directories and pod datasets (issue 30, round two): trace protos and tool data
that claim too much, symlinks and dot names, duplicate hosts, damaged manifests, non-UTF-8
file names, HTML and terminal escapes in names, NaN step times, a parallel load. Per case:
outcome, seconds, peak memory above the baseline, and whether anything was written outside
the case's own directory (the work directory's other cases, /tmp's and /dev/shm's IPC names).

    python benchmarks/bench_hostile_dirs.py         (bench_hostile.py --round-two-only)
"""

from __future__ import annotations

import json
import os
import pathlib
import shutil
import sys
import tempfile
import time

from fuzz_walkers import varint as _varint
from hostile_common import (
    GOAL_PEAK_MB,
    GOAL_SECS,
    ROOT,
    _cli,
    _gzip_stream,
    _tree,
    capture,
    reset_peak,
    rss_kb,
    shutil_rmtree,
)

import tfprof_widgets as tw
from tfprof_widgets.proto import tool_data_pb2, trace_events_pb2


def _load(target, cap: bool = True) -> str:
    import tfprof_widgets as tw

    run = tw.load(target, progress=False, max_memory_bytes=(GOAL_PEAK_MB << 20) if cap else None)
    out = f"loaded: {len(run.events)} event(s)"
    return out + (f"; warns: {run.warnings[0][-70:]}" if run.warnings else "")


def _round_two_loads(work: pathlib.Path):
    """(row, case, setup(dir) -> target, action(target) -> outcome) of the load cases."""

    def trace_proto(d):
        t = trace_events_pb2.Trace()
        t.devices[0].name = "/host:CPU"
        (d / "local.trace").write_bytes(t.SerializeToString() + b"\x22\x00" * 8_000_000)
        return d / "local.trace"

    def memory_bomb(d):
        body = b"a" * (1 << 24)
        data = _gzip_stream(b'{"memoryProfilePerAllocator": {}, "x": "', body, 128, b'"}')
        (d / "h.memory_profile.json.gz").write_bytes(data)
        return d / "h.memory_profile.json.gz"

    def long_name(d):
        head = b'{"traceEvents":[{"ph":"X","ts":1,"dur":1,"pid":1,"tid":1,"name":"'
        data = _gzip_stream(head, b"a" * (1 << 20), 500, b'"}]}')
        (d / "n.trace.json.gz").write_bytes(data)
        return d / "n.trace.json.gz"

    def tool_data(d):
        (d / "h.input_pipeline.pb").write_bytes(b"\x22\x00" * 4_000_000)
        recs = b"\x0a\x00" * 2_000_000
        (d / "h.tensorflow_stats.pb").write_bytes(b"\x22" + _varint(len(recs)) + recs)
        return d

    def string_stat(d):
        from test_hostile_xspace import field, number, xspace_bytes

        bomb = _gzip_stream(b"", b"\0" * (1 << 24), 64, b"")  # 1 GiB
        data = xspace_bytes(1, event_extra=field(4, number(1, 7) + field(8, bomb)))
        (d / "s.xplane.pb").write_bytes(data)
        return d / "s.xplane.pb"

    def chrome(events):
        def setup(d):
            (d / "c.trace.json").write_text(json.dumps({"traceEvents": events}))
            return d / "c.trace.json"

        return setup

    def be(ph, ts, **kw):
        return {"ph": ph, "ts": ts, "pid": 1, "tid": 1, **kw}

    yield 1, "TF 2.0 .trace: 8 M empty events (16 MB)", trace_proto, _load
    yield 10, "Chrome: E listed before its B", chrome([be("E", 20), be("B", 10, name="a")]), _load
    yield (
        11,
        "Chrome: B at 100, its E at 40 (+ one X)",
        chrome([be("B", 100, name="a"), be("E", 40), be("X", 1, dur=2, name="x")]),
        _load,
    )
    yield 14, "memory_profile.json.gz: 2 MB -> 2 GiB", memory_bomb, _load
    yield (
        15,
        "json.gz 0.5 MB: one 500 MB name (default budget)",
        long_name,
        (lambda t: _load(t, cap=False)),
    )
    yield 16, "tool data: 4 M step details + 2 M TF stats", tool_data, _load
    yield 17, "xplane: one string stat of 1 GiB gzip (4.7 MB)", string_stat, _load


def _round_two_actions(work: pathlib.Path):
    """The cases that are no plain load: conversions, pods, reports, the command line."""
    yield 2, "PNG with TFPROF_BROWSER=/bin/false", png, png_dead
    yield 3, "convert into an output whose hosts/ is a symlink", symlinked, convert_symlinked
    yield 4, "convert: recorded host names '..' and '.'", dots, convert_dots
    yield 5, "report: op names with <!--<script> etc.", html_names, report_of
    yield (
        6,
        "pod.sql over ds[12] beside ds1",
        globbed,
        lambda d: f"{sql_count(d / 'ds[12]')} events (5 expected)",
    )
    yield 7, "manifest listing a host twice", dup_host, open_dup
    yield 8, "manifest: t0_ns 'abc'", bad_manifest, open_pod
    yield 8, "manifest nested 10^5 deep", deep_manifest, open_pod
    yield 9, "file names w\\xe9 / v\\xe8 -> convert -> open", non_utf8, convert_open
    yield 12, "memory profile: peakBytesUsageLifetime 2**64-1", mem_bytes, mem_of
    yield 13, "tool-data step times NaN, -1e9 ms, inf", steps_nan, steps_of
    yield 18, "CLI: capture named x\\n\\e[2J...FAKE OK\\r", cli_name, cli_of
    yield 19, "parallel load of 8 hosts (2 workers)", parallel, parallel_load


# The helpers of _round_two_actions: each case's setup and action.
def sql_count(ds) -> int:
    with tw.open(ds) as pod:
        return int(pod.sql("SELECT count(*) AS n FROM events")["n"][0])


def symlinked(d):
    capture(d / "run", "w0")
    (d / "other").mkdir()
    (d / "other" / "precious.txt").write_text("keep")
    (d / "out").mkdir()
    (d / "out" / "hosts").symlink_to(d / "other")
    return d


def convert_symlinked(d):
    try:
        tw.convert(d / "run", d / "out", progress=False, workers=1)
        out = "CONVERTED"
    except tw.ProfileError as exc:
        out = f"{type(exc).__name__}: {exc.problem[:60]}"
    kept = os.listdir(d / "other") == ["precious.txt"]
    return out + ("; outside kept" if kept else "; OUTSIDE DELETED")


def dots(d):
    capture(d / "run", "..", "a.xplane.pb")
    capture(d / "run", ".", "b.xplane.pb")
    return d


def convert_dots(d):
    r = tw.convert(d / "run", d / "out", progress=False, workers=1)
    return f"{len(r.converted)} converted, {sql_count(d / 'out')} events in the pod"


def globbed(d):
    capture(d / "run", "w0")
    capture(d / "big", "w9", events=50)
    tw.convert(d / "run", d / "ds[12]", progress=False, workers=1)
    tw.convert(d / "big", d / "ds1", progress=False, workers=1)
    return d


def dup_host(d):
    capture(d / "run", "w0")
    capture(d / "run", "w1")
    tw.convert(d / "run", d / "ds", progress=False, workers=1)
    m = json.loads((d / "ds" / "manifest.json").read_text())
    m["hosts"].append(m["hosts"][0])
    (d / "ds" / "manifest.json").write_text(json.dumps(m))
    return d


def open_dup(d):
    import warnings

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with tw.open(d / "ds") as pod:
            n = sql_count(d / "ds")
            return f"hosts {pod.hosts}, {n} events, {len(caught)} warning(s)"


def bad_manifest(d):
    capture(d / "run", "w0")
    tw.convert(d / "run", d / "ds", progress=False, workers=1)
    m = json.loads((d / "ds" / "manifest.json").read_text())
    m["hosts"][0]["t0_ns"] = "abc"
    (d / "ds" / "manifest.json").write_text(json.dumps(m))
    return d


def deep_manifest(d):
    capture(d / "run", "w0")
    tw.convert(d / "run", d / "ds", progress=False, workers=1)
    deep = '{"format": ' + "[" * 100_000 + "]" * 100_000 + "}"
    (d / "ds" / "manifest.json").write_text(deep)
    return d


def open_pod(d):
    try:
        with tw.open(d / "ds") as pod:
            return f"OPENED {pod.hosts}"
    except tw.ProfileError as exc:
        return f"{type(exc).__name__}: {exc.problem[:60]}"


def non_utf8(d):
    capture(d / "run", "", b"w\xe9.xplane.pb")
    capture(d / "run", "", b"v\xe8.xplane.pb")
    return d


def convert_open(d):
    tw.convert(d / "run", d / "ds", progress=False, workers=1)
    with tw.open(d / "ds") as pod:
        return f"hosts {[h.encode('unicode_escape').decode() for h in pod.hosts]}, " + (
            f"{sql_count(d / 'ds')} events"
        )


def html_names(d):
    names = ["op<!--<script>", "b</script>", "c]]>&amp;", "<b>d"]
    events = [
        {"ph": "X", "name": n, "ts": 10 * i, "dur": 5, "pid": 1, "tid": 1}
        for i, n in enumerate(names * 2)
    ]
    (d / "h.trace.json").write_text(json.dumps({"traceEvents": events}))
    return d / "h.trace.json"


def report_of(target):
    import re

    from tfprof_widgets import report

    page = report.report_html(tw.load(target, progress=False))
    bodies = re.findall(r"<script[^>]*>(.*?)</script>", page, flags=re.S | re.I)
    raw = sum(b.count("<!--") + b.count("<script") for b in bodies)
    return f"{len(page) / 1e6:.1f} MB page, {raw} raw '<!--'/'<script' in its scripts"


def cli_name(d):
    (d / "x\n\x1b[2J\x1b[31mFAKE OK\x1b[0m\r.xplane.pb").write_bytes(b"\x0a\x05dam")
    return d


def cli_of(d):
    path = next(d.iterdir())
    out = _cli("summary", path)
    return out.encode("unicode_escape").decode()[:90]


def steps_nan(d):
    from tool_data_files import demo_run

    run_dir = demo_run("demo_GPU-input-bound", d)
    f = next(run_dir.glob("*.input_pipeline.pb"))
    msg = tool_data_pb2.InputPipelineAnalysisResult.FromString(f.read_bytes())
    for a, v in zip(msg.step_details, (float("nan"), -1e9, float("inf"))):
        g = tool_data_pb2.PerGenericStepDetails.FromString(a.value)
        g.step_time_ms = v
        a.value = g.SerializeToString()
    f.write_bytes(msg.SerializeToString())
    return run_dir


def steps_of(target):
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        run = tw.load(target, progress=False)
    t = run.steps["step_time_us"]
    o = run.overview_summary
    return (
        f"{len(t)} steps {t.min() / 1e3:,.1f}-{t.max() / 1e3:,.1f} ms; overview: "
        f"{o.n_steps} steps, min {o.step_time_ms_min:,.1f} ms"
    )


def mem_bytes(d):
    import gzip

    from tool_data_files import TOOLDATA

    src = next((TOOLDATA / "bert_tf2x").glob("*.memory_profile.json.gz"))
    doc = json.loads(gzip.decompress(src.read_bytes()))
    for prof in doc["memoryProfilePerAllocator"].values():
        prof["profileSummary"]["peakBytesUsageLifetime"] = str(2**64 - 1)
    (d / src.name).write_bytes(gzip.compress(json.dumps(doc).encode()))
    return d / src.name


def mem_of(target):
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        run = tw.load(target, progress=False)
    return f"peak_bytes_lifetime {run.memory_summary['peak_bytes_lifetime'].tolist()}"


def png(d):
    return d


def png_dead(d):
    import subprocess

    code = (
        "import time, warnings, plotly.graph_objects as go\n"
        "from tfprof_widgets.views.page import png as _png\n"
        "t = time.perf_counter(); got = []\n"
        "with warnings.catch_warnings(record=True) as w:\n"
        "    warnings.simplefilter('always')\n"
        "    _png.render_async(go.Figure(go.Bar(y=[1, 2])), got.append); _png.wait()\n"
        "print(f'{len(got)} image(s), {len(w)} warning(s), {time.perf_counter() - t:.1f} s')\n"
    )
    env = {**os.environ, "TFPROF_BROWSER": "/bin/false", "PYTHONPATH": str(ROOT)}
    try:
        p = subprocess.run(
            [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60
        )
        return p.stdout.strip() or p.stderr.strip()[-80:]
    except subprocess.TimeoutExpired:
        return "HUNG (60 s)"


def parallel(d):
    src = next((ROOT / "sample_profiles" / "keras_fit").rglob("*.xplane.pb"))
    for i in range(8):
        shutil.copy(src, d / f"h{i}.xplane.pb")
    return d


def parallel_load(d):
    """A load by 2 processes, from a pool it starts, and what of it is left as a name once
    it returns: in the temporary directory (this process's ``pymp-*``, the pool's private
    ``tfprof_widgets-*``) and in /dev/shm (the semaphores this process made, the segments
    of its workers). Only this process's own: other processes here make theirs."""
    from multiprocessing import active_children, process, synchronize

    from tfprof_widgets.readers.xspace import host_pool

    tmp = tempfile.gettempdir()

    def private_dirs() -> set[str]:
        return {os.path.join(tmp, n) for n in os.listdir(tmp) if n.startswith("tfprof_widgets-")}

    made, make_name = [], synchronize.SemLock._make_name

    def recorded() -> str:
        made.append(make_name())
        return made[-1]

    host_pool.shutdown()  # a pool an earlier case started would hide what starting one names
    had_pymp, before = process.current_process()._config.get("tempdir"), private_dirs()
    synchronize.SemLock._make_name = staticmethod(recorded)
    os.environ["TFPROF_WIDGETS_LOAD_WORKERS"] = "2"
    try:
        run = tw.load(d, progress=False)
    finally:
        os.environ.pop("TFPROF_WIDGETS_LOAD_WORKERS")
        synchronize.SemLock._make_name = staticmethod(make_name)
    workers = [p.pid for p in active_children()]
    pymp = process.current_process()._config.get("tempdir")
    left = sorted(private_dirs() - before) + ([pymp] if pymp and not had_pymp else [])
    left += [f"/dev/shm/sem.{n[1:]}" for n in made if os.path.exists(f"/dev/shm/sem.{n[1:]}")]
    prefixes = tuple(f"tfprof_widgets-{pid}-" for pid in workers)
    left += [f"/dev/shm/{n}" for n in os.listdir("/dev/shm") if prefixes and n.startswith(prefixes)]
    return (
        f"{len(run.hosts)} hosts, {len(workers)} worker, {len(made)} semaphores made; "
        f"left behind: {left[:2] or 'nothing'}"
    )


def round_two_table() -> None:
    """Every case of issue 30: outcome, seconds, peak RSS above the baseline, and whether
    anything was written outside the case's own directory (the work directory's other
    cases, /tmp's top level)."""
    print(
        f"{'row':>4} {'case (issue 30)':48} {'seconds':>7} {'peak MB':>7} {'outside':>7} "
        f"{'goals':>5}  outcome"
    )
    with tempfile.TemporaryDirectory() as tmp:
        work = pathlib.Path(tmp)
        cases = sorted([*_round_two_loads(work), *_round_two_actions(work)], key=lambda c: c[0])
        for i, (row, case, setup, action) in enumerate(cases):
            d = work / f"case{i}"
            d.mkdir()
            target = setup(d)
            outside_before = _outside_state(work, d)
            reset_peak()
            base = rss_kb("VmRSS")
            t0 = time.perf_counter()
            try:
                outcome = action(target)
            except Exception as exc:  # noqa: BLE001 - the bench reports it
                import tfprof_widgets as tw

                kind = "" if isinstance(exc, tw.ProfileError) else "BARE "
                outcome = f"{kind}{type(exc).__name__}: {getattr(exc, 'problem', exc)}"[:110]
            secs = time.perf_counter() - t0
            peak = max(0, rss_kb("VmHWM") - base) / 1024
            after = _outside_state(work, d)
            outside = "none" if after == outside_before else "WROTE"
            if outside == "WROTE" and os.environ.get("BENCH_HOSTILE_DEBUG"):
                print("   ", [sorted(set(map(str, b)) ^ set(map(str, a)))[:3]
                            for b, a in zip(outside_before, after)])  # fmt: skip
            ok = (
                secs <= GOAL_SECS
                and peak <= GOAL_PEAK_MB
                and outside == "none"
                and not outcome.startswith("BARE")
                and not any(w in outcome for w in ("DELETED", "HUNG", "CONVERTED", "OPENED"))
            )
            print(
                f"{row:>4} {case[:48]:48} {secs:7.2f} {peak:7.0f} {outside:>7} "
                f"{'met' if ok else 'MISS':>5}  {outcome[:120]}"
            )
            shutil_rmtree(d)


def _outside_state(work: pathlib.Path, own: pathlib.Path):
    """Everything in the work directory but the case's own, and what a load's IPC may leave
    in /tmp (``pymp-*``) and /dev/shm (semaphores, tfprof_widgets' shared memory)."""
    tree = {k: v for k, v in _tree(work).items() if not k.startswith(own.name)}
    # Only multiprocessing's own: other processes on this machine use /tmp too.
    tmp = [n for n in os.listdir(tempfile.gettempdir()) if n.startswith("pymp-")]
    shm = os.listdir("/dev/shm") if os.path.isdir("/dev/shm") else []
    shm = [n for n in shm if n.startswith(("sem.", "tfprof_widgets-"))]
    return tree, sorted(tmp), sorted(shm)


if __name__ == "__main__":
    round_two_table()
