"""XProf's Roofline Model and Op Profile on XLA GPU captures (issue 27 item 3): device peaks,
FLOPs and bytes per HLO op, and the op profile tree, against xprof 2.24's own output for the
JAX H100 and AMD MI300X captures (tests/golden/jax*/roofline_model.json and op_profile.json,
made by ``scripts/make_golden.py --xla-roofline``). Each test states the rule it checks."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import ROOT
from golden_tables import data_table, golden

import tfprof_widgets as tw
from tfprof_widgets import schema

H100 = ROOT / "tests" / "data" / "xplane_h100_jax"
AMD = ROOT / "tests" / "data" / "xplane_amd_jax"
NAMES = ("jax_cnn_nographs", "jax_cnn_graphs", *(f"jax08_{k}" for k in ("attention", "conv", "elementwise", "gemm")))
# XLA counts an operand of this reduce fusion by the elements the fusion reads of it, not
# its whole size; our byte rule (every operand's bytes) does not model that.
PARTIAL_READS = {"input_reduce_fusion.1"}
_RUNS: dict = {}


def load(name: str):
    if name not in _RUNS:
        folder = H100 if name.startswith("jax_cnn") else AMD
        path = folder / f"{name}.xplane.pb"
        if not path.exists():
            pytest.skip(f"{path} is absent")
        _RUNS[name] = tw.load(path, progress=False)
    return _RUNS[name]


def theirs_ops(name: str):
    """xprof's per-op roofline rows (whole capture, infeed/outfeed included)."""
    t = data_table(golden(name, "roofline_model")[0])
    return t[(t["step"] == "Total") & (t["rank"] > 0) & t["include_infeed_outfeed"].astype(bool)]


def close(a, b, rel=0.005) -> np.ndarray:
    a, b = np.asarray(a, float), np.asarray(b, float)
    return np.abs(a - b) <= rel * np.maximum(np.abs(b), 1e-9)


@pytest.mark.parametrize("name", NAMES)
def test_device_peaks_are_xprofs(name):
    """Rule (XProf's hardware_type_utils): peak FLOP/s = the compute capability's (AMD: gfx
    version's) largest fp32/fp16 FLOPs per SM per cycle × clock × SMs; HBM = the
    memory_bandwidth stat; shared memory = 32 banks × 8 B (AMD LDS 128 B) per cycle × clock ×
    SMs; a ridge point is peak FLOP/s over the bandwidth in bytes/s."""
    run = load(name)
    p = golden(name, "roofline_model")[0]["p"]
    ours = run.roofline_peaks.iloc[0]
    assert ours["device_type"] == p["device_type"]
    for col, key in (("peak_gflops", "peak_flop_rate"), ("peak_hbm_gibps", "peak_hbm_bw"),
                     ("peak_shm_gibps", "peak_vmem_write_bw"), ("hbm_ridge_point", "hbm_ridge_point"),
                     ("shm_ridge_point", "vmem_write_ridge_point")):  # fmt: skip
        assert close(ours[col], float(p[key])), (col, ours[col], p[key])
    assert schema.mismatches(run.roofline_peaks, schema.ROOFLINE_PEAKS) == []


