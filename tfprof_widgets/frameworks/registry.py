"""Which frameworks produced a run, and their rules asked together.

:func:`framework_of` looks at what a run holds (stat, line and event names: a few thousand
strings, never every event) and asks each known framework whether the run is its own. A run
can be several at once: TensorFlow with XLA clusters, or JAX programs beside PyTorch ones.
The neutral analyses ask the result, a :class:`RunFrameworks`, which asks its frameworks in
order (the first one that answers for an event wins). A run of no known framework (a
browser's Chrome trace, say) takes XProf's rules, which are TensorFlow's.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd

from ..analysis.inputs import per_run
from .base import UNKNOWN_OP, Advice, DeviceOps, Framework, RunNames
from .pytorch import PyTorch
from .tensorflow import TensorFlow
from .xla import XLA

# In the order their rules are asked: TF first, so that TF with XLA clusters reads as TF ops.
FRAMEWORKS: tuple[Framework, ...] = (TensorFlow(), XLA(), PyTorch())
# The rules of a run that no framework claims: XProf's.
_FALLBACK: tuple[Framework, ...] = (FRAMEWORKS[0],)


@dataclasses.dataclass(frozen=True)
class RunFrameworks:
    """The frameworks of one run (``run.framework``) and their rules, asked in order.

    ``found``: the frameworks whose events the run holds (empty where none is known);
    ``name``: their names joined by '+' ('tensorflow+xla'), or 'unknown'; ``title``: how
    the views name them ('TensorFlow with XLA').
    """

    found: tuple[Framework, ...]

    @property
    def rules(self) -> tuple[Framework, ...]:
        return self.found or _FALLBACK

    @property
    def primary(self) -> Framework:
        return self.rules[0]

    @property
    def name(self) -> str:
        return "+".join(f.name for f in self.found) or "unknown"

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(f.name for f in self.found)

    @property
    def title(self) -> str:
        return " with ".join(f.title for f in self.found) or "unknown framework"

    @property
    def advice(self) -> Advice:
        return self.primary.advice

    @property
    def op_label(self) -> str:
        return self.primary.op_label

    def __contains__(self, name: str) -> bool:
        return name in self.names

    def __str__(self) -> str:
        return self.name

    def __repr__(self) -> str:
        return f"<frameworks {self.name}>"

    # -- the rules, every framework asked ---------------------------------------------------
    def step_marker_names(self, names: pd.Series) -> np.ndarray:
        return np.logical_or.reduce([f.step_marker_names(names) for f in self.rules])

    def implicit_step_markers(self, events, stats, host: np.ndarray):
        for f in self.rules:
            found = f.implicit_step_markers(events, stats, host)
            if found is not None and found[0].any():
                return found
        return None

    def host_wrappers(self, names: pd.Series) -> np.ndarray:
        return np.logical_or.reduce([f.host_wrappers(names) for f in self.rules])

    def host_event_types(self, names: pd.Series, op_types: np.ndarray) -> np.ndarray:
        return self.primary.host_event_types(names, op_types)

    @property
    def copy_op_types(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for f in reversed(self.rules):
            out.update(f.copy_op_types)
        return out

    @property
    def input_op_types(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(t for f in self.rules for t in f.input_op_types))

    def parse_op_names(self, names: pd.Index, memo: dict | None = None) -> pd.DataFrame:
        """Each name by the first framework that knows it as an op ('unknown' otherwise)."""
        out = self.rules[0].parse_op_names(names, memo)
        for f in self.rules[1:]:
            unknown = (out["category"] == UNKNOWN_OP).to_numpy()
            if not unknown.any():
                break
            other = f.parse_op_names(names, memo)
            known = unknown & (other["category"] != UNKNOWN_OP).to_numpy()
            out.loc[known] = other.loc[known]
        return out

    def device_ops(self, run, rows: np.ndarray) -> DeviceOps:
        """Device events by the first framework that attributes each."""
        parts, left = [], np.asarray(rows, np.int64)
        for f in self.rules:
            if not len(left):
                break
            found = f.device_ops(run, left)
            if len(found):
                parts.append(found)
                left = np.setdiff1d(left, found.rows, assume_unique=True)
        if not parts:
            return DeviceOps.none()
        merged = DeviceOps(
            *(
                np.concatenate([getattr(p, k) for p in parts])
                for k in ("rows", "op_name", "op_type", "beyond_xprof")
            )
        )
        order = np.argsort(merged.rows, kind="stable")
        return DeviceOps(
            *(getattr(merged, k)[order] for k in ("rows", "op_name", "op_type", "beyond_xprof"))
        )

    def device_op_table(self, run) -> tuple[pd.DataFrame, pd.Series]:
        tables = [f.device_op_table(run) for f in self.rules]
        tables = [t for t in tables if len(t[0])]
        if not tables:
            return pd.DataFrame(), pd.Series(dtype=float)
        rows = pd.concat([t[0] for t in tables], ignore_index=True)
        idle = pd.concat([t[1] for t in tables]).groupby(level=0).sum()
        return rows, idle

    def duty_cycle(self, run) -> tuple[float, float]:
        busy = idle = 0.0
        for f in self.rules:
            b, i = f.duty_cycle(run)
            busy, idle = busy + b, idle + i
        return busy, idle

    def hlo_16bit_percent(self, run) -> float | None:
        for f in self.rules:
            share = f.hlo_16bit_percent(run)
            if share is not None:
                return share
        return None

    def input_op_class(self, name: str, op_type: str) -> str:
        for f in self.rules:
            if op_type in f.input_op_types:
                return f.input_op_class(name, op_type)
        return self.primary.input_op_class(name, op_type)

    def input_pipeline_in_use(self, ops: pd.DataFrame) -> bool:
        return any(f.input_pipeline_in_use(ops) for f in self.rules)

    def tensor_core_eligible(self, op_name: str) -> bool:
        return any(f.tensor_core_eligible(op_name) for f in self.rules)

    # -- hooks added for XLA ------------------------------------------------------------------
    def device_op_units(self, run, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
        """The first framework's occurrence units that has any (XProf's default: None)."""
        for f in self.rules:
            found = f.device_op_units(run, rows)
            if found is not None:
                return found
        return None

    def kernel_op_names(self, run, rows: np.ndarray) -> np.ndarray | None:
        """Each kernel's op by the first framework that names it (None where none does)."""
        out = None
        for f in self.rules:
            found = f.kernel_op_names(run, rows)
            if found is None:
                continue
            out = found if out is None else np.where(pd.isna(out), found, out)
        return out

    # -- hooks added for PyTorch ------------------------------------------------------------
    @property
    def host_marks_device_steps(self) -> bool:
        return any(f.host_marks_device_steps for f in self.rules)

    def overview_verdicts(self, run) -> dict | None:
        """The first framework's own overview verdicts (None: XProf's)."""
        for f in self.rules:
            found = f.overview_verdicts(run)
            if found is not None:
                return found
        return None

    def device_rows_in_steps(self, run, rows: np.ndarray) -> np.ndarray:
        """The device activity every framework of the run keeps."""
        for f in self.rules:
            rows = f.device_rows_in_steps(run, rows)
        return rows

    def memory_events(self, run) -> list[pd.DataFrame]:
        """Each framework's own allocator events (schema.MEMORY), where it has any."""
        found = (f.memory_events(run) for f in self.rules)
        return [m for m in found if m is not None and len(m)]


def frameworks_in(run) -> RunFrameworks:
    """The frameworks whose events ``run`` holds (not cached: for a run being built)."""
    names = RunNames.of(run)
    return RunFrameworks(tuple(f for f in FRAMEWORKS if f.present(names)))


@per_run
def framework_of(run) -> RunFrameworks:
    """The run's frameworks and their rules (computed once per run)."""
    return frameworks_in(run)


def rules_of(holder) -> RunFrameworks:
    """The frameworks of a run, or of any holder of a run's tables (a pod) through its
    ``framework`` attribute; XProf's rules for one that names none."""
    found = getattr(holder, "framework", None)
    return found if isinstance(found, RunFrameworks) else RunFrameworks(())
