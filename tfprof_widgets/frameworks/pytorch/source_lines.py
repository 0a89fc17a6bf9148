"""PyTorch's operators per line of the user's Python (for
:mod:`tfprof_widgets.analysis.source_lines`), from the stacks ``with_stack=True`` records.

Kineto writes the Python stack two ways: recent PyTorch as ``python_function`` events
(``cat``), one per frame, named ``file(line): function`` and nested on the operator's thread
around the operators they called; PyTorch 1.x as a ``Call stack`` argument on each operator
(``file(line): function`` frames, ``;``-joined, innermost first). An operator's line is its
innermost frame outside torch's own package (``torch/...``, as Kineto writes paths below
``site-packages``) that names a line (``<built-in ...>`` frames name none): the user's line
that called into torch, as JAX names the user's frame and not its own. Where no such frame
is recorded the operator has no line (``''``, 0).

Per operator event: device time is that of the kernels, copies and memsets it launched (the
op table's rule, :func:`.op_table.launching_operators`: the innermost operator around the
launching call); host time is the duration of the outermost operators only (an operator
inside another is in its parent's time); occurrences are its device events.
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd

from ... import stat_columns
from ...analysis.event_index import times_ps
from ...analysis.nesting import stack_nesting
from .op_table import launching_operators
from .ops import _kinds

# ``file(line): function``, as Kineto names a Python frame.
_FRAME = re.compile(r"^(.*)\((\d+)\): (.*)$")
# Paths of torch's own package, as Kineto writes them (relative) or absolute.
_TORCH = re.compile(r"^torch/|/(?:site|dist)-packages/torch/")
_COLUMNS = ("source_file", "source_line", "function", "framework", "op_name", "op_id")


def operator_sources(run) -> pd.DataFrame:
    """One row per operator event with device or host time: its line (the module
    docstring), function, framework ('PyTorch'), op name and op id (the name's code),
    device_ps, host_ps and occurrences; empty where the capture has no operators."""
    kind, _, operator = _kinds(run)
    ops = np.flatnonzero(operator)
    if not len(ops):
        return pd.DataFrame({c: [] for c in (*_COLUMNS, "device_ps", "host_ps", "occurrences")})
    start, end = times_ps(run)
    gpu, owner = launching_operators(run)
    ok = owner >= 0
    device = np.zeros(len(run.events), np.int64)
    count = np.zeros(len(run.events), np.int64)
    np.add.at(device, owner[ok], (end[gpu[ok]] - start[gpu[ok]]).astype(np.int64))
    np.add.at(count, owner[ok], 1)
    frame, outermost = _frames_and_roots(run, ops, start, end)
    host = np.where(outermost, (end[ops] - start[ops]).astype(np.int64), 0)
    keep = (device[ops] > 0) | (host > 0)
    ops, frame, host = ops[keep], frame[keep], host[keep]
    file, line, function = _frame_parts(frame)
    name = run.events["name"].array
    return pd.DataFrame(
        {
            "source_file": file,
            "source_line": line,
            "function": function,
            "framework": "PyTorch",
            "op_name": np.asarray(name.categories.astype(str), object)[np.asarray(name.codes)[ops]],
            "op_id": np.asarray(name.codes, np.int64)[ops],
            "device_ps": device[ops],
            "host_ps": host,
            "occurrences": count[ops],
        }
    )


def _frames_and_roots(run, ops: np.ndarray, start, end) -> tuple[np.ndarray, np.ndarray]:
    """Per operator of ``ops``: the text of its user frame ('' where none) and whether no
    operator encloses it. The ``Call stack`` argument wins where recorded; else the
    innermost user ``python_function`` event around the operator on its thread."""
    n = len(run.events)
    stack, has_stack = stat_columns.strings(run.stat_store, "Call stack", n)
    cat = stat_columns.categorical(run.stat_store, "cat", n)
    is_py = np.append(np.asarray(cat.categories.astype(str)) == "python_function", False)
    py = np.flatnonzero(is_py[np.asarray(cat.codes)])
    name = run.events["name"].array
    py_frame = _user_frames(np.asarray(name.categories.astype(str), object))
    both = np.concatenate([py, ops])
    line = np.asarray(run.event_line_rows)[both]
    # Ties: the Python frame encloses the operator it called (frames first).
    b, e = start[both], end[both]
    order = np.lexsort((np.r_[np.zeros(len(py)), np.ones(len(ops))], -e, b, line))
    _, parent = stack_nesting(line[order], b[order], e[order])
    sorted_rows = both[order]
    frame_text = py_frame[np.asarray(name.codes)[sorted_rows]]
    is_user = (np.arange(len(both))[order] < len(py)) & (frame_text != "")
    is_op = np.arange(len(both))[order] >= len(py)
    user_anc, op_anc = _nearest(parent, is_user), _nearest(parent, is_op)
    inv = np.empty(len(both), np.int64)
    inv[order] = np.arange(len(both))
    at = inv[len(py) :]
    found = np.where(user_anc[at] >= 0, frame_text[np.maximum(user_anc[at], 0)], "")
    if has_stack[ops].any():
        texts = pd.Series(np.asarray(stack[ops], object)).fillna("")
        codes, uniq = pd.factorize(texts)
        first = np.array([_first_user_frame(s) for s in uniq.tolist()] + [""], object)
        from_stack = first[codes]
        found = np.where(has_stack[ops] & (from_stack != ""), from_stack, found)
    return found.astype(object), op_anc[at] < 0


def _nearest(parent: np.ndarray, good: np.ndarray) -> np.ndarray:
    """Per node of a forest (``parent``, -1 at the roots): its nearest strict ancestor that
    is ``good`` (-1: none). Pointer doubling: log(depth) vectorised passes."""
    up = parent.copy()
    while True:
        bad = np.flatnonzero((up >= 0) & ~good[np.maximum(up, 0)])
        if not len(bad):
            return up
        up[bad] = up[up[bad]]


def _user_frames(names: np.ndarray) -> np.ndarray:
    """Per distinct event name: the name itself where it is a user frame with a line, else
    '' (torch's frames, built-ins, every other event's name)."""
    out = np.full(len(names), "", object)
    for k, s in enumerate(names.tolist()):
        m = _FRAME.match(s)
        if m and not _TORCH.search(m.group(1)):
            out[k] = s
    return out


def _first_user_frame(stack: str) -> str:
    """The innermost user frame of a ``Call stack`` value ('' where none)."""
    for frame in stack.split(";"):
        m = _FRAME.match(frame.strip())
        if m and not _TORCH.search(m.group(1)):
            return frame.strip()
    return ""


def _frame_parts(frames: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(file, line, function) of ``file(line): function`` texts ('', 0, '' for '')."""
    text = pd.Series(frames, dtype=object).fillna("")
    parts = text.str.extract(_FRAME)
    file = parts[0].fillna("").to_numpy(object)
    line = pd.to_numeric(parts[1], errors="coerce").fillna(0).to_numpy(np.int64)
    return file, line, parts[2].fillna("").to_numpy(object)


__all__ = ["operator_sources"]
