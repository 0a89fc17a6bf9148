"""What writes and interrupts leave behind (issue 20, items 12, 13, 14 and 16): the report,
convert and the capture magics interrupted or refused at each step, a remote capture whose
server hangs or dies. Per case: outcome, seconds, peak memory, and what changed in the work
directory outside the case's own target.

    python benchmarks/bench_hostile_writes.py       (bench_hostile.py --writes-only)
"""

from __future__ import annotations

import pathlib
import sys
import tempfile
import time

from hostile_common import (
    GOAL_PEAK_MB,
    GOAL_SECS,
    ROOT,
    _cli,
    _tree,
    reset_peak,
    rss_kb,
)


def _outside(before: dict, after: dict, target: str) -> str:
    """What changed in the work directory that is not the case's target."""
    changed = {k for k in before.keys() | after.keys() if before.get(k) != after.get(k)}
    stray = sorted(k for k in changed if k != target and not k.startswith(target + "/"))
    return "nothing" if not stray else ", ".join(stray[:3])


def _write_cases(work: pathlib.Path):
    """(name, target, function returning the outcome) of the report and CLI cases."""
    import json

    from tfprof_widgets import report

    sample = ROOT / "sample_profiles" / "keras_fit"
    odd = work / "odd.trace.json"
    odd.write_text(json.dumps({"traceEvents": [{"ph": "X", "name": "\ud800", "ts": 1, "dur": 9}]}))
    (work / "old.html").write_text("the old report")

    def surrogate():
        out = _cli("report", odd, "-o", work / "old.html", "--force", "--quiet")
        (work / "old.html").read_bytes().decode("utf-8")  # raises unless valid UTF-8
        return out + ", old replaced, valid UTF-8"

    def failed_build():
        old = (work / "old.html").read_bytes()
        real = report.report_html
        report.report_html = lambda run: "\ud800".encode()  # raises UnicodeEncodeError
        try:
            out = _cli("report", sample, "-o", work / "old.html", "--force", "--quiet")
        finally:
            report.report_html = real
        kept = (work / "old.html").read_bytes() == old
        return out + (", old report kept" if kept else ", OLD REPORT LOST")

    (work / "link.html").symlink_to(work / "nowhere.html")

    def dangling_link():
        out = _cli("report", sample, "-o", work / "link.html", "--quiet")
        return out + ("" if not (work / "nowhere.html").exists() else ", WROTE THROUGH")

    def forced_link():
        out = _cli("report", sample, "-o", work / "link.html", "--force", "--quiet")
        through = (work / "nowhere.html").exists()
        return out + (", WROTE THROUGH" if through else ", the link itself replaced")

    def read_only():
        """In a mount namespace of its own (root ignores permission bits): a read-only
        tmpfs. Returns the child's own peak memory and time."""
        import shutil
        import subprocess

        ro = work / "ro"
        code = (
            "import contextlib, ctypes, io, os, sys, time\n"
            f"sys.path.insert(0, {str(ROOT)!r}); ro = {str(ro)!r}; os.makedirs(ro)\n"
            "libc = ctypes.CDLL(None, use_errno=True)\n"
            "assert libc.mount(b'tmpfs', ro.encode(), b'tmpfs', 1, b'size=64k') == 0\n"
            "from tfprof_widgets import cli\n"
            "err = io.StringIO(); t0 = time.perf_counter()\n"
            "with contextlib.redirect_stderr(err):\n"
            f"    rc = cli.main(['report', {str(sample)!r}, '-o', ro + '/r.html'])\n"
            "peak = [ln for ln in open('/proc/self/status') if ln.startswith('VmHWM')]\n"
            "print(rc, time.perf_counter() - t0, peak[0].split()[1], err.getvalue())\n"
        )
        unshare = shutil.which("unshare")
        if unshare is None or subprocess.run([unshare, "-rm", "true"]).returncode:
            return "skipped: unshare -rm not permitted here"
        proc = subprocess.run(
            [unshare, "-rm", sys.executable, "-c", code], capture_output=True, text=True
        )
        rc, secs, peak_kb, err = proc.stdout.split(" ", 3)
        lines = err.rstrip("\n").splitlines()
        return (
            f"exit {rc}, {len(lines)} line(s): {lines[0][:60]} (child: {float(secs):.2f} s, "
            f"peak RSS {int(peak_kb) / 1024:.0f} MB)"
        )

    return [
        ("report: lone-surrogate name, --force", "old.html", surrogate),
        ("report: build fails, --force", "old.html", failed_build),
        ("report -o dangling symlink", "link.html", dangling_link),
        ("report -o symlink --force", "link.html", forced_link),
        (
            "report -o missing directory",
            "no",
            lambda: _cli("report", sample, "-o", work / "no" / "r.html"),
        ),
        ("report -o read-only directory", "ro", read_only),
        ("summary --top 0", "", lambda: _cli("summary", sample, "--top", "0")),
    ]


