"""Every real Chrome-trace capture of the team's shared captures (copied to tests/data/chrome, see
tests/data/NOTICE): Kineto traces of PyTorch on V100/H100/B200, TF1 timelines, catapult's test
traces and a TF 2.3-2.10 trace-viewer JSON.

Per file: the planes and device planes, the number of events counted independently from the
raw JSON with the standard library (rules below, the same a Chrome trace viewer applies), GPU
kernels where the trace has them, and producer/consumer links where it has flows.
"""

import bisect
import collections
import gzip
import json
import pathlib

import numpy as np
import pandas as pd
import pytest
from conftest import ROOT

import tfprof_widgets as tw

DATA = ROOT / "tests" / "data" / "chrome"
GPU_CATS = (
    "kernel",
    "gpu_memcpy",
    "gpu_memset",
    "gpu_user_annotation",
    "Kernel",
    "Memcpy",
    "Memset",
)
KERNEL_CATS = ("kernel", "Kernel")
RUNTIME_CATS = ("cuda_runtime", "cuda_driver", "Runtime")

# file -> (planes with events, device planes, kind of writer)
FILES = {
    "resnet50_v100_workers0.pt.trace.json.gz": (
        {"/host:CPU", "Traces", "(no process id)", "/device:GPU:0"},
        {"/device:GPU:0"},
        "kineto",
    ),
    "resnet50_v100_workers4.pt.trace.json.gz": (
        {"/host:CPU", "Traces", "(no process id)", "/device:GPU:0"},
        {"/device:GPU:0"},
        "kineto",
    ),
    "timesformer_h100.json.gz": (
        {"/host:CPU", "Spans", "Traces", "(no process id)", "/device:GPU:0"},
        {"/device:GPU:0"},
        "kineto",
    ),
    "eager_b200.json.gz": ({"/host:CPU", "pid -1", "/device:GPU:0"}, {"/device:GPU:0"}, "kineto"),
    "GPU_timeline_01.json.gz": ({"/host:CPU", "/device:GPU:0"}, {"/device:GPU:0"}, "tf1"),
    "GPU_timeline_03_merged_5_runs.json.gz": (
        {"/host:CPU", "/device:GPU:0"},
        {"/device:GPU:0"},
        "tf1",
    ),
    "tf2_bert_8gpu.trace.json.gz": (
        {"/host:CPU", *(f"/device:GPU:{i}" for i in range(8))},
        {f"/device:GPU:{i}" for i in range(8)},
        "tf2",
    ),
    "big_trace.json.gz": ({"pid 21296", "pid 21299", "pid 21315", "pid 21253"}, set(), "other"),
    "flow.json.gz": ({"pid 23885", "pid 23915", "pid 23924"}, set(), "other"),
    "multiple_input_latency.json.gz": (
        {"Browser", "Renderer", "Renderer (pid 18811)"},
        set(),
        "other",
    ),
    "perf_sampling_trace_with_trace_events.json.gz": ({"Browser", "Renderer"}, set(), "other"),
    "thread_time_visualisation.json.gz": ({"Renderer", "Browser"}, set(), "other"),
    "x_event_trace.json.gz": ({"Renderer"}, set(), "other"),
}


def raw_events(path: pathlib.Path) -> tuple[list, dict]:
    doc = json.loads(gzip.decompress(path.read_bytes()))
    events = doc["traceEvents"] if isinstance(doc, dict) else doc
    if events and events[-1] == {}:
        events = events[:-1]
    return events, doc if isinstance(doc, dict) else {}


def stack_pairs(seq, key, begin: str, end: str) -> int:
    """Begin/end pairs matched like a stack per key, in the order given."""
    open_ = collections.Counter()
    pairs = 0
    for e in seq:
        k = key(e)
        if e["ph"] == begin:
            open_[k] += 1
        elif e["ph"] == end and open_[k]:
            open_[k] -= 1
            pairs += 1
    return pairs


def independent_count(events: list) -> int:
    """Timeline events by the trace-event format's rules: X; B/E pairs per thread in file
    order; async b/e and S/F pairs per (pid, cat, id, name) in timestamp order; one event per
    instant, async step, counter, sample and object event."""
    phases = collections.Counter(e["ph"] for e in events)
    total = phases["X"] + sum(phases[p] for p in "iInTpCPNOD")
    total += stack_pairs(events, lambda e: (e.get("pid"), e.get("tid")), "B", "E")
    for b, e_ in (("b", "e"), ("S", "F")):
        sel = [e for e in events if e["ph"] in (b, e_)]
        sel.sort(key=lambda e: (e["ts"], e["ph"] == e_))
        total += stack_pairs(
            sel, lambda e: (e.get("pid"), e.get("cat"), e.get("id"), e.get("name")), b, e_
        )
    return total


