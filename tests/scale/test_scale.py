"""Pod scale: convert -> open -> every pod analysis equals the in-memory Run's; hosts come
back as the Runs their files load into; resuming, damaged host files, fsspec URLs.

The Dask engine's equality with DuckDB is in test_scale_dask.py."""

from __future__ import annotations

import dataclasses
import json
import os
import pathlib
import shutil
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
from conftest import ROOT, SAMPLES, tree_state

pytest.importorskip("duckdb")
pytest.importorskip("pyarrow")

import tfprof_widgets as tw  # noqa: E402
from tfprof_widgets import schema  # noqa: E402
from tfprof_widgets.analysis.steps import overview_steps  # noqa: E402
from tfprof_widgets.scale import dataset as ds  # noqa: E402

GPU_SHAPED = SAMPLES / "gpu_shaped"
BERT = ROOT / "tests" / "data" / "bert_8gpu_multi_worker.xplane.pb"
TABLES = [
    "steps",
    "per_host_steps",
    "ops",
    "kernels",
    "memory",
    "memory_summary",
    "memory_breakdown",
    "tf_data_bottleneck",
    "profile_options",
    "idle_time_breakdown",
    "comm_comp_overlap",
    "queue_length_summary",
    "planes",
    "lines",
    "event_metadata",
    "metadata_stats",
    "plane_stats",
    "tfprof_nodes",
    "tfprof_execs",
]
SUMMARIES = ["input_pipeline", "overview_summary"]
GROUP_COLUMNS = {
    "steps": "group_id",
    "memory": "group_id",
    "memory_summary": "peak_group_id",
    "memory_breakdown": "group_id",
}


def assert_same(a: pd.DataFrame, b: pd.DataFrame, what: str = "") -> None:
    """Equal frames: values (times to 1e-6 µs: hosts' clocks are offset in float µs),
    dtypes, categories and index."""
    if not len(a) and not len(b):  # empty frames: the columns are what matters
        assert list(a.columns) == list(b.columns), what
        return
    pd.testing.assert_frame_equal(a, b, check_exact=False, rtol=1e-12, atol=1e-6, obj=what)


def assert_same_summary(a, b, what: str) -> None:
    for f in dataclasses.fields(a):
        x, y = getattr(a, f.name), getattr(b, f.name)
        if isinstance(x, pd.DataFrame):
            assert_same(x, y, f"{what}.{f.name}")
        elif isinstance(x, float):
            assert x == pytest.approx(y, rel=1e-12, abs=1e-9, nan_ok=True), f"{what}.{f.name}"
        else:
            assert x == y, f"{what}.{f.name}"


def two_host_run(tmp_path: pathlib.Path) -> pathlib.Path:
    """A run directory of two real CPU captures as hosts A and B: derived step groups."""
    run_dir = tmp_path / "logs" / "plugins" / "profile" / "2026_01_01_00_00_00"
    run_dir.mkdir(parents=True)
    shutil.copy(next((SAMPLES / "input_bound").rglob("*.xplane.pb")), run_dir / "hostA.xplane.pb")
    shutil.copy(next((SAMPLES / "keras_fit").rglob("*.xplane.pb")), run_dir / "hostB.xplane.pb")
    return run_dir


@pytest.fixture(scope="module")
def gpu_pod(tmp_path_factory):
    out = tmp_path_factory.mktemp("pods") / "gpu_shaped"
    tw.convert(GPU_SHAPED, out, progress=False)
    with tw.open(out) as pod:
        yield pod


@pytest.mark.parametrize("capture", [GPU_SHAPED, BERT], ids=["gpu_shaped", "bert_gpu"])
def test_every_pod_analysis_equals_the_in_memory_run(capture, tmp_path):
    out = tmp_path / "ds"
    result = tw.convert(capture, out, progress=False)
    run = tw.load(capture)
    assert result.converted == run.hosts and not result.failed
    with tw.open(out) as pod:
        assert pod.hosts == run.hosts
        assert pod.t0_ns == run.t0_ns
        for name in TABLES:
            assert_same(getattr(pod, name), getattr(run, name), name)
        for name in SUMMARIES:
            assert_same_summary(getattr(pod, name), getattr(run, name), name)
        assert_same(_plain(pod.top_events(40)), _plain(run.events.nlargest(40, "dur_us")), "top")
        assert pod.duration_us == pytest.approx(run.duration_us, abs=1e-3)
        for name, table in ds.ANALYSIS_TABLES.items():
            assert schema.mismatches(getattr(pod, name), table) == [], name


