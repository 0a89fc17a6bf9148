"""Tool data in proto3 JSON: the memory profile and the pod viewer.

TF 2.3-2.10 wrote ``<host>.memory_profile.json.gz`` as ``MessageToJsonString(MemoryProfile)``
(lowerCamelCase keys, 64-bit integers as strings, enum names); the pod viewer's
``PodViewerDatabase`` comes as JSON in two layouts (2019's named per-core durations, and
today's ``step_breakdown_us`` map). Both are read as plain JSON: it is about ten times
faster than ``json_format.Parse`` on a memory profile, and the 2019 pod-viewer layout does
not fit today's message. Content that is not what the tool writes raises Python's
TypeError / ValueError / KeyError, which :mod:`.tool_data` reports as a damaged file.
"""

from __future__ import annotations

import json
import re

import numpy as np
import pandas as pd

from ... import schema
from .host import HostToolData

__all__ = ["fill_memory", "pod_viewer"]


def _int(v) -> int:
    """A proto3-JSON 64-bit integer (a string, or a number); 0 when absent."""
    if v is None:
        return 0
    return int(v)


def _float(v) -> float:
    return 0.0 if v is None else float(v)


# The most bytes a byte count may say (4 EiB): beyond it (uint64 max, int64 extremes) or
# below 0 it is no byte count, and became -1 bytes in an int64 column.
_MAX_BYTES = 1 << 62


class _ByteCounts:
    """Byte counts read from a memory profile, each range-checked: one out of range is 0
    (as a missing one), and counted per field for one warning."""

    def __init__(self) -> None:
        self.dropped: dict[str, int] = {}

    def one(self, v, field: str) -> int:
        n = _int(v)
        if 0 <= n < _MAX_BYTES:
            return n
        self.dropped[field] = self.dropped.get(field, 0) + 1
        return 0

    def column(self, items: list[dict], field: str) -> np.ndarray:
        return np.array([self.one(d.get(field), field) for d in items], np.int64)

    def notes(self, path: str) -> list[str]:
        return [
            f"{path}: {n} value(s) of {field} are no byte count (negative, 4 EiB or more) "
            "and were read as 0"
            for field, n in self.dropped.items()
        ]


def fill_memory(out: HostToolData, doc: dict) -> None:
    per_alloc = doc.get("memoryProfilePerAllocator") or {}
    mem_parts, summaries, breakdowns = [], [], []
    counts = _ByteCounts()
    for allocator in sorted(per_alloc):
        prof = per_alloc[allocator] if isinstance(per_alloc[allocator], dict) else {}
        snaps = [s for s in prof.get("memoryProfileSnapshots", []) if isinstance(s, dict)]
        mem = _snapshots(out.host, allocator, snaps, counts)
        mem_parts.append(mem)
        summary = prof.get("profileSummary") or {}
        peak = summary.get("peakStats") or {}
        peak_ps = _int(summary.get("peakStatsTimePs"))
        at_peak = np.flatnonzero(
            np.array([_int(s.get("timeOffsetPs")) for s in snaps], np.int64) == peak_ps
        )
        peak_step = int(mem["group_id"].iloc[at_peak[-1]]) if len(at_peak) else -1
        lifetime = counts.one(summary.get("peakBytesUsageLifetime"), "peakBytesUsageLifetime")
        summaries.append(
            {
                "host": out.host,
                "allocator": allocator,
                "num_allocations": int((mem["activity"] == "ALLOCATION").sum()),
                "num_deallocations": int((mem["activity"] == "DEALLOCATION").sum()),
                "memory_capacity_bytes": counts.one(
                    summary.get("memoryCapacity"), "memoryCapacity"
                ),
                # TensorBoard's is the counter at the last event in file order; the
                # snapshots' largest reading is at least that (schema.MEMORY_SUMMARY).
                "peak_bytes_lifetime": max(
                    lifetime, int(mem["peak_bytes_in_use"].to_numpy().max(initial=0))
                ),
                "peak_bytes_lifetime_xprof": lifetime,
                "peak_in_use_bytes": counts.one(
                    peak.get("stackReservedBytes"), "peakStats.stackReservedBytes"
                )
                + counts.one(peak.get("heapAllocatedBytes"), "peakStats.heapAllocatedBytes"),
                "peak_heap_bytes": counts.one(peak.get("heapAllocatedBytes"), "_"),
                "peak_stack_bytes": counts.one(peak.get("stackReservedBytes"), "_"),
                "peak_free_bytes": counts.one(
                    peak.get("freeMemoryBytes"), "peakStats.freeMemoryBytes"
                ),
                "peak_fragmentation": _float(peak.get("fragmentation")),
                "peak_time_us": peak_ps / 1e6,
                "peak_group_id": peak_step,
            }
        )
        breakdowns.append(_active_allocations(out.host, allocator, prof, snaps, peak_step))
    memory = pd.concat(mem_parts, ignore_index=True) if mem_parts else schema.empty(schema.MEMORY)
    counts.dropped.pop("_", None)  # the peak's stack and heap again: counted once
    out.warnings += counts.notes(out.files.get("memory_profile", out.host))
    out.tables["memory"] = schema.conform(memory, schema.MEMORY)
    out.tables["memory_summary"] = schema.conform(
        pd.DataFrame(summaries, columns=list(schema.MEMORY_SUMMARY)), schema.MEMORY_SUMMARY
    )
    bd = (
        pd.concat(breakdowns, ignore_index=True)
        if breakdowns
        else schema.empty(schema.TOOL_MEMORY_BREAKDOWN)
    )
    out.tables["memory_breakdown"] = schema.conform(bd, schema.TOOL_MEMORY_BREAKDOWN)


