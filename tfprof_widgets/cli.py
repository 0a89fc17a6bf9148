"""Command line: ``tfprof-widgets summary PATH`` (also ``python -m tfprof_widgets``)."""

from __future__ import annotations

import argparse
import os
import sys

import pandas as pd

from .analysis.overview import TOP_OPS_COLUMNS
from .errors import ProfileError
from .loading import list_runs, load
from .run import Run


def summary_text(run: Run, top: int = 10) -> str:
    """What a person wants first from a capture: its shape, its steps and its heaviest events."""
    ev = run.events
    parts = [repr(run), ""]
    planes = run.planes[["host", "plane", "device_kind", "n_lines", "n_events"]]
    parts += ["Planes", planes.to_string(index=False), ""]
    lines = run.line_summary()[["host", "plane", "line", "events", "total_dur_us"]]
    parts += ["Lines", lines.to_string(index=False, float_format="{:,.1f}".format), ""]
    stepped = ev[ev["step"].notna()]
    if len(stepped):
        steps = stepped.groupby(["host", "step"], observed=True).agg(
            events=("name", "size"), start_us=("start_us", "min"), end_us=("end_us", "max")
        )
        steps["span_ms"] = (steps["end_us"] - steps["start_us"]) / 1e3
        parts += [
            "Steps (span of the events grouped into each step)",
            steps[["events", "span_ms"]].to_string(float_format="{:,.3f}".format),
            "",
        ]
    timed = ev[ev["occurrences"] == 1]
    heavy = (
        timed.groupby("name", observed=True)["dur_us"]
        .agg(["size", "sum", "mean"])
        .nlargest(top, "sum")
        .rename(columns={"size": "count", "sum": "total_us", "mean": "avg_us"})
    )
    parts += [
        f"Top {top} event names by total duration (nested events overlap their parents)",
        heavy.to_string(float_format="{:,.1f}".format),
        "",
    ]
    o = run.overview_summary
    parts += [
        "Overview (the steps XProf averages: past five, all but the first and last)",
        *o._repr_lines(),
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
            f"Top {len(ops)} TF ops by self time",
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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="tfprof-widgets", description="Read TensorFlow profiler captures."
    )
    sub = parser.add_subparsers(dest="command", required=True)
    p_sum = sub.add_parser("summary", help="print what a capture holds")
    p_sum.add_argument("path", help="logdir, run directory, .xplane.pb or .trace.json(.gz)")
    p_sum.add_argument("--run", help="run name under a logdir (default: newest)")
    p_sum.add_argument("--top", type=int, default=10, help="heaviest event names to list")
    p_rep = sub.add_parser("report", help="write a self-contained HTML report (offline)")
    p_rep.add_argument("path", help="logdir, run directory, .xplane.pb or .trace.json(.gz)")
    p_rep.add_argument(
        "-o", "--output", default=None, help="output file (default: <run>.report.html here)"
    )
    p_rep.add_argument("--run", help="run name under a logdir (default: newest)")
    p_rep.add_argument("--force", action="store_true", help="replace an existing output file")
    p_rep.add_argument(
        "--quiet", action="store_true", help="do not print the summary, only the file written"
    )
    p_runs = sub.add_parser("runs", help="list the runs under a logdir")
    p_runs.add_argument("logdir")
    _add_convert_parser(sub)
    args = parser.parse_args(argv)
    if args.command == "convert":
        return convert_command(args)
    try:
        if args.command == "summary":
            with pd.option_context("display.width", 160, "display.max_colwidth", 60):
                print(summary_text(load(args.path, args.run), args.top))
        elif args.command == "report":
            from .report import write_report

            run = load(args.path, args.run)
            out = args.output or f"{run.name}.report.html"
            try:
                write_report(run, out, overwrite=args.force)
            except FileExistsError as exc:
                print(f"tfprof-widgets: {exc}", file=sys.stderr)
                return 2
            if not args.quiet:
                with pd.option_context("display.width", 160, "display.max_colwidth", 60):
                    print(summary_text(run, 10) + "\n")
            print(
                f"wrote {out} ({os.path.getsize(out) / 1e6:.1f} MB): open it in any "
                "browser, no internet needed"
            )
        elif args.command == "runs":
            print(list_runs(args.logdir).to_string(index=False))
    except ProfileError as exc:
        print(f"tfprof-widgets: {exc}", file=sys.stderr)
        return 2
    return 0


def _add_convert_parser(sub) -> None:
    p = sub.add_parser(
        "convert",
        help="convert a capture of many hosts into a Parquet dataset (tfprof_widgets.open)",
        description="Every host's tables and per-host analyses as Parquet, one file set per "
        "host, hosts in parallel. Resumable: run it again to finish an interrupted "
        "conversion. Needs the scale extra: pip install 'tfprof_widgets[scale]'.",
    )
    p.add_argument("path", help="logdir, run directory or capture file")
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
        print(f"tfprof-widgets: {exc}", file=sys.stderr)
        return 1
    except ProfileError as exc:
        print(f"tfprof-widgets: {exc}", file=sys.stderr)
        return 2
    print(
        f"{result.dataset}: {len(result.converted)} host(s) converted, "
        f"{len(result.skipped)} already there, in {result.seconds:.1f} s; "
        f"open it with tfprof_widgets.open({result.dataset!r})"
    )
    return 0
