"""Numbers a JAX or TPU user can trust (issue 36): no op above a roof, one figure the same in
every view, units a user can check, the step numbering of the steps table. Each test runs on
a real capture (the JAX H100 pair, the AMD MI300X captures) or, for TPU, on a capture shaped
as the real TPU v6e one of tests/data/reference/xla-capture-inventory.txt (copy-start and
copy-done ops of f32[5,1024,1024,256] on its 'XLA Ops' line), and states the rule it checks.
"""

from __future__ import annotations

import numpy as np
import pytest
from conftest import ROOT
from xspace_builder import XSpaceBuilder

import tfprof_widgets as tw
from tfprof_widgets import schema

H100 = ROOT / "tests" / "data" / "xplane_h100_jax"
AMD = ROOT / "tests" / "data" / "xplane_amd_jax"
CAPTURES = {
    "jax_cnn_graphs": H100 / "jax_cnn_graphs.xplane.pb",
    "jax_cnn_nographs": H100 / "jax_cnn_nographs.xplane.pb",
    "jax08_conv": AMD / "jax08_conv.xplane.pb",
    "jax08_gemm": AMD / "jax08_gemm.xplane.pb",
    "jax08_attention": AMD / "jax08_attention.xplane.pb",
    "jax08_elementwise": AMD / "jax08_elementwise.xplane.pb",
}
_RUNS: dict = {}
GB = 2.0**30 / 1e9


def load(name: str):
    if name not in _RUNS:
        path = CAPTURES[name]
        if not path.exists():
            pytest.skip(f"{path} is absent")
        _RUNS[name] = tw.load(path, progress=False)
    return _RUNS[name]


# -- item 1: no op above a roof -------------------------------------------------------------


@pytest.mark.parametrize("name", list(CAPTURES))
def test_no_roofline_figure_is_above_its_roof(name):
    """Invariant: an efficiency or utilisation a user reads is at most 1; a row whose modelled
    FLOPs or bytes are more than its measured time allows (XProf's own efficiency above 1:
    cudnn-conv-bw-filter.3 and loop_reduce_window_fusion.2 at 1.29-1.33 on the H100 pair) is
    marked above_roof with a note saying why, and keeps XProf's figure in its own column."""
    rl = load(name).roofline
    assert schema.mismatches(rl, schema.ROOFLINE) == []
    for col in ("roofline_efficiency", "compute_efficiency", "max_mem_bw_utilization"):
        assert (rl[col] <= 1.0).all(), (col, rl.loc[rl[col] > 1, "hlo_op_name"].tolist())
    over = rl["xprof_roofline_efficiency"] > 1.0
    assert (rl["above_roof"] == over).all()
    notes = rl["roof_note"].astype(str)
    assert (notes[over] != "").all() and (notes[~over] == "").all()
    if name.startswith("jax_cnn"):
        assert over.sum() >= 2  # the H100 pair does have ops XProf puts above the HBM roof
        assert (notes[over].str.contains("memory roof")).all()


def test_no_tpu_roofline_figure_is_above_its_roof(tmp_path):
    """The same invariant on the TPU builder captures (tests/support/tpu_rates_builder.py: libtpu's
    costs on ops of a few hundred ns, many far above the chip's roofs): every figure a user
    reads at most 1, every op above a roof marked and explained, in the roofline and in the
    op profile."""
    from tpu_rates_builder import tpu_memory_capture

    run = tw.load(tpu_memory_capture().write(tmp_path / "tpu.xplane.pb"), progress=False)
    rl = run.roofline
    assert len(rl) >= 8 and rl["above_roof"].any()
    for col in ("roofline_efficiency", "compute_efficiency", "max_mem_bw_utilization"):
        assert (rl[col] <= 1.0).all(), col
    assert (rl.loc[rl["above_roof"], "roof_note"].astype(str) != "").all()
    tree = run.op_profile
    assert (tree["flop_utilization"] <= 1).all() and (tree["hbm_bw_utilization"] <= 1).all()
    p = run.roofline_peaks.iloc[0]
    for t in tw.views.roofline(run).figure().data:
        if t.mode == "markers":
            x, y = np.asarray(t.x, float), np.asarray(t.y, float)
            roof = np.minimum(x * p["peak_hbm_gibps"] * GB, p["peak_gflops"])
            assert (y <= roof * (1 + 1e-9)).all(), t.name


