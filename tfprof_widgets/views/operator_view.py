"""The operator view of a PyTorch capture (torch-tb-profiler's): where device and host time go
by operator, the step-time breakdown by role, the operator table (by name, or by name and
input shapes) and the kernels by the operator that launched them."""

from __future__ import annotations

import functools

import pandas as pd

from ._common import legend_under_title, of_run, quick_figure
from ._pies import pie_plot, top_slices
from .base import Choice, Html, Panel, Plot, Plots, TableBlock, View
from .names import short_op_name
from .op_stats_view import SOURCE_LINKS, SOURCE_TITLE
from .page.display import esc
from .tables import Column, Table

__all__ = ["OperatorView", "operators"]

TOP = 10
# torch-tb-profiler's step-time roles, in its order, with the colours of its overview.
ROLES = {
    "kernel_us": ("Kernel", "#1f77b4"),
    "memcpy_us": ("Memcpy", "#ff7f0e"),
    "memset_us": ("Memset", "#2ca02c"),
    "communication_us": ("Communication", "#d62728"),
    "runtime_us": ("Runtime", "#9467bd"),
    "dataloader_us": ("DataLoader", "#8c564b"),
    "cpu_exec_us": ("CPU Exec", "#e377c2"),
    "other_us": ("Other", "#7f7f7f"),
}
_PIES = (
    ("device_self_us", "Device self time"),
    ("device_total_us", "Device total time"),
    ("host_self_us", "Host self time"),
    ("host_total_us", "Host total time"),
)


def _short(name: str, **kw) -> str:
    return short_op_name(name, kw.get("max_chars", 44))


def _gpu_shares(per_step: pd.DataFrame, steps: pd.Series) -> list[str]:
    """Per step: HTA's temporal breakdown of its window (``run.temporal_breakdown_steps``,
    the GPUs' times summed) as hover text."""
    sums = per_step.groupby("step")[["active_us", "compute_us", "non_compute_us"]].sum()
    sums = sums.reindex(steps.to_numpy())
    out = []
    for active, compute, non_compute in sums.itertuples(index=False):
        if not active > 0:
            out.append("GPU: no activity")
            continue
        idle = active - compute - non_compute
        out.append(
            f"GPU (HTA): idle {100 * idle / active:.1f}%, compute {100 * compute / active:.1f}%,"
            f" non-compute {100 * non_compute / active:.1f}%"
        )
    return out


