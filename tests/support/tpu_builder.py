"""A synthetic JAX TPU XSpace laid out as libtpu writes it (no TPU here), for the TPU rules.

The layout is the real one of tests/data/reference/xla-capture-inventory.txt (JAX on 4 TPU v6
Lite cores); the values are ours:

* planes ``/device:TPU:0`` and ``/device:TPU:1`` with libtpu's plane stats
  (``device_type_string``, ``peak_teraflops_per_second``, ``peak_hbm_bw_gigabytes_per_second``,
  the VMEM/CMEM/SRAM peaks, ``has_megacore``, ``has_merged_vmem``, ``core_details``) and the
  lines ``XLA Modules`` (id 2), ``XLA Ops`` (3), ``Async XLA Ops`` (4), ``XLA TraceMe`` (6),
  ``Overlay`` (7, empty) and ``Steps``;
* ``XLA Modules`` events named ``<module>(<program id>)`` with libtpu's event stats
  (``run_id``, ``replica_id``, ``queue_id``, ``core_type``, ``_ct``/``_c``);
* an HLO op's identity on its EVENT METADATA: ``name`` the HLO text (``%fusion.1 = bf16[..]
  fusion(..)``), ``display_name`` the instruction's name, stats ``hlo_category``,
  ``program_id`` and ``symbol_id`` (uint64), ``flops``, ``model_flops``, ``bytes_accessed``,
  ``raw_bytes_accessed``, ``memory_access_breakdown``, ``shape_with_layout``, on some
  ``source``/``source_stack`` and ``deduplicated_name``, and NO ``tf_op``: the framework op
  is in the program's HLO (each instruction's ``metadata.op_name``);
* the core's clock on each op EVENT: ``device_offset_ps``/``device_duration_ps`` (uint64;
  offsets shifted from the XEvent's, durations shorter), ``all_reduce_unique_id`` on the
  all-reduce; ``Async XLA Ops`` events with ``hlo_op``, ``_a``, ``flow``, ``id``;
* ``/host:metadata``: one event metadata per program, its id the program id (a fingerprint,
  stored as int64: the big one is negative there) and its stat ``Hlo Proto`` (a serialized
  ``xla.HloProto``), no ``program_id`` stat, as libtpu writes it;
* ``/host:CPU`` with JAX's host lines (``main``: ``PjitFunction``, the ``train`` step
  markers with ``step_num`` and ``_r=1``; ``py_xla_execute``: ``TfrtTpuLoadedExecutable``
  and ``MemoryAllocation``/``MemoryDeallocation`` whose allocator is ``index_on_host`` or
  ``device_ordinal``; ``tfrt-non-blocking-queue``), and ``Task Environment``;
* no ``group_id`` anywhere (XProf groups TPU captures itself).

``scripts/make_golden.py`` runs xprof on it (tests/golden/synthetic_tpu); the tests rebuild
it with :func:`tpu_capture` and compare.
"""

from __future__ import annotations

import pathlib

import numpy as np
from xspace_builder import XSpaceBuilder

from tfprof_widgets.proto import xla_hlo_pb2

TS_NS = 1_000_000  # every line's timestamp_ns
BASE_PS = TS_NS * 1000
# Program ids are fingerprints: uint64 on the ops, int64 as a metadata id (so the first
# one, above 2**63, is negative there).
TRAIN = 12190760917235803885
CONVERT = 2433868464432466958
# A megacore chip (TPU v4: two tensor cores run one program), so that one op is of the
# 'megacore fusion' category XProf's duty cycle leaves out.
PEAK_TFLOPS = 275.0
PEAK_HBM_GBPS = 1228.8

