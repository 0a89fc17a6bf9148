"""What an event name says about the op it traces.

TensorFlow names op events ``op_name:OpType`` (``dense/MatMul:MatMul``); tf.data iterators
``Iterator::Root::Prefetch::Map``; GPU copies ``MemcpyHToD`` .... The rules are the ones
XProf applies (``ParseTfOpFullname`` in TSL's tf_op_utils), so that our op tables group
events the way TensorBoard's do. Everything is computed once per distinct name (the
categories of ``events['name']``), never per event.
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd

from ...analysis.memo import per_run, shared

try:
    from . import _tf_ops
except ImportError:  # pragma: no cover - built where a C compiler was available
    _tf_ops = None

TF_OP_NAME = re.compile(r"[A-Za-z0-9.][A-Za-z0-9_./>-]*")
TF_OP_TYPE = re.compile(r"[A-Z_][a-zA-Z0-9_]*")
JAX_OP_TYPE = re.compile(r"[a-z_][a-z0-9_]*(\[.*\])?")
_MEMCPY = (
    ("memcpyhtod", "MemcpyHToD"),
    ("memcpydtoh", "MemcpyDToH"),
    ("memcpydtod", "MemcpyDToD"),
    ("memcpyhtoh", "MemcpyHToH"),
)
# Categories, as XProf names them.
UNKNOWN, TENSORFLOW, TF_DATA, JAX, MEMCPY = "unknown", "tensorflow", "tf_data", "jax", "memcpy"


def _derive_op_type(full_name: str) -> str:
    op = full_name.split("/")[-1]
    head, _, suffix = op.rpartition("_")
    return head if head and suffix.lstrip("-").isdigit() else op


# The common case of TF_OP_NAME ':' TF_OP_TYPE in one match.
_TF_FULL = re.compile(r"([A-Za-z0-9.][A-Za-z0-9_./>-]*):([A-Z_][a-zA-Z0-9_]*)")


def parse_tf_op(full_name: str) -> tuple[str, str, str]:
    """(category, op_name, op_type) of one event name, by XProf's rules."""
    m = _TF_FULL.fullmatch(full_name)
    if m is not None and m.group(1) != "Iterator":
        return TENSORFLOW, m.group(1), m.group(2)
    if ":" not in full_name:
        low = full_name.lower()
        for prefix, op_type in _MEMCPY:
            if low.startswith(prefix):
                return MEMCPY, full_name, op_type
        return UNKNOWN, full_name, ""
    name, op_type = full_name.split(":", 1)
    if name == "Iterator":
        return TF_DATA, full_name, "Dataset"
    if TF_OP_NAME.fullmatch(name) and TF_OP_TYPE.fullmatch(op_type):
        return TENSORFLOW, name, op_type
    derived = op_type or _derive_op_type(name)
    if JAX_OP_TYPE.fullmatch(derived):
        return JAX, name, derived.split("[", 1)[0]
    if not op_type:
        return TENSORFLOW, name, derived
    return UNKNOWN, full_name, ""


def name_table(
    names: pd.Categorical | pd.Series | pd.Index, memo: dict | None = None
) -> pd.DataFrame:
    """One row per category of an event-name column (or per value of an Index): category,
    op_name, op_type. ``memo`` (name -> parse) saves parsing a name twice.

    Index the result with the name codes to get per-event values without per-event work.
    """
    if isinstance(names, pd.Series):
        cats = names.cat.categories
    elif isinstance(names, pd.Categorical):
        cats = names.categories
    else:
        cats = names
    values = cats.tolist()
    if _tf_ops is not None:
        columns = _parse_in_c(values)
    else:
        columns = _parse_in_python(values, {} if memo is None else memo)
    # Object columns: pandas would turn the strings into its string dtype, and the analyses
    # back into object arrays. One 2-D object block: a frame of three object Series costs
    # several times more to make (pandas checks each column), the same frame.
    block = np.column_stack(columns) if len(values) else np.empty((0, 3), object)
    return pd.DataFrame(block, columns=_NAME_COLUMNS, dtype=object)


_NAME_COLUMNS = pd.Index(["category", "op_name", "op_type"])


_CATEGORIES = np.array([UNKNOWN, TENSORFLOW, TF_DATA, JAX, MEMCPY], dtype=object)


def _parse_in_c(values: list) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """parse_tf_op of every value by the compiled parser; Python parses what it leaves
    (names that are not ASCII)."""
    codes, names, types = _tf_ops.parse(values)
    codes = np.frombuffer(codes, np.int8)
    category = _CATEGORIES[np.maximum(codes, 0)]
    op_name = np.empty(len(values), object)
    op_name[:] = names
    op_type = np.empty(len(values), object)
    op_type[:] = types
    for i in np.flatnonzero(codes < 0).tolist():
        category[i], op_name[i], op_type[i] = parse_tf_op(str(values[i]))
    return category, op_name, op_type


def _parse_in_python(values: list, memo: dict) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    get = memo.get
    parsed = []
    tf_full = _TF_FULL.fullmatch
    for c in values:
        p = get(c)
        if p is None:
            # parse_tf_op's common case inline: thousands of names per capture.
            m = tf_full(c) if type(c) is str else None
            if m is not None and m.group(1) != "Iterator":
                p = (TENSORFLOW, *m.groups())
            else:
                p = parse_tf_op(str(c))
            memo[c] = p
        parsed.append(p)
    columns = list(zip(*parsed)) if parsed else [(), (), ()]
    return tuple(np.array(c, dtype=object) for c in columns)


def name_memo(run) -> dict:
    """The names of a run parsed so far (shared by its analyses)."""
    return shared(run).setdefault("tf_ops.parsed", {})


@per_run
def event_names(run) -> pd.DataFrame:
    """:func:`name_table` of the run's event names (computed once per run)."""
    return name_table(run.events["name"], name_memo(run))
