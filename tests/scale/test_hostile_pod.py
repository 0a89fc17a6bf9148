"""Hostile inputs, round two (issue 30), pod datasets: ``convert()`` never deletes or writes
outside its output (rows 3, 4), DuckDB reads the files it is given and no others (row 6), a
manifest is checked field by field (rows 7, 8), and file names that are not UTF-8 convert
and open (row 9)."""

from __future__ import annotations

import json
import os
import shutil
import warnings

import pytest
from conftest import tree_state
from xspace_builder import XSpaceBuilder

pytest.importorskip("duckdb")
pytest.importorskip("pyarrow")

import tfprof_widgets as tw  # noqa: E402


def capture(run_dir, host: str, name: str | bytes | None = None, events: int = 5):
    """A small XSpace of ``events`` events recording ``host`` as its host name."""
    b = XSpaceBuilder(host)
    line = b.plane("/host:CPU", 1).line("l", 1)
    for i in range(events):
        line.event("op", i * 100, 50)
    os.makedirs(run_dir, exist_ok=True)
    name = name if name is not None else f"{host}.xplane.pb"
    sep = b"/" if isinstance(name, bytes) else "/"
    with open(
        os.fsencode(run_dir) + b"/" + name if sep == b"/" else f"{run_dir}/{name}", "wb"
    ) as f:
        f.write(b.bytes())


@pytest.fixture(scope="module")
def dataset(tmp_path_factory):
    """A converted two-host run, to copy and damage."""
    root = tmp_path_factory.mktemp("pod")
    capture(root / "run", "w0")
    capture(root / "run", "w1", events=7)
    tw.convert(root / "run", root / "ds", progress=False, workers=1)
    return root / "ds"


def count(ds) -> int:
    with tw.open(ds) as pod:
        return int(pod.sql("SELECT count(*) AS n FROM events")["n"][0])


# -- row 3: a symlinked hosts/ ------------------------------------------------------------------
def test_convert_refuses_an_output_whose_hosts_dir_is_a_symlink(tmp_path):
    capture(tmp_path / "run", "w0")
    other = tmp_path / "other"
    other.mkdir()
    (other / "precious.txt").write_text("keep me")
    out = tmp_path / "out"
    out.mkdir()
    (out / "hosts").symlink_to(other)
    before = tree_state(other)
    with pytest.raises(tw.ProfileError, match="symbolic link") as exc:
        tw.convert(tmp_path / "run", out, progress=False, workers=1)
    assert exc.value.path == str(out / "hosts")
    assert tree_state(other) == before


def test_a_symlinked_host_dir_is_replaced_as_a_link_never_followed(tmp_path, dataset):
    """A leftover entry of hosts/ that links elsewhere is removed itself, not its target."""
    capture(tmp_path / "run", "w0")
    out = tmp_path / "out"
    tw.convert(tmp_path / "run", out, progress=False, workers=1)
    other = tmp_path / "other"
    other.mkdir()
    (other / "precious.txt").write_text("keep me")
    (out / "hosts" / "stray").symlink_to(other)
    shutil.rmtree(out / "hosts" / "w0")
    (out / "hosts" / "w0").symlink_to(other)  # the host's own directory, a link
    tw.convert(tmp_path / "run", out, progress=False, workers=1)
    assert (other / "precious.txt").read_text() == "keep me"
    assert sorted(os.listdir(other)) == ["precious.txt"]
    assert not (out / "hosts" / "w0").is_symlink() and count(out) == 5


# -- row 4: host names "." and ".." ---------------------------------------------------------------
@pytest.mark.parametrize("host", ["..", ".", "", "../x", "x" * 400])
def test_any_recorded_host_name_is_one_directory_of_the_output(tmp_path, host):
    capture(tmp_path / "run", host, "a.xplane.pb")
    capture(tmp_path / "run", "w1", "b.xplane.pb")
    out = tmp_path / "out"
    out.mkdir()
    result = tw.convert(tmp_path / "run", out, progress=False, workers=1)
    assert len(result.converted) == 2
    assert sorted(os.listdir(tmp_path)) == ["out", "run"]
    assert sorted(os.listdir(out)) == ["hosts", "manifest.json"]
    assert len(os.listdir(out / "hosts")) == 2
    with tw.open(out) as pod:
        assert int(pod.sql("SELECT count(*) AS n FROM events")["n"][0]) == 10
        assert len(pod.host(pod.hosts[0]).events) == 5
    again = tw.convert(tmp_path / "run", out, progress=False, workers=1)  # resumes: all there
    assert len(again.skipped) == 2 and count(out) == 10


