"""TF 2.0/2.1 trace files (a Trace of trace_events.proto, <run>/local.trace) load into the
event tables: devices -> planes, resources -> lines, picosecond times kept exactly. The
counts are read from the raw protobuf with no schema (tool_data_files.fields)."""

import collections

import numpy as np
import pytest
from tool_data_files import TOOLDATA, field, fields, tf21_logdir

import tfprof_widgets as tw
from tfprof_widgets.proto import trace_events_pb2 as pb
from tfprof_widgets.readers.discovery import resolve

SAMPLES = {
    "tf21_cpu": TOOLDATA / "tf21_cpu" / "local.trace",
    "tf20_gpu_timeline": TOOLDATA / "tf20_gpu_timeline" / "local.trace",
}


def raw_trace(path):
    """Devices {id: name} and events [(device, resource, name, ps, dur_ps)] of a Trace."""
    data = path.read_bytes()
    devices = {}
    for entry in field(data, 1):  # map<uint32, Device>: key 1, value 2 (name 1)
        e = dict(fields(entry))
        devices[e.get(1, 0)] = field(e[2], 1)[0].decode()
    events = []
    for ev in field(data, 4):
        f = dict(fields(ev))
        events.append((f.get(1, 0), f.get(2, 0), f.get(3, b"").decode(), f.get(9, 0), f.get(10, 0)))
    return devices, events


@pytest.mark.parametrize("sample", sorted(SAMPLES))
def test_a_trace_loads_every_event_exactly(sample):
    path = SAMPLES[sample]
    devices, events = raw_trace(path)
    run = tw.load(path)
    assert len(run.events) == len(events)
    # Times: the file's picoseconds from the capture start, as µs from the first event; the
    # file has no wall-clock time, so t0_ns counts from the capture start too.
    t0 = min(e[3] for e in events)
    assert run.hosts == ["local"] and run.t0_ns == t0 // 1000
    got = sorted(zip(run.events["start_us"], run.events["dur_us"], run.events["name"].astype(str)))
    want = sorted(((e[3] - t0) / 1e6, e[4] / 1e6, e[2]) for e in events)
    assert got == want
    # Every device's events land on its plane.
    per_plane = collections.Counter()
    for dev, *_ in events:
        name = devices[dev]
        per_plane["/device:GPU:0" if "gpu:0" in name.lower() else "/host:CPU"] += 1
    assert run.planes.set_index("plane")["n_events"].to_dict() == dict(per_plane)
    devices_stat = run.plane_stats[run.plane_stats["stat"] == "devices"]
    listed = {d for v in devices_stat["str_value"] for d in str(v).split(", ")}
    assert listed == {devices[d] for d, *_ in events}


def test_tf20_gpu_trace_maps_streams_and_lanes():
    run = tw.load(SAMPLES["tf20_gpu_timeline"])
    gpu = run.planes.set_index("plane").loc["/device:GPU:0"]
    assert gpu["device_kind"] == "GPU" and gpu["device_ordinal"] == 0
    lines = run.lines[run.lines["plane"] == "/device:GPU:0"].set_index("line")["n_events"]
    # The TF1 timeline it came from (GPU_timeline_01.json) has these per device.
    assert lines.to_dict() == {
        "/job:localhost/replica:0/task:0/gpu:0 lane 0": 12,
        "Stream #all": 7,
        "Stream #12": 7,
        "/gpu:0/memcpy lane 0": 2,
        "Stream #7": 1,
        "Stream #14": 1,
    }
    label = run.stat("label").astype(str)
    assert label.str.contains(" = ").all()  # TF's timeline label: 'node = Op(inputs)'


def test_tf21_cpu_trace_names_threads_and_keeps_args():
    run = tw.load(SAMPLES["tf21_cpu"])
    assert run.planes["plane"].tolist() == ["/host:CPU"]
    assert sorted(run.lines["line"]) == [
        "/job:localhost/replica:0/task:0/device:CPU:0 lane 0",
        "python",
        "tf_Compute",
    ]
    assert "MatMul" in run.events["name"].astype(str).tolist()
    assert run.stat("label").notna().all()


def test_a_tf21_logdir_lists_and_loads(tmp_path):
    logdir = tf21_logdir(tmp_path)
    runs = tw.list_runs(logdir)
    assert runs["formats"].tolist() == [("trace",), ("trace",)]
    assert runs["hosts"].tolist() == [("local",), ("local",)]
    assert len(tw.load(logdir).events) == 31  # the newest run: the GPU one


def test_a_chrome_trace_of_the_same_host_is_preferred(tmp_path):
    (tmp_path / "local.trace").write_bytes(SAMPLES["tf21_cpu"].read_bytes())
    (tmp_path / "local.trace.json.gz").write_bytes(b"")
    (tmp_path / "other.trace").write_bytes(SAMPLES["tf21_cpu"].read_bytes())
    files = resolve(tmp_path)
    assert sorted(p.rsplit("/", 1)[-1] for p in files.files) == [
        "local.trace.json.gz",
        "other.trace",
    ]
    assert files.formats == ("trace", "trace.json.gz")


def test_later_writers_names_ids_and_args(tmp_path):
    """TF 2.2+ built Traces from XPlanes (device 1+N, host 501, named resources, args such
    as group_id); an event may name a device or resource the maps lack."""
    t = pb.Trace()
    t.devices[501].name = "/host:CPU"
    t.devices[501].resources[7].name = "tf_data_iterator_get_next"
    t.devices[1].name = "/device:GPU:0"
    t.devices[1].resources[63].name = "Stream #63(MemcpyH2D)"
    for dev, res, name, ps, args in (
        (501, 7, "IteratorGetNext", 1_000_000, {"group_id": "3", "long_name": "x:IteratorGetNext"}),
        (1, 63, "MemcpyH2D", 2_500_000, {"bytes": "-12", "label": "007"}),
        (1, 64, "Kernel", 3_000_001, {}),
        (9, 0, "Orphan", 4_000_000, {}),
    ):
        e = t.trace_events.add(device_id=dev, resource_id=res, name=name, timestamp_ps=ps)
        e.duration_ps = 500_000
        e.args.update(args)
    (tmp_path / "h.trace").write_bytes(t.SerializeToString())
    run = tw.load(tmp_path / "h.trace")
    assert sorted(run.planes["plane"].astype(str)) == ["/device:GPU:0", "/host:CPU", "device 9"]
    assert set(run.lines["line"]) == {
        "tf_data_iterator_get_next",
        "Stream #63(MemcpyH2D)",
        "lane 64",
        "lane 0",
    }
    assert run.stat("group_id").dropna().tolist() == [3]  # integers as integers
    assert run.stat("bytes").dropna().tolist() == [-12]
    assert run.stat("label").dropna().astype(str).tolist() == ["007"]  # not a number
    assert np.allclose(sorted(run.events["start_us"]), [0.0, 1.5, 2.000001, 3.0])


@pytest.mark.parametrize(
    "content,error,pattern",
    [
        (b"", tw.NoEventsError, "empty"),
        (b"\x22\xff\xff\xff\xff\x0f", tw.CorruptProfileError, "truncated or damaged"),
        (b"\x0a\x00", tw.NoEventsError, "no events"),
        (b"\x28\x01", tw.WrongFormatError, "not a TF 2.0/2.1 trace"),
    ],
)
def test_bad_trace_files(tmp_path, content, error, pattern):
    p = tmp_path / "local.trace"
    p.write_bytes(content)
    with pytest.raises(error, match=pattern):
        tw.load(p)
