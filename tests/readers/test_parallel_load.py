"""A run of several hosts read by a process pool gives exactly the serial load's Run."""

import gc
import os
import subprocess
import sys
import textwrap

import pytest
from conftest import ROOT
from test_walkers_agree import assert_same
from xspace_builder import write_multi_host_run

import tfprof_widgets as tw
from tfprof_widgets.readers.xspace import host_pool


@pytest.fixture
def run_dir(tmp_path):
    return write_multi_host_run(tmp_path, hosts=("w0", "w1", "w2", "w3"), n_steps=6)


def load_with(monkeypatch, path, workers: str, **kw):
    monkeypatch.setenv(host_pool.ENV_WORKERS, workers)
    return tw.load(path, progress=False, **kw)


def test_parallel_equals_serial(run_dir, monkeypatch):
    serial = load_with(monkeypatch, run_dir, "1")
    parallel = load_with(monkeypatch, run_dir, "2")
    assert parallel.hosts == serial.hosts == ["w0", "w1", "w2", "w3"]
    assert_same(parallel, serial)
    assert parallel.steps.equals(serial.steps)


def test_parallel_cuts_planes_and_windows_in_the_workers(run_dir, monkeypatch):
    kw = {"planes": ["/device:GPU:*"], "window_s": (0.0, 0.002)}
    assert_same(
        load_with(monkeypatch, run_dir, "2", **kw), load_with(monkeypatch, run_dir, "1", **kw)
    )


def test_a_damaged_host_is_left_out_by_the_workers_too(run_dir, monkeypatch):
    (run_dir / "w2.xplane.pb").write_bytes(b"\x0a\x05abc")
    with pytest.warns(UserWarning, match="w2.xplane.pb: not loaded"):
        run = load_with(monkeypatch, run_dir, "2")
    assert run.hosts == ["w0", "w1", "w3"]
    assert any("w2.xplane.pb" in w for w in run.warnings)


def test_small_or_single_host_runs_stay_serial(monkeypatch):
    monkeypatch.delenv(host_pool.ENV_WORKERS, raising=False)
    assert host_pool.workers_for(1, 1 << 40) == 1
    assert host_pool.workers_for(8, 1 << 20) == 1  # below MIN_PARALLEL_BYTES
    monkeypatch.setattr(host_pool.os, "sched_getaffinity", lambda _: {0})
    assert host_pool.workers_for(8, 1 << 40) == 1  # one core: nothing to share
    monkeypatch.setattr(host_pool.os, "sched_getaffinity", lambda _: set(range(8)))
    assert host_pool.workers_for(8, 1 << 40) == 8 and host_pool.workers_for(3, 1 << 40) == 3
    monkeypatch.setenv(host_pool.ENV_WORKERS, "1")
    assert host_pool.workers_for(8, 1 << 40) == 1
    monkeypatch.setenv(host_pool.ENV_WORKERS, "3")
    assert host_pool.workers_for(8, 1) == 3 and host_pool.workers_for(2, 1) == 2


def test_profile_errors_cross_processes_intact():
    import pickle

    exc = pickle.loads(pickle.dumps(tw.CorruptProfileError("/a/b.xplane.pb", "bad bytes")))
    assert type(exc) is tw.CorruptProfileError and exc.path == "/a/b.xplane.pb"
    assert str(exc) == "/a/b.xplane.pb: bad bytes"


# -- the real captures, the way back, workers that die, interrupts, scripts ----------------
REAL_RUN = ROOT / "tests" / "data" / "xplane_amd_jax"  # 4 real JAX captures, one directory


def our_shared_files() -> list[str]:
    """The workers' shared-memory files this process holds open (each mapping of one, which
    the arrays of a loaded run keep, holds a descriptor of its own)."""
    fds = (os.path.join("/proc/self/fd", n) for n in os.listdir("/proc/self/fd"))
    links = []
    for fd in fds:
        try:
            links.append(os.readlink(fd))
        except OSError:
            continue  # the listing's own descriptor, closed by now
    return [t for t in links if t.startswith("/memfd:" + host_pool.NAME_PREFIX)]


