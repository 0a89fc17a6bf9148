import dataclasses
import json
import os
import pathlib
import shutil
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
SAMPLES = ROOT / "sample_profiles"
TESTS = pathlib.Path(__file__).resolve().parent
# The test modules sit in folders by layer and framework (tests/readers, tests/xla, ...), the
# helpers they share in tests/support; every test imports them by their plain names (``import
# xspace_builder``, ``from test_browser import ARGS``), from any folder, in any order and in
# every xdist worker: so tests/, tests/support and each folder of tests go on sys.path here
# (pytest's rootdir-relative "prepend" import would add a folder only once one of its modules
# is collected). The module names are unique across the folders.
_FOLDERS = sorted(p for p in TESTS.iterdir() if p.is_dir() and any(p.glob("test_*.py")))
for _folder in [TESTS, *_FOLDERS, TESTS / "support"]:
    if str(_folder) not in sys.path:
        sys.path.insert(0, str(_folder))
# Every kernel and subprocess of a test imports this checkout (tests/support/under_test.py).
from under_test import use_this_checkout  # noqa: E402
from xdist_groups import longest_first, make_scheduler  # noqa: E402

use_this_checkout()


def pytest_collection_modifyitems(config, items):
    """Under pytest-xdist, the longest files first (tests/support/xdist_groups.py)."""
    longest_first(config, items)


@pytest.hookimpl(optionalhook=True)  # a hook of pytest-xdist, where it is installed
def pytest_xdist_make_scheduler(config, log):
    """One work unit per file, the JupyterLab tests' files in one."""
    return make_scheduler(config, log)


# Kernels started by the tests (nbval, JupyterLab) make views' images at once: the 1 s a view
# leaves its page to draw first (views/_png.py) would only lengthen the suite.
os.environ.setdefault("TFPROF_WIDGETS_IMAGE_GRACE_S", "0")

SAMPLE_NAMES = ("keras_fit", "custom_loop", "input_bound")
_KINETO_RUNS: dict = {}


def kineto_run(path: pathlib.Path):
    """The run of a bundled Kineto trace, loaded once for all the PyTorch test modules (they
    only read it). A missing trace fails: the tests read only files of this checkout."""
    if path not in _KINETO_RUNS:
        import tfprof_widgets as tw

        _KINETO_RUNS[path] = tw.load(path)
    return _KINETO_RUNS[path]


def sample_files(name: str) -> list[pathlib.Path]:
    return sorted((SAMPLES / name).rglob("*.xplane.pb"))


@pytest.fixture(params=SAMPLE_NAMES)
def sample(request) -> pathlib.Path:
    """A bundled real capture's logdir."""
    return SAMPLES / request.param


def tree_state(root: os.PathLike) -> dict[str, tuple[int, float]]:
    """Every file under root with its size and mtime, to prove that loading writes nothing."""
    out = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for n in filenames + dirnames:
            p = os.path.join(dirpath, n)
            st = os.lstat(p)
            out[p] = (st.st_size, st.st_mtime_ns)
    return out


@pytest.fixture(params=["c_walker", "protobuf_walk"])
def walker(request, monkeypatch):
    """Run a test with the compiled wire walker and with the pure-protobuf fallback."""
    from tfprof_widgets.readers.xspace import reader as xspace

    if request.param == "c_walker":
        if xspace._wire is None:
            pytest.skip("the C wire walker is not built here")
    else:
        monkeypatch.setattr(xspace, "_wire", None)
    return request.param


# -- one JupyterLab and one Chromium for the browser tests ----------------------------------
# Starting JupyterLab takes tens of seconds on a busy CI machine and Chromium a few; the
# browser test modules share one of each. Each test keeps its own folder (its tmp_path, under
# the server's root), its own browser context, and gets a Lab with no kernel of an earlier test
# running and no setting an earlier test changed (the theme), as a fresh server would be.
_CHROMIUM: dict = {}  # "playwright": the started sync Playwright, "browser": its Chromium
# The fixtures that hold the shared Chromium: a test needing neither gets none running.
CHROMIUM_FIXTURES = ("chromium", "module_chromium")


def shared_chromium():
    """The session's Chromium (Debian's, via Playwright's sync API), started where none runs
    (or where the last one died: a crash fails its test, not every test after it)."""
    if "browser" in _CHROMIUM and not _CHROMIUM["browser"].is_connected():
        stop_shared_chromium()
    if "browser" not in _CHROMIUM:
        from playwright.sync_api import sync_playwright
        from test_browser import ARGS, CHROMIUM

        _CHROMIUM["playwright"] = sync_playwright().start()
        _CHROMIUM["browser"] = _CHROMIUM["playwright"].chromium.launch(
            executable_path=CHROMIUM, args=ARGS
        )
    return _CHROMIUM["browser"]