def _plain(df: pd.DataFrame) -> pd.DataFrame:
    """Categoricals as their values (a pod's top events have the categories of the values
    present, not the whole run's)."""
    cats = [c for c in df.columns if isinstance(df[c].dtype, pd.CategoricalDtype)]
    return df.astype({c: object for c in cats})


def test_derived_step_groups_are_numbered_per_host(tmp_path):
    """Captures without group_id stats: everything equals the Run's, and a host's group ids
    are the Run's shifted to start where that host's own numbering starts (XProf numbers
    per host; a multi-host Run numbers across hosts)."""
    run_dir = two_host_run(tmp_path)
    tw.convert(run_dir, tmp_path / "ds", progress=False)
    run = tw.load(run_dir)
    with tw.open(tmp_path / "ds") as pod:
        for name in TABLES:
            a, b = getattr(pod, name), getattr(run, name)
            col = GROUP_COLUMNS.get(name)
            if col:  # checked below, on the steps
                a, b = a.drop(columns=col), b.drop(columns=col)
            assert_same(a, b, name)
        for host in run.hosts:
            ga = pod.steps.loc[pod.steps["host"] == host, "group_id"].to_numpy(dtype=float)
            gb = run.steps.loc[run.steps["host"] == host, "group_id"].to_numpy(dtype=float)
            assert ga[0] == 0 and (ga - ga[0] == gb - gb[0]).all()
        for host in run.hosts:
            # Alone, a file is named by the host its capture records ("vm" for both here).
            alone = tw.load(run_dir / f"{host}.xplane.pb").steps.drop(columns="host")
            assert_same(pod.host(host).steps.drop(columns="host"), alone, host)


@pytest.mark.parametrize("host", ["worker0", "worker1"])
def test_a_host_is_the_run_of_its_file(gpu_pod, host):
    alone = tw.load(next(GPU_SHAPED.rglob(f"{host}.xplane.pb")))
    run = gpu_pod.host(host)
    assert isinstance(run, tw.Run) and run.hosts == [host] and run.t0_ns == alone.t0_ns
    for table in ds.RAW_TABLES:
        pd.testing.assert_frame_equal(getattr(run, table), getattr(alone, table), obj=table)
    np.testing.assert_array_equal(run.event_line_rows, alone.event_line_rows)
    np.testing.assert_array_equal(run.line_plane_rows, alone.line_plane_rows)
    assert run.stat("kernel_details").equals(alone.stat("kernel_details"))
    assert_same(run.ops, alone.ops)
    html = tw.views.kernel_stats(run).html()  # the views work on it
    assert "volta_sgemm" in html


def test_sql_over_events_and_stats(gpu_pod):
    run = tw.load(GPU_SHAPED)
    per_host = gpu_pod.sql("SELECT host, count(*) AS n FROM events GROUP BY host ORDER BY host")
    expected = run.events.groupby("host", observed=True).size()
    assert per_host.set_index("host")["n"].to_dict() == expected.to_dict()
    rows = gpu_pod.sql("SELECT event, start_us FROM events ORDER BY event")
    np.testing.assert_allclose(rows["start_us"], run.events["start_us"], atol=1e-6)
    assert rows["event"].tolist() == list(range(len(run.events)))
    stats = gpu_pod.sql("SELECT count(*) AS n, max(event) AS last FROM event_stats")
    assert stats["n"][0] == len(run.event_stats)
    assert stats["last"][0] == run.event_stats["event"].max()
    top = gpu_pod.top_events(5, where="name = 'MemcpyH2D'")
    assert (top["name"] == "MemcpyH2D").all() and len(top) == 5


