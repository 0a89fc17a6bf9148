"""Synthetic XSpaces for what CPU TensorFlow cannot produce: GPUs, kernels, allocators, hosts."""

import numpy as np
import pytest
from xspace_builder import (
    KERNELS,
    US,
    XSpaceBuilder,
    gpu_capture,
    protobuf_walk_counts,
    write_multi_host_run,
)

import tfprof_widgets as tw


@pytest.fixture
def multi_host(tmp_path):
    run_dir = write_multi_host_run(tmp_path, hosts=("worker0", "worker1"), n_steps=3)
    return tmp_path, run_dir


def test_multi_host_counts_equal_protobuf_walk(multi_host):
    logdir, run_dir = multi_host
    run = tw.load(logdir)
    assert run.hosts == ["worker0", "worker1"]
    assert set(run.events["host"].cat.categories) == {"worker0", "worker1"}
    for host in run.hosts:
        expected = protobuf_walk_counts(run_dir / f"{host}.xplane.pb")
        ev = run.events[run.events["host"] == host]
        got = (
            ev.merge(
                run.lines[run.lines["host"] == host][["plane", "line", "line_id"]],
                on=["plane", "line"],
            )
            .groupby(["plane", "line_id"], observed=True)
            .size()
        )
        assert {(str(p), int(i)): int(n) for (p, i), n in got.items()} == {
            (p, int(i)): n for (p, i), n in expected.items()
        }


def test_device_planes_and_properties(multi_host):
    run = tw.load(multi_host[0])
    gpus = run.planes[run.planes["device_kind"] == "GPU"]
    assert len(gpus) == 4  # 2 GPUs x 2 hosts
    assert gpus["device_ordinal"].tolist() == [0, 1, 0, 1]
    assert (gpus["core_count"] == 80).all()
    assert (gpus["memory_size"] == 16 * 2**30).all()
    assert (gpus["compute_cap_major"] == 7).all()
    env = run.planes[run.planes["plane"] == "Task Environment"]
    assert (env["device_kind"] == "metadata").all()
    assert run.planes.loc[run.planes["plane"] == "/host:CPU", "device_kind"].eq("CPU").all()


def test_hosts_share_one_clock(multi_host):
    """Line timestamps are relative to each host's profile_start_time; worker1 started 250 µs
    after worker0, so its identical events sit 250 µs later on the run's clock."""
    run = tw.load(multi_host[0])
    ev = run.events
    m0 = ev[(ev["host"] == "worker0") & (ev["name"] == "train")]["start_us"].to_numpy()
    m1 = ev[(ev["host"] == "worker1") & (ev["name"] == "train")]["start_us"].to_numpy()
    np.testing.assert_allclose(m1 - m0, 250.0)
    assert ev["start_us"].min() == 0.0
    assert run.t0_ns == 1_700_000_000_000_000_000


def test_group_ids_from_the_file_and_steps(multi_host):
    run = tw.load(multi_host[0])
    ev = run.events
    kernels = ev[ev["line"] == "Stream #14(Compute)"]
    assert kernels["group_id"].notna().all()
    assert sorted(kernels["group_id"].unique().tolist()) == [0, 1, 2]
    steps = ev[ev["line"] == "Steps"]
    assert (steps["step"].astype(int) == steps["group_id"].astype(int)).all()
    # Host markers carry step_num and no group_id stat of their own; in a capture that has
    # group ids, events without one stay outside any group rather than being guessed.
    assert ev[ev["name"] == "train"]["group_id"].isna().all()


def test_kernel_and_memory_stats_are_typed(multi_host):
    run = tw.load(multi_host[0])
    details = run.stat("kernel_details")
    kernels = run.events[details.notna()]
    assert set(kernels["name"].astype(str)) == {k[0] for k in KERNELS}
    assert set(details.dropna().astype(str)) == {k[1] for k in KERNELS}
    assert set(kernels["tf_op"].astype(str)) == {k[2] for k in KERNELS}
    addr = run.stat("addr")
    assert str(addr.dtype) == "Int64"
    assert int(addr.dropna().min()) == 0x7F0000000000
    frag = run.stat("fragmentation")
    assert frag.dtype == np.float64 and frag.dropna().eq(0.125).all()
    alloc = run.events_with("bytes_allocated", "allocator_name")
    allocs = alloc[alloc["name"] == "MemoryAllocation"]
    assert len(allocs) == 2 * 3 * 2
    assert (allocs["allocator_name"].astype(str) == "GPU_0_bfc").all()
    for _, per_host in allocs.groupby("host", observed=True):
        assert per_host["bytes_allocated"].is_monotonic_increasing
        assert per_host["bytes_allocated"].tolist()[:2] == [4096, 4096 + 8192]
    assert str(allocs["bytes_allocated"].dtype) == "Int64"
    with pytest.raises(KeyError, match="no event carries the stat 'nope'"):
        run.stat("nope")


