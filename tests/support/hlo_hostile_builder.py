"""Synthetic JAX-on-GPU captures around one XLA program, for hostile programs (issue 37).

The layout is the H100 JAX capture's (tests/data/xplane_h100_jax, as
tests/xla/test_xla_command_buffers.py builds it): ``/host:metadata`` holds the program
(``Hlo Proto``, ``program_id``); each GPU kernel carries ``hlo_op`` (its instruction),
``hlo_module``, ``program_id`` and ``correlation_id``, launched from the host. The program is
built by :func:`good_program` (``n`` loop fusions of an f32 add, each with an op name) and
made hostile by the caller (one bad instruction added, a shape damaged, ...).
"""

from __future__ import annotations

import pathlib

from xspace_builder import US, XSpaceBuilder

from tfprof_widgets.proto import xla_hlo_pb2

PROGRAM = 7
MODULE = "jit_f"
ENTRY_ID = 2
FUSED_ID = 1
# Instructions get ids from here up (ids of the fused computation's are 100..).
FIRST_ID = 1000
# The H100's device stats, as the JAX H100 capture's GPU plane carries them.
H100 = {
    "clock_rate": 1_980_000,
    "core_count": 132,
    "memory_bandwidth": 3_352_320_000_000,
    "compute_cap_major": 9,
    "compute_cap_minor": 0,
}


class Program:
    """An ``xla.HloProto`` under construction: the entry computation and id counters."""

    def __init__(self, proto: xla_hlo_pb2.HloProto) -> None:
        self.proto = proto
        self.module = proto.hlo_module
        self.entry = next(c for c in self.module.computations if c.id == ENTRY_ID)
        self._next = FIRST_ID + 10_000

    def new_id(self) -> int:
        self._next += 1
        return self._next

    def computation(self, name: str, fusion: bool = True) -> xla_hlo_pb2.HloComputationProto:
        cid = self.new_id()
        return self.module.computations.add(name=name, id=cid, is_fusion_computation=fusion)

    def add(
        self,
        comp,
        name: str,
        opcode: str,
        dims=(1024,),
        operands=(),
        called=(),
        element_type=xla_hlo_pb2.F32,
        op_name: str = "",
    ) -> xla_hlo_pb2.HloInstructionProto:
        ins = comp.instructions.add(name=name, opcode=opcode, id=self.new_id())
        ins.shape.element_type = element_type
        ins.shape.dimensions.extend(dims)
        ins.operand_ids.extend(operands)
        ins.called_computation_ids.extend(called)
        ins.metadata.op_name = op_name
        comp.root_id = ins.id
        return ins

    def ran(self) -> list[str]:
        """Names of the entry's instructions a kernel runs (all but parameters)."""
        return [i.name for i in self.entry.instructions if i.opcode != "parameter"]

    def bytes(self) -> bytes:
        return self.proto.SerializeToString()


def good_program(n: int = 40) -> Program:
    """A program of ``n`` loop fusions ``fusion.k`` (an f32[1024] add of the parameter with
    itself, 3 FLOPs per element: 3,072 FLOPs each), op names ``jit(f)/add_k``."""
    proto = xla_hlo_pb2.HloProto()
    m = proto.hlo_module
    m.name, m.entry_computation_name, m.id = MODULE, "main.1", PROGRAM
    fused = m.computations.add(name="fused_add", id=FUSED_ID, is_fusion_computation=True)
    p = fused.instructions.add(name="param_0", opcode="parameter", id=100)
    p.shape.element_type = xla_hlo_pb2.F32
    p.shape.dimensions.append(1024)
    add = fused.instructions.add(name="add.1", opcode="add", id=101)
    add.shape.CopyFrom(p.shape)
    add.operand_ids.extend([100, 100])
    fused.root_id = 101
    entry = m.computations.add(name="main.1", id=ENTRY_ID)
    prog = Program(proto)
    param = prog.add(entry, "p0", "parameter")
    param.id = FIRST_ID
    for k in range(n):
        ins = prog.add(
            entry, f"fusion.{k}", "fusion", operands=[FIRST_ID], called=[FUSED_ID],
            op_name=f"jit(f)/add_{k}",
        )  # fmt: skip
        ins.fusion_kind = "kLoop"
    return prog


def capture(path, program: Program | bytes, ran: list[str] | None = None, steps: int = 2):
    """Write a capture of ``program`` run ``steps`` times (one kernel per instruction of
    ``ran``, default :meth:`Program.ran`) to ``path``."""
    data = program if isinstance(program, bytes) else program.bytes()
    names = ran if ran is not None else program.ran()
    b = XSpaceBuilder("vm")
    md = b.plane("/host:metadata", 1)
    md.event_id(f"{MODULE}({PROGRAM})", stats={"Hlo Proto": data, "program_id": PROGRAM})
    host = b.plane("/host:CPU", 2).line("python3", 1)
    plane = b.plane("/device:GPU:0", 3)
    for stat, value in H100.items():
        plane.add_plane_stat(stat, value)
    gpu = plane.line("Stream #14(Compute)", 14)
    details = "regs:32 static_shared:0 dynamic_shared:0 grid:8,1,1 block:128,1,1 occ_pct:50.0"
    span = (len(names) + 2) * 10 * US
    for s in range(steps):
        t0 = s * span
        host.event("train", t0, span - US, {"step_num": s, "_r": 1})
        for k, name in enumerate(names):
            corr = s * 100_000 + k
            host.event("cuLaunchKernel", t0 + (5 + 10 * k) * US, 2 * US, {"correlation_id": corr})
            # Text stats by reference, as XLA writes them (one copy per name).
            stats = {
                "correlation_id": corr,
                "hlo_op": ("ref", name),
                "hlo_module": ("ref", MODULE),
                "program_id": PROGRAM,
                "kernel_details": ("ref", details),
            }
            gpu.event(f"loop_{k}_kernel", t0 + (10 + 10 * k) * US, 8 * US, stats)
    path = pathlib.Path(path)
    return b.write(path)


__all__ = ["PROGRAM", "Program", "capture", "good_program"]