def test_memory_limit_and_spill_directory(tmp_path):
    out = tmp_path / "ds"
    tw.convert(GPU_SHAPED, out, progress=False, workers=1)
    spill = tmp_path / "spill"
    spill.mkdir()
    pod = tw.open(out, memory_limit="64MB", temp_directory=str(spill), threads=1)
    limit = pod.sql("SELECT current_setting('memory_limit') AS m")["m"][0]
    assert limit.startswith("61") or "MiB" in limit or "MB" in limit
    assert pod.sql("SELECT current_setting('temp_directory') AS t")["t"][0] == str(spill)
    pod.close()
    assert spill.exists()  # a directory the caller gave is theirs to remove


def test_conversion_writes_nothing_next_to_the_capture(tmp_path):
    src = tmp_path / "logs"
    shutil.copytree(GPU_SHAPED, src)
    before = tree_state(src)
    tw.convert(src, tmp_path / "ds", progress=False)
    assert tree_state(src) == before


def test_resume_skips_converted_hosts_and_redoes_half_written_ones(tmp_path, monkeypatch):
    src, out = tmp_path / "logs", tmp_path / "ds"
    shutil.copytree(GPU_SHAPED, src)

    calls = {"n": 0}
    real = ds.write_table

    def dies_on_second_host(loc, path, df):
        calls["n"] += 1
        if calls["n"] > len(ds.TABLES) + 3:  # partway through the second host's files
            raise KeyboardInterrupt
        real(loc, path, df)

    monkeypatch.setattr(ds, "write_table", dies_on_second_host)
    with pytest.raises(KeyboardInterrupt):
        tw.convert(src, out, workers=1, progress=False)
    monkeypatch.setattr(ds, "write_table", real)
    manifest = json.loads((out / "manifest.json").read_text())
    assert [e["host"] for e in manifest["hosts"]] == ["worker0"]
    leftovers = [p.name for p in (out / "hosts").iterdir()]
    assert any(n.startswith(ds.TMP_PREFIX) for n in leftovers)  # the half-written host

    result = tw.convert(src, out, workers=1, progress=False)
    assert result.skipped == ["worker0"] and result.converted == ["worker1"]
    assert sorted(p.name for p in (out / "hosts").iterdir()) == ["worker0", "worker1"]
    with tw.open(out) as pod:
        assert_same(pod.steps, tw.load(src).steps)

    # A changed source file is converted again; an unchanged one is not.
    f = next(src.rglob("worker1.xplane.pb"))
    os.utime(f, (f.stat().st_atime, f.stat().st_mtime + 10))
    result = tw.convert(src, out, progress=False)
    assert result.converted == ["worker1"] and result.skipped == ["worker0"]


def test_a_host_renamed_into_place_but_not_in_the_manifest_is_redone(tmp_path):
    out = tmp_path / "ds"
    tw.convert(GPU_SHAPED, out, progress=False)
    manifest = json.loads((out / "manifest.json").read_text())
    manifest["hosts"] = manifest["hosts"][:1]
    (out / "manifest.json").write_text(json.dumps(manifest))
    result = tw.convert(GPU_SHAPED, out, progress=False)
    assert result.converted == ["worker1"] and result.skipped == ["worker0"]


def damaged_copy(tmp_path: pathlib.Path) -> pathlib.Path:
    src = tmp_path / "logs"
    shutil.copytree(GPU_SHAPED, src)
    bad = next(src.rglob("worker1.xplane.pb"))
    bad.write_bytes(bad.read_bytes()[:3000])  # truncated mid-message
    return src


