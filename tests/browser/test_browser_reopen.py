"""A saved notebook reopened with a new kernel (no widget state saved, JupyterLab's default)
shows each trace viewer once, drawn offline, and logs no error: JupyterLab's widget manager
reports the dead live widget as "widget model not found", which the offline copy answers
(issue 29 item 10: that was logged once per viewer). JupyterLab 4.6 in headless Chromium,
network blocked; about 40 s; skipped without Chromium.
"""

import os

import pytest
import trace_viewer_lab as lab
from conftest import ROOT
from test_browser import _AVAILABLE, lab_page

SAMPLE = ROOT / "sample_profiles" / "gpu_shaped"

pytestmark = pytest.mark.skipif(
    not _AVAILABLE and os.environ.get("CI") != "true",
    reason="needs /usr/bin/chromium, playwright and jupyter",
)


def test_a_reopened_notebook_falls_back_to_the_offline_copy_silently(
    tmp_path, jupyterlab, chromium
):
    lab.write_notebook(
        tmp_path / "saved.ipynb",
        [
            f"import tfprof_widgets as tw\nrun = tw.load({str(SAMPLE)!r})",
            "tw.views.timeline(run)",
            "tw.views.timeline(run, height=300)",
        ],
    )
    notebook = jupyterlab.notebook(tmp_path / "saved.ipynb")
    browser, page = lab_page(chromium, jupyterlab.port, notebook)
    lab.run_all_and_time(page, n_viewers=2)
    lab.save_and_shut_down(page)
    browser.close()
    browser, page, messages = lab.reopen_collecting_console(chromium, jupyterlab.port, notebook, 2)
    shown = page.evaluate(
        "() => [...document.querySelectorAll('.tfpv')].filter(e => e.offsetParent).length"
    )
    offline = page.evaluate("() => window.__tfprofViewers.map(v => v.source.live)")
    browser.close()
    assert offline == [False, False]
    assert shown == 2  # one viewer per cell: the stale widget outputs are hidden
    errors = [m for m in messages if m[0] in ("error", "pageerror")]
    assert not errors, errors
