"""Every code block of README.md and docs/*.md runs, on the captures that ship with the repo.

Each page runs in a fresh temporary directory holding links to the repository's
``sample_profiles/``, ``tests/data/`` and ``README.md``, so the blocks use the paths a reader
uses from the repository root and whatever they write (reports, datasets, captures) goes
nowhere else. A block's type is the first word of its fence's info string:

- ``python``: the page's python blocks run in order in one namespace; each top-level
  expression is evaluated and its ``repr`` taken, as a notebook or a REPL would show it.
- ``ipython``: run through IPython's ``InteractiveShell`` (magics, ``%%tfprof``), sharing
  the page's namespace. The one ``%%tfprof`` capture needs TensorFlow; without it the
  ipython blocks are skipped (the capture tests say the same).
- ``bash``: run by bash in the page's directory, with this checkout first on PYTHONPATH;
  a block of plain ``tfprof-widgets ...`` commands runs them in this process through
  ``tfprof_widgets.cli.main``, the console script's entry point (an interpreter start saved
  per command), exit code 0 expected. The README's two set-up commands (``.ci/run`` runs
  the second) and a block whose every command is ``pip install ...`` (the extras) are not
  run: they need the network and change the environment.
- ``text``: a layout or an output, not a command: nothing runs.
- a second word ``no-run`` (```` ```python no-run ````): not run, because it needs what a
  test cannot have (a cluster, object storage, a model of the reader's own); its first line
  is a comment that says why, and python ones must still parse.

A block of any other type, or none, fails the test, so every block is accounted for. A
failure names the page, the block's number and its first line.
"""

from __future__ import annotations

import ast
import contextlib
import importlib.util
import io
import json
import os
import pathlib
import re
import shlex
import shutil
import subprocess
import sys

import pytest
from conftest import ROOT

import tfprof_widgets as tw
from tfprof_widgets.catalog import ANALYSES

PAGES = ["README.md"] + sorted(p.relative_to(ROOT).as_posix() for p in (ROOT / "docs").glob("*.md"))
FENCE = re.compile(r"^```([^\n`]*)\n(.*?)^```[ \t]*$", re.M | re.S)
SETUP_COMMANDS = (
    "pip install -e . && tfprof-widgets report sample_profiles/input_bound -o "
    "input_bound_report.html --force",
    'python3 -m venv .venv && .venv/bin/pip install -e ".[dev]" && .venv/bin/python -m pytest',
)
HAS_TF = importlib.util.find_spec("tensorflow") is not None


def blocks(page: str) -> list[tuple[int, str, list[str], str]]:
    """(line number, type, flags, source) of each fenced block of a page."""
    text = (ROOT / page).read_text(encoding="utf-8")
    out = []
    for m in FENCE.finditer(text):
        info = m.group(1).split()
        line = text.count("\n", 0, m.start()) + 1
        out.append((line, info[0] if info else "", info[1:], m.group(2)))
    return out


def where(page: str, n: int, line: int, src: str) -> str:
    first = src.strip().splitlines()[0] if src.strip() else ""
    return f"{page}, block {n} (line {line}: {first!r})"


def run_python(src: str, ns: dict, label: str, line: int) -> None:
    """Exec a block statement by statement; each expression statement's value is repr'd.
    A failure names the statement and its line in the page."""
    tree = ast.parse(src, filename=label)
    for node in tree.body:
        try:
            if isinstance(node, ast.Expr):
                value = eval(compile(ast.Expression(node.value), label, "eval"), ns)
                repr(value)
            else:
                exec(compile(ast.Module([node], type_ignores=[]), label, "exec"), ns)
        except Exception as e:
            stmt = ast.get_source_segment(src, node)
            raise AssertionError(
                f"{label}, page line {line + node.lineno}: {stmt!r} failed: {type(e).__name__}: {e}"
            ) from e


def run_ipython(src: str, ns: dict, label: str) -> None:
    from IPython.core.interactiveshell import InteractiveShell

    shell = InteractiveShell.instance()
    shell.user_ns.update(ns)
    result = shell.run_cell(src, store_history=True)
    ns.update({k: v for k, v in shell.user_ns.items() if not k.startswith("_i")})
    error = result.error_before_exec or result.error_in_exec
    if error is not None:
        raise AssertionError(f"{label} failed: {type(error).__name__}: {error}") from error


def cli_commands(src: str) -> list[list[str]] | None:
    """The argument lists of a block made only of plain ``tfprof-widgets`` commands, else None."""
    lines = [ln.strip() for ln in src.splitlines() if ln.strip() and not ln.strip().startswith("#")]
    words = [shlex.split(ln, comments=True) for ln in lines]
    plain = all(w and w[0] == "tfprof-widgets" for w in words)
    shell = any(set(ln.split("#")[0]) & set(";&|<>`$") for ln in lines)
    return [w[1:] for w in words] if plain and not shell else None


