"""XLA's rules (JAX, TF with ``jit_compile``, every TPU program): how its captures are told
apart and how their device ops are named.

* A run is XLA's when its events carry XLA's stats (``hlo_op``, ``hlo_module``,
  ``program_id``), when it has the ``/host:metadata`` plane XLA writes its programs to, TPU
  cores, or TPU op lines.
* Steps: XProf's rule (``jax.profiler.StepTraceAnnotation('train', step_num=s)`` writes a
  ``train`` event with ``step_num`` and ``_r=1``), the defaults of :class:`~..base.Framework`;
  on TPU, XProf's TPU step database from each core's ``Steps`` and ``XLA Ops`` lines and
  its TPU verdicts (:mod:`.tpu_steps`).
* Host events: host compute, as XProf types them, but XLA's compiles (JAX's
  ``backend_compile_and_load``, PjRt's ``...Client::Compile``, the compiler's passes):
  compile time (ours).
* Op names: XProf's ``ParseTfOpFullname`` knows JAX's lower-case op types too.
* Device ops: on TPU, the events of the op lines named by their metadata (:mod:`.tpu`); on
  GPU, a kernel's ``tf_op`` stat (``XlaModule:`` for JAX), as XProf does without the HLO
  protos. On CPU, XLA:CPU's thunks as host op rows (ours, beyond XProf: :mod:`.cpu`).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ...analysis.event_types import HOST_COMPILE, HOST_COMPUTE
from ..base import Advice, DeviceOps, Framework, RunNames, name_flags
from ..tensorflow.op_names import name_table
from ..tensorflow.rules import ops_of_tf_op_stat
from . import collectives, cpu, gpu, tpu, tpu_steps
from .tpu import tpu_plane_rows

_XLA_STATS = frozenset({"hlo_op", "hlo_module", "program_id", "hlo_category"})
_XLA_PLANES = ("/host:metadata", "/device:TPU:")
_TENSOR_CORE_OPS = frozenset({"conv_general_dilated", "dot_general"})
# How a JAX program marks its steps (what XProf's step rule then finds).
ADVICE = Advice(
    mark_steps=(
        "No step marker observed and hence the step time is unknown. Mark steps with "
        "jax.profiler.StepTraceAnnotation('train', step_num=step), or profile for longer "
        "than one step."
    )
)


# JAX's and PjRt's compile events (ours: XProf 2.24 types them host compute): JAX's
# 'backend_compile_and_load' on the calling thread, PjRt's '<Client>::Compile' and XLA's
# CPU/GPU compiler passes on the compiler thread pool.
_COMPILE_PREFIXES = ("backend_compile", "CpuCompiler::", "GpuCompiler::", "JitCompiler::")
_COMPILE_SUFFIXES = ("Client::Compile",)


def _is_compile(name: str) -> bool:
    return name.startswith(_COMPILE_PREFIXES) or name.endswith(_COMPILE_SUFFIXES)


class XLA(Framework):
    name = "xla"
    title = "XLA"
    vocabulary = ("XlaModule", "XLA Ops", "XLA Modules", "hlo_op", "hlo_module", "Hlo Proto")
    copy_op_types = {}
    advice = ADVICE

    def present(self, names: RunNames) -> bool:
        if names.stats & _XLA_STATS:
            return True
        if names.planes.str.startswith(_XLA_PLANES).any():
            return True
        return bool(names.lines.isin(tpu.TPU_OP_LINES + tpu.MODULE_LINES).any())

    def host_event_types(self, names: pd.Series, op_types: np.ndarray) -> np.ndarray:
        """Host events are host compute (XProf's rule), but XLA's compiles, which are
        compile time: a step that compiles the program (the first of a capture that did not
        warm up) shows its compile, and the overview can leave it out of its averages."""
        types = np.full(len(names), HOST_COMPUTE, np.int16)
        types[name_flags(names, _is_compile)] = HOST_COMPILE
        return types

    def parse_op_names(self, names: pd.Index, memo: dict | None = None) -> pd.DataFrame:
        return name_table(names, memo)

    def device_ops(self, run, rows: np.ndarray) -> DeviceOps:
        rows = np.asarray(rows, np.int64)
        found = DeviceOps(*gpu.device_ops(run, rows))
        rest = np.setdiff1d(rows, found.rows, assume_unique=True)
        by_stat = ops_of_tf_op_stat(run, rest, annotations=False)
        if not len(found):
            return by_stat
        parts = (found, by_stat)
        fields = ("rows", "op_name", "op_type", "beyond_xprof")
        merged = DeviceOps(*(np.concatenate([getattr(p, f) for p in parts]) for f in fields))
        order = np.argsort(merged.rows, kind="stable")
        return DeviceOps(*(getattr(merged, f)[order] for f in fields))

    def device_op_units(self, run, rows: np.ndarray):
        if not gpu.has_instructions(run):
            return None
        return gpu.device_op_units(run, np.asarray(rows, np.int64))

    def kernel_op_names(self, run, rows: np.ndarray):
        if not gpu.has_instructions(run):
            return None
        return gpu.kernel_op_names(run, np.asarray(rows, np.int64))

    def tensor_core_eligible(self, op_name: str) -> bool:
        # XProf 2.24 counts JAX's convolutions and dots as Tensor-Core eligible (seen in its
        # kernel stats of the H100 and MI300X JAX captures).
        return op_name.rsplit("/", 1)[-1] in _TENSOR_CORE_OPS

    def device_op_table(self, run) -> tuple[pd.DataFrame, pd.Series]:
        """The TPU cores' op rows and IDLE, and the host rows of XLA:CPU's thunks (ours,
        beyond XProf: :mod:`.cpu`), which add no IDLE."""
        rows, idle = tpu.tpu_op_rows(run)
        host = cpu.cpu_op_rows(run)
        if len(host):
            rows = pd.concat([rows, host], ignore_index=True) if len(rows) else host
        return rows, idle

    def duty_cycle(self, run) -> tuple[float, float]:
        return tpu.duty_cycle(run)

    def hlo_16bit_percent(self, run) -> float | None:
        return tpu.hlo_16bit_percent(run)

    def device_steps(self, run) -> pd.DataFrame | None:
        if not len(tpu_plane_rows(run)):  # no TPU core: no steps of its own (nor a frame)
            return None
        return tpu_steps.tpu_steps(run)

    def overview_verdicts(self, run) -> dict | None:
        return tpu_steps.tpu_verdicts(run, self.advice.no_input_pipeline_next_step)

    def collective_ops(self, run) -> pd.DataFrame | None:
        return collectives.collective_ops(run)

    def memory_data_type_names(self) -> dict[int, str]:
        """XLA's PrimitiveType (xla_data.proto), as HLO text prints it (``bf16``, ``f32``);
        0 (PRIMITIVE_TYPE_INVALID) is what PJRT's allocations carry when nobody annotated
        them, so "not recorded" rather than XProf's "INVALID"."""
        from ...proto import xla_hlo_pb2  # protobuf only where an XLA run has memory events

        enum = xla_hlo_pb2.DESCRIPTOR.enum_types_by_name["PrimitiveType"]
        return {v.number: v.name.lower() for v in enum.values} | {0: ""}
