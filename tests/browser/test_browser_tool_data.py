"""Every notebook-facing view renders for each kind of old capture, in a real browser with
the network off: TF 2.2 tool data alone (GPU .pb files; the 2019 Cloud TPU's DataTable
JSON), a TF 2.3-2.10 run (xplane with tool data beside it), a TF 2.0/2.1 .trace and a
PyTorch Kineto trace. Each view draws offline (plotly and the canvas trace viewer); the views
that need a trace say plainly that a run of tool data has none. Reuses test_browser's helpers."""

import os
import subprocess
import sys

import nbformat
import pytest
from test_browser import PAGE_STATE, draw_everything, offline_page, pytestmark  # noqa: F401
from tool_data_files import DATA, TOOLDATA, demo_run, tf2x_run

import tfprof_widgets as tw
from tfprof_widgets import views
from tfprof_widgets.analysis.tool_data import no_trace_note

VIEWS = (
    "overview",
    "op_stats",
    "timeline",
    "memory_timeline",
    "tf_data_graph",
    "kernel_stats",
    "input_pipeline",
)


def kinds(root):
    """Each kind of input: a name and the path that loads it."""
    return {
        "tf22_tool_data": demo_run("demo_GPU-input-bound", root),
        "tf22_compute_bound": demo_run("demo_GPU-compute-bound", root),
        "cloud_tpu_datatables": demo_run("demo_Cloud-TPU", root),
        "tf2x_xplane_and_tool_data": tf2x_run(root),
        "tf20_trace": TOOLDATA / "tf20_gpu_timeline" / "local.trace",
        "kineto": DATA / "chrome" / "timesformer_h100.json.gz",
    }


def test_every_view_of_every_kind_renders_offline(tmp_path, shots_dir, chromium):
    paths = kinds(tmp_path)
    expected_views = expected_plots = 0
    cells = ["import tfprof_widgets as tw"]
    for name, path in paths.items():
        run = tw.load(path, progress=False)
        cells.append(f"{name} = tw.load({str(path)!r}, progress=False)")
        for view in VIEWS:
            cells.append(f"tw.views.{view}({name})")
            if view == "timeline":  # the canvas trace viewer, or a note without a trace
                expected_views += not no_trace_note(run)
                continue
            expected_views += 1
            expected_plots += len(getattr(views, view)(run).figures())
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(c) for c in cells]
    nb.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    path = tmp_path / "old_captures.ipynb"
    nbformat.write(nb, path)
    for args in (
        [
            "--to",
            "notebook",
            "--execute",
            "--inplace",
            "--ExecutePreprocessor.timeout=600",
            "--ExecutePreprocessor.store_widget_state=False",
        ],
        ["--to", "html"],
    ):
        subprocess.run(
            [sys.executable, "-m", "jupyter", "nbconvert", *args, str(path)],
            check=True,
            capture_output=True,
            timeout=900,
            # The page's plots are what this test reads; the views' static PNGs (a browser
            # rendering 42 images, half of the test's time) are test_browser.py's.
            env={**os.environ, "TFPROF_WIDGETS_PNG": "0"},
        )
    executed = nbformat.read(path, as_version=4)
    errors = [o for c in executed.cells for o in c.get("outputs", []) if o.output_type == "error"]
    assert errors == []
    html = tmp_path / "old_captures.html"
    text = html.read_text()
    # The views that need a trace say so on the three runs of tool data alone (timeline,
    # tf.data, kernels and memory on each).
    assert text.count("This capture has no trace") >= 3 * 4
    assert expected_plots > 10
    browser, page = offline_page(chromium)
    page.goto(html.as_uri())
    draw_everything(page)
    state = page.evaluate(PAGE_STATE)
    page.screenshot(path=str(shots_dir / "old_captures.png"), full_page=True)
    browser.close()
    assert state["views"] == expected_views
    assert state["plots"] == expected_plots
    assert state["too_wide"] == 0


@pytest.fixture(scope="module")
def shots_dir(tmp_path_factory):
    d = tmp_path_factory.mktemp("tfprof_screens_old")
    print(f"\nscreenshots: {d}")
    return d
