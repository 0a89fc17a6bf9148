"""Analyses: plain functions of a Run's DataFrames, one module per tool of TensorBoard's Profile
plugin, and the one list of what a :class:`~tfprof_widgets.Run` exposes.

Modules: ``steps`` (step time and its breakdown), ``overview``, ``input_pipeline``,
``op_stats`` (the op table), ``kernels`` (GPU kernel stats), ``memory`` (memory profile),
``compare`` (two runs' ops side by side), ``tool_data`` (TensorBoard's own numbers);
shared by them: ``grouping`` (step ids), ``nesting``, ``event_index``, ``event_ops`` (op
names), ``event_types`` (XProf's step event types). ``frameworks`` holds each framework's
rules, which these ask (``tfprof_widgets.frameworks``, beside this package).

The list of what a run exposes is :data:`tfprof_widgets.catalog.ANALYSES` (outside this
package: it joins the frameworks' analyses, and the frameworks import these modules).
"""

from __future__ import annotations

from .results import Analysis

__all__ = ["Analysis"]
