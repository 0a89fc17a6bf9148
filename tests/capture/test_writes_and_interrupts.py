"""Writes and interrupts (issue 20, items 12, 13, 14 and 16; issue 17, item 10).

12. ``tfprof-widgets report`` builds the report in memory and writes it through a temporary
    file renamed into place: a failed build never truncates (or leaves) a file, a name with
    a lone surrogate builds, a symbolic link is refused unless ``--force`` (which replaces
    the link, never its target).
13. Every command-line failure is one line on stderr and a non-zero exit code, never a
    traceback; an unwritable or missing output directory is exit code 2.
14. ``remote_capture`` / ``%tfprof remote`` gives up on a server that takes the request and
    never answers, within the trace's duration plus the save timeout, and says so.
16. ``%%tfprof`` interrupted (Ctrl-C) inside its own stop, before or right after
    TensorFlow's stop: the profiler is stopped, the capture moved into place and loaded.
    A staging directory left by a crashed session is offered by ``%tfprof list``.
17.10 TensorFlow's log lines during ``%%tfprof`` are kept in ``run.capture_log``, not shown.

The gRPC servers here are grpcio-only stand-ins on 127.0.0.1 (fake_profiler_server.py),
stopped by the test that started them. Tests that need TensorFlow skip without it (outside
CI).
"""

from __future__ import annotations

import io
import json
import os
import pathlib
import signal
import subprocess
import sys
import textwrap
import threading
import time

import pytest
from conftest import ROOT, SAMPLES, sample_files, tree_state
from fake_profiler_server import FakeProfilerServer

import tfprof_widgets as tw
from tfprof_widgets import cli, report

SAMPLE = SAMPLES / "keras_fit"
XPLANE = sample_files("keras_fit")[0].read_bytes()


def surrogate_trace(path: pathlib.Path) -> pathlib.Path:
    """A valid Chrome trace whose heaviest event is named by a lone surrogate."""
    events = [
        {"ph": "X", "name": "\ud800", "ts": 10, "dur": 50, "pid": 1, "tid": 1},
        {"ph": "X", "name": "matmul", "ts": 70, "dur": 5, "pid": 1, "tid": 1},
        {"ph": "X", "name": "\ud800 \udfff", "ts": 80, "dur": 5, "pid": 1, "tid": 2},
    ]
    path.write_text(json.dumps({"traceEvents": events}))  # json escapes them: valid JSON
    return path


def run_cli(capsys, *argv: str) -> tuple[int, str, str]:
    code = cli.main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def one_line(err: str) -> str:
    lines = err.splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("tfprof-widgets"), err
    assert "Traceback" not in err
    return lines[0]


# -- 12: the report is written atomically ---------------------------------------------------
def test_lone_surrogate_loads_and_its_report_replaces_the_old_one(tmp_path, capsys):
    trace = surrogate_trace(tmp_path / "odd.trace.json")
    run = tw.load(trace)
    names = set(run.events["name"].astype(str))
    assert names == {"\ufffd", "matmul", "\ufffd \ufffd"}  # replaced, as a decoder would
    out = tmp_path / "r.html"
    out.write_text("the old report")
    code, stdout, err = run_cli(capsys, "report", trace, "-o", out, "--force", "--quiet")
    assert code == 0, err
    html = out.read_bytes().decode("utf-8")  # strict: valid UTF-8 throughout
    assert "\ufffd" in html and "matmul" in html
    assert sorted(os.listdir(tmp_path)) == ["odd.trace.json", "r.html"]  # no temp left


def test_lone_surrogates_in_json_and_file_names_become_u_fffd(tmp_path):
    from tfprof_widgets.readers.text import json_without_lone_surrogates

    raw = rb'["\ud83d\ude00", "\uD800x", "x\udc00", "\\ud800", "\\\ud800", "\u00e9"]'
    assert json.loads(json_without_lone_surrogates(raw)) == [
        "\U0001f600",  # a valid pair stays one character
        "\ufffdx",
        "x\ufffd",
        "\\ud800",  # an escaped backslash, then text: not an escape
        "\\\ufffd",
        "\u00e9",
    ]
    host = os.fsdecode(b"worker\xff")
    trace = tmp_path / f"{host}.trace.json"
    trace.write_text(json.dumps({"traceEvents": [{"ph": "X", "name": "a", "ts": 1, "dur": 2}]}))
    run = tw.load(trace)
    assert run.hosts == ["worker\ufffd"] and list(run.events["host"]) == ["worker\ufffd"]
    out = tmp_path / "r.html"
    report.write_report(run, out)
    assert "worker\ufffd" in out.read_bytes().decode("utf-8")


