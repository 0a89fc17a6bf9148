"""Command line: ``tfprof-widgets summary PATH`` (also ``python -m tfprof_widgets``)."""

from __future__ import annotations

import argparse
import contextlib
import os
import re
import sys
import warnings
from typing import NoReturn

import pandas as pd

from .analysis.overview import TOP_OPS_COLUMNS
from .analysis.steps import overview_steps
from .errors import ProfileError
from .frameworks import rules_of
from .loading import list_runs, load
from .run import Run


def summary_text(run: Run, top: int = 10) -> str:
    """What a person wants first from a capture: its shape, its steps and its heaviest events."""
    ev = run.events
    parts = [repr(run), ""]
    if len(ev):  # a run of TensorBoard's tool data alone has no trace to describe
        planes = run.planes[["host", "plane", "device_kind", "n_lines", "n_events"]]
        parts += ["Planes", planes.to_string(index=False), ""]
        lines = run.line_summary()[["host", "plane", "line", "events", "total_dur_us"]]
        parts += ["Lines", lines.to_string(index=False, float_format="{:,.1f}".format), ""]
    count = run.step_count
    if count.steps:  # run.steps: the steps every text counts (see StepCount)
        table = run.steps[["host", "step"]].assign(
            step_time_ms=run.steps["step_time_us"] / 1e3,
            averaged=run.steps.index.isin(overview_steps(run.steps).index),
        )
        parts += [
            f"Steps: {count} (step time per host; averaged: in the overview's averages)",
            table.to_string(index=False, float_format="{:,.3f}".format),
            "",
        ]
    timed = ev[ev["occurrences"] == 1]
    heavy = (
        timed.groupby("name", observed=True)["dur_us"]
        .agg(["size", "sum", "mean"])
        .nlargest(top, "sum")
        .rename(columns={"size": "count", "sum": "total_us", "mean": "avg_us"})
    )
    if len(heavy):
        parts += [
            f"Top {top} event names by total duration (nested events overlap their parents)",
            heavy.to_string(float_format="{:,.1f}".format),
            "",
        ]
    o = run.overview_summary
    parts += [
        f"Overview (averaged over {count.averaged_text()}"
        + (f"; {count.DROPPED})" if count.dropped else ")"),
        *o._repr_lines(run.framework.advice.in_our_words),
    ]
    if o.n_steps:
        avg = pd.Series(o.breakdown_ms_avg).rename(lambda c: c.removesuffix("_us"))
        parts += [
            "Average step-time breakdown, ms:",
            avg[avg > 0].to_string(float_format="{:,.3f}".format),
        ]
    ops = o.top_ops[TOP_OPS_COLUMNS]
    if len(ops):
        parts += [
            "",
            f"Top {len(ops)} {rules_of(run).op_label}s by self time",
            ops.to_string(index=False, float_format="{:,.1f}".format),
        ]
    bottleneck = run.tf_data_bottleneck
    if len(bottleneck):
        b = bottleneck.iloc[0]
        parts += [
            "",
            f"tf.data: slowest pipeline call {b['max_latency_us']:,.1f} us; "
            f"bottleneck {b['iterator_long_name']} "
            f"({b['iterator_latency_us']:,.1f} us self time)",
            f"  {b['suggestion']}",
        ]
    if run.warnings or run.errors:
        parts += ["", "Profiler errors/warnings:", *run.errors, *run.warnings]
    return "\n".join(parts)


class _Parser(argparse.ArgumentParser):
    """argparse, but a usage mistake is one line on stderr (and exit code 2)."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected a positive whole number, not {text!r}"
        ) from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive whole number, not {value}")
    return value


# What load() takes, as the commands that load a capture say it.
_PATH_HELP = (
    "a TensorBoard logdir (its newest run), a run directory, or one capture file: "
    ".xplane.pb, Chrome or PyTorch Kineto trace JSON (.json, .json.gz), a TensorBoard "
    "tool-data file (.overview_page.pb...), a TF 2.0 .trace, a TF1 .tfprof or RunMetadata"
)


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="tfprof-widgets",
        description="Read TensorFlow, JAX and PyTorch profiler captures.",
    )
    sub = parser.add_subparsers(dest="command", required=True)
    p_sum = sub.add_parser("summary", help="print what a capture holds")
    p_sum.add_argument("path", help=_PATH_HELP)
    p_sum.add_argument("--run", help="run name under a logdir (default: newest)")
    p_sum.add_argument("--top", type=_positive_int, default=10, help="heaviest event names to list")
    p_rep = sub.add_parser("report", help="write a self-contained HTML report (offline)")
    p_rep.add_argument("path", help=_PATH_HELP)
    p_rep.add_argument(
        "-o", "--output", default=None, help="output file (default: <run>.report.html here)"
    )
    p_rep.add_argument("--run", help="run name under a logdir (default: newest)")
    p_rep.add_argument(
        "--force",
        action="store_true",
        help="replace an existing output file (or a symbolic link, never its target)",
    )
    p_rep.add_argument(
        "--quiet", action="store_true", help="do not print the summary, only the file written"
    )
    p_runs = sub.add_parser("runs", help="list the runs under a logdir")
    p_runs.add_argument(
        "logdir", help="a TensorBoard logdir (every plugins/profile/<run>), or one run directory"
    )
    _add_convert_parser(sub)
    # Named in the usage line and in the 'required' error (argparse would say 'command').
    sub.metavar = "{" + ",".join(sub.choices) + "}"
    return parser


def _emit(text: str, stream=None) -> None:
    """Print ``text``, never failing on a character the terminal's encoding lacks."""
    stream = stream or sys.stdout
    encoding = getattr(stream, "encoding", None) or "utf-8"
    stream.write(text.encode(encoding, "backslashreplace").decode(encoding) + "\n")


