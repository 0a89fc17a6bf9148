"""The views' JavaScript modules and the scripts views/page/bundle.py joins them into: every
module has its header and is shipped, each script parses (as a classic script or an ES
module, by Node where it is installed), and the bundler refuses what it does not handle."""

import fnmatch
import json
import re
import shutil
import subprocess

import pytest
from conftest import ROOT

from tfprof_widgets.views.page import bundle as _bundle

STATIC = ROOT / "tfprof_widgets" / "views" / "static"
ENTRIES = {"views": "main", "trace": "index"}


def module_files() -> list:
    return sorted(p for folder in ENTRIES for p in (STATIC / folder).glob("*.js"))


def test_every_module_is_in_its_script_and_starts_with_its_header():
    files = module_files()
    assert len(files) >= 15
    used = {(f, m[0]) for f, e in ENTRIES.items() for m in _bundle.modules(f, e)}
    for p in files:
        assert (p.parent.name, p.stem) in used, f"{p.name} is in no script"
        head = []
        for line in p.read_text(encoding="utf-8").splitlines():
            if not line.startswith("//"):
                break
            head.append(line)
        text = " ".join(head)
        # What it does, and how Python's payload reaches it (or that none does).
        assert len(head) >= 2 and ("Python" in text or ".py" in text), p.name


def test_the_modules_are_package_data():
    line = re.search(
        r'^"tfprof_widgets\.views" = (\[.*\])$', (ROOT / "pyproject.toml").read_text(), re.M
    )
    patterns = json.loads(line.group(1))
    for p in module_files():
        rel = p.relative_to(ROOT / "tfprof_widgets" / "views").as_posix()
        assert any(fnmatch.fnmatch(rel, pat) for pat in patterns), rel


@pytest.mark.skipif(shutil.which("node") is None, reason="needs Node to parse the scripts")
@pytest.mark.parametrize(
    "script, suffix",
    [(_bundle.views_script, ".js"), (_bundle.trace_script, ".js"), (_bundle.trace_esm, ".mjs")],
    ids=["views_script", "trace_script", "trace_esm"],
)
def test_each_script_parses(tmp_path, script, suffix):
    path = tmp_path / f"bundle{suffix}"
    path.write_text(script(), encoding="utf-8")
    r = subprocess.run(["node", "--check", str(path)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr


def test_the_esm_exports_what_anywidget_and_the_pages_use():
    esm = _bundle.trace_esm()
    assert "export default __tfm_index.default;" in esm
    assert "export const { renderOffline, mountOutput } = __tfm_index;" in esm
    classic = _bundle.trace_script()
    code = [ln for ln in classic.splitlines() if not ln.lstrip().startswith("//")]
    assert not [ln for ln in code if ln.startswith(("export ", "import "))]  # a classic script
    assert "window.__tfpvMountOutput = __tfm_index.mountOutput;" in classic


@pytest.mark.parametrize(
    "source, error",
    [
        ('import x from "./b.js";', "write imports as"),
        ('import { a } from "../b.js";', "write imports as"),
        ("export * from './b.js';", "export a declaration"),
        ('import { nothere } from "./b.js";', "imports ['nothere'] from b"),
        ('import { a } from "./missing.js";', "no module"),
        ('import { c } from "./c.js";', "import each other"),
    ],
)
def test_the_bundler_refuses_what_it_does_not_handle(monkeypatch, source, error):
    files = {
        "a": source + "\nexport const a = 1;\n",
        "b": "export const a = 2;\n",
        "c": 'import { c2 } from "./a.js";\nexport const c = 3;\n',
    }

    def fake(folder, name):
        if name not in files:
            raise _bundle.BundleError(f"no module static/{folder}/{name}.js")
        return files[name]

    monkeypatch.setattr(_bundle, "_source", fake)
    _bundle.modules.cache_clear()
    try:
        with pytest.raises(
            _bundle.BundleError, match=error.replace("[", r"\[").replace("]", r"\]")
        ):
            _bundle.modules("t", "a")
    finally:
        _bundle.modules.cache_clear()