@pytest.mark.parametrize("name", ["jax_cnn_graphs", "jax_cnn_nographs"])
def test_no_roofline_point_is_drawn_above_the_roofs(name):
    """Every point of the roofline plot is at or below the roof at its intensity (HBM slope,
    compute ceiling); an op above a roof is drawn on it, hollow, in a group of its own whose
    hover gives its modelled rate and the note."""
    run = load(name)
    view = tw.views.roofline(run)
    fig = view.figure()
    p = run.roofline_peaks.iloc[0]
    pts = [t for t in fig.data if t.mode == "markers"]
    for t in pts:
        x, y = np.asarray(t.x, float), np.asarray(t.y, float)
        roof = np.minimum(x * p["peak_hbm_gibps"] * GB, p["peak_gflops"])
        assert (y <= roof * (1 + 1e-9)).all(), (t.name, [c[0] for c in t.customdata])
    above = [t for t in pts if t.name.startswith("above a roof")]
    assert len(above) == 1 and above[0].marker.symbol == "circle-open"
    assert "drawn on the roof" in above[0].hovertemplate
    assert any("above a roof" in f for f in view.findings())


# -- item 2: TPU async copies and the TPU's on-chip roof -------------------------------------

COPY = "f32[5,1024,1024,256]{3,2,1,0:T(8,128)}"
COPY_BYTES = 5 * 1024 * 1024 * 256 * 4


def _breakdown(read: int, write: int) -> bytes:
    """A MemoryAccessBreakdown: HBM read and HBM write entries."""

    def varint(n: int) -> bytes:
        out = bytearray()
        while True:
            b, n = n & 0x7F, n >> 7
            out.append(b | (0x80 if n else 0))
            if not n:
                return bytes(out)

    out = b""
    for kind, n in ((1, read), (2, write)):
        body = b"\x08" + varint(kind) + b"\x10\x01\x18" + varint(n)
        out += b"\x0a" + varint(len(body)) + body
    return out


def tpu_v6e_copies(path, copy_done_ps: int = 9_000):
    """A TPU v6 lite core (the real capture's plane stats: 918 TFLOP/s, HBM 1,638 GB/s, no
    CMEM) running copy-start/copy-done of a 5 GiB array, each a few ns of 'XLA Ops' time
    (the transfer runs between them, on 'Async XLA Ops'), and one ordinary fusion."""
    b = XSpaceBuilder("tpu-v6e")
    p = b.plane("/device:TPU:0", 1)
    for stat, value in (
        ("device_type_string", "TPU v6 lite"),
        ("peak_teraflops_per_second", 918.0),
        ("peak_hbm_bw_gigabytes_per_second", 1638.0),
        ("peak_cmem_rd_bw_gigabytes_per_second", 0.0),
        ("peak_cmem_wr_bw_gigabytes_per_second", 0.0),
        ("peak_vmem_rd_bw_gigabytes_per_second", 11000.0),
        ("peak_vmem_wr_bw_gigabytes_per_second", 11000.0),
        ("has_merged_vmem", 1),
        ("has_megacore", 0),
    ):
        p.add_plane_stat(stat, value)
    program = np.uint64(12190760917235803885)
    ops = {  # name: (HLO text, category, flops, bytes, (HBM read, HBM write), device ps)
        "copy-start": (f"%copy-start = ({COPY}, u32[]) copy-start(...)", "data formatting",
                       0, 2 * COPY_BYTES, (COPY_BYTES, COPY_BYTES), 4_000),
        "copy-done": (f"%copy-done = {COPY} copy-done(...)", "data formatting",
                      0, 2 * COPY_BYTES, (COPY_BYTES, COPY_BYTES), copy_done_ps),
        "fusion.1": ("%fusion.1 = bf16[1024,1024]{1,0:T(8,128)} fusion(...)", "loop fusion",
                     2 * 1024**3, 6 * 1024**2, (4 * 1024**2, 2 * 1024**2), 5_000_000),
    }  # fmt: skip
    for symbol, (name, (text, cat, flops, nbytes, (rd, wr), _)) in enumerate(ops.items(), 1):
        stats = {"hlo_category": cat, "program_id": program, "symbol_id": np.uint64(symbol)}
        stats.update(flops=flops, model_flops=flops, bytes_accessed=nbytes)
        stats.update(memory_access_breakdown=_breakdown(rd, wr), raw_bytes_accessed=nbytes)
        p.event_id(text, display_name=name, stats=stats)
    modules = p.line("XLA Modules", 2, timestamp_ns=1_000_000)
    line = p.line("XLA Ops", 3, timestamp_ns=1_000_000)
    base = 1_000_000 * 1000
    for run in range(3):
        start = run * 20_000_000
        modules.event(f"jit_f({program})", start, 15_000_000, {"run_id": np.uint64(run + 1)})
        at = start + 1_000
        for text, _, _, _, _, dur in ops.values():
            device = {
                "device_offset_ps": np.uint64(base + at),
                "device_duration_ps": np.uint64(dur),
            }
            line.event(text, at, dur, device)
            at += dur + 1_000_000
    return b.write(path)