def test_a_failed_build_never_touches_the_old_report(tmp_path, capsys, monkeypatch):
    out = tmp_path / "r.html"
    out.write_text("the old report")
    os.chmod(out, 0o640)

    def broken(run):
        raise UnicodeEncodeError("utf-8", "\ud800", 0, 1, "surrogates not allowed")

    monkeypatch.setattr(report, "report_html", broken)
    code, stdout, err = run_cli(capsys, "report", SAMPLE, "-o", out, "--force", "--quiet")
    assert code == 1 and "UnicodeEncodeError" in one_line(err)
    assert out.read_text() == "the old report"
    # Without --force and without an old file: nothing is left behind (a rerun works).
    fresh = tmp_path / "new.html"
    code, _, err = run_cli(capsys, "report", SAMPLE, "-o", fresh, "--quiet")
    assert code == 1 and not fresh.exists()
    assert sorted(os.listdir(tmp_path)) == ["r.html"]
    monkeypatch.undo()
    code, _, err = run_cli(capsys, "report", SAMPLE, "-o", out, "--force", "--quiet")
    assert code == 0 and out.read_text().startswith("<!doctype html>")
    assert oct(out.stat().st_mode & 0o777) == oct(0o640)  # a replaced report keeps its mode
    code, _, err = run_cli(capsys, "report", SAMPLE, "-o", fresh, "--quiet")
    assert code == 0 and fresh.stat().st_size > 1e5


def test_ctrl_c_while_building_leaves_nothing(tmp_path, capsys, monkeypatch):
    out = tmp_path / "r.html"
    out.write_text("the old report")

    def interrupted(run):
        raise KeyboardInterrupt

    monkeypatch.setattr(report, "report_html", interrupted)
    code, _, err = run_cli(capsys, "report", SAMPLE, "-o", out, "--force")
    assert code == 130 and one_line(err) == "tfprof-widgets: interrupted"
    assert out.read_text() == "the old report" and os.listdir(tmp_path) == ["r.html"]


@pytest.mark.parametrize("planted", ["plugins", "plugins/profile"])
def test_a_run_is_never_moved_through_a_link_planted_in_the_logdir(tmp_path, planted):
    """Issue 37 item 9: a link at <logdir>/plugins/profile sent a %%tfprof --backend jax run
    (and TF's, which takes the same move) outside the logdir. Refused, the capture kept in
    its staging folder for the next magic to offer."""
    from tfprof_widgets.capturing.rundir import make_staging, move_run
    from tfprof_widgets.errors import CaptureError

    logdir, outside = tmp_path / "logs", tmp_path / "elsewhere"
    logdir.mkdir()
    outside.mkdir()
    (logdir / planted).parent.mkdir(parents=True, exist_ok=True)
    (logdir / planted).symlink_to(outside)
    staging = make_staging(str(logdir))
    run = pathlib.Path(staging) / "plugins" / "profile" / "2026_12_07"
    run.mkdir(parents=True)
    (run / "vm.xplane.pb").write_bytes(b"")
    before = tree_state(outside)
    with pytest.raises(CaptureError, match="symbolic link"):
        move_run(staging, str(logdir))
    assert tree_state(outside) == before
    assert (run / "vm.xplane.pb").exists()


def test_symlink_output_is_refused_unless_forced(tmp_path, capsys):
    target = tmp_path / "precious.txt"
    target.write_text("keep me")
    link = tmp_path / "r.html"
    link.symlink_to(target)
    dangling = tmp_path / "d.html"
    dangling.symlink_to(tmp_path / "nowhere" / "x.html")
    for path in (link, dangling):
        code, _, err = run_cli(capsys, "report", SAMPLE, "-o", path, "--quiet")
        assert code == 2 and "is a symbolic link" in one_line(err)
    assert target.read_text() == "keep me" and not (tmp_path / "nowhere").exists()
    code, _, err = run_cli(capsys, "report", SAMPLE, "-o", link, "--force", "--quiet")
    assert code == 0, err
    assert not link.is_symlink() and link.read_text().startswith("<!doctype html>")
    assert target.read_text() == "keep me"  # the link was replaced, never written through


