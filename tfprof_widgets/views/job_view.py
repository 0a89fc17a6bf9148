"""The job view of a distributed run: its ranks side by side.

Per rank (a host, its distributed rank where the capture names it, or each GPU of a host whose
GPUs mark their own steps): the step time and its breakdown, stacked; the straggler of each
step and why (:mod:`tfprof_widgets.analysis.stragglers`, the rule written there); HTA's
communication/computation overlap and idle time breakdown per rank, and its straggler
candidates (``run.straggler_candidates``) in one line under the verdict; and the collectives
table where the run has one. It takes a :class:`~tfprof_widgets.Run` or a pod dataset
(``tw.open(...)``), whose steps table gives each host's step time and breakdown; the tables a
pod does not hold are left out, said so.
"""

from __future__ import annotations

import pandas as pd

from ..analysis.steps import CATEGORIES, CATEGORY_LABELS
from ..analysis.stragglers import MAD_K, MIN_SHARE, stragglers_of, unit_steps
from ._common import of_run, quick_figure, slowest_first_bars
from .base import Choice, Html, Plot, Plots, TableBlock, View
from .page.display import esc
from .tables import Column, Table

__all__ = ["JobView", "job"]

AVERAGE = "avg"
MAX_STEP_CHOICES = 16
IDLE_COLORS = {"host_wait": "#d62728", "kernel_wait": "#ff7f0e", "other": "#7f7f7f"}
IDLE_LABELS = {
    "host_wait": "Host wait (launches late)",
    "kernel_wait": "Kernel wait (between kernels)",
    "other": "Other idle",
}
# run.collectives' columns as the job view shows them (schema.COLLECTIVES: each with its unit).
COLLECTIVE_COLUMNS = (
    Column("host", "host"),
    Column("rank", "rank", "int"),
    Column("device", "device"),
    Column("collective", "collective"),
    Column("name", "op"),
    Column("communicator", "communicator"),
    Column("group_size", "ranks in group", "int"),
    Column("size_bytes", "size (MiB)", "bytes"),
    Column("count", "count", "int"),
    Column("total_time_us", "time (µs)", digits=1),
    Column("algbw_gbps", "algbw (GB/s)", digits=2),
    Column("busbw_gbps", "busbw (GB/s)", digits=2),
)


def _table_of(source, name: str) -> pd.DataFrame | None:
    """The source's analysis ``name`` where it has one as a DataFrame (a pod lacks most)."""
    try:
        value = getattr(source, name, None)
    except (AttributeError, NotImplementedError):
        return None
    return value if isinstance(value, pd.DataFrame) else None