# The ops each core runs, by instruction name, with the category libtpu gives each and XLA's
# cost analysis (flops, bytes accessed per run). The programs are real XLA modules
# (tests/data/tpu_hlo, made by make_programs): bf16 and f32 outputs, framework ops on some
# instructions (metadata.op_name) and none on the converts and copies XLA added.
TRAIN_OPS = {
    "conv_general_dilated.2": ("convolution", 147_456, 6_000),
    "transpose_copy_fusion.1": ("data formatting", 0, 2_048),
    "wrapped_convert.2": ("loop fusion", 0, 6_144),
    "ynn_fusion.1": ("custom fusion", 20_480, 12_360),
    "reduce_multiply_fusion": ("loop fusion", 60, 160),
    "ynn_fusion": ("custom fusion", 20_480, 24_560),
    "dot_general.4": ("dot", 20_480, 24_560),
    "convolution": ("convolution", 147_456, 4_000),
    "subtract_convert_fusion": ("loop fusion", 10_240, 30_720),
    "subtract_convert_fusion.1": ("megacore fusion", 576, 1_728),  # off duty
    "tuple.1": ("tuple", 0, 0),
}
CONVERT_OPS = {"wrapped_convert": ("loop fusion", 1_024, 6_144)}


def program(module: str) -> bytes:
    """The serialized ``xla.HloProto`` of one of the two programs."""
    return (HLO_DIR / f"{module}.pb").read_bytes()


def _instructions(module: str) -> dict:
    """Instruction name -> (id, opcode, element type, dims, is root) of the entry computation."""
    proto = xla_hlo_pb2.HloProto()
    proto.ParseFromString(program(module))
    m = proto.hlo_module
    (entry,) = [c for c in m.computations if c.name == m.entry_computation_name]
    kinds = xla_hlo_pb2.PrimitiveType.Name
    return {
        i.name: (i.id, i.opcode, kinds(i.shape.element_type).lower(), tuple(i.shape.dimensions),
                 i.id == entry.root_id)
        for i in entry.instructions
    }  # fmt: skip


def _op_metadata(p, program_id: int, module: str, ops: dict) -> dict[str, str]:
    """Event metadata of each op as libtpu writes it; instruction name -> metadata name."""
    table = _instructions(module)
    out = {}
    for name, (category, flops, nbytes) in ops.items():
        iid, opcode, dtype, dims, root = table[name]
        shape = f"{dtype}[{','.join(map(str, dims))}]" if dtype != "tuple" else "(...)"
        text = f"%{name} = {shape}{{1,0:T(8,128)}} {opcode}(...)"
        stats = {
            "hlo_category": category,
            "program_id": np.uint64(program_id),
            # The root tuple is no op of its own (symbol 0).
            "symbol_id": np.uint64(0 if root and opcode == "tuple" else iid),
            "flops": flops,
            "model_flops": flops,
            "bytes_accessed": nbytes,
            "memory_access_breakdown": b"\x0a\x02\x08\x01",
            "raw_bytes_accessed": nbytes,
            "shape_with_layout": shape + "{1,0:T(8,128)}",
        }
        if opcode == "convolution":
            stats.update(source="train.py:41", source_stack="train.py:41")
        if name == "ynn_fusion":
            stats["deduplicated_name"] = "ynn_fusion.1"
        p.event_id(text, display_name=name, stats=stats)
        out[name] = text
    return out


def _plane_stats(p) -> None:
    p.add_plane_stat("core_details", b"\x08\x01")
    p.add_plane_stat("device_type_string", "TPU v4")
    p.add_plane_stat("has_megacore", 1)
    p.add_plane_stat("has_merged_vmem", 1)
    p.add_plane_stat("peak_teraflops_per_second", PEAK_TFLOPS)
    p.add_plane_stat("peak_hbm_bw_gigabytes_per_second", PEAK_HBM_GBPS)
    for mem, bw in (("cmem", 0.0), ("sram", 3276.8), ("vmem", 13107.2)):
        p.add_plane_stat(f"peak_{mem}_rd_bw_gigabytes_per_second", bw)
        p.add_plane_stat(f"peak_{mem}_wr_bw_gigabytes_per_second", bw)


