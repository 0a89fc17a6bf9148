"""XProf's Roofline Model tool: the device's peaks (``run.roofline_peaks``) and one point per
HLO instruction (``run.roofline``).

Peaks, XProf 2.24's rules (``hardware_type_utils``), from the device plane's stats:

* GPU peak FLOP/s = per-SM (per-CU) FLOPs per cycle × ``clock_rate`` × ``core_count``, the
  per-cycle figure being the largest of the vector and matrix units' fp32/fp16 rates of the
  compute capability (NVIDIA, the highest table entry not above it) or of the gfx version
  (AMD: compute capability 9.4 is gfx942, 9.5 gfx950);
* HBM bandwidth = the ``memory_bandwidth`` stat (bytes/s), shown in GiB/s;
* shared memory / L1 (LDS on AMD) = banks' bytes per cycle × clock × cores;
* TPU: the plane's ``peak_teraflops_per_second`` and ``peak_hbm_bw_gigabytes_per_second``.

A ridge point is peak FLOP/s over that memory's bandwidth in bytes/s (FLOP/B).

Per instruction on a GPU: :func:`.cost.instruction_costs` gives one execution's FLOPs and
bytes; XProf adds them for every device event of the instruction (a cuDNN call's memsets
count as executions). On a TPU (:func:`tpu_costs`) libtpu puts XLA's costs on each op's
metadata (``flops``, ``model_flops``, ``bytes_accessed`` and ``memory_access_breakdown``,
which splits the bytes by memory: HBM, CMEM, VMEM reads and writes), per run; XProf
multiplies them by the occurrences. Rates are ``costs / time``, the time being the op's
total time (a TPU op's costs include those of the ops nested in it; a GPU op's total time is
its self time). 'Bound by' is the resource the op uses closest to its peak (XProf's
SetRooflineMetrics): Compute (FLOP rate / peak), HBM (HBM bandwidth / peak) and, on TPU,
CMEM and VMEM reads and writes; 'Unknown' where it uses none. The roofline efficiency is
the largest of those utilisations (VMEM only on a chip without CMEM whose VMEM is merged, as
XProf's roofline model keeps one of them), the optimal FLOP rate the FLOP rate over it.
Where our FLOPs are not XProf's (cuBLAS GEMM calls, which xprof leaves at 0),
``flops_modeled`` is False. Program ids are uint64 (TPU fingerprints pass 2**63).
"""

from __future__ import annotations

import collections.abc
import functools
import re

import numpy as np
import pandas as pd

from ... import schema
from ...analysis.memo import per_run
from ...proto.wire import fields as _fields
from .columns import text, with_columns
from .cost import costs_by_instruction
from .gpu import ran_instructions
from .tpu import COST_STATS, tpu_device_ops

GIB = float(1 << 30)
# FLOPs per SM per cycle (NVIDIA; max of fp32/fp16 vector and matrix rates) by compute cap.
_NVIDIA_FLOPS_PER_CYCLE = {
    (10, 0): 8192,
    (9, 0): 4096,
    (8, 9): 1024,
    (8, 6): 1024,
    (8, 0): 2048,
    (7, 5): 1024,
    (7, 0): 1024,
    (6, 1): 256,
    (6, 0): 256,
    (5, 0): 256,
    (3, 0): 384,
    (2, 0): 64,
}
# AMD: FLOPs per CU per cycle and LDS bytes per CU per cycle, by gfx version.
_AMD_FLOPS_PER_CYCLE = {"gfx908": 1024, "gfx90a": 2048, "gfx942": 2048, "gfx950": 4096}
_AMD_LDS_BYTES_PER_CYCLE = {"gfx908": 128, "gfx90a": 128, "gfx942": 128, "gfx950": 256}
_AMD_GFX = {(9, 4): "gfx942", (9, 5): "gfx950"}
_AMD_FAMILY = {
    9: "AMD GPU - gfx-9XX series",
    10: "AMD GPU - gfx-10XX series",
    11: "AMD GPU - gfx-11XX series",
}
_PEAKS = ("peak_gflops", "peak_hbm_gibps", "peak_shm_gibps")