@pytest.fixture(scope="module")
def tpu_copies(tmp_path_factory):
    return tw.load(tpu_v6e_copies(tmp_path_factory.mktemp("tpu") / "v6e.xplane.pb"), progress=False)


def test_tpu_async_copies_are_not_drawn_at_billions_of_gib_per_s(tpu_copies):
    """Rule: copy-start and copy-done time only the issue and the wait of an async copy, not
    the transfer their bytes count, so their "bandwidth" (here 1.1-2.5 billion GiB/s against an
    HBM roof of 1,526 GiB/s) cannot be read as one: the rows are above_roof with the async
    note, their efficiency capped at 1 (XProf's figure kept), the points on the roof; the
    ordinary fusion is not marked."""
    rl = tpu_copies.roofline.set_index(tpu_copies.roofline["hlo_op_name"].astype(str))
    peak = tpu_copies.roofline_peaks.iloc[0]["peak_hbm_gibps"]
    for op in ("copy-start", "copy-done"):
        row = rl.loc[op]
        assert row["hbm_bw_gibps"] > 1000 * peak  # what the capture's figures give
        assert row["above_roof"] and "async" in str(row["roof_note"])
        assert row["roofline_efficiency"] == 1.0 and row["xprof_roofline_efficiency"] > 1000
        assert row["max_mem_bw_utilization"] == 1.0
    assert not rl.loc["fusion.1", "above_roof"] and rl.loc["fusion.1", "roof_note"] == ""


def test_a_tpu_gets_its_vmem_roof_not_a_gpus_shared_memory(tpu_copies):
    """The second roof of a TPU is its VMEM write bandwidth (XProf's roofline on TPU), named
    so; 'shared memory / L1' is a GPU's, and stays on the H100's plot."""
    names = [t.name for t in tw.views.roofline(tpu_copies).figure().data]
    assert any(n.startswith("VMEM write roof") for n in names)
    assert not any("shared memory" in n for n in names)
    gpu = [t.name for t in tw.views.roofline(load("jax_cnn_nographs")).figure().data]
    assert any(n.startswith("shared memory / L1 roof") for n in gpu)
    amd = [t.name for t in tw.views.roofline(load("jax08_conv")).figure().data]
    assert any(n.startswith("LDS roof") for n in amd)


# -- item 9: TPU op types --------------------------------------------------------------------


def test_tpu_ops_without_a_framework_op_are_typed_by_their_hlo_opcode(tpu_copies):
    """XProf 2.24 types a TPU op without a tf_op 'Unknown' (on the real v6e capture 96.5 % of
    the device time, the copy-done ops the op profile names). Ours: the HLO opcode (here the
    name's stem, the capture carrying no program), so no device op reads 'Unknown'."""
    ops = tpu_copies.ops
    dev = ops[(ops["host_or_device"] == "Device") & (ops["operation"] != "IDLE")]
    types = dict(zip(dev["operation"].astype(str), dev["type"].astype(str)))
    assert types["copy-done"] == "copy-done" and types["copy-start"] == "copy-start"
    assert types["fusion.1"] == "fusion"
    assert "Unknown" not in set(types.values())


# -- item 5: kernels inside CUDA graphs ------------------------------------------------------


