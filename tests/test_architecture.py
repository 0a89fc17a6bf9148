"""The layering of the package, read from the imports of every module (ast, nothing runs).

files -> readers -> Run -> analyses -> views, with schema, errors, stat_store and
stat_columns under all of them: a layer never imports one above it, and capturing and the
magic stay out of the readers, analyses and views. Function-local imports count too; only
``run.py``'s own rule is about import time (``run.view`` imports the views when first used).
"""

import ast
import importlib
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


MAX_MODULE_LINES = 800


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_no_module_is_longer_than_800_lines(path):
    """A module holds one job (the generated protobuf modules are left out with ``proto/``)."""
    assert len(path.read_text().splitlines()) <= MAX_MODULE_LINES


def test_the_module_check_covers_every_module_but_the_protos():
    assert {p for p in PACKAGE.rglob("*.py") if p not in MODULES} == set(
        (PACKAGE / "proto").rglob("*.py")
    )
    assert PACKAGE / "schema.py" in MODULES and PACKAGE / "frameworks/xla/cost.py" in MODULES


def test_the_length_check_finds_a_long_function():
    body = "\n".join(f"    x{i} = {i}" for i in range(MAX_FUNCTION_LINES))
    assert long_functions(f"def f():\n{body}\n") == [("f", MAX_FUNCTION_LINES + 1)]
    assert long_functions("def g():\n    return 1\n") == []


# Framework rules live in frameworks/; the other analyses only ask them.
FRAMEWORKS_DIR = PACKAGE / "frameworks"
NEUTRAL = sorted(p for p in (PACKAGE / "analysis").rglob("*.py") if FRAMEWORKS_DIR not in p.parents)
FRAMEWORK_NAME = re.compile(
    r"tensorflow|TensorFlow|\btf\.|jax|JAX|XLA|Xla|torch|PyTorch|Kineto|kineto|Keras|keras"
)


def framework_vocabulary() -> tuple[str, ...]:
    from tfprof_widgets.frameworks import FRAMEWORKS

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
    from tfprof_widgets.frameworks import FRAMEWORKS

    for f in FRAMEWORKS:
        assert f.vocabulary and f.title and f.name


def test_the_framework_check_finds_a_name():
    vocabulary = ("ProfilerStep#",)
    assert framework_names('NEXT = "use the tf.data API"', vocabulary) == ["use the tf.data API"]
    assert framework_names('x = name.startswith("ProfilerStep#")', vocabulary)
    assert framework_names("def is_xla_op(): pass", vocabulary) == []  # lower case: a word
    assert framework_names('"""Docstrings may say TensorFlow."""', vocabulary) == []
    assert framework_names("from .frameworks import framework_of", vocabulary) == []


# -- one table of views; no cycle once the packages a module runs are counted ------------------
def test_every_view_is_in_the_table_and_reachable_from_the_run_alike():
    """``tw.views`` exports the views of ``views/registry.py`` (and the View template), and
    each is ``run.view.<name>`` with the function's options: its signature less the run."""
    import inspect

    from conftest import SAMPLES

    import tfprof_widgets as tw
    from tfprof_widgets.views.registry import VIEWS

    names = [v.name for v in VIEWS]
    assert len(set(names)) == len(names)
    assert sorted(tw.views.__all__) == sorted(["View", *names])
    run = tw.load(SAMPLES / "input_bound")
    for name in names:
        function = getattr(tw.views, name)
        method = getattr(run.view, name)  # bound: inspect leaves self out
        sig = inspect.signature(function)
        without_run = sig.replace(parameters=list(sig.parameters.values())[1:])
        assert inspect.signature(method) == without_run, name
        assert function.__doc__ and inspect.getdoc(function) in method.__doc__, name
    assert not [n for n in dir(run.view) if not n.startswith("_") and n not in names]