def run_cli(commands: list[list[str]], label: str) -> None:
    from tfprof_widgets.cli import main

    for argv in commands:
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            rc = main(argv)
        assert rc == 0, f"{label}: tfprof-widgets {' '.join(argv)} exited {rc}: {err.getvalue()}"


def run_bash(src: str, cwd: pathlib.Path, label: str) -> None:
    env = dict(
        os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])
    )
    if shutil.which("tfprof-widgets") is None:  # the package's script is not installed here
        src = re.sub(r"\btfprof-widgets\b", f"{sys.executable} -m tfprof_widgets", src)
    done = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", src],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, f"{label} exited {done.returncode}:\n{done.stdout}\n{done.stderr}"


def is_install(src: str) -> bool:
    if src.strip() in SETUP_COMMANDS:
        return True
    lines = [ln.strip() for ln in src.splitlines() if ln.strip() and not ln.strip().startswith("#")]
    return bool(lines) and all(ln.startswith("pip install") for ln in lines)


@pytest.fixture
def page_dir(tmp_path, monkeypatch):
    """A fresh working directory that looks like the repository root to the examples."""
    (tmp_path / "sample_profiles").symlink_to(ROOT / "sample_profiles", target_is_directory=True)
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "data").symlink_to(ROOT / "tests" / "data", target_is_directory=True)
    (tmp_path / "README.md").symlink_to(ROOT / "README.md")
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.mark.parametrize("page", PAGES)
def test_every_block_of_the_page_runs(page, page_dir):
    found = blocks(page)
    ns: dict = {"__name__": "__docs__"}
    for n, (line, kind, flags, src) in enumerate(found, 1):
        label = where(page, n, line, src)
        if "no-run" in flags:
            assert src.lstrip().startswith("# Not run"), f"{label}: say why it is not run"
            if kind == "python":
                ast.parse(src, filename=label)
            continue
        if kind == "python":
            run_python(src, ns, label, line)
        elif kind == "ipython":
            if not HAS_TF and "%%tfprof" in src:
                pytest.skip(f"{label}: capturing needs TensorFlow")
            run_ipython(src, ns, label)
        elif kind == "bash":
            if is_install(src):
                continue
            commands = cli_commands(src)
            if commands is not None:
                run_cli(commands, label)
            else:
                run_bash(src, page_dir, label)
        elif kind != "text":
            raise AssertionError(
                f"{label}: a block of type {kind!r}: give it python, ipython, "
                "bash or text (see this test's docstring)"
            )


def test_the_readme_is_a_front_page():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 150
    bash = [src.strip() for _, kind, _, src in blocks("README.md") if kind == "bash"]
    assert bash[:2] == list(SETUP_COMMANDS), "the two set-up commands stay byte-identical"
    # Issue 42 item 9: a JAX and a PyTorch user see their captures work first, three lines
    # each on a bundled capture; then the TensorFlow tour.
    jax, torch, tour = [src for _, kind, _, src in blocks("README.md") if kind == "python"]
    first_screen = text[: text.index("## Set up")]
    for src, words in ((jax, ("JAX", "jax.profiler")), (torch, ("PyTorch", "torch.profiler"))):
        assert src in first_screen and all(w in first_screen for w in words)
        lines = src.strip().splitlines()
        assert len(lines) == 3 and lines[0] == "import tfprof_widgets as tw", src
        assert "tw.load(" in lines[1] and lines[2].startswith("tw.views."), src
    for src, framework in ((jax, "xla"), (torch, "pytorch")):
        path = re.search(r'tw\.load\("([^"]+)"\)', src).group(1)
        assert str(tw.load(ROOT / path).framework) == framework, path
    assert len(tour.splitlines()) <= 20
    assert "logs/" not in tour, "the tour runs on the bundled samples"
    for page in re.findall(r"\]\((docs/[^)#]+)", text):
        assert (ROOT / page).exists(), page


def test_ci_runs_the_readmes_test_command():
    """``.ci/run`` (CI's entry point) ends by running the README's test command as it is
    written there: a virtual environment of the checkout's own (issue 42 item 3)."""
    lines = (ROOT / ".ci" / "run").read_text(encoding="utf-8").strip().splitlines()
    assert lines[-1] == SETUP_COMMANDS[1]
    commands = [ln for ln in lines[:-1] if not ln.lstrip().startswith("#")]
    assert not any("pip install" in ln for ln in commands), "nothing installed machine-wide"
    assert ".venv/" in (ROOT / ".gitignore").read_text(encoding="utf-8").splitlines()


def test_no_magic_line_carries_a_comment():
    """IPython reads everything after ``%%tfprof`` as arguments: a comment there breaks a
    copied cell."""
    for page in PAGES:
        for *_, src in blocks(page):
            for ln in src.splitlines():
                if ln.lstrip().startswith("%"):
                    assert "#" not in ln, f"{page}: {ln!r}"