def roofline_peaks(run) -> pd.DataFrame:
    """One row per device plane with known peaks: schema.ROOFLINE_PEAKS."""
    return _peaks(run).copy()


@per_run
def _peaks(run) -> pd.DataFrame:
    """:func:`roofline_peaks`, once per run (the per-op rates read it too)."""
    ps = run.plane_stats
    if not len(ps):
        return schema.empty(schema.ROOFLINE_PEAKS)
    dev = ps[_plane_starts(ps, ("/device:GPU:", "/device:TPU:"))]
    if not len(dev):
        return schema.empty(schema.ROOFLINE_PEAKS)
    # One device per (host, plane), in the order a groupby sorts them (a categorical by its
    # categories' order); a few stats each, read as plain values.
    host, plane = text(dev["host"]), text(dev["plane"])
    key = np.stack([_group_order(dev["host"]), _group_order(dev["plane"])])
    order = np.lexsort(key[::-1])
    stat = text(dev["stat"])[order]
    ints, floats = dev["int_value"].to_numpy()[order], dev["float_value"].to_numpy()[order]
    strs = dev["str_value"].to_numpy(object)[order]
    host, plane, key = host[order], plane[order], key[:, order]
    cuts = np.flatnonzero(np.r_[True, (key[:, 1:] != key[:, :-1]).any(axis=0), True])
    rows = []
    for a, b in zip(cuts[:-1].tolist(), cuts[1:].tolist()):
        st = {stat[k]: (ints[k], floats[k], strs[k]) for k in range(a, b)}
        tpu = plane[a].startswith("/device:TPU:")
        row = _tpu_peaks(st) if tpu else _gpu_peaks(st)
        if row is not None:
            rows.append({"host": host[a], "device": plane[a], **row})
    if not rows:
        return schema.empty(schema.ROOFLINE_PEAKS)
    cols = {c: np.array([r[c] for r in rows], object) for c in ("host", "device", "device_type")}
    nums = {c: np.array([r[c] for r in rows], float) for c in _PEAKS}
    with np.errstate(divide="ignore", invalid="ignore"):
        nums["hbm_ridge_point"] = _ridge(nums["peak_gflops"], nums["peak_hbm_gibps"])
        nums["shm_ridge_point"] = _ridge(nums["peak_gflops"], nums["peak_shm_gibps"])
    out = pd.DataFrame({**{c: schema.text_categorical(v) for c, v in cols.items()}, **nums})
    return schema.conform(out, schema.ROOFLINE_PEAKS)


def _group_order(column: pd.Series) -> np.ndarray:
    """Sort key of a groupby key column: a categorical's codes (groupby sorts a categorical
    by its categories' order), else the text's rank."""
    if isinstance(column.dtype, pd.CategoricalDtype):
        return np.asarray(column.cat.codes, np.int64)
    return np.unique(text(column), return_inverse=True)[1].astype(np.int64)


def _plane_starts(ps: pd.DataFrame, prefixes: tuple[str, ...]) -> np.ndarray:
    """Rows of plane_stats whose plane name starts with one of ``prefixes``: each distinct
    plane tested once (the column is a categorical of a few planes)."""
    plane = ps["plane"]
    if not isinstance(plane.dtype, pd.CategoricalDtype):
        return plane.astype(str).str.startswith(prefixes).to_numpy(bool)
    names = plane.cat.categories
    hit = np.array([str(n).startswith(prefixes) for n in names] + [False], bool)  # -1: none
    return hit[np.asarray(plane.cat.codes, np.int64)]


def _ridge(gflops: np.ndarray, gibps: np.ndarray) -> np.ndarray:
    """FLOP per byte where the memory roof meets the compute roof (0 where unknown)."""
    bw = gibps * GIB / 1e9
    return np.where(bw > 0, gflops / np.where(bw > 0, bw, 1), 0.0)


def _num(st: dict, name: str) -> float:
    i, f, _ = st.get(name, (0, np.nan, None))
    return float(f) if f == f and f is not None else float(i or 0)