@pytest.mark.parametrize("name", ("jax_cnn_nographs", "jax08_conv"))
def test_per_op_bytes_bound_and_modeled_flops_are_xprofs(name):
    """Rule (XLA's GpuHloCostAnalysis as XProf adds it per device event): bytes = operands +
    result (a library call's workspace left out; its tuple result is no HBM write); FLOPs of
    convolutions (valid window positions) and dots; bound by HBM below the HBM ridge point.
    Every row's bound_by is xprof's; bandwidths on every row but the partial-read fusion; the
    FLOP figures on every row whose FLOPs we model in full."""
    run = load(name)
    rl = run.roofline
    assert schema.mismatches(rl, schema.ROOFLINE) == []
    t = theirs_ops(name)
    m = rl.add_prefix("our_").assign(
        hlo_module_id=rl["program_id"].astype(str),
        operation=rl["hlo_op_name"].astype(str),
        occurrences=rl["occurrences"].astype(float),
    )
    j = t.merge(m, on=["hlo_module_id", "operation", "occurrences"], how="left", validate="1:1")
    assert j["our_hlo_op_name"].notna().all() and len(j) == len(t) >= 4
    assert (j["bound_by"].astype(str) == j["our_bound_by"].astype(str)).all()
    full = ~j["operation"].isin(PARTIAL_READS)
    for theirs, ours in (("measured_memory_bw", "memory_bw_gibps"), ("hbm_bw", "hbm_bw_gibps"),
                         ("max_mem_bw_utilization", "max_mem_bw_utilization")):  # fmt: skip
        assert close(j.loc[full, "our_" + ours], j.loc[full, theirs]).all(), theirs
    mod = j["our_flops_modeled"].astype(bool)
    assert mod.sum() >= 4
    for theirs, ours in (("model_flop_rate", "model_gflops_per_s"),
                         ("operational_intensity", "operational_intensity"),
                         ("bottleneck_operational_intensity", "bottleneck_operational_intensity"),
                         ("optimal_flop_rate", "optimal_gflops_per_s"),
                         ("roofline_efficiency", "roofline_efficiency")):  # fmt: skip
        assert close(j.loc[mod & full, "our_" + ours], j.loc[mod & full, theirs]).all(), theirs


def test_unmodeled_elementwise_flops_stay_zero_on_purpose():
    """Different on purpose: XLA gives elementwise work FLOPs from a per-GPU table of measured
    op costs (hlo_op_profiles) that the capture does not carry. We leave them at 0 and say so
    (flops_modeled False) instead of guessing: those rows' FLOP rate is below xprof's, and
    their bytes still match."""
    rl = load("jax_cnn_nographs").roofline
    t = theirs_ops("jax_cnn_nographs").set_index("operation")
    off = rl[~rl["flops_modeled"]]
    assert len(off) >= 10
    assert (off["flops"] == 0).sum() >= 10  # gemm fusions keep their dots' FLOPs
    theirs = t.loc[off["hlo_op_name"].astype(str), "model_flop_rate"].to_numpy(float)
    assert (theirs > 0).any() and (off["model_gflops_per_s"].to_numpy() <= theirs + 1e-9).all()


def _walk(node: dict, path: str, out: dict) -> None:
    for child in node.get("children", []):
        p = f"{path}/{child['name']}" if path else child["name"]
        out[p] = child["metrics"]
        _walk(child, p, out)


@pytest.mark.parametrize("name", ("jax_cnn_nographs", "jax08_conv"))
def test_op_profile_tree_is_xprofs(name):
    """Rule (XProf's op profile, IDLE excluded): program '<module>(<id>)' -> HLO category ->
    op; a node's time, HBM bytes and occurrences are its ops' sums; HBM bandwidth
    utilisation = bytes over the node's time at peak, capped at 1; FLOP utilisation = FLOPs
    over the whole tree's time at peak (checked where every op under the node is modeled)."""
    run = load(name)
    tree = run.op_profile
    assert schema.mismatches(tree, schema.OP_PROFILE) == []
    theirs: dict = {}
    _walk(golden(name, "op_profile")["byProgramExcludeIdle"], "", theirs)
    assert set(tree["path"]) == set(theirs)
    rl = run.roofline
    unmodeled = set(rl.loc[~rl["flops_modeled"], "hlo_op_name"].astype(str))
    for row in tree.itertuples():
        m = theirs[row.path]
        assert close(row.time_us * 1e6, m["rawTime"], 1e-6), row.path
        if not (set(row.path.split("/")) & PARTIAL_READS) and row.level == "op":
            assert close(row.hbm_bytes, m["rawBytesAccessedArray"][0]), row.path
            assert close(row.hbm_bw_utilization, m["bandwidthUtils"][0]), row.path
        if row.level == "op" and row.name not in unmodeled:
            assert close(row.flops, m.get("rawFlops", 0)), row.path
            # xprof rounds this utilisation to 4 decimals
            assert abs(row.flop_utilization - m.get("flops", 0)) <= 6e-5, row.path
    assert list(tree["level"].iloc[:2]) == ["program", "category"]