def _snapshots(host: str, allocator: str, snaps: list[dict], counts: _ByteCounts) -> pd.DataFrame:
    """MEMORY rows from MemoryProfileSnapshots (times: µs from the start of the capture)."""
    agg = [s.get("aggregationStats") or {} for s in snaps]
    act = [s.get("activityMetadata") or {} for s in snaps]

    def ints(items, key):
        return np.array([_int(d.get(key)) for d in items], np.int64)

    stack = counts.column(agg, "stackReservedBytes")
    heap = counts.column(agg, "heapAllocatedBytes")
    df = pd.DataFrame(
        {
            "host": [host] * len(snaps),
            "allocator": [allocator] * len(snaps),
            "time_us": np.array([_int(s.get("timeOffsetPs")) for s in snaps], np.int64) / 1e6,
            "activity": [str(a.get("memoryActivity", "UNKNOWN_ACTIVITY")) for a in act],
            "stack_reserved_bytes": stack,
            "heap_allocated_bytes": heap,
            "free_memory_bytes": counts.column(agg, "freeMemoryBytes"),
            "in_use_bytes": stack + heap,
            "fragmentation": np.array([_float(d.get("fragmentation")) for d in agg]),
            "peak_bytes_in_use": counts.column(agg, "peakBytesInUse"),
            "requested_bytes": counts.column(act, "requestedBytes"),
            "allocation_bytes": counts.column(act, "allocationBytes"),
            "address": np.array([_int(a.get("address")) for a in act], np.uint64).astype(np.int64),
            "tf_op": [str(a.get("tfOpName", "")) for a in act],
            "group_id": ints(act, "stepId"),
            "region_type": [str(a.get("regionType", "")) for a in act],
            "data_type": [str(a.get("dataType", "")) for a in act],
            "tensor_shape": [str(a.get("tensorShape", "")) for a in act],
            "event": np.full(len(snaps), -1, np.int64),
        }
    )
    return df


def _active_allocations(host, allocator, prof, snaps, peak_step) -> pd.DataFrame:
    """What was live at the peak, as the file lists it (active_allocations: each points at a
    snapshot's allocation or at a special allocation such as the unused preallocation)."""
    special = [s for s in prof.get("specialAllocations", []) if isinstance(s, dict)]
    rows = []
    for a in prof.get("activeAllocations", []) or []:
        if not isinstance(a, dict):
            continue
        si, sp = _int(a.get("snapshotIndex", -1)), _int(a.get("specialIndex", -1))
        if 0 <= si < len(snaps):
            meta = snaps[si].get("activityMetadata") or {}
        elif 0 <= sp < len(special):
            meta = special[sp]
        else:
            continue
        rows.append(
            {
                "host": host,
                "allocator": allocator,
                "occurrences": _int(a.get("numOccurrences", 1)),
                "allocation_bytes": _int(meta.get("allocationBytes")),
                "requested_bytes": _int(meta.get("requestedBytes")),
                "tf_op": str(meta.get("tfOpName", "")),
                "region_type": str(meta.get("regionType", "")),
                "data_type": str(meta.get("dataType", "")),
                "tensor_shape": str(meta.get("tensorShape", "")),
                "group_id": peak_step,
            }
        )
    return pd.DataFrame(rows, columns=list(schema.TOOL_MEMORY_BREAKDOWN))