def test_output_that_is_a_directory_or_the_capture_itself(tmp_path, capsys):
    code, _, err = run_cli(capsys, "report", SAMPLE, "-o", tmp_path, "--force")
    assert code == 2 and "is a directory" in one_line(err)
    capture = tmp_path / "host.xplane.pb"
    capture.write_bytes(XPLANE)
    code, _, err = run_cli(capsys, "report", capture, "-o", capture, "--force")
    assert code == 2 and "capture's own files" in one_line(err)
    assert capture.read_bytes() == XPLANE


# -- 13: every command-line failure is one line ---------------------------------------------
def test_missing_output_directory_is_refused_before_loading(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(cli, "load", lambda *a, **k: pytest.fail("loaded before checking"))
    code, _, err = run_cli(capsys, "report", SAMPLE, "-o", tmp_path / "no" / "r.html")
    assert code == 2
    assert one_line(err) == (
        f"tfprof-widgets: {tmp_path / 'no' / 'r.html'}: cannot write here: the directory "
        f"{tmp_path / 'no'} does not exist"
    )
    (tmp_path / "file").write_text("x")
    code, _, err = run_cli(capsys, "report", SAMPLE, "-o", tmp_path / "file" / "r.html")
    assert code == 2 and "is not a directory" in one_line(err)


def test_read_only_output_directory(tmp_path):
    """A read-only filesystem (root ignores permission bits, so a real one: a tmpfs
    mounted read-only in a mount namespace of its own)."""
    from isolation import run_isolated

    script = tmp_path / "ro_report.py"
    script.write_text(
        textwrap.dedent(f"""
        import contextlib, ctypes, io, json, os, sys
        sys.path.insert(0, {str(ROOT)!r})
        ro = {str(tmp_path / "ro")!r}
        os.makedirs(ro)
        libc = ctypes.CDLL(None, use_errno=True)
        assert libc.mount(b"tmpfs", ro.encode(), b"tmpfs", 1, b"size=64k") == 0
        from tfprof_widgets import cli
        err = io.StringIO()
        with contextlib.redirect_stderr(err):
            code = cli.main(["report", {str(SAMPLE)!r}, "-o", ro + "/r.html", "--quiet"])
        print(json.dumps({{"code": code, "err": err.getvalue(), "left": os.listdir(ro)}}))
        """)
    )
    got = run_isolated(str(script), [], mount=True)
    assert got["code"] == 2 and got["left"] == []
    assert got["err"].count("\n") == 1
    assert got["err"].startswith(f"tfprof-widgets: {tmp_path / 'ro' / 'r.html'}: cannot write")
    assert "Read-only file system" in got["err"]


@pytest.fixture
def odd_inputs(tmp_path) -> dict[str, pathlib.Path]:
    (tmp_path / "garbage.xplane.pb").write_bytes(b"\xff" * 100)
    (tmp_path / "notes.txt").write_text("hello")
    (tmp_path / "empty").mkdir()
    os.mkfifo(tmp_path / "pipe.trace.json")
    return {p.name: p for p in tmp_path.iterdir()}


CLI_FAILURES = {
    "no command": ([], 2, "required"),
    "unknown command": (["frobnicate"], 2, "invalid choice"),
    "summary without a path": (["summary"], 2, "required: path"),
    "unknown option": (["summary", SAMPLE, "--bogus"], 2, "unrecognized arguments"),
    "missing path": (["summary", "{tmp}/missing"], 2, "no such file or directory"),
    "--top 0": (["summary", SAMPLE, "--top", "0"], 2, "positive whole number"),
    "--top text": (["summary", SAMPLE, "--top", "ten"], 2, "positive whole number"),
    "unknown run": (["summary", SAMPLE, "--run", "nope"], 2, "no run named 'nope'"),
    "--run on a file": (["summary", "{tmp}/garbage.xplane.pb", "--run", "x"], 2, "run="),
    "damaged capture": (["summary", "{tmp}/garbage.xplane.pb"], 2, "garbage.xplane.pb"),
    "not a capture": (["summary", "{tmp}/notes.txt"], 2, "notes.txt"),
    "empty directory": (["summary", "{tmp}/empty"], 2, "no profile runs found"),
    "a FIFO": (["summary", "{tmp}/pipe.trace.json"], 2, "pipe.trace.json"),
    "runs of a file": (["runs", "{tmp}/notes.txt"], 2, "takes a logdir"),
    "runs of nothing": (["runs", "{tmp}/missing"], 2, "no such directory"),
    "report -o ''": (["report", SAMPLE, "-o", ""], 2, "an empty file name"),
    "report -o NUL": (["report", SAMPLE, "-o", "a\0b"], 2, "NUL"),
    "report of nothing": (["report", "{tmp}/missing", "-o", "{tmp}/r.html"], 2, "no such"),
    "report -o too long a name": (
        ["report", SAMPLE, "-o", "{tmp}/" + "x" * 300 + ".html", "--quiet"],
        2,
        "File name too long",
    ),
}


@pytest.mark.parametrize("case", CLI_FAILURES)
def test_every_cli_failure_is_one_line(case, odd_inputs, capsys):
    argv, code, says = CLI_FAILURES[case]
    tmp = str(odd_inputs["notes.txt"].parent)
    before = tree_state(tmp)
    argv = [str(a).replace("{tmp}", tmp) for a in argv]
    got, out, err = run_cli(capsys, *argv)
    assert got == code and out == ""
    assert says in one_line(err)
    assert tree_state(tmp) == before  # nothing written


def test_an_unexpected_error_is_one_line_too(capsys, monkeypatch):
    def bug(run, top):
        raise TypeError("unsupported operand")

    monkeypatch.setattr(cli, "summary_text", bug)
    code, _, err = run_cli(capsys, "summary", SAMPLE)
    assert code == 1
    assert one_line(err) == (
        "tfprof-widgets: unexpected TypeError: unsupported operand (a bug in tfprof_widgets; "
        "TFPROF_WIDGETS_DEBUG=1 shows the traceback)"
    )


def test_the_installed_command_never_tracebacks(tmp_path):
    """Through the real entry point: a usage error, names a terminal cannot show."""

    def cmd(*argv, env=None):
        return subprocess.run(
            [sys.executable, "-m", "tfprof_widgets", *map(str, argv)],
            capture_output=True,
            text=True,
            cwd=tmp_path,
            timeout=120,
            env={**os.environ, "PYTHONPATH": str(ROOT), **(env or {})},
        )

    proc = cmd("summary", SAMPLE, "--top", "-3")
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1 and not proc.stdout
    # ASCII-only output: characters it lacks are escaped, not a UnicodeEncodeError.
    trace = tmp_path / "café.trace.json"
    trace.write_text(json.dumps({"traceEvents": [{"ph": "X", "name": "µ-op", "ts": 1, "dur": 2}]}))
    proc = cmd("summary", trace, env={"PYTHONIOENCODING": "ascii", "PYTHONUTF8": "0"})
    assert proc.returncode == 0 and "\\xb5-op" in proc.stdout, proc.stderr
    assert "caf\\xe9" in proc.stdout


def test_a_reader_that_goes_away_is_not_an_error(capsys, monkeypatch):
    """``tfprof-widgets summary ... | head -1``: the pipe closes under the output."""

    class ClosedPipe(io.StringIO):
        def write(self, text):
            raise BrokenPipeError(32, "Broken pipe")

        def fileno(self):
            raise io.UnsupportedOperation("not a real stream")

    monkeypatch.setattr(sys, "stdout", ClosedPipe())
    code = cli.main(["summary", str(SAMPLE)])
    assert code == 1 and capsys.readouterr().err == ""


# -- 14: a remote server that never answers -------------------------------------------------
def test_remote_capture_gives_up_on_a_server_that_never_answers(tmp_path):
    with FakeProfilerServer("hang") as server:
        t0 = time.monotonic()
        with pytest.raises(tw.CaptureError) as info:
            tw.remote_capture(server.address, tmp_path / "logs", duration_ms=1000)
        waited = time.monotonic() - t0
        assert server.cancelled.wait(5)  # the request was cancelled, not left open
    # The default: the 1 s trace, then 5 s to save and answer (duration + a few seconds).
    assert 5.5 < waited < 9, waited
    assert str(info.value) == (
        f"{server.address}: the profiler server took the request but did not answer within "
        "5 s after the trace ended; gave up. If it is still saving a large capture, give it "
        "longer (save_timeout_s= or --save-timeout-s)"
    )
    assert os.listdir(tmp_path / "logs" / "plugins" / "profile") == []  # nothing left


def test_remote_magic_says_so_in_one_line(tmp_path):
    from IPython import get_ipython
    from IPython.testing.globalipapp import start_ipython

    ip = start_ipython() or get_ipython()  # one shell per process
    ip.run_line_magic("load_ext", "tfprof_widgets")
    with FakeProfilerServer("hang") as server:
        t0 = time.monotonic()
        with pytest.raises(tw.CaptureError) as info:
            ip.run_line_magic(
                "tfprof",
                f"remote {server.address} --duration-ms 300 --save-timeout-s 1 "
                f"--logdir {tmp_path} --no-display",
            )
        assert time.monotonic() - t0 < 1.3 + 2.5
    (line,) = info.value._render_traceback_()
    assert line.startswith(f"CaptureError: {server.address}: the profiler server took the ")
    assert "did not answer within 1 s" in line


def test_a_server_still_writing_its_capture_is_waited_for(tmp_path):
    # It writes for ~3.6 s after a 0.3 s trace; 1 s without growth would mean hung.
    with FakeProfilerServer("slow", XPLANE, chunks=12, chunk_delay_s=0.3) as server:
        run = tw.remote_capture(
            server.address, tmp_path / "logs", duration_ms=300, save_timeout_s=1.0
        )
    assert len(run.events) == len(tw.load(SAMPLE).events)


def test_one_hung_worker_is_left_out(tmp_path):
    with FakeProfilerServer("ok", XPLANE) as good, FakeProfilerServer("hang") as hung:
        with pytest.warns(RuntimeWarning, match=f"{hung.address}: left out of the capture"):
            run = tw.remote_capture(
                f"{good.address},{hung.address}",
                tmp_path / "logs",
                duration_ms=200,
                save_timeout_s=1.0,
            )
    # Only the answering server's capture, named by the host its XSpace records.
    assert [os.path.basename(f) for f in run.files] == [f"127.0.0.1_{good.port}.xplane.pb"]
    assert run.hosts == tw.load(sample_files("keras_fit")[0]).hosts


def test_ctrl_c_cancels_a_remote_capture(tmp_path):
    main = threading.main_thread().ident
    with FakeProfilerServer("hang") as server:
        timer = threading.Timer(0.5, signal.pthread_kill, (main, signal.SIGINT))
        timer.start()
        t0 = time.monotonic()
        with pytest.raises(KeyboardInterrupt):
            tw.remote_capture(server.address, tmp_path / "logs", duration_ms=5000)
        assert time.monotonic() - t0 < 2
        assert server.cancelled.wait(5)
    assert os.listdir(tmp_path / "logs" / "plugins" / "profile") == []


# -- 16 and 17.10: %%tfprof with TensorFlow -------------------------------------------------
@pytest.fixture(scope="module")
def tf():
    if os.environ.get("CI") != "true":
        pytest.importorskip("tensorflow")
    import tensorflow

    return tensorflow


@pytest.fixture(scope="module")
def ip(tf):
    from IPython import get_ipython
    from IPython.testing.globalipapp import start_ipython

    shell = start_ipython() or get_ipython()  # one shell per process
    shell.run_line_magic("load_ext", "tfprof_widgets")
    shell.run_cell("import tensorflow as tf")
    return shell


@pytest.fixture
def clean(tf, tmp_path, monkeypatch):
    """Each test in its own directory; none leaves a profiler, a capture or a handler."""
    from tfprof_widgets.capturing import tf_runtime
    from tfprof_widgets.capturing.session import active_capture

    monkeypatch.chdir(tmp_path)
    handler = signal.getsignal(signal.SIGINT)
    yield tmp_path
    assert signal.getsignal(signal.SIGINT) is handler
    assert not tf_runtime.profiler_running(), "a TF profiler session was left running"
    assert active_capture() is None


def published(logdir: pathlib.Path) -> list[pathlib.Path]:
    """The run directories holding a capture, and no staging directory left anywhere."""
    assert not list(logdir.rglob(".tfprof-staging-*")), "a capture was left in staging"
    return sorted(p.parent for p in (logdir / "plugins" / "profile").glob("*/*.xplane.pb"))


def matmuls(run) -> int:
    return int(run.events["name"].astype(str).str.contains("MatMul").sum())


CELL = "for _ in range(20):\n    tf.matmul(tf.ones((8, 8)), tf.ones((8, 8)))\n"


def interrupt_at(monkeypatch, tf, where: str, how: str, times: int = 1) -> list[str]:
    """Make TF's stop (or the move into place) meet a Ctrl-C at ``where``.

    ``how="signal"``: a real SIGINT (what Ctrl-C sends); ``how="raise"``: the
    KeyboardInterrupt itself, as if it got through (``times`` times).
    """
    from tfprof_widgets.capturing import session

    calls: list[str] = []

    def ctrl_c():
        calls.append(where)
        if how == "signal":
            signal.raise_signal(signal.SIGINT)
        elif len(calls) <= times:
            raise KeyboardInterrupt

    real_stop, real_move = tf.profiler.experimental.stop, session.move_run

    def stop(*a, **k):
        if where == "before TF's stop":
            ctrl_c()
        out = real_stop(*a, **k)
        if where == "after TF's stop":
            ctrl_c()
        return out

    def move(*a, **k):
        ctrl_c()
        return real_move(*a, **k)

    monkeypatch.setattr(tf.profiler.experimental, "stop", stop)
    if where == "moving into place":
        monkeypatch.setattr(session, "move_run", move)
    return calls


@pytest.mark.parametrize("how", ["signal", "raise"])
@pytest.mark.parametrize("where", ["before TF's stop", "after TF's stop", "moving into place"])
def test_interrupted_while_stopping_still_publishes(ip, tf, clean, monkeypatch, where, how):
    calls = interrupt_at(monkeypatch, tf, where, how)
    with pytest.raises(KeyboardInterrupt) as info:
        ip.run_cell_magic("tfprof", f"--logdir {clean} --no-display", CELL)
    assert calls[0] == where
    assert info.value._render_traceback_() == [
        "KeyboardInterrupt while the profiler was stopping: it waited until the capture was "
        "saved; it is in _tfprof_run"
    ]
    run = ip.user_ns["_tfprof_run"]
    (run_dir,) = published(clean)
    assert run.path == str(run_dir) and matmuls(run) >= 20
    monkeypatch.undo()
    ip.run_cell_magic("tfprof", f"--logdir {clean} --no-display", CELL)  # not busy
    assert len(published(clean)) == 2


def test_a_stop_interrupted_for_good_is_finished_by_the_next_magic(ip, tf, clean, monkeypatch):
    """Ctrl-C got through every time (say, pressed again and again): TF's profiler is still
    on. The next magic finishes that capture first, instead of failing as busy."""
    from tfprof_widgets.capturing import tf_runtime
    from tfprof_widgets.capturing.session import active_capture

    interrupt_at(monkeypatch, tf, "before TF's stop", "raise", times=2)
    with pytest.raises(KeyboardInterrupt):
        ip.run_cell_magic("tfprof", f"--logdir {clean} --no-display", CELL)
    cap = active_capture()
    assert cap.state == "stopping" and tf_runtime.profiler_running()
    monkeypatch.undo()
    from IPython.utils.capture import capture_output

    with capture_output() as out:
        ip.run_cell_magic("tfprof", f"--logdir {clean} --no-display", CELL)
    assert out.outputs[0].data["text/plain"] == (
        f"finished the capture interrupted while stopping: {cap.run_dir} "
        f"(%tfprof load {cap.run_dir})"
    )
    first, second = published(clean)
    assert str(first) == cap.run_dir and ip.user_ns["_tfprof_run"].path == str(second)
    assert matmuls(tw.load(first)) >= 20


def test_the_capture_api_finishes_an_interrupted_stop(tf, clean, monkeypatch):
    """``with tw.capture()``: a KeyboardInterrupt right after TF's stop propagates; the
    capture waits in its "stopping" state and stop_capture() finishes it."""
    from tfprof_widgets.capturing import tf_runtime
    from tfprof_widgets.capturing.session import active_capture

    interrupt_at(monkeypatch, tf, "after TF's stop", "raise")
    with pytest.raises(KeyboardInterrupt), tw.capture(clean) as cap:
        exec(CELL, {"tf": tf})
    assert active_capture() is cap and cap.state == "stopping"
    assert not tf_runtime.profiler_running()  # TF's stop ran; the files are still staged
    assert len(list(clean.glob(".tfprof-staging-*/plugins/profile/*/*.xplane.pb"))) == 1
    assert tw.stop_capture() is cap and cap.state == "published"
    (run_dir,) = published(clean)
    assert cap.run.path == str(run_dir) and matmuls(cap.run) >= 20


def test_interrupted_while_starting_leaves_nothing(ip, tf, clean, monkeypatch):
    real_start = tf.profiler.experimental.start

    def start(*a, **k):
        real_start(*a, **k)
        signal.raise_signal(signal.SIGINT)

    monkeypatch.setattr(tf.profiler.experimental, "start", start)
    with pytest.raises(KeyboardInterrupt):
        ip.run_cell_magic("tfprof", f"--logdir {clean} --no-display", "ran_anyway = True")
    assert "ran_anyway" not in ip.user_ns
    assert published(clean) == [] and not list((clean / "plugins" / "profile").iterdir())


CRASHING_SESSION = """
import os, sys
sys.path.insert(0, {root!r})
import tensorflow as tf
from tfprof_widgets.capturing.session import Capture
real_stop = tf.profiler.experimental.stop

def stop_then_die(*a, **k):
    real_stop(*a, **k)
    os._exit(3)  # the kernel dies right after TensorFlow saved the capture

tf.profiler.experimental.stop = stop_then_die
cap = Capture({logdir!r}).start()
for _ in range(20):
    tf.matmul(tf.ones((8, 8)), tf.ones((8, 8)))
cap.stop()
"""


def test_a_crashed_sessions_capture_is_offered_and_recovered(ip, tf, clean):
    from IPython.utils.capture import capture_output

    logdir = clean / "logs"
    script = CRASHING_SESSION.format(root=str(ROOT), logdir=str(logdir))
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, timeout=300)
    assert proc.returncode == 3, proc.stderr.decode()[-2000:]
    (staging,) = logdir.glob(".tfprof-staging-*")
    (staged_run,) = (staging / "plugins" / "profile").iterdir()
    with capture_output() as out:
        runs = ip.run_line_magic("tfprof", f"list {logdir}")
    assert runs["path"].tolist() == [str(staged_run)]
    assert out.outputs[0].data["text/plain"] == (
        f"unpublished capture (its session stopped while saving it): {staged_run}; "
        f"%tfprof recover {logdir} moves it into {logdir}, "
        f"%tfprof load {staged_run} loads it where it is"
    )
    ip.run_line_magic("tfprof", f"load {staged_run} --no-display")
    assert matmuls(ip.user_ns["_tfprof_run"]) >= 20
    with capture_output() as out:
        runs = ip.run_line_magic("tfprof", f"recover {logdir}")
    (run_dir,) = published(logdir)
    assert runs["path"].tolist() == [str(run_dir)]
    assert out.outputs[0].data["text/plain"] == f"recovered {staged_run} → {run_dir}"
    assert matmuls(tw.load(logdir)) >= 20