def _gpu_peaks(st: dict) -> dict | None:
    """Peaks of a GPU plane from core_count, clock_rate (kHz), memory_bandwidth (B/s) and
    the compute capability; None without a clock or cores."""
    ghz, cores = _num(st, "clock_rate") / 1e6, _num(st, "core_count")
    if ghz <= 0 or cores <= 0:
        return None
    vendor = str(st.get("device_vendor", (0, 0, ""))[2] or "")
    cap = (int(_num(st, "compute_cap_major")), int(_num(st, "compute_cap_minor")))
    if vendor == "AMD":
        name = str(st.get("gpu_device_name", (0, 0, ""))[2] or "").split(":")[0]
        gfx = name if name.startswith("gfx") else _AMD_GFX.get(cap, "")
        per_cycle, lds = _AMD_FLOPS_PER_CYCLE.get(gfx, 0), _AMD_LDS_BYTES_PER_CYCLE.get(gfx, 0)
        kind = f"AMD GPU - {gfx}" if gfx else _AMD_FAMILY.get(cap[0], "AMD GPU")
    else:
        known = sorted(k for k in _NVIDIA_FLOPS_PER_CYCLE if k <= cap) or [
            min(_NVIDIA_FLOPS_PER_CYCLE)
        ]
        per_cycle = _NVIDIA_FLOPS_PER_CYCLE[known[-1]]
        lds = 32 * 4 / 2 if cap[0] <= 2 else 32 * 8  # 32 banks of 4 B per 2 cycles / 8 B per cycle
        kind = _nvidia_model(cap)
    return {
        "device_type": kind,
        "peak_gflops": per_cycle * ghz * cores,
        "peak_hbm_gibps": _num(st, "memory_bandwidth") / GIB,
        "peak_shm_gibps": lds * ghz * cores * 1e9 / GIB,
    }


def _nvidia_model(cap: tuple[int, int]) -> str:
    """XProf's device type text of an NVIDIA GPU (``GpuModelName``)."""
    major, minor = cap
    name = {2: "Fermi", 3: "Kepler", 5: "Maxwell", 6: "Pascal", 9: "Hopper", 10: "Blackwell"}.get(
        major
    )
    if major == 7:
        name = "Volta" if minor < 5 else "Turing"
    elif major == 8:
        name = "Ampere" if minor < 9 else "Ada Lovelace"
    return f"Nvidia GPU ({name})" if name else "Nvidia GPU"


def _tpu_peaks(st: dict) -> dict | None:
    """Peaks of a TPU plane from its own stats (None without a peak FLOP rate)."""
    tflops = _num(st, "peak_teraflops_per_second")
    if tflops <= 0:
        return None
    return {
        "device_type": str(st.get("device_type_string", (0, 0, "TPU"))[2] or "TPU"),
        "peak_gflops": tflops * 1e3,
        "peak_hbm_gibps": _num(st, "peak_hbm_bw_gigabytes_per_second") * 1e9 / GIB,
        "peak_shm_gibps": _num(st, "peak_vmem_wr_bw_gigabytes_per_second") * 1e9 / GIB,
    }


def roofline(run) -> pd.DataFrame:
    """One row per HLO instruction of run.hlo_stats with its FLOPs, bytes, rates,
    operational intensities and bottleneck: schema.ROOFLINE."""
    hs = run.hlo_stats
    if not len(hs) or not len(roofline_peaks(run)):
        return schema.empty(schema.ROOFLINE)
    return schema.conform(op_rates(run, hs), schema.ROOFLINE)


def op_rates(run, ops: pd.DataFrame) -> pd.DataFrame:
    """The roofline figures of HLO ops (rows with host, program_id, hlo_op_name,
    occurrences, total_time_us, total_self_time_us: run.hlo_stats' rows) and the device
    peaks; the ops' own columns kept as they are (:func:`rate_columns` added)."""
    return with_columns(ops.reset_index(drop=True), rate_columns(run, ops))


