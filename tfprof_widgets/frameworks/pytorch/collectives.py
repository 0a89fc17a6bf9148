"""PyTorch's record of its collectives, for the collectives table (``run.collectives``): what
each NCCL/RCCL kernel of a Kineto trace runs, on which process group, over how many bytes.

Two records, the kernel's own first:

* Recent PyTorch (2.1+) writes the communication arguments on the collective's kernel:
  ``Collective name`` ('allreduce', 'all_to_allv'), ``In msg nelems`` (elements of the
  input), ``dtype`` ('Float', 'BFloat16'), ``Group size``, and ``Process Group Name`` /
  ``Process Group Desc``.
* Older traces have them only on the op that launched it: the innermost ``nccl:<op>`` (or
  ``gloo:``) annotation around the kernel's launch call on its thread ('nccl:all_reduce',
  'nccl:_all_gather_base'), with the op's ``Input Dims`` and ``Input type`` (the first
  tensor's elements and type give the bytes). No group is recorded there.

The bytes are the first tensor's (nccl-tests' size for an all-reduce, all-to-all,
broadcast; for an all-gather the op's output when PyTorch lists it first, as
``_all_gather_base`` does).
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd

from ... import stat_columns
from ...analysis.collective_kinds import collective_kernel_flags, collective_kind
from ...analysis.event_index import (
    event_line_ids,
    innermost_around,
    is_derived_line,
    on_device,
    timed,
)

__all__ = ["collective_ops"]

# The annotations of the ops that launch collectives ('nccl:all_reduce', 'gloo:broadcast').
_PREFIXES = ("nccl:", "gloo:")

# Bytes of an element by the type names PyTorch writes (``Input type``, the ``dtype`` arg).
_ELEMENT_BYTES = {
    "float": 4, "float32": 4, "double": 8, "float64": 8, "half": 2, "c10::half": 2,
    "float16": 2, "bfloat16": 2, "c10::bfloat16": 2, "long": 8, "int64": 8, "int": 4,
    "int32": 4, "short": 2, "int16": 2, "signed char": 1, "unsigned char": 1, "char": 1,
    "int8": 1, "uint8": 1, "byte": 1, "bool": 1, "complexfloat": 8, "complexdouble": 16,
    "c10::complex<float>": 8, "c10::complex<double>": 16,
}  # fmt: skip


def _element_bytes(name: object) -> float:
    return float(_ELEMENT_BYTES.get(str(name).strip().lower(), np.nan)) if name else np.nan


def _first(text: object) -> object:
    """The first item of a JSON list stat ('[[4, 8], []]' -> [4, 8]; '["float"]' ->
    'float'); None where the text is no such list."""
    try:
        value = json.loads(text) if isinstance(text, str) else None
    except ValueError:
        return None
    return value[0] if isinstance(value, list) and value else None


def _annotations(run, calls: np.ndarray) -> np.ndarray:
    """Per launch call row: the row of the innermost collective annotation of its thread
    around it ('nccl:all_reduce'), -1 where none."""
    ev = run.events
    cats = pd.Series(ev["name"].cat.categories.astype(str))
    is_coll = cats.str.startswith(_PREFIXES).to_numpy()[ev["name"].cat.codes.to_numpy()]
    return innermost_around(run, is_coll, calls)


def _kernel_args(run, rows: np.ndarray) -> dict[str, np.ndarray]:
    """The communication args of the kernels ``rows`` (None where absent)."""
    n = len(run.events)
    names = ("Collective name", "dtype", "Process Group Name", "Process Group Desc")
    out = {k: stat_columns.strings(run.stat_store, k, n)[0][rows] for k in names}
    for k in ("In msg nelems", "Group size"):
        v, has = stat_columns.numbers(run.stat_store, k, n)
        out[k] = np.where(has[rows], v[rows].astype(np.float64), np.nan)
    return out


def _kernels_and_calls(run) -> tuple[np.ndarray, np.ndarray]:
    """The collective kernels on the devices' streams, and the host call with each one's
    correlation id (-1 where none)."""
    names = run.events["name"]
    flags = collective_kernel_flags(names.cat.categories)
    own = on_device(run) & timed(run) & ~is_derived_line(event_line_ids(run))
    gpu = np.flatnonzero(own & flags[names.cat.codes.to_numpy()]) if len(flags) else []
    gpu = np.asarray(gpu, np.int64)
    if not len(gpu):
        return gpu, gpu
    n = len(run.events)
    corr, has = stat_columns.numbers(run.stat_store, "correlation", n)
    host = run.events["host"].cat.codes.to_numpy()
    calls = np.flatnonzero(has & ~on_device(run))
    owner = pd.DataFrame({"h": host[calls], "c": corr[calls], "call": calls})
    owner = owner.drop_duplicates(["h", "c"], keep="last")
    mine = pd.DataFrame({"h": host[gpu], "c": np.where(has[gpu], corr[gpu], -1)})
    found = mine.merge(owner, on=["h", "c"], how="left", sort=False)["call"]
    return gpu, found.fillna(-1).to_numpy(np.int64)


def _per_distinct(values: np.ndarray, fn) -> np.ndarray:
    """``fn`` of each value (object array), computed once per distinct value."""
    codes, uniq = pd.factorize(pd.Series(values, dtype=object), use_na_sentinel=False)
    return np.array([fn(u) for u in uniq.tolist()], object)[codes] if len(values) else values


def _op_bytes(pair: tuple) -> float:
    """Bytes of an op's first input from its (``Input Dims``, ``Input type``) texts."""
    shape = _first(pair[0])
    if not isinstance(shape, list) or not all(isinstance(d, int) for d in shape):
        return np.nan
    return float(np.prod(shape, dtype=np.float64)) * _element_bytes(_first(pair[1]))


