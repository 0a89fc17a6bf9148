"""GPU kernel statistics (``run.kernels``), as TensorBoard's kernel-stats tool shows them.

A kernel is an event on a device's own (non-derived) line that carries ``kernel_details``
and lasts more than zero. Its launch parameters come from ``kernel_details`` in either
format TensorFlow has written: ``regs:16 shm:0 grid:1,1,1 block:1024,1,1`` (TF 2.4 era) or
``regs:N static_shared:N dynamic_shared:N grid:x,y,z block:x,y,z occ_pct:F``.

Rows are grouped by XProf's ``KernelReport`` key: (kernel name, grid, block, registers per
thread, static and dynamic shared memory, uses Tensor Cores, op is Tensor-Core eligible, TF
op) — per host — and ranked by total duration, ties by name, the first 1,000 kept. We use
that key rather than the kernel name alone because one kernel launched with other
dimensions or by another op is a different row on TensorBoard's page, and the rows then
compare one to one with its kernel-stats tool and with the ``KernelStatsDb`` files TF 2.3-2.10
wrote (``tests/tensorflow/test_fidelity.py``, ``tests/readers/test_tool_data.py``: the real
8-GPU capture's 15 rows equal both). The op is the kernel's ``tf_op`` stat, parsed by the
run's frameworks, and whether it could use Tensor Cores is the frameworks' rule
(:meth:`~.frameworks.Framework.tensor_core_eligible`).
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd

from .. import schema, stat_columns
from ..frameworks import framework_of
from ..frameworks.xla.gpu import graph_kernel_rows
from .event_index import event_line_ids, is_derived_line, on_device
from .event_ops import parsed_values
from .nesting import group_numbers

# Kernel-name fragments of NVIDIA Tensor Core kernels (XProf's list).
TENSOR_CORE_PATTERNS = (
    "16816",
    "c1688",
    "conv1x1",
    "conv2d_c1_k1",
    "dgrad_1x1_stride_2x2",
    "direct_group",
    "first_layer_wgrad_kernel",
    "h1688",
    "h884",
    "hmma",
    "i16832",
    "i8816",
    "s884",
    "s1688",
    "xmma_gemm",
    "xmma_implicit_gemm",
    "xmma_sparse_conv",
    "xmma_sparse_gemm",
    "xmma_warp_specialized_implicit_gemm",
)
_TC_RE = re.compile("|".join(re.escape(p) for p in TENSOR_CORE_PATTERNS))
# Ours, beyond XProf's list: Hopper's Tensor Core kernels it does not know. cuBLASLt's
# ``nvjet_*`` GEMMs (``nvjet_sm90_tst_128x256_64x4_2x1_v_bz_coopA_NNN``: warpgroup MMA), and
# cuDNN/cuBLAS ``sm90_xmma_*`` kernels (``sm90_xmma_fprop_implicit_gemm_bf16bf16_...``,
# ``sm90_xmma_gemm_*tf32*``): every xmma kernel runs on Tensor Cores (tf32 included), XProf
# matches only ``xmma_gemm``/``xmma_implicit_gemm``; CUTLASS kernels built on its Tensor Core
# MMA (``cutlass_tensorop_*``, mangled ``...MmaTensorOp...``: any case) alike.
EXTRA_TENSOR_CORE_PATTERNS = ("nvjet_", "_xmma_", "xmma__", "tensorop", "wgmma")
_EXTRA_TC_RE = re.compile("|".join(re.escape(p) for p in EXTRA_TENSOR_CORE_PATTERNS), re.IGNORECASE)
# Kernel-name fragments of AMD matrix-core kernels (hipBLASLt/Tensile's Cijk_ GEMMs, MFMA and
# WMMA kernels, XLA's GEMM fusions), as XProf 2.24 marks them on AMD GPUs (seen in its kernel
# stats of the MI300X JAX captures).
AMD_MATRIX_CORE_PATTERNS = ("Cijk_", "mfma", "wmma", "gemm_fusion")
_AMD_TC_RE = re.compile("|".join(re.escape(p) for p in AMD_MATRIX_CORE_PATTERNS))
MAX_KERNELS = 1000


def parse_kernel_details(details: str) -> dict:
    """Launch parameters from a ``kernel_details`` stat (both formats)."""
    out = {
        "registers_per_thread": 0,
        "static_shmem": 0,
        "dynamic_shmem": 0,
        "block_dim": "1,1,1",
        "grid_dim": "1,1,1",
        "occupancy_percent": 0.0,
    }
    for token in re.split(r"[ \n]", details or ""):
        key, sep, value = token.partition(":")
        if not sep or ":" in value:
            continue
        try:
            if key == "regs":
                out["registers_per_thread"] = int(value)
            elif key in ("static_shared", "shm"):
                out["static_shmem"] = int(value)
            elif key == "dynamic_shared":
                out["dynamic_shmem"] = int(value)
            elif key in ("block", "grid"):
                dims = [int(v) for v in value.split(",")]
                if len(dims) == 3:
                    out[f"{key}_dim"] = ",".join(map(str, dims))
            elif key == "occ_pct":
                out["occupancy_percent"] = float(value)
        except ValueError:
            continue
    return out


def einsum_eligible(equation: str) -> bool:
    lhs, arrow, _ = (equation or "").partition("->")
    return bool(arrow) and len(lhs.split(",")) == 2


def kernel_stats(run) -> pd.DataFrame:
    """One row per (host, kernel, launch parameters, op): columns of schema.KERNELS."""
    df = _launches(run)
    if df is None:
        return schema.empty(schema.KERNELS)
    keys = [
        "host",
        "kernel_name",
        "grid_dim",
        "block_dim",
        "registers_per_thread",
        "static_shmem",
        "dynamic_shmem",
        "is_kernel_using_tensor_core",
        "is_op_tensor_core_eligible",
        "operation",
    ]
    agg = _per_launch_config(df, keys)
    agg["shmem_bytes"] = agg["static_shmem"] + agg["dynamic_shmem"]
    agg["no_op_time_us"] = agg["no_op_time_us"].astype(float)
    agg["avg_time_us"] = agg["total_time_us"] / agg["occurrences"]
    agg = agg.sort_values(
        ["host", "total_time_us", "kernel_name"],
        ascending=[True, False, True],
        ignore_index=True,
    )
    agg = agg.groupby("host", sort=False).head(MAX_KERNELS).reset_index(drop=True)
    return schema.conform(agg, schema.KERNELS)


def _per_launch_config(df: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    """The launches grouped by ``keys`` (in order of first appearance): the first occupancy,
    the count and the total, min and max duration of each. Grouped by one integer per
    distinct key (:func:`.nesting.group_numbers`), not by ten object and number columns: the
    same groups, rows and order, so pandas' aggregates give the same numbers."""
    if any(pd.isna(df[k].to_numpy()).any() for k in keys):  # groupby drops such rows
        return (
            df.groupby(keys, sort=False)
            .agg(
                occupancy_percent=("occupancy_percent", "first"),
                beyond_xprof=("beyond_xprof", "any"),
                no_op_time_us=("no_op_dur", "sum"),
                occurrences=("dur", "size"),
                total_time_us=("dur", "sum"),
                min_time_us=("dur", "min"),
                max_time_us=("dur", "max"),
            )
            .reset_index()
        )
    group = group_numbers([df[k].to_numpy() for k in keys])
    first = np.unique(group, return_index=True)[1]
    g = df[["occupancy_percent", "beyond_xprof", "dur", "no_op_dur"]].groupby(group, sort=False)
    dur = g["dur"]
    return pd.DataFrame(
        {
            **{k: df[k].to_numpy()[first] for k in keys},
            "occupancy_percent": g["occupancy_percent"].first().to_numpy(),
            "beyond_xprof": g["beyond_xprof"].any().to_numpy(),
            "no_op_time_us": g["no_op_dur"].sum().to_numpy(),
            "occurrences": dur.size().to_numpy(),
            "total_time_us": dur.sum().to_numpy(),
            "min_time_us": dur.min().to_numpy(),
            "max_time_us": dur.max().to_numpy(),
        }
    )


