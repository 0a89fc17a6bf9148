"""XLA's rules (JAX, TF with ``jit_compile``, every TPU program): how its captures are told
apart and how their device ops are named.

* A run is XLA's when its events carry XLA's stats (``hlo_op``, ``hlo_module``,
  ``program_id``), when it has the ``/host:metadata`` plane XLA writes its programs to, TPU
  cores, or TPU op lines.
* Steps: XProf's rule (``jax.profiler.StepTraceAnnotation('train', step_num=s)`` writes a
  ``train`` event with ``step_num`` and ``_r=1``), the defaults of :class:`~..base.Framework`.
* Op names: XProf's ``ParseTfOpFullname`` knows JAX's lower-case op types too.
* Device ops: on TPU, the events of the op lines named by their metadata (:mod:`.tpu`); on
  GPU, a kernel's ``tf_op`` stat (``XlaModule:`` for JAX), as XProf does without the HLO
  protos.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..base import DeviceOps, Framework, RunNames
from ..tensorflow.op_names import name_table
from ..tensorflow.rules import ops_of_tf_op_stat
from . import tpu

_XLA_STATS = frozenset({"hlo_op", "hlo_module", "program_id", "hlo_category"})
_XLA_PLANES = ("/host:metadata", "/device:TPU:")


class XLA(Framework):
    name = "xla"
    title = "XLA"
    vocabulary = ("XlaModule", "XLA Ops", "XLA Modules", "hlo_op", "hlo_module", "Hlo Proto")
    copy_op_types = {}
    device_op_lines = tpu.TPU_OP_LINES

    def present(self, names: RunNames) -> bool:
        if names.stats & _XLA_STATS:
            return True
        if names.planes.str.startswith(_XLA_PLANES).any():
            return True
        return bool(names.lines.isin(tpu.TPU_OP_LINES + tpu.MODULE_LINES).any())

    def parse_op_names(self, names: pd.Index, memo: dict | None = None) -> pd.DataFrame:
        return name_table(names, memo)

    def device_ops(self, run, rows: np.ndarray) -> DeviceOps:
        return ops_of_tf_op_stat(run, rows, annotations=False)

    def device_op_table(self, run) -> tuple[pd.DataFrame, pd.Series]:
        return tpu.tpu_op_rows(run)

    def duty_cycle(self, run) -> tuple[float, float]:
        return tpu.duty_cycle(run)
