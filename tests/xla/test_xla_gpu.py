"""XLA on GPU (issue 27): JAX captures on an H100 (with and without CUDA graphs) and on AMD
MI300X, against xprof 2.24's own output for them (tests/golden/jax*, made by
``scripts/make_golden.py --xla``). Each test states the rule it checks."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import ROOT
from fidelity_figures import differences, our_figures, rows, xprof_figures
from golden_tables import golden

import tfprof_widgets as tw

H100 = ROOT / "tests" / "data" / "xplane_h100_jax"
AMD = ROOT / "tests" / "data" / "xplane_amd_jax"
H100_NAMES = ("jax_cnn_nographs", "jax_cnn_graphs")
AMD_NAMES = tuple(f"jax08_{k}" for k in ("attention", "conv", "elementwise", "gemm"))
TOOLS = ("overview_page", "framework_op_stats", "kernel_stats", "hlo_stats")
STEP_FIGURES = ("steps", "step_time_ms_avg", "input_statement", "precision_statement")


def path_of(name: str):
    return (H100 if name in H100_NAMES else AMD) / f"{name}.xplane.pb"


_RUNS: dict = {}


def load(name: str):
    if name not in _RUNS:
        _RUNS[name] = tw.load(path_of(name), progress=False)
    return _RUNS[name]


def xprof(name: str) -> dict:
    return xprof_figures({t: golden(name, t) for t in TOOLS})


@pytest.mark.parametrize("name", H100_NAMES)
def test_jax_gpu_steps_are_xprofs(name):
    """Rule (XProf's grouping and device step DB for a host with a GPU): the ``train``
    markers (``step_num``, ``_r=1``) group the Python thread; each kernel joins the group of
    its host launch with the same ``correlation_id``; ungrouped device events take the
    group before them; each GPU's grouped events in time order derive its 'Steps'; a host
    with a GPU counts its device events only. So 10 markers give 10 steps, the overview
    drops the first and last: 8, with every breakdown category, the verdict and the
    precision statement equal to xprof's."""
    theirs = xprof(name)
    assert theirs["steps"] == 8
    ours = our_figures(load(name))
    keys = [k for k in theirs if k in STEP_FIGURES or k.endswith("_ms_avg")]
    assert len(keys) >= 13
    assert (
        differences({k: ours.get(k) for k in keys if k in ours}, {k: theirs[k] for k in keys}) == []
    )
    assert theirs["input_statement"].startswith("Your program is POTENTIALLY input-bound")


def test_jax_steps_carry_the_markers_step_numbers():
    """The steps are numbered by the markers' ``step_num`` (0-9), and each step's device
    compute is the same 0.74 ms XProf shows per step."""
    steps = load("jax_cnn_nographs").steps
    assert steps["step"].tolist() == list(range(10))
    per_step = golden("jax_cnn_nographs", "overview_page")[1]["rows"]
    theirs = [r["c"][1]["v"] for r in per_step]
    ours = (steps["device_compute_us"].to_numpy()[1:-1] / 1000).tolist()
    assert ours == pytest.approx(theirs, rel=1e-4)


@pytest.mark.parametrize("name", AMD_NAMES)
def test_amd_jax_captures_have_no_steps(name):
    """The AMD captures mark no step: no steps, as in xprof; the overview says how a JAX
    program marks them."""
    assert xprof(name)["steps"] == 0
    assert len(load(name).steps) == 0
    advice = load(name).overview_summary.recommendations
    assert any("jax.profiler.StepTraceAnnotation('train', step_num=step)" in a for a in advice)


@pytest.mark.parametrize("name", ("jax_cnn_nographs", *AMD_NAMES))
def test_every_headline_figure_is_xprofs(name):
    """Rule (XProf's GPU op metrics with the HLO protos): a kernel, memset or copy whose
    (program_id, hlo_op) names an instruction is a device op of it; the TF-level op is the
    instruction's metadata.op_name (else its own name, type 'Unknown'), and ran as often as
    its busiest instruction (every event an occurrence). So steps, breakdown, op placement,
    the device ops, device IDLE and the kernel rows all equal xprof's."""
    theirs = xprof(name)
    assert theirs["device_op_rows"] > 0
    assert differences(our_figures(load(name)), theirs) == []


@pytest.mark.parametrize("name", ("jax_cnn_nographs", *AMD_NAMES))
def test_device_op_rows_are_xprofs_row_by_row(name):
    """Each device row (operation, type, occurrences, total and self time) equals xprof's."""
    gold = rows(golden(name, "framework_op_stats")[0])
    gold = gold[gold["host_or_device"] == "Device"].set_index("operation")
    ops = load(name).ops
    ours = ops[ops["host_or_device"] == "Device"].astype({"operation": str, "type": str})
    ours = ours.set_index("operation").loc[gold.index]
    assert not ours["beyond_xprof"].any()
    assert (ours["type"] == gold["type"]).all()
    np.testing.assert_array_equal(ours["occurrences"], gold["occurrences"])
    np.testing.assert_allclose(ours["total_time_us"], gold["total_time"], rtol=5e-3, atol=1e-3)
    np.testing.assert_allclose(
        ours["total_self_time_us"], gold["total_self_time"], rtol=5e-3, atol=1e-3
    )


def test_jax_op_names_come_from_the_hlo_metadata():
    """The heaviest device op is the JAX op of the backward convolutions, type its last
    path component; a fusion without an op name keeps its own name, type 'Unknown'."""
    ops = load("jax_cnn_nographs").ops.astype({"operation": str, "type": str})
    dev = ops[(ops["host_or_device"] == "Device") & (ops["type"] != "IDLE")]
    top = dev.iloc[0]
    assert top["operation"] == "jit(step)/transpose(jvp())/conv_general_dilated"
    assert top["type"] == "conv_general_dilated" and top["occurrences"] == 60
    fusion = dev[dev["operation"] == "loop_reduce_window_fusion"].iloc[0]
    assert fusion["type"] == "Unknown"


@pytest.mark.parametrize("name", (*H100_NAMES, *AMD_NAMES))
def test_kernel_rows_are_xprofs(name):
    """Kernel stats name each kernel's op by its instruction's op_name ('' where it has
    none, the kernel's tf_op where no instruction is found, as for kernels inside CUDA
    graphs): every row (kernel, op, occurrences, total time, Tensor Core flags) is xprof's;
    on AMD GPUs the matrix-core kernels (Cijk_ GEMMs, XLA's GEMM fusions) use Tensor Cores."""
    gold = rows(golden(name, "kernel_stats"))
    k = load(name).kernels
    assert len(k) == len(gold)
    key = ["kernel_name", "occurrences"]
    flags = ["is_op_tensor_core_eligible", "is_kernel_using_tensor_core"]
    cols = [*key, "operation", "t", *flags]
    ours = k.astype({"kernel_name": str, "operation": str}).rename(columns={"total_time_us": "t"})
    ours = ours[[*cols, "beyond_xprof"]]
    theirs = gold.rename(columns={"op_name": "operation", "total_duration_us": "t"})[cols]
    theirs = theirs.astype({"occurrences": int})
    ours, theirs = (d.sort_values([*key, "t"], ignore_index=True) for d in (ours, theirs))
    assert ours[key].equals(theirs[key])
    np.testing.assert_allclose(ours["t"], theirs["t"], rtol=5e-3, atol=1e-3)
    # Rows beyond XProf (issue 36 items 5, 6): a kernel inside a CUDA graph named by its
    # instruction's op (XProf: 'XlaModule'), Tensor Cores credited by the names XProf's list
    # misses (tests/test_trust_xla.py); every other row is xprof's as it is.
    same = ~ours["beyond_xprof"].to_numpy(bool)
    assert ours["operation"][same].tolist() == theirs["operation"][same].tolist()
    for flag in flags:  # JAX's convolutions and dots are eligible; AMD's matrix cores count
        got, want = ours[flag].astype(bool)[same], theirs[flag].astype(bool)[same]
        assert got.tolist() == want.tolist(), flag


def test_cuda_graph_kernels_are_attributed_beyond_xprof():
    """Under CUDA graphs a kernel's hlo_op is 'command_buffer_N', no instruction, and XProf
    leaves it out; we attribute a fusion's kernel by its name (the fusion's, '.' written
    '_') and mark those rows beyond XProf. Acceptance: every op XProf finds on the capture
    without graphs is found with the same occurrences, and ours cover >= 90 % of its time
    (the two captures are separate compilations, so a few fusions differ in time)."""
    gold = rows(golden("jax_cnn_nographs", "framework_op_stats")[0])
    gold = gold[(gold["host_or_device"] == "Device") & (gold["type"] != "IDLE")]
    run = load("jax_cnn_graphs")
    ops = run.ops.astype({"operation": str})
    dev = ops[(ops["host_or_device"] == "Device") & (ops["type"] != "IDLE")]
    m = gold.merge(dev, on="operation", how="left")
    assert m["occurrences_y"].notna().all()
    np.testing.assert_array_equal(m["occurrences_x"], m["occurrences_y"])
    covered = np.minimum(m["total_time"], m["total_time_us"]).sum() / m["total_time"].sum()
    assert covered >= 0.9
    assert dev["beyond_xprof"].sum() >= 15


def test_cuda_graph_idle_plus_our_attribution_is_xprofs_idle():
    """XProf's device IDLE counts the graph kernels as idle: ours plus the time of the
    kernels we attribute beyond it equals xprof's, and the rows XProf has without any graph
    kernel are its rows exactly."""
    from tfprof_widgets.analysis.op_stats import gpu_kernel_ops

    run = load("jax_cnn_graphs")
    ops = run.ops
    idle = ops[(ops["host_or_device"] == "Device") & (ops["type"] == "IDLE")]
    k = gpu_kernel_ops(run)
    beyond_us = k.loc[k["beyond_xprof"], "dur_ps"].sum() / 1e6
    gold = rows(golden("jax_cnn_graphs", "framework_op_stats")[0])
    gold_idle = gold[(gold["host_or_device"] == "Device") & (gold["type"] == "IDLE")]
    assert idle["total_self_time_us"].sum() + beyond_us == pytest.approx(
        gold_idle["total_self_time"].sum(), rel=1e-6
    )
    ours = ops[(ops["host_or_device"] == "Device") & ~ops["beyond_xprof"]]
    ours = ours[ours["type"] != "IDLE"].astype({"operation": str}).set_index("operation")
    theirs = gold[(gold["host_or_device"] == "Device") & (gold["type"] != "IDLE")]
    theirs = theirs.set_index("operation").loc[ours.index]
    np.testing.assert_allclose(ours["total_time_us"], theirs["total_time"], rtol=5e-3)


def test_cuda_graph_steps_and_kernel_rows_are_xprofs():
    """Steps (graph kernels carry the graph launch's correlation_id) and kernel rows (the
    graph kernels keep the op of their tf_op, 'XlaModule', as in xprof) equal xprof's."""
    theirs = xprof("jax_cnn_graphs")
    ours = our_figures(load("jax_cnn_graphs"))
    keys = [k for k in theirs if k.startswith("kernel_") or k in STEP_FIGURES]
    assert differences({k: ours[k] for k in keys}, {k: theirs[k] for k in keys}) == []


def _xprof_hlo_stats(name: str):
    g = rows(golden(name, "hlo_stats"))
    g["program_id"] = g["program_id"].astype(int)
    g["source"] = g["source_info"].str.extract(r">(.*)</div>")[0].fillna("")
    return g


@pytest.mark.parametrize("name", ("jax_cnn_nographs", *AMD_NAMES))
def test_hlo_stats_are_xprofs_row_by_row(name):
    """Rule (XProf's HLO Stats): one row per (program, instruction) with its device events
    (every event an occurrence), ordered by self time; category by HloInstruction::ToCategory;
    framework op as TfOpFullname writes it ('<op_name>:'); source 'file:line' (metadata, else
    the instruction's stack frame); shares of the device time, IDLE included."""
    gold = _xprof_hlo_stats(name)
    ours = load(name).hlo_stats
    assert len(ours) == len(gold) > 0 and not ours["beyond_xprof"].any()
    assert ours["hlo_op_name"].astype(str).tolist() == gold["hlo_op_name"].tolist()
    np.testing.assert_array_equal(ours["program_id"], gold["program_id"])
    for col, theirs in (("category", "category"), ("tf_op_name", "tf_op_name")):
        assert ours[col].astype(str).tolist() == gold[theirs].tolist(), col
    assert ours["source_info"].astype(str).tolist() == gold["source"].tolist()
    np.testing.assert_array_equal(ours["occurrences"], gold["occurrences"])
    for col, theirs in (
        ("total_time_us", "total_time"),
        ("avg_time_us", "avg_time"),
        ("total_self_time_us", "total_self_time"),
        ("self_time_percent", "total_self_time_percent"),
        ("cumulative_self_time_percent", "cumulative_total_self_time_percent"),
    ):
        np.testing.assert_allclose(ours[col], gold[theirs], rtol=5e-3, atol=1e-3, err_msg=col)


def test_hlo_stats_under_cuda_graphs():
    """XProf's rows (instructions launched outside graphs) are ours exactly; the graph
    kernels' instructions are rows of ours beyond XProf."""
    gold = _xprof_hlo_stats("jax_cnn_graphs").set_index("hlo_op_name")
    ours = load("jax_cnn_graphs").hlo_stats.astype({"hlo_op_name": str})
    mine = ours[~ours["beyond_xprof"]].set_index("hlo_op_name")
    assert sorted(mine.index) == sorted(gold.index)
    gold = gold.loc[mine.index]
    np.testing.assert_array_equal(mine["occurrences"], gold["occurrences"])
    np.testing.assert_allclose(mine["total_time_us"], gold["total_time"], rtol=5e-3, atol=1e-3)
    extra = ours[ours["beyond_xprof"]]
    assert len(extra) == 24 and (extra["occurrences"] == 10).all()


@pytest.mark.parametrize("name", H100_NAMES)
def test_jax_step_time_statistics_are_xprofs(name):
    """The overview's step-time statistics (average, deviation, min, max, and the averages of
    device compute and 'all others') print as xprof's, to its one decimal."""
    o = load(name).overview_summary
    p = golden(name, "overview_page")[1]["p"]
    for ours, key in [
        (o.step_time_ms_avg, "steptime_ms_average"),
        (o.step_time_ms_std, "steptime_ms_standard_deviation"),
        (o.step_time_ms_min, "steptime_ms_minimum"),
        (o.step_time_ms_max, "steptime_ms_maximum"),
        (o.breakdown_ms_avg["device_compute_us"], "device_compute_time_ms_avg"),
        (o.breakdown_ms_avg["all_others_us"], "other_time_ms_avg"),
    ]:
        assert f"{ours:.1f}" == p[key], key
    assert p["hardware_type"] == "GPU" and o.hardware_type == "GPU"
