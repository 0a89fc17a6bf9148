"""Finding captures: logdirs, run directories, single files, list_runs()."""

import os
import time

import pytest
from conftest import SAMPLES, sample_files
from xspace_builder import gpu_capture, write_multi_host_run

import tfprof_widgets as tw
from tfprof_widgets import schema


def make_logdir(root, runs=("2026_01_01_00_00_00", "2026_01_02_00_00_00")):
    for i, r in enumerate(runs):
        gpu_capture("h", n_steps=i + 1).write(root / "plugins" / "profile" / r / "h.xplane.pb")
    return root


def test_newest_run_by_default_and_by_name(tmp_path):
    logdir = make_logdir(tmp_path)
    assert tw.load(logdir).name == "2026_01_02_00_00_00"
    older = tw.load(logdir, run="2026_01_01_00_00_00")
    assert older.name == "2026_01_01_00_00_00"
    assert older.events["step"].nunique() == 1


def test_unknown_run_name_lists_runs(tmp_path):
    logdir = make_logdir(tmp_path)
    with pytest.raises(tw.ProfileNotFoundError, match="no run named 'nope'.*2026_01_02"):
        tw.load(logdir, run="nope")


def test_keras_layout_with_train_subdir():
    run = tw.load(SAMPLES / "keras_fit")  # <logdir>/train/plugins/profile/<run>/
    assert run.path.endswith(os.path.join("train", "plugins", "profile", run.name))


def test_run_directory_and_single_file(tmp_path):
    run_dir = write_multi_host_run(tmp_path)
    assert tw.load(run_dir).hosts == ["worker0", "worker1"]
    single = tw.load(run_dir / "worker1.xplane.pb")
    assert single.hosts == ["worker1"]
    (sample,) = sample_files("input_bound")
    assert len(tw.load(sample).events) == len(tw.load(SAMPLES / "input_bound").events)


def test_list_runs(tmp_path):
    make_logdir(tmp_path)
    write_multi_host_run(tmp_path / "other")
    df = tw.list_runs(tmp_path)
    assert list(df.columns) == list(schema.RUNS)
    assert df["run"].tolist() == [
        "2026_01_01_00_00_00",
        "2026_01_02_00_00_00",
        "2026_01_02_03_04_05",
    ]
    assert df["hosts"].tolist() == [("h",), ("h",), ("worker0", "worker1")]
    assert (df["bytes"] > 0).all()
    assert df["mtime"].dtype == "datetime64[ns]"
    assert all(os.path.isabs(p) for p in df["path"])


def test_list_runs_on_a_sample():
    df = tw.list_runs(SAMPLES)
    names = ("keras_fit", "custom_loop", "input_bound", "gpu_shaped", "jax_cnn_cpu")
    assert len(df) == len(names)
    # Hosts are named as loading names them: the host each XSpace records ("vm" for the TF
    # CPU samples, made on a machine of that name), else the file's name.
    expected = sorted(tuple(sorted(tw.load(SAMPLES / n).hosts)) for n in names)
    assert sorted(df["hosts"]) == expected
    assert ("vm",) in expected and ("worker0", "worker1") in expected


def test_symlink_loop_does_not_hang(tmp_path):
    logdir = make_logdir(tmp_path)
    os.symlink(tmp_path, tmp_path / "loop")
    os.symlink(tmp_path / "loop2", tmp_path / "loop2")  # a link to itself
    t = time.perf_counter()
    assert tw.load(logdir).name == "2026_01_02_00_00_00"
    assert len(tw.list_runs(logdir)) == 2
    assert time.perf_counter() - t < 30


def test_xspace_preferred_over_trace_json_of_the_same_run(tmp_path):
    run_dir = write_multi_host_run(tmp_path, hosts=("h",))
    (run_dir / "h.trace.json.gz").write_bytes(b"not read")
    assert tw.load(run_dir).files == [str(run_dir / "h.xplane.pb")]


# -- one host name per file, whatever its kind -----------------------------------------------
def chrome_json(path):
    import json

    events = [{"ph": "X", "pid": 1, "tid": 2, "name": "op", "ts": 10, "dur": 5}]
    path.write_text(json.dumps({"traceEvents": events}))
    return path


