"""XProf's HLO Stats tool (``run.hlo_stats``): one row per HLO instruction that ran on a GPU
or a TPU core, with its time and the framework op and source line it came from.

On GPUs the instructions and their events are :func:`.gpu.kernel_instructions`' (XProf's
rule: a device event whose ``(program_id, hlo_op)`` names an instruction); on TPUs the ops
of the cores' op lines (:func:`.tpu.tpu_device_ops`, self time net of the ops nested in
them), with the category and framework op their metadata gives. Rows are per (host,
program, instruction), ordered by self time, descending (ties by name); shares are of the
device time (the GPUs' spans, IDLE included, as the op table's device side totals it). The
``tf_op_name`` is XProf's ``TfOpFullname``: ``<op_name>:<op_type>``, '' where the
instruction has no op name. Kernels we attribute inside CUDA graphs make their rows
``beyond_xprof``. The FLOP rates, bandwidths, operational intensity and 'bound by' are the
roofline's (:func:`.roofline.rate_columns`: XLA's GPU cost analysis as XProf runs it; on TPU
the costs libtpu writes on each op's metadata). Program ids are shown unsigned (uint64), as
XProf prints them; a TPU row's module is its program's, from the HLO on /host:metadata.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ... import schema
from ...analysis.nesting import to_ps
from .columns import ranks, text_at
from .gpu import kernel_instructions, positions, ran_instructions
from .roofline import rate_columns
from .tpu import tpu_device_ops


def hlo_stats(run) -> pd.DataFrame:
    """One row per HLO instruction run on a GPU or TPU core: schema.HLO_STATS."""
    parts = [p for p in (_gpu_rows(run), _tpu_rows(run)) if len(p)]
    if not parts:
        return schema.empty(schema.HLO_STATS)
    out = pd.concat(parts, ignore_index=True) if len(parts) > 1 else parts[0]
    # By host, then self time descending, then name (a stable sort: ties keep their order).
    host_rank, hosts = ranks(out["host"])
    name_rank, _ = ranks(out["hlo_op_name"])
    self_us = out["total_self_time_us"].to_numpy(float)
    order = np.lexsort((name_rank, -self_us, host_rank))
    self_us, host_rank = self_us[order], host_rank[order]
    device = _device_time_us(run)
    share = np.array([device.get(h, np.nan) for h in hosts], float)[host_rank]
    with np.errstate(divide="ignore", invalid="ignore"):
        pct = np.where(share > 0, 100 * self_us / share, 0.0)
    # pandas' running sum per host (compensated: not numpy's cumsum, bit for bit).
    cum = pd.Series(pct).groupby(host_rank).cumsum().to_numpy()
    cols = {c: out[c].array.take(order) for c in out.columns}
    cols.update(self_time_percent=pct, cumulative_self_time_percent=cum)
    # XProf's FLOP rates, bandwidths and bottleneck per op, from the columns they read; then
    # one frame in the schema's order (not a frame per step).
    read = ("host", "hlo_op_name", "program_id", "occurrences", "total_time_us")
    cols.update(rate_columns(run, {c: pd.Series(cols[c]) for c in read}))
    return schema.conform(pd.DataFrame({c: cols[c] for c in schema.HLO_STATS}), schema.HLO_STATS)


def _tpu_rows(run) -> pd.DataFrame:
    """TPU cores' HLO ops (:func:`.tpu.tpu_device_ops`) per (host, program, op name), merged
    across cores: category and framework op from the op's metadata."""
    ops = tpu_device_ops(run)
    if not len(ops):
        return pd.DataFrame()
    g = (
        ops.groupby(["host", "program_id", "op_name"], sort=False)
        .agg(
            category=("hlo_category", "first"),
            tf_op_name=("tf_op", "first"),
            occurrences=("dur_ps", "size"),
            total=("dur_ps", "sum"),
            self_=("self_ps", "sum"),
        )
        .reset_index()
    )
    occ = g["occurrences"].to_numpy(np.int64)
    total_us, self_us = g["total"].to_numpy() / 1e6, g["self_"].to_numpy() / 1e6
    # The module of each program, from its HLO on /host:metadata ('' without one).
    h = run.hlo_instructions
    first = h.drop_duplicates(["host", "program_id"])
    modules = dict(zip(zip(first["host"].astype(str), first["program_id"]), first["module"]))
    module = [str(modules.get((str(a), int(b)), "")) for a, b in zip(g["host"], g["program_id"])]
    return pd.DataFrame(
        {
            "host": g["host"].astype(str),
            "program_id": g["program_id"].to_numpy(np.int64).astype(np.uint64),
            "module": module,
            "category": g["category"].astype(str),
            "hlo_op_name": g["op_name"].astype(str),
            "tf_op_name": g["tf_op_name"].astype(str),
            "occurrences": occ,
            "total_time_us": total_us,
            "avg_time_us": total_us / occ,
            "total_self_time_us": self_us,
            "avg_self_time_us": self_us / occ,
            "source_info": "",
            "shape": "",
            "beyond_xprof": False,
        }
    )


