"""The layering of the package, read from the imports of every module (ast, nothing runs).

files -> readers -> Run -> analyses -> views, with schema, errors, stat_store and
stat_columns under all of them: a layer never imports one above it, and capturing and the
magic stay out of the readers, analyses and views. Function-local imports count too; only
``run.py``'s own rule is about import time (``run.view`` imports the views when first used).
"""

import ast
import pathlib
import re

import pytest
from conftest import ROOT

PACKAGE = ROOT / "tfprof_widgets"
UPPER = ("run", "loading", "report", "cli", "magic", "capturing", "scale")
# Module (or package) -> what it must never import.
FORBIDDEN = {
    "readers": ("analysis", "views", *UPPER),
    "analysis": ("readers", "views", *UPPER),
    "views": ("readers", "loading", "report", "cli", "magic", "capturing", "scale"),
    "stat_columns": ("readers", "analysis", "views", *UPPER),
    "stat_store": ("readers", "analysis", "views", "stat_columns", *UPPER),
    "scale": ("views", "report", "cli", "magic", "capturing"),
    "schema": ("readers", "analysis", "views", "stat_columns", *UPPER),
    "errors": ("readers", "analysis", "views", "stat_columns", "schema", *UPPER),
}


def module_name(path: pathlib.Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def import_statements(nodes, name: str, is_package: bool):
    """(module, names imported from it) of each import among ``nodes``, made absolute."""
    package = name if is_package else name.rpartition(".")[0]
    for node in nodes:
        if isinstance(node, ast.Import):
            for a in node.names:
                yield a.name, ()
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module
            yield target, tuple(a.name for a in node.names)


def imports(source: str, name: str, is_package: bool, top_level_only: bool = False) -> set[str]:
    """Absolute names of the modules (and from-imported names) a module's code imports."""
    tree = ast.parse(source)
    nodes = tree.body if top_level_only else ast.walk(tree)
    out = set()
    for target, names in import_statements(nodes, name, is_package):
        out.add(target)
        out.update(f"{target}.{n}" for n in names)
    return out


def layer(name: str) -> str | None:
    parts = name.split(".")
    return parts[1] if len(parts) > 1 and parts[0] == "tfprof_widgets" else None


def violations(name: str, imported: set[str]) -> list[str]:
    own = layer(name)
    banned = FORBIDDEN.get(own, ())
    return sorted(m for m in imported if layer(m) in banned)


MODULES = sorted(p for p in PACKAGE.rglob("*.py") if "proto" not in p.parts)


def test_every_layer_is_checked():
    layers = {layer(module_name(p)) for p in MODULES}
    assert set(FORBIDDEN) <= layers


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_imports_follow_the_layers(path):
    name = module_name(path)
    found = imports(path.read_text(), name, path.name == "__init__.py")
    assert violations(name, found) == [], f"{name} imports a layer above it"


def test_run_does_not_import_the_views_when_imported():
    path = PACKAGE / "run.py"
    found = imports(path.read_text(), "tfprof_widgets.run", False, top_level_only=True)
    assert not [m for m in found if layer(m) == "views"]


@pytest.mark.parametrize(
    "name,source",
    [
        ("tfprof_widgets.readers.xspace.reader", "from ...analysis.steps import step_breakdown"),
        ("tfprof_widgets.readers.xspace.reader", "def f():\n    from ...views import overview"),
        ("tfprof_widgets.analysis.steps", "import tfprof_widgets.readers.formats"),
        ("tfprof_widgets.analysis.steps", "from .. import readers"),
        ("tfprof_widgets.views.overview_view", "from ..capturing import capture"),
        ("tfprof_widgets.stat_columns", "from .analysis import grouping"),
        ("tfprof_widgets.schema", "from . import stat_columns"),
    ],
)
def test_the_check_catches_an_upward_import(name, source):
    """The checker itself: each of these imports breaks the layering and is found."""
    assert violations(name, imports(source, name, False))


# -- the shape of the code: no cycle, no hidden submodule, short functions, framework rules --
def import_edges(source: str, name: str, is_package: bool, modules) -> set[str]:
    """The package's modules that a module's code imports: ``from pkg import mod`` is an edge
    to ``pkg.mod`` where that is a module (importing it runs pkg only as its ancestor), else
    to ``pkg``. Imports under ``if TYPE_CHECKING:`` are left out: they never run."""
    tree = ast.parse(source)
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            node.body = [ast.Pass()]
    out = set()
    for target, names in import_statements(ast.walk(tree), name, is_package):
        subs = [f"{target}.{n}" for n in names]
        out.update([s if s in modules else target for s in subs] or [target])
    return {m for m in out if m in modules and m != name and not name.startswith(m + ".")}


def import_graph() -> dict[str, set[str]]:
    """Module -> the package's modules it imports (function-local imports included)."""
    names = {module_name(p): p for p in MODULES}
    return {
        name: import_edges(path.read_text(), name, path.name == "__init__.py", names)
        for name, path in names.items()
    }


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm)."""
    index, low, stack, on, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def test_no_import_cycle():
    assert cycles(import_graph()) == []


def test_the_cycle_check_finds_a_cycle():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert cycles(graph) == [["a", "b", "c"]]


PACKAGES = sorted(p.parent for p in PACKAGE.rglob("__init__.py") if "proto" not in p.parts)


def hidden_submodules(package: str, attributes: dict, submodules: list[str]) -> list[str]:
    """Submodules of ``package`` whose name the package binds to something else (a function
    ``convert`` hiding ``convert.py``: ``pkg.convert`` then depends on import order)."""
    return sorted(
        f"{package}.{s}"
        for s in submodules
        if s in attributes
        and not (
            isinstance(attributes[s], type(ast)) and attributes[s].__name__ == f"{package}.{s}"
        )
    )


@pytest.mark.parametrize("path", PACKAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_submodule_is_hidden_by_an_attribute(path):
    import importlib

    package = module_name(path / "__init__.py")
    submodules = [
        p.stem if p.is_file() else p.name
        for p in path.iterdir()
        if (p.suffix == ".py" and p.stem != "__init__") or (p / "__init__.py").exists()
    ]
    module = importlib.import_module(package)
    assert hidden_submodules(package, vars(module), submodules) == []


def test_the_hidden_submodule_check_finds_one():
    def convert():
        pass

    assert hidden_submodules("pkg", {"convert": convert}, ["convert", "pod"]) == ["pkg.convert"]
    assert hidden_submodules("pkg", {}, ["convert"]) == []


MAX_FUNCTION_LINES = 80


def long_functions(source: str, limit: int = MAX_FUNCTION_LINES) -> list[tuple[str, int]]:
    """(name, lines) of every function or method longer than ``limit`` lines."""
    return [
        (node.name, node.end_lineno - node.lineno + 1)
        for node in ast.walk(ast.parse(source))
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
        and node.end_lineno - node.lineno + 1 > limit
    ]


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_no_function_is_longer_than_80_lines(path):
    assert long_functions(path.read_text()) == []


def test_the_length_check_finds_a_long_function():
    body = "\n".join(f"    x{i} = {i}" for i in range(MAX_FUNCTION_LINES))
    assert long_functions(f"def f():\n{body}\n") == [("f", MAX_FUNCTION_LINES + 1)]
    assert long_functions("def g():\n    return 1\n") == []


# Framework rules live in analysis/frameworks/; the other analyses only ask them.
FRAMEWORKS_DIR = PACKAGE / "analysis" / "frameworks"
NEUTRAL = sorted(p for p in (PACKAGE / "analysis").rglob("*.py") if FRAMEWORKS_DIR not in p.parents)
FRAMEWORK_NAME = re.compile(
    r"tensorflow|TensorFlow|\btf\.|jax|JAX|XLA|Xla|torch|PyTorch|Kineto|kineto|Keras|keras"
)


def framework_vocabulary() -> tuple[str, ...]:
    from tfprof_widgets.analysis.frameworks import FRAMEWORKS

    return tuple(word for f in FRAMEWORKS for word in f.vocabulary)


def framework_names(source: str, vocabulary: tuple[str, ...]) -> list[str]:
    """Every identifier or string constant (docstrings and comments aside: they may say whose
    rule is followed) that names a framework or uses a word of a framework's vocabulary."""
    tree = ast.parse(source)
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            if id(node) in docstrings:
                continue
            text = node.value
        elif isinstance(node, ast.Name):
            text = node.id
        elif isinstance(node, ast.Attribute):
            text = node.attr
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            text = node.name
        elif isinstance(node, ast.alias):
            text = node.asname or node.name
        else:
            continue
        if FRAMEWORK_NAME.search(text) or any(w in text for w in vocabulary):
            found.append(text)
    return sorted(set(found))