def test_parallel_equals_serial_on_real_captures(monkeypatch):
    serial = load_with(monkeypatch, REAL_RUN, "1")
    parallel = load_with(monkeypatch, REAL_RUN, "2")
    assert len(serial.hosts) == 4 and len(serial.events) > 10_000
    assert parallel.hosts == serial.hosts
    assert_same(parallel, serial)


def test_columns_come_back_through_shared_memory_writable_and_freed(run_dir, monkeypatch):
    """The workers' buffers travel in anonymous shared-memory files whose descriptors come
    over a socket pair, closed as soon as mapped; the arrays are writable, like the serial
    load's."""
    used = []
    real_unpack = host_pool._unpack

    def unpack(packed, take):
        used.append(packed.segment)
        return real_unpack(packed, take)

    monkeypatch.setattr(host_pool, "_unpack", unpack)
    run = load_with(monkeypatch, run_dir, "2")
    # w0 went to the worker (workers take the front, this process the back)
    assert used and all(used)
    assert not host_pool._pool.inbox.received  # every file sent was taken
    assert our_shared_files(), "mmap keeps a descriptor of the file it maps"
    with open("/proc/self/maps") as maps:  # the columns are mapped from those files
        assert f"/memfd:{host_pool.NAME_PREFIX}{used[0]} (deleted)" in maps.read()
    run.events.loc[run.events.index[0], "dur_ns"] = 0
    del run
    gc.collect()
    assert not our_shared_files()  # freed with the arrays


@pytest.mark.parametrize("shm", [True, False], ids=["shared-memory", "pipe"])
def test_a_host_travels_back_intact(run_dir, monkeypatch, shm):
    """Packed in the worker, unpacked here: the same tables, through a shared-memory file
    sent over the socket pair or, where there is none, inline through the pipe."""
    import numpy as np

    from tfprof_widgets.loading import _read_cut

    mine, worker_end = host_pool._socket_pair()
    inbox = host_pool._Inbox(mine)
    monkeypatch.setattr(host_pool, "_channel", worker_end)
    if not shm:
        monkeypatch.delattr(host_pool.os, "memfd_create")
    job = ("w1", [str(run_dir / "w1.xplane.pb")], None, None, None)
    packed = host_pool._packed_call(_read_cut, *job)
    assert (packed.segment is not None) == shm and bool(packed.inline) != shm
    back, direct = host_pool._unpack(packed, inbox.take), _read_cut(*job)
    for col in ("ev_line", "ev_name", "ev_offset_ps", "ev_dur_ps", "ev_occ"):
        assert np.array_equal(getattr(back, col), getattr(direct, col))
    assert back.names == direct.names and back.host == "w1"
    assert np.array_equal(back.event_stats.int_value, direct.event_stats.int_value)
    assert not inbox.received
    del back
    gc.collect()
    assert not our_shared_files()  # freed with the arrays
    worker_end.close()
    inbox.close()


def _die(*args):
    os._exit(3)  # a worker killed (as the OOM killer would) while reading its host


def test_a_worker_that_dies_leaves_the_hosts_to_this_process(run_dir, monkeypatch):
    serial = load_with(monkeypatch, run_dir, "1")
    monkeypatch.setattr(host_pool, "_packed_call", _die)
    with pytest.warns(RuntimeWarning, match="a worker reading the run's hosts died"):
        parallel = load_with(monkeypatch, run_dir, "2")
    assert_same(parallel, serial)
    monkeypatch.undo()
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the next load gets a new pool: no warning
        assert_same(load_with(monkeypatch, run_dir, "2"), serial)


def _die_starting(channel):
    os._exit(3)  # a worker killed while it starts, before it has said so


