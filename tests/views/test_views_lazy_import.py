"""Issue 29 item 11: ``import tfprof_widgets`` imports no plotly (nor the widget packages);
the first view does, or, in a notebook's kernel, a warm-up thread started by the import,
which the views wait for. Each check runs in a fresh interpreter."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from conftest import ROOT

LAZY = ("plotly", "anywidget", "ipywidgets", "duckdb", "tfprof_widgets.views.op_stats_view")

PROBE = """
import json, sys, time
t = time.perf_counter()
import tfprof_widgets as tw
imported = time.perf_counter() - t
after_import = {m: m in sys.modules for m in LAZY}
view = tw.views.op_stats
print(json.dumps({"after_import": after_import, "plotly_after_view": "plotly" in sys.modules,
                  "import_s": imported}))
""".replace("LAZY", repr(LAZY))


def _probe(env_extra: dict | None = None) -> dict:
    env = {**os.environ, "PYTHONPATH": str(ROOT), **(env_extra or {})}
    out = subprocess.run(
        [sys.executable, "-c", PROBE], cwd=ROOT, env=env, capture_output=True, text=True,
        timeout=120, check=True,
    )  # fmt: skip
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_import_leaves_plotly_to_the_first_view():
    got = _probe()
    assert not any(got["after_import"].values()), got["after_import"]
    assert got["plotly_after_view"]


def test_no_warm_up_outside_a_kernel():
    """A script is not a kernel: no thread imports plotly behind its back."""
    from tfprof_widgets import _kernel

    assert not _kernel.in_kernel()
    code = "import tfprof_widgets, threading; print([t.name for t in threading.enumerate()])"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         timeout=120, check=True)  # fmt: skip
    assert "tfprof_widgets-preload" not in out.stdout


def test_views_listed_without_importing_them():
    import tfprof_widgets.views as views

    assert {"op_stats", "timeline", "compare", "View"} <= set(dir(views))
    assert views.op_stats.__module__ == "tfprof_widgets.views.op_stats_view"


def test_kernel_warms_plotly_behind_the_import():
    """In an IPython kernel the import starts the warm-up thread; plotly is in the kernel
    by the time a view is asked for (here: once the thread is joined), with no view made."""
    manager = pytest.importorskip("jupyter_client.manager")
    pytest.importorskip("ipykernel")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("TFPROF_WIDGETS_PRELOAD", None)
    km, kc = manager.start_new_kernel(kernel_name="python3", env=env, cwd=str(ROOT))
    try:
        out: list[str] = []

        def keep(msg):
            if msg["msg_type"] == "stream":
                out.append(msg["content"]["text"])

        code = (
            "import sys, tfprof_widgets\n"
            "from tfprof_widgets.views.page import preload as _preload\n"
            "started = _preload._thread is not None\n"
            "_preload.wait()\n"
            "print(started, 'plotly.graph_objects' in sys.modules,"
            " 'tfprof_widgets.views.op_stats_view' in sys.modules)"
        )
        kc.execute_interactive(code, timeout=120, output_hook=keep)
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)
    assert "".join(out).split() == ["True", "True", "False"]