def rate_columns(
    run, ops: collections.abc.Mapping[str, pd.Series] | pd.DataFrame
) -> dict[str, object]:
    """:func:`op_rates`' new columns (name -> values) of ops given as a frame or as a
    mapping of those columns (HLO stats asks before it makes its one frame). GPU ops' costs
    are XLA's cost model (:func:`.cost.program_costs`, per execution × occurrences), TPU
    ops' the costs libtpu put on each op's metadata (:func:`tpu_costs`, summed over the
    op's events)."""
    host, name = text(ops["host"]), text(ops["hlo_op_name"])
    # The costs key programs by the id's int64 bit pattern; hlo_stats shows it unsigned.
    program = ops["program_id"].to_numpy().astype(np.int64)
    gpu, modeled = _gpu_costs(run, host, program, name)
    tpu, tpu_at = _tpu_costs_of(run, host, program, name)
    on_tpu = tpu_at >= 0
    occ = ops["occurrences"].to_numpy(float)

    def total(gpu_col: str, tpu_col: str) -> np.ndarray:
        """The ops' total of a cost: libtpu's (summed over events) on TPU, else the cost
        model's per execution × occurrences; 0 where the op has none."""
        per = gpu[gpu_col] * occ if gpu_col else np.zeros(len(occ))
        return np.where(on_tpu, _at(tpu[tpu_col], tpu_at), per) if len(tpu) else per

    flops = total("flops", "model_flops")
    device = total("device_flops", "flops")
    # The FLOPs the intensity and the bottleneck use: XProf's flops_v2 (TPU: the measured
    # 'flops' stat; GPU: the cost model's, as flops above).
    measured = np.where(on_tpu, device, flops)
    nbytes = total("bytes_accessed", "bytes_accessed")
    hbm = total("hbm_bytes", "hbm_bytes")
    onchip = {c: total("", c) for c in ON_CHIP}
    # XProf's rates divide by the op's time including the ops nested in it (its costs
    # include theirs): total_time_us (a GPU op's equals its self time).
    secs = ops["total_time_us"].to_numpy(float) / 1e6
    peaks = _host_peaks(run, host)
    res = _rates(flops, measured, nbytes, hbm, onchip, secs, peaks)
    # A GPU custom call no cost model covers (TransformerEngine's fused attention, a user's
    # kernel) has no FLOPs: what bounds it is unknown, as XProf says (it counts no bytes
    # either), not 'HBM' from the bytes of its shapes alone.
    unknown = ~on_tpu & (flops <= 0) & _custom_calls(run, host, program, name)
    if unknown.any():
        res["bound_by"] = np.where(unknown, "Unknown", res["bound_by"])
        for col in ("roofline_efficiency", "bottleneck_operational_intensity"):
            res[col] = np.where(unknown, 0.0, res[col])
        res["optimal_gflops_per_s"] = np.where(unknown, 0.0, res["optimal_gflops_per_s"])
    with np.errstate(divide="ignore", invalid="ignore"):
        res["normalized_gflops_per_s"] = np.where(secs > 0, device / secs / 1e9, 0.0)
    res["bound_by"] = schema.text_categorical(res["bound_by"])
    notes = roof_notes(name, res["above_roof"], res["compute_efficiency"] >= 1.0, modeled | on_tpu)
    notes[unknown & (notes == "")] = NOTE_UNCOVERED
    res["roof_note"] = schema.text_categorical(notes)
    new = {"flops_modeled": modeled | on_tpu, "flops": flops, "bytes_accessed": nbytes}
    return {**new, "hbm_bytes": hbm, **res}


_ASYNC = re.compile(r"-(start|done|update)(\.\d+)?$")
NOTE_ASYNC = (
    "above its roof: an async op's start/done events time its issue or wait, not the "
    "transfer its bytes count"
)
NOTE_UNMODELED = (
    "above the compute roof: FLOPs from the call's shapes (no cost model), counted once per "
    "device event as XProf counts a cost, so a call running several kernels (a split-K "
    "GEMM and its reduction) counts them more than once"
)
NOTE_COMPUTE = (
    "above the compute roof: the cost model's FLOPs are more than the measured time allows "
    "(time not all attributed to the op)"
)
NOTE_MEMORY = (
    "above the memory roof: the cost model's bytes are more than the memory moves in the "
    "measured time (caches serve data it counts as memory traffic, or time not attributed)"
)