def test_host_dirnames_are_one_path_part_each():
    from tfprof_widgets.scale.dataset import host_dirname

    names = ["..", ".", "...", "", "../x", "a/b", "x" * 1000, "x" * 999 + "y", "\udce9", "%2E"]
    dirs = [host_dirname(h) for h in names]
    assert len(set(dirs)) == len(dirs)
    for d in dirs:
        assert d not in (".", "..") and "/" not in d and 0 < len(d.encode()) <= 200
        d.encode("utf-8")


# -- row 6: glob characters in the dataset's path -------------------------------------------------
@pytest.mark.parametrize("name", ["ds[12]", "ds*", "ds?", "d's [x]"])
def test_duckdb_reads_the_dataset_at_its_path_not_a_glob_of_it(tmp_path, dataset, name):
    shutil.copytree(dataset, tmp_path / "ds1")
    shutil.copytree(dataset, tmp_path / "ds2")
    capture(tmp_path / "big", "w9", events=50)
    tw.convert(tmp_path / "big", tmp_path / "dsx", progress=False, workers=1)
    shutil.copytree(dataset, tmp_path / name)
    assert count(tmp_path / name) == count(dataset) == 12


# -- rows 7 and 8: the manifest --------------------------------------------------------------------
def damaged(tmp_path, dataset, change) -> str:
    out = tmp_path / "ds"
    shutil.copytree(dataset, out)
    manifest = json.loads((out / "manifest.json").read_text())
    text = change(manifest)
    (out / "manifest.json").write_text(text if isinstance(text, str) else json.dumps(manifest))
    return out


def test_a_host_listed_twice_is_opened_once_with_a_warning(tmp_path, dataset):
    out = damaged(tmp_path, dataset, lambda m: m["hosts"].append(m["hosts"][0]))
    with pytest.warns(UserWarning, match="lists host 'w0' twice"):
        pod = tw.open(out)
    with pod:
        assert pod.hosts == ["w0", "w1"]
        assert int(pod.sql("SELECT count(*) AS n FROM events")["n"][0]) == 12
        assert int(pod.host_table["steps"].sum()) == int(pod.host_table["steps"].iloc[:2].sum())
        assert any("twice" in w for w in pod.warnings)


def _set(field, value, host=0):
    return lambda m: m["hosts"][host].update({field: value})


@pytest.mark.parametrize(
    ("change", "field"),
    [
        (_set("t0_ns", "abc"), "t0_ns"),
        (lambda m: m["hosts"][0].pop("sources"), "sources"),
        (lambda m: m.update(hosts={}), "hosts"),
        (_set("host", 7), "host"),
        (_set("events", -5), "events"),
        (_set("events", True), "events"),
        (_set("duration_us", float("nan")), "duration_us"),
        (_set("sources", [{"path": "x", "size": "9", "mtime": 1}]), "size"),
        (_set("sources", ["x"]), "sources[0]"),
        (_set("rows", {"events": -1}), "rows"),
        (_set("host", "\ud800"), "host"),
        (lambda m: m.update(run=None), "run"),
        (lambda m: m.update(failed=[{"host": 1}]), "failed[0].host"),
        (lambda m: m["hosts"].append(3), "hosts[2]"),
    ],
)
def test_a_manifest_of_wrong_types_is_a_corrupt_profile_naming_the_field(
    tmp_path, dataset, change, field
):
    out = damaged(tmp_path, dataset, change)
    with pytest.raises(
        tw.CorruptProfileError, match=f"manifest's.*{field}".replace("[", r"\[")
    ) as exc:
        tw.open(out)
    assert exc.value.path == str(out / "manifest.json")


