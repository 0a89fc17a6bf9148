"""One host's tool-data files once decoded: what the readers of :mod:`.reader`, :mod:`.pages`
and :mod:`.proto_json` fill in."""

from __future__ import annotations

import dataclasses

import pandas as pd


@dataclasses.dataclass
class HostToolData:
    """One host's tool-data files, decoded and mapped onto our tables.

    ``files``: tool -> path. ``raw``: tool -> the decoded message (``OverviewPage``,
    ``InputPipelineAnalysisResult``, ``TfStatsDatabase``, ``KernelStatsDb``) or the parsed
    JSON (memory profile, pod viewer, DataTables). ``tables``: name -> DataFrame in our schema
    ('steps': TOOL_STEPS, 'tf_stats' / 'tf_stats_without_idle': TOOL_TF_STATS, 'top_ops':
    TOOL_TOP_OPS, 'input_ops': INPUT_OPS, 'kernels': KERNELS, 'memory': MEMORY,
    'memory_summary': MEMORY_SUMMARY, 'memory_breakdown': TOOL_MEMORY_BREAKDOWN, 'pod_stats':
    TOOL_POD_STATS, 'all_reduce_ops': TOOL_ALL_REDUCE_OPS). ``overview`` /
    ``input_pipeline``: the figures of those pages by the names of
    :class:`~tfprof_widgets.OverviewSummary` / ``InputPipelineSummary`` (None where the
    file has no such figure), or None without that tool.
    """

    host: str
    files: dict[str, str] = dataclasses.field(default_factory=dict)
    encodings: dict[str, str] = dataclasses.field(default_factory=dict)
    raw: dict[str, object] = dataclasses.field(default_factory=dict)
    tables: dict[str, pd.DataFrame] = dataclasses.field(default_factory=dict)
    overview: dict[str, object] | None = None
    input_pipeline: dict[str, object] | None = None
    warnings: list[str] = dataclasses.field(default_factory=list)
