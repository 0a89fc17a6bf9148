"""Each framework's ops with the line of the user's source that made them, for the neutral
:mod:`tfprof_widgets.analysis.source_lines`: XLA's HLO instructions by their metadata
(:mod:`.xla.source_lines`: JAX, TF ``jit_compile``) and PyTorch's operators by their
``with_stack=True`` Python stacks (:mod:`.pytorch.source_lines`).

One frame, a row per op (an instruction, an operator event): ``source_file``,
``source_line``, ``function``, ``framework`` ('JAX', 'TensorFlow', 'XLA' for an instruction
of no framework op, 'PyTorch'), ``op_name``, ``op_id`` (distinct per op of one framework),
``device_ps``, ``host_ps``, ``occurrences`` (device events)."""

from __future__ import annotations

import pandas as pd

from .pytorch.source_lines import operator_sources
from .registry import framework_of
from .xla.gpu import has_instructions
from .xla.source_lines import COLUMNS, instruction_sources


def op_sources(run) -> pd.DataFrame:
    """Every framework's ops with their line and times (the module docstring); no rows where
    the capture has no ops of any."""
    # Each framework asked only where the run holds its ops: PyTorch's operator rules read
    # every distinct event name (a cost even on a program with none: docs/speed.md).
    parts = []
    if has_instructions(run):
        parts.append(instruction_sources(run))
    if "pytorch" in framework_of(run):
        parts.append(operator_sources(run))
    parts = [p for p in parts if len(p)]
    if not parts:
        return pd.DataFrame({c: [] for c in COLUMNS})
    out = pd.concat(parts, ignore_index=True) if len(parts) > 1 else parts[0]
    return out.astype({"source_file": object, "function": object, "op_name": object})


__all__ = ["op_sources"]