# -- pod viewer ---------------------------------------------------------------------------------
_CAMEL = re.compile(r"(?<!^)(?=[A-Z])")
_POD_FIXED = {"hostName", "chipId", "nodeId", "stepNum", "totalDurationUs", "bottleneck"}


def _snake(name: str) -> str:
    """'hostInfeedDurationUs' -> 'host_infeed_us'; 'Device compute' -> 'device_compute_us'."""
    if " " in name or name.islower():
        base = re.sub(r"[^0-9a-z]+", "_", name.lower()).strip("_")
        return base + "_us"
    base = _CAMEL.sub("_", name).lower()
    for suffix in ("_duration_us", "_us"):
        if base.endswith(suffix):
            base = base[: -len(suffix)]
            break
    return base + "_us"


def pod_viewer(doc: dict) -> tuple[pd.DataFrame, pd.DataFrame]:
    """TOOL_POD_STATS and TOOL_ALL_REDUCE_OPS from a PodViewerDatabase's JSON, in either
    layout: 2019's named per-core durations, or the current step_breakdown_us map whose keys
    the database's step_breakdown_events name."""
    names = {
        _int(e.get("id")): str(e.get("name", ""))
        for e in doc.get("stepBreakdownEvents", []) or []
        if isinstance(e, dict)
    }
    rows, reduce_rows = [], []
    maps = (doc.get("podStatsSequence") or {}).get("podStatsMap", []) or []
    for m in maps:
        if not isinstance(m, dict):
            continue
        step = _int(m.get("stepNum"))
        replicas = {str(k): _int(v) for k, v in (m.get("coreIdToReplicaIdMap") or {}).items()}
        for core, rec in (m.get("podStatsPerCore") or {}).items():
            if not isinstance(rec, dict):
                continue
            row = {
                "step": step,
                "core_id": _int(core),
                "replica_id": replicas.get(str(core)),
                "host_name": str(rec.get("hostName", "")),
                "chip_id": _int(rec.get("chipId")),
                "node_id": _int(rec.get("nodeId")),
                "total_duration_us": float(rec.get("totalDurationUs", 0.0) or 0.0),
                "bottleneck": str(rec.get("bottleneck", "")),
            }
            for key, value in rec.items():
                if key not in _POD_FIXED and key != "stepBreakdownUs":
                    row[_snake(key)] = float(value or 0.0)
            for key, value in (rec.get("stepBreakdownUs") or {}).items():
                row[_snake(names.get(_int(key), f"category {key}"))] = float(value or 0.0)
            rows.append(row)
        for op in m.get("allReduceOpDb", []) or []:
            if not isinstance(op, dict):
                continue
            groups = [
                [_int(r) for r in (g.get("replicaIds") or [])]
                for g in op.get("replicaGroups", []) or []
                if isinstance(g, dict)
            ]
            reduce_rows.append(
                {
                    "step": step,
                    "name": str(op.get("name", "")),
                    "occurrences": _int(op.get("occurrences")),
                    "duration_us": float(op.get("durationUs", 0.0) or 0.0),
                    "data_size_bytes": _int(op.get("dataSize")),
                    "replica_groups": json.dumps(groups, separators=(",", ":")) if groups else "",
                    "description": str(op.get("description", "")),
                }
            )
    fixed = list(schema.TOOL_POD_STATS)
    pods = pd.DataFrame(rows)
    if not len(pods):
        pods = schema.empty(schema.TOOL_POD_STATS)
    extra = [c for c in pods.columns if c not in fixed]
    pods["replica_id"] = pd.array(pods["replica_id"], dtype="Int64")
    pods = pods[fixed + extra].sort_values(["step", "core_id"], ignore_index=True)
    pods = pd.concat([schema.conform(pods[fixed], schema.TOOL_POD_STATS), pods[extra]], axis=1)
    reduce_df = pd.DataFrame(reduce_rows, columns=list(schema.TOOL_ALL_REDUCE_OPS))
    return pods, schema.conform(reduce_df, schema.TOOL_ALL_REDUCE_OPS)
