"""Communication/computation overlap of an XLA capture (``run.comm_comp_overlap``), by
HTA's definition (``get_comm_comp_overlap``) on the device lines: per host, the time some
collective and some computation both run, over the time some collective runs.

Communication is every collective on a device (:func:`~...analysis.collectives.collective_rows`:
the collective kernels by name, and XLA's collective instructions on GPU and TPU,
:mod:`.collectives`); computation every other device op: on GPU the stream activity HTA
kinds COMPUTATION by name (not copies, memsets or syncs), on TPU the cores' other HLO ops.
A host with no collective has NaN.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ...analysis.collectives import collective_rows, overlap_table
from ...analysis.event_index import event_plane_rows
from ...analysis.gpu_time import kernel_kinds, stream_activity
from .collectives import tpu_ops
from .tpu import tpu_plane_rows

__all__ = ["comm_comp_overlap"]


def _computation_rows(run) -> np.ndarray:
    """Device computation: GPU stream activity HTA kinds COMPUTATION by name, and the TPU
    cores' ops (a core's other lines, its steps and modules, are spans, not work)."""
    rows = stream_activity(run)
    rows = rows[~np.isin(event_plane_rows(run)[rows], tpu_plane_rows(run))]
    names = run.events["name"]
    kinds = kernel_kinds(pd.Series(names.cat.categories))
    rows = rows[kinds[names.cat.codes.to_numpy()[rows]] == 0]
    tpu = tpu_ops(run)["row"].to_numpy(np.int64)
    return np.union1d(rows, tpu)


def comm_comp_overlap(run) -> pd.DataFrame:
    """Per host, the share of collective time during which computation runs too
    (schema.COMM_COMP_OVERLAP), HTA's definition on an XLA capture's device lines (module
    docstring)."""
    comm_all = collective_rows(run)["row"].to_numpy(np.int64)
    comp_all = np.setdiff1d(_computation_rows(run), comm_all)
    names = run.events["host"]
    host, hosts = names.cat.codes.to_numpy(), names.cat.categories.astype(str).to_numpy()
    return overlap_table(run, host, hosts, comp_all, comm_all)
