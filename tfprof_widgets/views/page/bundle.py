"""The views' JavaScript, joined from its modules into the scripts a page gets (no bundler to
install, nothing fetched: done here, once per process, from the package's files).

The sources are ES modules, one job each, in ``static/views/`` (every view but the trace
viewer, entry ``main.js``) and ``static/trace/`` (the trace viewer, entry ``index.js``). They
use a small subset of the module syntax, checked here: ``import { a, b } from "./name.js";``
(one line, same folder), ``export`` before a ``function``, ``class``, ``const`` or ``let``
declaration, ``export { a, b };`` and ``export default <expression>;`` (the entry's).
ESLint lints them as they are (``eslint.config.mjs``).

Each module becomes a function run once, in dependency order, whose exports are the fields of
one object; its imports become constants read from the objects of the modules it names. Out
of that come three scripts:

* :func:`views_script` — a classic script (a notebook's application/javascript output and a
  report's ``<script>``) that defines ``window.__tfprof``;
* :func:`trace_esm` — an ES module (the anywidget ``_esm`` of the live trace viewer, and the
  report's ``<script type="module">``) exporting ``render`` (default), ``renderOffline`` and
  ``mountOutput``;
* :func:`trace_script` — the same as a classic script that defines
  ``window.__tfpvRenderOffline`` and ``window.__tfpvMountOutput`` once per page (a notebook's
  JavaScript output cannot be a module).
"""

from __future__ import annotations

import functools
import re
from importlib import resources

__all__ = ["modules", "trace_esm", "trace_script", "views_script"]

_IMPORT = re.compile(r'^import \{([^}]*)\} from "\./([a-z_]+)\.js";$')
_EXPORT = re.compile(r"^export (?:async )?(?:function\*?|class|const|let) ([A-Za-z_$][\w$]*)")
_DEFAULT = re.compile(r"^export default (.+);$")
_LIST = re.compile(r"^export \{([^}]*)\};$")


class BundleError(ValueError):
    """A module uses syntax the bundler does not handle, or imports what does not exist."""


def _source(folder: str, name: str) -> str:
    path = resources.files("tfprof_widgets.views") / "static" / folder / f"{name}.js"
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise BundleError(f"no module static/{folder}/{name}.js") from None


def _parse(folder: str, name: str) -> tuple[list[tuple[list[str], str]], list[str], str]:
    """(imports as (names, module), exported names, body) of one module."""
    imports, exports, body = [], [], []
    for n, line in enumerate(_source(folder, name).splitlines(), 1):
        where = f"static/{folder}/{name}.js:{n}"
        if line.startswith("import"):
            m = _IMPORT.match(line)
            if not m:
                raise BundleError(f'{where}: write imports as import {{ a, b }} from "./x.js";')
            names = [s.strip() for s in m.group(1).split(",") if s.strip()]
            imports.append((names, m.group(2)))
            body.append("")
        elif line.startswith("export"):
            m, d, li = _EXPORT.match(line), _DEFAULT.match(line), _LIST.match(line)
            if li:  # names declared or imported above
                exports += [s.strip() for s in li.group(1).split(",") if s.strip()]
                body.append("")
            elif m:
                exports.append(m.group(1))
                body.append(line[len("export ") :])
            elif d:
                exports.append("default")
                body.append(f"const __default = {d.group(1)};")
            else:
                raise BundleError(f"{where}: export a declaration, a list or a default")
        else:
            body.append(line)
    return imports, exports, "\n".join(body)


@functools.cache
def modules(folder: str, entry: str) -> tuple[tuple[str, tuple, tuple, str], ...]:
    """The modules ``entry`` needs, dependencies first: (name, imports, exports, body)."""
    order: list[tuple[str, tuple, tuple, str]] = []
    exported: dict[str, list[str]] = {}
    visiting: set[str] = set()

    def visit(name: str) -> None:
        if name in exported:
            return
        if name in visiting:
            raise BundleError(f"static/{folder}: modules import each other ({name})")
        visiting.add(name)
        imports, exports, body = _parse(folder, name)
        for names, dep in imports:
            visit(dep)
            missing = set(names) - set(exported[dep])
            if missing:
                raise BundleError(f"static/{folder}/{name}.js imports {sorted(missing)} from {dep}")
        visiting.discard(name)
        exported[name] = exports
        order.append((name, tuple(imports), tuple(exports), body))

    visit(entry)
    return tuple(order)


def _joined(folder: str, entry: str) -> str:
    out = []
    for name, imports, exports, body in modules(folder, entry):
        fields = ", ".join("default: __default" if e == "default" else e for e in exports)
        out.append(f"// ---- static/{folder}/{name}.js ----")
        out.append(f"const __tfm_{name} = (function () {{")
        out += [f"const {{ {', '.join(names)} }} = __tfm_{dep};" for names, dep in imports]
        out.append(body)
        out.append(f"return {{ {fields} }};")
        out.append("})();")
    return "\n".join(out)


@functools.cache
def views_script() -> str:
    """Every view's viewer, as a classic script that defines ``window.__tfprof``."""
    return '(function () {\n"use strict";\n' + _joined("views", "main") + "\n})();\n"


@functools.cache
def trace_esm() -> str:
    """The trace viewer as an ES module: ``export default { render }`` (anywidget),
    ``renderOffline(el, payload)`` and ``mountOutput(element, payload)``."""
    return (
        _joined("trace", "index")
        + "\nexport default __tfm_index.default;\n"
        + "export const { renderOffline, mountOutput } = __tfm_index;\n"
    )


@functools.cache
def trace_script() -> str:
    """The trace viewer as a classic script that defines ``window.__tfpvRenderOffline`` and
    ``window.__tfpvMountOutput`` once per page."""
    return (
        'if (!window.__tfpvRenderOffline) { (function () {\n"use strict";\n'
        + _joined("trace", "index")
        + "\nwindow.__tfpvRenderOffline = __tfm_index.renderOffline;"
        + "\nwindow.__tfpvMountOutput = __tfm_index.mountOutput;\n})(); }"
    )
