"""Device and host time per line of the user's source (``run.source_lines``): a line
profiler across frameworks, which neither XProf, HTA nor Perfetto offers.

Each framework says, per op that ran, the line of the user's program that made it and the
op's time (:func:`.frameworks.source_lines.op_sources`): XLA's instructions by their
metadata (``source_file``/``source_line`` or a stack frame), with the time of their device
events (GPU kernels, TPU ops, XLA:CPU thunks) and host launches; PyTorch's operators by the
innermost frame outside torch of their ``with_stack=True`` Python stack, with the kernels
they launched and their host time.

Rows are per (file, line, function, framework), the heaviest device time first (then host
time); the ops no line is known for are one row with ``source_file`` ``''``, last, so the
device shares add up to 100 % of the device time the frameworks attribute to ops. A capture
whose ops name no line (programs without source metadata, Python stacks not recorded)
gives the table with no rows and a note in ``run.warnings`` and the frame's
``attrs["note"]`` saying why.
"""

from __future__ import annotations

import os

import numpy as np
import pandas as pd

from .. import schema
from ..frameworks.source_lines import op_sources

#: Say why the table is empty.
NO_LINES_NOTE = (
    "source lines: no op of this capture names a source line (compiled programs without "
    "source metadata or stack frames, Python stacks not recorded (with_stack=True), or no "
    "ops)"
)
# The largest source file shown beside its lines' times (a generated file of megabytes is
# not read for a listing).
MAX_SOURCE_BYTES = 4 << 20
_KEY = ["source_file", "source_line", "function", "framework"]


def source_lines(run) -> pd.DataFrame:
    """Device and host time per source line (:data:`schema.SOURCE_LINES`), heaviest first; no rows
    (with a note) where no op names a line."""
    ops = op_sources(run)
    if not len(ops) or not (ops["source_file"] != "").any():
        return _empty(run)
    ops = ops.assign(weight=np.where(ops["device_ps"] > 0, ops["device_ps"], ops["host_ps"]))
    # The top op of each line: its ops' times summed per name, the largest first.
    per_op = ops.groupby([*_KEY, "op_name"], sort=False, observed=True)["weight"].sum()
    per_op = per_op.reset_index().sort_values("weight", ascending=False, kind="stable")
    top = per_op.drop_duplicates(_KEY).set_index(_KEY)["op_name"]
    g = ops.groupby(_KEY, sort=False, observed=True).agg(
        device_ps=("device_ps", "sum"),
        host_ps=("host_ps", "sum"),
        occurrences=("occurrences", "sum"),
        ops=("op_id", "nunique"),
    )
    g["top_op"] = top.reindex(g.index).fillna("").to_numpy(object)
    g = g.reset_index()
    device_us = g["device_ps"].to_numpy(np.int64) / 1e6
    total = device_us.sum()
    unknown = (g["source_file"] == "").to_numpy()
    order = np.lexsort((g["source_line"].to_numpy(), -g["host_ps"].to_numpy(), -device_us, unknown))
    g = g.iloc[order].reset_index(drop=True)
    device_us = device_us[order]
    out = pd.DataFrame(
        {
            "source_file": schema.text_categorical(g["source_file"].to_numpy(object)),
            "source_line": g["source_line"].to_numpy(np.int64),
            "function": schema.text_categorical(g["function"].to_numpy(object)),
            "framework": schema.text_categorical(g["framework"].to_numpy(object)),
            "device_time_us": device_us,
            "host_time_us": g["host_ps"].to_numpy(np.int64) / 1e6,
            "occurrences": g["occurrences"].to_numpy(np.int64),
            "ops": g["ops"].to_numpy(np.int64),
            "device_time_percent": 100 * device_us / total if total > 0 else np.zeros(len(g)),
            "top_op": g["top_op"].to_numpy(object),
        }
    )
    return schema.conform(out, schema.SOURCE_LINES)


def line_coverage(table: pd.DataFrame) -> float:
    """Share of the device time of :func:`source_lines`' ops that lands on a named line, %
    (NaN without device time)."""
    total = float(table["device_time_us"].sum())
    named = float(table.loc[(table["source_file"] != "").to_numpy(), "device_time_us"].sum())
    return 100.0 * named / total if total > 0 else float("nan")


def file_lines(table: pd.DataFrame, file: str) -> pd.DataFrame:
    """The rows of :func:`source_lines` of one file, merged over functions and frameworks,
    by line: source_line, device_time_us, host_time_us, occurrences, device_time_percent."""
    rows = table[(table["source_file"].astype(str) == file).to_numpy()]
    by = rows.groupby("source_line", sort=True)
    cols = ["device_time_us", "host_time_us", "occurrences", "device_time_percent"]
    return by[cols].sum().reset_index()


def source_text(path: str, max_bytes: int = MAX_SOURCE_BYTES) -> list[str] | None:
    """The lines of the user's source file ``path`` where it is a readable text file here of
    at most ``max_bytes``, else None (a capture made elsewhere names files this machine does
    not have, or names ``<string>``): never raises."""
    try:
        if not path or not os.path.isfile(path) or os.path.getsize(path) > max_bytes:
            return None
        with open(path, "rb") as f:
            data = f.read(max_bytes + 1)
        return data.decode("utf-8", errors="replace").splitlines()
    except (OSError, ValueError):
        return None


def _empty(run) -> pd.DataFrame:
    out = schema.empty(schema.SOURCE_LINES)
    out.attrs["note"] = NO_LINES_NOTE
    notes = getattr(run, "warnings", None)
    if isinstance(notes, list) and NO_LINES_NOTE not in notes:
        notes.append(NO_LINES_NOTE)
    return out


__all__ = [
    "NO_LINES_NOTE",
    "file_lines",
    "line_coverage",
    "source_lines",
    "source_text",
]
