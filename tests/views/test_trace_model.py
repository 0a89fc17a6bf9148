"""The trace viewer's kernel side: lane model, level of detail, search, details and flows,
and the view's live/offline plumbing (no browser here; see test_trace_viewer_browser.py)."""

import json
import pathlib
import re
import sys

import numpy as np
import pandas as pd
import pytest
from conftest import ROOT

from tfprof_widgets.views.trace.details import TraceIndex, event_details, launch_arguments
from tfprof_widgets.views.trace.lanes import XPROF_INTERNAL_EVENTS, readable_line_names
from tfprof_widgets.views.trace.model import TraceModel

sys.path.insert(0, str(ROOT / "benchmarks"))
from bench_trace_viewer import StubRun  # noqa: E402
from synthetic_events import synthetic_events  # noqa: E402

BERT = ROOT / "tests" / "data" / "bert_8gpu_multi_worker.xplane.pb"


@pytest.fixture(scope="module")
def bert():
    import tfprof_widgets as tw

    return tw.load(BERT)


@pytest.fixture(scope="module")
def bert_model(bert):
    return TraceModel.from_run(bert)


def overlapping(events: pd.DataFrame, x0: float, x1: float) -> int:
    """Events a window [x0, x1) holds: starting in it, or running at x0."""
    s, e = events["start_us"].to_numpy(), events["end_us"].to_numpy()
    timed = (events["occurrences"].to_numpy() == 1) & ~np.isnan(s) & ~_internal(events)
    return int((timed & (s < x1) & ((e > x0) | (s >= x0))).sum())


def _internal(events: pd.DataFrame) -> np.ndarray:
    """XProf's internal events, which the trace viewer does not draw (as XProf's)."""
    return events["name"].astype(str).isin(XPROF_INTERNAL_EVENTS).to_numpy()


def _drawn(run) -> int:
    """The run's events the trace viewer draws: all but XProf's internal ones."""
    return len(run.events) - int(_internal(run.events).sum())


def frame(rows: list[tuple]) -> pd.DataFrame:
    """Events from (line, name, start, end) tuples, on one host and plane."""
    df = pd.DataFrame(rows, columns=["line", "name", "start_us", "end_us"])
    return pd.DataFrame(
        {
            "host": pd.Categorical(["h"] * len(df)),
            "plane": pd.Categorical(["/host:CPU"] * len(df)),
            "line": pd.Categorical(df["line"]),
            "name": pd.Categorical(df["name"]),
            "start_us": df["start_us"].astype(float),
            "dur_us": df["end_us"] - df["start_us"],
            "end_us": df["end_us"].astype(float),
            "occurrences": np.ones(len(df), np.int32),
        }
    )


def depths(model: TraceModel) -> dict[int, int]:
    """Event row -> depth row in its lane."""
    sub = np.searchsorted(model.sub_offsets, np.arange(len(model)), side="right") - 1
    return dict(zip(model.row.tolist(), model.sub_depth[sub].tolist()))


# -- the lane model -----------------------------------------------------------------------
def test_nesting_depths_stack_inside_one_lane_per_line():
    ev = frame(
        [
            ("t/1", "parent", 0, 10),
            ("t/1", "child", 0, 4),
            ("t/1", "grandchild", 1, 2),
            ("t/1", "zero", 3, 3),
            ("t/1", "child2", 5, 9),
            ("t/1", "next", 10, 12),
            ("t/2", "other", 2, 3),
        ]
    )
    m = TraceModel(ev)
    assert len(m.lanes) == 2  # one lane per line, not per depth
    d = depths(m)
    assert [d[i] for i in range(7)] == [0, 1, 2, 2, 1, 0, 0]
    assert m.lanes["depth_rows"].tolist() == [3, 1]


def test_ties_put_the_longer_event_first_and_rows_never_overlap():
    # Same start: the child arrives before its parent; a partial overlap; a back-to-back pair.
    ev = frame(
        [
            ("t", "child", 0, 2),
            ("t", "parent", 0, 10),
            ("t", "a", 12, 20),
            ("t", "b", 15, 25),
            ("t", "c", 21, 23),
            ("t", "d", 25, 26),
        ]
    )
    m = TraceModel(ev)
    d = depths(m)
    assert d[1] == 0 and d[0] == 1  # the parent on top
    assert d[5] == 0  # starts exactly where its neighbour ends: same row
    for s in range(len(m.sub_offsets) - 1):
        a, b = m.sub_offsets[s], m.sub_offsets[s + 1]
        assert (m.start[a + 1 : b] >= m.end[a : b - 1]).all()


