"""Every process a test starts imports the tfprof_widgets of this checkout (issue 42 item 3):
an editable install points the machine's interpreter at whichever clone ran ``pip install
-e`` last, and a kernel or subprocess that imported that clone's code tested the wrong code.
``tests/under_test.py`` (run by the conftests) puts this checkout first on ``PYTHONPATH`` and
this interpreter's directory first on ``PATH``; here, each way the suite starts a process is
checked: a plain subprocess in another directory (the isolated_*.py scripts, the CLI tests),
a kernel as nbval starts it, a kernel from the ``python3`` kernelspec (JupyterLab,
nbconvert), and the ``jupyter`` and ``tfprof-widgets`` found on PATH. About 10 s (two
kernels)."""

import json
import os
import pathlib
import shutil
import subprocess
import sys

import pytest
from conftest import ROOT

import tfprof_widgets

# What the process imported: the package and its compiled walker (where built), and Python.
WHERE = (
    "import json, sys, tfprof_widgets\n"
    "try:\n"
    "    from tfprof_widgets.readers.xspace import _wire\n"
    "    wire = _wire.__file__\n"
    "except ImportError:\n"
    "    wire = None\n"
    "print(json.dumps([tfprof_widgets.__file__, wire, sys.executable]))\n"
)


def under_test(path: str | None) -> bool:
    return path is None or pathlib.Path(path).resolve().is_relative_to(ROOT)


def check(found: list) -> None:
    package, wire, _ = found
    assert under_test(package), f"imported {package}, not the checkout under test {ROOT}"
    assert under_test(wire), f"imported {wire}, not the checkout under test {ROOT}"


def test_this_process_imports_the_checkout():
    check([tfprof_widgets.__file__, None, sys.executable])


def test_a_subprocess_elsewhere_imports_the_checkout(tmp_path):
    done = subprocess.run(
        [sys.executable, "-c", WHERE], cwd=tmp_path, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr[-2000:]
    check(json.loads(done.stdout.splitlines()[-1]))


def kernel_imports(km) -> list:
    """Start ``km``'s kernel in its cwd, run WHERE there, and shut it down."""
    km.start_kernel(cwd=km.cwd_for_test)
    kc = km.client()
    try:
        kc.start_channels()
        kc.wait_for_ready(timeout=120)
        reply = kc.execute_interactive(WHERE, timeout=120, output_hook=km.output.append)
        assert reply["content"]["status"] == "ok", reply["content"]
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)
    text = "".join(m["content"].get("text", "") for m in km.output if m["msg_type"] == "stream")
    return json.loads(text.splitlines()[-1])


def test_nbvals_kernel_imports_the_checkout(tmp_path):
    """nbval --nbval-current-env: a kernel of this interpreter, in the notebook's folder."""
    from nbval.kernel import CURRENT_ENV_KERNEL_NAME, NbvalKernelspecManager

    pytest.importorskip("ipykernel")
    from jupyter_client import KernelManager

    km = KernelManager(
        kernel_name=CURRENT_ENV_KERNEL_NAME, kernel_spec_manager=NbvalKernelspecManager()
    )
    km.cwd_for_test, km.output = str(tmp_path), []
    check(kernel_imports(km))


def test_a_python3_kernelspec_kernel_imports_the_checkout(tmp_path):
    """JupyterLab's and nbconvert's kernels: the ``python3`` kernelspec, started as
    jupyter_client starts it (``python`` there is the interpreter that starts it)."""
    pytest.importorskip("ipykernel")
    from jupyter_client import KernelManager

    km = KernelManager(kernel_name="python3")
    km.cwd_for_test, km.output = str(tmp_path), []
    found = kernel_imports(km)
    check(found)
    assert os.path.samefile(found[2], sys.executable)


@pytest.mark.parametrize("script", ["jupyter", "tfprof-widgets"])
def test_scripts_on_path_are_this_interpreters(script):
    """``jupyter`` (tests/test_browser.py checks for it) and ``tfprof-widgets``
    (tests/test_docs.py runs it where found) are the ones beside this interpreter."""
    found = shutil.which(script)
    mine = pathlib.Path(sys.executable).parent / script
    if not mine.exists():
        pytest.skip(f"no {script} installed beside {sys.executable}")
    assert found is not None and os.path.samefile(found, mine), found