def _tpu_core(b: XSpaceBuilder, index: int, clock_shift_ps: int) -> None:
    p = b.plane(f"/device:TPU:{index}", index + 1)
    _plane_stats(p)
    modules = p.line("XLA Modules", 2, timestamp_ns=TS_NS)
    ops = p.line("XLA Ops", 3, timestamp_ns=TS_NS)
    asynchronous = p.line("Async XLA Ops", 4, timestamp_ns=TS_NS)
    traceme = p.line("XLA TraceMe", 6, timestamp_ns=TS_NS)
    p.line("Overlay", 7, timestamp_ns=TS_NS)
    steps = p.line("Steps", 8, timestamp_ns=TS_NS)
    t = _op_metadata(p, TRAIN, "jit_train_step", TRAIN_OPS)
    c = _op_metadata(p, CONVERT, "jit_convert_element_type", CONVERT_OPS)

    def module(name, program, off_ps, dur_ps, run_id):
        stats = {"run_id": np.uint64(run_id), "replica_id": 0, "queue_id": np.uint64(0)}
        stats.update({"core_type": np.uint64(0), "_ct": 1, "_c": run_id})
        modules.event(f"{name}({program})", off_ps, dur_ps, stats)

    def timed(line, name, off_ps, dur_ps, device_dur_ps=None, **extra):
        device = {
            "device_offset_ps": np.uint64(BASE_PS + off_ps + clock_shift_ps),
            "device_duration_ps": np.uint64(
                device_dur_ps if device_dur_ps is not None else dur_ps * 9 // 10
            ),
            **extra,
        }
        line.event(name, off_ps, dur_ps, device)

    # Three runs of the training program, one of the convert program between the first two.
    # Each run: (instruction, offset in the run, XEvent duration, device duration or None for
    # 90 % of it); in the first run a copy nests inside the convolution on the device clock.
    schedule = (
        ("conv_general_dilated.2", 0, 300_000, 280_000),
        ("wrapped_convert.2", 310_000, 40_000, None),
        ("ynn_fusion.1", 360_000, 120_000, None),
        ("reduce_multiply_fusion", 490_000, 30_000, None),
        ("ynn_fusion", 530_000, 110_000, None),
        ("dot_general.4", 650_000, 90_000, None),
        ("convolution", 750_000, 80_000, None),
        ("subtract_convert_fusion", 835_000, 20_000, None),
        ("subtract_convert_fusion.1", 856_000, 15_000, None),
        ("tuple.1", 875_000, 10_000, None),
    )
    for step, start in enumerate((0, 1_500_000, 2_600_000)):
        length = 1_000_000 if step == 0 else 900_000
        module("jit_train_step", TRAIN, start, length, 10 + step)
        steps.event(str(step), start, length)
        for name, off, dur, device_dur in schedule:
            timed(ops, t[name], start + off, dur, device_dur)
            if step == 0 and name == "conv_general_dilated.2":
                timed(ops, t["transpose_copy_fusion.1"], start + 50_000, 100_000, 100_000)
        async_stats = {"hlo_op": "ynn_fusion", "_a": 1, "flow": np.uint64(step), "id": step}
        asynchronous.event(t["ynn_fusion"], start + 530_000, 200_000, async_stats)
        traceme.event("dependency-wait", start + 890_000, 10_000)
    module("jit_convert_element_type", CONVERT, 1_150_000, 200_000, 20)
    timed(ops, c["wrapped_convert"], 1_160_000, 150_000)
    traceme.event("barrier-cores", 1_400_000, 20_000)


def _metadata_plane(b: XSpaceBuilder) -> None:
    """One event metadata per program: id = the program id as int64, stat 'Hlo Proto'."""
    p = b.plane("/host:metadata", 999)
    for program_id, module in ((TRAIN, "jit_train_step"), (CONVERT, "jit_convert_element_type")):
        mid = int(np.uint64(program_id).astype(np.int64))
        md = p.plane.event_metadata[mid]
        md.id, md.name = mid, f"{module}({program_id})"
        p.set_stat(md.stats.add(), "Hlo Proto", program(module))