def stop_shared_chromium() -> None:
    """Close the shared Chromium and stop its Playwright: a started sync Playwright blocks
    another one in the same thread, and tests that start their own (tests/xla/test_xla_views.py,
    benchmarks' helpers) must be able to."""
    browser, playwright = _CHROMIUM.pop("browser", None), _CHROMIUM.pop("playwright", None)
    if browser is not None and browser.is_connected():
        browser.close()
    if playwright is not None:
        playwright.stop()


def _close_contexts(browser) -> None:
    """Close the pages a test left open (a failed assertion before its browser.close())."""
    for context in list(browser.contexts):
        context.close()


@pytest.fixture
def chromium():
    """The shared Chromium for one test: pass it where a Playwright instance went
    (test_browser.offline_page, open_lab_page, lab_page); each page opens in a browser context
    of its own, and the contexts the test leaves open are closed after it."""
    browser = shared_chromium()
    yield browser
    _close_contexts(browser)


@pytest.fixture(scope="module")
def module_chromium():
    """The shared Chromium for a module-scoped page (tests/browser/test_browser_trace.py)."""
    browser = shared_chromium()
    yield browser
    _close_contexts(browser)


@pytest.fixture(scope="module", autouse=True)
def _no_shared_chromium_in_other_modules(request):
    """Stop the shared Chromium before a module none of whose tests uses it (its own
    module-scoped fixtures may start a sync Playwright)."""
    items = [i for i in request.session.items if getattr(i, "module", None) is request.module]
    if not any(n in i.fixturenames for i in items for n in CHROMIUM_FIXTURES):
        stop_shared_chromium()


@pytest.fixture(scope="session", autouse=True)
def _stop_shared_chromium_at_the_end():
    yield
    stop_shared_chromium()


@pytest.fixture(autouse=True)
def _no_shared_chromium_in_other_tests(request):
    """Stop the shared Chromium before a test that does not use it (it may start its own)."""
    if not any(n in request.fixturenames for n in CHROMIUM_FIXTURES):
        stop_shared_chromium()


@dataclasses.dataclass
class SharedLab:
    """The session's JupyterLab: its port and the folder it serves (pytest's basetemp, so
    every test's tmp_path is under it)."""

    port: int
    root: pathlib.Path

    def notebook(self, path: pathlib.Path) -> str:
        """The path JupyterLab knows a notebook by (lab/tree/<this>)."""
        return pathlib.Path(path).resolve().relative_to(self.root).as_posix()

    def api(self, method: str, path: str):
        """A request to the server's REST API (answers JSON or nothing); the XSRF check wants a
        cookie and a header that agree."""
        import urllib.request

        req = urllib.request.Request(
            f"http://127.0.0.1:{self.port}/{path}",
            method=method,
            headers={"Cookie": "_xsrf=tfprof", "X-XSRFToken": "tfprof"},
        )
        with urllib.request.urlopen(req, timeout=60) as r:
            body = r.read()
        return json.loads(body) if body else None

    def reset(self) -> None:
        """Shut down every kernel (a notebook's kernel outlives its closed page) and forget
        the user settings and workspaces the last test left."""
        for session in self.api("GET", "api/sessions"):
            self.api("DELETE", f"api/sessions/{session['id']}")
        for kernel in self.api("GET", "api/kernels"):
            self.api("DELETE", f"api/kernels/{kernel['id']}")
        for sub in ("user-settings", "workspaces"):
            shutil.rmtree(self.root / ".jupyter_config" / "lab" / sub, ignore_errors=True)


@pytest.fixture(scope="session")
def lab_session(tmp_path_factory):
    """The session's JupyterLab, started on first use. Tests take ``jupyterlab``; a
    module-scoped fixture takes this and calls reset() when it is done."""
    from test_browser import lab_server

    root = tmp_path_factory.getbasetemp().resolve()
    with lab_server(root) as port:
        yield SharedLab(port, root)


@pytest.fixture
def jupyterlab(lab_session, tmp_path):
    """The session's JupyterLab (127.0.0.1 only, stopped at the session's end) for one test:
    its notebooks go in its tmp_path; its kernels are shut down when it ends."""
    yield lab_session
    lab_session.reset()


@pytest.fixture(scope="session")
def report_of(tmp_path_factory):
    """The HTML report (``tfprof-widgets report``) of a capture, written once in the session
    for the browser tests that open it (they only read it)."""
    reports: dict = {}

    def report(capture: pathlib.Path) -> pathlib.Path:
        if capture not in reports:
            from tfprof_widgets import cli

            out = tmp_path_factory.mktemp("report") / "report.html"
            assert cli.main(["report", str(capture), "-o", str(out), "--quiet"]) == 0
            reports[capture] = out
        return reports[capture]

    return report
