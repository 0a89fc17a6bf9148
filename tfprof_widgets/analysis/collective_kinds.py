"""The rules that say what a collective is, shared by every analysis that counts them and
imported by the frameworks too (it imports nothing of them): see :mod:`.collectives`.

* :func:`is_collective_kernel`: a device event whose name starts with 'nccl' or 'rccl', in
  any case, is a collective library's kernel: NCCL's ``ncclKernel_*`` and the
  ``ncclDevKernel_*`` of NCCL 2.19 and later, the older ``ncclAllReduceRingLLKernel_*``,
  RCCL's (which keeps NCCL's names). XProf's ``ClassifyGpuEvent`` (any name starting with
  'nccl', any case) and HTA's ``^nccl.*Kernel`` both hold within it.
* :func:`collective_kind`: which collective a kernel, op or opcode name runs.
* :func:`bus_factor`: nccl-tests' bus bandwidth factor (its ``PERFORMANCE.md``).
* :func:`host_ranks`: a host's distributed rank where the capture records it.
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd

__all__ = [
    "COLLECTIVE_KINDS",
    "bus_factor",
    "collective_kernel_flags",
    "collective_kind",
    "host_ranks",
    "is_collective_kernel",
]

_COLLECTIVE_KERNEL = re.compile(r"^(?:nccl|rccl)", re.IGNORECASE)
# The collectives the table names, and the words (letters and digits only, lower case) of a
# kernel, op or opcode name that say which one it is, most specific first.
COLLECTIVE_KINDS = (
    "all_reduce",
    "all_gather",
    "reduce_scatter",
    "all_to_all",
    "collective_permute",
    "broadcast",
    "reduce",
    "send_recv",
)
_WORDS = (
    ("allreduce", "all_reduce"),
    ("allgather", "all_gather"),
    ("reducescatter", "reduce_scatter"),
    ("alltoall", "all_to_all"),
    ("collectivepermute", "collective_permute"),
    ("ppermute", "collective_permute"),
    ("broadcast", "broadcast"),
    ("sendrecv", "send_recv"),
    ("send", "send_recv"),
    ("recv", "send_recv"),
    ("reduce", "reduce"),
)
_NOT_ALNUM = re.compile(r"[^0-9a-z]")


def is_collective_kernel(name: str) -> bool:
    """Whether a device event's name is a collective library's kernel (module docstring)."""
    return _COLLECTIVE_KERNEL.match(name) is not None


def collective_kernel_flags(names) -> np.ndarray:
    """:func:`is_collective_kernel` of each distinct name (a Series, Index, array or list),
    as a bool array."""
    text = [v if type(v) is str else str(v) for v in np.asarray(names, dtype=object).tolist()]
    return np.fromiter(map(is_collective_kernel, text), bool, len(text))


def collective_kind(text: str) -> str:
    """The collective a kernel, op or opcode name says it runs ('ncclDevKernel_AllGather_RING_LL'
    -> 'all_gather', 'reduce-scatter.2' -> 'reduce_scatter'), '' where it says none."""
    flat = _NOT_ALNUM.sub("", text.lower())
    for word, kind in _WORDS:
        if word in flat:
            return kind
    return ""


def bus_factor(kind: np.ndarray, group_size: np.ndarray) -> np.ndarray:
    """nccl-tests' bus bandwidth factor per collective ``kind`` and group size n (NaN where
    the factor needs n and it is unknown)."""
    n = np.asarray(group_size, np.float64)
    kind = np.asarray(kind, object)
    with np.errstate(invalid="ignore", divide="ignore"):
        ring = (n - 1) / n
    out = np.full(len(kind), np.nan)
    out[kind == "all_reduce"] = 2 * ring[kind == "all_reduce"]
    part = np.isin(kind, ("all_gather", "reduce_scatter", "all_to_all"))
    out[part] = ring[part]
    out[np.isin(kind, ("broadcast", "reduce", "send_recv", "collective_permute"))] = 1.0
    return out


def host_ranks(run, hosts: np.ndarray) -> pd.array:
    """Per host name: its distributed rank where the capture records one (plane stat
    ``rank``), else <NA>."""
    stats = run.plane_stats
    mine = stats[stats["stat"].astype(str) == "rank"]
    by_host = dict(zip(mine["host"].astype(str), pd.to_numeric(mine["int_value"], "coerce")))
    return pd.array([by_host.get(str(h)) for h in hosts], dtype="Int64")