NOTE_UNCOVERED = (
    "bound unknown: a custom call no cost model covers (no FLOPs), so its bytes alone do not "
    "say what bounds it"
)


def _custom_calls(run, host: np.ndarray, program: np.ndarray, name: np.ndarray) -> np.ndarray:
    """Per op (host, program id, HLO op name): is it a custom-call instruction of its
    program (of the GPU programs that ran: the whole table is never made for this)?"""
    if not len(name):
        return np.zeros(len(name), bool)
    h = ran_instructions(run)
    if not len(h):
        return np.zeros(len(name), bool)
    calls = h[(h["opcode"].astype(str) == "custom-call").to_numpy()]
    if not len(calls):
        return np.zeros(len(name), bool)
    index = pd.MultiIndex.from_arrays(
        [
            calls["host"].astype(str).to_numpy(object),
            calls["program_id"].to_numpy().astype(np.int64),
            calls["instruction"].astype(str).to_numpy(object),
        ]
    )
    keys = pd.MultiIndex.from_arrays([host, program, name])
    return index.unique().get_indexer(keys) >= 0


def roof_notes(
    names: np.ndarray, above: np.ndarray, compute_full: np.ndarray, modeled: np.ndarray
) -> np.ndarray:
    """Why an op's rate is above a roof ('' where it is not): an async start/done op, FLOPs
    no cost model gave, or modelled FLOPs or bytes the measured time cannot hold."""
    names = np.asarray(names, object)
    out = np.full(len(names), "", object)
    if not above.any():
        return out
    idx = np.flatnonzero(above)
    for i in idx.tolist():  # the few rows above a roof
        if _ASYNC.search(str(names[i])):
            out[i] = NOTE_ASYNC
        elif compute_full[i]:
            out[i] = NOTE_COMPUTE if modeled[i] else NOTE_UNMODELED
        else:
            out[i] = NOTE_MEMORY
    return out


def _at(column: pd.Series, at: np.ndarray) -> np.ndarray:
    """``column``'s values (float) at rows ``at``, 0 where ``at`` is -1 or the value NaN."""
    values = np.append(column.to_numpy(float), 0.0)
    out = values[np.where(at >= 0, at, len(values) - 1)]
    return np.where(np.isnan(out), 0.0, out)


_GPU_COSTS = ("flops", "device_flops", "bytes_accessed", "hbm_bytes")


def _gpu_costs(run, host, program, name) -> tuple[dict[str, np.ndarray], np.ndarray]:
    """Per op (host, program, HLO op name): XLA's GPU cost model's figures of one execution
    (:data:`_GPU_COSTS`, 0 where it has none) and whether they are XProf's (flops_modeled).
    The cost model is for GPU programs (a TPU host's ops take libtpu's costs) and runs on
    the programs of the ops only (:func:`.cost.costs_by_instruction`)."""
    tpu_hosts = set(tpu_costs(run)["host"])
    keys = list(zip(host.tolist(), program.tolist(), name.tolist()))
    wanted = {k[:2] for k in keys if k[0] not in tpu_hosts}
    by_key = costs_by_instruction(run, wanted, keys) if wanted else {}
    none = (0.0, 0.0, 0.0, 0.0, False)
    found = [by_key.get(k, none) if k[0] not in tpu_hosts else none for k in keys]
    table = np.array([f[:4] for f in found], float).reshape(len(keys), 4)
    modeled = np.array([bool(f[4]) for f in found], bool)
    return {c: table[:, j] for j, c in enumerate(_GPU_COSTS)}, modeled


def _tpu_costs_of(run, host, program, name) -> tuple[pd.DataFrame, np.ndarray]:
    """libtpu's costs per TPU op (:func:`tpu_costs`) and, per op (host, program, HLO op
    name), its row there (-1 where it has none)."""
    costs = tpu_costs(run)
    if not len(costs) or not len(name):
        return costs, np.full(len(name), -1, np.int64)
    index = pd.MultiIndex.from_arrays(
        [
            costs["host"].astype(str).to_numpy(object),
            costs["program_id"].to_numpy().astype(np.int64),
            costs["hlo_op_name"].astype(str).to_numpy(object),
        ]
    )
    first = ~index.duplicated()  # the first row of a key, as a left merge of unique keys
    if not first.all():
        costs, index = costs[first].reset_index(drop=True), index[first]
    return costs, index.get_indexer(pd.MultiIndex.from_arrays([host, program, name]))