def independent_links(events: list) -> int:
    """Flow links: Kineto's by correlation id; others by binding each flow point to a slice
    of its thread (enclosing, or the next one for an "f" without "bp": "e") and replaying the
    points of each (cat, id) in time order."""
    runtime = {
        e["args"]["correlation"]
        for e in events
        if e.get("cat") in RUNTIME_CATS and "correlation" in e.get("args", {})
    }
    kineto = sum(
        1
        for e in events
        if e.get("cat") in GPU_CATS and e.get("args", {}).get("correlation") in runtime
    )
    slices = collections.defaultdict(list)
    stacks = collections.defaultdict(list)
    for i, e in enumerate(events):
        thread = (e.get("pid"), e.get("tid"))
        if e["ph"] == "X":
            slices[thread].append((e["ts"], -e.get("dur", 0), i))
        elif e["ph"] == "B":
            stacks[thread].append(e)
        elif e["ph"] == "E" and stacks[thread]:
            b = stacks[thread].pop()
            slices[thread].append((b["ts"], -(e["ts"] - b["ts"]), id(b)))
    for s in slices.values():
        s.sort()

    def bind(p):
        s = slices.get((p.get("pid"), p.get("tid")), [])
        if p["ph"] == "f" and p.get("bp") != "e":
            k = bisect.bisect_left(s, (p["ts"], -np.inf))
            return s[k][2] if k < len(s) else None
        k = bisect.bisect_right(s, (p["ts"], np.inf)) - 1
        while k >= 0:
            start, neg_dur, ident = s[k]
            if start - neg_dur >= p["ts"]:
                return ident
            k -= 1
        return None

    flows = [
        e
        for e in events
        if e["ph"] in "stf"
        and e.get("cat") not in ("ac2g",)
        and not (e.get("cat") == "async" and e.get("name") == "launch")
    ]
    flows.sort(key=lambda e: (str(e.get("cat")), str(e.get("id")), e["ts"], "stf".index(e["ph"])))
    links = 0
    open_ = collections.defaultdict(list)
    for p in flows:
        chain = open_[(p.get("cat"), str(p.get("id")))]
        if p["ph"] == "s":
            chain.append(bind(p))
            continue
        if not chain:
            continue
        a, b = (chain.pop() if p["ph"] == "f" else chain[-1]), bind(p)
        if p["ph"] == "t":
            chain[-1] = b
        links += a is not None and b is not None and a != b
    return kineto + links


@pytest.fixture(scope="module", params=sorted(FILES))
def loaded(request):
    path = DATA / request.param
    events, doc = raw_events(path)
    return request.param, tw.load(path, progress=False), events, doc


def test_planes_and_devices(loaded):
    name, run, _, _ = loaded
    planes, devices, _ = FILES[name]
    assert set(run.planes["plane"].astype(str)) == planes
    gpu = run.planes[run.planes["device_kind"] == "GPU"]
    assert set(gpu["plane"].astype(str)) == devices
    assert gpu["device_ordinal"].tolist() == [int(p.rsplit(":", 1)[1]) for p in gpu["plane"]]


def test_event_counts_equal_the_independent_count(loaded):
    name, run, events, _ = loaded
    assert len(run.events) == independent_count(events)
    if FILES[name][2] == "kineto":  # every GPU activity on the device plane, all else off it
        gpu = sum(1 for e in events if e["ph"] == "X" and e.get("cat") in GPU_CATS)
        assert (run.events["plane"] == "/device:GPU:0").sum() == gpu


def test_kernels_where_the_trace_has_gpu_kernels(loaded):
    name, run, events, _ = loaded
    kind = FILES[name][2]
    if kind == "kineto":
        launched = [e for e in events if e.get("cat") in KERNEL_CATS and e.get("dur", 0) > 0]
        assert len(run.kernels) > 0
        assert run.kernels["occurrences"].sum() == len(launched)
        names = {e["name"] for e in launched}
        assert set(run.kernels["kernel_name"]) == names
        k = launched[0]
        row = run.kernels[run.kernels["kernel_name"] == k["name"]].iloc[0]
        assert row["registers_per_thread"] == k["args"]["registers per thread"]
        assert row["shmem_bytes"] == k["args"]["shared memory"]
    elif kind != "tf2":  # TF1 timelines record no launch parameters; catapult no GPU
        assert run.kernels.empty


def test_flows_are_producer_consumer_links(loaded):
    _, run, events, _ = loaded
    expected = independent_links(events)
    if "_c" not in run.stat_names:
        assert expected == 0
        return

    # An event may consume (or produce) several flows: one stat row each.
    st = run.event_stats

    def rows(name):
        r = st[st["stat"] == name]
        return r["event"].to_numpy(), r["int_value"].to_numpy()

    (p_ev, p), (pt_ev, pt), (c_ev, c), (ct_ev, ct) = (rows(s) for s in ("_p", "_pt", "_c", "_ct"))
    assert len(c) == expected == len(p)
    assert (p_ev == pt_ev).all() and (c_ev == ct_ev).all()
    # Each consumer's (flow type, flow id) names exactly one producer, another event.
    producer = dict(zip(zip(pt, p), p_ev))
    assert len(producer) == len(p)
    assert all(producer[(t, f)] != e for t, f, e in zip(ct, c, c_ev))