def max_overlap(start: np.ndarray, end: np.ndarray) -> int:
    """The most events of one line running at once (at least 1): a sweep over starts and ends
    (an end before a start at the same time), and an instant counts inside the events that
    run across it (it is drawn under them)."""
    pos = end > start
    t = np.r_[start[pos], end[pos]]
    step = np.r_[np.ones(pos.sum()), -np.ones(pos.sum())]
    most = int(np.cumsum(step[np.lexsort((step, t))]).max()) if pos.any() else 0
    if (~pos).any():
        at = start[~pos]
        running = np.searchsorted(np.sort(start[pos]), at, "right") - np.searchsorted(
            np.sort(end[pos]), at, "right"
        )
        most = max(most, int(running.max()) + 1)
    return max(most, 1)


def check_rows_are_max_overlap(m: TraceModel, events: pd.DataFrame) -> None:
    """Every lane has as many rows as its events ever overlap, and no row overlaps."""
    timed = (events["occurrences"].to_numpy() == 1) & events["start_us"].notna().to_numpy()
    timed &= ~_internal(events)
    key = events[["host", "plane", "line"]].astype(str).agg("|".join, axis=1).to_numpy()
    lanes = m.lanes
    for i in range(len(lanes)):
        k = f"{lanes['host'].iat[i]}|{lanes['plane'].iat[i]}|{lanes['line'].iat[i]}"
        sel = timed & (key == k)
        s = events["start_us"].to_numpy()[sel]
        e = np.maximum(events["end_us"].to_numpy()[sel], s)
        assert lanes["depth_rows"].iat[i] == max_overlap(s, e), k
    for s in range(len(m.sub_offsets) - 1):
        a, b = m.sub_offsets[s], m.sub_offsets[s + 1]
        assert (m.start[a + 1 : b] >= m.end[a : b - 1]).all()


def test_a_stream_of_barely_overlapping_kernels_is_two_rows():
    # Kernels in a CUDA graph: each starts 0.3 µs before the one before it ends.
    ev = frame([("Stream #14", f"k{i}", 10.0 * i, 10.0 * i + 10.3) for i in range(20)])
    m = TraceModel(ev)
    assert m.lanes["depth_rows"].tolist() == [2]  # not a staircase 20 rows deep
    d = depths(m)
    assert [d[i] for i in range(20)] == [0, 1] * 10


@pytest.mark.parametrize("seed", range(4))
def test_rows_are_the_most_events_that_ever_overlap(seed):
    rng = np.random.default_rng(seed)
    n = 3000
    # Times in eighths of a µs, exact in binary: the model lays lines end to end on one axis,
    # where an overlap of 1e-13 µs may round to touching (and is drawn as touching anyway).
    start = np.round(rng.uniform(0, 2000, n) * 8) / 8
    dur = np.where(rng.random(n) < 0.1, 0.0, np.round(rng.exponential(3.0, n) * 8) / 8)
    line = rng.choice(["a", "b", "c"], n)
    rows = list(zip(line, [f"e{i}" for i in range(n)], start, start + dur))
    ev = frame(rows)
    check_rows_are_max_overlap(TraceModel(ev), ev)


def test_the_greedy_chain_is_the_one_event_at_a_time_greedy():
    from tfprof_widgets.views.trace.rows import greedy_chain as _greedy_chain

    def one_at_a_time(ks, ke):
        on, cur = np.zeros(len(ks), bool), 0
        on[0] = True
        for j in range(1, len(ks)):
            if ks[j] >= ke[cur]:
                on[j], cur = True, j
        return on

    rng = np.random.default_rng(7)
    for _ in range(500):
        n = int(rng.integers(2, 60))
        ks = np.sort(np.round(rng.uniform(0, 40, n)))
        scale = rng.choice([1.0, 3.0, 10.0])
        ke = ks + np.where(rng.random(n) < 0.2, 0.0, np.round(rng.exponential(scale, n)))
        assert (_greedy_chain(ks, ke) == one_at_a_time(ks, ke)).all(), (ks, ke)


DATA = ROOT / "tests" / "data"
CAPTURES = {
    "jax_h100_cuda_graphs": DATA / "xplane_h100_jax" / "jax_cnn_graphs.xplane.pb",
    "kineto_h100": DATA / "chrome" / "timesformer_h100.json.gz",
    "bert_8gpu": BERT,
}


