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
    # A TF1-style device process ("<device> Compute") is that device's plane.
    assert set(run.planes["plane"].astype(str)) == {"/host:CPU", "/device:GPU:0"}
    kinds = dict(zip(run.planes["plane"].astype(str), run.planes["device_kind"].astype(str)))
    assert kinds["/device:GPU:0"] == "GPU"
    e = ev.set_index("name")
    assert e.loc["train", "start_us"] == 0.0
    assert e.loc["MatMul", "start_us"] == pytest.approx(100.5)
    assert e.loc["MatMul", "dur_us"] == pytest.approx(100.25)
    assert e.loc["outer", "dur_us"] == pytest.approx(50.0)
    assert e.loc["volta_sgemm", "start_us"] == pytest.approx(120.0)
    assert e.loc["marker", "dur_us"] == 0.0
    assert e.loc["train", "line"] == "python"
    assert e.loc["memory", "line"] == "Counters"
    # The flow from the slice enclosing its start (train) to the kernel (f: the next slice).
    assert run.stat("_p").dropna().index.tolist() == [ev.index[ev["name"] == "train"][0]]
    assert run.stat("_c").dropna().index.tolist() == [ev.index[ev["name"] == "volta_sgemm"][0]]


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


def write(tmp_path, doc, name="h.trace.json"):
    p = tmp_path / name
    p.write_text(doc if isinstance(doc, str) else json.dumps(doc))
    return p


def X(name, ts, dur=1.0, pid=1, tid=1, **kw):
    return {"ph": "X", "name": name, "ts": ts, "dur": dur, "pid": pid, "tid": tid, **kw}


def test_trailing_empty_object_only_at_the_end(tmp_path):
    """TF's trace-viewer writer ends traceEvents with {}: accepted there, nowhere else."""
    text = json.dumps({"traceEvents": [X("a", 1)]})[:-2] + ",{}]}"
    assert len(tw.load(write(tmp_path, text)).events) == 1
    text = json.dumps({"traceEvents": [X("a", 1), {}, X("b", 2)]})
    with pytest.raises(tw.CorruptProfileError, match=r"traceEvents\[1\] has no 'ph'"):
        tw.load(write(tmp_path, text))
    text = json.dumps({"traceEvents": [X("a", 1), {"name": "x"}]})
    with pytest.raises(tw.CorruptProfileError, match=r"traceEvents\[1\] has no 'ph'"):
        tw.load(write(tmp_path, text))


def test_ids_of_different_json_types_stay_apart(tmp_path):
    run = tw.load(write(tmp_path, {"traceEvents": [X("a", 1, pid=1), X("b", 2, pid="1")]}))
    assert sorted(run.planes["plane"].astype(str)) == ["1", "pid 1"]
    run = tw.load(write(tmp_path, {"traceEvents": [X("a", 1, tid=7), X("b", 2, tid="7")]}))
    assert len(run.lines) == 2


def test_async_pairs_in_timestamp_order_on_the_async_line(tmp_path):
    events = [
        {"ph": "F", "pid": 1, "tid": 2, "cat": "c", "id": "0x1", "name": "req", "ts": 30},
        {"ph": "S", "pid": 1, "tid": 2, "cat": "c", "id": "0x1", "name": "req", "ts": 10},
        {"ph": "T", "pid": 1, "tid": 2, "cat": "c", "id": "0x1", "name": "req", "ts": 20},
        {"ph": "b", "pid": 1, "tid": 2, "cat": "c", "id": 5, "name": "n", "ts": 11},
        {"ph": "b", "pid": 1, "tid": 2, "cat": "c", "id": 5, "name": "n", "ts": 12},
        {"ph": "e", "pid": 1, "tid": 2, "cat": "c", "id": 5, "name": "n", "ts": 13},
        {"ph": "e", "pid": 1, "tid": 2, "cat": "c", "id": 5, "name": "n", "ts": 19},
        X("x", 0, 40, tid=2),
    ]
    run = tw.load(write(tmp_path, {"traceEvents": events}))
    ev = run.events
    req = ev[(ev["name"] == "req") & (ev["dur_us"] > 0)]
    assert req["dur_us"].tolist() == [20.0] and (req["line"] == "Async").all()
    assert sorted(ev.loc[ev["name"] == "n", "dur_us"]) == [1.0, 8.0]  # nested, matched LIFO
    assert run.stat("ph").dropna().astype(str).value_counts().to_dict() == {"b": 2, "S": 1, "T": 1}


