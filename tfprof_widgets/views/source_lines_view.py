"""Source lines: a line profiler of the user's program across frameworks: the lines with the
most device time first, and for a chosen file its lines with their time beside them (the
file's text where this machine can read it)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..analysis.source_lines import file_lines, line_coverage, source_text
from ._common import of_run, ranked_bars
from .base import Choice, Html, Panel, Plot, Plots, TableBlock, View
from .page.display import esc
from .tables import Column, Table

__all__ = [
    "SourceLinesView",
    "line_of_instruction",
    "line_of_name",
    "source_lines",
    "source_panel",
]

TOP = 15
# Lines shown around the timed lines of a file (context above and below each).
CONTEXT = 2
# The most lines of a file listed (a listing of 10^5 lines is no reading aid).
MAX_LISTED = 2000
ALL = ""
LISTING_HEADER = f"{'device µs':>12} {'host µs':>12} {'line':>6}"


class SourceLinesView(View):
    title = "Source lines"

    def __init__(self, run, file: str | None = None) -> None:
        self.run = run
        self.lines = run.source_lines
        files = self.lines["source_file"].astype(str)
        by_file = (
            self.lines.assign(f=files.to_numpy())[files.to_numpy() != ""]
            .groupby("f")["device_time_us"]
            .sum()
            .sort_values(ascending=False, kind="stable")
        )
        self.files = by_file.index.tolist()
        self.file = file if file is not None else ALL
        self._where = (files + ":" + self.lines["source_line"].astype(str)).to_numpy(object)

    def choices(self) -> list[Choice]:
        if not self.files:
            return []
        shown = self.files[:8] + (
            [self.file] if self.file and self.file not in self.files[:8] else []
        )
        options = [("top lines (every file)", ALL)] + [(_short(f), f) for f in shown]
        return [Choice("file", "file", self.file, options)]

    def blocks(self, file: str = ALL, **_) -> list:
        if not len(self.lines):
            return [Html(f"<p class='tf-muted'>{esc(self.empty_text())}</p>")]
        out: list = [Html(f"<p>{esc(self.summary())}</p>")]
        if file:
            out.append(Html(self.listing_html(file)))
        else:
            out.append(Plots([Plot("top_lines", self.bars_figure(), click=None)]))
        out.append(
            TableBlock(
                "lines",
                self.table(),
                "Lines (heaviest device time first; click a line for its listing)",
                links=[{"panel": "source", "column": "location"}],
            )
        )
        return out

    def panels(self) -> list[Panel]:
        known = (self.lines["source_file"].astype(str) != "").to_numpy()
        return [source_panel(self.run, self._where[known])] if known.any() else []

    def summary(self) -> str:
        t = self.lines
        cov = line_coverage(t)
        known = int((t["source_file"].astype(str) != "").sum())
        share = f"{cov:.1f} %" if cov == cov else "none"
        return (
            f"{known:,} source lines; {share} of the ops' device time "
            f"({t['device_time_us'].sum():,.1f} µs) lands on a line the capture names."
        )

    def bars_figure(self):
        t = self.lines[(self.lines["source_file"].astype(str) != "").to_numpy()].head(TOP)
        t = t.iloc[::-1]
        where = self._where[t.index.to_numpy()]
        labels = [f"{_short(w)} {fn}"[:70] for w, fn in zip(where, t["function"].astype(str))]
        return ranked_bars(
            labels,
            t["device_time_us"].tolist(),
            [f"{p:.1f} % · {o}"[:120] for p, o in zip(t["device_time_percent"], t["top_op"])],
            f"Device time by source line (top {len(t)})",
            "µs",
            ",.1f",
            20,
        )

    def table(self) -> Table:
        t = self.lines.assign(location=self._where)
        cols = [
            Column("device_time_us", "device (µs)", digits=1),
            Column("device_time_percent", "device %", "pct", digits=1),
            Column("host_time_us", "host (µs)", digits=1),
            Column("occurrences", "events", "int", title="device events of the line's ops"),
            Column("ops", "ops", "int", title="distinct ops of the line"),
            Column("framework", "framework"),
            Column("function", "function"),
            Column("top_op", "top op", title="the line's op with the most device time"),
            Column("location", "file:line"),
        ]
        return Table(
            t,
            cols,
            csv="source_lines.csv",
            sort=("device_time_us", "desc"),
            empty="No op names a source line.",
        )

    def listing(self, file: str) -> list[tuple[int, str, float, float]]:
        """(line, text, device µs, host µs) of ``file``: its timed lines with CONTEXT lines
        around them where the file is readable here, else the timed lines alone ('' text)."""
        timed = file_lines(self.lines, file)
        dev = dict(zip(timed["source_line"].tolist(), timed["device_time_us"].tolist()))
        host = dict(zip(timed["source_line"].tolist(), timed["host_time_us"].tolist()))
        text = source_text(file)
        if text is None:
            shown = sorted(dev)
        else:
            near = {k + d for k in dev for d in range(-CONTEXT, CONTEXT + 1)}
            shown = sorted(k for k in near if 1 <= k <= len(text))
        shown = shown[:MAX_LISTED]
        return [
            (
                k,
                text[k - 1] if text is not None and k <= len(text) else "",
                dev.get(k, 0.0),
                host.get(k, 0.0),
            )
            for k in shown
        ]

    def listing_html(self, file: str) -> str:
        rows = self.listing(file)
        readable = source_text(file) is not None
        head = f"<p><b>{esc(file)}</b>"
        if not readable:
            head += " <span class='tf-muted'>(not readable here: lines and times only)</span>"
        body = "\n".join([LISTING_HEADER, *(_listing_line(*r) for r in rows)])
        return f"{head}</p><pre><code>{esc(body)}</code></pre>"

    def line_html(self, location: str) -> str:
        """The listing of the file of ``location`` ('file:line') from :data:`AROUND` lines
        above the line to as many below, the line marked (what an op row opens)."""
        file, _, line = location.rpartition(":")
        at = int(line) if line.isdigit() else 0
        rows = [r for r in self.listing(file) if abs(r[0] - at) <= AROUND]
        readable = source_text(file) is not None
        head = f"<p><b>{esc(file)}</b>, line {at}"
        if not readable:
            head += " <span class='tf-muted'>(not readable here: lines and times only)</span>"
        body = [LISTING_HEADER] + [
            ("▶" if r[0] == at else " ") + _listing_line(*r)[1:] for r in rows
        ]  # fmt: skip
        return f"{head}</p><pre><code>{esc(chr(10).join(body))}</code></pre>"

    def findings(self) -> list[str]:
        if not len(self.lines):
            return [self.empty_text()]
        out = [self.summary()]
        if self.file:
            out += [self.file, LISTING_HEADER]
            out += [_listing_line(*r) for r in self.listing(self.file)]
            return out
        t = self.lines.head(10)
        for i, (us, pct, fn) in enumerate(
            zip(t["device_time_us"], t["device_time_percent"], t["function"].astype(str))
        ):
            where = self._where[t.index[i]] if t["source_file"].iat[i] != "" else "(no line)"
            out.append(f"{pct:6.1f} % {us:12,.1f} µs  {where} {fn}".rstrip())
        return out

    def empty_text(self) -> str:
        note = self.lines.attrs.get("note", "")
        return note or "No op of this capture names a source line."


def _listing_line(line: int, text: str, device_us: float, host_us: float) -> str:
    dev = f"{device_us:12,.1f}" if device_us else " " * 12
    host = f"{host_us:12,.1f}" if host_us else " " * 12
    return f"{dev} {host} {line:6d}  {text}".rstrip()


def _short(path: str, keep: int = 60) -> str:
    """A long path cut from the left (the file name is what tells lines apart)."""
    return path if len(path) <= keep else "…" + path[-(keep - 1) :]


def source_lines(run, file: str | None = None) -> SourceLinesView:
    """Device time per line of the user's source (``run.source_lines``): the top lines, or
    one file's lines with their time beside them."""
    return SourceLinesView(run, file)