def test_a_view_of_the_run_is_the_views_function_applied_to_it(monkeypatch):
    """``run.view.<name>(...)`` passes the run first and every option on unchanged (the
    timeline's ``**kwargs`` included)."""
    from conftest import SAMPLES

    import tfprof_widgets as tw
    from tfprof_widgets.views.trace import viewer

    run = tw.load(SAMPLES / "input_bound")
    got = {}
    monkeypatch.setattr(viewer, "TraceViewer", lambda *a, **k: got.update(a=a, k=k))
    run.view.timeline((1.0, 2.0), height=300)
    assert got == {"a": (run,), "k": {"window_us": (1.0, 2.0), "height": 300}}


def with_their_packages(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    """The import graph where a module also imports the packages of what it imports
    (``from .views import _display`` runs ``views/__init__.py`` first), its own aside."""
    out = {}
    for name, targets in graph.items():
        edges = set(targets)
        for target in targets:
            parts = target.split(".")
            for i in range(2, len(parts)):
                package = ".".join(parts[:i])
                if package in graph and package != name and not name.startswith(package + "."):
                    edges.add(package)
        out[name] = edges
    return out


def test_no_import_cycle_through_a_package():
    """No cycle either when importing a module counts as running its packages, function-level
    (lazy) imports included: the views asked the kernel's warm-up to wait while the warm-up
    imported the views (views <-> _preload)."""
    assert cycles(with_their_packages(import_graph())) == []


def test_the_package_cycle_check_finds_views_and_the_preload():
    graph = {
        "tfprof_widgets.views": {"tfprof_widgets._preload"},
        "tfprof_widgets.views._display": set(),
        "tfprof_widgets._preload": {"tfprof_widgets.views._display"},
    }
    assert cycles(graph) == []
    assert cycles(with_their_packages(graph)) == [
        ["tfprof_widgets._preload", "tfprof_widgets.views"]
    ]


# -- issue 38: no import hook, a Run that is data with declared analyses, RunLike ----------------
def test_importing_the_package_installs_no_import_hook():
    """No ``sys.meta_path`` finder (the deprecation machinery's aliases of old module paths are
    gone: no release was ever tagged)."""
    import os
    import subprocess
    import sys

    code = (
        "import sys; before = list(sys.meta_path); import tfprof_widgets, tfprof_widgets.views; "
        "print([type(f).__module__ for f in sys.meta_path if f not in before])"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True
    )
    assert out.stdout.strip() == "[]"
    assert not (PACKAGE / "_deprecated.py").exists()


def setattr_on(source: str, cls: str) -> list[int]:
    """Lines of ``setattr(<cls>, ...)`` calls (the class by its name or ``x.<cls>``)."""
    return [
        node.lineno
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == "setattr"
        and node.args
        and ast.unparse(node.args[0]).rpartition(".")[2] == cls
    ]


def test_nothing_sets_attributes_on_run():
    """Every attribute of Run is declared in its class body (analyses included), none is
    attached from outside by ``setattr``."""
    found = {
        str(p.relative_to(PACKAGE)): setattr_on(p.read_text(), "Run")
        for p in MODULES
        if setattr_on(p.read_text(), "Run")
    }
    assert found == {}


def test_the_setattr_check_finds_one():
    assert setattr_on("setattr(Run, 'steps', prop)", "Run") == [1]
    assert setattr_on("for a in x:\n    setattr(run.Run, a.name, p)", "Run") == [2]
    assert setattr_on("setattr(Pod, 'steps', prop)", "Run") == []


def declared_analyses() -> dict[str, str]:
    """Run's declared analyses (methods decorated ``@_analysis`` in run.py) -> the function each
    returns the result of, as ``module:function`` (absolute module, from its import)."""
    tree = ast.parse((PACKAGE / "run.py").read_text())
    run = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "Run")
    out = {}
    for fn in run.body:
        if not isinstance(fn, ast.FunctionDef):
            continue
        if not any(ast.unparse(d) == "_analysis" for d in fn.decorator_list):
            continue
        ret = next(n for n in fn.body if isinstance(n, ast.Return))
        called = ast.unparse(ret.value.func)
        module = next(
            target
            for target, names in import_statements(fn.body, "tfprof_widgets.run", False)
            if called in names
        )
        out[fn.name] = f"{module}:{called}"
    return out


