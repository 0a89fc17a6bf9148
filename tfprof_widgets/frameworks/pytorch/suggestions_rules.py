"""PyTorch's suggestion rules beside XProf's and torch-tb-profiler's verdicts (which
``run.suggestions`` already turns into rows: DataLoader-bound, launch-bound): two read HTA's
tables.

* **SmallKernelsRule**: HTA's short GPU kernels (``run.kernel_launch_stats.short_kernel``:
  the GPU ran the activity for less time than the host took to launch it, the case HTA's
  kernel launch statistics single out) are more than half of the launches. Ours: HTA flags
  each launch but sets no share at which the run is bound by it; past half, launching
  costs more than the GPU work for most kernels, and fusing them (torch.compile, CUDA
  graphs, larger batches) is the remedy.
* **CPUBoundRule**: the GPU idle 10 % or more of the time (the overview's device idle share,
  XProf's TensorCore-idle threshold) and at least half of the streams' idle time HTA's
  ``host_wait`` (``run.idle_time_breakdown``: the launching call began after the stream's
  previous kernel ended, so the GPU waited for the host to issue work).
"""

from __future__ import annotations

import pandas as pd

from ...analysis.suggestions_xprof import row

__all__ = ["suggestion_rows", "SHORT_KERNEL_SHARE", "DEVICE_IDLE_PERCENT", "HOST_WAIT_SHARE"]

SHORT_KERNEL_SHARE = 50.0  # % of launches that are HTA-short
DEVICE_IDLE_PERCENT = 10.0  # % of the time the device is idle
HOST_WAIT_SHARE = 50.0  # % of the streams' idle time waiting for the host


def _small_kernels(run) -> list[dict]:
    k = run.kernel_launch_stats
    if not len(k):
        return []
    short = 100 * float(k["short_kernel"].mean())
    if not short > SHORT_KERNEL_SHARE:
        return []
    median = float(k["gpu_duration_us"].median())
    r = row(
        "SmallKernelsRule", short, SHORT_KERNEL_SHARE,
        f"{short:.1f}% of the {len(k)} GPU launches ran for less time than the host took to "
        f"launch them (HTA's short kernels; median GPU time {median:.1f} us): launching, "
        "not the GPU work, sets the pace. Fuse small operators (torch.compile), replay the "
        "step as a CUDA graph, or give each kernel more work (larger batches).",
        "kernel_stats", short_kernel_percent=short, median_kernel_us=median,
    )  # fmt: skip
    r["severity"] = "high" if short >= 75.0 else "medium"
    return [r]


def _cpu_bound(run) -> list[dict]:
    idle = float(run.overview_summary.device_idle_percent)
    it = run.idle_time_breakdown
    if not idle >= DEVICE_IDLE_PERCENT or not len(it):
        return []
    total = float(it["idle_time_us"].sum())
    host = float(it.loc[(it["idle_category"] == "host_wait").to_numpy(bool), "idle_time_us"].sum())
    share = 100 * host / total if total > 0 else 0.0
    if not share >= HOST_WAIT_SHARE:
        return []
    return [row(
        "CPUBoundRule", idle, DEVICE_IDLE_PERCENT,
        f"The GPU is idle {idle:.1f}% of the time and {share:.1f}% of that idle time it "
        "waits for the host to launch its next kernel (HTA's host wait): the program is "
        "CPU-bound. Cut the Python and operator overhead between kernels (torch.compile, "
        "CUDA graphs), move host work out of the step, and overlap data loading.",
        "timeline", device_idle_percent=idle, host_wait_percent_of_idle=share,
    )]  # fmt: skip


def suggestion_rows(run) -> pd.DataFrame | None:
    """The rules of this module that fire on the run (schema.SUGGESTIONS columns)."""
    rows = _small_kernels(run) + _cpu_bound(run)
    return pd.DataFrame(rows) if rows else None
