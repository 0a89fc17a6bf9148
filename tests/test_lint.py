"""The code stays linted and formatted: ``ruff check`` and ``ruff format --check`` pass.

The rules are in pyproject.toml ([tool.ruff]); ruff is in the dev extra. Fix a failure with
``ruff check --fix .`` and ``ruff format .``.
"""

import os
import shutil
import subprocess

import pytest
from conftest import ROOT

RUFF = shutil.which("ruff")
needs_ruff = pytest.mark.skipif(
    RUFF is None and not os.environ.get("CI"), reason="ruff (dev extra) is not installed"
)


@needs_ruff
@pytest.mark.parametrize("command", [["check", "."], ["format", "--check", "."]])
def test_ruff(command):
    assert RUFF is not None, "ruff is missing: pip install -e '.[dev]'"
    done = subprocess.run([RUFF, *command], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