def test_a_damaged_host_file_names_the_host_and_the_rest_converts_and_opens(tmp_path):
    src, out = damaged_copy(tmp_path), tmp_path / "ds"
    with pytest.raises(tw.ProfileError) as info:
        tw.convert(src, out, progress=False)
    exc = info.value
    assert "worker1" in str(exc) and exc.path.endswith("worker1.xplane.pb")
    assert isinstance(exc, tw.CorruptProfileError)
    assert exc.host == "worker1" and exc.result.converted == ["worker0"]
    with pytest.warns(UserWarning, match="worker1"):
        pod = tw.open(out)
    assert pod.hosts == ["worker0"]
    assert any("worker1" in w for w in pod.warnings)
    alone = tw.load(next(GPU_SHAPED.rglob("worker0.xplane.pb")))
    assert_same(pod.ops, alone.ops)
    pod.close()


@pytest.mark.parametrize("damage", ["truncate", "delete", "garbage"])
def test_a_damaged_dataset_file_names_its_host_and_the_rest_opens(tmp_path, damage):
    out = tmp_path / "ds"
    tw.convert(GPU_SHAPED, out, progress=False)
    f = out / "hosts" / "worker0" / "events.parquet"
    if damage == "truncate":
        f.write_bytes(f.read_bytes()[:-200])
    elif damage == "delete":
        f.unlink()
    else:
        f.write_bytes(b"not parquet at all" * 100)
    with pytest.warns(UserWarning, match=r"worker0.*events\.parquet"):
        pod = tw.open(out)
    assert pod.hosts == ["worker1"]
    alone = tw.load(next(GPU_SHAPED.rglob("worker1.xplane.pb")))
    assert_same(pod.steps.drop(columns="start_us"), alone.steps.drop(columns="start_us"))
    pod.close()


def test_a_dataset_where_nothing_opens_raises(tmp_path):
    out = tmp_path / "ds"
    tw.convert(GPU_SHAPED, out, progress=False)
    for host in ("worker0", "worker1"):
        (out / "hosts" / host / "steps.parquet").unlink()
    with pytest.warns(UserWarning), pytest.raises(tw.ProfileError, match="no host"):
        tw.open(out)


def test_not_a_dataset_and_refused_outputs(tmp_path):
    with pytest.raises(tw.ProfileNotFoundError, match="no such dataset"):
        tw.open(tmp_path / "nowhere")
    with pytest.raises(tw.ProfileNotFoundError, match="manifest"):
        tw.open(tmp_path)
    out = tmp_path / "ds"
    tw.convert(GPU_SHAPED, out, progress=False)
    with pytest.raises(tw.ProfileError, match="already holds"):
        tw.convert(BERT, out, progress=False)
    other = tmp_path / "other"
    other.mkdir()
    (other / "notes.txt").write_text("mine")
    with pytest.raises(tw.ProfileError, match="other files"):
        tw.convert(GPU_SHAPED, other, progress=False)
    assert (other / "notes.txt").read_text() == "mine"
    manifest = json.loads((out / "manifest.json").read_text())
    manifest["version"] = 99
    (out / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(tw.ProfileError, match="convert the capture again"):
        tw.open(out)


def test_fsspec_memory_filesystem(tmp_path):
    """A dataset on another filesystem (fsspec's memory one here; s3:// and gs:// the same
    way): written there by convert, opened there, equal to the local one."""
    fsspec = pytest.importorskip("fsspec")
    url = f"memory://tfprof_test_{os.getpid()}/pod"
    try:
        tw.convert(GPU_SHAPED, url, workers=1, progress=False)
        assert fsspec.filesystem("memory").exists(f"{url}/manifest.json")
        run = tw.load(GPU_SHAPED)
        with tw.open(url) as pod:
            for name in ("steps", "ops", "kernels", "memory_summary"):
                assert_same(getattr(pod, name), getattr(run, name), name)
            assert len(pod.host("worker1").events) == 216
    finally:
        fsspec.filesystem("memory").rm(url.rsplit("/", 1)[0], recursive=True)


def test_cli_convert(tmp_path):
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    out = tmp_path / "ds"
    cmd = [sys.executable, "-m", "tfprof_widgets", "convert", str(GPU_SHAPED), "-o", str(out)]
    done = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "2 host(s) converted" in done.stdout
    src = damaged_copy(tmp_path)
    cmd[4:7] = [str(src), "-o", str(tmp_path / "ds2")]
    done = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=tmp_path)
    assert done.returncode == 2
    assert "worker1" in done.stderr and "Traceback" not in done.stderr