def test_begin_end_pairs_ignore_an_end_with_nothing_open(tmp_path):
    events = [
        {"ph": "E", "pid": 1, "tid": 1, "ts": 0},
        {"ph": "B", "pid": 1, "tid": 1, "name": "outer", "ts": 1, "args": {"a": 1}},
        {"ph": "B", "pid": 1, "tid": 1, "name": "inner", "ts": 2},
        {"ph": "E", "pid": 1, "tid": 1, "ts": 3},
        {"ph": "E", "pid": 1, "tid": 1, "ts": 9, "args": {"b": 2}},
        {"ph": "B", "pid": 1, "tid": 1, "name": "open", "ts": 10},
    ]
    run = tw.load(write(tmp_path, {"traceEvents": events}))
    ev = run.events.set_index("name")
    assert ev["dur_us"].to_dict() == {"outer": 8.0, "inner": 1.0}
    assert run.stat("a").dropna().tolist() == [1] and run.stat("b").dropna().tolist() == [2]
    assert any("1 begin events" in w for w in run.warnings)
    assert any("1 end events" in w for w in run.warnings)


KINETO = {
    "schemaVersion": 1,
    "deviceProperties": [{"id": 0, "name": "NVIDIA H100", "numSms": 132, "computeMajor": 9}],
    "baseTimeNanoseconds": 1_700_000_000_000_000_000,
    "traceEvents": [
        {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#3", "pid": 100, "tid": 100,
         "ts": 0.0, "dur": 100.0},
        {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 100, "tid": 100,
         "ts": 10.0, "dur": 5.0, "args": {"correlation": 42, "cbid": 211}},
        {"ph": "X", "cat": "kernel", "name": "volta_sgemm", "pid": 0, "tid": 7, "ts": 20.5,
         "dur": 30.25, "args": {"device": 0, "stream": 7, "correlation": 42,
                                 "registers per thread": 64, "shared memory": 1024,
                                 "grid": [8, 2, 1], "block": [256, 1, 1],
                                 "est. achieved occupancy %": 50}},
        {"ph": "X", "cat": "gpu_user_annotation", "name": "fwd", "pid": 0, "tid": 7,
         "ts": 19.5, "dur": 40.0},
        {"ph": "s", "cat": "ac2g", "name": "ac2g", "id": 42, "pid": 100, "tid": 100, "ts": 10.0},
        {"ph": "f", "cat": "ac2g", "name": "ac2g", "id": 42, "pid": 0, "tid": 7, "ts": 20.5,
         "bp": "e"},
    ],
}  # fmt: skip


def test_kineto_gpu_activity_kernels_links_and_steps(tmp_path):
    run = tw.load(write(tmp_path, KINETO))
    ev = run.events.set_index("name")
    assert ev.loc["volta_sgemm", ["plane", "line"]].tolist() == ["/device:GPU:0", "Stream #7"]
    assert ev.loc["fwd", "line"] == "GPU user annotations"
    assert ev.loc["cudaLaunchKernel", "plane"] == "/host:CPU"
    assert run.t0_ns == 1_700_000_000_000_000_000
    assert ev.loc["volta_sgemm", "start_us"] == pytest.approx(20.5)
    k = run.kernels.iloc[0]
    assert (k["kernel_name"], k["grid_dim"], k["block_dim"]) == ("volta_sgemm", "8,2,1", "256,1,1")
    assert (k["registers_per_thread"], k["shmem_bytes"], k["occupancy_percent"]) == (64, 1024, 50)
    assert len(run.kernels) == 1  # the annotation is not a kernel, nor device time
    assert run.stat("correlation_id").dropna().tolist() == [42, 42]
    assert ev.loc["volta_sgemm", "step"] == 3  # launched inside ProfilerStep#3
    gpu = run.planes.set_index("plane").loc["/device:GPU:0"]
    assert (gpu["core_count"], gpu["compute_cap_major"]) == (132, 9)
    assert run.stat("cat").astype(str).tolist().count("kernel") == 1


