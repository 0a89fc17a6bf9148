"""Collectives on every framework (issue 40, item 3): one rule for a collective library's
kernels wherever kernels are classified, the collectives table of NCCL captures against the
trace's own records, and the invariants of the collectives figures on every bundled capture.
(XLA's collective instructions: tests/xla/test_xla_collectives.py.)"""

from __future__ import annotations

import gzip
import json
import math
import pathlib
import warnings

import numpy as np
import pandas as pd
import pytest
from invariants import bundled_captures

import tfprof_widgets as tw
from tfprof_widgets.analysis.collective_kinds import (
    bus_factor,
    collective_kernel_flags,
    collective_kind,
)
from tfprof_widgets.analysis.gpu_time import KINDS, kernel_kinds

DATA = pathlib.Path(__file__).resolve().parents[1] / "data"
RANK0 = DATA / "chrome" / "hta_sampled_rank0.json.gz"

COLLECTIVE_KERNELS = [
    "ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t(ncclDevComm*, unsigned long, ncclWork*)",
    "ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*, unsigned long, ncclWork*)",
    "ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage<4096ul>)",  # NCCL >= 2.19
    "ncclDevKernel_Generic(ncclDevKernelArgsStorage<4096ul>)",
    "ncclAllReduceRingLLKernel_sum_f32(CollectiveArgs)",  # NCCL 2.4, TF 2.x era
    "NCCL_AllReduce",  # XProf compares without case
    "rcclGenericKernel",
]
OTHER_KERNELS = [
    "void cutlass::Kernel<cutlass_80_tensorop_s1688gemm>(Params)",
    "Memcpy DtoD (Device -> Device)",
    "all_reduce_one_shot_kernel",  # XLA's own: found by its instruction, not its name
    "loop_add_fusion",
    "cudaStreamSynchronize",
]


def test_one_rule_names_collective_kernels_for_every_analysis():
    """The step breakdown (XProf's DEVICE_COLLECTIVES), the GPU time's COMMUNICATION kind and
    HTA's overlap read the one rule: NCCL's old and new names and RCCL's, nothing else."""
    names = pd.Series(COLLECTIVE_KERNELS + OTHER_KERNELS)
    flags = collective_kernel_flags(names)
    assert flags.tolist() == [True] * len(COLLECTIVE_KERNELS) + [False] * len(OTHER_KERNELS)
    kinds = kernel_kinds(names)
    assert (kinds == KINDS.index("COMMUNICATION")).tolist() == flags.tolist()


@pytest.mark.parametrize(
    "name,kind",
    [
        (COLLECTIVE_KERNELS[0], "send_recv"),
        (COLLECTIVE_KERNELS[1], "all_reduce"),
        (COLLECTIVE_KERNELS[2], "all_gather"),
        (COLLECTIVE_KERNELS[3], ""),  # NCCL 2.19's generic kernel names no collective
        (COLLECTIVE_KERNELS[4], "all_reduce"),
        ("ncclDevKernel_ReduceScatter_Sum_bf16_RING_LL", "reduce_scatter"),
        ("ncclKernel_Broadcast_RING_LL_Sum_int8_t", "broadcast"),
        ("nccl:_all_gather_base", "all_gather"),
        ("nccl:all_to_all", "all_to_all"),
        ("allreduce", "all_reduce"),  # Kineto's 'Collective name'
        ("all-reduce-start", "all_reduce"),
        ("reduce-scatter", "reduce_scatter"),
        ("collective-permute-done", "collective_permute"),
        ("ragged-all-to-all", "all_to_all"),
        ("loop_add_fusion", ""),
    ],
)
def test_collective_kind(name, kind):
    assert collective_kind(name) == kind


def test_bus_factors_are_nccl_tests():
    kind = np.array(["all_reduce", "all_gather", "reduce_scatter", "all_to_all", "send_recv",
                     "collective_permute", "all_reduce", ""], object)  # fmt: skip
    n = np.array([8, 4, 4, 2, np.nan, np.nan, np.nan, 8])
    got = bus_factor(kind, n)
    np.testing.assert_allclose(got[:6], [1.75, 0.75, 0.75, 0.5, 1.0, 1.0])
    assert np.isnan(got[6:]).all()  # n unknown where it matters; no collective