def _functions_claim() -> list[str]:
    """The analyses docs/analyses.md says have no function in ``tfprof_widgets``."""
    text = (ROOT / "docs" / "analyses.md").read_text(encoding="utf-8")
    text = " ".join(text.split("## Functions of `tfprof_widgets`")[1].split("\n## ")[0].split())
    none = re.search(r"The analyses (.*?) have no function in `tfprof_widgets`", text)
    assert none, "docs/analyses.md no longer states which analyses have a function"
    return re.findall(r"`(\w+)`", none.group(1))


def test_what_the_docs_say_of_tw_functions_is_true():
    none = _functions_claim()
    runs = {
        "tf1": tw.load(ROOT / "sample_profiles" / "tf1_graph"),
        "tf2": tw.load(ROOT / "sample_profiles" / "input_bound"),
    }
    for name in none:
        assert not hasattr(tw, name), f"tw.{name} exists: docs/analyses.md says it does not"
        getattr(runs["tf1" if name.startswith(("tfprof", "total_")) else "tf2"], name)
    assert not hasattr(tw, "step_breakdown")  # nor under the name it had (run.steps)
    # Every analysis of a run is in the list.
    assert sorted(none) == sorted(a.name for a in ANALYSES)


def _slug(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def test_every_link_between_pages_reaches_its_page_and_heading():
    for page in PAGES:
        text = (ROOT / page).read_text(encoding="utf-8")
        for target, anchor in re.findall(r"\]\(([\w./-]+\.md)(?:#([\w-]+))?\)", text):
            path = (ROOT / page).parent / target
            assert path.exists(), f"{page}: link to {target}"
            if anchor:
                headings = re.findall(r"^#+ (.+)$", path.read_text(encoding="utf-8"), re.M)
                assert anchor in {_slug(h) for h in headings}, f"{page}: {target}#{anchor}"


def test_notebooks_remove_their_temporary_folders():
    """Issue 29 item 16: nbval stops each notebook's kernel at once (no exit handlers run), so
    a TemporaryDirectory "removed with the kernel" stayed in /tmp after every suite. A notebook
    that makes one removes it in its last code cell."""
    made = 0
    for path in sorted((ROOT / "notebooks").glob("*.ipynb")):
        nb = json.loads(path.read_text(encoding="utf-8"))
        code = ["".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "code"]
        names = re.findall(r"^(\w+) = tempfile\.TemporaryDirectory\(", "\n".join(code), re.M)
        made += len(names)
        for name in names:
            assert f"{name}.cleanup()" in code[-1], (path.name, name)
    assert made >= 4


# A path in backticks under one of these folders names a file or folder of this repository.
REPO_PATH = re.compile(r"`((?:tfprof_widgets|tests|benchmarks|scripts)/[^`\s]*)`")


def named_paths(text: str) -> list[str]:
    """The repository paths a page names in backticks, a test id's ``::name`` left out; a
    pattern (``frameworks/<name>/``, ``make_*.py``) is no path and is skipped."""
    paths = (m.split("::")[0].rstrip("/.,") for m in REPO_PATH.findall(text))
    return [p for p in paths if not re.search(r"[<>*{}]", p)]


def test_every_path_a_page_names_exists():
    """Issue 38: the architecture page named modules that had moved or gone; every
    ``tfprof_widgets/...``, ``tests/...``, ``benchmarks/...`` and ``scripts/...`` path in
    backticks on the README and the docs pages is one of the repository."""
    missing = [
        f"{page}: {path}"
        for page in PAGES
        for path in named_paths((ROOT / page).read_text(encoding="utf-8"))
        if not (ROOT / path).exists()
    ]
    assert missing == []


def test_the_path_check_finds_a_stale_path():
    text = "see `tests/test_xla_roofline.py` and `tests/xla/test_xla_roofline.py::test_x`"
    paths = named_paths(text + ", `tfprof_widgets/frameworks/<name>/` and `scripts/make_*.py`")
    assert paths == ["tests/test_xla_roofline.py", "tests/xla/test_xla_roofline.py"]
    assert [p for p in paths if not (ROOT / p).exists()] == ["tests/test_xla_roofline.py"]


def test_the_architecture_page_names_every_module():
    """Issue 38: docs/architecture.md lacked ``gpu_time.py``. Every module and C source of the
    package (the generated ``*_pb2.py`` and the ``__init__.py`` files aside) is named on it by
    its file name, in backticks."""
    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    named = set(re.findall(r"`([\w.]+\.(?:py|c))`", text))
    package = ROOT / "tfprof_widgets"
    modules = [
        p.relative_to(package).as_posix()
        for p in sorted([*package.rglob("*.py"), *package.rglob("*.c")])
        if not p.name.endswith("_pb2.py") and p.name != "__init__.py"
    ]
    assert len(modules) > 100
    assert [m for m in modules if m.rpartition("/")[2] not in named] == []
