"""%%tfprof, %tfprof and the capture API with real tensorflow-cpu.

In this process only default-option captures run (tf.profiler.experimental.start/stop).
Anything that starts a TF profiler server (tracer options, remote capture) runs in its own
network namespace via isolation.py, because TF binds its server on every interface; the
full-disk and read-only cases run in a mount namespace with small tmpfs mounts.
"""

import os
import pathlib
import socket
import subprocess
import sys

import pytest
from conftest import ROOT, SAMPLES

if os.environ.get("CI") != "true":  # in CI the dev extra installs it: a missing TF fails
    pytest.importorskip("tensorflow")

from IPython import get_ipython  # noqa: E402
from IPython.testing.globalipapp import start_ipython  # noqa: E402
from IPython.utils.capture import capture_output  # noqa: E402
from isolation import run_isolated  # noqa: E402

import tfprof_widgets as tw  # noqa: E402
from tfprof_widgets.capturing import tf_runtime  # noqa: E402
from tfprof_widgets.capturing.session import active_capture  # noqa: E402

# The last output of every view: the script that draws it (views/base.py).
VIEWER = "application/javascript"

TINY_KERAS = """
import numpy as np, tensorflow as tf
x = np.random.default_rng(0).random((192, 8), dtype=np.float32)
y = x.sum(axis=1, keepdims=True)
model = tf.keras.Sequential([tf.keras.Input((8,)), tf.keras.layers.Dense(16, activation="relu"),
                             tf.keras.layers.Dense(1)])
model.compile("adam", "mse")
"""

LOOP_SETUP = """
import tensorflow as tf
w = tf.Variable(tf.random.normal((32, 32)))
@tf.function
def train_step(x):
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(tf.matmul(x, w) ** 2)
    w.assign_sub(1e-4 * tape.gradient(loss, w))
    return loss
"""


@pytest.fixture(scope="module")
def ip():
    shell = start_ipython() or get_ipython()  # one shell per process
    shell.run_line_magic("load_ext", "tfprof_widgets")
    shell.run_cell(TINY_KERAS + LOOP_SETUP)
    return shell


@pytest.fixture(autouse=True)
def no_profiler_left(tmp_path, monkeypatch):
    """Every test starts in its own directory and leaves no profiler running, and none of
    them starts a profiler server in this process (those run isolated)."""
    monkeypatch.chdir(tmp_path)
    yield
    assert not tf_runtime.profiler_running(), "a TF profiler session was left running"
    assert active_capture() is None
    assert tf_runtime._server_port is None


def xplanes(root) -> list[pathlib.Path]:
    return sorted(pathlib.Path(root).rglob("*.xplane.pb"))


def test_keras_fit_cell(ip, tmp_path):
    with capture_output() as out:
        ip.run_cell_magic(
            "tfprof", "--name fit_run", "model.fit(x, y, batch_size=16, epochs=1, verbose=0)"
        )
    run = ip.user_ns["_tfprof_run"]
    assert ip.user_ns["fit_run"] is run and isinstance(run, tw.Run)
    files = xplanes(tmp_path / "tfprof_logs")
    assert [pathlib.Path(f) for f in run.files] == files and len(files) == 1
    # No markers in a plain fit: each of the 12 batches' tf.function calls is a step.
    assert len(run.steps) == 12
    assert run.steps["step"].tolist() == list(range(12))
    assert (run.ops["operation"].astype(str).str.contains("MatMul")).any()
    assert run.profile_options["host_tracer_level"].tolist() == [2]
    # The status line, then the overview: its text form, then its viewer script (views/base.py).
    text, viewer = out.outputs[-2].data, out.outputs[-1].data
    assert VIEWER in viewer and "text/html" in text
    assert "step" in text["text/plain"].lower()
    assert any("captured" in o.data.get("text/plain", "") for o in out.outputs[:-2])


