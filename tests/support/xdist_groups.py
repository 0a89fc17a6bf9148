"""Which tests share a pytest-xdist worker, and in what order the workers take them.

The suite runs on two workers (``-n 2 --dist loadfile``, pyproject's addopts). Each file is
one work unit, run whole on one worker: a module's fixtures (a capture taken in a
subprocess, an executed notebook, a report) are set up once, and a notebook's cells, which
build on each other, run in one kernel. The files whose tests use the session's JupyterLab
(the ``jupyterlab`` and ``lab_session`` fixtures) are one unit together, so that one Lab
serves them all, as in a serial run. The units go out longest first (:data:`FIRST`), the
rest in collection order, so that no long file starts last.

(xdist's own ``--dist loadgroup`` would do the grouping from ``xdist_group`` marks, but
xdist 3.8 renames the tests' ``_nodeid``, which pytest 9 no longer reads: the marks group
nothing there. :class:`FileScheduling` groups by file name, which both see alike.)
"""

from __future__ import annotations

import ast
import functools
import pathlib

LAB_FIXTURES = frozenset({"jupyterlab", "lab_session"})
LAB_GROUP = "jupyterlab"
# The longest units, longest first (seconds of one run of the suite on 2 cores shared with
# other work, issue 38 item 6: the Lab's files 650, test_capture 206, test_writes_and_
# interrupts 144, test_browser_tool_data 122; every other file under 100, the last ones in
# collection order under 20); a unit not named here follows them in collection order.
FIRST = (
    LAB_GROUP,
    "tests/capture/test_capture.py",
    "tests/capture/test_writes_and_interrupts.py",
    "tests/browser/test_browser_tool_data.py",
)


@functools.cache
def uses_the_lab(path: pathlib.Path) -> bool:
    """Whether a test file requests the session's JupyterLab: a function of it (a test or a
    fixture of its own) takes one of :data:`LAB_FIXTURES` as a parameter. Read from the
    source, because the controller, which makes the units, collects nothing."""
    if path.suffix != ".py" or not path.is_file():
        return False
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return any(
        isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
        and LAB_FIXTURES & {a.arg for a in node.args.args + node.args.kwonlyargs}
        for node in ast.walk(tree)
    )


def unit_of(rootpath: pathlib.Path, nodeid: str) -> str:
    """The work unit of a test: its file, or :data:`LAB_GROUP`."""
    file = nodeid.split("::", 1)[0]
    return LAB_GROUP if uses_the_lab(rootpath / file) else file


def make_scheduler(config, log):
    """xdist's file scheduling with the Lab's files as one unit (``--dist loadfile`` only:
    another ``--dist`` asked for on the command line gets xdist's own)."""
    if config.getvalue("dist") != "loadfile":
        return None
    from xdist.scheduler import LoadFileScheduling

    class FileScheduling(LoadFileScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return unit_of(config.rootpath, nodeid)

    return FileScheduling(config, log)


def longest_first(config, items: list) -> None:
    """In an xdist worker, the items of the units in :data:`FIRST` first, the rest in their
    order (every worker collects, and all must reach the same order, from which the
    controller hands out the units)."""
    if not hasattr(config, "workerinput"):
        return
    rank = {name: i for i, name in enumerate(FIRST)}
    items.sort(key=lambda item: rank.get(unit_of(config.rootpath, item.nodeid), len(FIRST)))