def _gpu_rows(run) -> pd.DataFrame:
    """GPU kernels' instructions (:func:`.gpu.kernel_instructions`) per instruction, in the
    order their first kernel comes."""
    k = kernel_instructions(run)
    if not len(k):
        return pd.DataFrame()
    h = ran_instructions(run)  # the instructions' rows of their programs' table
    dur = to_ps(run.events["dur_us"].to_numpy()[k["row"].to_numpy()])
    codes, labels = pd.factorize(k["instruction"].to_numpy())
    at = positions(h, labels)
    occ = np.bincount(codes, minlength=len(at)).astype(np.int64)
    total = np.zeros(len(at), np.int64)
    np.add.at(total, codes, dur)  # exact picoseconds, as the events' own sum
    beyond = np.bincount(codes, weights=k["beyond_xprof"].to_numpy(float), minlength=len(at)) > 0
    total_us = total / 1e6
    op_name = text_at(h["op_name"], at)
    source = text_at(h["source_file"], at)
    line = h["source_line"].to_numpy()[at].astype(str).astype(object)
    return pd.DataFrame(
        {
            "host": schema.text_categorical(text_at(h["host"], at)),
            # Unsigned, as XProf prints program ids (the same bits).
            "program_id": h["program_id"].to_numpy(np.int64)[at].astype(np.uint64),
            "module": schema.text_categorical(text_at(h["module"], at)),
            "category": schema.text_categorical(text_at(h["category"], at)),
            "hlo_op_name": schema.text_categorical(text_at(h["instruction"], at)),
            "tf_op_name": schema.text_categorical(np.where(op_name != "", op_name + ":", "")),
            "occurrences": occ,
            "total_time_us": total_us,
            "avg_time_us": total_us / occ,
            "total_self_time_us": total_us,
            "avg_self_time_us": total_us / occ,
            "source_info": schema.text_categorical(np.where(source != "", source + ":" + line, "")),
            "shape": text_at(h["shape"], at),
            "beyond_xprof": beyond,
        }
    )


def _device_time_us(run) -> dict[str, float]:
    """Per host: the device side's total time of the op table (ops and IDLE), µs."""
    ops = run.ops
    # The one column summed per host (a categorical, schema.OP_STATS), not the filtered
    # table: pandas' grouped sum of the same values in the same order.
    host = ops["host"].array
    codes = np.asarray(host.codes, np.int64)
    dev = (ops["host_or_device"] == "Device").to_numpy() & (codes >= 0)
    self_us = pd.Series(ops["total_self_time_us"].to_numpy()[dev])
    total = self_us.groupby(codes[dev]).sum()
    names = host.categories
    return {str(names[c]): float(v) for c, v in total.items()}


__all__ = ["hlo_stats"]
