"""The overview page: summary, step-time graph, top ops, environment, advice and the
suggestions that fire (``run.suggestions``, as XProf's overview shows its smart suggestions)."""

from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go

from ..analysis.overview import OverviewSummary
from ..analysis.results import plural
from ..analysis.steps import overview_steps
from ..frameworks import rules_of
from ..frameworks.xla import cpu_step_share
from ._common import TOOL_CALLS, step_bars, swatches
from .base import Html, Plot, Plots, TableBlock, View
from .page.display import esc
from .tables import Column, Table


def step_time_figure(steps, title: str = "Step-time graph") -> go.Figure:
    """Stacked bars per step (per host and step with several hosts), one colour per
    category (input in red), milliseconds."""
    multi = steps["host"].nunique() > 1
    if multi:
        steps = steps.sort_values(["step", "host"], kind="stable")
    x = [f"{s} · {h}" if multi else str(s) for h, s in zip(steps["host"], steps["step"])]
    return step_bars(
        steps,
        x,
        title=title,
        xaxis_title="step · host" if multi else "step",
        height=380 if multi else 360,
    )


def top_ops_table(top, multi_host: bool) -> Table:
    """The overview's top ops: numbers first, the op's name last; the host where several."""
    cols = [
        Column("total_self_time_us", "self time (µs)", digits=1),
        Column("self_time_percent", "self %", "pct", digits=1),
        Column("occurrences", "count", "int"),
        Column("host_or_device", "on"),
        Column("type", "type"),
        Column("operation", "operation"),
    ]
    if multi_host:
        cols.insert(3, Column("host", "host"))
    if "beyond_xprof" in top and top["beyond_xprof"].any():
        cols.insert(-2, Column("beyond_xprof", "ours only", "bool"))
    return Table(top, cols, csv="top_ops.csv", sort=("total_self_time_us", "desc"))


# Suggestions by severity, the strongest first.
SEVERITY_ORDER = {"high": 0, "medium": 1}


def suggestions_table(sugg: pd.DataFrame) -> Table:
    """The rules that fire: severity, rule, what it says, the figures that made it fire and
    the view to open (``tw.views.<view>(run)``)."""
    cols = [
        Column("severity", "severity", colors={"high": "tf-bad", "medium": "tf-muted"}),
        Column("rule", "rule"),
        Column("text", "suggestion"),
        Column("evidence", "evidence"),
        Column("open", "view to open"),
    ]
    return Table(sugg, cols, csv="suggestions.csv")


def ordered_suggestions(sugg: pd.DataFrame) -> pd.DataFrame:
    """The suggestions high first (the rules' own order within a severity), with the call
    that opens each one's view."""
    order = sugg["severity"].astype(str).map(SEVERITY_ORDER).fillna(2)
    out = sugg.iloc[order.argsort(kind="stable")].reset_index(drop=True)
    return out.assign(open="tw.views." + out["view"].astype(str) + "(run)")


BEYOND_XPROF_NOTE = (
    "Device ops marked 'ours only' are attributed from the kernels' TF op annotations "
    "('level 0'); TensorBoard (XProf 2.24) shows no device op for them, and its device IDLE "
    "includes their time."
)

BEYOND_XPROF_OTHERS = (
    "Device ops marked 'ours only' are attributed by this package's own rules; XProf 2.24 "
    "shows no device op for them, and its device IDLE includes their time."
)

BEYOND_XPROF_HOST = (
    "Host ops marked 'ours only' are XLA:CPU's work (its thunks), each counted for the "
    "framework op of the HLO instruction it ran; XProf 2.24 shows no op for it."
)

# What each source of the 16-bit share reads (OverviewSummary.precision_source).
PRECISION_SOURCES = {
    "programs": "the compiled programs' output types",
    "kernels": "the types in the kernels' names",
}


def _of(o: OverviewSummary) -> str:
    """What the 16-bit share is a share of."""
    return "device op time" if o.precision_source == "programs" else "kernel time"