def test_run_declares_every_analysis_of_the_list():
    """``catalog.ANALYSES`` and Run's declared attributes are the same analyses, each
    computing the function the list names (so help(), editors and the list agree)."""
    import importlib.util

    from tfprof_widgets.catalog import ANALYSES

    listed = {}
    for a in ANALYSES:
        module, _, func = a.function.partition(":")
        listed[a.name] = f"{importlib.util.resolve_name(module, 'tfprof_widgets.analysis')}:{func}"
    assert declared_analyses() == listed


def test_run_and_pod_are_runlike(tmp_path):
    """A Run and a Pod both have every name of RunLike (looked up without computing it)."""
    pytest.importorskip("duckdb")
    pytest.importorskip("pyarrow")
    import tfprof_widgets as tw
    from tfprof_widgets.runlike import members, missing
    from tfprof_widgets.scale import Pod

    run = tw.load(ROOT / "sample_profiles" / "gpu_shaped", progress=False)
    assert missing(run) == []
    assert not {"steps", "ops"} & set(vars(run))  # nothing was computed to find them
    tw.convert(ROOT / "sample_profiles" / "gpu_shaped", tmp_path / "pod", progress=False)
    with tw.open(tmp_path / "pod") as pod:
        assert isinstance(pod, Pod)
        assert missing(pod) == []
    assert {"steps", "overview_summary", "clear_cache", "duration_us"} <= set(members())
    assert missing(object()) == members()


# -- the frameworks: a layer beside the analyses, its internals its own ----------------------
FRAMEWORKS_PACKAGE = "tfprof_widgets.frameworks"
# Layer -> what it must never import (the frameworks sit where the analyses do).
FRAMEWORK_LAYERS = {
    "frameworks": ("readers", "views", *UPPER),
    "readers": ("frameworks",),
    "stat_store": ("frameworks",),
    "stat_columns": ("frameworks",),
    "errors": ("frameworks",),
}


def framework_internals(name: str, source: str, is_package: bool) -> list[str]:
    """The modules of the frameworks (``base``, ``registry``, ``xla/trace_lines``...) that a
    module outside them imports: it may import only ``tfprof_widgets.frameworks`` and the
    framework packages' ``__init__``, their public names."""
    found = []
    for target, names in import_statements(ast.walk(ast.parse(source)), name, is_package):
        for full in [f"{target}.{n}" for n in names] or [target]:
            parts = full.split(".")
            if not full.startswith(FRAMEWORKS_PACKAGE + "."):
                continue
            for end in range(3, len(parts) + 1):
                if (ROOT / pathlib.Path(*parts[:end])).with_suffix(".py").exists():
                    found.append(".".join(parts[:end]))
                    break
    return sorted(set(found))


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_the_frameworks_keep_their_layer(path):
    name = module_name(path)
    found = imports(path.read_text(), name, path.name == "__init__.py")
    banned = FRAMEWORK_LAYERS.get(layer(name), ())
    assert sorted(m for m in found if layer(m) in banned) == []


VIEWS_AND_ROOT = [PACKAGE / "__init__.py", *sorted((PACKAGE / "views").rglob("*.py"))]