def test_custom_loop_cell_has_its_marked_steps(ip, tmp_path):
    ip.run_cell_magic(
        "tfprof",
        f"--logdir {tmp_path}/loop --no-display",
        "for s in range(5):\n"
        "    with tf.profiler.experimental.Trace('train', step_num=s, _r=1):\n"
        "        train_step(tf.ones((8, 32)))\n",
    )
    run = ip.user_ns["_tfprof_run"]
    assert run.path.startswith(str(tmp_path / "loop" / "plugins" / "profile"))
    assert run.steps["step"].tolist() == [0, 1, 2, 3, 4]
    assert run.ops["total_time_us"].sum() > 0


def test_raising_cell_stops_profiler_keeps_data(ip, tmp_path):
    with pytest.raises(ZeroDivisionError) as info:
        with capture_output() as out:
            ip.run_cell_magic("tfprof", "", "train_step(tf.ones((8, 32)))\n1/0")
    assert "ZeroDivisionError" in out.stdout  # the cell's own traceback, shown once
    assert "in the profiled cell" in info.value._render_traceback_()[0]
    assert not tf_runtime.profiler_running()
    run = ip.user_ns["_tfprof_run"]
    assert len(tw.load(run.path).events) == len(run.events) > 0
    assert run.events["name"].astype(str).str.contains("train_step").any()
    # The next capture works.
    ip.run_cell_magic("tfprof", "--no-display", "train_step(tf.ones((8, 32)))")
    assert ip.user_ns["_tfprof_run"].path != run.path


def test_interrupted_cell_stops_profiler(ip):
    with pytest.raises(KeyboardInterrupt):
        with capture_output():
            ip.run_cell_magic(
                "tfprof", "--no-display", "train_step(tf.ones((8, 32)))\nraise KeyboardInterrupt"
            )
    assert not tf_runtime.profiler_running()
    assert len(ip.user_ns["_tfprof_run"].events) > 0


def test_second_capture_while_one_records_is_a_clear_error(ip, tmp_path):
    import tensorflow as tf

    tf.profiler.experimental.start(str(tmp_path / "theirs"))
    try:
        with pytest.raises(tw.ProfilerBusyError, match="another TensorFlow profiler"):
            ip.run_cell_magic("tfprof", "", "ran_busy = True")
        assert "ran_busy" not in ip.user_ns
    finally:
        tf.profiler.experimental.stop()
    # %%tfprof inside %%tfprof: the inner one refuses, the outer one still saves.
    with pytest.raises(tw.ProfilerBusyError) as info:
        with capture_output():
            ip.run_cell_magic(
                "tfprof",
                "--no-display",
                "tf.add(1, 2)\nget_ipython().run_cell_magic('tfprof', '', 'pass')",
            )
    assert "still recording" in str(info.value)
    assert len(ip.user_ns["_tfprof_run"].events) > 0


def test_existing_runs_are_never_overwritten(ip, tmp_path):
    logdir = tmp_path / "shared"
    runs = []
    for _ in range(3):  # several captures within the same second
        ip.run_cell_magic("tfprof", f"--logdir {logdir} --no-display", "tf.add(1, 2)")
        runs.append(ip.user_ns["_tfprof_run"].path)
    assert len(set(runs)) == 3
    before = {p: p.read_bytes() for p in xplanes(logdir)}
    ip.run_cell_magic("tfprof", f"--logdir {logdir} --no-display", "tf.add(1, 2)")
    assert all(p.read_bytes() == data for p, data in before.items())
    assert len(xplanes(logdir)) == 4
    assert not [p for p in logdir.iterdir() if p.name.startswith(".tfprof-staging")]


def test_capture_api_and_keras_callback(ip, tmp_path):
    model = ip.user_ns["model"]
    with tw.capture(tmp_path / "api") as cap:
        assert cap.running and tf_runtime.profiler_running()
        ip.user_ns["train_step"](ip.user_ns["tf"].ones((8, 32)))
    assert not cap.running and cap.run_dir.startswith(str(tmp_path / "api"))
    assert cap.run.events["name"].astype(str).str.contains("train_step").any()
    with pytest.raises(RuntimeError):
        with tw.capture(tmp_path / "api") as cap2:
            ip.user_ns["tf"].add(1, 2)
            raise RuntimeError("boom")
    assert cap2.run is not None and not tf_runtime.profiler_running()

    cb = tw.keras_callback(profile_batch=(2, 4))
    model.fit(ip.user_ns["x"], ip.user_ns["y"], batch_size=16, epochs=1, verbose=0, callbacks=[cb])
    assert cb.run is not None and cb.run.path.startswith(cb.logdir)
    # profile_batch counts batches from 1; Keras's step_num counts them from 0.
    assert cb.run.steps["step"].tolist() == [1, 2, 3]


