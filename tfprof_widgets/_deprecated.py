"""Names and module paths that changed, kept working for one release with a warning.

Each old spelling emits a :class:`DeprecationWarning` that names the new one, then does what
the new one does:

* top-level functions: ``tfprof_widgets.overview(run)`` is ``tfprof_widgets.views.overview``,
  ``tfprof_view`` is ``tfprof_table``, ... (:data:`NAMES`, served by the package's
  ``__getattr__``);
* module paths: ``tfprof_widgets.widgets[.<module>]`` is ``tfprof_widgets.views``,
  ``tfprof_widgets.capture.<module>`` is ``tfprof_widgets.capturing.<module>``,
  ``tfprof_widgets.magic.tfprof`` is ``tfprof_widgets.magic.magics`` and
  ``tfprof_widgets.analysis.tfprof_views`` is ``...tfprof_tables`` (:data:`MODULES`), with the
  names that moved out of them (:data:`MOVED`). The
  attribute ``tfprof_widgets.capture`` stays the :func:`~tfprof_widgets.capture` function;
  only imports through the old path (``from tfprof_widgets.capture.session import ...``)
  are redirected.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import sys
import types
import warnings

__all__ = ["MODULES", "MOVED", "NAMES", "attribute", "install", "moved_attribute", "renamed"]

# Old top-level name -> (new module, new name, how the new spelling reads).
NAMES = {
    "overview": ("tfprof_widgets.views", "overview", "tfprof_widgets.views.overview"),
    "op_stats": ("tfprof_widgets.views", "op_stats", "tfprof_widgets.views.op_stats"),
    "timeline": ("tfprof_widgets.views", "timeline", "tfprof_widgets.views.timeline"),
    "memory_timeline": (
        "tfprof_widgets.views",
        "memory_timeline",
        "tfprof_widgets.views.memory_timeline",
    ),
    "tf_data_graph": (
        "tfprof_widgets.views",
        "tf_data_graph",
        "tfprof_widgets.views.tf_data_graph",
    ),
    "kernel_stats": ("tfprof_widgets.views", "kernel_stats", "tfprof_widgets.views.kernel_stats"),
    "input_pipeline_view": (
        "tfprof_widgets.views",
        "input_pipeline",
        "tfprof_widgets.views.input_pipeline",
    ),
    "compare": ("tfprof_widgets.views", "compare", "tfprof_widgets.views.compare"),
    "tfprof_view": (
        "tfprof_widgets.frameworks.tensorflow.tfprof_tables",
        "tfprof_view",
        "tfprof_widgets.tfprof_table",
    ),
}

# Old module path -> new module path; submodules of an old package follow it, except where
# a module was renamed as well.
MODULES = {
    "tfprof_widgets.widgets": "tfprof_widgets.views",
    "tfprof_widgets.widgets.lod": "tfprof_widgets.views.timeline_lod",
    "tfprof_widgets.widgets.overview": "tfprof_widgets.views.overview_view",
    "tfprof_widgets.widgets.op_stats": "tfprof_widgets.views.op_stats_view",
    "tfprof_widgets.widgets.timeline": "tfprof_widgets.views.timeline_view",
    "tfprof_widgets.widgets.memory": "tfprof_widgets.views.memory_view",
    "tfprof_widgets.widgets.tf_data": "tfprof_widgets.views.tf_data_view",
    "tfprof_widgets.widgets.kernels": "tfprof_widgets.views.kernels_view",
    "tfprof_widgets.widgets.input_pipeline": "tfprof_widgets.views.input_pipeline_view",
    "tfprof_widgets.widgets.compare": "tfprof_widgets.views.compare_view",
    "tfprof_widgets.capture": "tfprof_widgets.capturing",
    "tfprof_widgets.magic.tfprof": "tfprof_widgets.magic.magics",
    "tfprof_widgets.analysis.tfprof_views": ("tfprof_widgets.frameworks.tensorflow.tfprof_tables"),
    # TensorFlow's and XLA's own analyses moved into their framework packages.
    "tfprof_widgets.analysis.tfprof_tables": ("tfprof_widgets.frameworks.tensorflow.tfprof_tables"),
    "tfprof_widgets.analysis.tfprof_advice": ("tfprof_widgets.frameworks.tensorflow.tfprof_advice"),
    "tfprof_widgets.analysis.tf_data": "tfprof_widgets.frameworks.tensorflow.tf_data",
    "tfprof_widgets.analysis.tf_ops": "tfprof_widgets.frameworks.tensorflow.op_names",
    "tfprof_widgets.analysis.tpu": "tfprof_widgets.frameworks.xla.tpu",
}

# Names that moved or were renamed inside an old module path -> (new module, new name).
MOVED = {
    ("tfprof_widgets.widgets", "input_pipeline_view"): ("tfprof_widgets.views", "input_pipeline"),
    ("tfprof_widgets.widgets", "op_diff"): ("tfprof_widgets.analysis.compare", "op_diff"),
    ("tfprof_widgets.widgets.input_pipeline", "input_pipeline_view"): (
        "tfprof_widgets.views",
        "input_pipeline",
    ),
    ("tfprof_widgets.widgets.memory", "MemoryView"): (
        "tfprof_widgets.views.memory_view",
        "MemoryTimelineView",
    ),
    ("tfprof_widgets.widgets.memory", "downsample_minmax"): (
        "tfprof_widgets.views.timeline_lod",
        "downsample_minmax",
    ),
    ("tfprof_widgets.widgets._display", "View"): ("tfprof_widgets.views.base", "View"),
    ("tfprof_widgets.widgets._display", "CATEGORY_LABELS"): (
        "tfprof_widgets.analysis.steps",
        "CATEGORY_LABELS",
    ),
    # Names that left a module that still exists (the module's __getattr__ asks here): found
    # by name when used, so the new module need not be imported by the old one.
    ("tfprof_widgets.run", "load"): ("tfprof_widgets.loading", "load"),
}


def _new_module_name(old: str) -> str | None:
    if old in MODULES:
        return MODULES[old]
    package, _, leaf = old.rpartition(".")
    if package in MODULES and package.count(".") == 1:
        return f"{MODULES[package]}.{leaf}"
    return None


def _warn(old: str, new: str, stacklevel: int) -> None:
    warnings.warn(
        f"{old} is deprecated and will be removed in the next release: use {new}",
        DeprecationWarning,
        stacklevel=stacklevel,
    )


def attribute(name: str):
    """The object an old top-level name stands for (with its warning), for the package's
    ``__getattr__``; raises AttributeError for any other name."""
    if name not in NAMES:
        raise AttributeError(f"module 'tfprof_widgets' has no attribute {name!r}")
    module, new_name, spelled = NAMES[name]
    _warn(f"tfprof_widgets.{name}", spelled, stacklevel=4)  # the caller of __getattr__
    return getattr(importlib.import_module(module), new_name)


def moved_attribute(module: str, name: str):
    """For a module's ``__getattr__``: a name that moved out of the module to another (listed
    in :data:`MOVED`), with a warning; AttributeError for other names."""
    moved = MOVED.get((module, name))
    if moved is None:
        raise AttributeError(f"module {module!r} has no attribute {name!r}")
    _warn(f"{module}.{name}", f"{moved[0].rpartition('.')[0]}.{moved[1]}", stacklevel=4)
    return getattr(importlib.import_module(moved[0]), moved[1])


def renamed(module: str, name: str, names: dict[str, str], namespace: dict):
    """For a module's ``__getattr__``: what an old name of the module was renamed to (a name in
    ``namespace``, the module's globals), with a warning; AttributeError for other names."""
    if name not in names:
        raise AttributeError(f"module {module!r} has no attribute {name!r}")
    _warn(f"{module}.{name}", f"{module}.{names[name]}", stacklevel=4)  # the caller
    return namespace[names[name]]


