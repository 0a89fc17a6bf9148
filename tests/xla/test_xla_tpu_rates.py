"""XProf's FLOP rates, bandwidths and bottleneck on TPU (issue 27): run.hlo_stats, run.roofline
and run.op_profile on the synthetic libtpu-shaped capture (tests/support/tpu_builder.py) and on
the same capture with memory_access_breakdowns that name HBM, CMEM and VMEM
(tests/support/tpu_rates_builder.py),
against xprof 2.24's hlo_stats, roofline_model and op_profile on them (tests/golden/tpu_rates*,
made by ``scripts/make_golden.py --tpu-rates``). Each test states the rule it checks."""

from __future__ import annotations

import numpy as np
import pytest
from fidelity_figures import rows
from golden_tables import _scratch, data_table, golden

import tfprof_widgets as tw
from tfprof_widgets import schema

CAPTURES = ("tpu_rates", "tpu_rates_memory")
_RUNS: dict = {}


def load(name: str):
    if name not in _RUNS:
        from tpu_rates_builder import BUILDERS

        path = BUILDERS[name]().write(_scratch("tpu_rates_") / f"{name}.xplane.pb")
        _RUNS[name] = tw.load(path, progress=False)
    return _RUNS[name]


def joined(name: str):
    """Our hlo_stats rows beside xprof's, by (program id as xprof prints it, op name)."""
    hs = load(name).hlo_stats
    gold = rows(golden(name, "hlo_stats"))
    ours = hs.assign(
        program_id=hs["program_id"].astype(str), hlo_op_name=hs["hlo_op_name"].astype(str)
    ).add_prefix("our_")
    j = gold.merge(
        ours,
        left_on=["program_id", "hlo_op_name"],
        right_on=["our_program_id", "our_hlo_op_name"],
        how="left",
        validate="1:1",
    )
    assert j["our_hlo_op_name"].notna().all() and len(j) == len(hs) >= 11
    return j


@pytest.mark.parametrize("name", CAPTURES)
def test_tpu_hlo_stats_rates_are_xprofs(name):
    """Rule (XProf's op_metrics_db_utils + SetRooflineMetrics): an op's flops, model_flops
    (its flops where 0), bytes_accessed and memory_access_breakdown bytes are libtpu's per-run
    figures on its metadata × occurrences, summed over cores; every rate divides by the op's
    total time (its nested ops' included: their costs are in its own); HBM bytes are the
    breakdown's HBM entries (all bytes where there is no breakdown), CMEM read/write its CMEM
    entries; operational intensity = flops / bytes; bound by = the resource used closest to
    its peak (Compute, HBM, CMEM/VMEM read/write), 'Unknown' where none is used."""
    j = joined(name)
    for theirs, ours in (
        ("model_flop_rate", "model_gflops_per_s"),
        ("normalized_flop_rate", "normalized_gflops_per_s"),
        ("measured_memory_bw", "memory_bw_gibps"),
        ("hbm_bw", "hbm_bw_gibps"),
        ("cmem_read_bw", "cmem_read_bw_gibps"),
        ("cmem_write_bw", "cmem_write_bw_gibps"),
        ("operational_intensity", "operational_intensity"),
    ):
        np.testing.assert_allclose(
            j["our_" + ours].astype(float), j[theirs].astype(float), rtol=5e-3, atol=1e-9,
            err_msg=theirs,
        )  # fmt: skip
    assert j["our_bound_by"].astype(str).tolist() == j["bound_by"].tolist()
    # the rates are not all zero: the capture exercises them
    assert (j["model_flop_rate"] > 0).sum() >= 8 and len(set(j["bound_by"])) >= 2


def test_memory_capture_reaches_every_bottleneck():
    """The breakdown capture makes ops HBM-, CMEM- and VMEM-bound in xprof's own output, so
    the previous test checks each branch of the rule, not only 'Compute'."""
    bound = set(rows(golden("tpu_rates_memory", "hlo_stats"))["bound_by"])
    assert {"Compute", "HBM", "CMEM Read", "VMEM Write"} <= bound, bound


@pytest.mark.parametrize("name", CAPTURES)
def test_tpu_roofline_rows_are_xprofs(name):
    """Rule (XProf's roofline model): per op the rates above plus HBM operational intensity,
    the bottleneck's intensity, compute efficiency = FLOP rate / peak, memory utilisation =
    the largest of HBM's, CMEM's (where the chip has CMEM) and VMEM's (where its VMEM is
    merged, on a chip without CMEM) bandwidth over its peak, roofline efficiency = the
    larger of the two, optimal FLOP rate = FLOP rate / roofline efficiency (0 where nothing
    is used)."""
    rl = load(name).roofline
    assert schema.mismatches(rl, schema.ROOFLINE) == []
    t = data_table(golden(name, "roofline_model")[0])
    t = t[(t["step"] == "Total") & (t["rank"] > 0) & t["include_infeed_outfeed"].astype(bool)]
    m = rl.add_prefix("our_").assign(
        hlo_module_id=rl["program_id"].astype(str), operation=rl["hlo_op_name"].astype(str)
    )
    j = t.merge(m, on=["hlo_module_id", "operation"], how="left", validate="1:1")
    assert j["our_hlo_op_name"].notna().all() and len(j) == len(rl) >= 11
    assert (j["our_bound_by"].astype(str) == j["bound_by"]).all()
    for theirs, ours in (
        ("model_flop_rate", "model_gflops_per_s"),
        ("hbm_bw", "hbm_bw_gibps"),
        ("vmem_read_bw", "vmem_read_bw_gibps"),
        ("vmem_write_bw", "vmem_write_bw_gibps"),
        ("hbm_operational_intensity", "hbm_operational_intensity"),
        ("bottleneck_operational_intensity", "bottleneck_operational_intensity"),
        ("optimal_flop_rate", "optimal_gflops_per_s"),
        ("roofline_efficiency", "xprof_roofline_efficiency"),
        ("compute_efficiency", "compute_efficiency"),
        ("max_mem_bw_utilization", "max_mem_bw_utilization"),
    ):
        want = j[theirs].astype(float)
        if ours in ("compute_efficiency", "max_mem_bw_utilization"):  # at most 1 (issue 36)
            want = want.clip(upper=1.0)
        np.testing.assert_allclose(
            j["our_" + ours].astype(float), want, rtol=5e-3, atol=1e-12, err_msg=theirs
        )