def test_graph_kernels_of_the_real_capture_are_named_by_their_instructions():
    """Under CUDA graphs XProf's kernel stats name all 24 kernels XLA launched inside graphs
    by the graph's tf_op, 'XlaModule'; ours name each by its instruction's framework op (the
    same as on the capture without graphs), marked beyond_xprof; no kernel reads
    'XlaModule', and every kernel of the capture is attributed (510 of 510)."""
    k = load("jax_cnn_graphs").kernels.astype({"kernel_name": str, "operation": str})
    assert not (k["operation"] == "XlaModule").any()
    assert k["beyond_xprof"].sum() >= 24
    flat = load("jax_cnn_nographs").kernels.astype({"kernel_name": str, "operation": str})
    ops = dict(zip(flat["kernel_name"], flat["operation"]))
    fusions = k[k["kernel_name"].str.contains("fusion")]
    assert len(fusions) >= 24
    same = [ops.get(n) == o for n, o in zip(fusions["kernel_name"], fusions["operation"])]
    assert np.mean(same) >= 0.9  # two compilations: a few fusions differ


def test_a_cublas_gemm_fusion_inside_a_graph_gets_its_nvjet_kernel(tmp_path, monkeypatch):
    """A gemm fusion the autotuner gave to cuBLAS (a kCustom fusion) runs an nvjet_* kernel
    not named after it: the library rule counts the custom fusions no kernel is named after
    among the calls, so the kernel between two fusion kernels goes to that fusion, beyond
    XProf, Tensor Cores credited."""
    import test_xla_command_buffers as cb

    entry = [
        ("p0", "parameter", "", "", ""),
        ("loop_add_fusion", "fusion", "kLoop", "", "jit(f)/add"),
        ("gemm_fusion_dot.22", "fusion", "kCustom", "", "jit(f)/dot_general"),
        ("loop_mul_fusion", "fusion", "kLoop", "", "jit(f)/mul"),
    ]
    in_graph = [
        ("loop_add_fusion", "loop_add_fusion"),
        ("nvjet_sm90_tst_128x256_64x4_2x1_v_bz_coopA_NNN", "gemm_fusion_dot.22"),
        ("loop_mul_fusion", "loop_mul_fusion"),
    ]
    monkeypatch.setattr(cb, "ENTRY", entry)
    monkeypatch.setattr(cb, "IN_GRAPH", in_graph)
    run = tw.load(cb.capture(tmp_path), progress=False)
    k = run.kernels.astype({"kernel_name": str, "operation": str})
    nvjet = k[k["kernel_name"].str.startswith("nvjet")]
    assert nvjet["operation"].tolist() == ["jit(f)/dot_general"]
    assert nvjet["beyond_xprof"].all() and nvjet["is_kernel_using_tensor_core"].all()
    hs = run.hlo_stats.astype({"hlo_op_name": str}).set_index("hlo_op_name")
    assert hs.loc["gemm_fusion_dot.22", "occurrences"] == 3


# -- item 6: Tensor Cores --------------------------------------------------------------------


@pytest.mark.parametrize("name", ["jax_cnn_graphs", "jax_cnn_nographs"])
def test_hopper_tensor_core_kernels_are_credited_beyond_xprof(name):
    """XProf's name list misses Hopper's sm90_xmma_* cuDNN kernels and mangled CUTLASS
    TensorOp kernels (its kernel stats: 'uses TC: no'); ours credits them, marked
    beyond_xprof. A kernel that is no MMA (nhwcAddPaddingKernel, a split-K reduction) is not."""
    k = load(name).kernels.astype({"kernel_name": str})
    xmma = k[k["kernel_name"].str.startswith("sm90_xmma_")]
    assert len(xmma) >= 4
    assert xmma["is_kernel_using_tensor_core"].all() and xmma["beyond_xprof"].all()
    other = k[k["kernel_name"].str.contains("nhwcAddPaddingKernel|ReduceSplitK")]
    assert len(other) >= 2 and not other["is_kernel_using_tensor_core"].any()


# -- item 10: the op profile and the roofline show one figure --------------------------------


