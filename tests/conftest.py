import os
import pathlib
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
SAMPLES = ROOT / "sample_profiles"
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))

# Kernels started by the tests (nbval, JupyterLab) make views' images at once: the 1 s a view
# leaves its page to draw first (views/_png.py) would only lengthen the suite.
os.environ.setdefault("TFPROF_WIDGETS_IMAGE_GRACE_S", "0")

SAMPLE_NAMES = ("keras_fit", "custom_loop", "input_bound")
_KINETO_RUNS: dict = {}


def kineto_run(path: pathlib.Path):
    """The run of a shared or bundled Kineto trace, loaded once for all the PyTorch test
    modules (they only read it); skips where the trace is not here."""
    if not path.exists():
        pytest.skip(f"{path} is not here")
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
