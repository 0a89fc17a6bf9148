"""Hostile inputs, round two (issue 30): no crash, no hang, no file destroyed outside the
output. One test (or a few) per row of the issue; the memory peaks of the big cases are in
``benchmarks/bench_hostile.py --issue-only``, at sizes a unit test cannot afford."""

from __future__ import annotations

import json
import re

import pytest
from test_hostile_xspace import varint as _varint

import tfprof_widgets as tw


def chrome_file(tmp_path, events, name="c.trace.json"):
    path = tmp_path / name
    path.write_text(json.dumps({"traceEvents": events}))
    return path


# -- row 5: JSON inside <script> ----------------------------------------------------------------
HTML_SEQUENCES = ("<!--", "-->", "<script>", "</script>", "</SCRIPT >", "<![CDATA[", "]]>",
                  "&amp;", "&#60;", "<b>", "\u2028", "\u2029", "<", ">", "&")  # fmt: skip


def test_every_html_sequence_in_every_name_stays_inside_its_script(tmp_path):
    """Op names ending in ``<!--<script>`` once put the page's parser in a state that swallowed
    the rest of the report: no script body may hold a raw ``<``, ``>`` or ``&`` of a name."""
    from tfprof_widgets import report

    names = [f"op{i}{s}" for i, s in enumerate(HTML_SEQUENCES)] + ["x" + "".join(HTML_SEQUENCES)]
    events = [
        {"ph": "X", "name": n, "ts": 10 * i, "dur": 5, "pid": 1, "tid": 1, "args": {n: n}}
        for i, n in enumerate(names * 2)
    ]
    run = tw.load(chrome_file(tmp_path, events), progress=False)
    page = report.report_html(run)
    bodies = re.findall(r"<script[^>]*>(.*?)</script>", page, flags=re.S | re.I)
    data = [b for b in bodies if "op0" in b]
    assert data, "the names are in the page's scripts"
    for body in data:
        for s in ("<!--", "<script", "</script", "-->", "]]>", "&amp;", "<b>"):
            assert s not in body.lower()
    assert len(re.findall(r"<section id=", page)) == len(report.report_views(run))
    decoded = [json.loads(b) for b in data if b.lstrip().startswith("{")]
    assert decoded and any(names[-1] in json.dumps(d, ensure_ascii=False) for d in decoded)