@pytest.mark.parametrize("name", ["jax_cnn_graphs", "jax_cnn_nographs", "jax08_conv"])
def test_op_profile_and_roofline_show_the_same_utilisations(name):
    """An op's FLOP and HBM bandwidth utilisation in the op profile are the roofline's
    (compute_efficiency, max_mem_bw_utilization): one figure in both views, each at most 1.
    XProf's FLOP 'utilisation' (FLOPs over the whole tree's time: gemm_fusion_dot.2 reads
    0.0000 there where its own rate is 0.16 % of the peak) stays in xprof_flop_utilization."""
    run = load(name)
    tree, rl = run.op_profile, run.roofline
    assert schema.mismatches(tree, schema.OP_PROFILE) == []
    ops = tree[tree["level"] == "op"].set_index("name")
    by_op = rl.set_index(rl["hlo_op_name"].astype(str))
    many = name.startswith("jax_cnn")
    assert len(ops) >= (20 if many else 4)
    for col, theirs in (
        ("flop_utilization", "compute_efficiency"),
        ("hbm_bw_utilization", "max_mem_bw_utilization"),
    ):
        np.testing.assert_allclose(ops[col], by_op.loc[ops.index, theirs], rtol=1e-9, atol=1e-12)
        assert (tree[col] <= 1.0).all() and (tree[col] >= 0).all()
    assert (ops["flop_utilization"] >= ops["xprof_flop_utilization"] - 1e-12).all()
    assert (ops["flop_utilization"] > 2 * ops["xprof_flop_utilization"]).sum() >= (
        10 if many else 1
    )


def test_op_profile_and_roofline_headers_carry_their_units():
    """Every number column a user reads says its unit in its header: HBM bytes shown in MiB
    read 'HBM (MiB)', FLOPs in GFLOP (no 20-digit integer cut off), shares in %; the
    utilisations share their labels across the two views."""
    run = load("jax_cnn_nographs")
    prof = {c.name: c for c in tw.views.hlo_op_profile(run).table().columns if not c.hidden}
    roof = {c.name: c for c in tw.views.roofline(run).table().columns if not c.hidden}
    assert prof["hbm_bytes"].label == "HBM (MiB)" and prof["hbm_bytes"].kind == "bytes"
    assert "flops" not in prof and prof["gflops"].label == "GFLOP"
    for cols in (prof, roof):
        for c in cols.values():
            if c.kind == "pct":
                assert c.label.endswith("(%)"), c.label
    for col in ("flop_utilization", "hbm_bw_utilization"):
        want = {
            "flop_utilization": "compute_efficiency",
            "hbm_bw_utilization": "max_mem_bw_utilization",
        }
        assert prof[col].label == roof[want[col]].label


# -- items 3, 15, 16: memory -----------------------------------------------------------------

CHROME = ROOT / "tests" / "data" / "chrome"


def _chrome(name: str):
    key = f"chrome/{name}"
    if key not in _RUNS:
        path = CHROME / name
        if not path.exists():
            pytest.skip(f"{path} is absent")
        _RUNS[key] = tw.load(path, progress=False)
    return _RUNS[key]


def test_the_memory_peak_is_labelled_with_the_steps_tables_step():
    """The profiler's step group of the PyTorch transformer's GPU peak is 1, but the steps
    table (ProfilerStep#2-5) puts its time, 35.5 ms, in step 3: the header says step 3, the
    number every other view shows for that time."""
    run = _chrome("torch_transformer_h100.pt.trace.json.gz")
    view = tw.views.memory_timeline(run)
    s = run.memory_summary.set_index(run.memory_summary["allocator"].astype(str)).loc["GPU:0"]
    steps = run.steps
    start = steps["start_us"].to_numpy()
    hold = steps["step"][
        (start <= s["peak_time_us"]) & (s["peak_time_us"] < start + steps["step_time_us"])
    ]
    assert list(hold) == [3] and s["peak_group_id"] != 3
    header = view.header("GPU:0", str(s["host"]))
    assert "(step 3;" in header and f"(step {s['peak_group_id']};" not in header