class _Alias(types.ModuleType):
    """An old module path: every attribute comes from the new module (or, for a package,
    from its renamed submodule). The module itself is never copied, so its state is one."""

    def __init__(self, old: str, new: str, warn_on_access: bool) -> None:
        super().__init__(old, f"Deprecated: use {new}.")
        self.__path__ = []  # a package, so that old submodule paths can be imported
        self._new = new
        self._warn_on_access = warn_on_access

    def __getattr__(self, name: str):
        if name.startswith("__"):
            raise AttributeError(name)
        moved = MOVED.get((self.__name__, name))
        if moved is not None:
            _warn(f"{self.__name__}.{name}", ".".join(moved), stacklevel=3)
            return getattr(importlib.import_module(moved[0]), moved[1])
        if self._warn_on_access:
            _warn(f"{self.__name__}.{name}", f"{self._new}.{name}", stacklevel=3)
        module = importlib.import_module(self._new)
        if hasattr(module, name):
            return getattr(module, name)
        sub = _new_module_name(f"{self.__name__}.{name}")
        if sub is None:
            raise AttributeError(f"module {self._new!r} has no attribute {name!r}")
        return importlib.import_module(sub)


class _Finder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Imports of an old module path (``tfprof_widgets.widgets.lod``...) warn once and give
    an alias of the new module."""

    def find_spec(self, fullname, path=None, target=None):
        if fullname in _PACKAGES or _new_module_name(fullname) is None:
            return None
        return importlib.util.spec_from_loader(fullname, self)

    def create_module(self, spec):
        new = _new_module_name(spec.name)
        _warn(spec.name, new, stacklevel=3)  # importlib's own frames are skipped
        return _Alias(spec.name, new, warn_on_access=False)

    def exec_module(self, module) -> None:
        pass  # everything comes from the new module


# Old packages whose name is also something else now (``tfprof_widgets.capture`` is the
# capture() function): registered up front, so that importing them never replaces that.
_PACKAGES = ("tfprof_widgets.widgets", "tfprof_widgets.capture")


def install() -> None:
    """Make the old module paths importable (the package calls this once)."""
    for old in _PACKAGES:
        sys.modules.setdefault(old, _Alias(old, MODULES[old], warn_on_access=True))
    if not any(isinstance(f, _Finder) for f in sys.meta_path):
        sys.meta_path.insert(0, _Finder())
