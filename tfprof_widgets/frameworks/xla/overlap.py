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

from ... import schema
from ...analysis.collective_kinds import host_ranks
from ...analysis.collectives import collective_rows
from ...analysis.event_index import event_plane_rows, times_ps
from ...analysis.gpu_time import kernel_kinds, stream_activity
from ...analysis.nesting import interval_union
from .collectives import tpu_ops
from .tpu import tpu_plane_rows

__all__ = ["comm_comp_overlap"]


def _covered(start: np.ndarray, end: np.ndarray) -> int:
    s, e = interval_union(start, end)
    return int((e - s).sum())


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
    start, end = times_ps(run)
    out = []
    for h in np.unique(np.r_[host[comm_all], host[comp_all]]):
        comm, comp = comm_all[host[comm_all] == h], comp_all[host[comp_all] == h]
        both = np.r_[comp, comm]
        a, b = _covered(start[comp], end[comp]), _covered(start[comm], end[comm])
        out.append((hosts[h], b / 1e6, (a + b - _covered(start[both], end[both])) / 1e6))
    df = pd.DataFrame(out, columns=["host", "communication_us", "overlap_us"])
    df["rank"] = host_ranks(run, df["host"].to_numpy())
    with np.errstate(invalid="ignore", divide="ignore"):
        df["comp_comm_overlap_percent"] = 100 * df["overlap_us"] / df["communication_us"]
    df["host"] = pd.Categorical(df["host"])
    return schema.conform(df, schema.COMM_COMP_OVERLAP)