# TPU on-chip memories of libtpu's memory_access_breakdown: (column, memory space, operation
# type, the plane stat of its peak). XProf's PerformanceInfo.MemoryAccessed.MemorySpace:
# 1 HBM, 2 CMEM, 3 VMEM; OpMetrics.MemoryAccessed.OperationType: 1 READ, 2 WRITE.
ON_CHIP = {
    "cmem_read_bytes": (2, 1, "peak_cmem_rd_bw_gigabytes_per_second"),
    "cmem_write_bytes": (2, 2, "peak_cmem_wr_bw_gigabytes_per_second"),
    "vmem_read_bytes": (3, 1, "peak_vmem_rd_bw_gigabytes_per_second"),
    "vmem_write_bytes": (3, 2, "peak_vmem_wr_bw_gigabytes_per_second"),
}
_HBM_SPACE = 1
_BOUND = ("Compute", "HBM", "CMEM Read", "CMEM Write", "VMEM Read", "VMEM Write")


def _host_peaks(run, hosts: np.ndarray) -> dict[str, np.ndarray]:
    """Per op row: its host's peak GFLOP/s, HBM and on-chip bandwidths (GiB/s; the on-chip
    ones 0 off TPU) and whether the chip has merged VMEM."""
    # Per distinct host (a few), then spread over the rows.
    codes, uniq = pd.factorize(hosts)
    by_host = _first_device_peaks(run)
    per = np.array([by_host.get(h, (0.0, 0.0)) for h in uniq], float).reshape(len(uniq), 2)
    out = {c: per[codes, j] for j, c in enumerate(("peak_gflops", "peak_hbm_gibps"))}
    ps = run.plane_stats
    tpu = ps[_plane_starts(ps, ("/device:TPU:",))] if len(ps) else ps
    for col, (_, _, stat) in (*ON_CHIP.items(), ("merged_vmem", (0, 0, "has_merged_vmem"))):
        if not len(tpu):  # no TPU: no on-chip memories, no merged VMEM
            out[col] = np.zeros(len(hosts))
            continue
        s = tpu[tpu["stat"].astype(str) == stat]
        v = s["float_value"].where(s["float_value"].notna(), s["int_value"]).astype(float)
        per = v.groupby(s["host"].astype(str).to_numpy()).first()
        scale = 1.0 if col == "merged_vmem" else 1e9 / GIB
        out[col] = per.reindex(uniq).fillna(0).to_numpy(float)[codes] * scale
    return out


@per_run
def _first_device_peaks(run) -> dict[str, tuple[float, float]]:
    """Host -> (peak GFLOP/s, peak HBM GiB/s) of its first device with known peaks."""
    peaks = _peaks(run)
    out: dict = {}
    for h, f, b in zip(text(peaks["host"]).tolist(), peaks["peak_gflops"].tolist(),
                       peaks["peak_hbm_gibps"].tolist()):  # fmt: skip
        out.setdefault(h, (f, b))
    return out


