"""A single self-contained HTML report of a run: opens anywhere, with no internet.

It holds the views of the table of views that apply to the run, in its order
(:data:`.views.registry.VIEWS`: the overview, the pod viewer of several hosts, a timeline of
the slowest step, op stats, the input pipeline, the memory profile, kernel stats...): the same
interactive views as a notebook (sortable tables, choosers, pie clicks that filter, plots that
follow the window's width and the system's light/dark setting), with the viewer script and the
plotly.js basic bundle embedded once. Building the page (:func:`report_html`) and writing the
file (:func:`write_report`) are separate steps.
"""

from __future__ import annotations

import contextlib
import datetime
import errno
import html
import os
import re
import secrets
import stat

from . import views
from .views._common import run_label
from .views.page.display import lib_script
from .views.registry import report_specs

PAGE_CSS = """
:root{color-scheme:light dark}
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:0;
  background:#ffffff;color:#1f1f1f}
main{max-width:1400px;margin:0 auto;padding:12px 20px 40px}
h1{font-size:22px;margin:6px 0 2px}
.meta{color:#616161;margin:0 0 6px;overflow-wrap:anywhere}
nav{position:sticky;top:0;z-index:5;background:inherit;padding:6px 0;
  border-bottom:1px solid #d0d0d0;display:flex;flex-wrap:wrap;gap:4px 14px}
nav a{color:#1a6fd1;text-decoration:none}
section{margin:18px 0;padding-top:6px;border-top:1px solid #d0d0d0;scroll-margin-top:40px}
@media (prefers-color-scheme: dark){
  body{background:#1e1e1e;color:#e0e0e0}
  .meta{color:#a8a8a8}
  nav,section{border-color:#444}
  nav a{color:#6cb2ff}
}
"""


def slowest_step_window(run, pad: float = 0.05) -> tuple[float, float] | None:
    """The time window of the slowest step (with a little margin), or None without steps."""
    steps = run.steps
    if not len(steps) or steps["start_us"].isna().all():  # none, or TensorBoard's (no times)
        return None
    s = steps.loc[steps["step_time_us"].idxmax()]
    margin = pad * s["step_time_us"]
    return float(s["start_us"] - margin), float(s["start_us"] + s["step_time_us"] + margin)


def more_trace_detail(run) -> str:
    """What a report's reader can do where its trace's detail ends (the report keeps the
    slowest step's events in full): write a page with every event of the window shown, from
    the capture, with one command ("{window}": the page puts the window shown there)."""
    capture = run.files[0] if len(run.files) == 1 else run.path
    code = (
        "import tfprof_widgets as tw; from tfprof_widgets.views.trace.viewer import write_html; "
        f"write_html(tw.load({str(capture)!r}), 'trace.html', window_us={{window}})"
    )
    return (
        f'For every event of this window, write a page of it from the capture: python -c "{code}"'
    )


def report_views(run) -> dict[str, views.View]:
    """The views of the report, by section id."""
    from .views.page.display import lib_not_ahead

    with lib_not_ahead():  # views for a file: no viewer script into the cell's outputs
        return _sections(run)


def _sections(run) -> dict[str, views.View]:
    """Each view of the run's report (:func:`.views.registry.report_specs`) by section id."""
    out = {}
    for spec in report_specs(run):
        options = SECTION_OPTIONS.get(spec.name)
        out[spec.section] = spec.function(run, **(options(run) if options else {}))
    return out


# What a report asks of a view beyond its defaults, by view name.
SECTION_OPTIONS = {
    # The trace's offline copy within 0.8 MB: the report stays under 3 MB with plotly.js.
    "timeline": lambda run: {
        "window_us": slowest_step_window(run),
        "offline_bytes": 800_000,
        "more_detail": more_trace_detail(run),
    },
}


def report_html(run) -> str:
    """The whole report as one HTML document (nothing written)."""
    sections = report_views(run)
    parts = [f'<section id="{key}">{view.html()}</section>' for key, view in sections.items()]
    nav = "".join(f'<a href="#{k}">{k.replace("_", " ")}</a>' for k in sections)
    when = datetime.datetime.now().strftime("%Y-%m-%d %H:%M")
    name = run_label(run)
    frameworks = getattr(run, "framework", None)
    whose = (
        f"{frameworks.title} profile" if frameworks is not None and frameworks.found else "Profile"
    )
    title = html.escape(f"{whose}: {name}")
    meta = (
        f"{html.escape(run.path)} · run {html.escape(run.name)} · hosts: "
        f"{html.escape(', '.join(run.hosts))} · {len(run.events):,} events · "
        f"{html.escape(str(run.step_count))} · made {when} by "
        "tfprof_widgets"
    )
    return (
        "<!doctype html><html lang='en'><head><meta charset='utf-8'>"
        "<meta name='viewport' content='width=device-width,initial-scale=1'>"
        f"<title>{title}</title><style>{PAGE_CSS}</style></head>"
        # data-tfprof-page: the views follow the system's light/dark setting here.
        "<body data-tfprof-page=''><main>"
        f"<h1>{title}</h1><p class='meta'>{meta}</p><nav>{nav}</nav>"
        f"{''.join(parts)}</main>{lib_script()}"
        "<script>window.__tfprof.mountAll(document);</script></body></html>"
    )