def collective_ops(run) -> pd.DataFrame | None:
    """The ``collective_ops`` hook (:meth:`~..base.Framework.collective_ops`) of a PyTorch
    capture: its collective kernels with their op, group and bytes (module docstring)."""
    gpu, call = _kernels_and_calls(run)
    if not len(gpu):
        return None
    names = run.events["name"]
    text = np.asarray(names.cat.categories.astype(str), object)
    codes = names.cat.codes.to_numpy()
    op = np.full(len(gpu), -1, np.int64)
    op[call >= 0] = _annotations(run, call[call >= 0])
    has_op = op >= 0
    n = len(run.events)
    dims, _ = stat_columns.strings(run.stat_store, "Input Dims", n)
    types, _ = stat_columns.strings(run.stat_store, "Input type", n)
    args = _kernel_args(run, gpu)
    kernel = text[codes[gpu]]
    op_name = np.where(has_op, text[codes[np.maximum(op, 0)]], "")
    said = np.where(pd.isna(args["Collective name"]), op_name, args["Collective name"])
    said = np.where(said == "", kernel, said)
    size = args["In msg nelems"] * _per_distinct(args["dtype"], _element_bytes).astype(float)
    pairs = np.empty(len(gpu), object)
    pairs[:] = list(zip(dims[op].tolist(), types[op].tolist()))
    from_op = np.isnan(size) & has_op  # the launching op's first tensor
    size[from_op] = _per_distinct(pairs[from_op], _op_bytes).astype(float)
    group = pd.Series(args["Process Group Name"], dtype=object).fillna("")
    desc = pd.Series(args["Process Group Desc"], dtype=object)
    group = group.where(desc.isna(), group + " (" + desc.fillna("") + ")")
    return pd.DataFrame(
        {
            "row": gpu,
            "collective": _per_distinct(said, collective_kind),
            "name": kernel,
            "communicator": group.to_numpy(object),
            "group_size": args["Group size"],
            "size_bytes": size,
        }
    )