@per_run
def tpu_costs(run) -> pd.DataFrame:
    """XProf's costs of each TPU HLO op (host, program_id, hlo_op_name), summed over its
    events on every core: flops, model_flops (the flops where the op has none), bytes_accessed,
    hbm_bytes (the HBM entries of the op's memory_access_breakdown; all its bytes where it
    has no breakdown; breakdown_hbm_bytes: its HBM entries only, as the op profile counts
    them) and the on-chip reads and writes (:data:`ON_CHIP`). libtpu writes them
    per run on the op's metadata; XProf multiplies them by the occurrences (custom-calls
    apart, whose costs ride on the events: not read here)."""
    ops = tpu_device_ops(run)
    if not len(ops):
        return _no_tpu_costs().copy()
    br = _breakdowns(run)
    ev = ops[["host", "plane", "name", "program_id", "op_name", *COST_STATS]].merge(
        br, on=["host", "plane", "name"], how="left"
    )
    has = ev["entries"].fillna(0).to_numpy() > 0
    ev["breakdown_hbm_bytes"] = ev["hbm_bytes"].fillna(0)
    ev["hbm_bytes"] = np.where(has, ev["breakdown_hbm_bytes"], ev["bytes_accessed"])
    for c in ON_CHIP:
        ev[c] = ev[c].fillna(0)
    ev["model_flops"] = np.where(ev["model_flops"] > 0, ev["model_flops"], ev["flops"])
    g = ev.groupby(["host", "program_id", "op_name"], sort=False)[
        ["flops", "model_flops", "bytes_accessed", "hbm_bytes", "breakdown_hbm_bytes", *ON_CHIP]
    ].sum()
    return g.astype(float).reset_index().rename(columns={"op_name": "hlo_op_name"})


@functools.cache
def _no_tpu_costs() -> pd.DataFrame:
    """:func:`tpu_costs` of a run without TPU ops (made once: every GPU run asks)."""
    cols = ["host", "program_id", "hlo_op_name", "flops", "model_flops", "bytes_accessed"]
    more = ("hbm_bytes", "breakdown_hbm_bytes", *ON_CHIP)
    empty = {c: pd.Series(dtype=float) for c in (*cols, *more)}
    return pd.DataFrame(empty).astype({"host": str, "program_id": np.int64, "hlo_op_name": str})


def _breakdowns(run) -> pd.DataFrame:
    """Per TPU op metadata (host, plane, name): the entries of its memory_access_breakdown
    (a serialized MemoryAccessBreakdown: repeated MemoryAccessed{operation_type = 1,
    memory_space = 2, bytes_accessed = 3}) summed as hbm_bytes and :data:`ON_CHIP`."""
    ms = run.metadata_stats
    ms = ms[(ms["stat"].astype(str) == "memory_access_breakdown").to_numpy()]
    md = run.event_metadata
    key = ["host", "plane", "metadata_id"]
    ms = ms[[*key, "str_value"]].astype({"host": str, "plane": str})
    names = md[[*key, "name"]].astype({"host": str, "plane": str, "name": str})
    ms = ms.merge(names, on=key, how="inner")
    rows = []
    for blob in ms["str_value"].tolist():  # one per distinct op: a few hundred at most
        rows.append(_breakdown_sums(blob if isinstance(blob, bytes) else b""))
    sums = pd.DataFrame(rows, columns=["entries", "hbm_bytes", *ON_CHIP], dtype=float)
    out = pd.concat([ms[["host", "plane", "name"]].reset_index(drop=True), sums], axis=1)
    return out.drop_duplicates(["host", "plane", "name"], ignore_index=True)


def _breakdown_sums(blob: bytes) -> tuple:
    """(entries, HBM bytes, CMEM read, CMEM write, VMEM read, VMEM write) of one
    MemoryAccessBreakdown; a damaged one counts as no breakdown."""
    try:
        entries = [_fields(e) for e in _fields(blob).get(1, []) if isinstance(e, bytes)]
    except ValueError:
        return (0, 0, 0, 0, 0, 0)
    sums = dict.fromkeys(["hbm", *ON_CHIP], 0)
    for e in entries:
        op, space, nbytes = (e.get(k, [0])[-1] for k in (1, 2, 3))
        if not isinstance(nbytes, int):
            continue
        if space == _HBM_SPACE:
            sums["hbm"] += nbytes
        for col, (sp, kind, _) in ON_CHIP.items():
            if space == sp and op == kind:
                sums[col] += nbytes
    return (len(entries), *sums.values())