def test_a_capture_being_saved_by_a_live_session_is_not_offered(tf, clean):
    """Another kernel that is saving right now owns its staging directory."""
    from tfprof_widgets.capturing.rundir import find_unpublished, make_staging

    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        staging = make_staging(str(clean))
        owner = json.loads((pathlib.Path(staging) / "owner.json").read_text())
        owner.update(pid=sleeper.pid, started=None)
        (pathlib.Path(staging) / "owner.json").write_text(json.dumps(owner))
        run = pathlib.Path(staging, "plugins", "profile", "2026_01_01_00_00_00")
        run.mkdir(parents=True)
        (run / "vm.xplane.pb").write_bytes(XPLANE)
        assert find_unpublished(str(clean)) == []
    finally:
        sleeper.kill()
        sleeper.wait()
    assert [u.run_dir for u in find_unpublished(str(clean))] == [str(run)]


def test_tensorflow_log_lines_are_kept_not_shown(ip, tf, clean, monkeypatch, capfd):
    """TF's C++ lines go to fd 2 and its Python lines to the `tensorflow` logger while a
    capture starts and stops; the cell's own output and errors are shown as always."""
    from IPython.utils.capture import capture_output

    real_stop = tf.profiler.experimental.stop

    def stop_with_warnings(*a, **k):
        os.write(2, b"W0000 00:00:1795470000.000000  1234 cupti_tracer.cc:1] CUPTI busy\n")
        tf.get_logger().warning("profiler warning from Python")
        return real_stop(*a, **k)

    monkeypatch.setattr(tf.profiler.experimental, "stop", stop_with_warnings)
    capfd.readouterr()
    cell = "import os, sys\nos.write(2, b'mine at fd 2\\n')\nprint('mine', file=sys.stderr)\n"
    with capture_output() as out:
        ip.run_cell_magic("tfprof", f"--logdir {clean} --no-display", cell + CELL)
    shown = capfd.readouterr()
    run = ip.user_ns["_tfprof_run"]
    log = (pathlib.Path(run.path) / "capture.log").read_text()
    assert run.capture_log == log
    assert "CUPTI busy" in log and "WARNING:tensorflow:profiler warning from Python" in log
    if os.environ.get("TF_CPP_MIN_LOG_LEVEL", "0") == "0":
        assert "Profiler session initializing" in log and "Profiler session tear down" in log
    for line in ("CUPTI busy", "profiler warning", "Profiler session"):
        assert line not in shown.err + shown.out + out.stderr + out.stdout
    assert "mine at fd 2" in shown.err and out.stderr == "mine\n"
    assert out.outputs[-1].data["text/plain"] == (
        "TensorFlow logged 2 warning(s) while profiling, kept in _tfprof_run.capture_log; "
        "the first: W0000 00:00:1795470000.000000  1234 cupti_tracer.cc:1] CUPTI busy"
    )
    # The cell's own errors are still shown in full.
    with pytest.raises(ZeroDivisionError), capture_output() as out:
        ip.run_cell_magic("tfprof", f"--logdir {clean} --no-display", "1/0")
    assert "ZeroDivisionError" in out.stdout