def test_pod_viewer_shows_the_straggler_and_opens_a_host(tmp_path):
    run_dir = two_host_run(tmp_path)
    shutil.copy(run_dir / "hostB.xplane.pb", run_dir / "hostC.xplane.pb")
    tw.convert(run_dir, tmp_path / "ds", progress=False)
    with tw.open(tmp_path / "ds") as pod:
        view = tw.views.pod_viewer(pod)
        # The viewer averages the steps the overview keeps (xprof drops the edge steps).
        kept = overview_steps(pod.steps)
        avg = kept.groupby("host", observed=True)["step_time_us"].mean()
        slowest = view.straggler["host"]
        assert avg[slowest] == pytest.approx(avg.max())  # hostB and hostC tie: either
        html = view.html()
        assert f"{slowest} is the straggler" in html
        assert all(h in html for h in ("hostA", "hostB", "hostC"))
        fig = view.figure()
        assert fig.data[0].y[0] == slowest and fig.layout.yaxis.autorange == "reversed"
        assert isinstance(view.open_host("hostC"), tw.Run)
        in_memory = tw.views.pod_viewer(tw.load(run_dir)).straggler["host"]
        assert avg[in_memory] == pytest.approx(avg.max())


def test_pytorch_ranks_convert_with_their_rank_and_world_size(tmp_path):
    """Two ranks of one NCCL job (HTA's sample traces, Kineto) convert as two hosts: each
    keeps its distributedInfo (rank, world size, backend) in plane_stats, and every pod
    analysis equals the in-memory Run of both (group ids per host: derived step groups)."""
    run_dir = tmp_path / "ranks"
    run_dir.mkdir()
    for r in (0, 1):
        src = ROOT / "tests" / "data" / "chrome" / f"hta_sampled_rank{r}.json.gz"
        shutil.copy(src, run_dir / f"rank{r}.pt.trace.json.gz")
    tw.convert(run_dir, tmp_path / "ds", progress=False)
    run = tw.load(run_dir, progress=False)
    with tw.open(tmp_path / "ds") as pod:
        assert pod.hosts == run.hosts == ["rank 0", "rank 1"]
        ps = pod.plane_stats
        got = ps[ps["stat"].astype(str).isin(["rank", "world_size"])]
        assert sorted(zip(got["host"].astype(str), got["stat"].astype(str), got["int_value"])) == [
            ("rank 0", "rank", 0), ("rank 0", "world_size", 128),
            ("rank 1", "rank", 1), ("rank 1", "world_size", 128),
        ]  # fmt: skip
        backend = ps.loc[ps["stat"].astype(str) == "backend", "str_value"]
        assert list(backend) == ["nccl", "nccl"]
        for name in TABLES:
            a, b = getattr(pod, name), getattr(run, name)
            col = GROUP_COLUMNS.get(name)
            if col:
                a, b = a.drop(columns=col), b.drop(columns=col)
            assert_same(a, b, name)
        n = len(run.events)
        top, want = pod.top_events(n), run.events.nlargest(n, "dur_us")
        assert_same(_plain(top.drop(columns="group_id")), _plain(want.drop(columns="group_id")))


def test_one_jax_file_converts_as_the_host_it_records(tmp_path):
    """A single .xplane.pb whose directory holds another capture recording the same host
    ("vm"): the file alone is converted, as load() of it names it, and equals that Run."""
    src = ROOT / "tests" / "data" / "xplane_h100_jax" / "jax_cnn_graphs.xplane.pb"
    result = tw.convert(src, tmp_path / "ds", progress=False, workers=1)
    run = tw.load(src, progress=False)
    assert result.converted == run.hosts == ["vm"] and not result.failed
    with tw.open(tmp_path / "ds") as pod:
        for name in ("steps", "ops", "kernels", "memory_summary", "planes", "lines"):
            assert_same(getattr(pod, name), getattr(run, name), name)
