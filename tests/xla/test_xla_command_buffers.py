"""Kernels launched inside CUDA graphs (XLA command buffers), on a synthetic capture shaped
like the H100 JAX capture with graphs (tests/data/xplane_h100_jax/jax_cnn_graphs.xplane.pb):
their ``hlo_op`` is ``command_buffer_N``, no HLO instruction, so XProf attributes none of
them; we attribute fusion kernels by name and library kernels by the program's schedule
(frameworks/xla/gpu.py), beyond XProf."""

from __future__ import annotations

import numpy as np
import pytest
from xspace_builder import US, XSpaceBuilder

import tfprof_widgets as tw
from tfprof_widgets.frameworks.xla.gpu import kernel_instructions
from tfprof_widgets.proto import xla_hlo_pb2

PROGRAM = 7
# (name, opcode, fusion kind, custom-call target, op_name), in schedule order.
ENTRY = [
    ("p0", "parameter", "", "", ""),
    ("loop_add_fusion", "fusion", "kLoop", "", "jit(f)/add"),
    ("cublas-gemm.1", "custom-call", "", "__cublas$gemm", "jit(f)/dot_general"),
    ("loop_exp_fusion.2", "fusion", "kLoop", "", "jit(f)/exp"),
    ("cublas-gemm.2", "custom-call", "", "__cublas$gemm", "jit(f)/jvp()/dot_general"),
    ("cublas-gemm.3", "custom-call", "", "__cublas$gemm", "jit(f)/transpose()/dot_general"),
    ("loop_mul_fusion", "fusion", "kLoop", "", "jit(f)/mul"),
    ("cudnn-conv.1", "custom-call", "", "__cudnn$convForward", "jit(f)/conv_general_dilated"),
    ("cudnn-conv.2", "custom-call", "", "__cudnn$convForward", "jit(f)/conv_general_dilated"),
]
# Kernels of one graph launch, in time order, and the instruction each must come from.
IN_GRAPH = [
    ("loop_add_fusion", "loop_add_fusion"),
    ("sm90_gemm_a", "cublas-gemm.1"),  # the one library call between the two fusions
    ("sm90_gemm_a_splitk", "cublas-gemm.1"),
    ("loop_exp_fusion_2", "loop_exp_fusion.2"),
    ("nvjet_b", "cublas-gemm.2"),  # two kernels, two calls: one each, in order
    ("nvjet_c", "cublas-gemm.3"),
    ("loop_mul_fusion", "loop_mul_fusion"),
    ("cutlass_conv", None),  # three kernels for two calls: not guessed
    ("cutlass_conv_b", None),
    ("cutlass_conv_c", None),
]


def hlo_proto() -> bytes:
    proto = xla_hlo_pb2.HloProto()
    m = proto.hlo_module
    m.name, m.entry_computation_name, m.id = "jit_f", "main.1", PROGRAM
    fused = m.computations.add(name="fused_add", id=1, is_fusion_computation=True)
    fused.instructions.add(name="add.1", opcode="add", id=100)
    main = m.computations.add(name="main.1", id=2)
    seq = m.schedule.sequences[2]
    for k, (name, opcode, kind, target, op_name) in enumerate(ENTRY):
        ins = main.instructions.add(name=name, opcode=opcode, id=200 + k)
        ins.fusion_kind, ins.custom_call_target = kind, target
        ins.metadata.op_name = op_name
        ins.shape.element_type = xla_hlo_pb2.F32
        ins.shape.dimensions.extend([8, 8])
        seq.instruction_ids.append(200 + k)
    return proto.SerializeToString()