def test_kineto_launches_connect_to_their_kernels(loaded):
    name, run, events, _ = loaded
    if FILES[name][2] != "kineto":
        pytest.skip("not a Kineto trace")
    ev = run.events
    corr = run.stat("correlation_id")
    ct = run.stat("_ct")
    kern = np.flatnonzero(ct.notna().to_numpy())
    assert (ev["plane"].iloc[kern] == "/device:GPU:0").all()
    assert (ct.iloc[kern] == 9).all()
    by_corr = ev.assign(corr=corr, pt=run.stat("_pt"))
    launches = by_corr[by_corr["pt"].notna()]
    assert (launches["plane"] == "/host:CPU").all()
    assert launches["name"].astype(str).str.startswith("cu").all()  # cudaLaunchKernel, ...
    # The kernel and its launch carry the same correlation id.
    assert set(corr.iloc[kern].astype(int)) == set(launches["corr"].astype(int))
    assert run.t0_ns > 1.5e18  # epoch-based (2017 or later)


def test_kineto_steps_are_profiler_steps(loaded):
    name, run, events, _ = loaded
    if FILES[name][2] != "kineto":
        pytest.skip("not a Kineto trace")
    steps = sorted(
        int(e["name"].split("#")[1])
        for e in events
        if e["ph"] == "X"
        and str(e.get("name")).startswith("ProfilerStep#")
        and e.get("cat") not in GPU_CATS
    )
    assert sorted(run.events["step"].dropna().unique().tolist()) == sorted(set(steps))
    if steps:  # a kernel launched inside a step belongs to it, through its launch link
        st = run.event_stats
        prod = st[st["stat"] == "_p"].set_index("int_value")["event"]
        cons = st[st["stat"] == "_c"]
        launch_step = run.events["step"].to_numpy()[prod.loc[cons["int_value"]].to_numpy()]
        kernel_step = run.events["step"].to_numpy()[cons["event"].to_numpy()]
        in_step = ~pd.isna(launch_step)
        assert in_step.sum() > len(cons) / 2
        assert (kernel_step[in_step] == launch_step[in_step]).all()


def test_tf1_timeline_devices_and_streams(loaded):
    name, run, events, _ = loaded
    if FILES[name][2] != "tf1":
        pytest.skip("not a TF1 timeline")
    per_plane = run.events.groupby("plane", observed=True).size().to_dict()
    # Every X event kept (stream:all and memcpy repeat the numbered streams' events).
    assert per_plane == (
        {"/host:CPU": 1, "/device:GPU:0": 30}
        if "01" in name
        else {"/host:CPU": 84, "/device:GPU:0": 763}
    )
    lines = run.lines.set_index("line")
    assert "Stream #12" in lines.index and "stream:all" in lines.index
    # The pseudo-device lines are derived lines, so analyses count each kernel once.
    from tfprof_widgets.analysis.event_index import is_derived_line

    assert is_derived_line(np.array([lines.loc["stream:all", "line_id"]]))[0]
    assert not is_derived_line(np.array([lines.loc["Stream #12", "line_id"]]))[0]
    x = [e for e in events if e["ph"] == "X"]
    assert set(run.events["name"].astype(str)) == {
        f"{e['args']['name']}:{e['args']['op']}" for e in x
    }


def test_tf2_trace_viewer_json_equals_its_xplane():
    """The TF 2.3-2.10 trace.json.gz made from the BERT xplane loads as that xplane
    does: same device planes with events, same kernels, same step."""
    j = tw.load(DATA / "tf2_bert_8gpu.trace.json.gz", progress=False)
    counts = j.events.groupby("plane", observed=True).size().to_dict()
    assert counts == {
        "/host:CPU": 12857,
        "/device:GPU:1": 19,
        "/device:GPU:4": 3875,
        "/device:GPU:6": 3880,
    }
    x = tw.load(ROOT / "tests" / "data" / "bert_8gpu_multi_worker.xplane.pb", progress=False)
    cols = ["kernel_name", "occurrences", "total_time_us", "registers_per_thread", "grid_dim"]
    assert j.kernels[cols].round(3).equals(x.kernels[cols].round(3))
    assert j.steps["step_time_us"].round(3).tolist() == x.steps["step_time_us"].round(3).tolist()


def test_kineto_device_properties_on_the_gpu_plane():
    run = tw.load(DATA / "timesformer_h100.json.gz", progress=False)
    gpu = run.planes.set_index("plane").loc["/device:GPU:0"]
    assert (gpu["core_count"], gpu["compute_cap_major"], gpu["compute_cap_minor"]) == (132, 9, 0)
    assert gpu["memory_size"] == 85018279936
    lines = set(run.lines.loc[run.lines["plane"] == "/device:GPU:0", "line"])
    assert lines == {"Stream #7", "GPU user annotations"}
