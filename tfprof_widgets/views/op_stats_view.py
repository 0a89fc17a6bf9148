"""TF op stats: pies of self time by op and by type, host and device, and the op table."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd

from ..analysis.nesting import group_numbers
from ..analysis.results import plural
from ..frameworks import rules_of
from ._common import of_run
from ._pies import NO_PIE_NOTE, PIE_SLICES, pie_plot, pie_row, top_slices, worth_a_pie
from .base import Choice, Html, Panel, TableBlock, View
from .hlo_op_profile_view import duration_text, time_columns
from .names import short_op_name
from .tables import Column, Table

__all__ = ["OpStatsView", "op_stats", "pie_values"]

PCT = ("self_time_percent", "cumulative_self_time_percent")
# An op's line (run.source_lines' mapping), and the click on it that opens its listing.
SOURCE_TITLE = (
    "file:line of the user's program that made the op, the heaviest where several did "
    "(click: its lines)"
)
SOURCE_LINKS = [{"panel": "source", "column": "source", "cell": "source"}]
KEY = ["host", "host_or_device", "type", "operation", "is_eager"]


def pie_values(ops: pd.DataFrame, by: str, top: int = PIE_SLICES) -> pd.Series:
    """Self time (µs) per ``by`` (operation or type), the largest ``top`` and 'Other'."""
    s = ops.groupby(by, observed=True)["total_self_time_us"].sum()
    return top_slices(s, top)


def _with_percents_without_idle(with_idle: pd.DataFrame, without: pd.DataFrame) -> pd.DataFrame:
    """The op table with IDLE, its percentages renamed ``*_with_idle``, and those of the
    table without IDLE beside them (NaN on IDLE rows): a left merge on :data:`KEY`, made by
    matching each row's key codes (pandas' merge factorizes thousands of op names as strings, a cost
    the view feels on the 8-GPU BERT capture: docs/speed.md). Key columns come out as the merge
    makes them: a categorical whose categories differ between the tables as strings."""
    df = with_idle.rename(columns={c: f"{c}_with_idle" for c in PCT})
    keys = [k for k in KEY if k in df]
    mine = without[keys + list(PCT)]
    if not len(mine) or not len(df):  # nothing to match: pandas' own dtypes of an empty side
        return df.merge(mine, on=keys, how="left", sort=False)
    left, right = [], []
    for k in keys:
        a, b = df[k], mine[k]
        if isinstance(a.dtype, pd.CategoricalDtype) and isinstance(b.dtype, pd.CategoricalDtype):
            at = a.cat.categories.get_indexer(b.cat.categories)
            at = np.where(at >= 0, at, -2)
            left.append(np.asarray(a.array.codes, np.int64))
            right.append(np.append(at, -2)[np.asarray(b.array.codes)])  # -2: not on the left
        elif a.dtype == bool and b.dtype == bool:
            left.append(a.to_numpy().astype(np.int64))
            right.append(b.to_numpy().astype(np.int64))
        else:
            return df.merge(mine, on=keys, how="left", sort=False)
    code = group_numbers([np.concatenate([a, b]) for a, b in zip(left, right)])
    lcode, rcode = code[: len(df)], code[len(df) :]
    if len(np.unique(rcode)) < len(rcode) or any((r < -1).any() for r in right):
        return df.merge(mine, on=keys, how="left", sort=False)
    at = pd.Index(rcode).get_indexer(lcode)
    df = df.reset_index(drop=True)
    for k in keys:
        if not _merge_keeps(df[k].dtype, mine[k].dtype):
            df[k] = df[k].astype(str)
    for c in PCT:
        v = mine[c].to_numpy(dtype=float)
        df[c] = np.where(at >= 0, v[np.maximum(at, 0)], np.nan)
    return df


def _merge_keeps(a, b) -> bool:
    """Whether pandas' merge keeps the left key's dtype ``a`` against the right's ``b``:
    anything but a categorical it does; a categorical where ``b`` is one of the same
    categories up to their order (else its values come out as strings)."""
    if not isinstance(a, pd.CategoricalDtype):
        return True
    return (
        isinstance(b, pd.CategoricalDtype)
        and len(a.categories) == len(b.categories)
        and set(a.categories) == set(b.categories)
    )


def _short_type(full: str, **_) -> str:
    return short_op_name(full, 36)


def _short_op(full: str, max_chars: int = 44, **_) -> str:
    return short_op_name(full, max_chars)


class OpStatsView(View):
    """Pies and the op table (sortable, filterable, CSV), IDLE in or out by a checkbox."""

    title = "TensorFlow op stats"
    TABLE_COLUMNS = [
        "host",
        "host_or_device",
        "type",
        "operation",
        "occurrences",
        "total_time_us",
        "avg_time_us",
        "total_self_time_us",
        "avg_self_time_us",
        "self_time_percent",
        "cumulative_self_time_percent",
        "is_eager",
    ]

    def __init__(self, run, include_idle: bool = False) -> None:
        from ..analysis.op_stats import op_stats

        self.run = run
        frameworks = rules_of(run)
        self.title = f"{frameworks.title} op stats" if frameworks.found else "Op stats"
        self.include_idle = include_idle
        self._with_idle = run.ops
        self._without_idle = of_run(run, "op_stats", lambda: op_stats(run, include_idle=False))

    @property
    def ops(self) -> pd.DataFrame:
        return self._with_idle if self.include_idle else self._without_idle

    def filtered(
        self,
        name_regex: str = "",
        op_type: str | None = None,
        side: str | None = None,
        sort_by: str = "total_self_time_us",
        ascending: bool = False,
    ) -> pd.DataFrame:
        """The table as a DataFrame, filtered like the view's filter box: ops whose name
        matches ``name_regex`` (case-insensitive), of ``op_type``, on ``side``
        ('Host'/'Device'), sorted by ``sort_by``."""
        df = self.ops
        if name_regex:
            try:
                pat = re.compile(name_regex, re.IGNORECASE)
            except re.error as exc:
                raise ValueError(f"invalid name filter {name_regex!r}: {exc}") from None
            df = df[df["operation"].astype(str).str.contains(pat)]
        if op_type:
            df = df[df["type"].astype(str) == op_type]
        if side:
            df = df[df["host_or_device"].astype(str) == side]
        return df.sort_values(sort_by, ascending=ascending, kind="stable")[self.TABLE_COLUMNS]

    def table(self) -> Table:
        """All ops with IDLE; the percentages both without IDLE (``*_percent``) and with it
        (``*_percent_with_idle``); the checkbox picks rows and columns."""
        # One table for every op stats view of the run: it merges the two tables (and the
        # payload encodes its thousands of rows) once.
        return of_run(self.run, "op_stats.table", self._table)

    def _table(self) -> Table:
        from .source_lines_view import line_of_name

        df = _with_percents_without_idle(self._with_idle, self._without_idle)
        df = df.assign(source=line_of_name(self.run, df["operation"]))
        multi = df["host"].nunique() > 1
        # A TPU's copy-done summed over a capture reads 77,773,215.7 µs: in ms above a second.
        df, self_cols = time_columns(df, "total_self_time_us", "self time")
        df, total_cols = time_columns(df, "total_time_us", "total time")
        cols = [
            *self_cols,
            Column("self_time_percent", "self %", "pct", digits=1),
            Column("cumulative_self_time_percent", "cum. %", "pct", digits=1),
            Column("self_time_percent_with_idle", "self % (with IDLE)", "pct", digits=1),
            Column("cumulative_self_time_percent_with_idle", "cum. % (with IDLE)", "pct", digits=1),
            *total_cols,
            Column(
                "avg_self_time_us",
                "avg self (µs)",
                digits=2,
                ratio=("total_self_time_us", "occurrences"),
            ),
            Column(
                "avg_time_us",
                "avg total (µs)",
                digits=2,
                ratio=("total_time_us", "occurrences"),
            ),
            Column("occurrences", "count", "int"),
            Column("is_eager", "eager", "bool", hidden=not df["is_eager"].any()),
            Column("beyond_xprof", "ours only", "bool", hidden=not df["beyond_xprof"].any()),
            Column("host_or_device", "on"),
            *([Column("host", "host")] if multi else [Column("host", hidden=True)]),
            Column("type", "type"),
            Column("source", "source", title=SOURCE_TITLE),
            Column("operation", "operation"),
        ]
        return Table(df, cols, csv="op_stats.csv", sort=("total_self_time_us", "desc"))

    def panels(self) -> list[Panel]:
        from .source_lines_view import source_panel

        table = self.table()
        if not len(table.df) or not (table.df["source"] != "").any():
            return []
        heavy = table.df.sort_values("total_self_time_us", ascending=False, kind="stable")
        return [source_panel(self.run, heavy["source"])]

    def choices(self) -> list[Choice]:
        has_idle = (self._with_idle["type"] == "IDLE").any()
        if not has_idle:
            return []
        return [Choice("include_idle", "Include IDLE", self.include_idle, kind="checkbox")]

    def blocks(self, include_idle: bool | None = None, **_) -> list:
        idle = self.include_idle if include_idle is None else include_idle
        ops = self._with_idle if idle else self._without_idle
        plots = []
        # The few columns the pies read, each side's rows taken once (not the whole table).
        self_t = ops["total_self_time_us"].to_numpy()
        real_rows = (ops["type"] != "IDLE").to_numpy()
        beyond = ops["beyond_xprof"].to_numpy()
        for side in ("Host", "Device"):
            on = (ops["host_or_device"] == side).to_numpy()
            if not on.any() or not (self_t[on] > 0).any():
                continue
            sub = ops.loc[on, ["operation", "type", "total_self_time_us"]]
            real = on & real_rows
            ours_only = bool(real.any()) and bool(beyond[real].all())
            for by, label, shorten in (
                ("operation", "op", _short_op),
                ("type", "op type", _short_type),
            ):
                values = pie_values(sub, by)
                if not worth_a_pie(values):
                    continue
                plots.append(
                    pie_plot(
                        f"{side.lower()}_{by}",
                        values,
                        f"{side} self time by {label}" + (" (ours only)" if ours_only else ""),
                        shorten,
                        click={
                            "table": "ops",
                            "column": by,
                            "where": ["host_or_device", side],
                            "prefix": f"{side} {label}: ",
                        },
                        fallbacks=({"max_chars": 80},),
                    )
                )
        out: list = []
        if plots:
            out.append(pie_row(plots))
        elif (ops["total_self_time_us"] > 0).any():
            out.append(Html(f"<p class='tf-muted'>{NO_PIE_NOTE}</p>"))
        pct_hide = [f"{c}_with_idle" for c in PCT] if not idle else list(PCT)
        preset = {"hide": pct_hide}
        if not idle:
            preset["exclude"] = {"type": ["IDLE"]}
        out.append(
            TableBlock(
                "ops",
                self.table(),
                "Ops (click a pie slice to filter; click a header to sort; a source cell "
                "opens its line)",
                preset,
                links=SOURCE_LINKS,
            )
        )
        return out

    def findings(self) -> list[str]:
        ops = self.ops
        real = ops[ops["type"] != "IDLE"]
        lines = [
            f"{plural(len(ops), 'row')} ({(ops['host_or_device'] == 'Host').sum():,} host, "
            f"{(ops['host_or_device'] == 'Device').sum():,} device), IDLE "
            + ("included" if self.include_idle else "excluded")
        ]
        ours = real[real["beyond_xprof"] & (real["host_or_device"] == "Device")]
        if len(ours):
            lines.append(
                f"{plural(len(ours), 'device op row')} {'is' if len(ours) == 1 else 'are'} "
                f"ours only: {ours_only_how(self.run)}; its device IDLE includes their time"
            )
        host = real[real["beyond_xprof"] & (real["host_or_device"] == "Host")]
        if len(host):  # XLA:CPU's thunks (frameworks/xla/cpu.py)
            lines.append(
                f"{plural(len(host), 'host op row')} {'is' if len(host) == 1 else 'are'} "
                f"ours only: {HOST_OURS_ONLY}"
            )
        for side in ("Device", "Host"):
            s = real[real["host_or_device"] == side]
            if len(s) and s["total_self_time_us"].sum() > 0:
                top = s.loc[s["total_self_time_us"].idxmax()]
                share = 100 * top["total_self_time_us"] / s["total_self_time_us"].sum()
                lines.append(
                    f"Largest {side.lower()} op: {top['operation']} ({top['type']}), "
                    f"{duration_text(top['total_self_time_us'])} self time, {share:.1f} % of "
                    f"{side.lower()} op time"
                )
        return lines


# How the host rows beyond XProf were made (the only ones: XLA:CPU's thunks).
HOST_OURS_ONLY = (
    "XLA:CPU's work (its thunks), each counted for the framework op of the HLO instruction "
    "it ran; XProf 2.24 shows no op for it"
)


def ours_only_how(run) -> str:
    """How a framework's 'ours only' device ops were attributed, in its own words, and
    that XProf does not attribute them (the op stats' note)."""
    names = getattr(getattr(run, "framework", None), "names", ())
    if "tensorflow" in names:
        return (
            "attributed from the kernels' TF op annotations ('level 0'), which TensorBoard "
            "(XProf 2.24) does not read"
        )
    if "xla" in names:
        return (
            "kernels XLA launched inside CUDA graphs (command buffers), attributed to the "
            "HLO instruction that emitted them, which XProf 2.24 leaves out"
        )
    return "attributed by this package's own rules, where XProf 2.24 shows no device op"


def op_stats(run, include_idle: bool = False) -> OpStatsView:
    """The ops of a run by self time: pies by op and by op type on the host and the device,
    and the op table (a click on a slice filters it; filter by text or regex; CSV).

    Args:
        run: a loaded :class:`~tfprof_widgets.Run`.
        include_idle: count the device's and host's IDLE time as an op (TensorBoard's
            "Include IDLE" box; the view's own checkbox switches it too).

    Returns:
        An :class:`OpStatsView` (end a cell with it); ``run.ops`` holds the numbers as a
        DataFrame.
    """
    return OpStatsView(run, include_idle)
