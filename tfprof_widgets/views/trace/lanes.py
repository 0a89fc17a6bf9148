"""The trace viewer's lanes: their readable names, the order of the derived device lines, and
which events XProf leaves out of its trace viewer as internal."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd

# Device-plane lines that TensorFlow derives, in the order TensorBoard shows them.
DERIVED_ORDER = (
    "Steps",
    "XLA Modules",
    "XLA Ops",
    "TensorFlow Name Scope",
    "TensorFlow Ops",
    "Source code",
)
# Events XProf's trace viewer leaves out as internal (tsl's IsInternalEvent: the allocator's
# and tf.data's bookkeeping, read by the memory profile and the input pipeline instead): on a
# JAX H100 capture, 190 zero-length MemoryAllocation/MemoryDeallocation events of python3.
# Not drawn here either; they stay in run.events for the analyses and for search.
XPROF_INTERNAL_EVENTS = frozenset(
    {
        "MemoryAllocation",
        "MemoryDeallocation",
        "PrefetchProduce",
        "PrefetchConsume",
        "ParallelInterleaveProduce",
        "ParallelInterleaveConsume",
        "ParallelInterleaveInitializedInput",
        "ParallelMapProduce",
        "ParallelMapConsume",
        "MapAndBatchProduce",
        "MapAndBatchConsume",
        "ParseExampleProduce",
        "ParseExampleConsume",
    }
)


_THREAD_ID = re.compile(r"^(.+?)(?:/| )(-?\d+)$")
_STREAM = re.compile(r"^Stream #(\d+)(?:\((.*)\))?$")


def stream_content(names: pd.Series) -> str:
    """What a stream carries, from its event names: kernels and the kinds of copies."""
    kinds = names.astype(str).str.extract(r"^(Memcpy\w*|Memset\w*)", expand=False)
    kinds = kinds.fillna("kernels").value_counts()
    return ", ".join(kinds.index[:3])


def readable_line_names(lines: list[str], contents: list[str | None] | None = None) -> list[str]:
    """Short lane names for one plane's lines: ``tf_Compute/123`` becomes ``tf_Compute #3``
    (numbered in the order given, a number only when the prefix repeats), ``Stream #7(MemcpyH2D)``
    becomes ``Stream #7 · MemcpyH2D``, and a bare ``Stream #7`` gets ``contents[i]`` (what
    it carries) appended. The raw names belong in tooltips."""
    contents = contents or [None] * len(lines)
    prefixes = [
        m.group(1)
        if (m := _THREAD_ID.match(s)) and (s[len(m.group(1))] == "/" or len(m.group(2)) >= 6)
        else None
        for s in lines
    ]
    total: dict[str, int] = {}
    for p in prefixes:
        if p is not None:
            total[p] = total.get(p, 0) + 1
    seen: dict[str, int] = {}
    out = []
    for s, p, what in zip(lines, prefixes, contents):
        m = _STREAM.match(s)
        if m:
            carried = m.group(2) or what
            out.append(f"Stream #{m.group(1)}" + (f" · {carried}" if carried else ""))
        elif p is not None:
            seen[p] = seen.get(p, 0) + 1
            out.append(f"{p} #{seen[p]}" if total[p] > 1 else p)
        else:
            out.append(s)
    return out


def is_internal(names: pd.Series) -> np.ndarray:
    """Which events are XProf's internal ones (:data:`XPROF_INTERNAL_EVENTS`), by name."""
    cats = names.cat.categories
    hit = np.asarray(cats.isin(XPROF_INTERNAL_EVENTS), dtype=bool)
    codes = names.cat.codes.to_numpy()
    return hit[codes] & (codes >= 0) if hit.any() else np.zeros(len(names), dtype=bool)


def natural_key(s: str) -> list:
    return [int(t) if t.isdigit() else t.lower() for t in re.split(r"(\d+)", s)]