@pytest.mark.parametrize("name", CAPTURES)
def test_rows_of_real_captures_are_their_max_overlap(name):
    import tfprof_widgets as tw

    run = tw.load(CAPTURES[name], progress=False)
    m = TraceModel.from_run(run)
    check_rows_are_max_overlap(m, run.events)
    if name == "jax_h100_cuda_graphs":
        streams = m.lanes[m.lanes["line"].str.startswith("Stream")]
        assert streams["depth_rows"].max() == 2


def test_lines_out_of_order_and_untimed_events_are_handled():
    ev = synthetic_events(20_000, n_lines=4, seed=3)
    shuffled = ev.sample(frac=1.0, random_state=1).reset_index(drop=True)
    shuffled.loc[:50, "occurrences"] = 7  # aggregated: no place on the timeline
    shuffled.loc[:50, "start_us"] = np.nan
    m = TraceModel(shuffled)
    assert len(m) == len(shuffled) - 51
    x0, x1 = m.t_min + 1000, m.t_min + 9000
    marks = m.window(x0, x1, cols=300, budget=500)
    assert marks.n_events == overlapping(shuffled, x0, x1)
    rows = marks.row[marks.row >= 0]
    assert (shuffled["occurrences"].to_numpy()[rows] == 1).all()


@pytest.mark.parametrize("budget", [300, 2000, 8000])
@pytest.mark.parametrize("cols", [40, 1600])
def test_every_event_is_counted_once_within_the_budget(bert, bert_model, budget, cols):
    m, ev = bert_model, bert.events
    rng = np.random.default_rng(budget + cols)
    for _ in range(60):
        x0 = rng.uniform(m.t_min - 1e4, m.t_max)
        x1 = x0 + 10 ** rng.uniform(-1, 6.6)
        marks = m.window(x0, x1, cols=cols, budget=budget)
        assert marks.n_events == overlapping(ev, x0, x1)
        assert len(marks) <= budget
        raw = marks.row[marks.row >= 0]
        assert len(np.unique(raw)) == len(raw)
        assert (marks.count[marks.row < 0] > 1).all() or not (marks.row < 0).any()
        assert (marks.end >= marks.start).all()


def test_sparse_windows_are_raw_and_complete(bert, bert_model):
    x0, x1 = 2_448_400.0, 2_448_500.0
    marks = bert_model.window(x0, x1)
    assert marks.complete and marks.cols == 0
    assert len(marks) == overlapping(bert.events, x0, x1)
    names = bert.events["name"].cat.categories[marks.name]
    assert list(names) == list(bert.events["name"].to_numpy()[marks.row])


def test_dense_windows_merge_small_events_and_keep_long_ones():
    ev = synthetic_events(200_000, n_lines=4)
    m = TraceModel(ev)
    marks = m.window(cols=500, budget=4000)
    assert not marks.complete and len(marks) <= 4000
    assert marks.n_events == len(ev)
    width = (m.t_max - m.t_min) / marks.cols
    raw = marks.row >= 0
    # every event at least a column long is drawn as itself
    long_rows = np.flatnonzero(ev["dur_us"].to_numpy() >= width)
    assert set(long_rows) <= set(marks.row[raw].tolist())


def test_marks_pack_into_aligned_little_endian_columns():
    ev = synthetic_events(50_000, n_lines=2)
    m = TraceModel(ev)
    marks = m.window(cols=200, budget=1000, search=m.search("op_1"))
    header, buf = marks.pack()
    assert len(buf) % 8 == 0 and header["n"] == len(marks)
    json.dumps(header)
    for field, dtype, off in header["layout"]:
        assert off % np.dtype(dtype).itemsize == 0
        got = np.frombuffer(buf, dtype="<" + dtype, count=len(marks), offset=off)
        assert np.array_equal(got, getattr(marks, field).astype(got.dtype))
    assert header["n_events"] == len(ev) and header["req_cols"] == 200


# -- names, order, activity --------------------------------------------------------------
def test_readable_lane_names():
    names = readable_line_names(
        [
            "tf_Compute/123",
            "tf_Compute/-45",
            "python3",
            "tf_data/9",
            "Stream #7(MemcpyH2D)",
            "Stream #8",
            "python -4739515401441073305",
            "tid 12",
        ],
        [None, None, None, None, None, "kernels, MemcpyD2H", None, None],
    )
    assert names == [
        "tf_Compute #1",
        "tf_Compute #2",
        "python3",
        "tf_data",
        "Stream #7 · MemcpyH2D",
        "Stream #8 · kernels, MemcpyD2H",
        "python",
        "tid 12",
    ]