def capture(tmp_path):
    b = XSpaceBuilder("vm")
    md = b.plane("/host:metadata", 1)
    md.event_id(f"jit_f({PROGRAM})", stats={"Hlo Proto": hlo_proto(), "program_id": PROGRAM})
    host = b.plane("/host:CPU", 2).line("python3", 1)
    gpu = b.plane("/device:GPU:0", 3).line("Stream #14(Compute)", 14)
    details = "regs:32 static_shared:0 dynamic_shared:0 grid:8,1,1 block:128,1,1 occ_pct:50.0"
    for s in range(3):
        t0 = s * 1000 * US
        host.event("train", t0, 900 * US, {"step_num": s, "_r": 1})
        host.event("cuGraphLaunch", t0 + 10 * US, 5 * US, {"correlation_id": 100 + s})
        for k, (kernel, _) in enumerate(IN_GRAPH):
            stats = {
                "correlation_id": 100 + s,
                "hlo_op": ("ref", "command_buffer_3"),
                "hlo_module": ("ref", "jit_f"),
                "program_id": PROGRAM,
                "kernel_details": details,
                "tf_op": ("ref", "XlaModule:"),
            }
            gpu.event(kernel, t0 + (20 + 10 * k) * US, 8 * US, stats)
        # One kernel outside the graph: XProf's own attribution.
        host.event("cuLaunchKernel", t0 + 200 * US, 5 * US, {"correlation_id": 500 + s})
        gpu.event(
            "loop_mul_fusion",
            t0 + 300 * US,
            4 * US,
            {
                "correlation_id": 500 + s,
                "hlo_op": ("ref", "loop_mul_fusion"),
                "hlo_module": ("ref", "jit_f"),
                "program_id": PROGRAM,
                "kernel_details": details,
                "tf_op": ("ref", "XlaModule:"),
            },
        )
    return b.write(tmp_path / "graphs.xplane.pb")


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    return tw.load(capture(tmp_path_factory.mktemp("graphs")), progress=False)


def test_graph_kernels_go_to_their_instructions(run):
    """Rule: a fusion kernel inside a graph is its fusion's ('.' written '_'); a run of
    library kernels between two fusion kernels goes to the library call scheduled between
    those fusions when there is one, or one each when there are as many calls as kernels;
    otherwise it stays unattributed. All of these are beyond XProf; the kernel launched
    outside the graph names its instruction and is XProf's."""
    k = kernel_instructions(run)
    h = run.hlo_instructions
    ev = run.events
    got = dict(zip(k["row"], h["instruction"].astype(str).to_numpy()[k["instruction"]]))
    beyond = dict(zip(k["row"], k["beyond_xprof"]))
    graph_rows = np.flatnonzero(run.stat("hlo_op").astype(str).to_numpy() == "command_buffer_3")
    assert len(graph_rows) == 3 * len(IN_GRAPH)
    for row in graph_rows:
        want = dict(IN_GRAPH)[str(ev["name"].iloc[row])]
        assert got.get(row) == want, ev["name"].iloc[row]
        assert beyond.get(row, True)
    outside = np.flatnonzero(run.stat("hlo_op").astype(str).to_numpy() == "loop_mul_fusion")
    assert len(outside) == 3 and not any(beyond[r] for r in outside)


def test_graph_kernels_make_op_rows_beyond_xprof(run):
    """The op table: graph kernels' ops are rows beyond XProf (their IDLE shrinks by them);
    a TF op ran as often as its busiest instruction; the unattributed conv kernels stay
    idle time, as in XProf."""
    ops = run.ops.astype({"operation": str})
    dev = ops[(ops["host_or_device"] == "Device") & (ops["type"] != "IDLE")].set_index("operation")
    gemm = dev.loc["jit(f)/dot_general"]
    assert gemm["beyond_xprof"] and gemm["occurrences"] == 6  # two kernels a step, 3 steps
    assert gemm["total_time_us"] == pytest.approx(6 * 8)
    assert dev.loc["jit(f)/jvp()/dot_general", "occurrences"] == 3
    assert "jit(f)/conv_general_dilated" not in dev.index
    # The kernels no rule attributes keep the op of their tf_op stat, as before the HLO
    # protos were read: one 'XlaModule' row, beyond XProf (which counts them as IDLE).
    assert dev.loc["XlaModule", "beyond_xprof"] and dev.loc["XlaModule", "occurrences"] == 3
    mul = dev.loc["jit(f)/mul"]  # in the graph (beyond) and outside it (XProf's)
    assert mul["beyond_xprof"] and mul["occurrences"] == 6
    # Kernel stats: the graph kernels named by the op of the instruction we attribute them
    # to, beyond XProf (whose kernel stats say 'XlaModule'; issue 36 item 5).
    kernels = run.kernels.astype({"kernel_name": str, "operation": str})
    nvjet = kernels[kernels["kernel_name"] == "nvjet_b"]
    assert set(nvjet["operation"]) == {"jit(f)/jvp()/dot_general"}
    assert nvjet["beyond_xprof"].all() and nvjet["is_kernel_using_tensor_core"].all()
    mul = kernels[kernels["kernel_name"] == "loop_mul_fusion"]
    assert set(mul["operation"]) == {"jit(f)/mul"} and mul["beyond_xprof"].all()
