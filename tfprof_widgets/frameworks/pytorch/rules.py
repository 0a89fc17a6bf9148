"""PyTorch's rules: how a ``torch.profiler`` (Kineto) trace is told apart, where its steps
are and what its host events are.

* A run is PyTorch's when its events are ATen operators (``aten::...``), ``ProfilerStep#N``
  steps, or carry Kineto's ``External id`` / ``Record function id`` links between an
  operator and the runtime calls it makes.
* Steps: ``prof.step()`` records ``ProfilerStep#N`` on the host around each step; N is the
  step number. They are the steps on a host with a GPU too (XProf would look for a device
  'Steps' line, which Kineto never writes), and the host events count beside the kernels.
* Host event types (XProf's step breakdown): the CUDA runtime's launches and async copies are
  kernel launch, the DataLoader's ``__next__`` is waiting for input, the rest host compute.
* Ops (``run.ops``, the kernels' operation): host ops by name, device ops by the operator
  that launched them (:mod:`.op_table`).
* The overview's verdict is torch-tb-profiler's, from :mod:`.steps` (``run.torch_steps``):
  DataLoader-bound, launch-bound (runtime), communication-bound, idle GPU, memory at the
  device's limit.
* GPU time (:mod:`..gpu_time`) counts, as HTA does, only what host calls launched before the
  last ``ProfilerStep#N`` began; ``[memory]`` events are allocator events (:mod:`.memory`).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ... import stat_columns
from ...analysis.event_index import host_codes, on_device
from ...analysis.event_types import HOST_COMPUTE, HOST_PREPARE, HOST_WAIT_INPUT
from ...analysis.memo import per_run
from ..base import Advice, DeviceOps, Framework, RunNames
from . import names as torch_names
from . import op_table
from .collectives import collective_ops
from .memory import memory_events
from .steps import verdicts
from .suggestions_rules import suggestion_rows

_EVENTS = ("aten::", "ProfilerStep#")
_STATS = frozenset({"External id", "Record function id"})
ADVICE = Advice(
    mark_steps=(
        "No ProfilerStep#N marker observed and hence the step time is unknown. Profile with "
        "torch.profiler.profile(schedule=torch.profiler.schedule(...)) and call prof.step() "
        "after each step."
    ),
    input_tool="DataLoader",
    input_next_step=(
        "Look at the DataLoader: set num_workers (and pin_memory=True) on its construction "
        "to load data in worker processes."
    ),
    no_input_pipeline_next_step=(
        "The time is spent loading data outside torch.utils.data.DataLoader: move it into a "
        "DataLoader with num_workers > 0."
    ),
)


class PyTorch(Framework):
    name = "pytorch"
    title = "PyTorch"
    op_label = "operator"
    vocabulary = ("aten::", "ProfilerStep#", "External id", "Record function id")
    advice = ADVICE
    # The DataLoader's batches (op_table types them 'DataLoader'): the input pipeline's host
    # ops, for the input-pipeline page's table.
    input_op_types = ("DataLoader",)
    host_marks_device_steps = True

    def present(self, names: RunNames) -> bool:
        if names.stats & _STATS:
            return True
        return bool(names.events.str.startswith(_EVENTS).any())

    def step_marker_names(self, names: pd.Series) -> np.ndarray:
        """``ProfilerStep#N``, and nothing else (a PyTorch 'train' function is no marker)."""
        return torch_names.is_step_marker(names)

    def host_event_types(self, names: pd.Series, op_types: np.ndarray) -> np.ndarray:
        out = np.full(len(names), HOST_COMPUTE, np.int16)
        out[torch_names.is_launch(names)] = HOST_PREPARE
        out[torch_names.is_dataloader_next(names)] = HOST_WAIT_INPUT
        return out

    def parse_op_names(self, names: pd.Index, memo: dict | None = None) -> pd.DataFrame:
        """ATen and other dispatcher ops, autograd nodes, modules, DataLoader batches
        (:mod:`.op_table`)."""
        return op_table.parse_op_names(names)

    def device_ops(self, run, rows: np.ndarray) -> DeviceOps:
        """Each kernel, copy and memset by the operator that launched it (:mod:`.op_table`)."""
        return op_table.device_ops(run, np.asarray(rows, np.int64))

    def kernel_op_names(self, run, rows: np.ndarray) -> np.ndarray | None:
        return op_table.kernel_op_names(run, np.asarray(rows, np.int64))

    def input_op_class(self, name: str, op_type: str) -> str:
        """A batch of the DataLoader reads and preprocesses (XProf's classes split tf.data's)."""
        return "DataLoader batch"

    def input_pipeline_in_use(self, ops: pd.DataFrame) -> bool:
        if not len(ops) or "operation" not in ops:
            return False
        names = pd.Series(ops["operation"].astype(str).unique())
        return bool(torch_names.is_dataloader_next(names).any())

    def overview_verdicts(self, run) -> dict | None:
        return verdicts(run)

    def device_rows_in_steps(self, run, rows: np.ndarray) -> np.ndarray:
        return activity_before_last_step(run, rows)

    def collective_ops(self, run) -> pd.DataFrame | None:
        return collective_ops(run)

    def memory_events(self, run) -> pd.DataFrame | None:
        return memory_events(run)

    def suggestion_rows(self, run) -> pd.DataFrame | None:
        return suggestion_rows(run)


@per_run
def last_step_starts(run) -> np.ndarray:
    """Per host code: when its last ``ProfilerStep#N`` began (µs); +inf for a host with
    fewer than two step names (HTA counts distinct names: a step repeated on another thread
    or as a GPU annotation is one, and with fewer than two it keeps every event). Kept per
    run (every HTA analysis asks for it); not to be changed in place."""
    ev = run.events
    names = pd.Series(ev["name"].cat.categories.astype(str))
    codes = ev["name"].cat.codes.to_numpy()
    is_marker = torch_names.is_step_marker(names)
    host = host_codes(run)
    last = np.full(int(host.max(initial=-1)) + 1, np.inf)
    if is_marker.sum() < 2:
        return last
    marker = np.flatnonzero(is_marker[codes])
    start = ev["start_us"].to_numpy()
    latest = np.full(len(last), -np.inf)
    np.maximum.at(latest, host[marker], start[marker])
    # Distinct step names per host: the distinct (host, name) pairs counted by host.
    pairs = np.unique(host[marker].astype(np.int64) * len(names) + codes[marker])
    distinct = np.bincount(pairs // len(names), minlength=len(last))
    many = distinct >= 2
    last[many] = latest[many]
    return last


def activity_before_last_step(run, rows: np.ndarray) -> np.ndarray:
    """HTA's rule (``include_last_profiler_step=False``), per host (HTA: per rank): the
    device activity counted is what host calls made before the host's last ``ProfilerStep#N``
    began (:func:`last_step_starts`) launched, linked by their correlation id; the last step
    is usually cut by the profiler's stop."""
    last = last_step_starts(run)
    if np.isinf(last).all():
        return rows
    host = host_codes(run)
    start = run.events["start_us"].to_numpy()
    corr, has = stat_columns.numbers(run.stat_store, "correlation", len(start))
    launched = has & ~on_device(run) & (start < last[host])
    keep = np.zeros(len(rows), bool)
    # Correlation ids are a host's own: matched within each host (a few hosts, each at once).
    for h in np.unique(host[rows]):
        mine = host[rows] == h
        keep[mine] = np.isin(corr[rows[mine]], corr[launched & (host == h)])
    return rows[keep & has[rows]]