class OverviewView(View):
    """TensorBoard's overview page for one run."""

    title = "Overview"

    def __init__(self, run) -> None:
        self.run = run
        self.summary: OverviewSummary = run.overview_summary
        self.steps = overview_steps(run.steps)
        sugg = getattr(run, "suggestions", None)
        self.suggestions = ordered_suggestions(sugg) if sugg is not None and len(sugg) else None

    def step_line(self) -> str:
        """The run's steps, counted as everywhere else (:class:`.results.StepCount`), and
        the step time averaged over the ones XProf keeps."""
        o, count = self.summary, self.run.step_count
        if not count.steps:
            return "No steps: this capture marks none, so there is no step time."
        if count.averaged == 1:
            return f"{count}: step time {o.step_time_ms_avg:,.2f} ms"
        return (
            f"{count}: average step time {o.step_time_ms_avg:,.2f} ms over "
            f"{count.averaged_text()} (σ {o.step_time_ms_std:,.2f}, min "
            f"{o.step_time_ms_min:,.2f}, max {o.step_time_ms_max:,.2f})"
            + (f"; {count.DROPPED}" if count.dropped else "")
        )

    def advice(self) -> list[str]:
        """The recommendations in our words; what to look at next only where there are
        steps to say it from (without them XProf's 'skip the rest' claims too much)."""
        o = self.summary
        words = rules_of(self.run).advice.in_our_words
        out = [self._precision_advice(r) or words(r) for r in o.recommendations]
        note = self.potentially_note()
        if note and o.input_statement in out:
            out.insert(out.index(o.input_statement) + 1, note)
        return out + [words(o.summary_next_step)] if o.n_steps else out

    def potentially_note(self) -> str:
        """XProf calls a run POTENTIALLY input-bound when input is under 5 % of step time and
        'All Others' at least 3 % (its InputAnalysis, thresholds checked in XProf's C++): the
        verdict stands as XProf's, with the input share it rests on beside it, so that a
        run with no input wait at all is not read as waiting for input."""
        o = self.summary
        if not o.input_statement.startswith("Your program is POTENTIALLY input-bound"):
            return ""
        busy = cpu_step_share(self.run, self.steps)
        if busy == busy and busy > 0:  # XLA on CPU: the program runs on XLA:CPU's threads
            why = (
                "is step time outside the step breakdown's events: XLA:CPU ran the program "
                f"(its thunks: the 'ours only' host ops) during {busy:.1f} % of the step time"
            )
        else:
            why = (
                "is step time no traced event accounts for: host-side Python, dispatch, or "
                "waits the profiler does not see"
            )
        return (
            f"Waiting for input itself takes {o.input_percent:.1f} % of the step time; "
            f"'All Others' ({o.all_other_percent:.1f} %) {why}."
        )

    def _precision_advice(self, advice: str) -> str | None:
        """XProf's 16-bit advice, where better evidence than XProf's says what share is
        16-bit: XProf reads op names only and advises "Only 0.0% ... 16 bit" on a bf16
        program, which this page's precision line contradicts. None: the advice stands as
        XProf gives it."""
        o = self.summary
        if o.precision_source == "xprof":
            return None
        if not advice.startswith("Only ") or "is 16 bit" not in advice:
            return None
        share = o.precision_16bit_percent
        source = PRECISION_SOURCES[o.precision_source]
        said = f"By {source} {share:.1f} % of {_of(o)} is already 16-bit."
        if share >= 50:
            return said
        return said + (
            " You might move more of it to bf16/f16 to improve performance, if the reduced "
            "accuracy is acceptable."
        )

    def precision_line(self) -> str:
        """The one 16-bit figure of the page, from the best evidence the capture holds (the
        compiled programs' types, else the types the kernels' names name, else XProf's
        rule); '' where there is no device compute to measure."""
        o = self.summary
        share, source = o.precision_16bit_percent, o.precision_source
        if source == "xprof":
            if not (o.device_compute_16bit_percent or o.device_compute_32bit_percent):
                return ""
            return (
                f"Device compute precision: 16-bit {o.device_compute_16bit_percent:.1f} %, "
                f"32-bit {o.device_compute_32bit_percent:.1f} %"
            )
        return (
            f"Device compute precision: 16-bit or narrower {share:.1f} % of {_of(o)}, by "
            f"{PRECISION_SOURCES[source]} (ours: XProf's rule reads only 'half' and 'fp16' in "
            "op and kernel names)"
        )

    def tools(self) -> list[str]:
        return [TOOL_CALLS.get(t, t) for t in self.summary.tools]

    def placement_lines(self) -> list[str]:
        """Where the ops ran, by executions (TensorBoard's figure) and by time, and on
        TPUs the cores' duty cycle and idle shares. Figures a run of tool data does not
        record are NaN and left out."""
        o, lines = self.summary, []
        rules = rules_of(self.run)
        ops = rules.op_label[0].upper() + rules.op_label[1:]
        # Eager execution and TensorBoard's op placement are TensorFlow's: a JAX or PyTorch
        # run reads neither ("eager: host 0.0 %" on PyTorch says nothing true).
        tf = "tensorflow" in rules

        def known(*xs: float) -> bool:
            return all(x == x for x in xs)

        if known(o.host_op_occurrence_percent):
            lines.append(
                f"{ops} executions: host {o.host_op_occurrence_percent:.1f} %, device "
                f"{o.device_op_occurrence_percent:.1f} %"
                + (" (TensorBoard's op placement)" if tf else "")
            )
        if known(o.host_op_time_percent):
            eager = (
                f"; eager: host {o.eager_host_op_percent:.1f} %, device "
                f"{o.eager_device_op_percent:.1f} %"
                if tf and known(o.eager_host_op_percent)
                else ""
            )
            lines.append(
                f"{ops} time: host {o.host_op_time_percent:.1f} %, device "
                f"{o.device_op_time_percent:.1f} %{eager}"
            )
        if o.hardware_type == "TPU" and known(o.device_duty_cycle_percent):
            lines.append(
                f"TPU duty cycle {o.device_duty_cycle_percent:.1f} %; idle: device "
                f"{o.device_idle_percent:.1f} %, host {o.host_idle_percent:.1f} %"
            )
        top = o.top_ops
        if "beyond_xprof" in top and top["beyond_xprof"].any():
            on_host = (top.loc[top["beyond_xprof"], "host_or_device"] == "Host").all()
            lines.append(
                BEYOND_XPROF_HOST if on_host else BEYOND_XPROF_NOTE if tf else BEYOND_XPROF_OTHERS
            )
        return lines

    def findings(self) -> list[str]:
        o = self.summary
        lines = [self.step_line()]
        if o.n_steps:
            parts = ", ".join(
                f"{k.removesuffix('_us').replace('_', ' ')} {v:,.2f} ms"
                for k, v in o.breakdown_ms_avg.items()
                if v > 0
            )
            lines.append(f"Breakdown per step: {parts}")
        advice = self.advice()
        if o.input_statement not in advice:
            lines.append(o.input_statement)
        lines.append(self.precision_line())
        lines += self.placement_lines()
        lines += advice
        lines += self.suggestion_lines()
        return [s for s in lines if s]

    def suggestion_lines(self) -> list[str]:
        """One line per suggestion that fires: severity, rule, text, evidence, view."""
        if self.suggestions is None:
            return []
        return [
            f"Suggestion ({r.severity}) {r.rule}: {r.text} [{r.evidence}] -> {r.open}"
            for r in self.suggestions.itertuples()
        ]

    def header(self) -> str:
        o = self.summary
        rows = [f"<b>{esc(self.step_line())}</b>"]
        if o.n_steps:
            rows.append(f"Breakdown per step: {swatches(o.breakdown_ms_avg)}")
        if self.precision_line():
            rows.append(esc(self.precision_line()))
        rows += [esc(line) for line in self.placement_lines()]
        rows.append(
            f"Run environment: {plural(len(o.hosts), 'host')} "
            f"({esc(', '.join(o.hosts))}); device type {esc(o.device_type)}"
            + (f", {plural(o.device_core_count, 'device')}" if o.device_core_count else "")
        )
        advice = "".join(f"<li>{esc(r)}</li>" for r in self.advice())
        tools = ", ".join(f"<code>{esc(t)}</code>" for t in self.tools())
        rows.append(f"<b>Recommendations</b><ul>{advice}</ul>Views to open next: {tools}")
        return "".join(f"<div>{r}</div>" for r in rows)

    def blocks(self, **_) -> list:
        out: list = [Html(self.header())]
        if self.suggestions is not None:
            table = suggestions_table(self.suggestions)
            out.append(TableBlock("suggestions", table, "Suggestions (rules that fire)"))
        if len(self.steps):
            out.append(Plots([Plot("step_time", step_time_figure(self.steps))]))
        top = self.summary.top_ops
        if len(top):
            multi = top["host"].nunique() > 1 if "host" in top else False
            out.append(TableBlock("top_ops", top_ops_table(top, multi), "Top ops by self time"))
        return out


def overview(run) -> OverviewView:
    """The overview page of a run, as TensorBoard's Profile tab opens it.

    Shows the steps and their average time (the steps XProf keeps), the step-time graph (one
    stacked bar per step: device compute, input, kernel launch, host compute, all others),
    the 16-bit share of device compute, where ops ran, the run's environment, the verdict
    (input-, launch- or collective-bound) with what to do next, the suggestions that fire
    (``run.suggestions``: rule, severity, text, evidence and the view to open) and the top
    ten ops by self time.

    Args:
        run: a loaded :class:`~tfprof_widgets.Run` (``tw.load(path)``).

    Returns:
        An :class:`OverviewView`: end a cell with it, or ``display(...)`` it; ``.text()``
        gives its findings as plain text. The numbers are ``run.overview_summary``.

    Example::

        run = tw.load("logs/")
        tw.views.overview(run)
    """
    return OverviewView(run)