def _units_of(source) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(each rank's steps with their breakdown, the straggler test) of a Run or a pod."""
    if hasattr(source, "events") and hasattr(source, "stat_store"):  # a loaded Run
        return of_run(source, "job_units", lambda: unit_steps(source)), source.stragglers
    steps = _table_of(source, "steps")
    if steps is None:
        raise TypeError(
            f"job takes a Run or a pod dataset (tw.open(...)); got {type(source).__name__}"
        )
    if "step_time_us" not in steps and set(CATEGORIES) <= set(steps):
        steps = steps.assign(step_time_us=steps[list(CATEGORIES)].sum(axis=1))
    units = steps.assign(host=steps["host"].astype(str))
    units = units[units["step"].notna()]
    checked = stragglers_of(units)
    units = units.assign(unit=units["host"], rank=pd.array([None] * len(units), dtype="Int64"))
    return units, checked


def _unit_of_host_rank(checked: pd.DataFrame) -> dict[tuple[str, object], str]:
    """Per (host, rank): the label the ranks carry in the straggler table (one per host row)."""
    rows = checked[checked["device"].astype(str) == ""]
    return {
        (str(h), None if pd.isna(r) else int(r)): u
        for h, r, u in zip(rows["host"], rows["rank"], rows["unit"])
    }


class JobView(View):
    title = "Job: ranks side by side"

    def __init__(self, source) -> None:
        self.source = source
        self.units, self.checked = _units_of(source)
        self.summary = self._summary()
        overlap = _table_of(source, "comm_comp_overlap")
        # A rank with no communication has no overlap to show (HTA's NaN).
        self.overlap = (
            overlap[overlap["communication_us"].to_numpy(float) > 0]
            if overlap is not None and "communication_us" in overlap
            else overlap
        )
        self.idle = _table_of(source, "idle_time_breakdown")
        self.collectives = _table_of(source, "collectives")
        self.candidates = _table_of(source, "straggler_candidates")

    def _summary(self) -> pd.DataFrame:
        """Per rank: its steps, average step time and categories, its straggler steps."""
        u = self.units
        if not len(u):
            return pd.DataFrame(columns=["unit", "steps", "step_time_us", *CATEGORIES])
        g = u.groupby("unit", sort=False)
        out = g[["step_time_us", *CATEGORIES]].mean()
        out.insert(0, "steps", g.size())
        flagged = self.checked[self.checked["is_straggler"]].groupby("unit").size()
        out["straggler_steps"] = flagged.reindex(out.index, fill_value=0).astype(int)
        out = out.reset_index()
        out["behind_median_us"] = out["step_time_us"] - out["step_time_us"].median()
        return out.sort_values(["step_time_us", "unit"], ascending=[False, True], kind="stable")

    # -- choices --------------------------------------------------------------------------
    def choices(self) -> list[Choice]:
        steps = self.checked["step"].dropna().unique()
        if len(steps) < 2:
            return []
        spread = self.checked.groupby("step")["step_time_us"].agg(lambda s: s.max() - s.min())
        picked = sorted(spread.sort_values(ascending=False).index[:MAX_STEP_CHOICES].tolist())
        opts = [(f"step {s} (spread {spread[s] / 1e3:,.2f} ms)", str(s)) for s in picked]
        return [Choice("step", "Show", AVERAGE, [("average over the steps", AVERAGE), *opts])]

    # -- the parts ------------------------------------------------------------------------
    def verdict(self) -> str:
        """The straggler of the job in one sentence (the worst flagged step), or why none."""
        c = self.checked
        ranks = c["unit"].nunique()
        if ranks < 2:
            return "One rank: nothing to compare." if ranks else "No steps."
        flagged = c[c["is_straggler"]]
        if not len(flagged):
            return (
                f"No straggler: in each of the {c['step'].nunique()} steps every one of the "
                f"{ranks} ranks is within {MAD_K:g} scaled MADs or {100 * MIN_SHARE:.0f} % of "
                "the other ranks' median step time."
            )
        worst = flagged.loc[(flagged["step_time_us"] - flagged["others_median_us"]).idxmax()]
        behind = worst["step_time_us"] - worst["others_median_us"]
        pct = 100 * behind / worst["others_median_us"] if worst["others_median_us"] else 0.0
        why = worst["why"]
        cause = (
            f"; most of the extra time is {CATEGORY_LABELS[why + '_us']} "
            f"(+{worst['why_excess_us'] / 1e3:,.2f} ms)"
            if why
            else ""
        )
        more = len(flagged) - 1
        return (
            f"{worst['unit']} is the straggler of step {worst['step']}: "
            f"{worst['step_time_us'] / 1e3:,.2f} ms, {behind / 1e3:,.2f} ms ({pct:.1f} %) "
            f"behind the other ranks' median{cause}."
            + (f" {more} more straggling (rank, step) in the table." if more else "")
        )

    def steps_figure(self, step: str = AVERAGE):
        if step == AVERAGE:
            frame, what = self.summary, "average step"
        else:
            sel = self.units[self.units["step"].astype(str) == step]
            frame = sel.sort_values("step_time_us", ascending=False, kind="stable")
            what = f"step {step}"
        ranks = frame["unit"].astype(str).tolist()
        return slowest_first_bars(frame, ranks, "rank", what, "job")

    def _rank_labels(self, table: pd.DataFrame) -> list[str]:
        """Each row's rank as the straggler table names it (host and rank columns)."""
        names = _unit_of_host_rank(self.checked)
        out = []
        for h, r in zip(table["host"].astype(str), table["rank"]):
            key = (h, None if pd.isna(r) else int(r))
            out.append(names.get(key) or (f"rank {r}" if pd.notna(r) else h))
        return out

    def overlap_figure(self):
        t = self.overlap
        ranks = self._rank_labels(t)
        pct = t["comp_comm_overlap_percent"].fillna(0.0).tolist()
        trace = {
            "type": "bar",
            "x": ranks,
            "y": pct,
            "marker": {"color": "#2ca02c"},
            "hovertemplate": "%{x}: %{y:.1f} % of communication overlapped<extra></extra>",
        }
        layout = {
            "title": {"text": "Communication overlapped by computation, per rank"},
            "height": 300,
            "margin": {"l": 10, "r": 10, "t": 50, "b": 40},
            "xaxis": {"type": "category", "title": {"text": "rank"}},
            "yaxis": {"title": {"text": "%"}, "range": [0, 100], "automargin": True},
        }
        return quick_figure([trace], layout)

    def idle_figure(self):
        t = self.idle.assign(unit=self._rank_labels(self.idle))
        wide = t.pivot_table(
            index="unit", columns="idle_category", values="idle_time_us", aggfunc="sum",
            observed=True, sort=False,
        )  # fmt: skip
        ranks = wide.index.astype(str).tolist()
        traces = [
            {
                "type": "bar",
                "name": IDLE_LABELS.get(str(cat), str(cat)),
                "x": ranks,
                "y": (wide[cat].fillna(0.0) / 1e3).tolist(),
                "marker": {"color": IDLE_COLORS.get(str(cat), "#17becf")},
                "hovertemplate": "%{x}: %{y:,.3f} ms<extra></extra>",
            }
            for cat in wide.columns
        ]
        layout = {
            "barmode": "stack",
            "title": {"text": "GPU idle time per rank, by cause (every stream)"},
            "height": 320,
            "margin": {"l": 10, "r": 10, "t": 70, "b": 40},
            "legend": {"orientation": "h", "y": 1.0, "yanchor": "bottom", "x": 0},
            "xaxis": {"type": "category", "title": {"text": "rank"}},
            "yaxis": {"title": {"text": "milliseconds"}, "automargin": True},
        }
        return quick_figure(traces, layout)

    def ranks_table(self) -> Table:
        cols = [
            Column("step_time_us", "step time (µs)", digits=1),
            Column("deviation_us", "vs median (µs)", digits=1, color="sign"),
            Column("median_us", "median (µs)", digits=1),
            Column("threshold_us", "threshold (µs)", digits=1,
                   title="The other ranks' median + max(3 scaled MADs, 5 %)"),
            Column("is_straggler", "straggler", "bool"),
            Column("why", "why", title="The category most above the other ranks' median"),
            Column("why_excess_us", "why: extra (µs)", digits=1),
            Column("step", "step", "int"),
            Column("unit", "rank"),
        ]  # fmt: skip
        return Table(self.checked, cols, csv="job_stragglers.csv", sort=("deviation_us", "desc"))

    def hta_candidates_line(self) -> str | None:
        """HTA's straggler candidates in one sentence, latest first, each with how much later
        than the earliest rank's its last long NCCL kernel of the step starts (the mean over
        the steps where there are several); None where HTA names none."""
        c = self.candidates
        if c is None or not len(c) or not c["is_candidate"].any():
            return None
        c = c[c["is_candidate"].to_numpy(bool)]
        label = [f"rank {r}" if pd.notna(r) else str(h) for h, r in zip(c["host"], c["rank"])]
        late = c.assign(label=label).groupby("label", sort=False)["after_first_us"].mean()
        late = late.sort_values(ascending=False, kind="stable")
        steps = c["step"].nunique()
        avg = f" on average over {steps} steps" if steps > 1 else ""
        parts = [
            f"{who} (its last long NCCL kernel starts {us / 1e3:,.2f} ms after the earliest "
            f"rank's{avg})"
            for who, us in late.items()
        ]
        return "HTA's straggler candidates: " + ", ".join(parts)

    def collectives_table(self) -> Table:
        t = self.collectives
        cols = [c for c in COLLECTIVE_COLUMNS if c.name in t]
        sort = ("total_time_us", "desc") if "total_time_us" in t else None
        return Table(t, cols, csv="job_collectives.csv", sort=sort)

    def blocks(self, step: str = AVERAGE, **_) -> list:
        if not len(self.checked):
            return [Html("<p class='tf-muted'>No steps: no step markers in this capture.</p>")]
        cls = "tf-bad" if self.checked["is_straggler"].any() else "tf-good"
        out: list = [
            Html(f"<p><b class='{cls}'>{esc(self.verdict())}</b></p>"),
            *[Html(f"<p>{esc(line)}</p>") for line in [self.hta_candidates_line()] if line],
            Plots(
                [
                    Plot(
                        "ranks",
                        self.steps_figure(step),
                        click={"table": "ranks", "column": "unit", "prefix": "rank: "},
                    )
                ]
            ),
            TableBlock("ranks", self.ranks_table(), "Each rank in each step (click a bar)"),
        ]
        return out + self._hta_blocks()

    def _hta_blocks(self) -> list:
        """Overlap, idle time and collectives per rank, where the source has them."""
        out: list = []
        plots = []
        if self.overlap is not None and len(self.overlap):
            plots.append(Plot("overlap", self.overlap_figure()))
        if self.idle is not None and len(self.idle):
            plots.append(Plot("idle", self.idle_figure()))
        if plots:
            out.append(Plots(plots, row=True))
        else:
            why = (
                "No GPU stream activity tied to its host launch (a correlation id on both)"
                if self.overlap is not None or self.idle is not None
                else "This source keeps each rank's steps only"
            )
            out.append(
                Html(f"<p class='tf-muted'>{why}: no overlap or idle breakdown per rank.</p>")
            )
        if self.collectives is not None:
            out.append(TableBlock("collectives", self.collectives_table(), "Collectives"))
        return out

    def findings(self) -> list[str]:
        line = self.hta_candidates_line()
        return [self.verdict(), *([line] if line else [])]


def job(source) -> JobView:
    """A distributed job's ranks side by side: step time and its breakdown per rank, the
    straggler of each step and why, communication/computation overlap and idle time per
    rank, and the collectives where the run has them.

    Args:
        source: a :class:`~tfprof_widgets.Run` (its hosts, ranks, or GPUs that mark their own
            steps) or a pod dataset (``tw.open(...)``, its hosts' steps).

    Returns:
        A :class:`JobView` (end a cell with it).
    """
    return JobView(source)
