"""Capture scenarios that start TF profiler servers; run by test_capture.py via isolation.py.

    python isolated_capture.py WORKDIR PROGRAM

Prints one JSON line with what each scenario observed. Every server is in this process's
own network namespace; the profiled programs are stopped before it exits.
"""

import json
import os
import socket
import subprocess
import sys
import time
import warnings


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def summary(run) -> dict:
    opts = run.profile_options
    return {
        "hosts": list(run.hosts),
        "events": int(len(run.events)),
        "steps": int(len(run.steps)),
        "path": run.path,
        "python_events": int(run.events["name"].astype(str).str.startswith("$").sum()),
        "host_tracer_level": opts["host_tracer_level"].astype(int).tolist(),
        "python_tracer_level": opts["python_tracer_level"].astype(int).tolist(),
        "files": sorted(os.listdir(run.path)),
    }


def main() -> None:
    workdir, program = sys.argv[1], sys.argv[2]
    os.chdir(workdir)
    from IPython.testing.globalipapp import start_ipython
    from IPython.utils.capture import capture_output

    import tfprof_widgets as tw

    ip = start_ipython()
    ip.run_line_magic("load_ext", "tfprof_widgets")
    out = {}

    # 1. Tracer options on a cell: the in-process server route, options really recorded.
    ip.run_cell(
        "import tensorflow as tf\n"
        "w = tf.Variable(tf.ones((32, 32)))\n"
        "@tf.function\n"
        "def step(x):\n"
        "    return tf.reduce_sum(tf.matmul(x, w))\n"
    )
    with warnings.catch_warnings(record=True) as caught, capture_output() as cap:
        warnings.simplefilter("always")
        ip.run_cell_magic(
            "tfprof",
            "--host-tracer-level 3 --python-tracer --name opt_run",
            "for i in range(6):\n"
            "    with tf.profiler.experimental.Trace('train', step_num=i, _r=1):\n"
            "        step(tf.ones((8, 32)))\n",
        )
    out["options"] = summary(ip.user_ns["opt_run"])
    out["options"]["warnings"] = [str(w.message) for w in caught]
    out["options"]["displayed"] = [sorted(o.data) for o in cap.outputs]
    # A second options capture reuses the server; a default one uses start/stop.
    ip.run_cell_magic("tfprof", "--host-tracer-level 1 --no-display", "step(tf.ones((8, 32)))")
    out["level1"] = summary(ip.user_ns["_tfprof_run"])
    ip.run_cell_magic("tfprof", "--no-display", "step(tf.ones((8, 32)))")
    out["default_after_server"] = summary(ip.user_ns["_tfprof_run"])
    # --delay-ms: tracing starts that long after the cell does; the capture records it.
    ip.run_cell_magic(
        "tfprof",
        "--delay-ms 400 --no-display",
        "import time\nt_cell = time.time_ns()\n"
        "for i in range(30):\n    step(tf.ones((8, 32)))\n    time.sleep(0.03)\n",
    )
    run = ip.user_ns["_tfprof_run"]
    first_ns = run.t0_ns
    out["delayed"] = {
        **summary(run),
        "first_event_after_cell_ms": (first_ns - ip.user_ns["t_cell"]) / 1e6,
        "requested_start_after_cell_ms": (
            int(run.profile_options["start_timestamp_ns"].iloc[0]) - ip.user_ns["t_cell"]
        )
        / 1e6,
    }
    # The cell raises while the server traces: stopped, saved, loadable.
    try:
        ip.run_cell_magic("tfprof", "--python-tracer --no-display", "step(tf.ones((8, 32)))\n1/0")
        out["raised"] = None
    except ZeroDivisionError:
        out["raised"] = summary(ip.user_ns["_tfprof_run"])
    from tfprof_widgets.capturing.tf_runtime import profiler_running

    out["running_after"] = profiler_running()
    # Ctrl-C that gets through right after Terminate: the stop is finished all the same.
    from tfprof_widgets.capturing import rpc

    real_terminate, calls = rpc.ProfilerClient.terminate, []

    def terminate(self, *args, **kwargs):
        real_terminate(self, *args, **kwargs)
        calls.append(1)
        if len(calls) == 1:
            raise KeyboardInterrupt

    rpc.ProfilerClient.terminate = terminate
    try:
        ip.run_cell_magic("tfprof", "--host-tracer-level 1 --no-display", "step(tf.ones((8, 32)))")
        out["interrupted_server_stop"] = None
    except KeyboardInterrupt as exc:
        out["interrupted_server_stop"] = {
            **summary(ip.user_ns["_tfprof_run"]),
            "said": exc._render_traceback_(),
            "running": profiler_running(),
            "terminate_calls": len(calls),
        }
    finally:
        rpc.ProfilerClient.terminate = real_terminate

    # 2. Remote capture from programs serving the profiler.
    ports = [free_port(), free_port()]
    procs = [
        subprocess.Popen([sys.executable, program, str(p), "60"], stdout=subprocess.PIPE, text=True)
        for p in ports
    ]
    try:
        for proc in procs:
            assert proc.stdout.readline().strip() == "serving"
        a, b = (f"grpc://127.0.0.1:{p}" for p in ports)
        with capture_output() as cap:
            ip.run_line_magic("tfprof", f"remote {a} --duration-ms 1500 --name remote_one")
        out["remote_one"] = summary(ip.user_ns["remote_one"])
        out["remote_one"]["displayed"] = [sorted(o.data) for o in cap.outputs]
        ip.run_line_magic(
            "tfprof",
            f"remote {a},{b} --duration-ms 1500 --host-tracer-level 3 "
            f"--logdir {workdir}/multi --no-display",
        )
        out["remote_two"] = summary(ip.user_ns["_tfprof_run"])
        # Nobody listens there: the client gives up after its connect timeout, whose 10 s
        # default (rpc.ProfilerClient) would be the longest wait of the capture tests; the
        # refusal and its message are the same after 2 s.
        connect = rpc.ProfilerClient.__init__
        rpc.ProfilerClient.__init__ = lambda self, address: connect(self, address, 2.0)
        t0 = time.monotonic()
        try:
            tw.remote_capture(f"grpc://127.0.0.1:{free_port()}", duration_ms=500)
            out["unreachable"] = None
        except tw.CaptureError as exc:
            out["unreachable"] = {"message": str(exc), "seconds": time.monotonic() - t0}
        finally:
            rpc.ProfilerClient.__init__ = connect
    finally:
        for proc in procs:
            proc.kill()
            proc.wait()
    print(json.dumps(out))


if __name__ == "__main__":
    main()
