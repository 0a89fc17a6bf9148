"""Loading part of a capture, and captures that are only partly there."""

import numpy as np
import pandas as pd
import pytest
from conftest import tree_state
from xspace_builder import XSpaceBuilder, gpu_capture, write_multi_host_run

import tfprof_widgets as tw


def test_run_still_being_written_loads_the_complete_hosts(tmp_path):
    run_dir = write_multi_host_run(tmp_path, hosts=("w0", "w1", "w2"))
    half = run_dir / "w1.xplane.pb"
    half.write_bytes(half.read_bytes()[:1000])  # w1's file is still being written
    before = tree_state(tmp_path)
    with pytest.warns(UserWarning, match="w1.xplane.pb: not loaded"):
        run = tw.load(tmp_path)
    assert run.hosts == ["w0", "w2"]
    assert any("w1.xplane.pb: not loaded" in w for w in run.warnings)
    assert tree_state(tmp_path) == before


def test_no_complete_host_raises_the_first_error(tmp_path):
    run_dir = write_multi_host_run(tmp_path, hosts=("w0", "w1"))
    for host in ("w0", "w1"):
        f = run_dir / f"{host}.xplane.pb"
        f.write_bytes(f.read_bytes()[:500])
    with pytest.raises(tw.CorruptProfileError, match="w0.xplane.pb"):
        tw.load(tmp_path)


def test_directory_named_like_a_capture_is_skipped(tmp_path):
    run_dir = write_multi_host_run(tmp_path, hosts=("w0",))
    (run_dir / "w9.xplane.pb").mkdir()
    with pytest.warns(UserWarning, match="w9.xplane.pb: named like a capture but not a file"):
        run = tw.load(run_dir)
    assert run.hosts == ["w0"]


def test_plane_appearing_twice_is_damage(tmp_path):
    b = XSpaceBuilder()
    for _ in range(2):
        b.plane("/host:CPU").line("python", 1).event("a", 0, 10)
    with pytest.raises(tw.CorruptProfileError, match="'/host:CPU' appears more than once"):
        tw.load(b.write(tmp_path / "h.xplane.pb"))


def test_hosts_selects_files(tmp_path):
    write_multi_host_run(tmp_path, hosts=("w0", "w1", "w2"))
    run = tw.load(tmp_path, hosts=["w2", "w0"])
    assert run.hosts == ["w0", "w2"]
    with pytest.raises(tw.ProfileNotFoundError, match="no host named w9; hosts here: w0, w1"):
        tw.load(tmp_path, hosts=["w9"])


def test_planes_selects_planes_and_keeps_stats_consistent(tmp_path):
    path = gpu_capture(n_gpus=2).write(tmp_path / "g.xplane.pb")
    full = tw.load(path)
    part = tw.load(path, planes=["/device:GPU:*"])
    assert set(part.planes["plane"].astype(str)) == {"/device:GPU:0", "/device:GPU:1"}
    expected = full.events[full.events["plane"].astype(str).str.startswith("/device:GPU")]
    cols = ["plane", "line", "name", "dur_us", "group_id"]
    pd.testing.assert_frame_equal(
        part.events[cols].astype({"plane": str, "line": str, "name": str}).reset_index(drop=True),
        expected[cols].astype({"plane": str, "line": str, "name": str}).reset_index(drop=True),
    )
    # Every stat still points at the right event.
    details = part.stat("kernel_details")
    assert details.notna().sum() == full.stat("kernel_details").notna().sum()
    assert (part.events.loc[details.notna(), "line"].astype(str).str.startswith("Stream")).all()
    with pytest.raises(tw.ProfileNotFoundError, match="no event in planes /device:TPU:\\*"):
        tw.load(path, planes=["/device:TPU:*"])


def test_too_large_for_memory_is_refused_before_reading(tmp_path):
    run_dir = write_multi_host_run(tmp_path, hosts=("w0", "w1"))
    with pytest.raises(tw.ProfileTooLargeError) as info:
        tw.load(tmp_path, max_memory_bytes=1000)
    msg = str(info.value)
    assert str(tmp_path) in msg and "needs about" in msg
    assert "hosts=[...]" in msg and "hosts: w0, w1" in msg and "planes=" in msg
    assert "window_s=(start, end)" in msg
    assert isinstance(info.value, MemoryError) and isinstance(info.value, tw.ProfileError)
    # The same run loads when only part of it is asked for and that part fits.
    one = (run_dir / "w0.xplane.pb").stat().st_size
    assert tw.load(tmp_path, hosts=["w0"], max_memory_bytes=int(one * 13)).hosts == ["w0"]
    # A window (or planes=) needs about one file's decode, not all of them at once.
    both = one + (run_dir / "w1.xplane.pb").stat().st_size
    assert len(tw.load(tmp_path, window_s=(0, 1), max_memory_bytes=int(one * 13)).hosts) == 2
    with pytest.raises(tw.ProfileTooLargeError):
        tw.load(tmp_path, max_memory_bytes=int(both * 11))


def test_window_keeps_exactly_the_events_that_overlap_it():
    from conftest import SAMPLES

    path = SAMPLES / "input_bound"
    full = tw.load(path)
    start_ns = int(
        full.plane_stats.loc[full.plane_stats["stat"] == "profile_start_time", "int_value"].iloc[0]
    )
    lo, hi = 0.05, 0.08
    begin = full.t0_ns + (full.events["start_us"] * 1e3).round().astype("int64")
    end = begin + (full.events["dur_us"] * 1e3).round().astype("int64")
    overlap = (end >= start_ns + lo * 1e9) & (begin <= start_ns + hi * 1e9)
    part = tw.load(path, window_s=(lo, hi))
    assert 0 < len(part.events) == int(overlap.sum()) < len(full.events)
    assert sorted(part.events["name"].astype(str)) == sorted(
        full.events.loc[overlap, "name"].astype(str)
    )
    # Stats follow their events: every kept op keeps its tf_op-carrying memory events.
    assert len(part.event_stats) == int(
        full.event_stats["event"].isin(np.flatnonzero(overlap.to_numpy())).sum()
    )
    with pytest.raises(tw.ProfileNotFoundError, match="no event in window 100-200 s"):
        tw.load(path, window_s=(100, 200))
    with pytest.raises(ValueError, match="start <= end"):
        tw.load(path, window_s=(2, 1))