def _remote_cases(work: pathlib.Path):
    import signal
    import threading

    from fake_profiler_server import FakeProfilerServer

    import tfprof_widgets as tw

    def hung(timeout=None):
        with FakeProfilerServer("hang") as server:
            t0 = time.perf_counter()
            try:
                tw.remote_capture(
                    server.address, work / "remote", duration_ms=1000, save_timeout_s=timeout
                )
                return "CAPTURED?"
            except tw.CaptureError as exc:
                return f"CaptureError after {time.perf_counter() - t0:.1f} s: {exc.problem[:40]}"

    def interrupted():
        main_thread = threading.main_thread().ident
        with FakeProfilerServer("hang") as server:
            threading.Timer(0.5, signal.pthread_kill, (main_thread, signal.SIGINT)).start()
            try:
                tw.remote_capture(server.address, work / "remote", duration_ms=5000)
            except KeyboardInterrupt:
                pass
            cancelled = server.cancelled.wait(5)
        return "KeyboardInterrupt" + (", request cancelled" if cancelled else ", NOT cancelled")

    return [
        ("remote: server never answers (1 s trace)", "remote", hung),
        ("remote: Ctrl-C while waiting", "remote", interrupted),
    ]


def _magic_cases(work: pathlib.Path):
    import signal
    import subprocess

    try:
        import tensorflow as tf
    except ImportError:
        return []
    from IPython import get_ipython
    from IPython.testing.globalipapp import start_ipython
    from IPython.utils.capture import capture_output

    import tfprof_widgets as tw
    from tfprof_widgets.capturing.session import active_capture
    from tfprof_widgets.capturing.tf_runtime import profiler_running

    ip = start_ipython() or get_ipython()
    ip.run_line_magic("load_ext", "tfprof_widgets")
    ip.run_cell("import tensorflow as tf")
    cell = "for _ in range(50):\n    tf.matmul(tf.ones((8, 8)), tf.ones((8, 8)))\n"
    real_stop = tf.profiler.experimental.stop
    logdir = work / "logs"

    def state() -> str:
        staged = list(logdir.rglob(".tfprof-staging-*"))
        run = ip.user_ns.get("_tfprof_run")
        return (
            f"profiler {'ON' if profiler_running() else 'off'}, "
            f"{'STAGED' if staged else 'published'}, "
            f"{len(run.events) if run is not None else 0} events loaded"
        )

    def cell_with_stop(stop) -> None:
        """Run the cell under %%tfprof with TF's stop replaced; a Ctrl-C is expected."""
        tf.profiler.experimental.stop = stop
        try:
            with capture_output():
                ip.run_cell_magic("tfprof", f"--logdir {logdir} --no-display", cell)
        except KeyboardInterrupt:
            pass
        finally:
            tf.profiler.experimental.stop = real_stop

    def interrupted(where: str):
        def stop(*a, **k):
            if where == "before":
                signal.raise_signal(signal.SIGINT)
            out = real_stop(*a, **k)
            if where == "after":
                signal.raise_signal(signal.SIGINT)
            return out

        def case():
            ip.user_ns.pop("_tfprof_run", None)
            cell_with_stop(stop)
            return state()

        return case

    def forced():
        def stop(*a, **k):
            raise KeyboardInterrupt  # got through, every time

        cell_with_stop(stop)
        left = active_capture().state
        with capture_output():
            ip.run_cell_magic("tfprof", f"--logdir {logdir} --no-display", cell)
        return f"left {left}; next %%tfprof finished it: " + state()

    def crashed():
        script = (
            f"import os, sys; sys.path.insert(0, {str(ROOT)!r})\n"
            "import tensorflow as tf\n"
            "from tfprof_widgets.capturing.session import Capture\n"
            "real = tf.profiler.experimental.stop\n"
            "tf.profiler.experimental.stop = lambda: (real(), os._exit(3))\n"
            f"cap = Capture({str(work / 'crashed')!r}).start()\n"
            "tf.matmul(tf.ones((8, 8)), tf.ones((8, 8)))\n"
            "cap.stop()\n"
        )
        subprocess.run([sys.executable, "-c", script], capture_output=True, timeout=300)
        with capture_output() as out:
            ip.run_line_magic("tfprof", f"list {work / 'crashed'}")
            ip.run_line_magic("tfprof", f"recover {work / 'crashed'}")
        notes = [o.data["text/plain"][:20] for o in out.outputs]
        n = len(tw.load(work / "crashed").events)
        return f"{notes[0]}…, {notes[1]}…; {n} events load"

    def logged():
        with capture_output() as out:
            ip.run_cell_magic("tfprof", f"--logdir {logdir} --no-display", cell)
        run = ip.user_ns["_tfprof_run"]
        leaked = "Profiler session" in out.stderr + out.stdout
        return f"{len(run.capture_log.splitlines())} TF log lines in run.capture_log" + (
            ", SHOWN" if leaked else ", none shown"
        )

    return [
        ("%%tfprof: Ctrl-C before TF's stop", "logs", interrupted("before")),
        ("%%tfprof: Ctrl-C right after TF's stop", "logs", interrupted("after")),
        ("%%tfprof: stop interrupted for good", "logs", forced),
        ("%%tfprof: kernel dies after TF saved", "crashed", crashed),
        ("%%tfprof: TF's log lines", "logs", logged),
    ]


