"""The layering of the package, read from the imports of every module (ast, nothing runs).

files -> readers -> Run -> analyses -> views, with schema, errors, stat_store and
stat_columns under all of them: a layer never imports one above it, and capturing and the
magic stay out of the readers, analyses and views. Function-local imports count too; only
``run.py``'s own rule is about import time (``run.view`` imports the views when first used).
"""

import ast
import pathlib

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


def imports(source: str, name: str, is_package: bool, top_level_only: bool = False) -> set[str]:
    """Absolute names of the modules (and from-imported names) a module's code imports."""
    package = name if is_package else name.rpartition(".")[0]
    tree = ast.parse(source)
    nodes = tree.body if top_level_only else ast.walk(tree)
    out = set()
    for node in nodes:
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module
            out.add(target)
            out.update(f"{target}.{a.name}" for a in node.names)
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