def _trace_collectives(path: pathlib.Path) -> pd.DataFrame:
    """From the JSON alone: each NCCL kernel's duration and the innermost 'nccl:' op around
    the runtime call that launched it (same correlation), with that op's first input's
    elements and type."""
    events = json.loads(gzip.open(path).read())["traceEvents"]
    x = [e for e in events if e.get("ph") == "X"]
    kernels = [e for e in x if e.get("cat") == "kernel" and e["name"].startswith("nccl")]
    calls = {e["args"]["correlation"]: e for e in x if e.get("cat") == "cuda_runtime"}
    ops = [e for e in x if e["name"].startswith("nccl:")]
    rows = []
    for k in kernels:
        call = calls[k["args"]["correlation"]]
        around = [
            o for o in ops
            if o["tid"] == call["tid"] and o["pid"] == call["pid"]
            and o["ts"] <= call["ts"] and call["ts"] + call["dur"] <= o["ts"] + o["dur"]
        ]  # fmt: skip
        op = min(around, key=lambda o: o["dur"])
        elements = math.prod(op["args"]["Input Dims"][0])
        rows.append((op["name"], elements, op["args"]["Input type"][0], k["dur"]))
    return pd.DataFrame(rows, columns=["op", "elements", "type", "dur_us"])


def test_nccl_table_follows_the_trace():
    """hta_sampled_rank0 (HTA's test trace: NCCL kernels launched under 'nccl:all_reduce',
    'nccl:all_to_all', 'nccl:_all_gather_base'): each kernel is the collective of the op that
    launched it, its bytes the op's input (its element type's width), and the table's times
    are the kernels' (whole µs in this trace)."""
    theirs = _trace_collectives(RANK0)
    width = {"float": 4, "long": 8, "int": 4, "signed char": 1, "unsigned char": 1}
    assert set(theirs["type"]) <= set(width)
    theirs["collective"] = theirs["op"].map(collective_kind)
    theirs["size_bytes"] = theirs["elements"] * theirs["type"].map(width)
    run = tw.load(RANK0)
    ours = run.collectives
    assert ours["count"].sum() == len(theirs) == 10
    key = ["collective", "size_bytes"]
    want = theirs.groupby(key)["dur_us"].agg(["size", "sum"]).reset_index()
    got = ours.groupby(key, observed=True)[["count", "total_time_us"]].sum().reset_index()
    got = got.rename(columns={"count": "size", "total_time_us": "sum"})
    pd.testing.assert_frame_equal(got.astype({"collective": str}), want, check_dtype=False)
    algbw = ours["size_bytes"] * ours["count"] / ours["total_time_us"] / 1e3
    np.testing.assert_allclose(ours["algbw_gbps"], algbw)
    assert (ours["rank"] == 0).all() and ours["device"].astype(str).eq("/device:GPU:0").all()
    # No group is recorded on these kernels: no bus bandwidth for a collective that needs n.
    assert ours["group_size"].isna().all() and ours["busbw_gbps"].isna().all()


def _renamed(tmp_path: pathlib.Path, old: str, new: str) -> pathlib.Path:
    text = gzip.open(RANK0).read().decode().replace(old, new)
    out = tmp_path / RANK0.name
    out.write_bytes(gzip.compress(text.encode()))
    return out


