"""XLA's collectives (issue 40, item 3): the collective instructions of a real JAX program
(tests/data/jax_cpu/jax_collectives_cpu4.xplane.pb: psum, all_gather, psum_scatter, ppermute
and all_to_all over four devices) with their replica groups and bytes; their device events on
GPU and TPU in the step breakdown's device_collectives, the collectives table and the
communication/computation overlap.

No bundled capture runs an XLA collective on a device (XLA:CPU writes no event per
instruction; the H100 and AMD JAX captures and the TPU programs hold none), so the device
timelines here are built around that real program: kernels (GPU) or ops (TPU) that name its
instructions, at times chosen so that every figure is known exactly."""

from __future__ import annotations

import pathlib
import warnings

import numpy as np
import pytest
from xspace_builder import US, XSpaceBuilder

import tfprof_widgets as tw
from tfprof_widgets.frameworks.xla.collectives import instruction_collectives

CAPTURE = pathlib.Path(__file__).resolve().parents[1] / "data" / "jax_cpu"
CAPTURE = CAPTURE / "jax_collectives_cpu4.xplane.pb"
# The program's collectives: instruction -> (collective, bytes as nccl-tests counts them).
COLLECTIVES = {
    "psum_invariant.7": ("all_reduce", 4096 * 64 * 4),
    "all_gather.3": ("all_gather", 4 * 4096 * 64 * 4),
    "reduce_scatter.7": ("reduce_scatter", 4 * 4096 * 64 * 4),  # its whole input
    "ppermute.3": ("collective_permute", 4096 * 64 * 4),
    "all-to-all": ("all_to_all", 4096 * 64 * 4),
}
COMPUTE = "slice_add_fusion"
RING = "{{0,1},{1,2},{2,3},{3,0}}"


@pytest.fixture(scope="module")
def real():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return tw.load(CAPTURE)


def _program(run) -> tuple[int, bytes]:
    """The jit_body program (id, serialized HloProto) of the real capture."""
    names = {p: m.name for _, p, m in run.hlo_modules}
    program = min(p for p, n in names.items() if n == "jit_body")
    return program, next(b for _, p, b in run.hlo_protos if p == program)


def test_the_real_programs_collectives(real):
    """Every collective instruction of the two jit_body programs, with the replica groups and
    source-target pairs XLA's own protobuf decoding gives (TensorFlow's hlo_pb2), their
    group size and nccl-tests' bytes."""
    table = instruction_collectives(real)
    assert sorted(table["program_id"].unique()) == [4, 10]
    one = table[table["program_id"] == 4].set_index("instruction")
    assert sorted(one.index) == sorted(COLLECTIVES)
    for name, (kind, size) in COLLECTIVES.items():
        assert (one.at[name, "collective"], one.at[name, "size_bytes"]) == (kind, size)
    hlo_pb2 = pytest.importorskip("tensorflow.compiler.xla.service.hlo_pb2")
    proto = hlo_pb2.HloProto.FromString(_program(real)[1])
    for comp in proto.hlo_module.computations:
        for ins in comp.instructions:
            if ins.name not in COLLECTIVES:
                continue
            groups = [list(g.replica_ids) for g in ins.replica_groups]
            groups += [list(g.replica_ids) for g in ins.collective_device_list.replica_groups]
            pairs = [[p.source, p.target] for p in ins.source_target_pairs]
            text = "{" + ",".join("{" + ",".join(map(str, g)) + "}" for g in groups or pairs)
            assert one.at[ins.name, "communicator"] == text + "}", ins.name
            n = len(groups[0]) if groups else np.nan
            np.testing.assert_equal(one.at[ins.name, "group_size"], n)
    assert one.at["ppermute.3", "communicator"] == RING


def test_iota_replica_groups_read_as_xla_prints_them():
    """Large meshes write their groups as an iota list: HLO text '[2,4]<=[4,2]T(1,0)'."""
    from tfprof_widgets.frameworks.xla.collectives import _communicator

    hlo_pb2 = pytest.importorskip("tensorflow.compiler.xla.service.hlo_pb2")
    ins = hlo_pb2.HloInstructionProto(name="all-reduce.1", opcode="all-reduce")
    iota = ins.collective_device_list.iota_replica_group_list
    iota.num_replica_groups, iota.num_devices_per_group = 2, 4
    iota.iota_reshape_dims.extend([4, 2])
    iota.iota_transpose_perm.extend([1, 0])
    assert _communicator(ins.SerializeToString()) == ("[2,4]<=[4,2]T(1,0)", 4.0)
    text, n = _communicator(b"\xc2\x05\xff")  # field 88, its length cut short
    assert text == "" and np.isnan(n)