def test_groups_put_devices_first_or_follow_a_user_order(bert_model):
    groups = bert_model.arrange()
    assert [g["plane"] for g in groups] == [
        "/device:GPU:1",
        "/device:GPU:4",
        "/device:GPU:6",
        "/host:CPU",
    ]
    gpu4 = groups[1]
    lines = [bert_model.lanes["line"].iat[i] for i in gpu4["lanes"]]
    assert lines[:3] == ["Steps", "TensorFlow Name Scope", "TensorFlow Ops"]
    assert all(s.startswith("Stream #") for s in lines[3:])
    custom = bert_model.arrange(["/host:*", "*GPU:6"])
    assert [g["plane"] for g in custom][:2] == ["/host:CPU", "/device:GPU:6"]
    labels = bert_model.lanes["label"].tolist()
    assert "tf_Compute #3" in labels and not any("/-" in s for s in labels)


def test_the_first_view_is_where_the_events_are(bert, bert_model):
    a, b = bert_model.activity_window()
    span = bert_model.t_max - bert_model.t_min
    assert b - a < 0.05 * span
    assert overlapping(bert.events, a, b) > 0.3 * len(bert.events)


# -- search -------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "regex", ["MatMul", "^Memcpy", "Eigen.*half", "nothing-like-this", "(?i)matmul"]
)
def test_search_counts_every_event_like_pandas(bert, bert_model, regex):
    state = bert_model.search(regex)
    assert state.count == int(bert.events["name"].str.contains(regex).sum())
    marks = bert_model.window(cols=300, budget=1000, search=state)
    x0, x1 = marks.x0, marks.x1
    ev = bert.events
    s, e = ev["start_us"].to_numpy(), ev["end_us"].to_numpy()
    in_window = (s < x1) & ((e > x0) | (s >= x0))
    assert int(marks.hits.sum()) == int((in_window & ev["name"].str.contains(regex)).sum())


def test_search_counts_untimed_events_too():
    ev = synthetic_events(10_000, n_lines=2)
    ev.loc[:9, "occurrences"] = 3
    ev.loc[:9, "start_us"] = np.nan
    m = TraceModel(ev)
    assert m.search("op_").count == len(ev)
    with pytest.raises(re.error):
        m.search("(")


def test_next_match_walks_matches_in_time_and_wraps(bert, bert_model):
    state = bert_model.search("MatMul")
    ev = bert.events
    hits = ev[ev["name"].str.contains("MatMul")].sort_values(["start_us"])
    seen, t, row = [], -1.0, -1
    for _ in range(len(hits) + 1):
        nxt = bert_model.next_match(state, t, row)
        seen.append(nxt["row"])
        t, row = nxt["start"], nxt["row"]
    assert seen[:-1] == sorted(hits.index.tolist(), key=lambda r: (ev["start_us"][r], r))
    assert seen[-1] == seen[0]  # wrapped
    back = bert_model.next_match(state, hits["start_us"].iloc[-1], int(hits.index[-1]), -1)
    assert back["start"] <= hits["start_us"].iloc[-1]


# -- details and flows --------------------------------------------------------------------
def test_a_kernel_shows_its_launch_arguments_and_the_launch_that_started_it(bert, bert_model):
    ev = bert.events
    kernel = int(ev.index[(ev["line"] == "Stream #142(Compute)")][0])
    d = event_details(bert, bert_model, TraceIndex(bert), kernel)
    json.dumps(d)
    assert dict(d["launch"])["grid"].count("×") == 2 and "block" in dict(d["launch"])
    launch = [f for f in d["flows"] if f["kind"] == "launch"]
    assert len(launch) == 1 and launch[0]["dir"] == "in"
    host = ev.iloc[launch[0]["row"]]
    assert str(host["plane"]) == "/host:CPU" and str(host["line"]).startswith("tf_gpu_private_6")
    assert host["name"] == ev["name"].iat[kernel]
    assert launch[0]["launched_by"]  # the op around the launch on the host thread
    stats = dict(d["stats"])
    assert stats["correlation_id"] == str(bert.stat("correlation_id").iat[kernel])
    # and back: the launch points at its kernel
    back = event_details(bert, bert_model, TraceIndex(bert), launch[0]["row"])
    assert [(f["kind"], f["dir"], f["row"]) for f in back["flows"]] == [("launch", "out", kernel)]
    assert back["parents"] and back["parents"][0]["depth"] < back["where"]["depth"]