def test_a_capture_without_steps_names_no_step_at_the_peak(tmp_path):
    """A TPU capture with allocator events but no steps: the header names no step (it said
    '(step 0)'); the lifetime peak says what it counts."""
    path = tpu_v6e_copies(tmp_path / "v6e.xplane.pb")
    b = XSpaceBuilder("tpu-v6e")
    b.space.ParseFromString(path.read_bytes())
    host = b.plane("/host:CPU", 1000).line("py_xla_execute", 3118851, timestamp_ns=1_000_000)
    for k, (name, nbytes) in enumerate(
        (("MemoryAllocation", 1 << 20), ("MemoryAllocation", 3 << 20))
    ):
        stats = {"bytes_allocated": nbytes, "peak_bytes_in_use": nbytes, "bytes_reserved": 0}
        stats.update(bytes_available=1 << 30, requested_bytes=1 << 20, allocation_bytes=1 << 20)
        stats.update(addr=k + 1, id=k + 1, data_type=1, index_on_host=0, fragmentation=0.0)
        host.event(name, 1_000_000 * (k + 1), 0, stats)
    run = tw.load(b.write(tmp_path / "mem.xplane.pb"), progress=False)
    assert len(run.memory) == 2 and not len(run.steps)
    view = tw.views.memory_timeline(run)
    header = view.header(view.allocator, view.host)
    assert "step" not in header
    assert "lifetime peak of its heap (allocated bytes, stack not counted)" in header
    assert "below the heap" not in header
    # An allocator whose own lifetime peak is below the heap the capture saw (the real v6e:
    # 'peak in use 20,497 MiB ... lifetime peak 10,240 MiB'): the header says they differ.
    s = view.summary.iloc[0].copy()
    s["peak_bytes_lifetime"] = s["peak_heap_bytes"] // 2
    assert "below the heap at the capture's peak" in view._lifetime(s)


def test_a_pytorch_trace_without_memory_events_gets_pytorchs_advice():
    """The B200 eager trace was recorded without profile_memory: the memory view tells a
    PyTorch user to turn that on, not TensorFlow's host tracer level."""
    run = _chrome("eager_b200.json.gz")
    assert not len(run.memory)
    text = " ".join(tw.views.memory_timeline(run).findings())
    assert "profile_memory=True" in text and "TF 2.x" not in text and "tracer" not in text


@pytest.mark.parametrize(
    "name, label",
    [("torch_transformer_h100.pt.trace.json.gz", "operator"), ("jax_cnn_graphs", "op")],
)
def test_memory_tables_use_the_frameworks_word_for_an_op(name, label):
    """The 'what was live at the peak' table heads its op column with the framework's word:
    'operator' on PyTorch, 'op' on JAX; 'TF op' only on TensorFlow."""
    run = load(name) if name in CAPTURES else _chrome(name)
    view = tw.views.memory_timeline(run)
    cols = {c.name: c.label for c in view.breakdown(view.allocator, view.host).columns}
    assert cols["tf_op"] == label


# -- items 12, 19: JAX on CPU ----------------------------------------------------------------

JAX_CPU = ROOT / "tests" / "data" / "jax_cpu" / "jax_cnn_cpu_10steps.xplane.pb"


@pytest.fixture(scope="module")
def jax_cpu():
    if not JAX_CPU.exists():
        pytest.skip(f"{JAX_CPU} is absent")
    return tw.load(JAX_CPU, progress=False)


def test_a_jax_step_that_compiles_shows_its_compile(jax_cpu):
    """Step 0 of the CPU capture compiles the program (JAX's backend_compile_and_load on
    the Python thread, 1.1 of its 1.5 s): its compile time is that, not host compute
    (XProf 2.24 types every host event host compute); the other steps compile nothing."""
    steps = jax_cpu.steps.set_index("step")
    ev = jax_cpu.events
    compile_us = ev.loc[ev["name"].astype(str) == "backend_compile_and_load", "dur_us"].sum()
    assert steps.loc[0, "compile_us"] == pytest.approx(compile_us, rel=1e-6)
    assert steps.loc[0, "compile_us"] >= 0.5 * steps.loc[0, "step_time_us"]
    assert steps.loc[0, "host_compute_us"] < 0.2 * steps.loc[0, "step_time_us"]
    assert (steps.loc[1:, "compile_us"] == 0).all()


