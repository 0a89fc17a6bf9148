"""Chrome trace-event JSON (legacy TF profiler output, other tools' exports)."""

import gzip
import json

import numpy as np
import pytest

import tfprof_widgets as tw

TRACE = {
    "displayTimeUnit": "ns",
    "traceEvents": [
        {"ph": "M", "pid": 1, "name": "process_name", "args": {"name": "/host:CPU"}},
        {"ph": "M", "pid": 1, "tid": 7, "name": "thread_name", "args": {"name": "python"}},
        {
            "ph": "M",
            "pid": 2,
            "name": "process_name",
            "args": {"name": "/job:localhost/replica:0/task:0/device:GPU:0 Compute"},
        },
        {
            "ph": "X",
            "pid": 1,
            "tid": 7,
            "name": "train",
            "ts": 1000.0,
            "dur": 500.0,
            "args": {"step_num": 0, "_r": 1},
        },
        {
            "ph": "X",
            "pid": 1,
            "tid": 7,
            "name": "MatMul",
            "ts": 1100.5,
            "dur": 100.25,
            "args": {"op": "dense/MatMul", "flops": 1.5e9},
        },
        {"ph": "B", "pid": 1, "tid": 7, "name": "outer", "ts": 1600.0},
        {"ph": "E", "pid": 1, "tid": 7, "ts": 1650.0},
        {"ph": "i", "pid": 1, "tid": 7, "name": "marker", "ts": 1700.0, "s": "t"},
        {"ph": "X", "pid": 2, "tid": 0, "name": "volta_sgemm", "ts": 1120.0, "dur": 60.0},
        {"ph": "C", "pid": 2, "name": "memory", "ts": 1130.0, "args": {"bytes": 4096}},
        {"ph": "s", "pid": 1, "tid": 7, "name": "flow", "ts": 1100.0, "id": 1},
        {"ph": "f", "pid": 2, "tid": 0, "name": "flow", "ts": 1120.0, "id": 1},
    ],
}


@pytest.fixture(params=["plain", "gz", "list"])
def trace_file(request, tmp_path):
    if request.param == "plain":
        p = tmp_path / "host1.trace.json"
        p.write_text(json.dumps(TRACE))
    elif request.param == "gz":
        p = tmp_path / "host1.trace.json.gz"
        p.write_bytes(gzip.compress(json.dumps(TRACE).encode()))
    else:  # the JSON Array Format: a bare list of events
        p = tmp_path / "host1.json"
        p.write_text(json.dumps(TRACE["traceEvents"]))
    return p


def test_events_planes_and_lines(trace_file):
    run = tw.load(trace_file)
    ev = run.events
    assert run.hosts == ["host1"]
    assert len(ev) == 6  # X x3, B/E pair, instant, counter; flows are not events
    assert set(run.planes["plane"].astype(str)) == {
        "/host:CPU",
        "/job:localhost/replica:0/task:0/device:GPU:0 Compute",
    }
    kinds = dict(zip(run.planes["plane"].astype(str), run.planes["device_kind"].astype(str)))
    assert kinds["/job:localhost/replica:0/task:0/device:GPU:0 Compute"] == "GPU"
    e = ev.set_index("name")
    assert e.loc["train", "start_us"] == 0.0
    assert e.loc["MatMul", "start_us"] == pytest.approx(100.5)
    assert e.loc["MatMul", "dur_us"] == pytest.approx(100.25)
    assert e.loc["outer", "dur_us"] == pytest.approx(50.0)
    assert e.loc["volta_sgemm", "start_us"] == pytest.approx(120.0)
    assert e.loc["marker", "dur_us"] == 0.0
    assert e.loc["train", "line"] == "python"
    assert any("2 flow events" in w for w in run.warnings)


def test_args_become_stats_and_steps(trace_file):
    run = tw.load(trace_file)
    assert run.stat("op").dropna().tolist() == ["dense/MatMul"]
    assert run.stat("flops").dropna().tolist() == [1.5e9]
    assert run.stat("bytes").dropna().tolist() == [4096]
    ev = run.events
    # train is a step marker (_r=1, step_num): MatMul nested in it joins its group.
    assert ev.loc[ev["name"] == "MatMul", "step"].tolist() == [0]
    assert np.isnan(ev.loc[ev["name"] == "outer", "group_id"].astype(float)).all()


def test_epoch_microsecond_timestamps_keep_precision(tmp_path):
    base = 1_700_000_000_000_000.0  # epoch µs
    tr = {
        "traceEvents": [
            {"ph": "X", "pid": 1, "tid": 1, "name": "a", "ts": base + 0.001, "dur": 0.002},
            {"ph": "X", "pid": 1, "tid": 1, "name": "b", "ts": base + 5.5, "dur": 1.0},
        ]
    }
    p = tmp_path / "t.trace.json"
    p.write_text(json.dumps(tr))
    ev = tw.load(p).events.set_index("name")
    assert ev.loc["b", "start_us"] == pytest.approx(5.499, abs=2e-3)