# -- the source line of each op row (op profile, op stats, roofline, PyTorch operators) --------
#: Lines of the file shown around a line a row opens.
AROUND = 8
#: The most lines whose listing a view sends with it (one per distinct line of its rows).
MAX_LINE_PANELS = 300


def _op_lines(run) -> pd.DataFrame:
    """Every op of :func:`~tfprof_widgets.frameworks.source_lines.op_sources` that names a line
    (the mapping ``run.source_lines`` sums): op_name, op_id, framework, location
    ('file:line') and weight (device ps, else host ps)."""
    # The frameworks' ops and their lines, as run.source_lines reads them (the analysis's
    # input, reached through it: views use no framework module of their own).
    from ..analysis.source_lines import op_sources

    def compute() -> pd.DataFrame:
        ops = op_sources(run)
        ops = ops[(ops["source_file"].astype(str) != "").to_numpy()]
        where = ops["source_file"].astype(str) + ":" + ops["source_line"].astype(str)
        weight = np.where(ops["device_ps"] > 0, ops["device_ps"], ops["host_ps"])
        return pd.DataFrame(
            {
                "op_name": ops["op_name"].astype(str).to_numpy(object),
                "op_id": ops["op_id"].to_numpy(np.int64),
                "framework": ops["framework"].astype(str).to_numpy(object),
                "location": where.to_numpy(object),
                "weight": np.asarray(weight, np.int64),
            }
        )

    return of_run(run, "op_lines", compute)