def test_the_overview_leaves_a_compile_step_out_of_its_averages(jax_cpu):
    """A capture of five steps (what %%tfprof --backend jax gave: XProf keeps all steps of a
    host with five or fewer) averages steps 1..4: step 0, mostly compile, is left out and
    the count says why. With ten steps XProf's rule already leaves step 0 out, and the count
    says only that."""
    from tfprof_widgets.analysis.results import StepCount
    from tfprof_widgets.analysis.steps import overview_steps

    five = jax_cpu.steps.iloc[:5]
    kept = overview_steps(five)
    assert kept["step"].tolist() == [1, 2, 3, 4]
    count = StepCount.of(five, kept)
    assert "mostly compiling" in count.summary_line() and "first and last" not in count.DROPPED
    assert kept["step_time_us"].max() < 0.2 * five["step_time_us"].max()
    ten = jax_cpu.step_count
    assert (ten.averaged_first, ten.averaged_last) == (1, 8)
    assert "compil" not in ten.summary_line()


def test_the_jax_cpu_steps_are_xprofs(jax_cpu):
    """Fidelity (issue 36 item 19): on this capture, xprof's overview keeps steps 1..8 and
    every kept step's time and host compute equal ours to the µs (XLA:CPU's thunks on the
    XLAEigen and PjRt client threads are no host compute in either); step 0 (compile) is
    outside both averages."""
    from golden_tables import data_table, golden

    pages = golden("jax_cpu_10steps", "overview_page")
    table = next(t for t in pages if "cols" in t and t["cols"][0]["id"] == "stepnum")
    theirs = data_table(table)
    theirs["step"] = theirs["stepnum"].str.split().str[-1].astype(int)
    ours = jax_cpu.steps.set_index("step").loc[theirs["step"]]
    assert theirs["step"].tolist() == list(range(1, 9))
    np.testing.assert_allclose(ours["step_time_us"] / 1e3, theirs["stepTimeMs"], atol=1e-3)
    np.testing.assert_allclose(
        ours["host_compute_us"] / 1e3, theirs["hostComputeTimeMs"], atol=1e-3
    )
    assert (theirs["compileTimeMs"] == 0).all() and (ours["compile_us"] == 0).all()


# -- item 19: custom calls no cost model covers ----------------------------------------------


def _custom_call_capture(path):
    """An H100 plane (the JAX H100 capture's device stats) running one program: a GEMM
    custom call (the cost model's dot rule) and a TransformerEngine-like fused-attention
    custom call no cost model covers, each kernel naming its instruction by hlo_op."""
    from tfprof_widgets.proto import xla_hlo_pb2

    proto = xla_hlo_pb2.HloProto()
    m = proto.hlo_module
    m.name, m.entry_computation_name, m.id = "jit_attn", "main.1", 5
    main = m.computations.add(name="main.1", id=1)
    seq = m.schedule.sequences[1]
    for k, (name, opcode, target, operands) in enumerate(
        [
            ("p0", "parameter", "", []),
            ("p1", "parameter", "", []),
            ("custom-call.7", "custom-call", "te_fused_attn_forward_ffi", [100, 101]),
            ("custom-call.8", "custom-call", "__cublas$gemm", [100, 101]),
        ]
    ):
        ins = main.instructions.add(name=name, opcode=opcode, id=100 + k)
        ins.custom_call_target = target
        ins.operand_ids.extend(operands)
        ins.parameter_number = k if opcode == "parameter" else 0
        ins.shape.element_type = xla_hlo_pb2.BF16
        ins.shape.dimensions.extend([2048, 2048])
        ins.shape.layout.minor_to_major.extend([1, 0])
        if target == "__cublas$gemm":
            ins.backend_config = (
                b'{"gemm_backend_config":{"dot_dimension_numbers":{"lhs_contracting_dimensions":'
                b'["1"],"rhs_contracting_dimensions":["0"]}}}'
            )
        seq.instruction_ids.append(100 + k)
    main.root_id = 103
    b = XSpaceBuilder("vm")
    md = b.plane("/host:metadata", 1)
    md.event_id("jit_attn(5)", stats={"Hlo Proto": proto.SerializeToString(), "program_id": 5})
    gpu = b.plane("/device:GPU:0", 3)
    for stat, value in (
        ("clock_rate", 1_980_000),
        ("core_count", 132),
        ("memory_bandwidth", np.uint64(3_352_320_000_000)),
        ("compute_cap_major", 9),
        ("compute_cap_minor", 0),
        ("device_vendor", "Nvidia"),
    ):
        gpu.add_plane_stat(stat, value)
    line = gpu.line("Stream #14(Compute)", 14)
    details = "regs:32 static_shared:0 dynamic_shared:0 grid:8,1,1 block:128,1,1 occ_pct:50.0"
    for s in range(3):
        for k, (op, kernel) in enumerate(
            [("custom-call.7", "fmha_fwd_kernel"), ("custom-call.8", "nvjet_sm90_tst_x")]
        ):
            stats = {"hlo_op": ("ref", op), "hlo_module": ("ref", "jit_attn"), "program_id": 5}
            stats.update(kernel_details=details, correlation_id=10 * s + k)
            line.event(kernel, (s * 1000 + 100 * k) * 1_000_000, 20 * 1_000_000, stats)
    return b.write(path)