def test_a_cpu_capture_has_no_device_collectives(real):
    """XLA:CPU runs its collectives without an event of their own: nothing to time."""
    assert real.collectives.empty
    assert real.steps["device_collectives_us"].sum() == 0


# Per step (µs from its start): the compute kernel on one stream, the collectives on another,
# the all-reduce overlapping the compute by 20 µs. XLA's all-reduce runs NCCL's kernel; the
# others XLA's own kernels (no 'nccl' name: found by their instruction only).
STEP_US = 100
KERNELS = (
    (COMPUTE, "loop_slice_add_fusion", 14, 10, 40),
    ("psum_invariant.7", "ncclDevKernel_AllReduce_Sum_f32_RING_LL", 15, 30, 30),
    ("all_gather.3", "all_gather_kernel", 15, 60, 10),
    ("reduce_scatter.7", "reduce_scatter_kernel", 15, 70, 10),
    ("ppermute.3", "collective_permute_kernel", 15, 80, 5),
    ("all-to-all", "all_to_all_kernel", 15, 85, 10),
)
COMM_US, OVERLAP_US = 65, 20


def _gpu_capture(path: pathlib.Path, program: int, data: bytes, steps: int = 3) -> pathlib.Path:
    b = XSpaceBuilder("vm")
    md = b.plane("/host:metadata", 1)
    md.event_id(f"jit_body({program})", stats={"Hlo Proto": data, "program_id": program})
    host = b.plane("/host:CPU", 2).line("python3", 1)
    gpu = b.plane("/device:GPU:0", 3)
    streams = {s: gpu.line(f"Stream #{s}(Compute)", s) for s in (14, 15)}
    for s in range(steps):
        t0 = s * STEP_US * US
        host.event("train", t0, (STEP_US - 1) * US, {"step_num": s, "_r": 1})
        for k, (instr, kernel, stream, start, dur) in enumerate(KERNELS):
            corr = s * 1000 + k
            host.event("cuLaunchKernel", t0 + (1 + k) * US, US // 2, {"correlation_id": corr})
            stats = {"correlation_id": corr, "hlo_op": instr, "hlo_module": "jit_body",
                     "program_id": program}  # fmt: skip
            streams[stream].event(kernel, t0 + start * US, dur * US, stats)
    return b.write(path)


@pytest.fixture(scope="module")
def gpu_run(real, tmp_path_factory):
    program, data = _program(real)
    path = _gpu_capture(tmp_path_factory.mktemp("xla_coll") / "gpu.xplane.pb", program, data)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return tw.load(path)


def test_gpu_collectives_table(gpu_run):
    c = gpu_run.collectives.set_index("name")
    assert sorted(c.index) == sorted(COLLECTIVES)
    for instr, _kernel, _, _, dur in KERNELS[1:]:
        kind, size = COLLECTIVES[instr]
        row = c.loc[instr]
        assert (row["collective"], row["size_bytes"], row["count"]) == (kind, size, 3)
        assert row["total_time_us"] == pytest.approx(3 * dur)
        assert row["algbw_gbps"] == pytest.approx(size / dur / 1e3)
        n = 4 if instr != "ppermute.3" else np.nan
        factor = {"all_reduce": 1.5, "collective_permute": 1.0}.get(kind, 0.75)
        assert row["busbw_gbps"] == pytest.approx(size / dur / 1e3 * factor)
        assert row["communicator"] == (RING if n != 4 else "{{0,1,2,3}}")


def test_gpu_device_collectives_count_every_xla_collective(gpu_run):
    """XProf counts only the 'nccl' kernel (its all-reduce) as DEVICE_COLLECTIVES; XLA's own
    collective kernels count too here. The all-reduce's 20 µs under the compute kernel are
    compute's (XProf's priority), the rest of the collectives' time is device_collectives."""
    s = gpu_run.steps
    assert len(s) >= 2
    np.testing.assert_allclose(s["device_collectives_us"], COMM_US - OVERLAP_US)
    assert (s["device_collectives_us"] <= s["step_time_us"]).all()


def test_gpu_overlap_is_htas_figure(gpu_run):
    o = gpu_run.comm_comp_overlap
    assert len(o) == 1
    assert o["communication_us"].iat[0] == pytest.approx(3 * COMM_US)
    assert o["overlap_us"].iat[0] == pytest.approx(3 * OVERLAP_US)
    assert o["comp_comm_overlap_percent"].iat[0] == pytest.approx(100 * OVERLAP_US / COMM_US)


# A TPU core runs its ops one after another on its 'XLA Ops' line (µs from the step's start).
TPU_OPS = (
    (COMPUTE, "loop fusion", 0, 40),
    ("psum_invariant.7", "all-reduce", 40, 20),
    ("all_gather.3", "all-gather", 60, 10),
    ("reduce_scatter.7", "reduce-scatter", 70, 10),
    ("ppermute.3", "collective-permute", 80, 5),
    ("all-to-all", "all-to-all", 85, 10),
)


def _tpu_capture(path: pathlib.Path, program: int, data: bytes | None) -> pathlib.Path:
    """Two steps of the program on one TPU core (``data`` None: no /host:metadata plane, as a
    capture whose programs were not kept)."""
    b = XSpaceBuilder("tpu-vm")
    core = b.plane("/device:TPU:0", 1)
    core.add_plane_stat("device_type_string", "TPU v4")
    ops, steps = core.line("XLA Ops", 3, timestamp_ns=1_000), core.line("Steps", 8, 1_000)
    names = {}
    for k, (instr, category, _, _) in enumerate(TPU_OPS):
        stats = {"hlo_category": category, "program_id": np.uint64(program),
                 "symbol_id": np.uint64(100 + k)}  # fmt: skip
        names[instr] = f"%{instr} = f32[4096,64] op(...)"
        core.event_id(names[instr], display_name=instr, stats=stats)
    for s in range(2):
        t0 = s * STEP_US * US
        steps.event(str(s), t0, STEP_US * US)
        for instr, _, start, dur in TPU_OPS:
            device = {"device_offset_ps": np.uint64(1_000_000 + t0 + start * US),
                      "device_duration_ps": np.uint64(dur * US)}  # fmt: skip
            ops.event(names[instr], t0 + start * US, dur * US, device)
    if data is not None:
        md = b.plane("/host:metadata", 999)
        md.event_id(f"jit_body({program})", stats={"Hlo Proto": data, "program_id": program})
    return b.write(path)


@pytest.mark.parametrize("with_programs", [True, False])
def test_tpu_collectives(real, tmp_path, with_programs):
    """The TPU core's collective ops are the table's rows and the overlap's communication:
    by their instruction (groups and bytes known), or, without the programs, by their
    hlo_category alone. On one op line nothing overlaps. The step breakdown takes their time
    out of the TensorCore compute (XProf leaves it there)."""
    program, data = _program(real)
    path = _tpu_capture(tmp_path / "tpu.xplane.pb", program, data if with_programs else None)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        run = tw.load(path)
    c = run.collectives.set_index("name")
    assert sorted(c.index) == sorted(COLLECTIVES)
    assert (c["count"] == 2).all()
    for instr, _, _, dur in TPU_OPS[1:]:
        assert c.at[instr, "collective"] == COLLECTIVES[instr][0]
        assert c.at[instr, "total_time_us"] == pytest.approx(2 * dur)
    sizes = c["size_bytes"].to_numpy()
    assert np.isfinite(sizes).all() if with_programs else np.isnan(sizes).all()
    o = run.comm_comp_overlap
    assert o["communication_us"].iat[0] == pytest.approx(2 * 55)
    assert o["overlap_us"].iat[0] == 0
    s = run.steps
    assert len(s) == 2
    np.testing.assert_allclose(s["device_collectives_us"], 55)
    np.testing.assert_allclose(s["device_compute_us"], 40)
    np.testing.assert_allclose(s["all_others_us"], 5)  # the core's idle