def test_a_manifest_nested_10_5_deep_is_a_corrupt_profile(tmp_path, dataset):
    deep = '{"format": ' + "[" * 100_000 + "]" * 100_000 + "}"
    out = damaged(tmp_path, dataset, lambda m: deep)
    with pytest.raises(tw.CorruptProfileError, match="deeper") as exc:
        tw.open(out)
    assert exc.value.path == str(out / "manifest.json")


# -- row 9: file names that are not UTF-8 ----------------------------------------------------------
def test_file_names_that_are_not_utf8_convert_and_open(tmp_path):
    run = os.fsencode(tmp_path / "run")
    capture(tmp_path / "run", "", b"w\xe9.xplane.pb")
    capture(tmp_path / "run", "", b"v\xe8.xplane.pb", events=3)
    loaded = tw.load(tmp_path / "run", progress=False)
    tw.convert(tmp_path / "run", tmp_path / "ds", progress=False, workers=1)
    with tw.open(tmp_path / "ds") as pod:
        assert pod.hosts == loaded.hosts
        assert all("\ufffd" in h for h in pod.hosts)
        assert int(pod.sql("SELECT count(*) AS n FROM events")["n"][0]) == 8
        assert pod.host_table["source"].map(lambda s: s.encode("utf-8")).all()
        assert pod.sql("SELECT * FROM hosts")["host"].tolist() == loaded.hosts
        assert len(pod.host(pod.hosts[0]).events) in (3, 5)
    assert sorted(os.listdir(run)) == [b"v\xe8.xplane.pb", b"w\xe9.xplane.pb"]


def test_a_dataset_path_that_is_not_utf8_is_refused_naming_it(tmp_path, dataset):
    out = os.fsdecode(os.fsencode(tmp_path) + b"/d\xe9")
    capture(tmp_path / "run", "w0")
    with pytest.raises(tw.ProfileError, match="UTF-8"):
        tw.convert(tmp_path / "run", out, progress=False, workers=1)
    assert not os.path.exists(out)
    shutil.copytree(dataset, out)
    with pytest.raises(tw.ProfileError, match="UTF-8"):
        tw.open(out)


def test_a_bytes_path_is_a_type_error_saying_what_is_accepted(tmp_path):
    with pytest.raises(TypeError, match=r"str or an os.PathLike.*not bytes.*os.fsdecode"):
        tw.load(os.fsencode(tmp_path))
    with pytest.raises(TypeError, match="not int"):
        tw.load(3)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(TypeError, match="not bytes"):
            tw.convert(tmp_path, os.fsencode(tmp_path / "out"), progress=False)


# -- the fuzzer's findings: table files damaged past their footer, or another table's -----------
def test_a_table_file_of_another_table_leaves_its_host_out_naming_the_file(tmp_path, dataset):
    out = tmp_path / "ds"
    shutil.copytree(dataset, out)
    victim = out / "hosts" / "w1" / "plane_stats.parquet"
    victim.unlink()
    shutil.copy(out / "hosts" / "w1" / "metadata_stats.parquet", victim)
    with pytest.warns(UserWarning, match="plane_stats.parquet: damaged"):
        pod = tw.open(out)
    with pod:
        assert pod.hosts == ["w0"]
        assert len(pod.plane_stats) >= 0 and len(pod.planes) == 1


def test_a_damaged_table_read_is_a_corrupt_profile_naming_it(tmp_path, dataset):
    from tfprof_widgets.scale import dataset as ds

    out = tmp_path / "ds"
    shutil.copytree(dataset, out)
    path = out / "hosts" / "w0" / "events.parquet"
    data = bytearray(path.read_bytes())
    data[4 : len(data) // 2] = b"\0" * (len(data) // 2 - 4)  # the pages, not the footer
    path.unlink()
    path.write_bytes(bytes(data))
    with pytest.raises(tw.CorruptProfileError) as exc:
        ds.read_table(ds.Location(str(out)), str(path))
    assert exc.value.path == str(path)
    with pytest.warns(UserWarning, match="events.parquet: damaged"):
        pod = tw.open(out)
    with pod:
        assert pod.hosts == ["w1"]
