"""``%%tfprof`` (profile a cell) and ``%tfprof load|list|remote`` (line form)."""

from __future__ import annotations

import html
import os
import shlex

from IPython.core.magic import Magics, line_cell_magic, magics_class
from IPython.core.magic_arguments import (
    MagicArgumentParser,
    argument,
    magic_arguments,
    parse_argstring,
)
from IPython.display import display

from ..capturing.jax_runtime import BACKENDS
from ..errors import CaptureError, ProfileError

__all__ = ["TfprofMagics"]

RUN_VARIABLE = "_tfprof_run"


# The ProfilerOptions flags, shared by %%tfprof and %tfprof remote.
_TRACER_ARGUMENTS = (
    argument(
        "--host-tracer-level",
        type=int,
        default=2,
        choices=(0, 1, 2, 3),
        help="1 user Trace events only, 2 also expensive TF ops (default), 3 verbose.",
    ),
    argument(
        "--python-tracer",
        action="store_true",
        help="Trace every Python function call (large captures).",
    ),
    argument(
        "--device-tracer-level",
        type=int,
        default=1,
        choices=(0, 1, 2),
        help="0 no GPU/TPU activity, 1 kernels and copies (default).",
    ),
    argument(
        "--delay-ms",
        type=int,
        default=0,
        help="Start tracing this many ms after the capture is requested.",
    ),
)


def _tracer_arguments(func):
    for arg in reversed(_TRACER_ARGUMENTS):
        func = arg(func)
    return func


def _options(args):
    from ..capturing.options import CaptureOptions

    return CaptureOptions(
        host_tracer_level=args.host_tracer_level,
        python_tracer=args.python_tracer,
        device_tracer_level=args.device_tracer_level,
        delay_ms=args.delay_ms,
    )


def _check_name(args):
    name = getattr(args, "name", None)
    if name is not None and not name.isidentifier():
        raise _one_line(ValueError(f"--name must be a Python identifier, not {name!r}"))
    return args


def _one_line(exc: BaseException, text: str | None = None) -> BaseException:
    """Make IPython show ``exc`` as one line instead of a traceback through this module."""
    line = text or f"{type(exc).__name__}: {exc}"
    exc._render_traceback_ = lambda: [line]  # IPython's hook for custom tracebacks
    return exc


class _Status:
    """One line under the cell that says what the magic is doing, updated in place."""

    def __init__(self) -> None:
        self._handle = display(self._bundle("starting capture…"), raw=True, display_id=True)

    @staticmethod
    def _bundle(text: str) -> dict[str, str]:
        return {
            "text/plain": text,
            "text/html": f"<div class='tfprof-status'><code>{html.escape(text)}</code></div>",
        }

    def update(self, text: str) -> None:
        if self._handle is not None:
            self._handle.update(self._bundle(text), raw=True)


def _subcommand_parsers() -> dict[str, MagicArgumentParser]:
    load = MagicArgumentParser(prog="%tfprof load", description="Load a capture.")
    load.add_argument("path", help="logdir, run directory, .xplane.pb or trace JSON")
    load.add_argument("--run", help="run name under the logdir (default: newest)")
    load.add_argument("--name", help="also store the run in this variable")
    load.add_argument("--no-display", action="store_true")
    listing = MagicArgumentParser(prog="%tfprof list", description="List runs in a logdir.")
    listing.add_argument("logdir", nargs="?", default="tfprof_logs")
    remote = MagicArgumentParser(
        prog="%tfprof remote", description="Capture running programs' profiler servers."
    )
    remote.add_argument("addresses", help="grpc://host:port[,grpc://host2:port2...]")
    remote.add_argument("--duration-ms", type=int, default=2000)
    remote.add_argument(
        "--save-timeout-s",
        type=float,
        default=None,
        help="how long a server may take to save and answer after its trace (default: 5 s, "
        "or half the duration for traces over 10 s)",
    )
    remote.add_argument("--logdir", help="default: a fresh ./tfprof_logs/<timestamp>")
    remote.add_argument("--name", help="also store the run in this variable")
    remote.add_argument("--no-display", action="store_true")
    for arg in _TRACER_ARGUMENTS:
        remote.add_argument(*arg.args, **arg.kwds)
    recover = MagicArgumentParser(
        prog="%tfprof recover",
        description="Move captures left in staging directories by a session that stopped "
        "while saving into their logdir's plugins/profile.",
    )
    recover.add_argument("logdir", nargs="?", default="tfprof_logs")
    return {"load": load, "list": listing, "remote": remote, "recover": recover}