def line_of_name(run, names) -> np.ndarray:
    """The 'file:line' of each framework op name (a JAX/TF op, a PyTorch operator) in
    ``names``: the line where the op's time is largest, '' where no op of that name names a
    line (an op made at several lines shows its heaviest; the source lines view lists all)."""
    if _instructions(run) > LINE_TABLE_MAX:
        ops = _stats_lines(run)
    else:
        ops = _op_lines(run)
    best = (
        ops.groupby(["op_name", "location"], sort=False)["weight"].sum().reset_index()
        .sort_values("weight", ascending=False, kind="stable")
        .drop_duplicates("op_name").set_index("op_name")["location"]
    )  # fmt: skip
    keys = pd.Series(names, dtype=object).astype(str)
    # An XLA op name is the framework op's path; an op row may name it with a trailing ':',
    # or by its HLO instruction where XLA made it without a framework op (a fusion).
    # As objects: with no line anywhere the maps give float NaN, which '' may not fill.
    found = keys.map(best).astype(object).fillna(keys.str.rstrip(":").map(best).astype(object))
    if found.isna().any() and "op_id" in ops and (ops["framework"] != "PyTorch").any():
        found = found.fillna(keys.map(_by_instruction(run, ops)))
    return found.fillna("").to_numpy(object)


def _by_instruction(run, ops: pd.DataFrame) -> pd.Series:
    """'file:line' by HLO instruction name (its heaviest over programs)."""
    xla = ops[(ops["framework"] != "PyTorch").to_numpy()]
    names = run.hlo_instructions["instruction"].astype(str).to_numpy()[xla["op_id"].to_numpy()]
    return (
        xla.assign(instruction=names).sort_values("weight", ascending=False, kind="stable")
        .drop_duplicates("instruction").set_index("instruction")["location"]
    )  # fmt: skip


