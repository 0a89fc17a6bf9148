"""PyTorch's ops in the neutral op table (``run.ops``) and kernel stats (``run.kernels``).

* **Host**: an op is an event whose name is a dispatcher op (``namespace::op``: ``aten::``,
  ``c10d::``, ``autograd::engine::evaluate_function: ...``, custom ops), an autograd node
  (``AddmmBackward0``), an ``nn.Module: Name_N`` (``with_modules=True``) or the DataLoader
  handing out a batch. XProf's stack nests them per thread; self time is an op's duration
  less the ops directly inside it (runtime calls stay in the op's self time, as XProf counts
  host time). The op table tells host ops by name, so the few operators whose names follow
  none of these forms (``detach`` in torch 1.x, ``torch.compile``'s region markers) are no
  host rows: their time is their parent's self time.
* **Device**: each kernel, memcpy and memset belongs to the operator whose runtime call
  launched it: the call's ``correlation`` finds the call, the call's ``External id`` the
  innermost operator around it (torch-tb-profiler's operator tree, :func:`.ops.operator_tree`,
  merges included). So per operator name the device self time in ``run.ops`` is
  ``run.torch_ops``' ``device_self_us``, and a kernel whose launch no operator made (a
  ``ProfilerStep``'s or an annotation's own calls, External id 0) belongs to no op: it is
  device IDLE, as XProf leaves an unannotated kernel.
* The op type is the op's namespace (``aten``, ``c10d``, ``autograd``, ``nn.Module``,
  ``DataLoader``; ``cpu_op`` for an operator of no namespace).
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd

from ..base import UNKNOWN_OP, DeviceOps, name_texts
from . import names as torch_names
from .ops import _kinds, launches, operator_tree

CATEGORY = "pytorch"
_NAMESPACE = re.compile(r"^([A-Za-z_][\w.]*)::")
_AUTOGRAD_NODE = re.compile(r"^[A-Za-z_]\w*Backward\d*$")
MODULE_PREFIX = "nn.Module: "


def parse_op_names(names: pd.Index) -> pd.DataFrame:
    """Per name: category ('pytorch' or 'unknown'), op_name (the name) and op_type (see
    the module docstring)."""
    text = name_texts(names)
    op_type = [_op_type(t) for t in text]
    known = [t is not None for t in op_type]
    return pd.DataFrame(
        {
            "category": np.array([CATEGORY if k else UNKNOWN_OP for k in known], dtype=object),
            "op_name": np.array(text, dtype=object),
            "op_type": np.array([t if t is not None else n for t, n in zip(op_type, text)], object),
        }
    )


def _op_type(name: str) -> str | None:
    """The op type of one name (None: no PyTorch op); the later rules win."""
    if torch_names.is_dataloader_name(name):
        return "DataLoader"
    if name.startswith(MODULE_PREFIX):
        return "nn.Module"
    if _AUTOGRAD_NODE.match(name):
        return "autograd"
    m = _NAMESPACE.search(name)
    return m.group(1) if m else None


def launching_operators(run) -> tuple[np.ndarray, np.ndarray]:
    """GPU activity rows (kernels, copies, memsets) and the ``run.events`` row of the
    operator that launched each (-1 where no operator did)."""
    gpu, call = launches(run)
    tree = operator_tree(run)
    operator = _kinds(run)[2]
    node_row = tree.nodes[tree.call_node]
    owner = pd.Series(np.where(operator[node_row], node_row, -1), index=tree.calls)
    found = owner.reindex(call).to_numpy()
    return gpu, np.where(np.isnan(found), -1, found).astype(np.int64)


def device_ops(run, rows: np.ndarray) -> DeviceOps:
    """Of the device events ``rows``, those an operator launched, with its name and type."""
    gpu, op_row = launching_operators(run)
    keep = (op_row >= 0) & np.isin(gpu, rows)
    gpu, op_row = gpu[keep], op_row[keep]
    if not len(gpu):
        return DeviceOps.none()
    order = np.argsort(gpu, kind="stable")
    gpu, op_row = gpu[order], op_row[order]
    name = run.events["name"].array
    codes = np.asarray(name.codes, np.int64)[op_row]
    used, at = np.unique(codes, return_inverse=True)
    parsed = parse_op_names(pd.Index(np.asarray(name.categories, object)[used], dtype=object))
    op_type = np.where(
        parsed["category"].to_numpy() == CATEGORY, parsed["op_type"].to_numpy(), "cpu_op"
    ).astype(object)
    return DeviceOps(
        gpu,
        parsed["op_name"].to_numpy()[at],
        op_type[at],
        np.zeros(len(gpu), bool),
    )


def kernel_op_names(run, rows: np.ndarray) -> np.ndarray:
    """Per kernel row: the operator that launched it (None where none did)."""
    found = device_ops(run, np.asarray(rows, np.int64))
    out = np.full(len(rows), None, object)
    pos = pd.Index(found.rows).get_indexer(rows)
    out[pos >= 0] = found.op_name[pos[pos >= 0]]
    return out