# Characters that move the cursor, clear the screen, start an escape sequence or reorder text:
# a file name holding them would forge what the terminal shows (C0, DEL, C1, line and
# paragraph separators, bidirectional overrides and isolates).
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def one_line(text: str) -> str:
    """``text`` with every control character shown escaped (``\\n``, ``\\x1b``, ``\\u202e``):
    one line on a terminal, whatever the names in it hold."""
    return _CONTROL.sub(lambda m: ascii(m.group())[1:-1], str(text))


def _fail(message: str, code: int) -> int:
    _emit(f"tfprof-widgets: {one_line(message)}", sys.stderr)
    return code


def _one_line_warning(message, category, filename, lineno, file=None, line=None) -> None:
    _emit(f"tfprof-widgets: warning: {one_line(message)}", sys.stderr)


def _report(args) -> None:
    from .report import check_report_path, write_report

    if args.output is not None:  # answer before a long load, not after it
        check_report_path(args.output, args.force)
    run = load(args.path, args.run)
    out = args.output or f"{run.name}.report.html"
    write_report(run, out, overwrite=args.force)
    if not args.quiet:
        with pd.option_context("display.width", 160, "display.max_colwidth", 60):
            _emit(summary_text(run, 10) + "\n")
    _emit(
        f"wrote {out} ({os.path.getsize(out) / 1e6:.1f} MB): open it in any browser, "
        "no internet needed"
    )


def _runs(logdir: str) -> int:
    runs = list_runs(logdir)
    if not len(runs):
        return _fail(
            f"{logdir}: no capture found (a logdir holds plugins/profile/<run>/ directories)", 2
        )
    _emit(runs.to_string(index=False))
    return 0


def main(argv: list[str] | None = None) -> int:
    """Run the command line; returns the exit code (0 ok, 2 bad input or output, 1 a bug).

    Every failure is one line on stderr, never a traceback (set ``TFPROF_WIDGETS_DEBUG=1``
    to see the traceback of an unexpected error).
    """
    try:
        args = _parser().parse_args(argv)
    except SystemExit as exc:  # --help, or a usage error already printed in one line
        return exc.code if isinstance(exc.code, int) else int(exc.code is not None) * 2
    try:
        with warnings.catch_warnings():
            warnings.showwarning = _one_line_warning
            if args.command == "convert":
                return convert_command(args)
            if args.command == "summary":
                with pd.option_context("display.width", 160, "display.max_colwidth", 60):
                    _emit(summary_text(load(args.path, args.run), args.top))
            elif args.command == "report":
                _report(args)
            elif args.command == "runs":
                return _runs(args.logdir)
    except ProfileError as exc:
        return _fail(str(exc), 2)
    except OSError as exc:  # the report cannot be written there (ReportWriteError), or a read
        if isinstance(exc, BrokenPipeError):  # the reader went away (| head): not an error
            return _quiet_broken_pipe()
        return _fail(str(exc) if exc.filename is None else f"{exc.filename}: {exc.strerror}", 2)
    except KeyboardInterrupt:
        return _fail("interrupted", 130)
    except MemoryError:
        return _fail("out of memory (the capture is too big for this machine's memory)", 1)
    except Exception as exc:  # a bug: still one line, and how to see more
        if os.environ.get("TFPROF_WIDGETS_DEBUG"):
            raise
        return _fail(
            f"unexpected {type(exc).__name__}: {exc} (a bug in tfprof_widgets; "
            "TFPROF_WIDGETS_DEBUG=1 shows the traceback)",
            1,
        )
    return 0


def _quiet_broken_pipe() -> int:
    # Python would report the broken pipe again when it flushes stdout at exit.
    devnull = os.open(os.devnull, os.O_WRONLY)
    with contextlib.suppress(OSError, ValueError):
        os.dup2(devnull, sys.stdout.fileno())
    return 1


def _add_convert_parser(sub) -> None:
    p = sub.add_parser(
        "convert",
        help="convert a capture of many hosts into a Parquet dataset (tfprof_widgets.open)",
        description="Every host's tables and per-host analyses as Parquet, one file set per "
        "host, hosts in parallel. Resumable: run it again to finish an interrupted "
        "conversion. Needs the scale extra: pip install 'tfprof_widgets[scale]'.",
    )
    p.add_argument("path", help=_PATH_HELP)
    p.add_argument(
        "-o", "--output", required=True, help="dataset directory or fsspec URL (s3://...)"
    )
    p.add_argument("--run", help="run name under a logdir (default: newest)")
    p.add_argument("-j", "--workers", type=int, help="hosts converted at once (default: CPUs)")
    p.add_argument("--quiet", action="store_true", help="no progress bar")


def convert_command(args) -> int:
    """``tfprof-widgets convert PATH -o DATASET``: 0 when every host converted, 2 when some
    host could not be (the others are converted; the message names it), 1 without the
    scale extra."""
    from .scale import convert

    try:
        result = convert(
            args.path,
            args.output,
            args.run,
            workers=args.workers,
            progress=False if args.quiet else None,
        )
    except ImportError as exc:
        return _fail(str(exc), 1)
    except ProfileError as exc:
        return _fail(str(exc), 2)
    _emit(
        f"{result.dataset}: {len(result.converted)} host(s) converted, "
        f"{len(result.skipped)} already there, in {result.seconds:.1f} s; "
        f"open it with tfprof_widgets.open({result.dataset!r})"
    )
    return 0