def test_tf1_timeline_names_and_lines(tmp_path):
    def proc(pid, name):
        return {"ph": "M", "pid": pid, "name": "process_name", "args": {"name": name}}

    def op(pid, node, op_type, ts, tid=0):
        return X(op_type, ts, 2, pid=pid, tid=tid, cat="Op", args={"name": node, "op": op_type})

    events = [
        proc(1, "/job:localhost/replica:0/task:0/cpu:0 Compute"),
        proc(2, "/job:localhost/replica:0/task:0/gpu:0 Compute"),
        proc(3, "/gpu:0/stream:all Compute"),
        proc(4, "/gpu:0/stream:12 Compute"),
        proc(5, "/gpu:0/memcpy Compute"),
        proc(6, "/gpu:0/stream:12 Tensors"),
        op(1, "x/Const", "Const", 0),
        op(2, "dense/MatMul", "MatMul", 1),
        op(3, "dense/MatMul", "MatMul", 5),
        op(4, "dense/MatMul", "MatMul", 5),
        op(5, "x/_1", "MEMCPYHtoD", 3),
    ]
    run = tw.load(write(tmp_path, {"traceEvents": events}))
    assert list(run.planes["plane"].astype(str)) == ["/host:CPU", "/device:GPU:0"]
    lines = dict(zip(run.lines["line"].astype(str), run.lines["n_events"]))
    assert lines == {"/cpu:0 lane 0": 1, "/gpu:0 lane 0": 1, "stream:all": 1, "Stream #12": 1,
                     "memcpy": 1}  # fmt: skip
    assert "dense/MatMul:MatMul" in set(run.events["name"].astype(str))


def test_epoch_nanoseconds_are_read_as_nanoseconds(tmp_path):
    t = 1_700_000_000_123_456_000
    run = tw.load(write(tmp_path, {"traceEvents": [X("a", t, 2000), X("b", t + 5000, 1000)]}))
    ev = run.events.set_index("name")
    assert ev.loc["b", "start_us"] == pytest.approx(5.0)
    assert ev.loc["a", "dur_us"] == pytest.approx(2.0)
    assert abs(run.t0_ns - t) < 1000
    assert any("nanoseconds" in w for w in run.warnings)


@pytest.mark.parametrize(
    "events,pattern",
    [
        ([{"ph": "M", "pid": 1, "name": "process_name", "args": "x"}, X("a", 1)],
         r"traceEvents\[0\]\.args is a string; expected an object"),
        ([X("a", 1, pid=[1])], r"traceEvents\[0\]\.pid is an array; expected an integer or a"),
        ([{"ph": "b", "pid": 1, "ts": 1, "id": [1], "name": "a", "cat": "c"}],
         r"traceEvents\[0\]\.id is an array"),
        ([{"ph": "B", "pid": 1, "tid": 1, "ts": 1, "name": "a"},
          {"ph": "E", "pid": 1, "tid": 1, "ts": 2, "args": [1]}],
         r"traceEvents\[1\]\.args is an array; expected an object"),
        ([X("a", -1e17)], r"traceEvents\[0\]\.ts is -1e\+17 µs, more than 292 years"),
        ([X("a", 1), X("b", 1e17)], r"traceEvents\[1\]\.ts is 1e\+17 µs"),
        ([X("a", 1), X("b", 1e15)], r"span 11,574 days, from traceEvents\[0\]\.ts = 1"),
        ([X("a", 1, pid=2**80)], r"traceEvents\[0\]\.pid is 1208925819614629174706176, which"),
        ([X("a", 1, dur=1e300)], r"traceEvents\[0\]\.dur is 1e\+300 µs, longer than the 106"),
        ([X("a", 1, args={"group_id": 2**40})], r"args\.group_id is 1099511627776, beyond"),
        ([X("a", 1, args={"group_id": "2199023255552"})], r"args\.group_id is 2199023255552"),
        ([X("a", "5")], r"traceEvents\[0\]\.ts is a string; expected a number"),
        ([{**X("a", 1), "ph": 7}], r"traceEvents\[0\]\.ph is an integer; expected a string"),
        ([X("a", 1, tid=1.5)], r"traceEvents\[0\]\.tid is a number with a fraction"),
        ([X("a", 1, dur=True)], r"traceEvents\[0\]\.dur is a boolean"),
        ([{"ph": "M", "pid": 1, "name": "process_name",
           "args": {"name": "/device:GPU:99999999999999999999"}}, X("a", 1)],
         r"traceEvents\[0\]\.args\.name names device 99999999999999999999"),
        ([X("a", 1, cat="kernel", args={"device": 2**40, "stream": 7})],
         r"args\.device is 1099511627776, not a GPU device number"),
    ],
    ids=["M string args", "list pid", "list async id", "E list args", "ts -1e17",
         "ts 1e17 after ts 1", "span 31 years", "pid 2**80", "dur 1e300", "group_id 2**40",
         "group_id string", "string ts", "int ph", "float tid", "bool dur",
         "device ordinal overflow", "kineto device overflow"],
)  # fmt: skip
def test_strict_about_odd_values(tmp_path, events, pattern):
    doc = {"traceEvents": events}
    if "kernel" in json.dumps(events):
        doc["schemaVersion"] = 1
    with pytest.raises(tw.CorruptProfileError, match=pattern) as info:
        tw.load(write(tmp_path, doc))
    assert str(tmp_path) in str(info.value)