# -- row 18: control characters in a file name on the command line -----------------------------
def test_cli_shows_control_characters_of_a_file_name_escaped_on_one_line(tmp_path, capsys):
    from tfprof_widgets import cli

    path = tmp_path / "x\n\x1b[2J\x1b[31mFAKE OK\x1b[0m\r\u202e.xplane.pb"
    path.write_bytes(b"\x0a\x05damaged")
    assert cli.main(["summary", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.endswith("\n")
    assert not any(c in err[:-1] for c in "\x1b\r\n\u202e")
    assert "\\x1b[2J" in err and "\\r" in err and "\\n" in err


# -- rows 10 and 11: Chrome B/E slices paired by timestamp --------------------------------------
def be(ph, ts, **kw):
    return {"ph": ph, "ts": ts, "pid": 1, "tid": 1, **kw}


def test_chrome_slices_listed_end_first_pair_by_timestamp(tmp_path):
    """A trace need not be sorted: an E listed before its B is paired by time, as Perfetto
    and chrome://tracing pair it (it was a NoEventsError)."""
    events = [be("E", 20), be("E", 90), be("B", 10, name="a"), be("B", 50, name="b")]
    run = tw.load(chrome_file(tmp_path, events), progress=False)
    got = run.events.sort_values("start_us")[["name", "start_us", "dur_us"]]
    assert got.values.tolist() == [["a", 0.0, 10.0], ["b", 40.0, 40.0]]
    assert not run.warnings


def test_chrome_nested_and_back_to_back_slices_still_pair_in_file_order_at_equal_times(tmp_path):
    events = [be("B", 0, name="a"), be("B", 1, name="b"), be("E", 5), be("B", 5, name="c"),
              be("E", 7), be("E", 9)]  # fmt: skip
    run = tw.load(chrome_file(tmp_path, events), progress=False)
    got = run.events.sort_values(["start_us", "name"])[["name", "dur_us"]].values.tolist()
    assert got == [["a", 9.0], ["b", 4.0], ["c", 2.0]]


def test_chrome_end_before_its_begin_is_warned_or_refused_never_a_zero_slice(tmp_path):
    """B at 100, its E at 40: was silently a slice of 0 µs."""
    events = [be("B", 100, name="a"), be("E", 40), be("X", 1, dur=2, name="x")]
    run = tw.load(chrome_file(tmp_path, events), progress=False)
    assert run.events["name"].tolist() == ["x"]
    assert any("end earlier than its begin" in w for w in run.warnings)
    with pytest.raises(tw.CorruptProfileError, match="earlier than its begin") as exc:
        tw.load(chrome_file(tmp_path, events[:2], "lone.trace.json"), progress=False)
    assert exc.value.path.endswith("lone.trace.json")


# -- row 2: a view's PNG when the browser kaleido drives dies -----------------------------------
_DEAD_BROWSER = """
import time, warnings
import plotly.graph_objects as go
from tfprof_widgets.views.page import png as _png
t0 = time.perf_counter()
got = []
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    for _ in range(2):
        _png.render_async(go.Figure(go.Bar(y=[1, 2])), got.append)
    _png.wait()
print(len(got), len(caught), round(time.perf_counter() - t0, 1))
print(caught[0].message if caught else "")
"""


def test_a_browser_that_dies_at_start_costs_the_image_not_the_cell(tmp_path):
    """kaleido's server thread dies with the browser and its callers then waited forever:
    the image is given up within seconds, with one warning."""
    import os
    import subprocess
    import sys

    pytest.importorskip("kaleido")
    env = {**os.environ, "TFPROF_BROWSER": "/bin/false", "TFPROF_WIDGETS_PNG": "1"}
    proc = subprocess.run(
        [sys.executable, "-c", _DEAD_BROWSER], env=env, capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    images, warned, seconds = proc.stdout.splitlines()[0].split()
    assert (images, warned) == ("0", "1") and float(seconds) < 15
    assert "failed or stopped" in proc.stdout
    assert "Traceback" not in proc.stderr


# -- row 17: one string stat of a GB --------------------------------------------------------------
@pytest.mark.parametrize("walker_kind", ["c_walker", "protobuf_walk"])
def test_a_compressed_string_stat_over_the_bound_is_kept_cut_with_a_warning(
    tmp_path, monkeypatch, walker_kind
):
    """An xplane of 4.7 MB held one stat of 1 GiB of text (2.2 GB peak): past a fixed bound
    (64 MB; 64 KB here) a stat's text is cut, and the run says so."""
    import gzip

    from test_hostile_xspace import field, number, xspace_bytes

    from tfprof_widgets.readers import limits
    from tfprof_widgets.readers.xspace import reader as xspace

    if walker_kind == "protobuf_walk":
        monkeypatch.setattr(xspace, "_wire", None)
    elif xspace._wire is None:
        pytest.skip("the C wire walker is not built here")
    monkeypatch.setattr(limits, "MAX_STAT_TEXT_BYTES", 64 << 10)
    blob = gzip.compress(b"x" * (1 << 20))
    path = tmp_path / "bomb.xplane.pb"
    path.write_bytes(xspace_bytes(2, event_extra=field(4, number(1, 7) + field(8, blob))))
    run = tw.load(path, progress=False)
    text = run.stat("blob").dropna()
    assert len(text) == 2 and (text.str.len() == 64 << 10).all()
    assert any("only their first 64.0 KB are kept" in w for w in run.warnings)


# -- row 15: one JSON string of hundreds of MB --------------------------------------------------
def test_a_json_string_over_64_mb_is_refused_before_it_is_decoded(tmp_path):
    """0.5 MB of .json.gz held one 500 MB name (2.6 GB peak): a string over 64 MB is refused
    by the C decoder as it meets it (the peak is in bench_hostile.py)."""
    from tfprof_widgets.readers.chrome import decode

    if decode._chrome is None:
        pytest.skip("the C JSON decoder is not built here")
    path = tmp_path / "name.trace.json"
    with open(path, "wb") as f:
        f.write(b'{"traceEvents":[{"ph":"X","ts":1,"dur":1,"pid":1,"tid":1,"name":"')
        f.write(b"a" * ((64 << 20) + 1))
        f.write(b'"}]}')
    with pytest.raises(tw.ProfileTooLargeError, match="string longer than 64 MB") as exc:
        tw.load(path, progress=False)
    assert exc.value.path == str(path)


# -- row 12: byte counts beyond their columns ------------------------------------------------------
def test_xspace_byte_count_stats_out_of_range_are_dropped_with_a_warning(tmp_path):
    """A uint64-max peak_bytes_in_use was a peak of -1 bytes; int64 extremes, NaN and inf
    were as wrong. Each is dropped (read as the stat missing), with a warning."""
    import numpy as np
    from xspace_builder import XSpaceBuilder

    b = XSpaceBuilder("h")
    line = b.plane("/device:GPU:0", 1).line("Memory", 1)
    bad = [np.uint64(2**64 - 1), np.int64(-(2**63)), np.int64(2**63 - 1), np.nan, np.inf]
    for i, v in enumerate([*bad, 4096]):
        stats = {"allocator_name": "GPU_0_bfc", "bytes_allocated": 4096 * (i + 1),
                 "bytes_reserved": 0, "peak_bytes_in_use": v, "requested_bytes": 8,
                 "allocation_bytes": 8, "addr": i + 1}  # fmt: skip
        line.event("MemoryAllocation", i * 10, 1, stats)
    last = {**stats, "peak_bytes_in_use": np.uint64(2**64 - 1)}
    line.event("MemoryAllocation", 100, 1, last)
    path = tmp_path / "m.xplane.pb"
    path.write_bytes(b.bytes())
    run = tw.load(path, progress=False)
    assert run.memory["peak_bytes_in_use"].tolist() == [0, 0, 0, 0, 0, 4096, 0]
    assert (run.memory_summary["peak_bytes_lifetime"] >= 0).all()
    assert any("6 value(s) of the stat 'peak_bytes_in_use'" in w for w in run.warnings)


def test_tool_data_byte_counts_out_of_range_read_as_0_with_a_warning(tmp_path):
    import gzip

    from tool_data_files import TOOLDATA

    src = next((TOOLDATA / "bert_tf2x").glob("*.memory_profile.json.gz"))
    doc = json.loads(gzip.decompress(src.read_bytes()))
    name, prof = next(iter(doc["memoryProfilePerAllocator"].items()))
    prof["profileSummary"]["peakBytesUsageLifetime"] = str(2**64 - 1)
    prof["memoryProfileSnapshots"][0]["aggregationStats"]["peakBytesInUse"] = str(-(2**63))
    path = tmp_path / src.name
    path.write_bytes(gzip.compress(json.dumps(doc).encode()))
    with pytest.warns(UserWarning, match="no byte count"):
        run = tw.load(path, progress=False)
    summary = run.memory_summary.set_index("allocator").loc[name]
    # XProf's lifetime figure, refused, reads 0; the one we show is the counter's largest
    # reading in the snapshots (a lifetime peak at least every reading it summarises).
    assert summary["peak_bytes_lifetime_xprof"] == 0
    mine = run.memory[run.memory["allocator"].astype(str) == name]
    assert summary["peak_bytes_lifetime"] >= mine["heap_allocated_bytes"].max()
    assert (run.memory["peak_bytes_in_use"] >= 0).all()
    assert any("peakBytesUsageLifetime are no byte count" in w for w in run.warnings)
    assert any("peakBytesInUse are no byte count" in w for w in run.warnings)


# -- row 13: tool-data step times NaN, -1e9 ms, inf --------------------------------------------
def test_tool_data_steps_that_are_no_time_are_left_out_and_every_figure_agrees(tmp_path):
    from tool_data_files import demo_run

    from tfprof_widgets.proto import tool_data_pb2 as pb

    run_dir = demo_run("demo_GPU-input-bound", tmp_path)
    f = next(run_dir.glob("*.input_pipeline.pb"))
    msg = pb.InputPipelineAnalysisResult.FromString(f.read_bytes())
    n = len(msg.step_details)
    for a, v in zip(msg.step_details, (float("nan"), -1e9, float("inf"))):
        g = pb.PerGenericStepDetails.FromString(a.value)
        g.step_time_ms = v
        a.value = g.SerializeToString()
    f.write_bytes(msg.SerializeToString())
    with pytest.warns(UserWarning, match="3 of 11 steps"):
        run = tw.load(run_dir, progress=False)
    times = run.steps["step_time_us"]
    assert len(times) == n - 3 and times.between(0, 1e12).all()
    o = run.overview_summary
    assert o.n_steps == n - 3
    assert o.step_time_ms_min == pytest.approx(times.min() / 1e3)
    assert o.step_time_ms_max == pytest.approx(times.max() / 1e3)
    assert o.step_time_ms_avg == pytest.approx(times.mean() / 1e3)


# -- rows 1, 14 and 16: the memory budget of the protobuf and tool-data readers -------------------


def test_a_tf20_trace_of_many_empty_events_is_refused_within_the_budget(tmp_path):
    """16 MB of 8 M empty events crashed under a 6 GiB limit (6.8 GB without one): the events
    are counted before protobuf builds them (here 200 k against a 20 MB budget)."""
    from tfprof_widgets.proto import trace_events_pb2 as pb

    t = pb.Trace()
    t.devices[0].name = "/host:CPU"
    path = tmp_path / "local.trace"
    path.write_bytes(t.SerializeToString() + b"\x22\x00" * 200_000)
    with pytest.raises(tw.ProfileTooLargeError, match="200,00. protobuf messages") as exc:
        tw.load(path, progress=False, max_memory_bytes=20_000_000)
    assert exc.value.path == str(path)
    assert len(tw.load(path, progress=False, max_memory_bytes=400_000_000).events) == 200_000


def test_the_memory_available_counts_an_address_space_limit():
    """Under ``ulimit -v`` protobuf crashed instead of raising: the limit is part of what
    is available."""
    import subprocess
    import sys

    code = (
        "import resource; resource.setrlimit(resource.RLIMIT_AS, (6 << 30, 6 << 30));"
        "from tfprof_widgets.readers.limits import available_memory_bytes as a; print(a())"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert 0 < int(out.stdout) < 6 << 30


def test_tool_data_keeps_the_memory_cap(tmp_path):
    """4 M empty step details and 2 M empty TF-stats records (12 MB) loaded at 1.7 GB
    whatever max_memory_bytes said: the host's files are counted together, under the cap."""
    (tmp_path / "h.input_pipeline.pb").write_bytes(b"\x22\x00" * 40_000)
    recs = b"\x0a\x00" * 20_000
    (tmp_path / "h.tensorflow_stats.pb").write_bytes(b"\x22" + _varint(len(recs)) + recs)
    with pytest.raises(tw.ProfileTooLargeError, match="60,00. protobuf messages") as exc:
        tw.load(tmp_path, progress=False, max_memory_bytes=15_000_000)
    assert exc.value.path == str(tmp_path / "h.input_pipeline.pb")


def test_a_memory_profile_gzip_bomb_is_refused_while_inflating(tmp_path):
    """2 MB of gzip inflating to 2 GiB was refused only after all of it was inflated: it is
    inflated in bounded steps, as Chrome traces are (at most 1/25 of the memory there is)."""
    import zlib

    comp = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    head = b'{"memoryProfilePerAllocator": {}, "x": "'
    body = b"".join(comp.compress(b"a" * (1 << 20)) for _ in range(16))
    path = tmp_path / "h.memory_profile.json.gz"
    path.write_bytes(comp.compress(head) + body + comp.compress(b'"}') + comp.flush())
    with pytest.raises(tw.ProfileTooLargeError, match="expands to more than") as exc:
        tw.load(path, progress=False, max_memory_bytes=100_000_000)
    assert exc.value.path == str(path)


def test_a_tf20_trace_read_in_runs_of_events_equals_the_whole(tmp_path, monkeypatch):
    """The events are parsed a run at a time (one run's protobuf objects alive at once, the
    whole file's took 850 bytes per event): runs of 7 events give the same tables, devices
    listed after the events and a device listed twice (the last wins) included."""
    from tfprof_widgets.proto import trace_events_pb2 as pb
    from tfprof_widgets.readers.tool_data import trace_proto

    t = pb.Trace()
    for i in range(50):
        e = t.trace_events.add(device_id=i % 3, resource_id=i % 2, name=f"op{i % 5}")
        e.timestamp_ps, e.duration_ps = 1000 * i, 500
        e.args["long name"] = f"n{i}"
        if i % 4 == 0:
            e.args["id"] = str(i)
    head = pb.Trace()
    head.devices[0].name = "/host:CPU"
    head.devices[1].name = "wrong"
    tail = pb.Trace()
    tail.devices[1].name = "/device:GPU:0/stream:7"
    tail.devices[2].name = "/device:GPU:0/stream:8"
    tail.devices[2].resources[1].name = "lane"
    path = tmp_path / "local.trace"
    path.write_bytes(head.SerializeToString() + t.SerializeToString() + tail.SerializeToString())
    whole = tw.load(path, progress=False)
    monkeypatch.setattr(trace_proto, "CHUNK_EVENTS", 7)
    runs = tw.load(path, progress=False)
    pd = pytest.importorskip("pandas")
    pd.testing.assert_frame_equal(whole.events, runs.events)
    pd.testing.assert_frame_equal(whole.lines, runs.lines)
    pd.testing.assert_frame_equal(whole.event_stats, runs.event_stats)
    assert "/device:GPU:0" in whole.planes["plane"].tolist()
    assert "wrong" not in whole.planes["plane"].tolist()


# -- row 19: a parallel load leaves nothing in /tmp or /dev/shm ---------------------------------
PARALLEL_LOAD_SCRIPT = """
import json, multiprocessing, os, sys
from multiprocessing import synchronize

made = []  # every named semaphore this process makes: others on the machine make theirs
_make_name = synchronize.SemLock._make_name
def recorded():
    made.append(_make_name())
    return made[-1]
synchronize.SemLock._make_name = staticmethod(recorded)

import tfprof_widgets as tw
from test_walkers_agree import assert_same

os.environ["TFPROF_WIDGETS_LOAD_WORKERS"] = "1"
serial = tw.load(sys.argv[1], progress=False)
os.environ["TFPROF_WIDGETS_LOAD_WORKERS"] = "2"
parallel = tw.load(sys.argv[1], progress=False)
assert_same(parallel, serial)
assert parallel.hosts == serial.hosts and len(parallel.hosts) == 8
workers = [p.pid for p in multiprocessing.active_children()]
print(json.dumps({
    "workers": len(workers),
    "semaphores": len(made),
    "semaphores_left": [n for n in made if os.path.exists("/dev/shm/sem." + n.lstrip("/"))],
    "tmp_left": os.listdir(os.environ["TMPDIR"]),
    "segments_left": [n for n in os.listdir("/dev/shm")
                      if n.startswith(tuple(f"tfprof_widgets-{p}-" for p in workers))],
}))
"""


def test_a_parallel_load_leaves_nothing_in_tmp_or_dev_shm(tmp_path):
    """A load by worker processes once left the fork server's listener in ``/tmp/pymp-*``
    and the pool's named semaphores ``/dev/shm/sem.mp-*`` until exit (and sent each host's
    columns through a named ``/dev/shm`` segment): once it returns, nothing of it may
    remain as a name, and it is the serial load. In a process of its own, with a temporary
    directory of its own, so that only its own names are counted."""
    import os
    import shutil
    import subprocess
    import sys
    import tempfile

    from conftest import ROOT

    sample = ROOT / "sample_profiles" / "keras_fit"
    src = next(sample.rglob("*.xplane.pb"), None)
    if src is None:
        pytest.skip("sample_profiles/keras_fit is absent")
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    for i in range(8):
        shutil.copy(src, run_dir / f"h{i}.xplane.pb")
    path = os.pathsep.join([str(ROOT), str(ROOT / "tests"), str(ROOT / "tests" / "readers")])
    # (short: a socket's path must fit in 107 bytes, which pytest's tmp_path may not leave)
    tmp = tempfile.mkdtemp(prefix="tw-row19-")
    try:
        proc = subprocess.run(
            [sys.executable, "-c", PARALLEL_LOAD_SCRIPT, str(run_dir)],
            env={**os.environ, "PYTHONPATH": path, "TMPDIR": tmp},
            capture_output=True, text=True, timeout=180, cwd=tmp_path,
        )  # fmt: skip
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    assert proc.returncode == 0, proc.stderr[-3000:]
    got = json.loads(proc.stdout.strip().splitlines()[-1])
    assert got["workers"] == 1 and got["semaphores"] > 0, proc.stderr  # the pool was used
    assert got["semaphores_left"] == []
    assert got["tmp_left"] == []
    assert got["segments_left"] == []
    assert "Traceback" not in proc.stderr and "leaked" not in proc.stderr