def test_a_custom_call_no_cost_model_covers_is_bound_by_unknown(tmp_path):
    """XProf counts neither FLOPs nor bytes for a custom call its cost model does not know
    and says 'Unknown'; ours counted its operands' and result's bytes and called it
    HBM-bound (587-1,693 GiB/s on an MI355's TransformerEngine attention). Now: bound
    'Unknown', no efficiency, a note saying why; the GEMM call keeps its dot FLOPs."""
    run = tw.load(_custom_call_capture(tmp_path / "te.xplane.pb"), progress=False)
    rl = run.roofline.set_index(run.roofline["hlo_op_name"].astype(str))
    te = rl.loc["custom-call.7"]
    assert te["flops"] == 0 and te["bytes_accessed"] > 0
    assert te["bound_by"] == "Unknown" and te["roofline_efficiency"] == 0
    assert "no cost model" in str(te["roof_note"])
    gemm = rl.loc["custom-call.8"]
    assert gemm["flops"] == pytest.approx(2 * 3 * 2048**3) and gemm["bound_by"] != "Unknown"
    hs = run.hlo_stats.set_index(run.hlo_stats["hlo_op_name"].astype(str))
    assert hs.loc["custom-call.7", "bound_by"] == "Unknown"


def test_times_of_a_second_or_more_are_shown_in_ms(tmp_path):
    """A TPU's copy-done can wait tens of seconds over a capture (77,773,215.7 µs on the
    real v6e one): the op profile and roofline tables then show ms, the unit in the header,
    and the op profile's summary a unit that fits; µs stays in the CSV."""
    run = tw.load(tpu_v6e_copies(tmp_path / "long.xplane.pb", 26 * 10**12), progress=False)
    for view in (tw.views.hlo_op_profile(run), tw.views.roofline(run)):
        table = view.table()
        shown = [c for c in table.columns if not c.hidden]
        labels = [c.label for c in shown]
        assert any(str(lb).endswith("(ms)") for lb in labels), labels
        assert not any("(µs)" in str(lb) for lb in labels), labels
        ms = next(c for c in shown if str(c.label).endswith("(ms)"))
        assert table.df[ms.name].max() == pytest.approx(78_000, rel=0.01)
    assert " s of device time" in tw.views.hlo_op_profile(run).findings()[0]
    small = load("jax_cnn_nographs")
    labels = [c.label for c in tw.views.hlo_op_profile(small).table().columns if not c.hidden]
    assert "time (µs)" in labels  # a GPU capture's ms-scale ops stay in µs


def test_op_stats_show_times_of_a_second_or_more_in_ms(tmp_path):
    """Issue 36 item 9 in the op stats view too: a TPU's copy-done self time over a capture
    in ms under a header saying so (µs kept for the CSV), and its findings in seconds."""
    run = tw.load(tpu_v6e_copies(tmp_path / "long.xplane.pb", 26 * 10**12), progress=False)
    view = tw.views.op_stats(run)
    table = view.table()
    labels = [c.label for c in table.columns if not c.hidden]
    assert "self time (ms)" in labels and "total time (ms)" in labels, labels
    assert "self time (µs)" not in labels
    assert table.df["total_self_time_ms"].max() == pytest.approx(
        table.df["total_self_time_us"].max() / 1e3
    )
    assert any(" s self time" in line for line in view.findings())
    small = tw.views.op_stats(load("jax_cnn_nographs")).table()
    assert "self time (µs)" in [c.label for c in small.columns if not c.hidden]
