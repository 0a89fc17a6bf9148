"""A run of several hosts read by a process pool gives exactly the serial load's Run."""

import pytest
from test_walkers_agree import assert_same
from xspace_builder import write_multi_host_run

import tfprof_widgets as tw
from tfprof_widgets.readers import host_pool


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