def test_line_magics(ip, tmp_path):
    with capture_output() as out:
        ip.run_line_magic("tfprof", f"load {SAMPLES / 'input_bound'} --name ib")
    assert ip.user_ns["ib"] is ip.user_ns["_tfprof_run"]
    assert VIEWER in out.outputs[-1].data
    assert "input-bound" in out.outputs[-2].data["text/plain"]  # the text form before it
    runs = ip.run_line_magic("tfprof", f"list {SAMPLES / 'keras_fit'}")
    assert len(runs) == 1 and runs["hosts"].iloc[0] == ("vm",)
    with pytest.raises(tw.ProfileNotFoundError) as info:
        ip.run_line_magic("tfprof", f"load {tmp_path / 'nothing'}")
    assert info.value._render_traceback_() == [
        f"ProfileNotFoundError: {tmp_path / 'nothing'}: no such file or directory"
    ]
    with pytest.raises(ValueError, match="usage"):
        ip.run_line_magic("tfprof", "frobnicate")
    with pytest.raises(tw.CaptureError, match="not a profiler server address"):
        ip.run_line_magic("tfprof", "remote localhost")


def test_help_lists_every_flag():
    doc = (
        tw.load_ipython_extension.__module__
        and __import__("tfprof_widgets.magic", fromlist=["x"]).TfprofMagics.tfprof.__doc__
    )
    for flag in (
        "--logdir",
        "--name",
        "--host-tracer-level",
        "--python-tracer",
        "--device-tracer-level",
        "--delay-ms",
        "--no-display",
        "%tfprof remote",
        "--save-timeout-s",
        "%tfprof recover",
    ):
        assert flag in doc


def test_without_tensorflow_the_magics_still_load(tmp_path):
    script = f"""
import sys
sys.modules['tensorflow'] = None   # as if it were not installed
from IPython.testing.globalipapp import start_ipython
from IPython.utils.capture import capture_output
import tfprof_widgets as tw
ip = start_ipython()
ip.run_line_magic('load_ext', 'tfprof_widgets')
try:
    ip.run_cell_magic('tfprof', '', 'ran = True')
except tw.CaptureUnavailableError as exc:
    print('REFUSED', exc._render_traceback_()[0])
assert 'ran' not in ip.user_ns
with capture_output() as out:
    ip.run_line_magic('tfprof', 'load {SAMPLES / "custom_loop"}')
print('LOADED', sorted(out.outputs[-1].data))
"""
    proc = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, cwd=tmp_path, timeout=300
    )
    assert proc.returncode == 0, proc.stderr
    assert "REFUSED CaptureUnavailableError" in proc.stdout
    assert "pip install 'tfprof_widgets[capture]'" in proc.stdout
    assert f"LOADED {sorted([VIEWER, 'text/plain'])}" in proc.stdout
    assert not (tmp_path / "tfprof_logs").exists()


@pytest.fixture(scope="module")
def isolated(tmp_path_factory):
    work = tmp_path_factory.mktemp("isolated")
    return run_isolated(
        str(ROOT / "tests" / "support" / "isolated_capture.py"),
        [str(work), str(ROOT / "tests" / "support" / "profiled_program.py")],
        timeout=600,
    )