def _note(text: str) -> None:
    """One line of output under the cell (not a stream: no red box)."""
    display(_Status._bundle(text), raw=True)


def _stop(cap) -> KeyboardInterrupt | None:
    """Stop ``cap`` and put its capture in place, whatever Ctrl-C does meanwhile.

    Returns the KeyboardInterrupt that arrived while stopping (held back until the capture
    was in place), or None. A stop cut short anyway (Ctrl-C pressed again and again, or a
    thread where it cannot be held back) is finished once more before giving up; what is
    still left then is finished by the next magic.
    """
    try:
        cap.stop(load=False)
        return None
    except KeyboardInterrupt as exc:
        if cap.state != "published":
            try:
                cap.stop(load=False)
            except KeyboardInterrupt:
                raise exc from None
        return exc


def _finish_interrupted() -> None:
    """Finish a capture whose stop an earlier interrupt cut short, and say so."""
    from ..capturing.session import finish_interrupted

    cap = finish_interrupted()
    if cap is not None:
        _note(
            f"finished the capture interrupted while stopping: {cap.run_dir} "
            f"(%tfprof load {cap.run_dir})"
        )


def _note_tf_warnings(cap) -> None:
    found = cap.log.warnings
    if found:
        first = found[0] if len(found[0]) <= 160 else found[0][:157] + "…"
        _note(
            f"TensorFlow logged {len(found)} warning(s) while profiling, kept in "
            f"{RUN_VARIABLE}.capture_log; the first: {first}"
        )


def _offer_unpublished(logdir: str) -> None:
    from ..capturing.rundir import find_unpublished

    for item in find_unpublished(logdir, _owned_here()):
        _note(
            f"unpublished capture (its session stopped while saving it): {item.run_dir}; "
            f"%tfprof recover {logdir} moves it into {item.logdir}, "
            f"%tfprof load {item.run_dir} loads it where it is"
        )


def _recover(logdir: str):
    from ..capturing.rundir import find_unpublished, publish_unpublished
    from ..loading import list_runs

    if not os.path.isdir(logdir):
        raise CaptureError(logdir, "no such directory")
    found = find_unpublished(logdir, _owned_here())
    for item in found:
        _note(f"recovered {item.run_dir} → {publish_unpublished(item)}")
    if not found:
        _note(f"no unpublished captures under {logdir}")
    return list_runs(logdir)


def _owned_here() -> frozenset[str]:
    """Staging directories this process's capture is still using."""
    from ..capturing.session import active_capture

    cap = active_capture()
    staging = getattr(cap, "_staging", None)
    return frozenset([os.path.abspath(staging)] if staging else [])


