"""The code under test, and nothing else, in every process the test suite starts (issue 42
item 3).

A test's kernel (nbval, JupyterLab, nbconvert) or subprocess imports ``tfprof_widgets`` as
its interpreter finds it: by an editable install of whichever clone ran ``pip install -e``
last, where the suite runs from another clone (twice that gave false failures).
:func:`use_this_checkout` runs before any test starts one (``tests/conftest.py``, and
``notebooks/conftest.py`` for ``pytest notebooks``): this checkout goes first on ``sys.path``
and ``PYTHONPATH`` (which every process started with the environment inherits, and which
comes before any installed copy), and the directory of this interpreter first on ``PATH``
(``python``, ``jupyter`` and ``tfprof-widgets`` by name are this environment's: ``.ci/run``'s
virtual environment). ``tests/capture/test_imports_under_test.py`` checks each way a test starts a
process.
"""

from __future__ import annotations

import os
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]


def _first(value: str | None, entry: str) -> str:
    """``entry`` first in an os.pathsep list, once."""
    rest = [p for p in (value or "").split(os.pathsep) if p and p != entry]
    return os.pathsep.join([entry, *rest])


def use_this_checkout() -> None:
    """This checkout first on sys.path and PYTHONPATH, this interpreter's directory first on
    PATH (not resolved: a virtual environment's python is a link to the base one)."""
    if sys.path[:1] != [str(ROOT)]:
        sys.path.insert(0, str(ROOT))
    os.environ["PYTHONPATH"] = _first(os.environ.get("PYTHONPATH"), str(ROOT))
    os.environ["PATH"] = _first(os.environ.get("PATH"), os.path.dirname(sys.executable))