def writes_and_interrupts() -> None:
    """Each case of the report writer, the command line, remote capture and %%tfprof
    against its failure: outcome, peak RSS above the baseline, seconds, and whatever it
    changed outside its target in the work directory (should be nothing)."""
    print(
        f"{'writes and interrupts':44} {'seconds':>7} {'peak MB':>7}  {'outside':8} "
        f"{'goals':>5}  outcome"
    )
    with tempfile.TemporaryDirectory() as tmp:
        work = pathlib.Path(tmp)
        cases = _write_cases(work) + _remote_cases(work) + _magic_cases(work)
        for name, target, case in cases:
            before = _tree(work)
            reset_peak()
            base = rss_kb("VmRSS")
            t0 = time.perf_counter()
            try:
                outcome = case()
            except BaseException as exc:  # a case that fails is reported, not fatal
                outcome = f"RAISED {type(exc).__name__}: {exc}"[:100]
            secs = time.perf_counter() - t0
            peak = max(0, rss_kb("VmHWM") - base) / 1024
            outside = _outside(before, _tree(work), target)
            ok = (
                secs <= GOAL_SECS
                and peak <= GOAL_PEAK_MB
                and outside == "nothing"
                and not any(w in outcome for w in _FAILED_WORDS)
            )
            print(
                f"{name:44} {secs:7.2f} {peak:7.1f}  {outside:8} {'met' if ok else 'MISS':>5}  "
                f"{outcome}"
            )


# What the cases above put in an outcome when the goal is missed.
_FAILED_WORDS = (
    "RAISED",
    "LOST",
    "WROTE THROUGH",
    "NOT cancelled",
    "CAPTURED?",
    "profiler ON",
    "STAGED",
    "SHOWN",
    "Traceback",
)


if __name__ == "__main__":
    writes_and_interrupts()