def test_no_red_boxes_in_a_real_kernel(tf, clean, monkeypatch):
    """In Jupyter, anything written to fd 2 becomes a red stderr box: run %%tfprof in a
    real kernel and look at the cell's outputs."""
    import nbformat
    from nbclient import NotebookClient

    cells = [
        "%load_ext tfprof_widgets",
        "import tensorflow as tf",
        f"%%tfprof --logdir {clean} --no-display\n"
        "import sys\nprint('my own warning', file=sys.stderr)\n" + CELL,
        "print(len(_tfprof_run.capture_log))",
    ]
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells])
    monkeypatch.setenv("PYTHONPATH", str(ROOT))
    NotebookClient(nb, timeout=300, kernel_name="python3", resources={"path": clean}).execute()
    outputs = nb.cells[2].outputs
    streams = [o for o in outputs if o["output_type"] == "stream"]
    assert [(o["name"], o["text"]) for o in streams] == [("stderr", "my own warning\n")]
    # (The viewer script sent ahead at the first load is an output emptied when the cell
    # ends: no data, nothing shown.)
    shown = [
        o["data"]["text/plain"] for o in outputs if o["output_type"] == "display_data" and o["data"]
    ]
    assert shown[0].startswith("captured")  # the status line, updated in place
    logged = int(nb.cells[3].outputs[0]["text"])
    if os.environ.get("TF_CPP_MIN_LOG_LEVEL", "0") == "0":
        assert logged > 0