def test_producer_consumer_links(bert, bert_model):
    idx = TraceIndex(bert)
    p = bert.stat("_p")
    c = bert.stat("_c")
    shared = set(p.dropna().astype("int64")) & set(c.dropna().astype("int64"))
    value = sorted(shared)[0]
    producer = int(p.index[p.astype("Int64") == value][0])
    consumer = int(c.index[c.astype("Int64") == value][0])
    assert ("producer/consumer", "out", consumer) in [
        (f["kind"], f["dir"], f["row"]) for f in idx.flows(producer)
    ]
    assert ("producer/consumer", "in", producer) in [
        (f["kind"], f["dir"], f["row"]) for f in idx.flows(consumer)
    ]


KINETO = ROOT / "tests" / "data" / "chrome"


@pytest.mark.parametrize(
    "name", ["torch_transformer_h100.pt.trace.json.gz", "resnet50_v100_workers0.pt.trace.json.gz"]
)
def test_a_pytorch_kernel_links_to_its_launch_once(name):
    """Kineto records each launch three ways (``args.correlation`` on both ends, the ``ac2g``
    flow the reader turns into ``_p``/``_c``, and the ``correlation_id`` it adds): the details
    list one link per launch/kernel pair, so the viewer draws one arrow (issue 29 item 9)."""
    import tfprof_widgets as tw

    run = tw.load(KINETO / name)
    idx = TraceIndex(run)
    ev = run.events
    kernels = ev.index[(ev["plane"] == "/device:GPU:0") & ev["line"].str.startswith("Stream")]
    corr = run.stat("correlation")
    checked = 0
    for k in kernels[:: max(1, len(kernels) // 150)]:
        flows = idx.flows(int(k))
        if pd.isna(corr.iat[int(k)]):
            continue
        assert [(f["kind"], f["dir"]) for f in flows] == [("launch", "in")], (k, flows)
        launch = flows[0]["row"]
        assert corr.iat[launch] == corr.iat[int(k)]
        back = [(f["kind"], f["dir"], f["row"]) for f in idx.flows(launch)]
        assert back == [("launch", "out", int(k))], back
        checked += 1
    assert checked >= 50


def test_launch_arguments_are_named():
    assert launch_arguments("regs:38 shm:0 grid:160,1,1 block:1024,1,1") == [
        ("registers per thread", "38"),
        ("shared memory (bytes)", "0"),
        ("grid", "160 × 1 × 1"),
        ("block", "1024 × 1 × 1"),
    ]


# -- the view: live messages and the offline payload --------------------------------------
def test_the_widget_answers_window_details_search_and_next(bert):
    from tfprof_widgets.views.trace.viewer import timeline as trace_viewer

    view = trace_viewer(bert)
    w = view.widget()
    sent = []
    w.send = lambda content, buffers=None: sent.append((content, buffers))
    a, b = view.initial
    w._on_msg(
        w,
        {"type": "window", "vid": "v", "seq": 1, "x0": a, "x1": b, "cols": 800, "search": "MatMul"},
        [],
    )
    msg, bufs = sent[-1]
    assert msg["type"] == "marks" and msg["seq"] == 1 and len(bufs) == 1
    assert msg["marks"]["n_events"] == overlapping(bert.events, a, b)
    assert any(f == "hits" for f, _, _ in msg["marks"]["layout"])
    # names go once per view
    w._on_msg(w, {"type": "window", "vid": "v", "seq": 2, "x0": a, "x1": b, "cols": 800}, [])
    assert sent[-1][0]["names"] == {}
    w._on_msg(w, {"type": "details", "vid": "v", "seq": 3, "row": 15460}, [])
    assert sent[-1][0]["details"]["row"] == 15460
    w._on_msg(w, {"type": "search", "vid": "v", "seq": 4, "search": "MatMul"}, [])
    assert sent[-1][0]["count"] == int(bert.events["name"].str.contains("MatMul").sum())
    w._on_msg(w, {"type": "search", "vid": "v", "seq": 5, "search": "("}, [])
    assert "error" in sent[-1][0]
    w._on_msg(
        w,
        {
            "type": "next",
            "vid": "v",
            "seq": 6,
            "search": "MatMul",
            "t": 0.0,
            "row": -1,
            "direction": 1,
        },
        [],
    )
    assert "MatMul" in sent[-1][0]["event"]["name"]
    w._on_msg(w, {"type": "details", "vid": "v", "seq": 7, "row": "nope"}, [])
    assert sent[-1][0]["type"] == "error" and sent[-1][0]["seq"] == 7
    json.dumps(w._meta)
    first = w._marks0_header
    assert first["n_events"] > 0 and len(w._marks0) % 8 == 0


def test_the_notebook_gets_the_live_widget_then_text_then_the_offline_viewer(bert, monkeypatch):
    import IPython.display

    from tfprof_widgets.views.trace.viewer import timeline as trace_viewer

    shown = []
    monkeypatch.setattr(IPython.display, "display", lambda obj, **kw: shown.append(obj))
    trace_viewer(bert)._ipython_display_()
    live, text, viewer = shown
    assert "application/vnd.jupyter.widget-view+json" in live
    assert "<script" not in text["text/html"] and f"{_drawn(bert):,} events" in text["text/plain"]
    js = viewer["application/javascript"]
    assert "__tfpvRenderOffline" in js and "export " not in js.split("var payload", 1)[0]
    assert "</script" not in js.lower()  # an exported page wraps it in a <script>
    assert "http://" not in js and "https://" not in js  # nothing from the network
    html = trace_viewer(bert).html()  # a report's copy: the module inline
    assert "renderOffline(" in html and '<script type="module">' in html
    module = html.split('<script type="module">', 1)[1].rsplit("</script>", 1)[0]
    assert "</script" not in module.lower()


def test_a_reports_trace_says_what_its_reader_can_do_past_its_detail(tmp_path):
    """A report's reader has no notebook to run (issue 29 item 9): the note where the offline
    trace's detail ends names the step kept in full and a command that writes a page of the
    window shown, from the capture; run here on a window, it writes that page."""
    import shlex
    import subprocess

    import tfprof_widgets as tw
    from tfprof_widgets.report import report_views

    path = KINETO / "torch_transformer_h100.pt.trace.json.gz"
    run = tw.load(path)
    note = report_views(run)["timeline"].offline_payload(800_000)["meta"]["offline_note"]
    assert "notebook" not in note.lower(), note
    assert "Every event of the first view" in note and "{window}" in note, note
    a = float(run.events["start_us"].min())
    command = shlex.split(note[note.index("python -c") :].replace("{window}", f"({a}, {a + 2000})"))
    out = subprocess.run(
        [sys.executable, *command[1:]],
        cwd=tmp_path,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    page = (tmp_path / "trace.html").read_text()
    assert "renderOffline" in page and f"[{a},{a + 2000}" in page.replace(" ", "")


def test_offline_payload_fits_its_budget_and_keeps_the_busiest_step(bert):
    from tfprof_widgets.views.trace.viewer import timeline as trace_viewer

    view = trace_viewer(bert)
    payload = view.offline_payload(budget_bytes=600_000)
    assert payload["bytes"] <= 600_000
    assert len(json.dumps(payload, separators=(",", ":"))) <= 600_000
    exact = [t for t in payload["tiles"] if t["exact"]]
    assert exact and exact[0]["label"].startswith("step 0 (")
    root = payload["tiles"][0]
    assert root["header"]["n_events"] == _drawn(bert)
    assert "detail ends" in payload["meta"]["offline_note"]
    # the tree: children cover their parent in four
    for t in payload["tiles"]:
        if t["children"]:
            kids = [payload["tiles"][i] for i in t["children"]]
            assert kids[0]["x0"] == t["x0"] and abs(kids[-1]["x1"] - t["x1"]) < 1e-6


def test_a_stub_run_without_stats_or_lines_works():
    run = StubRun(synthetic_events(30_000, n_lines=3))
    from tfprof_widgets.views.trace.viewer import timeline as trace_viewer

    view = trace_viewer(run)
    w = view.widget()
    sent = []
    w.send = lambda content, buffers=None: sent.append((content, buffers))
    w._on_msg(w, {"type": "details", "vid": "v", "seq": 1, "row": 5}, [])
    d = sent[-1][0]["details"]
    assert d["stats"] == [] and d["flows"] == []
    assert view.text().startswith("Trace viewer: 30,000 events")
    assert pathlib.Path(__file__).exists()


def test_kineto_launches_link_to_their_kernels(tmp_path):
    """Chrome traces (Kineto) carry 'correlation' and name each launch argument."""
    import tfprof_widgets as tw

    trace = {
        "traceEvents": [
            {"ph": "X", "name": "aten::add", "pid": 1, "tid": 1, "ts": 100, "dur": 50},
            {
                "ph": "X",
                "name": "cudaLaunchKernel",
                "pid": 1,
                "tid": 1,
                "ts": 110,
                "dur": 5,
                "args": {"correlation": 7},
            },
            {
                "ph": "X",
                "name": "add_kernel",
                "pid": 0,
                "tid": 7,
                "ts": 130,
                "dur": 20,
                "args": {
                    "correlation": 7,
                    "grid": [4, 1, 1],
                    "block": [128, 1, 1],
                    "registers per thread": 22,
                },
            },
        ]
    }
    path = tmp_path / "k.trace.json"
    path.write_text(json.dumps(trace))
    run = tw.load(path)
    model = TraceModel.from_run(run)
    kernel = int(run.events.index[run.events["name"] == "add_kernel"][0])
    d = event_details(run, model, TraceIndex(run), kernel)
    assert [(f["kind"], f["dir"], f["name"]) for f in d["flows"]] == [
        ("launch", "in", "cudaLaunchKernel")
    ]
    assert d["flows"][0]["launched_by"] == ["aten::add"]
    assert dict(d["launch"])["registers per thread"] == "22"


def test_offline_copy_keeps_the_asked_window_in_full(bert):
    from tfprof_widgets.views.trace.viewer import timeline as trace_viewer

    a, b = 1_792_000.0, 1_800_000.0  # GPU:4's step, not the busiest one
    payload = trace_viewer(bert, window_us=(a, b)).offline_payload()
    exact = [t for t in payload["tiles"] if t["exact"]]
    assert exact and (exact[0]["x0"], exact[0]["x1"]) == (a, b)
    assert exact[0]["header"]["n_events"] == overlapping(bert.events, a, b)
    assert payload["meta"]["initial"] == [a, b]


# -- XLA lines and HLO details (issue 27 item 5) ---------------------------------------------
XLA_DATA = {
    "jax_cnn_nographs": ROOT / "tests" / "data" / "xplane_h100_jax" / "jax_cnn_nographs.xplane.pb",
    "jax_cnn_graphs": ROOT / "tests" / "data" / "xplane_h100_jax" / "jax_cnn_graphs.xplane.pb",
    **{
        f"jax08_{k}": ROOT / "tests" / "data" / "xplane_amd_jax" / f"jax08_{k}.xplane.pb"
        for k in ("attention", "conv", "elementwise", "gemm")
    },
}
_XLA_RUNS: dict = {}


def xla_run(name):
    import tfprof_widgets as tw

    if name not in _XLA_RUNS:
        _XLA_RUNS[name] = tw.load(XLA_DATA[name], progress=False)
    return _XLA_RUNS[name]


@pytest.mark.parametrize("name", list(XLA_DATA))
def test_xla_lines_are_named_and_cut_as_xprofs_trace_viewer(name):
    """Rule (XProf 2.24's DeriveEventsFromAnnotations, tests/golden/<name>/trace_lines.json
    from scripts/make_trace_lines_golden.py): per stream with XLA kernels (copies aside), an
    'XLA Modules - from #N' line of '<module>(<program_id>)' events and an 'XLA Ops - from #N'
    line of HLO instruction events, consecutive kernels of one name and step being one event.
    Every derived event equals XProf's: name, duration, and start (XProf's trace counts from
    a start 42 µs away from ours on the H100 pair: compared after that one offset)."""
    theirs = json.loads((ROOT / "tests" / "golden" / name / "trace_lines.json").read_text())
    run = xla_run(name)
    model = run.trace_model
    lanes = model.lanes
    derived = model.derived
    compared = 0
    for plane, lines in theirs.items():
        for line, events in lines.items():
            if not line.startswith(("XLA Modules", "XLA Ops")):
                continue
            lane = lanes[(lanes["plane"] == plane) & (lanes["line"] == line)]
            assert len(lane) == 1 and lane["label"].iat[0] == line, (plane, line)
            ours = derived[(derived["plane"] == plane) & (derived["line"] == line)]
            ours = ours.sort_values(["start_us", "name"], kind="stable")
            assert list(ours["name"].astype(str)) == [e[0] for e in events], (plane, line)
            dur = np.array([e[2] for e in events])
            np.testing.assert_allclose(ours["dur_us"].to_numpy(), dur, atol=2e-3)
            offset = np.array([e[1] for e in events]) - ours["start_us"].to_numpy()
            assert np.ptp(offset) < 2e-3, (plane, line)
            compared += len(events)
    ours_lines = set(zip(derived["plane"].astype(str), derived["line"].astype(str)))
    theirs_lines = {(p, ln) for p, lines in theirs.items() for ln in lines if ln.startswith("XLA ")}
    assert ours_lines == theirs_lines and compared == len(derived)
    # Device groups list them first, as XProf does: modules, ops, then the streams.
    view_groups = __import__("tfprof_widgets").views.timeline(run).groups
    first = view_groups[0]["lanes"]
    assert str(lanes["line"].iat[first[0]]).startswith("XLA Modules")
    assert str(lanes["line"].iat[first[1]]).startswith("XLA Ops")


def test_a_xla_kernels_details_name_its_hlo_op_framework_op_source_and_text():
    """A kernel's details (looked up on click) name its HLO instruction (its ``hlo_op``), its
    program, the framework op (the instruction's metadata.op_name; the capture writes it, or
    for a fusion the scope of its fused ops, as the kernel's own ``name`` stat on the H100),
    the Python line and the HLO text."""
    run = xla_run("jax_cnn_nographs")
    model = run.trace_model
    idx = TraceIndex(run)
    op = run.stat("hlo_op")
    framework = run.stat("name")
    ev = run.events
    kernels = ev.index[ev["line"].str.startswith("Stream #14") & framework.notna().to_numpy()]
    assert len(kernels) > 100
    with_source = same = scoped = 0
    for k in kernels[::7]:
        d = event_details(run, model, idx, int(k))
        hlo = dict(d["hlo"])
        assert hlo["HLO op"] == op.iat[k]
        assert hlo["XLA module"] == "jit_step (program 9941)"
        # The kernel's name stat is the op, or for a fusion the scope its fused ops share.
        scope = framework.iat[k]
        if "framework op" in hlo:
            assert hlo["framework op"] == scope or hlo["framework op"].startswith(scope + "/")
            same += hlo["framework op"] == scope
            assert f'op_name="{hlo["framework op"]}"' in hlo["HLO text"]
        else:  # a fusion with no op name: the path its fused ops share, inside the kernel's
            assert hlo["framework scope"] == scope or hlo["framework scope"].startswith(scope + "/")
            scoped += 1
        assert hlo["HLO text"].startswith(f"%{op.iat[k]} = ")
        if "source" in hlo:
            assert re.fullmatch(r".+\.py:\d+", hlo["source"]), hlo["source"]
            with_source += 1
    assert with_source > 0 and scoped > 0 and same > len(kernels[::7]) // 2
    # A fusion's text names its kind and fused computation.
    h = run.hlo_instructions
    fusion = h[(h["opcode"] == "fusion") & (h["module"] == "jit_step")].iloc[0]
    from tfprof_widgets.frameworks.xla.trace_lines import hlo_text

    text = hlo_text(fusion)
    assert (
        f"kind={fusion['fusion_kind']}" in text and f"calls={fusion['called_computations']}" in text
    )
    # Not stored per event in the page: the live widget's meta and the offline copy carry no
    # HLO text.
    from tfprof_widgets.views.trace.viewer import timeline

    view = timeline(run)
    assert "HLO text" not in json.dumps(view.meta()) and "op_name=" not in json.dumps(
        view.offline_payload()["meta"]
    )


def test_an_xla_ops_event_links_its_first_kernel_and_names_its_instruction():
    """A derived 'XLA Ops' event (a row beyond run.events) has details too: its span, the
    first kernel it covers (a link, not a flow) and that kernel's HLO instruction; it has no
    flows of its own."""
    run = xla_run("jax_cnn_graphs")
    model = run.trace_model
    n = len(run.events)
    ops = np.flatnonzero(model.derived["line"].astype(str).str.startswith("XLA Ops").to_numpy())
    row = n + int(ops[3])
    d = event_details(run, model, TraceIndex(run), row)
    json.dumps(d)
    assert d["name"] == str(model.derived["name"].iat[ops[3]])
    assert [f["kind"] for f in d["flows"]] == ["derived"]
    kernel = d["flows"][0]["row"]
    assert kernel < n and str(run.events["line"].iat[kernel]).startswith("Stream #14")
    assert dict(d["hlo"])["HLO op"] in (d["name"], run.stat("hlo_op").iat[kernel])
    assert TraceIndex(run).flows(row) == []
    assert model.locate(row)["lane"] == int(
        np.flatnonzero(model.lanes["line"] == "XLA Ops - from #14")[0]
    )