def _rates(flops, measured, nbytes, hbm, onchip, secs, peaks) -> dict:
    """XProf's per-op roofline figures (SetRooflineMetrics and the roofline model's
    efficiencies) from totals (FLOPs, bytes, seconds) and the host's peaks. The bottleneck
    is the resource used closest to its peak (Compute, HBM, then the TPU's CMEM/VMEM reads
    and writes, the first of equals), 'Unknown' where none is used."""
    with np.errstate(divide="ignore", invalid="ignore"):

        def rate(x, unit):
            return np.where(secs > 0, x / secs / unit, 0.0)

        def share(x, peak):
            return np.where(peak > 0, x / np.where(peak > 0, peak, 1), 0.0)

        def per_byte(x):
            return np.where(x > 0, measured / np.where(x > 0, x, 1), 0.0)

        gflops, measured_gflops = rate(flops, 1e9), rate(measured, 1e9)
        hbm_bw, chip_bw = rate(hbm, GIB), {c: rate(v, GIB) for c, v in onchip.items()}
        compute = share(measured_gflops, peaks["peak_gflops"])
        hbm_util = share(hbm_bw, peaks["peak_hbm_gibps"])
        chip_util = {c: share(chip_bw[c], peaks[c]) for c in ON_CHIP}
        utils = np.stack([compute, hbm_util, *chip_util.values()], axis=1)
        intensity = np.stack(
            [per_byte(nbytes), per_byte(hbm), *(per_byte(v) for v in onchip.values())], axis=1
        )
        top = utils.argmax(axis=1)
        used = utils.max(axis=1) > 0
        bound = np.where(used, np.asarray(_BOUND, object)[top], "Unknown")
        bottleneck = np.where(used, intensity[np.arange(len(top)), top], 0.0)
        # The roofline model's memory utilisation: CMEM where the chip has it, else VMEM
        # where its VMEM is merged (XProf's RooflineModelDatabase keeps one of the two).
        has_cmem = (peaks["cmem_read_bytes"] > 0) | (peaks["cmem_write_bytes"] > 0)
        vmem = (peaks["merged_vmem"] > 0) & ~has_cmem
        mem = np.maximum.reduce(
            [
                hbm_util,
                chip_util["cmem_read_bytes"],
                chip_util["cmem_write_bytes"],
                np.where(vmem, chip_util["vmem_read_bytes"], 0.0),
                np.where(vmem, chip_util["vmem_write_bytes"], 0.0),
            ]
        )
        eff = np.maximum(mem, compute)
        # A rate above its roof cannot have run: the modelled FLOPs or bytes are more than
        # the measured time allows (an async op's start/done events time its issue and wait,
        # not the transfer; kernels whose time went to another op; caches serving what the
        # cost model counts as HBM traffic). XProf shows such utilisations above 1; we keep
        # its figure (xprof_roofline_efficiency), cap the ones a user reads at 1 (as XProf's
        # op profile caps its utilisations) and say why on the row.
        above = np.maximum(np.maximum(compute, hbm_util), np.max(
            np.stack([chip_util[c] for c in ON_CHIP], axis=1), axis=1)) > 1.0 + 1e-9  # fmt: skip
    return {
        "model_gflops_per_s": gflops,
        "memory_bw_gibps": rate(nbytes, GIB),
        "hbm_bw_gibps": hbm_bw,
        "cmem_read_bw_gibps": chip_bw["cmem_read_bytes"],
        "cmem_write_bw_gibps": chip_bw["cmem_write_bytes"],
        "vmem_read_bw_gibps": chip_bw["vmem_read_bytes"],
        "vmem_write_bw_gibps": chip_bw["vmem_write_bytes"],
        "operational_intensity": per_byte(nbytes),
        "hbm_operational_intensity": per_byte(hbm),
        "bottleneck_operational_intensity": bottleneck,
        "bound_by": bound,
        "optimal_gflops_per_s": np.where(eff > 0, measured_gflops / np.where(eff > 0, eff, 1), 0.0),
        "roofline_efficiency": np.minimum(eff, 1.0),
        "compute_efficiency": np.minimum(compute, 1.0),
        "max_mem_bw_utilization": np.minimum(mem, 1.0),
        "xprof_roofline_efficiency": eff,
        "above_roof": above,
    }


__all__ = ["roofline", "roofline_peaks", "tpu_costs"]