def test_tracer_options_are_really_applied(isolated):
    got = isolated["options"]
    assert got["host_tracer_level"] == [3] and got["python_tracer_level"] == [1]
    assert got["python_events"] > 1000  # the Python tracer really ran
    assert got["steps"] == 6
    assert "listens on every network interface" in got["warnings"][0]
    assert sorted([VIEWER, "text/plain"]) in got["displayed"]  # the overview was shown
    assert isolated["level1"]["host_tracer_level"] == [1]
    assert isolated["default_after_server"]["host_tracer_level"] == [2]
    delayed = isolated["delayed"]
    # The start was requested ~400 ms ahead (the request is sent just before the cell runs)
    # and nothing was traced before it.
    assert 300 <= delayed["requested_start_after_cell_ms"] <= 400
    assert delayed["first_event_after_cell_ms"] >= delayed["requested_start_after_cell_ms"]
    assert delayed["events"] > 0
    assert isolated["raised"]["python_tracer_level"] == [1]
    assert isolated["raised"]["python_events"] > 0
    assert isolated["running_after"] is False
    stopped = isolated["interrupted_server_stop"]
    assert stopped["running"] is False and stopped["events"] > 0
    assert stopped["host_tracer_level"] == [1] and stopped["terminate_calls"] in (1, 2)
    assert stopped["said"] == [
        "KeyboardInterrupt while the profiler was stopping: it waited until the capture was "
        "saved; it is in _tfprof_run"
    ]


def test_remote_capture(isolated):
    one = isolated["remote_one"]
    # The file is named by the server's address; the host by the name its XSpace records.
    assert len(one["files"]) == 1 and one["files"][0].startswith("127.0.0.1_")
    assert one["files"][0].endswith(".xplane.pb")
    assert one["hosts"] == [socket.gethostname()]
    assert one["steps"] > 10  # the program runs a marked step every ~5 ms
    two = isolated["remote_two"]
    assert len(two["hosts"]) == 2 and two["steps"] > 20
    assert two["host_tracer_level"] == [3, 3]
    assert "/multi/plugins/profile/" in two["path"]
    bad = isolated["unreachable"]
    assert "no profiler server answered" in bad["message"] and bad["seconds"] < 30


def test_read_only_and_full_disk(tmp_path):
    got = run_isolated(
        str(ROOT / "tests" / "support" / "isolated_disk.py"), [str(tmp_path)], mount=True
    )
    for case in ("read_only", "too_little_space"):
        assert got[case]["error"] == "CaptureError"
        assert got[case]["cell_ran"] is False and got[case]["left"] == []
    assert "not writable" in got["read_only"]["message"]
    assert "MiB free" in got["too_little_space"]["message"]
    fills = got["disk_fills"]
    assert fills["error"] == "CaptureError" and "No space left on device" in fills["message"]
    assert fills["cell_ran"] is True and fills["left"] == []  # nothing half-written kept
    assert fills["rendered"] == [f"CaptureError: {fills['message']}"]
    assert got["afterwards"]["error"] is None  # the kernel goes on capturing


def test_capture_with_nothing_loadable(ip, monkeypatch):
    """A cell that ran no TF work can leave a capture without events (whether background
    threads record something is up to TF), so the loader's refusal is injected here."""
    import tfprof_widgets.loading

    def empty(path, **kwargs):
        raise tw.NoEventsError(path, "the capture has 2 plane(s) but no trace events")

    monkeypatch.setattr(tfprof_widgets.loading, "load", empty)
    with pytest.raises(tw.NoEventsError, match="no trace events") as info:
        ip.run_cell_magic("tfprof", "--no-display", "sum(range(10))")
    assert info.value._render_traceback_()[0].startswith("NoEventsError: ")
    # When the cell raised too, its exception is what the user gets.
    with pytest.raises(NameError) as info:
        with capture_output():
            ip.run_cell_magic("tfprof", "--no-display", "undefined_name")
    assert "nothing loadable was captured" in info.value._render_traceback_()[0]


def test_logdir_that_is_a_file(tmp_path, ip):
    (tmp_path / "afile").write_text("x")
    with pytest.raises(tw.CaptureError, match="not a directory"):
        ip.run_cell_magic("tfprof", f"--logdir {tmp_path / 'afile'}", "pass")
    assert (tmp_path / "afile").read_text() == "x"
    assert os.listdir(tmp_path) == ["afile"]
