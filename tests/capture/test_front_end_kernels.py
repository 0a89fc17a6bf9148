"""``%load_ext tfprof_widgets``, ``%tfprof load`` and ``%%tfprof`` in a Colab-shaped kernel
(issue 39): a real ipykernel with ``google.colab`` and ``google.colab.output`` imported (as
Colab's kernel has them), driven by requests without JupyterLab's ``cellId`` (Colab sends
none), the capturing cell run twice (Colab clears a cell's outputs when it runs again). Every
view that comes out carries the viewer itself (packed), none is sent ahead of it or at a load
(those would land in another cell's frame), and nothing fails.

And the choice itself, in this process: ``TFPROF_WIDGETS_EMBED`` over the detection.
"""

import importlib.util
import queue

import pytest
from conftest import ROOT

PLAIN = "plotly.js (basic - minified) v"
PACKED = "window.__tfprofUnpacking = true"
FAKE_COLAB = """import sys, types
colab = types.ModuleType("google.colab")
output = types.ModuleType("google.colab.output")
output.enable_custom_widget_manager = lambda: None
colab.output = output
sys.modules["google.colab"] = colab
sys.modules["google.colab.output"] = output"""


def _run(client, code: str, timeout: float = 300) -> tuple[dict, list[dict]]:
    """Execute ``code`` with a request as Colab sends it (no cellId in its metadata): the
    reply and the display messages (display_data, update_display_data, errors, streams)."""
    msg_id = client.execute(code)
    outputs = []
    while True:
        try:
            msg = client.get_iopub_msg(timeout=timeout)
        except queue.Empty:
            raise AssertionError(f"no idle after {code!r}") from None
        if msg["parent_header"].get("msg_id") != msg_id:
            continue
        kind = msg["msg_type"]
        if kind == "status" and msg["content"]["execution_state"] == "idle":
            break
        if kind in ("display_data", "update_display_data", "execute_result", "error", "stream"):
            outputs.append({"type": kind, **msg["content"]})
    reply = client.get_shell_msg(timeout=timeout)
    return reply["content"], outputs


def _scripts(outputs: list[dict]) -> list[str]:
    return [
        o["data"]["application/javascript"]
        for o in outputs
        if "application/javascript" in o.get("data", {})
    ]


@pytest.fixture(scope="module")
def colab_kernel():
    from jupyter_client.manager import start_new_kernel

    km, client = start_new_kernel(kernel_name="python3", cwd=str(ROOT))
    try:
        reply, _ = _run(client, FAKE_COLAB)
        assert reply["status"] == "ok"
        yield client
    finally:
        client.stop_channels()
        km.shutdown_kernel(now=True)


def test_load_ext_and_tfprof_load_in_a_colab_kernel(colab_kernel):
    reply, out = _run(colab_kernel, "%load_ext tfprof_widgets")
    assert reply["status"] == "ok" and not [o for o in out if o["type"] == "error"], out
    path = ROOT / "sample_profiles" / "gpu_shaped"
    reply, out = _run(colab_kernel, f"%tfprof load {path}")
    assert reply["status"] == "ok", out
    scripts = _scripts(out)
    # The overview: its one script output carries the viewer, packed; nothing sent ahead.
    assert len(scripts) == 1 and PACKED in scripts[0] and PLAIN not in scripts[0], len(scripts)
    assert any('class="tfprof-static"' in o.get("data", {}).get("text/html", "") for o in out)


@pytest.mark.skipif(importlib.util.find_spec("tensorflow") is None, reason="needs TensorFlow")
def test_tfprof_cell_magic_twice_in_a_colab_kernel(colab_kernel):
    _run(colab_kernel, "%load_ext tfprof_widgets")
    cell = "%%tfprof\nimport tensorflow as tf\nfor _ in range(3): tf.reduce_sum(tf.ones((64, 64)))"
    for _ in range(2):  # Colab clears the outputs and runs the cell again: the same again
        reply, out = _run(colab_kernel, cell, timeout=600)
        assert reply["status"] == "ok", [o for o in out if o["type"] == "error"]
        status = [o for o in out if "captured" in str(o.get("data", {}).get("text/plain", ""))]
        assert status, out
        scripts = _scripts(out)
        assert len(scripts) == 1 and PACKED in scripts[0], len(scripts)


def test_the_choice_of_embedding(monkeypatch):
    import sys
    import types

    from tfprof_widgets.views.page import display, lib

    monkeypatch.delenv("TFPROF_WIDGETS_EMBED", raising=False)
    monkeypatch.delenv("KAGGLE_KERNEL_RUN_TYPE", raising=False)
    monkeypatch.delitem(sys.modules, "google.colab", raising=False)
    assert not lib.embed_each()
    once = display.viewer_js("{}", include_lib=True)
    assert PLAIN in once and PACKED not in once
    assert PLAIN not in display.viewer_js("{}", include_lib=False)
    monkeypatch.setitem(sys.modules, "google.colab", types.ModuleType("google.colab"))
    assert lib.embed_each()
    each = display.viewer_js("{}", include_lib=False)  # carries it whatever it was told
    assert PACKED in each and PLAIN not in each
    monkeypatch.setenv("TFPROF_WIDGETS_EMBED", "once")
    assert not lib.embed_each()
    monkeypatch.delitem(sys.modules, "google.colab")
    monkeypatch.setenv("KAGGLE_KERNEL_RUN_TYPE", "Interactive")
    monkeypatch.setenv("TFPROF_WIDGETS_EMBED", "")
    assert lib.embed_each()
    monkeypatch.setenv("TFPROF_WIDGETS_EMBED", "each")
    monkeypatch.delenv("KAGGLE_KERNEL_RUN_TYPE")
    assert lib.embed_each()


def test_the_packed_viewer_is_the_viewer(monkeypatch):
    import base64
    import gzip

    from tfprof_widgets.views.page import lib

    packed = lib.packed_lib()
    assert gzip.decompress(base64.b64decode(packed)).decode() == lib.viewer_lib()
    assert len(packed) < 0.5 * len(lib.viewer_lib())
    assert packed in lib.lib_unpack_js()