def test_odd_values_that_load_correctly(tmp_path):
    """num_occurrences is only a stat in Chrome JSON; a ts of 1e400 is out of float range."""
    run = tw.load(
        write(
            tmp_path,
            {
                "traceEvents": [
                    X("a", 1, args={"num_occurrences": 2**40, "big": 2**64 - 1, "huge": 2**70})
                ]
            },
        )
    )
    assert run.stat("num_occurrences").tolist() == [2**40]
    assert run.stat("big").tolist() == [2**64 - 1]
    assert run.stat("huge").astype(str).tolist() == [str(2**70)]
    with pytest.raises(tw.CorruptProfileError, match=r"traceEvents\[0\]\.ts is a number out of"):
        tw.load(write(tmp_path, '{"traceEvents": [{"ph": "X", "ts": 1e400, "pid": 1}]}'))
    with pytest.raises(tw.CorruptProfileError, match=r"traceEvents\[0\]\.args\.v is a number out"):
        tw.load(write(tmp_path, '{"traceEvents": [{"ph": "X", "ts": 1, "args": {"v": 1e400}}]}'))


def test_an_end_without_ts_is_named(tmp_path):
    events = [
        {"ph": "B", "pid": 1, "tid": 1, "ts": 1, "name": "a"},
        {"ph": "E", "pid": 1, "tid": 1},
    ]
    with pytest.raises(tw.CorruptProfileError, match=r"traceEvents\[1\] \(ph 'E'\) has no 'ts'"):
        tw.load(write(tmp_path, {"traceEvents": events}))


def test_a_small_gzip_that_expands_past_the_budget_is_refused_while_inflating(tmp_path):
    """Issue 20 item 2: a few MB of gzip can hold many GB of valid events. The budget
    (``max_memory_bytes``, else the memory available) bounds the inflation itself, so the
    load stops after inflating what the budget allows, not after building every event."""
    import time
    import zlib

    ev = b'{"ph":"X","name":"a","ts":1,"dur":1,"pid":1,"tid":1},'
    comp = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    parts = [comp.compress(b'{"traceEvents":[')]
    parts += [comp.compress(ev * 20_000) for _ in range(200)]  # 200 MB of JSON
    data = b"".join(parts) + comp.compress(ev[:-1] + b"]}") + comp.flush()
    path = tmp_path / "big.trace.json.gz"
    path.write_bytes(data)
    assert len(data) < 1_000_000
    t = time.perf_counter()
    with pytest.raises(tw.ProfileTooLargeError, match="expands to more than") as info:
        tw.load(path, progress=False, max_memory_bytes=500_000_000)
    assert info.value.path == str(path) and time.perf_counter() - t < 5