def _host(b: XSpaceBuilder) -> None:
    p = b.plane("/host:CPU", 1000)
    main = p.line("main", 3116817, timestamp_ns=TS_NS)
    execute = p.line("py_xla_execute", 3118851, timestamp_ns=TS_NS)
    queue = p.line("tfrt-non-blocking-queue", 3117408, timestamp_ns=TS_NS)
    for step, start in enumerate((0, 1_500_000, 2_600_000)):
        main.event("train", start - 40_000 if start else 0, 1_050_000 - 100_000 * (step > 0),
                   {"step_num": step, "_r": 1})  # fmt: skip
        main.event("PjitFunction(train_step)", start + 1_000, 30_000)
        execute.event("TfrtTpuLoadedExecutable::Execute", start + 5_000, 20_000,
                      {"_pt": 1, "_p": step})  # fmt: skip
        queue.event("tpu::System::Execute=>IssueSequencedEvent", start + 10_000, 5_000,
                    {"_ct": 1, "_c": step, "run_id": 10 + step, "device_ordinal": 0})  # fmt: skip
    bfc = {"bytes_reserved": 0, "bytes_available": 1000, "fragmentation": 0.0}

    def memory(name, off_ps, allocator, nbytes, addr):
        stats = {**allocator, "bytes_allocated": nbytes, "peak_bytes_in_use": max(nbytes, 256)}
        stats.update(requested_bytes=256, allocation_bytes=256, addr=addr, **bfc)
        stats.update(id=addr, data_type=1)
        execute.event(name, off_ps, 0, stats)

    memory("MemoryAllocation", 10_000, {"index_on_host": 0}, 256, 1)
    memory("MemoryAllocation", 20_000, {"device_ordinal": 1}, 512, 2)
    memory("MemoryAllocation", 30_000, {"index_on_host": 2}, 64, 3)
    memory("MemoryDeallocation", 700_000, {"index_on_host": 0}, 0, 1)


def tpu_capture(hostname: str = "tpu-vm-7") -> XSpaceBuilder:
    """The synthetic TPU capture (two cores, clock shifts of 3 and 7 ns)."""
    b = XSpaceBuilder(hostname)
    _tpu_core(b, 0, clock_shift_ps=3_000)
    _tpu_core(b, 1, clock_shift_ps=7_000)
    _metadata_plane(b)
    _host(b)
    b.task_environment(TS_NS, TS_NS + 4_000)
    return b


# -- the programs -------------------------------------------------------------------------------
HLO_DIR = pathlib.Path(__file__).resolve().parents[1] / "data" / "tpu_hlo"


def train_step(w, v, x, y):
    """A bf16 conv + dense train step (made into tests/data/tpu_hlo by make_programs)."""
    import jax
    import jax.numpy as jnp
    from jax import lax

    def loss(w, v):
        dims = ("NHWC", "HWIO", "NHWC")
        h = lax.conv_general_dilated(x, w, (1, 1), "SAME", dimension_numbers=dims)
        out = jnp.dot(jax.nn.relu(h).reshape(x.shape[0], -1), v)
        return jnp.mean((out.astype(jnp.float32) - y) ** 2)

    value, (gw, gv) = jax.value_and_grad(loss, argnums=(0, 1))(w, v)
    return w - (0.1 * gw).astype(w.dtype), v - (0.1 * gv).astype(v.dtype), value


def convert_element_type(a):
    """An f32 -> bf16 convert (a second program)."""
    import jax.numpy as jnp

    return a.astype(jnp.bfloat16)


def make_programs() -> None:
    """Compile the two programs with JAX (on CPU: a real, scheduled HLO module with a program
    shape, which XProf needs to read a program) and write each as a serialized
    ``xla.HloProto`` to tests/data/tpu_hlo/<module>.pb."""
    import jax
    import jax.numpy as jnp

    bf = jnp.bfloat16
    train = (
        jnp.zeros((3, 3, 4, 8), bf),
        jnp.zeros((512, 10), bf),
        jnp.zeros((2, 8, 8, 4), bf),
        jnp.zeros((2, 10), jnp.float32),
    )
    programs = (
        (train_step, train),
        (convert_element_type, (jnp.zeros((8, 128), jnp.float32),)),
    )
    HLO_DIR.mkdir(parents=True, exist_ok=True)
    for fn, args in programs:
        module = jax.jit(fn).lower(*args).compile().runtime_executable().hlo_modules()[0]
        body = module.as_serialized_hlo_module_proto()
        wrapped = b"\x0a" + _varint(len(body)) + body  # HloProto.hlo_module (field 1)
        (HLO_DIR / f"{module.name}.pb").write_bytes(wrapped)


def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        byte, n = n & 0x7F, n >> 7
        out.append(byte | (0x80 if n else 0))
        if not n:
            return bytes(out)


if __name__ == "__main__":
    make_programs()
