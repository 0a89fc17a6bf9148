"""tfprof's advisor (``tf.compat.v1.profiler.advise``), computed from the run's DataFrames.

The checkers of tfprof's advisor, one function each; ``tfprof_advice`` runs them all and
returns one row per finding (checker, finding). tfprof's fourth checker, JobChecker, reads
Google-internal job data and has no equivalent here.
"""

from __future__ import annotations

import pandas as pd

from .tfprof_tables import tfprof_node_stats, tfprof_table

__all__ = ["tfprof_advice", "accelerator_utilization", "operation_checks", "expensive_operations"]

_LOW_UTILIZATION = 0.5  # tfprof flags accelerators busy less than half the time


def accelerator_utilization(run) -> list[str]:
    """Per accelerator: kernel time over the span from its first to last kernel."""
    ex = run.tfprof_execs
    if not len(ex) or not (ex["accelerator_exec_us"] > 0).any():
        return ["No accelerator was used: every op ran on the CPU."]
    ev = run.events
    dev = ev[ev["plane"].astype(str).str.startswith("/device:")]
    out = []
    for plane, g in dev.groupby("plane", observed=True):
        span = float(g["end_us"].max() - g["start_us"].min())
        busy = float(g["dur_us"].sum())
        util = busy / span if span > 0 else 0.0
        msg = f"{plane}: {100 * util:.1f}% utilization ({busy:,.0f} of {span:,.0f} µs)"
        if util < _LOW_UTILIZATION:
            msg += "; low: look for input waits, host work between steps or small kernels"
        out.append(msg)
    return out


def operation_checks(run) -> list[str]:
    """Ops whose settings are known to be slow: NHWC convolutions on GPUs."""
    nodes = run.tfprof_nodes
    if "data_format" not in nodes:
        return []
    on_gpu = nodes["device"].astype(str).str.lower().str.contains("gpu")
    nhwc = nodes[on_gpu & (nodes["data_format"] == "NHWC")]
    if not len(nhwc):
        return []
    return [
        f"{len(nhwc)} op(s) on GPU use the NHWC data_format (e.g. {nhwc['node'].iloc[0]}); "
        "NCHW is usually faster for GPU convolutions."
    ]


def expensive_operations(run, top: int = 3) -> list[str]:
    """The op types, scopes and code lines that take the most time (average step)."""
    stats = tfprof_node_stats(run, -1)
    total = float(stats["exec_us"].sum())
    if total <= 0:
        return []
    out = []
    ops = tfprof_table(run, "op", order_by="micros", select=["micros"]).head(top)
    parts = [
        f"{r.name} {r.exec_us:,.0f} µs ({100 * r.exec_us / total:.1f}%)" for r in ops.itertuples()
    ]
    out.append(f"Top op types by time (average step, {total:,.0f} µs in all): " + ", ".join(parts))
    nodes = stats.nlargest(top, "exec_us")
    out.append(
        "Top graph nodes: " + ", ".join(f"{r.node} {r.exec_us:,.0f} µs" for r in nodes.itertuples())
    )
    code = stats[stats["code"].map(len) > 0]
    if len(code):
        # The innermost frame outside TensorFlow is where the user wrote the op.
        user = code["code"].map(_user_frame)
        by_line = code.groupby(user.to_numpy())["exec_us"].sum().nlargest(top)
        out.append(
            "Top code lines: " + ", ".join(f"{line} {us:,.0f} µs" for line, us in by_line.items())
        )
    return out


def _user_frame(frames: tuple) -> str:
    outside = [f for f in frames if "/tensorflow/" not in f and "/keras/" not in f]
    return outside[-1] if outside else frames[-1]


def tfprof_advice(run) -> pd.DataFrame:
    """Every checker's findings: columns checker, finding."""
    rows = []
    for name, check in (
        ("AcceleratorUtilizationChecker", accelerator_utilization),
        ("OperationChecker", operation_checks),
        ("ExpensiveOperationChecker", expensive_operations),
    ):
        rows += [{"checker": name, "finding": f} for f in check(run)]
    return pd.DataFrame(rows, columns=["checker", "finding"])
