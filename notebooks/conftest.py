"""nbval's kernels import this checkout's tfprof_widgets (tests/support/under_test.py), also where
only the notebooks are collected (``pytest notebooks``)."""

import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "tests" / "support"))
from under_test import use_this_checkout  # noqa: E402

use_this_checkout()
