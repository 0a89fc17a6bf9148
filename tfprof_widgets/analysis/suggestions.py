"""Suggestions: the rules that fire on a run, one row each (schema.SUGGESTIONS): what the
rule says, the figures that made it fire and the view to open.

* XProf's smart-suggestion rules (``xprof/convert/smart_suggestion/``, xprof 2.24), on
  signals measured from the run's tables: :mod:`.suggestions_xprof` (compute-, memory-,
  input-, collective-, data-shuffle-, TensorCore-idle-, SparseCore-bound, barrier-cores,
  debug print). xprof 2.24's pip package runs only BarrierCoresRule; the goldens of
  scripts/make_suggestion_goldens.py apply the rest to the signals of xprof's own tools.
* The framework's own overview verdicts as rows, where its rules give some (PyTorch's are
  torch-tb-profiler's): bound by its input tool ('DataLoaderBoundRule'), launch-bound,
  communication-bound, devices of low utilization, device memory at its limit.
* The framework's own rules (the ``suggestion_rows`` hook: PyTorch's small kernels and
  CPU-bound, from HTA's tables).
"""

from __future__ import annotations

import pandas as pd

from .. import schema
from ..frameworks import rules_of
from .suggestions_xprof import row as _row
from .suggestions_xprof import xprof_rules

__all__ = ["suggestions"]


def _verdict_rules(run) -> list[dict]:
    """The framework's own overview verdicts as rows, where its rules give some
    (``overview_verdicts``: PyTorch's are torch-tb-profiler's): input-bound on its input
    tool (5 % of step time, high from 20 %), launch-bound (3 %, high from 15 %),
    communication-bound (above 10 %), GPUs under 50 % utilization, device memory above 90 %
    of the GPU's. The evidence is the overview's figure each verdict quotes."""
    rules = rules_of(run)
    v = rules.overview_verdicts(run)
    if v is None:
        return []
    o = run.overview_summary
    out = []

    def add(rule: str, severity: str, text: str, view: str, **evidence) -> None:
        out.append({**_row(rule, 0.0, 1.0, text, view, **evidence), "severity": severity})

    if v["input_classification"] != "device":
        sev = "high" if v["input_classification"] == "host" else "medium"
        tool = "".join(ch for ch in rules.advice.input_tool if ch.isalnum()) or "Input"
        add(f"{tool}BoundRule", sev, v["input_statement"], "input_pipeline",
            input_percent=o.input_percent)  # fmt: skip
    if v["kernel_launch_classification"] != "no":
        sev = "high" if v["kernel_launch_classification"] == "high" else "medium"
        add("LaunchBoundRule", sev, v["kernel_launch_statement"], "operators",
            kernel_launch_percent=o.kernel_launch_percent)  # fmt: skip
    if v["device_collectives_statement"]:
        add("CommunicationBoundRule", "medium", v["device_collectives_statement"], "overview",
            collective_percent=o.device_collectives_percent)  # fmt: skip
    if v["all_other_statement"]:
        add("LowDeviceUtilizationRule", "medium", v["all_other_statement"], "kernel_stats",
            device_idle_percent=o.device_idle_percent)  # fmt: skip
    for text in v["recommendations"]:
        if text not in (v["input_statement"], v["kernel_launch_statement"],
                        v["device_collectives_statement"], v["all_other_statement"]):  # fmt: skip
            add("MemoryAtLimitRule", "high", text, "memory_timeline")
    return out


def suggestions(run) -> pd.DataFrame:
    """One row per rule that fires on the run (schema.SUGGESTIONS): XProf's smart suggestions,
    the framework's verdicts and its own rules; empty when none does."""
    rows = xprof_rules(run)
    verdicts = _verdict_rules(run)
    if any(r["view"] == "input_pipeline" for r in verdicts):
        # The same fact in the framework's words, with its input tool named.
        rows = [r for r in rows if r["rule"] != "InputBoundRule"]
    rows += verdicts
    frames = [pd.DataFrame(rows)] if rows else []
    frames += rules_of(run).suggestion_rows(run)
    if not frames:
        return schema.empty(schema.SUGGESTIONS)
    return schema.conform(pd.concat(frames, ignore_index=True), schema.SUGGESTIONS)