class OperatorView(View):
    title = "Operators"

    def __init__(self, run) -> None:
        self.run = run
        self.is_torch = "pytorch" in run.framework
        self.ops = run.torch_ops if self.is_torch else pd.DataFrame()

    def choices(self) -> list[Choice]:
        return [
            Choice(
                "group",
                "Group by",
                "name",
                [("operator", "name"), ("operator + input shapes", "shape")],
            )
        ]

    def table(self, group: str = "name") -> Table:
        # Each table once per run (a cell run again encodes none of its rows again).
        return of_run(self.run, ("operators.table", group), lambda: self._table(group))

    def _table(self, group: str) -> Table:
        from .source_lines_view import line_of_name

        df = self.run.torch_ops_by_shape if group == "shape" else self.ops
        df = df.assign(source=line_of_name(self.run, df["name"]))
        multi = df["host"].nunique() > 1
        cols = [
            Column("calls", "calls", "int"),
            Column("device_self_us", "device self (µs)", digits=1),
            Column("device_total_us", "device total (µs)", digits=1),
            Column("host_self_us", "host self (µs)", digits=1),
            Column("host_total_us", "host total (µs)", digits=1),
            Column("host", "host", hidden=not multi),
            *([Column("input_shapes", "input shapes")] if group == "shape" else []),
            Column("source", "source", title=SOURCE_TITLE),
            Column("name", "operator"),
        ]
        return Table(df, cols, csv=f"operators_by_{group}.csv", sort=("device_self_us", "desc"))

    def step_plot(self) -> Plot | None:
        steps = self.run.torch_steps
        if not len(steps):
            return None
        # A trace without ProfilerStep markers has one row, the whole capture: no step number
        # (the steps table has none), so neither does its bar.
        numbered = bool(steps["step"].notna().all())
        x = [
            f"{'whole capture' if pd.isna(s) else s}{'' if c else ' (incomplete)'}"
            for s, c in zip(steps["step"], steps["complete"])
        ]
        gpu = _gpu_shares(self.run.temporal_breakdown_steps, steps["step"])
        what = "step %{x}" if numbered else "%{x}"
        data = [
            dict(
                type="bar",
                x=x,
                y=steps[col] / 1e3,
                name=label,
                marker=dict(color=colour),
                customdata=gpu,
                hovertemplate=what + "<br>" + label + ": %{y:.3f} ms<br>%{customdata}"
                "<extra></extra>",
            )
            for col, (label, colour) in ROLES.items()
        ]
        # The roles' legend in rows under the title (beside the plot, 8 roles overflowed its
        # 320 px: the legend scrolled and hid Kernel, the largest); the plot keeps ~230 px.
        top = legend_under_title([d["name"] for d in data])
        layout = dict(
            barmode="stack",
            title=dict(text="Step time breakdown", **top["title"]),
            xaxis=dict(title=dict(text="step" if numbered else ""), type="category"),
            yaxis=dict(title=dict(text="ms"), rangemode="tozero"),
            height=300 + top["margin"]["t"],
            margin=dict(b=40, l=10, r=10, **top["margin"]),
            legend=dict(**top["legend"], traceorder="normal"),
        )
        return Plot("steps", quick_figure(data, layout))

    @functools.cached_property
    def _sums(self) -> pd.DataFrame:
        """Each operator name's times (the pies' and the findings' numbers), summed once."""
        return self.ops.groupby("name", observed=True)[[c for c, _ in _PIES]].sum()

    @functools.cached_property
    def _shared_blocks(self) -> tuple[list, list]:
        """What every choice shows alike: the GPU lines and the step plot (before the pies),
        the pies, and the kernel table (after the operator table)."""
        plots = []
        for col, title in _PIES:
            values = self._sums[col]
            if (values > 0).any():
                plots.append(
                    pie_plot(
                        col,
                        top_slices(values, TOP),
                        f"{title} (top {TOP})",
                        _short,
                        click={"table": "operators", "column": "name", "prefix": "operator: "},
                        fallbacks=({"max_chars": 80},),
                    )
                )
        before: list = []
        summary = self.gpu_summary()
        if summary:
            before.append(Html("<p>" + "<br>".join(esc(s) for s in summary) + "</p>"))
        step = self.step_plot()
        if step is not None:
            before.append(Plots([step]))
        if plots:  # no pie where no operator took time: no empty row
            before.append(Plots(plots, row=True))
        kernels = TableBlock(
            "kernels", self.kernel_table(), "Kernels by the operator that launched them"
        )
        return before, [kernels]

    def blocks(self, group: str = "name", **_) -> list:
        if not len(self.ops):
            return [Html(f"<p class='tf-muted'>{esc(self.empty_text())}</p>")]
        before, after = self._shared_blocks
        table = TableBlock(
            "operators",
            self.table(group),
            "Operators (click a slice to filter; a source cell opens its line)",
            links=SOURCE_LINKS,
        )
        return [*before, table, *after]

    def panels(self) -> list[Panel]:
        from .source_lines_view import source_panel

        if not len(self.ops):
            return []
        df = self.table("name").df
        if not (df["source"] != "").any():
            return []
        heavy = df.sort_values("device_self_us", ascending=False, kind="stable")
        return [source_panel(self.run, heavy["source"])]

    def kernel_table(self) -> Table:
        return of_run(self.run, "operators.kernel_table", self._kernel_table)

    def _kernel_table(self) -> Table:
        k = self.run.torch_kernels
        cols = [
            Column("calls", "calls", "int"),
            Column("total_us", "total (µs)", digits=1),
            Column("mean_us", "mean (µs)", digits=2),
            Column("max_us", "max (µs)", digits=2),
            Column("min_us", "min (µs)", digits=2),
            Column("mean_blocks_per_sm", "blocks/SM", digits=2, title="mean, by duration"),
            Column(
                "mean_est_achieved_occupancy_percent",
                "est. occup. %",
                "pct",
                digits=0,
                title="Kineto's estimated achieved occupancy, mean by duration",
            ),
            Column("grid", "grid"),
            Column("block", "block"),
            Column("registers_per_thread", "regs", "int"),
            Column("shared_memory_bytes", "smem (B)", "int"),
            Column("host", "host", hidden=k["host"].nunique() < 2),
            Column("operator", "operator"),
            Column("name", "kernel"),
        ]
        return Table(k, cols, csv="torch_kernels.csv", sort=("total_us", "desc"))

    def gpu_summary(self) -> list[str]:
        """One line per GPU: tb_plugin's GPU metrics and HTA's temporal breakdown."""
        return list(self._gpu_lines)

    @functools.cached_property
    def _gpu_lines(self) -> list[str]:
        """:meth:`gpu_summary`, made once (the blocks and the findings both show it)."""
        metrics = self.run.torch_gpu_metrics
        temporal = self.run.temporal_breakdown
        lines = []
        for m in metrics.itertuples():
            line = (
                f"{m.device}: GPU utilization {m.gpu_utilization_percent:.1f}%, est. SM "
                f"efficiency {m.est_sm_efficiency_percent:.1f}%, est. achieved occupancy "
                f"{m.est_achieved_occupancy_percent:.1f}%"
            )
            t = temporal[(temporal["device"] == m.device) & (temporal["host"] == m.host)]
            if len(t):
                line += (
                    f"; over the capture: idle {t['idle_percent'].iloc[0]:.1f}%, compute "
                    f"{t['compute_percent'].iloc[0]:.1f}%, non-compute "
                    f"{t['non_compute_percent'].iloc[0]:.1f}%"
                )
            lines.append(line)
        return lines

    def findings(self) -> list[str]:
        if not len(self.ops):
            return [self.empty_text()]
        ops = self.ops
        lines = [*self.gpu_summary(), f"{len(ops):,} operators, {int(ops['calls'].sum()):,} calls"]
        for col, title in _PIES[::2]:
            by = self._sums[col].sort_values(ascending=False)
            total = by.sum()
            if total > 0:
                lines.append(
                    f"{title}: {total:,.1f} µs; largest {by.index[0]}, {by.iloc[0]:,.1f} µs "
                    f"({100 * by.iloc[0] / total:.1f} %)"
                )
        return lines

    def empty_text(self) -> str:
        if not self.is_torch:
            return (
                "The operator view needs a PyTorch (torch.profiler) capture; use the op "
                "stats view for this one."
            )
        return "No operator in this capture."


def operators(run) -> OperatorView:
    """PyTorch's operator view, as torch-tb-profiler shows it: the operators' host and
    device time pies, each step's time by role (kernel, memcpy, runtime, DataLoader, CPU
    exec...) and the operator table.

    Args:
        run: a loaded :class:`~tfprof_widgets.Run` of a ``torch.profiler`` trace.

    Returns:
        An :class:`OperatorView` (end a cell with it); ``run.torch_ops``,
        ``run.torch_ops_by_shape`` and ``run.torch_steps`` hold the numbers.
    """
    return OperatorView(run)