def test_newer_nccl_kernel_names_count_the_same(tmp_path):
    """NCCL 2.19+ names its kernels ncclDevKernel_*: the same trace with its kernels renamed
    so has the same device collectives, communication time, overlap and collectives."""
    before = tw.load(RANK0)
    after = tw.load(_renamed(tmp_path, '"name": "ncclKernel_', '"name": "ncclDevKernel_'))
    assert after.events["name"].astype(str).str.startswith("ncclDevKernel_").any()
    assert before.steps["device_collectives_us"].sum() > 0
    for get in (
        lambda r: r.steps["device_collectives_us"].to_numpy(),
        lambda r: r.kernel_breakdown.set_index("kernel_type")["time_us"].sort_index(),
        lambda r: r.comm_comp_overlap["comp_comm_overlap_percent"].to_numpy(),
        lambda r: r.collectives[["collective", "size_bytes", "total_time_us"]].to_numpy(),
    ):
        np.testing.assert_array_equal(np.asarray(get(after)), np.asarray(get(before)))


def test_kernel_comm_args_come_first(tmp_path):
    """PyTorch 2.1+ writes the communication args on the kernel itself: they name the
    collective, its bytes (elements x dtype) and its group, before the launching op's record.
    (hta_sampled_rank0's kernels with the args a recent trace carries added.)"""
    trace = json.loads(gzip.open(RANK0).read())
    comm = {"Collective name": "allreduce", "In msg nelems": 1024, "Out msg nelems": 1024,
            "dtype": "BFloat16", "Group size": 8, "Process Group Name": "0",
            "Process Group Desc": "default_pg"}  # fmt: skip
    for e in trace["traceEvents"]:
        if e.get("cat") == "kernel" and e["name"].startswith("nccl"):
            e["args"].update(comm)
    path = tmp_path / "with_args.json.gz"
    path.write_bytes(gzip.compress(json.dumps(trace).encode()))
    c = tw.load(path).collectives
    assert len(c) == 1
    row = c.iloc[0]
    assert (row["collective"], row["size_bytes"], row["group_size"]) == ("all_reduce", 2048, 8)
    assert (row["communicator"], row["count"]) == ("0 (default_pg)", 10)
    assert row["busbw_gbps"] == pytest.approx(row["algbw_gbps"] * 2 * 7 / 8)


def test_a_tf_capture_without_nccl_kernels_has_no_collectives():
    """The shared TF BERT 8-GPU capture reduces its gradients with TF's CollectiveReduce over
    _Send/_Recv (host events), not NCCL: no device collective, an empty table."""
    run = tw.load(DATA / "bert_8gpu_multi_worker.xplane.pb")
    assert run.collectives.empty
    assert run.steps["device_collectives_us"].sum() == 0


# -- the invariants, on every bundled capture ---------------------------------------------------
CAPTURES = bundled_captures()


@pytest.fixture(scope="module", params=sorted(CAPTURES))
def loaded(request, tmp_path_factory):
    path = CAPTURES[request.param](tmp_path_factory.mktemp("coll"))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return request.param, tw.load(path)


def test_collective_figures_hold_on_every_capture(loaded):
    """device_collectives ≤ step time and its share in [0, 100]; algbw finite and > 0 where
    size and time are; busbw ≤ 2 algbw; overlap in [0, 100]."""
    name, run = loaded
    s = run.steps
    if len(s):
        coll, step = s["device_collectives_us"].to_numpy(), s["step_time_us"].to_numpy()
        assert (coll >= 0).all() and (coll <= step * (1 + 1e-9) + 1e-6).all(), name
        share = 100 * coll[step > 0] / step[step > 0]
        assert ((share >= 0) & (share <= 100 + 1e-6)).all(), name
    c = run.collectives
    both = (c["size_bytes"] > 0) & (c["total_time_us"] > 0)
    assert np.isfinite(c.loc[both, "algbw_gbps"]).all() and (c.loc[both, "algbw_gbps"] > 0).all()
    assert c.loc[~both, "algbw_gbps"].isna().all(), name
    bus = c["busbw_gbps"].dropna()
    assert (bus <= 2 * c.loc[bus.index, "algbw_gbps"]).all(), name
    assert (c["count"] > 0).all() and (c["total_time_us"] >= 0).all(), name
    if "pytorch" in run.framework.name or "xla" in run.framework.name:
        pct = run.comm_comp_overlap["comp_comm_overlap_percent"].dropna()
        assert ((pct >= 0) & (pct <= 100 + 1e-9)).all(), name