def test_a_pool_that_cannot_start_leaves_the_run_to_this_process_and_nothing_behind(
    run_dir, monkeypatch
):
    """The loading process waits for every worker to say it started before it removes the
    pool's names: a worker that dies first breaks the pool, the run is read here, and the
    fork server's private directory goes all the same."""
    import multiprocessing
    import tempfile

    serial = load_with(monkeypatch, run_dir, "1")
    host_pool.shutdown()
    tmp = tempfile.mkdtemp(prefix="tw-start-")  # short: a socket's path fits 107 bytes
    monkeypatch.setattr(tempfile, "tempdir", tmp)
    monkeypatch.setattr(host_pool, "_worker_started", _die_starting)
    try:
        with pytest.warns(RuntimeWarning, match="a worker reading the run's hosts died"):
            parallel = load_with(monkeypatch, run_dir, "2")
        assert os.listdir(tmp) == []
    finally:
        os.rmdir(tmp)
    assert_same(parallel, serial)
    assert host_pool._pool is None
    assert not [p for p in multiprocessing.active_children() if p.is_alive()]


def test_an_interrupt_stops_the_workers(run_dir, monkeypatch):
    import multiprocessing

    def interrupted(packed, take):
        raise KeyboardInterrupt

    monkeypatch.setattr(host_pool, "_unpack", interrupted)
    with pytest.raises(KeyboardInterrupt):
        load_with(monkeypatch, run_dir, "2")
    assert not [p for p in multiprocessing.active_children() if p.is_alive()]
    assert not our_shared_files()  # results nobody took were freed


def test_workers_do_not_rerun_an_unguarded_script(tmp_path, run_dir):
    """A script without an ``if __name__ == "__main__"`` guard: its top level runs once,
    not again in every worker."""
    script = tmp_path / "unguarded.py"
    script.write_text(
        textwrap.dedent(
            f"""
            import tfprof_widgets as tw
            print("top level ran", flush=True)
            run = tw.load({str(run_dir)!r}, progress=False)
            print("hosts", len(run.hosts), flush=True)
            """
        )
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT), host_pool.ENV_WORKERS: "2"}
    proc = subprocess.run(
        [sys.executable, "-W", "error::RuntimeWarning", str(script)],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.count("top level ran") == 1
    assert "hosts 4" in proc.stdout
    assert "Traceback" not in proc.stderr


@pytest.mark.parametrize("here", [True, False], ids=["this-process-too", "workers-only"])
def test_every_host_is_read_once(run_dir, here):
    """This process takes hosts from the back, the workers from the front: each once."""
    import numpy as np

    from tfprof_widgets.loading import _read_cut

    jobs = [(h, [str(run_dir / f"{h}.xplane.pb")], None, None, None) for h in ("w0", "w1", "w2")]
    jobs.append(("bad", [str(run_dir / "missing.xplane.pb")], None, None, None))
    got = {i: (r, e) for i, r, e in host_pool.map_in_pool(_read_cut, jobs, 3, here=here)}
    assert sorted(got) == [0, 1, 2, 3]
    for i, (h, *_) in enumerate(jobs[:3]):
        tables, exc = got[i]
        assert exc is None and tables.host == h
        assert np.array_equal(tables.ev_offset_ps, _read_cut(*jobs[i]).ev_offset_ps)
    assert got[3][0] is None and isinstance(got[3][1], tw.ProfileError)
    assert got[3][1].path.endswith("missing.xplane.pb")


@pytest.mark.parametrize("spare_hosts,expected", [(0.5, None), (1.5, 2), (9, 3)])
def test_the_memory_budget_bounds_the_readers(run_dir, monkeypatch, spare_hosts, expected):
    """Each process reading beside this one holds a host's decode on top of what the run
    keeps: the budget beyond the serial need sets how many may run at once."""
    from tfprof_widgets.readers.limits import estimated_need

    needs = [estimated_need(str(f), f.stat().st_size) for f in sorted(run_dir.iterdir())]
    budget = int(sum(needs) + spare_hosts * max(needs))
    calls = []
    real = host_pool.map_in_pool

    def spy(fn, jobs, workers, **kw):
        calls.append(workers)
        return real(fn, jobs, workers, **kw)

    monkeypatch.setattr(host_pool, "map_in_pool", spy)
    monkeypatch.setenv(host_pool.ENV_WORKERS, "3")
    run = tw.load(run_dir, progress=False, max_memory_bytes=budget)
    assert calls == ([] if expected is None else [expected])
    assert run.hosts == ["w0", "w1", "w2", "w3"]
