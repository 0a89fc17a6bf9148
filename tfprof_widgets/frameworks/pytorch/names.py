"""PyTorch's names: step markers, the DataLoader, the CUDA runtime's launches, and what kind
of activity each Kineto ``cat`` is (torch-tb-profiler's event types)."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd

from ... import stat_columns
from ...analysis.memo import per_run
from ..base import name_flags, name_texts

# ASCII digits only, as the reader reads them: ``\d`` takes any script's (``ProfilerStep#٣``,
# which torch never writes, was a marker without a number).
STEP_MARKER = re.compile(r"^ProfilerStep#([0-9]{1,18})$")
# torch.utils.data's iterators, as the profiler names each batch they hand out.
_DATALOADER = re.compile(r"^enumerate\(DataLoader\)#.*\.__next__$|^enumerate\(DataPipe\)#")
# CUDA runtime/driver calls that launch work on a stream (kernels, graphs, async copies).
_LAUNCH = re.compile(
    r"^cu(da)?(LaunchKernel|LaunchCooperativeKernel|GraphLaunch|Memcpy\w*Async|Memset\w*Async)"
)
# Collective ops whose kernels torch-tb-profiler counts as communication.
COLLECTIVE_OPS = frozenset(
    f"{lib}:{op}"
    for lib in ("nccl", "gloo")
    for op in ("broadcast", "reduce", "all_reduce", "all_gather", "reduce_scatter")
)

# torch-tb-profiler's event types of Kineto categories (compared in lower case). Its last
# release (0.4.3) predates 'cuda_runtime', which kineto's later plugin maps to Runtime, as
# we do. 'cuda_driver' is in neither: ours on purpose, it is Runtime too, for recent PyTorch
# launches cuBLAS's kernels with the driver's cuLaunchKernelEx (without it an H100 trace's
# matrix multiplies launch no kernel and their time is no Runtime).
KERNEL, MEMCPY, MEMSET, RUNTIME, OPERATOR, ANNOTATION, OTHER = range(7)
_CAT_TYPES = {
    "kernel": KERNEL,
    "memcpy": MEMCPY,
    "gpu_memcpy": MEMCPY,
    "memset": MEMSET,
    "gpu_memset": MEMSET,
    "runtime": RUNTIME,
    "cuda_runtime": RUNTIME,
    "cuda_driver": RUNTIME,
    "cpu_op": OPERATOR,
    "operator": OPERATOR,
    "python": OPERATOR,
    "user_annotation": ANNOTATION,
}


def cat_types(categories: pd.Index) -> np.ndarray:
    """Per distinct ``cat``: its event type (OTHER where torch-tb-profiler ignores it)."""
    # A few distinct categories: a dict lookup each (a pandas map costs more in overhead).
    return np.array([_CAT_TYPES.get(c.lower(), OTHER) for c in name_texts(categories)], np.int8)


@per_run
def event_types(run) -> np.ndarray:
    """Per event of run.events: the type of its Kineto ``cat`` (:func:`cat_types`; -1 for
    an event without one). Read-only: the operator trees, the steps' roles and the memory
    events' operators all start from it."""
    cat = stat_columns.categorical(run.stat_store, "cat", len(run.events))
    kind = np.append(cat_types(cat.categories), -1)[np.asarray(cat.codes)]
    kind.setflags(write=False)
    return kind


# The rules below run on distinct names (hundreds to a few thousand per capture), in Python
# (frameworks.base.name_flags): pandas' string methods cost more a call in overhead on so few values
# than the matching (docs/speed.md), and they follow Python's ``re`` (where pyarrow's differs,
# pandas falls back to it).
def is_step_marker(names: pd.Series) -> np.ndarray:
    return name_flags(names, lambda s: STEP_MARKER.match(s) is not None)


def step_numbers(names: pd.Series) -> np.ndarray:
    """Per name: N of ``ProfilerStep#N`` as int64, exactly (18 digits pass float64's 2^53);
    -1 for another name."""
    found = [STEP_MARKER.match(t) for t in name_texts(names)]
    return np.array([int(m.group(1)) if m else -1 for m in found], dtype=np.int64)


def is_dataloader_name(name: str) -> bool:
    """Is it the DataLoader (or a DataPipe) handing out a batch?"""
    return _DATALOADER.search(name) is not None


def is_dataloader_next(names: pd.Series) -> np.ndarray:
    """Per name: :func:`is_dataloader_name`."""
    return name_flags(names, is_dataloader_name)


def is_launch(names: pd.Series) -> np.ndarray:
    """Per name: is it a runtime call that puts work on a stream?"""
    return name_flags(names, lambda s: _LAUNCH.match(s) is not None)


def is_collective(names: pd.Series) -> np.ndarray:
    return name_flags(names, COLLECTIVE_OPS.__contains__)