@pytest.mark.parametrize("path", VIEWS_AND_ROOT, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_views_and_the_root_use_only_public_framework_names(path):
    name = module_name(path)
    assert framework_internals(name, path.read_text(), path.name == "__init__.py") == []


def test_the_schema_finds_every_frameworks_tables_and_only_them():
    """The schema reads each framework package's tables (``frameworks/<name>/schema.py``)
    without importing the framework packages, whose rules import the schema; those table
    modules are data: they import nothing of the package."""
    from tfprof_widgets import schema
    from tfprof_widgets.frameworks import PACKAGES

    path = PACKAGE / "schema.py"
    assert framework_internals("tfprof_widgets.schema", path.read_text(), False) == []
    assert sorted(f"tfprof_widgets.frameworks.{f}" for f in schema.FRAMEWORK_TABLE_PACKAGES) == (
        sorted(p.__name__ for p in PACKAGES)
    )
    for package in PACKAGES:
        module = f"{package.__name__}.schema"
        source = (ROOT / pathlib.Path(*module.split("."))).with_suffix(".py").read_text()
        assert not [m for m in imports(source, module, False) if layer(m)]


def test_the_schema_lists_every_table_and_finds_each():
    from tfprof_widgets import schema
    from tfprof_widgets.frameworks import PACKAGES

    tables = [n for n in dir(schema) if n.isupper() and isinstance(getattr(schema, n), dict)]
    listed = set(re.findall(r"\b[A-Z][A-Z_]*[A-Z]\b", schema.__doc__))
    assert [n for n in tables if n not in listed] == []
    for package in PACKAGES:
        own = importlib.import_module(f"{package.__name__}.schema")
        assert own.__all__ and all(getattr(schema, n) is getattr(own, n) for n in own.__all__)


def test_frames_import_nothing_of_the_package():
    found = imports((PACKAGE / "frames.py").read_text(), "tfprof_widgets.frames", False)
    assert [m for m in found if layer(m)] == []


def test_the_framework_checks_find_an_internal_import():
    views = "tfprof_widgets.views.kernels_view"
    assert framework_internals(
        views, "from ..frameworks.xla.trace_lines import event_hlo", False
    ) == ["tfprof_widgets.frameworks.xla.trace_lines"]
    assert framework_internals(views, "from ..frameworks.xla import trace_lines", False)
    assert framework_internals(views, "from ..frameworks.registry import rules_of", False)
    assert framework_internals(views, "from ..frameworks.xla import event_hlo", False) == []
    assert framework_internals(views, "from ..frameworks import rules_of", False) == []
    found = imports("from ..frameworks import rules_of", "tfprof_widgets.readers.text", False)
    assert [m for m in found if layer(m) in FRAMEWORK_LAYERS["readers"]]


def test_the_tests_top_level_holds_at_most_40_files():
    """The tests sit in folders by layer and framework (issue 38 item 6), their shared helpers
    in tests/support: tests/ itself keeps the conftest and the checks of the whole repository."""
    top = sorted(p.name for p in (ROOT / "tests").iterdir() if p.is_file())
    assert len(top) <= 40, top


# The team's captures beside the repository (at ../shared from the root, /work/shared here):
# a clone from outside has none, and a test reading them would skip there in silence. Tests
# read tests/data (copies with a NOTICE line) and sample_profiles only. Allowed: tests/data
# itself (NOTICE names where each copy came from) and documentation (.md, .rst); prose such
# as "the team's shared captures" names no path. Scripts (scripts/) may take a folder such as
# ``--shared``. This file is left out: it holds the patterns and examples of what they catch.
SHARED_PATH = re.compile(
    r"/work/shared"  # the absolute path
    r"|\.\./shared\b"  # relative to the root
    r"|parent\s*/\s*[\"']shared[\"']"  # ROOT.parent / "shared"
    r"|[\"']shared[\"']\s*/\s*[\"'](?:captures|reference)[\"']"  # "shared" / "captures"
)


def shared_paths(text: str) -> list[str]:
    """The lines of a file's text that name the shared folder as a path."""
    return [line.strip() for line in text.splitlines() if SHARED_PATH.search(line)]


def test_no_test_reads_the_shared_captures():
    assert shared_paths('KINETO = ROOT.parent / "shared" / "captures" / "kineto"')
    assert shared_paths('SHARED = pathlib.Path("/work/shared/captures")')
    assert shared_paths("copied from ../shared/captures/kineto")
    assert shared_paths('p = base / "shared" / "reference" / "x.txt"')
    assert not shared_paths('logdir = tmp_path / "shared"  # the team\'s shared captures')
    found = {}
    for path in sorted((ROOT / "tests").rglob("*")):
        rel = path.relative_to(ROOT / "tests")
        if not path.is_file() or rel.parts[0] == "data" or path.suffix in (".md", ".rst"):
            continue
        if path.suffix in (".gz", ".pyc", ".pb", ".so") or path == pathlib.Path(__file__):
            continue
        lines = shared_paths(path.read_text(errors="replace"))
        if lines:
            found[rel.as_posix()] = lines
    assert found == {}