def line_of_instruction(run, program_ids, names) -> np.ndarray:
    """The 'file:line' of each HLO instruction (program id, instruction name): the line
    ``run.source_lines`` counts its time under ('' where none). Programs of more than
    :data:`LINE_TABLE_MAX` instructions in all take the instruction's own metadata line
    (``run.hlo_stats``' ``source_info``) instead: ``run.source_lines`` reads every
    instruction of every program (tens of seconds for 10^6), an op table only those that
    ran (a fusion without a line of its own then shows none, not its root's)."""
    if _instructions(run) > LINE_TABLE_MAX:
        return _own_lines(run, program_ids, names)
    ops = _op_lines(run)
    h = run.hlo_instructions
    xla = ops[(ops["framework"] != "PyTorch").to_numpy()]
    at = xla["op_id"].to_numpy(np.int64)
    table = pd.Series(
        xla["location"].to_numpy(object),
        index=pd.MultiIndex.from_arrays(
            [h["program_id"].to_numpy(np.int64)[at], h["instruction"].astype(str).to_numpy()[at]]
        ),
    )
    table = table[~table.index.duplicated()]
    want = pd.MultiIndex.from_arrays(
        [np.asarray(program_ids, np.int64), pd.Series(names, dtype=object).astype(str).to_numpy()]
    )
    return table.reindex(want).fillna("").to_numpy(object)


#: Above this many instructions in all programs, op rows take their own metadata line.
LINE_TABLE_MAX = 200_000


def _instructions(run) -> int:
    return sum(len(c.instructions) for _h, _p, m in run.hlo_modules for c in m.computations)


def _own_lines(run, program_ids, names) -> np.ndarray:
    """'file:line' of each (program id, instruction) from ``run.hlo_stats``' source_info."""
    s = run.hlo_stats
    table = pd.Series(
        s["source_info"].astype(str).to_numpy(object),
        index=pd.MultiIndex.from_arrays(
            [s["program_id"].to_numpy().astype(np.int64), s["hlo_op_name"].astype(str).to_numpy()]
        ),
    )
    table = table[~table.index.duplicated()]
    want = pd.MultiIndex.from_arrays(
        [np.asarray(program_ids, np.int64), pd.Series(names, dtype=object).astype(str).to_numpy()]
    )
    return table.reindex(want).fillna("").to_numpy(object)


def _stats_lines(run) -> pd.DataFrame:
    """:func:`_op_lines`' op_name, location and weight from ``run.hlo_stats`` (each op that
    ran, by its framework op and by its instruction name), for programs too large for it."""
    s = run.hlo_stats
    where = s["source_info"].astype(str).to_numpy(object)
    keep = where != ""
    weight = s["total_time_us"].to_numpy(float)[keep]
    names = [s["tf_op_name"].astype(str).str.rstrip(":"), s["hlo_op_name"].astype(str)]
    return pd.DataFrame(
        {
            "op_name": np.concatenate([n.to_numpy(object)[keep] for n in names]),
            "location": np.concatenate([where[keep], where[keep]]),
            "weight": np.concatenate([weight, weight]),
        }
    )


def source_panel(run, locations) -> Panel:
    """The source lines view at each 'file:line' of ``locations`` (the heaviest
    :data:`MAX_LINE_PANELS` kept): the file's lines around it with their device and host time
    beside them, the line marked; what an op row's 'source' cell opens."""
    missing = "No listing sent for {key}: tw.views.source_lines(run, file=...) lists the file."
    if _instructions(run) > LINE_TABLE_MAX:
        # run.source_lines reads every instruction: the source lines view's own work.
        return Panel("source", "Source line", {}, missing)
    view = of_run(run, "source_lines_view", lambda: SourceLinesView(run))
    wanted = [w for w in dict.fromkeys(str(x) for x in locations) if w]
    rank = {w: i for i, w in enumerate(view._where)}
    wanted = sorted(wanted, key=lambda w: rank.get(w, len(rank)))[:MAX_LINE_PANELS]
    items = {w: [Html(view.line_html(w))] for w in wanted}
    return Panel("source", "Source line", items, missing)
