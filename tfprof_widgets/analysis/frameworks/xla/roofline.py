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

Per instruction: :func:`.cost.instruction_costs` gives one execution's FLOPs and bytes;
XProf adds them for every device event of the instruction (a cuDNN call's memsets count as
executions), so the rates are ``costs × occurrences / self time``. 'Bound by' is HBM where
the instruction's HBM operational intensity is below the HBM ridge point, else Compute
('Unknown' with no bytes); the optimal FLOP rate is the roof above the bottleneck
intensity, and the roofline efficiency the FLOP rate over it (HBM-bound: HBM bandwidth over
its peak). Where our FLOPs are not XProf's (cuBLAS GEMM calls, which xprof leaves at 0),
``flops_modeled`` is False.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .... import schema
from .cost import instruction_costs

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


def roofline_peaks(run) -> pd.DataFrame:
    """One row per device plane with known peaks: schema.ROOFLINE_PEAKS."""
    ps = run.plane_stats
    if not len(ps):
        return schema.empty(schema.ROOFLINE_PEAKS)
    dev = ps[ps["plane"].astype(str).str.startswith(("/device:GPU:", "/device:TPU:")).to_numpy()]
    rows = []
    for (host, plane), g in dev.groupby(["host", "plane"], observed=True, sort=True):
        st = {
            s: (i, f, t)
            for s, i, f, t in zip(
                g["stat"].astype(str), g["int_value"], g["float_value"], g["str_value"]
            )
        }
        row = _tpu_peaks(st) if str(plane).startswith("/device:TPU:") else _gpu_peaks(st)
        if row is not None:
            rows.append({"host": str(host), "device": str(plane), **row})
    if not rows:
        return schema.empty(schema.ROOFLINE_PEAKS)
    out = pd.DataFrame(rows)
    with np.errstate(divide="ignore", invalid="ignore"):
        out["hbm_ridge_point"] = _ridge(out["peak_gflops"], out["peak_hbm_gibps"])
        out["shm_ridge_point"] = _ridge(out["peak_gflops"], out["peak_shm_gibps"])
    return schema.conform(out, schema.ROOFLINE_PEAKS)


def _ridge(gflops: pd.Series, gibps: pd.Series) -> np.ndarray:
    """FLOP per byte where the memory roof meets the compute roof (0 where unknown)."""
    bw = gibps.to_numpy(float) * GIB / 1e9
    return np.where(bw > 0, gflops.to_numpy(float) / np.where(bw > 0, bw, 1), 0.0)


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
    occurrences, total_self_time_us: run.hlo_stats' rows) from XLA's costs
    (:func:`.cost.instruction_costs`) and the device peaks; the ops' own columns kept."""
    costs = instruction_costs(run).rename(columns={"instruction": "hlo_op_name"})
    # XLA's GPU cost model is for GPU programs: a TPU host's ops get no costs from it.
    planes = run.planes
    tpu = planes.loc[planes["plane"].astype(str).str.startswith("/device:TPU:"), "host"]
    costs = costs[~costs["host"].astype(str).isin(set(tpu.astype(str)))]
    peaks = roofline_peaks(run)
    per_host = peaks.groupby("host", observed=True).first()  # one device kind per host
    out = ops.assign(hlo_op_name=ops["hlo_op_name"].astype(str), host=ops["host"].astype(str))
    out = out.merge(costs, on=["host", "program_id", "hlo_op_name"], how="left")
    occ = out["occurrences"].to_numpy(float)
    flops = out["flops"].fillna(0).to_numpy(float) * occ
    nbytes = out["bytes_accessed"].fillna(0).to_numpy(float) * occ
    hbm = out["hbm_bytes"].fillna(0).to_numpy(float) * occ
    secs = out["total_self_time_us"].to_numpy(float) / 1e6

    def peak_of(col: str) -> np.ndarray:
        if col not in per_host:
            return np.zeros(len(out))
        return out["host"].map(per_host[col]).fillna(0).to_numpy(float)

    res = _rates(
        flops,
        nbytes,
        hbm,
        secs,
        peak_of("peak_gflops"),
        peak_of("peak_hbm_gibps"),
        peak_of("hbm_ridge_point"),
    )
    device = out["device_flops"].fillna(0).to_numpy(float) * occ
    with np.errstate(divide="ignore", invalid="ignore"):
        res["normalized_gflops_per_s"] = np.where(secs > 0, device / secs / 1e9, 0.0)
    return out.drop(columns=["flops", "device_flops", "bytes_accessed", "hbm_bytes"]).assign(
        flops=flops,
        bytes_accessed=nbytes,
        hbm_bytes=hbm,
        **res,
        flops_modeled=out["flops_modeled"].fillna(False).astype(bool),
    )


def _rates(flops, nbytes, hbm, secs, peak, peak_bw, ridge) -> dict:
    """XProf's per-op roofline figures from totals (FLOPs, bytes, seconds) and peaks."""
    with np.errstate(divide="ignore", invalid="ignore"):
        gflops = np.where(secs > 0, flops / secs / 1e9, 0.0)
        bw = np.where(secs > 0, nbytes / secs / GIB, 0.0)
        hbm_bw = np.where(secs > 0, hbm / secs / GIB, 0.0)
        oi = np.where(nbytes > 0, flops / nbytes, 0.0)
        hbm_oi = np.where(hbm > 0, flops / hbm, 0.0)
        hbm_bound = (hbm > 0) & (hbm_oi < ridge)
        bound = np.where(hbm_bound, "HBM", np.where(flops > 0, "Compute", "Unknown"))
        bound = np.where((flops == 0) & (hbm > 0), "HBM", bound)
        bottleneck = np.where(hbm_bound, hbm_oi, oi)
        optimal = np.where(hbm_bound, bottleneck * peak_bw * GIB / 1e9, peak)
        bw_util = np.where(peak_bw > 0, hbm_bw / peak_bw, 0.0)
        compute = np.where(peak > 0, gflops / peak, 0.0)
        eff = np.where(hbm_bound | ((flops == 0) & (hbm > 0)), bw_util, compute)
    return {
        "model_gflops_per_s": gflops,
        "memory_bw_gibps": bw,
        "hbm_bw_gibps": hbm_bw,
        "operational_intensity": oi,
        "hbm_operational_intensity": hbm_oi,
        "bottleneck_operational_intensity": bottleneck,
        "bound_by": bound,
        "optimal_gflops_per_s": optimal,
        "roofline_efficiency": eff,
        "compute_efficiency": compute,
        "max_mem_bw_utilization": bw_util,
    }


__all__ = ["roofline", "roofline_peaks"]