def _walk(node: dict, path: str, out: dict) -> None:
    for child in node.get("children", []):
        p = f"{path}/{child['name']}" if path else child["name"]
        out[p] = child["metrics"]
        _walk(child, p, out)


@pytest.mark.parametrize("name", CAPTURES)
def test_tpu_op_profile_is_xprofs(name):
    """Rule (XProf's op profile on TPU): programs named '<module>(<unsigned program id>)',
    the module from the program's HLO; an op that other ops ran nested in (here
    conv_general_dilated.2, which a copy nests in once on the core's clock) is no node and
    adds only its self time to its program (its FLOPs and bytes none); a node's time is its
    ops' self time, its FLOPs and HBM bytes their totals above; FLOP utilisation = FLOPs over
    the whole tree's time at peak, × the node's time over its ops' summed total times (XProf's
    rate over 'normalized' time: below 1 only for a program holding a nested op); HBM
    utilisation = HBM bytes over the node's time at peak, at most 1.

    Apart on purpose: xprof 2.24 groups ops sharing a ``deduplicated_name`` under '<name>
    and its duplicate(s)' and lists each fusion's fused instructions (no time) under it; we
    keep one level of ops, so ops are matched by name."""
    tree = load(name).op_profile
    assert schema.mismatches(tree, schema.OP_PROFILE) == []
    theirs: dict = {}
    _walk(golden(name, "op_profile")["byProgramExcludeIdle"], "", theirs)
    heads = {p: m for p, m in theirs.items() if p.count("/") <= 1}  # programs, categories
    ours = tree[tree["level"] != "op"].set_index("path")
    assert sorted(ours.index) == sorted(heads)
    assert "jit_train_step(12190760917235803885)" in ours.index
    for path, m in heads.items():
        row = ours.loc[path]
        assert abs(row["time_us"] * 1e6 - m["rawTime"]) <= 1, path
        assert np.isclose(row["flops"], m.get("rawFlops", 0), rtol=1e-6), path
        assert abs(row["xprof_flop_utilization"] - m.get("flops", 0)) <= 1e-9, path
        assert np.isclose(row["hbm_bytes"], m["rawBytesAccessedArray"][0], rtol=1e-6), path
    leaves = {
        p.rsplit("/", 1)[-1]: m
        for p, m in theirs.items()
        if p.count("/") >= 2 and m.get("rawTime", 0) and not p.endswith("duplicate(s)")
    }
    ops = tree[tree["level"] == "op"]
    assert sorted(ops["name"]) == sorted(leaves) and len(leaves) >= 10
    for row in ops.itertuples():
        m = leaves[row.name]
        assert abs(row.time_us * 1e6 - m["rawTime"]) <= 1, row.path
        assert np.isclose(row.flops, m.get("rawFlops", 0), rtol=1e-6), row.path
        assert np.isclose(row.hbm_bytes, m["rawBytesAccessedArray"][0], rtol=1e-6), row.path
        assert abs(row.xprof_flop_utilization - m.get("flops", 0)) <= 1e-9, row.path
        assert abs(row.hbm_bw_utilization - m["bandwidthUtils"][0]) <= 5e-4, row.path


def test_program_ids_are_unsigned_everywhere():
    """Rule: a TPU program id is a uint64 fingerprint; libtpu's 12190760917235803885 is above
    2**63. hlo_stats, roofline and op_profile show it unsigned (uint64 columns), as xprof
    prints it, never as the negative int64 of its bit pattern."""
    run = load("tpu_rates")
    big = 12190760917235803885
    for df in (run.hlo_stats, run.roofline, run.op_profile):
        assert df["program_id"].dtype == np.uint64
        assert big in set(df["program_id"].tolist())
        assert (df["program_id"].to_numpy() > 0).all()
    assert run.op_profile["path"].str.contains(str(big)).any()
    assert not run.op_profile["path"].str.contains("(-", regex=False).any()


def test_a_damaged_breakdown_counts_as_none(tmp_path):
    """Rule (XProf: a breakdown that does not parse is left out): an op whose
    memory_access_breakdown is not a valid message has no breakdown, so all its bytes are
    HBM bytes; loading never fails on it."""
    from tpu_rates_builder import tpu_memory_capture

    b = tpu_memory_capture()
    for plane in b.space.planes:
        names = {m.id: m.name for m in plane.stat_metadata.values()}
        for md in plane.event_metadata.values():
            if md.display_name == "dot_general.4":
                for stat in md.stats:
                    if names[stat.metadata_id] == "memory_access_breakdown":
                        stat.bytes_value = b"\x0a\xff\xff\xff"  # a length past the end
    hs = tw.load(b.write(tmp_path / "bad.xplane.pb"), progress=False).hlo_stats
    (row,) = hs[hs["hlo_op_name"] == "dot_general.4"].itertuples()
    assert row.hbm_bw_gibps > 0 and np.isclose(row.hbm_bw_gibps, row.memory_bw_gibps)