def host_case(kind, tmp_path):
    """(what to load, the host it must be named) for each input kind."""
    import shutil

    tf1 = SAMPLES / "tf1_graph"
    if kind == "xplane":
        return sample_files("custom_loop")[0], "vm"  # the host name its XSpace records
    if kind == "run_dir":
        return sample_files("gpu_shaped")[0].parent, "worker0"
    if kind == "chrome_json":
        return chrome_json(tmp_path / "w0.json"), "w0"
    if kind == "chrome_trace_gz":
        import gzip

        raw = chrome_json(tmp_path / "x.json").read_bytes()
        (tmp_path / "w1.trace.json.gz").write_bytes(gzip.compress(raw))
        return tmp_path / "w1.trace.json.gz", "w1"
    if kind == "run_metadata":
        return shutil.copy(tf1 / "steps" / "step_0.run_metadata.pb", tmp_path / "step.pb"), "step"
    if kind == "run_metadata_dir":
        return tf1 / "steps", "localhost"
    assert kind == "tfprof"
    return tf1 / "model.tfprof", "model"


KINDS = [
    "xplane",
    "run_dir",
    "chrome_json",
    "chrome_trace_gz",
    "run_metadata",
    "run_metadata_dir",
    "tfprof",
]


@pytest.mark.parametrize("kind", KINDS)
def test_load_selects_the_runs_own_host(kind, tmp_path):
    """load(path, hosts=[run.hosts[0]]) loads that host, for every kind of input: the readers
    and the host selection name hosts with the one host_of()."""
    path, host = host_case(kind, tmp_path)
    run = tw.load(path)
    assert run.hosts[0] == host
    again = tw.load(path, hosts=[run.hosts[0]])
    assert again.hosts == [host]
    assert len(again.events) == (run.events["host"] == host).sum()


@pytest.mark.parametrize(
    "name,host",
    [
        ("w0.xplane.pb", "w0"),
        ("w0.trace.json.gz", "w0"),
        ("w0.trace.json", "w0"),
        ("w0.json", "w0"),
        ("w0.json.gz", "w0"),
        ("w0.tfprof", "w0"),
        ("profile_3", "profile_3"),
        ("w0.run_metadata.pb", "w0"),
        ("step.pb", "step"),
        ("127.0.0.1_33905.xplane.pb", "127.0.0.1_33905"),
    ],
)
def test_host_of(name, host):
    from tfprof_widgets.readers.formats import host_of

    assert host_of(f"/some/dir/{name}") == host


def test_list_runs_names_hosts_as_load_does(tmp_path):
    import shutil

    run_dir = tmp_path / "plugins" / "profile" / "2026_01_01_00_00_00"
    run_dir.mkdir(parents=True)
    for f in (SAMPLES / "tf1_graph" / "steps").iterdir():
        shutil.copy(f, run_dir / f.name)
    listed = tw.list_runs(tmp_path)
    assert listed["hosts"].tolist() == [tuple(tw.load(tmp_path).hosts)] == [("localhost",)]


def test_files_that_name_the_same_host_stay_distinct_hosts(tmp_path):
    """Issue 20 item 7: two files mapping to one host name (here w.trace.json and
    w.trace.json.gz; or two captures recording one host) used to end in pandas' 'categories
    must be unique'. Each becomes its own host, named by its whole file name."""
    import gzip
    import json

    doc = json.dumps({"traceEvents": [{"ph": "X", "name": "a", "ts": 1, "dur": 2, "pid": 1}]})
    (tmp_path / "w.trace.json").write_text(doc)
    (tmp_path / "w.trace.json.gz").write_bytes(gzip.compress(doc.encode()))
    run = tw.load(tmp_path, progress=False)
    assert run.hosts == ["w.trace.json", "w.trace.json.gz"] and len(run.events) == 2
    for i in range(2):  # two captures that both record the host "same"
        gpu_capture("same").write(tmp_path / "two" / f"c{i}.xplane.pb")
    assert tw.load(tmp_path / "two", progress=False).hosts == ["c0", "c1"]


