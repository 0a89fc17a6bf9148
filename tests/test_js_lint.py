"""The views' JavaScript passes ESLint: the version pinned in package.json (package-lock.json),
its recommended rules (eslint.config.mjs), no error and no warning.

``npm ci`` installs ESLint into node_modules (``.ci/run`` does). Without it the test skips
here, and fails in CI (``CI`` set), as the browser tests do without Chromium.
"""

import json
import os
import shutil
import subprocess

import pytest
from conftest import ROOT

ESLINT = ROOT / "node_modules" / ".bin" / "eslint"
STATIC = ROOT / "tfprof_widgets" / "views" / "static"
IN_CI = os.environ.get("CI", "").lower() not in ("", "0", "false", "no")


@pytest.fixture(scope="module")
def eslint() -> list[str]:
    if not ESLINT.exists() or shutil.which("node") is None:
        if IN_CI:
            pytest.fail("ESLint is not installed: run `npm ci` at the repository root")
        pytest.skip("ESLint is not installed here (`npm ci` at the repository root)")
    return [str(ESLINT), "--max-warnings", "0"]


def test_javascript_passes_eslint(eslint):
    r = subprocess.run(
        [*eslint, "--format", "json", "."],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    results = json.loads(r.stdout or "[]")
    problems = [
        f"{res['filePath']}:{m.get('line')}:{m.get('column')} {m.get('ruleId')}: {m['message']}"
        for res in results
        for m in res["messages"]
    ]
    assert r.returncode == 0 and not problems, "\n".join(problems) or r.stderr
    # Every script of the views was linted (the vendored plotly.js bundle excepted).
    ours = {p for p in STATIC.rglob("*.js") if p.name != "plotly-basic.min.js"}
    linted = {os.path.realpath(res["filePath"]) for res in results}
    assert ours and {os.path.realpath(p) for p in ours} <= linted


def test_the_rules_apply_to_the_views_scripts(eslint):
    """The configuration reaches the views' folder: an unused variable there is an error."""
    r = subprocess.run(
        [*eslint, "--stdin", "--stdin-filename", str(STATIC / "lint_probe.js")],
        cwd=ROOT,
        input="const unused = 1;\nexport const used = undefinedName;\n",
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert r.returncode == 1
    assert "no-unused-vars" in r.stdout and "no-undef" in r.stdout