def _launches(run) -> pd.DataFrame | None:
    """One row per kernel launch with its parameters, op and Tensor Core use (None if the
    run has no kernels)."""
    ev = run.events
    n = len(ev)
    details, has_details = stat_columns.strings(run.stat_store, "kernel_details", n)
    equation, _ = stat_columns.strings(run.stat_store, "equation", n)
    vendor = _plane_vendors(run)
    keep = (
        on_device(run)
        & has_details
        & (ev["dur_us"].to_numpy() > 0)
        & ~is_derived_line(event_line_ids(run))
        & (ev["occurrences"].to_numpy() == 1)
    )
    rows = np.flatnonzero(keep)
    if not len(rows):
        return None
    sub = ev.iloc[rows]
    names = sub["name"].astype(str).to_numpy()
    tf_op = sub["tf_op"].astype(object).to_numpy()
    has_op = ~pd.isna(tf_op)
    op_names = np.full(len(tf_op), "", object)
    if has_op.any():
        op_names[has_op] = parsed_values(run, tf_op[has_op].astype(str).astype(object))[1]
    frameworks = framework_of(run)
    named = frameworks.kernel_op_names(run, rows)
    if named is not None:
        known = ~pd.isna(named)
        op_names[known] = named[known]
    # Kernels we name inside CUDA graphs (XProf: the graph's 'XlaModule'): beyond XProf.
    xla = named is not None and "xla" in frameworks.names
    beyond = graph_kernel_rows(run, rows) if xla else np.zeros(len(rows), bool)
    uniq, inv = np.unique(details[rows].astype(str), return_inverse=True)
    params = pd.DataFrame([parse_kernel_details(d) for d in uniq]).iloc[inv].reset_index(drop=True)
    vendors = np.array(
        [vendor.get((h, p), "") for h, p in zip(sub["host"].astype(str), sub["plane"].astype(str))],
        object,
    )
    uniq_names, name_inv = np.unique(names, return_inverse=True)
    nvidia_tc = np.array([bool(_TC_RE.search(k)) for k in uniq_names], bool)[name_inv]
    extra_tc = np.array([bool(_EXTRA_TC_RE.search(k)) for k in uniq_names], bool)[name_inv]
    extra_tc &= ~nvidia_tc & np.isin(vendors, ["", "nvidia"])
    nvidia_tc |= extra_tc
    beyond |= extra_tc
    amd_tc = np.array([bool(_AMD_TC_RE.search(k)) for k in uniq_names], bool)[name_inv]
    uses_tc = np.where(vendors == "amd", amd_tc, nvidia_tc & np.isin(vendors, ["", "nvidia"]))
    eligible = np.array(
        [
            einsum_eligible(e) or frameworks.tensor_core_eligible(o)
            for e, o in zip(equation[rows], op_names)
        ]
    ) | (uses_tc & (op_names != ""))
    return pd.DataFrame(
        {
            "host": sub["host"].astype(str).to_numpy(),
            "kernel_name": names,
            "registers_per_thread": params["registers_per_thread"].to_numpy(),
            "static_shmem": params["static_shmem"].to_numpy(),
            "dynamic_shmem": params["dynamic_shmem"].to_numpy(),
            "block_dim": params["block_dim"].to_numpy(),
            "grid_dim": params["grid_dim"].to_numpy(),
            "occupancy_percent": params["occupancy_percent"].to_numpy(),
            "is_op_tensor_core_eligible": eligible,
            "is_kernel_using_tensor_core": uses_tc,
            "operation": op_names,
            "beyond_xprof": beyond,
            "dur": sub["dur_us"].to_numpy(),
            "no_op_dur": np.where(_in_op_stats(run, rows), 0.0, sub["dur_us"].to_numpy()),
        }
    )


def _in_op_stats(run, rows: np.ndarray) -> np.ndarray:
    """Whether the op stats count each kernel event ``rows`` as a device op's (a GPU event a
    framework attributes to an op, :func:`.op_stats.gpu_kernel_ops`); one they do not count
    is in their device IDLE (the runtime's own copy kernels on AMD, as in XProf's)."""
    from .op_stats import gpu_kernel_ops  # op stats read kernels' neighbours: import late

    return np.isin(rows, gpu_kernel_ops(run)["row"].to_numpy())


def _plane_vendors(run) -> dict:
    v = stat_columns.select(run.plane_stats, "device_vendor")
    return {
        (str(h), str(p)): str(s).lower()
        for h, p, s in zip(v["host"], v["plane"], stat_columns.values(v))
    }


__all__ = ["kernel_stats", "parse_kernel_details"]