# -- two captures that name one host (issue 20 item 7) ---------------------------------------
def test_two_files_of_one_host_name_load_as_distinct_hosts(tmp_path):
    """w.trace.json beside w.trace.json.gz (no XSpace to prefer) are two captures: both
    load, each named by its whole file name, and each selectable by that name; list_runs
    names them the same way."""
    import gzip

    run_dir = tmp_path / "plugins" / "profile" / "2026_01_01_00_00_00"
    run_dir.mkdir(parents=True)
    raw = chrome_json(run_dir / "w.trace.json").read_bytes()
    (run_dir / "w.trace.json.gz").write_bytes(gzip.compress(raw))
    (run_dir / "v.trace.json").write_bytes(raw)
    run = tw.load(run_dir)
    assert run.hosts == ["v", "w.trace.json", "w.trace.json.gz"]
    assert run.events.groupby("host", observed=True).size().tolist() == [1, 1, 1]
    assert tw.load(run_dir, hosts=["w.trace.json.gz"]).files == [str(run_dir / "w.trace.json.gz")]
    assert tw.list_runs(tmp_path)["hosts"].tolist() == [tuple(run.hosts)]


def test_undecodable_names_of_one_host_get_numbered(tmp_path):
    """Two names whose undecodable bytes both read as U+FFFD, copies of one capture (so
    the host their XSpace records collides too): the second is numbered."""
    import shutil

    src = sample_files("custom_loop")[0]
    d = os.fsencode(tmp_path)
    shutil.copy(os.fsencode(src), d + b"/\xff.xplane.pb")
    shutil.copy(os.fsencode(src), d + b"/\xfe.xplane.pb")
    run = tw.load(tmp_path)
    assert len(set(run.hosts)) == 2 and run.hosts[1].endswith("(2)")
    per_host = run.events.groupby("host", observed=True).size()
    assert per_host.iloc[0] == per_host.iloc[1] > 0


def test_a_capture_named_like_the_run_metadata_steps_host(tmp_path):
    """RunMetadata steps load as host 'localhost'; a localhost.trace.json beside them is
    another capture and keeps its own host."""
    import json
    import shutil

    for f in (SAMPLES / "tf1_graph" / "steps").iterdir():
        shutil.copy(f, tmp_path / f.name)
    steps = tw.load(tmp_path)  # the steps alone
    ts = steps.t0_ns / 1000 + 10  # the trace at the steps' own times (µs since 1970)
    event = {"ph": "X", "pid": 1, "tid": 2, "name": "op", "ts": ts, "dur": 5}
    (tmp_path / "localhost.trace.json").write_text(json.dumps({"traceEvents": [event]}))
    run = tw.load(tmp_path)
    assert run.hosts == ["localhost", "localhost.trace.json"]
    assert (run.events["host"] == "localhost.trace.json").sum() == 1
    assert (run.events["host"] == "localhost").sum() == len(steps.events)


# -- the last mile: listing races --------------------------------------------------------------
def test_a_run_file_removed_while_listing_is_not_a_bare_oserror(tmp_path, monkeypatch):
    """A run's file listed, then removed before its mtime or stat is read (a logdir being
    cleaned up): list_runs leaves that run out, load takes the other one."""
    logdir = make_logdir(tmp_path)
    real_mtime, real_stat = os.path.getmtime, os.stat

    def gone(p) -> bool:
        p = os.fspath(p)
        return "2026_01_01" in p and p.endswith(".xplane.pb")

    def getmtime(p):
        if gone(p):
            raise FileNotFoundError(2, "No such file or directory", p)
        return real_mtime(p)

    def stat(p, *a, **k):
        if gone(p):
            raise FileNotFoundError(2, "No such file or directory", p)
        return real_stat(p, *a, **k)

    monkeypatch.setattr(os.path, "getmtime", getmtime)
    monkeypatch.setattr(os, "stat", stat)
    assert tw.list_runs(logdir)["run"].tolist() == ["2026_01_02_00_00_00"]
    assert tw.load(logdir).name == "2026_01_02_00_00_00"


def test_a_run_directory_that_cannot_be_listed_is_named(tmp_path, monkeypatch):
    from tfprof_widgets.readers import discovery

    run_dir = write_multi_host_run(tmp_path)

    def listdir(p):
        raise FileNotFoundError(2, "No such file or directory", p)

    monkeypatch.setattr(discovery.os, "listdir", listdir)
    with pytest.raises(tw.ProfileNotFoundError, match="removed while listed") as info:
        tw.load(run_dir)
    assert info.value.path == str(run_dir)