def test_derived_steps_from_markers_and_flows(tmp_path):
    """No group_id stats: markers (_r=1) group their thread; _p/_c flows carry the group to
    the executor thread, and everything nested under the consumer follows."""
    run = tw.load(
        gpu_capture(n_gpus=0, allocations=False, n_steps=4).write(tmp_path / "h.xplane.pb")
    )
    ev = run.events
    exec_line = ev[ev["line"] == "tf_Compute/202"]
    assert exec_line["group_id"].notna().all()
    for s in range(4):
        in_step = exec_line[exec_line["step"] == s]
        proc = in_step[in_step["name"] == "ExecutorState::Process"]
        assert len(proc) == 1
        assert (in_step["start_us"] >= proc["start_us"].iloc[0]).all()
        assert (in_step["end_us"] <= proc["end_us"].iloc[0]).all()


def test_aggregated_events_are_not_time_zero(tmp_path):
    b = XSpaceBuilder()
    dev = b.plane("/device:TPU:0", 1)
    line = dev.line("XLA Ops", 1, timestamp_ns=1000)
    line.event("fusion.1", 5 * US, 2 * US)
    line.aggregated("fusion.2", num_occurrences=7, duration_ps=70 * US)
    run = tw.load(b.write(tmp_path / "tpu.xplane.pb"))
    ev = run.events.set_index("name")
    assert ev.loc["fusion.2", "occurrences"] == 7
    assert np.isnan(ev.loc["fusion.2", "start_us"])
    assert ev.loc["fusion.2", "dur_us"] == 70.0
    assert ev.loc["fusion.1", "occurrences"] == 1
    assert ev.loc["fusion.1", "start_us"] == 0.0  # the only timed event is the origin


def test_stat_kinds_round_trip(tmp_path):
    b = XSpaceBuilder()
    p = b.plane("/host:CPU")
    ln = p.line("t", 1)
    big = np.uint64(2**64 - 5)
    ln.event(
        "e",
        0,
        10,
        {
            "i": -3,
            "u": big,
            "d": 2.5,
            "s": "hello",
            "b": b"\x00\x01",
            "r": ("ref", "interned"),
            "z": ("gz", "compressed text"),
        },
    )
    run = tw.load(b.write(tmp_path / "k.xplane.pb"))
    assert run.stat("i").iloc[0] == -3
    assert run.stat("u").iloc[0] == 2**64 - 5
    assert run.stat("d").iloc[0] == 2.5
    assert run.stat("s").iloc[0] == "hello"
    assert run.stat("b").iloc[0] == b"\x00\x01"
    assert run.stat("r").iloc[0] == "interned"
    assert run.stat("z").iloc[0] == "compressed text"
    kinds = dict(zip(run.event_stats["stat"].astype(str), run.event_stats["kind"].astype(str)))
    assert kinds == {
        "i": "int",
        "u": "uint",
        "d": "double",
        "s": "str",
        "b": "bytes",
        "r": "str",
        "z": "str",
    }


def test_metadata_and_plane_stats_are_kept(tmp_path):
    b = XSpaceBuilder()
    p = b.plane("/device:GPU:0", 3)
    p.add_plane_stat("core_count", 108)
    p.add_plane_stat("device_vendor", "Nvidia")
    p.event_id("kern", display_name="Kern", stats={"flops": 1000})
    p.line("Stream #1", 1).event("kern", 0, 5 * US)
    run = tw.load(b.write(tmp_path / "m.xplane.pb"))
    md = run.event_metadata.set_index("name")
    assert md.loc["kern", "display_name"] == "Kern"
    assert md.loc["kern", "n_stats"] == 1
    ms = run.metadata_stats
    assert ms["stat"].astype(str).tolist() == ["flops"] and ms["int_value"].tolist() == [1000]
    ps = run.plane_stats.set_index("stat")
    assert ps.loc["device_vendor", "str_value"] == "Nvidia"
    assert run.planes["core_count"].tolist() == [108]


def test_colliding_line_names_are_made_unique(tmp_path):
    b = XSpaceBuilder()
    p = b.plane("/host:CPU")
    p.line("worker", 1).event("a", 0, 10)
    p.line("worker", 2).event("b", 0, 10)
    p.line("solo", 3).event("c", 0, 10)
    run = tw.load(b.write(tmp_path / "c.xplane.pb"))
    assert sorted(run.lines["line"].astype(str)) == ["solo", "worker #1", "worker #2"]
    assert run.events.groupby("line", observed=True).size().to_dict() == {
        "worker #1": 1,
        "worker #2": 1,
        "solo": 1,
    }


def test_absolute_line_timestamps_are_kept(tmp_path):
    """Captures whose line timestamps are already epoch ns (as on real GPU hosts) are not
    shifted by profile_start_time again."""
    b = XSpaceBuilder()
    start = 1_700_000_000_000_000_000
    b.task_environment(start, start + 10**9)
    p = b.plane("/host:CPU")
    p.line("t", 1, timestamp_ns=start + 5000).event("a", 0, 10)
    run = tw.load(b.write(tmp_path / "abs.xplane.pb"))
    assert run.t0_ns == start + 5000
