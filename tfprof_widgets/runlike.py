"""``RunLike``: what a :class:`~tfprof_widgets.Run` and a pod (:class:`~tfprof_widgets.scale.Pod`,
a converted dataset opened) both give, under the same names: the run's identity, its small
tables and the analyses the pod viewer, the report and the pod-level analyses (overview, input
pipeline, per-host steps, memory breakdown) read.

``events`` and ``event_stats`` are DataFrames on a Run and lazy DuckDB relations on a pod (the
big tables), so a RunLike says only that they are there. :func:`missing` lists what a holder
lacks, looked up without computing it (``isinstance`` against a Protocol would read every
analysis on Python 3.11).
"""

from __future__ import annotations

import inspect
from typing import Any, Protocol

import pandas as pd

__all__ = ["RunLike", "members", "missing"]


class RunLike(Protocol):
    """A run's names shared by a Run and a pod (see the module)."""

    name: str
    path: str
    hosts: list[str]
    files: list[str]
    errors: list[str]
    warnings: list[str]
    t0_ns: int

    # The run's tables (columns in tfprof_widgets.schema).
    planes: pd.DataFrame
    lines: pd.DataFrame
    event_metadata: pd.DataFrame
    metadata_stats: pd.DataFrame
    plane_stats: pd.DataFrame
    tfprof_nodes: pd.DataFrame
    tfprof_execs: pd.DataFrame
    events: Any  # a DataFrame (Run) or a DuckDB relation (pod)
    event_stats: Any

    # The analyses (each computed when first read and kept).
    steps: pd.DataFrame
    per_host_steps: pd.DataFrame
    device_precision: pd.DataFrame
    ops: pd.DataFrame
    kernels: pd.DataFrame
    memory: pd.DataFrame
    memory_summary: pd.DataFrame
    memory_breakdown: pd.DataFrame
    input_time: pd.DataFrame
    input_pipeline: Any  # InputPipelineSummary
    overview_summary: Any  # OverviewSummary
    tf_data_bottleneck: pd.DataFrame
    profile_options: pd.DataFrame
    tfprof_advice: pd.DataFrame

    @property
    def duration_us(self) -> float: ...

    def clear_cache(self) -> None: ...


def members() -> list[str]:
    """Every name a RunLike has: its attributes, properties and methods."""
    declared = {k for k in vars(RunLike) if not k.startswith("_")}
    return sorted(set(RunLike.__annotations__) | declared)


def missing(holder: object) -> list[str]:
    """The names of :class:`RunLike` that ``holder`` (a Run or a pod) lacks, each looked up
    statically: no analysis is computed to find it."""
    out = []
    for name in members():
        try:
            inspect.getattr_static(holder, name)
        except AttributeError:
            out.append(name)
    return out