@magics_class
class TfprofMagics(Magics):
    """The ``tfprof`` magics. Loaded by ``%load_ext tfprof_widgets``."""

    @magic_arguments()
    @argument(
        "--logdir",
        help="Where to write (default: a fresh ./tfprof_logs/<timestamp>). "
        "An existing run is never overwritten.",
    )
    @argument("--name", help="Also store the loaded Run in this variable.")
    @argument(
        "--backend",
        choices=BACKENDS,
        default="auto",
        help="Which profiler records: tf, jax, or auto (the framework already imported in "
        "this kernel, TensorFlow first; else the one installed).",
    )
    @_tracer_arguments
    @argument("--no-display", action="store_true", help="Do not show the overview.")
    @line_cell_magic
    def tfprof(self, line: str, cell: str | None = None):
        """Profile a cell with TensorFlow's (or JAX's) profiler and show its overview.

        Cell form::

            %%tfprof [--logdir DIR] [--name NAME] [--backend auto|tf|jax]
                     [--host-tracer-level N] [--python-tracer]
                     [--device-tracer-level N] [--delay-ms N] [--no-display]
            model.fit(ds, epochs=1)

        The capture is loaded into ``_tfprof_run`` (and ``NAME``). If the cell raises, the
        profiler is still stopped and what was traced is kept and loaded.

        Line form::

            %tfprof load PATH [--run RUN] [--name NAME] [--no-display]
            %tfprof list [LOGDIR]
            %tfprof recover [LOGDIR]
            %tfprof remote grpc://host:port[,...] [--duration-ms N] [--logdir DIR]
                           [--save-timeout-s S] [--name NAME] [tracer options as above]
                           [--no-display]

        Ctrl-C while the profiler stops waits until the capture is saved. ``%tfprof list``
        also names captures that a session which crashed while saving left in a hidden
        staging directory; ``%tfprof recover`` moves them into place. What TensorFlow logs
        while a capture starts and stops is kept in ``run.capture_log`` (and
        ``capture.log`` in the run directory) instead of being shown.
        """
        try:
            _finish_interrupted()
            if cell is None:
                return self._line(line)
            return self._cell(line, cell)
        except (ProfileError, CaptureError) as exc:
            raise _one_line(exc) from None

    # -- %%tfprof ------------------------------------------------------------------------
    def _cell(self, line: str, cell: str):
        from ..capturing.session import Capture

        args = _check_name(parse_argstring(self.tfprof, line))
        cap = Capture(args.logdir, _options(args), args.backend)
        cap.start()
        status = _Status()
        status.update(f"capturing ({cap.route}) into {cap.logdir} …")
        try:
            result = self.shell.run_cell(cell, store_history=False)
        except BaseException:  # an interrupt that landed just outside the cell's own code
            cap._stop_requested = True  # first: whatever happens next, it can be finished
            _stop(cap)
            raise
        cap._stop_requested = True
        status.update("stopping the profiler and saving … (Ctrl-C waits until it is saved)")
        interrupted = _stop(cap)
        status.update(f"loading {cap.run_dir} …")
        from ..loading import load

        error = result.error_before_exec or result.error_in_exec or interrupted
        try:
            run = load(cap.run_dir)
        except ProfileError as exc:
            if error is None:
                raise
            # The cell's own exception matters more; say why there is no run as well.
            status.update(f"nothing loadable was captured: {exc}")
            raise _one_line(
                error,
                f"{type(error).__name__} in the profiled cell (traceback "
                f"above); nothing loadable was captured",
            ) from None
        cap.run = run
        self._store(run, args.name)
        status.update(
            f"captured {cap.elapsed_s:.2f} s of the cell: {len(run.events):,} "
            f"events, {run.events['step'].nunique()} steps → {cap.run_dir} "
            f"(in {RUN_VARIABLE}{', ' + args.name if args.name else ''})"
        )
        _note_tf_warnings(cap)
        if interrupted is not None and error is interrupted:
            raise _one_line(
                interrupted,
                "KeyboardInterrupt while the profiler was stopping: it waited until the "
                f"capture was saved; it is in {RUN_VARIABLE}",
            )
        if error is not None:
            # The cell's traceback is already shown; fail this cell too, in one line, so
            # "run all" stops here as it would without the magic.
            raise _one_line(
                error,
                f"{type(error).__name__} in the profiled cell (traceback "
                f"above); what was captured until then is in "
                f"{RUN_VARIABLE}",
            )
        if not args.no_display:
            self._show(run)
        return None

    # -- %tfprof ... ---------------------------------------------------------------------
    def _line(self, line: str):
        words = shlex.split(line)
        parsers = _subcommand_parsers()
        if not words or words[0] not in parsers:
            raise _one_line(
                ValueError(
                    "usage: %tfprof load PATH | %tfprof list [LOGDIR] | %tfprof recover "
                    "[LOGDIR] | %tfprof remote grpc://host:port[,...] (or %%tfprof as a cell "
                    "magic); see %tfprof?"
                )
            )
        command, rest = words[0], words[1:]
        args = _check_name(parsers[command].parse_args(rest))
        if command == "list":
            from ..loading import list_runs

            runs = list_runs(args.logdir)
            _offer_unpublished(args.logdir)
            return runs
        if command == "recover":
            return _recover(args.logdir)
        if command == "load":
            from ..loading import load

            run = load(args.path, run=args.run)
        else:
            from ..capturing.remote import remote_capture

            status = _Status()
            status.update(f"tracing {args.addresses} for {args.duration_ms} ms …")
            try:
                run = remote_capture(
                    args.addresses,
                    args.logdir,
                    duration_ms=args.duration_ms,
                    options=_options(args),
                    save_timeout_s=args.save_timeout_s,
                )
            except KeyboardInterrupt as exc:
                status.update("interrupted: the trace requests were cancelled")
                said = "KeyboardInterrupt: the remote capture was cancelled"
                raise _one_line(exc, said) from None
            status.update(
                f"captured {len(run.events):,} events from {len(run.hosts)} "
                f"host(s) → {run.path} (in {RUN_VARIABLE})"
            )
        self._store(run, args.name)
        if not args.no_display:
            self._show(run)
        return None

    def _store(self, run, name: str | None) -> None:
        self.shell.user_ns[RUN_VARIABLE] = run
        if name:
            self.shell.user_ns[name] = run

    @staticmethod
    def _show(run) -> None:
        from ..views import overview

        display(overview(run))
