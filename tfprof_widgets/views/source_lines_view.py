"""Source lines: a line profiler of the user's program across frameworks: the lines with the
most device time first, and for a chosen file its lines with their time beside them (the
file's text where this machine can read it)."""

from __future__ import annotations

from ..analysis.source_lines import file_lines, line_coverage, source_text
from ._common import ranked_bars
from .base import Choice, Html, Plot, Plots, TableBlock, View
from .page.display import esc
from .tables import Column, Table

__all__ = ["SourceLinesView", "source_lines"]

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
        out.append(TableBlock("lines", self.table(), "Lines (heaviest device time first)"))
        return out

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