@pytest.mark.parametrize("path", NEUTRAL, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_no_neutral_analysis_names_a_framework(path):
    assert framework_names(path.read_text(), framework_vocabulary()) == []


def test_every_framework_has_a_vocabulary_and_a_title():
    from tfprof_widgets.analysis.frameworks import FRAMEWORKS

    for f in FRAMEWORKS:
        assert f.vocabulary and f.title and f.name


def test_the_framework_check_finds_a_name():
    vocabulary = ("ProfilerStep#",)
    assert framework_names('NEXT = "use the tf.data API"', vocabulary) == ["use the tf.data API"]
    assert framework_names('x = name.startswith("ProfilerStep#")', vocabulary)
    assert framework_names("def is_xla_op(): pass", vocabulary) == []  # lower case: a word
    assert framework_names('"""Docstrings may say TensorFlow."""', vocabulary) == []
    assert framework_names("from .frameworks import framework_of", vocabulary) == []


def test_the_tests_top_level_holds_at_most_40_files():
    """The tests sit in folders by layer and framework (issue 38 item 6), their shared helpers
    in tests/support: tests/ itself keeps the conftest and the checks of the whole repository."""
    top = sorted(p.name for p in (ROOT / "tests").iterdir() if p.is_file())
    assert len(top) <= 40, top