class ReportWriteError(OSError):
    """The report cannot be written where asked; ``path`` and ``problem`` say why.

    Raised before anything is written: nothing at ``path`` (or anywhere else) is changed.
    """

    def __init__(self, path: str, problem: str) -> None:
        super().__init__(problem)
        self.path, self.problem = path, problem

    def __str__(self) -> str:
        return f"{self.path}: {self.problem}"


def check_report_path(path: str | os.PathLike, overwrite: bool = False) -> str:
    """Raise :class:`ReportWriteError` if a report cannot go to ``path``; else ``path``.

    Checks what can be known before the report is built (a cheap early answer for a
    command line); :func:`write_report` checks again when it writes.
    """
    path = os.fspath(path)
    if not path:
        raise ReportWriteError(path, "an empty file name")
    if "\0" in path:
        raise ReportWriteError(repr(path), "a file name cannot contain a NUL character")
    problem = _refusal(path, overwrite)
    if problem:
        raise ReportWriteError(path, problem)
    directory = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(directory):
        what = f"{directory} is not a directory"
        if not os.path.lexists(directory):
            what = f"the directory {directory} does not exist"
        raise ReportWriteError(path, f"cannot write here: {what}")
    if not os.access(directory, os.W_OK | os.X_OK):
        why = "permission denied"
        with contextlib.suppress(OSError):
            if os.statvfs(directory).f_flag & os.ST_RDONLY:
                why = "Read-only file system"
        raise ReportWriteError(path, f"cannot write into {directory}: {why}")
    return path


def _refusal(path: str, overwrite: bool) -> str | None:
    """Why ``path`` must not be replaced by a report (None when it may be)."""
    if os.path.islink(path):
        if overwrite:
            return None  # the link itself is replaced; its target is never written
        return (
            f"is a symbolic link (to {os.readlink(path)}); pass --force to replace the "
            "link itself with the report (its target is left alone)"
        )
    if os.path.isdir(path):
        return "is a directory; give the report a file name"
    if os.path.lexists(path):
        if not overwrite:
            return "exists; choose another name or pass --force"
        if not os.path.isfile(path):
            return "exists and is not a regular file; choose another name"
    return None


def _open_beside(path: str) -> tuple[int, str]:
    """A new hidden file in ``path``'s directory, created exclusively: (fd, its path)."""
    directory = os.path.dirname(os.path.abspath(path))
    stem = os.path.basename(path)[:100]  # room for the suffix within NAME_MAX
    mode = 0o666  # less the umask, as for any file the user creates
    with contextlib.suppress(OSError):
        st = os.lstat(path)
        if stat.S_ISREG(st.st_mode):
            mode = stat.S_IMODE(st.st_mode)  # a replaced report keeps its mode
    for _ in range(100):
        tmp = os.path.join(directory, f".{stem}.{secrets.token_hex(4)}.tmp")
        try:
            return os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, mode), tmp
        except FileExistsError:
            continue
        except OSError as exc:
            raise ReportWriteError(
                path, f"cannot write into {directory}: {exc.strerror or exc}"
            ) from None
    raise ReportWriteError(path, f"cannot find a free temporary name in {directory}")


def _utf8(text: str) -> bytes:
    """``text`` as UTF-8; a lone surrogate (not text, so not encodable) becomes U+FFFD."""
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        return _LONE_SURROGATE.sub("\ufffd", text).encode("utf-8")


# What link() fails with where a filesystem has no hard links (FAT, some network mounts).
_NO_HARD_LINKS = {errno.EPERM, errno.EOPNOTSUPP, errno.ENOTSUP, errno.EMLINK, errno.ENOSYS}
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def write_report(run, path: str | os.PathLike, overwrite: bool = False) -> str:
    """Write the report of ``run`` to ``path`` (refusing to replace a file unless told).

    The report is built in memory and written into a temporary file beside ``path``, which
    then takes ``path``'s place in one rename: a report is never left half-written, and if
    building it fails, an existing file at ``path`` is untouched, even with ``overwrite``.
    A symbolic link at ``path`` is refused unless ``overwrite``, which replaces the link
    itself; its target is never written. Raises :class:`ReportWriteError` (an ``OSError``)
    when ``path`` cannot be written: before building anything where that can be known.
    """
    path = check_report_path(path, overwrite)
    if os.path.lexists(path) and any(_same_file(path, f) for f in run.files):
        raise ReportWriteError(path, "is one of the capture's own files; choose another name")
    data = _utf8(report_html(run))
    fd, tmp = _open_beside(path)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        _publish(tmp, path, overwrite)
    except BaseException as exc:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        if isinstance(exc, OSError) and not isinstance(exc, ReportWriteError):
            raise ReportWriteError(
                path, f"could not write the report: {exc.strerror or exc}"
            ) from None
        raise
    return path


def _same_file(a: str, b: str) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


def _publish(tmp: str, path: str, overwrite: bool) -> None:
    """Give the finished temporary file its name, in one step."""
    if overwrite:
        problem = _refusal(path, overwrite)  # it may have changed while the report was built
        if problem:
            raise ReportWriteError(path, problem)
        os.replace(tmp, path)
        return
    # A hard link never replaces anything: a file that appeared meanwhile is kept.
    try:
        os.link(tmp, path)
    except FileExistsError:
        raise ReportWriteError(path, _refusal(path, False) or "exists") from None
    except OSError as exc:
        if exc.errno not in _NO_HARD_LINKS:
            raise
        problem = _refusal(path, False)  # a filesystem without hard links: check, rename
        if problem:
            raise ReportWriteError(path, problem) from None
        os.replace(tmp, path)
        return
    os.unlink(tmp)
