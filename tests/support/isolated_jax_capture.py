"""JAX capture scenarios in a fresh process (no TensorFlow imported: the JAX backend is what
``auto`` picks there). Run by test_capture_jax.py: ``python isolated_jax_capture.py WORKDIR``.
Prints one JSON line with what each scenario observed."""

import json
import os
import sys
import warnings


def main() -> None:
    os.chdir(sys.argv[1])
    from IPython.testing.globalipapp import start_ipython
    from IPython.utils.capture import capture_output

    import tfprof_widgets as tw

    ip = start_ipython()
    ip.run_line_magic("load_ext", "tfprof_widgets")
    ip.run_cell(
        "import jax, jax.numpy as jnp\n"
        "step = jax.jit(lambda x: jnp.tanh(x @ x.T).sum())\n"
        "x = jnp.ones((64, 64))\n"
    )
    out = {"tf_imported": "tensorflow" in sys.modules}
    with warnings.catch_warnings(), capture_output():
        warnings.simplefilter("ignore")
        ip.run_cell_magic(
            "tfprof",
            "--name jrun --no-display",
            "for i in range(4):\n"
            "    with jax.profiler.StepTraceAnnotation('train', step_num=i):\n"
            "        step(x).block_until_ready()\n",
        )
    run = ip.user_ns["jrun"]
    out["magic"] = {
        "framework": run.framework.name,
        "steps": int(run.events["step"].nunique()),
        "planes": sorted(map(str, run.planes["plane"])),
        "hlo_proto": "Hlo Proto" in set(map(str, run.metadata_stats["stat"])),
        "under_logdir": run.path.startswith(os.path.join(os.getcwd(), "tfprof_logs")),
        "tf_imported": "tensorflow" in sys.modules,
    }
    # The API, with options JAX really applies, and a user's own session left alone.
    import jax

    with tw.capture("api_logs", backend="jax", host_tracer_level=1, load=True) as cap:
        ip.user_ns["step"](ip.user_ns["x"]).block_until_ready()
    out["api"] = {
        "route": cap.route,
        "run_dir_under": cap.run_dir.startswith(os.path.abspath("api_logs")),
    }
    jax.profiler.start_trace("user_logs")
    try:
        with tw.capture("busy_logs", backend="jax"):
            pass
        out["busy"] = "no error"
    except tw.CaptureError as exc:
        out["busy"] = type(exc).__name__
    jax.profiler.stop_trace()  # still the user's: our failed start did not stop it
    out["user_session_kept"] = bool(os.listdir("user_logs"))
    out["busy_left_nothing"] = not os.path.exists("busy_logs") or not any(
        f.endswith(".xplane.pb") for _, _, fs in os.walk("busy_logs") for f in fs
    )
    print(json.dumps(out))


if __name__ == "__main__":
    main()
