"""What the neutral analyses ask a framework: the contract every framework module fills in.

The step, op, overview and input-pipeline analyses are the same for every capture; what
differs between TensorFlow, XLA (JAX, TF with ``jit_compile``, every TPU program) and
PyTorch is a handful of rules: which host event marks a step, how an event names the op it
runs, what links a launch to its kernel, and what to advise. Each framework module
subclasses :class:`Framework` and overrides what its captures need; the defaults here are
XProf's rules for a capture of no known framework. A run can hold several frameworks (TF
with XLA clusters); :class:`~.registry.RunFrameworks` asks each in turn.

Every hook is a function of whole columns (a run's tables, or the distinct names of a
categorical), never of one event. Each says how the answers of several frameworks make the
run's (:func:`hook`, with a rule of :mod:`.combine`; :data:`ATTRIBUTES` for the class
attributes), and :class:`~.registry.RunFrameworks` applies that rule: a new hook is
declared here alone.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import ClassVar, TypeVar

import numpy as np
import pandas as pd

from ..analysis.event_types import HOST_COMPUTE
from . import combine
from .combine import UNKNOWN_OP


@dataclasses.dataclass(frozen=True)
class RunNames:
    """What a framework is told apart by: the names a run holds, each once.

    ``stats``: every event stat name; ``planes`` / ``lines`` / ``events``: the distinct
    plane, line and event names; ``tfprof``: whether the run holds TF1 tfprof nodes;
    ``tool_data``: whether it was read from TensorBoard's tool-data files.
    """

    stats: frozenset
    planes: pd.Index
    lines: pd.Index
    events: pd.Index
    tfprof: bool = False
    tool_data: bool = False

    @classmethod
    def of(cls, run) -> RunNames:
        def distinct(col: pd.Series) -> pd.Index:
            if isinstance(col.dtype, pd.CategoricalDtype):
                return pd.Index(col.cat.categories.astype(str))
            return pd.Index(pd.unique(col.astype(str)))

        return cls(
            stats=frozenset(map(str, run.stat_store.names)),
            planes=distinct(run.planes["plane"]),
            lines=distinct(run.lines["line"]),
            events=distinct(run.events["name"]),
            tfprof=len(getattr(run, "tfprof_nodes", ())) > 0,
            tool_data=getattr(run, "tool_data", None) is not None,
        )


@dataclasses.dataclass
class DeviceOps:
    """Device events attributed to a framework op: one entry per attributed event.

    ``rows``: rows of ``run.events`` (int64); ``op_name`` / ``op_type``: the op each event
    runs, as the op tables name it (object arrays); ``beyond_xprof``: True where XProf
    would not attribute the event this way (bool).
    """

    rows: np.ndarray
    op_name: np.ndarray
    op_type: np.ndarray
    beyond_xprof: np.ndarray

    @classmethod
    def none(cls) -> DeviceOps:
        return cls(
            np.zeros(0, np.int64), np.zeros(0, object), np.zeros(0, object), np.zeros(0, bool)
        )

    def __len__(self) -> int:
        return len(self.rows)


@dataclasses.dataclass(frozen=True)
class Advice:
    """What the overview and the input pipeline tell a user of this framework.

    ``mark_steps``: how to mark steps, for a capture with none. ``input_tool``: the
    framework's input-pipeline API as the advice names it ('' where it has none).
    ``launch_contention``: added to the kernel-launch statement when the input pipeline
    runs on the host. ``input_next_step`` / ``no_input_pipeline_next_step``: what to look at
    next when input is the bottleneck, with or without the framework's input pipeline.
    ``input_recommendations``: what to do about each kind of slow input op.
    ``notebook_words``: (XProf's sentence, ours) pairs: XProf's overview page points at its
    own sections, a notebook at views (:meth:`in_our_words`).
    """

    mark_steps: str = (
        "No step marker observed and hence the step time is unknown. Mark each step with "
        "the framework's step annotation, or profile for longer than one step."
    )
    input_tool: str = ""
    launch_contention: str = ""
    input_next_step: str = "Look at the input pipeline's breakdown of input time on the host."
    no_input_pipeline_next_step: str = (
        "The profiler has no host-side analysis for this capture's input pipeline."
    )
    input_recommendations: tuple[str, ...] = ()
    notebook_words: tuple[tuple[str, str], ...] = (
        (
            "You may skip the rest of this page.",
            "Input is not the bottleneck: look at the ops (tw.views.op_stats(run)) and the "
            "trace (tw.views.timeline(run)).",
        ),
        (
            "Look at Section 3 for the breakdown of input time on the host.",
            "See where the host's input time goes in the input-pipeline view "
            "(tw.views.input_pipeline(run)).",
        ),
    )

    def in_our_words(self, sentence: str) -> str:
        """XProf's sentence with its page sections replaced by the views that show them."""
        for theirs, ours in self.notebook_words:
            sentence = sentence.replace(theirs, ours)
        return sentence


_Method = TypeVar("_Method", bound=Callable)


def hook(rule: Callable) -> Callable[[_Method], _Method]:
    """Declares a method of :class:`Framework` a hook that the neutral analyses ask of a
    run's frameworks together, and how their answers combine: ``rule`` (:mod:`.combine`)."""

    def declare(method: _Method) -> _Method:
        method.combine = rule
        return method

    return declare


def first_attributing(frameworks, ask, run, rows: np.ndarray) -> DeviceOps:
    """The rule of :meth:`Framework.device_ops`: each event by the first framework that
    attributes it, the rest asked of the next; merged in row order."""
    fields = ("rows", "op_name", "op_type", "beyond_xprof")
    parts, left = [], np.asarray(rows, np.int64)
    for f in frameworks:
        if not len(left):
            break
        found = ask(f, run, left)
        if len(found):
            parts.append(found)
            left = np.setdiff1d(left, found.rows, assume_unique=True)
    if not parts:
        return DeviceOps.none()
    merged = [np.concatenate([getattr(p, k) for p in parts]) for k in fields]
    order = np.argsort(merged[0], kind="stable")
    return DeviceOps(*(m[order] for m in merged))


def name_texts(names) -> list[str]:
    """Distinct names (a Series, Index or array) as a list of str. The name rules run on
    distinct names, hundreds to a few thousand: in Python, where pandas' string methods cost
    more a call in overhead than the work (docs/speed.md; and they follow Python's ``re``
    and ``str`` methods)."""
    return [v if type(v) is str else str(v) for v in np.asarray(names, dtype=object).tolist()]


def name_flags(names, test) -> np.ndarray:
    """``test(name)`` of each distinct name (:func:`name_texts`), as a bool array."""
    values = name_texts(names)
    return np.fromiter(map(test, values), bool, len(values))


class Framework:
    """One framework's rules (the defaults: XProf's, for a capture of no known framework).

    ``name`` is the framework's id in ``run.framework``; ``title`` how the views name it,
    ``op_label`` one of its ops;
    ``vocabulary`` the event, stat and line names only this framework's captures carry (the
    architecture test keeps them out of the neutral analyses).
    """

    name: ClassVar[str] = "generic"
    title: ClassVar[str] = "Profile"
    # What the views call one of the framework's ops ('TF op', 'operator').
    op_label: ClassVar[str] = "op"
    vocabulary: ClassVar[tuple[str, ...]] = ()
    advice: ClassVar[Advice] = Advice()
    # Host events whose op type means "input": each maps to XProf's input class.
    input_op_types: ClassVar[tuple[str, ...]] = ()
    # Op types of host-to-device, device-to-host, device-to-device and host-to-host copies.
    copy_op_types: ClassVar[dict[str, int]] = {}

    def present(self, names: RunNames) -> bool:
        """Whether a run holding these names holds this framework's events (asked before
        its steps are grouped)."""
        return False

    # -- steps ------------------------------------------------------------------------------
    @hook(combine.each_any)
    def step_marker_names(self, names: pd.Series) -> np.ndarray:
        """Per distinct host-event name: is it an explicit step marker? XProf's rule: a name
        starting with 'train', 'test' or 'TraceContext' and holding no '/'."""
        return name_flags(
            names, lambda t: t.startswith(("train", "test", "TraceContext")) and "/" not in t
        )

    @hook(combine.first_marking)
    def implicit_step_markers(self, events, stats, host: np.ndarray):
        """Where a capture has no explicit marker: (is_marker, step number) per event, or
        None when the framework has no such rule."""
        return None

    @hook(combine.each_any)
    def host_wrappers(self, names: pd.Series) -> np.ndarray:
        """Per distinct host-event name: is it bookkeeping around the real work (not counted
        as host compute)?"""
        return np.zeros(len(names), bool)

    @hook(combine.primary)
    def host_event_types(self, names: pd.Series, op_types: np.ndarray) -> np.ndarray:
        """XProf's step event type of host event names (``op_types``: their parsed types)."""
        return np.full(len(names), HOST_COMPUTE, np.int16)

    # -- ops --------------------------------------------------------------------------------
    @hook(combine.first_known_op)
    def parse_op_names(self, names: pd.Index, memo: dict | None = None) -> pd.DataFrame:
        """Per name: ``category`` ('unknown' where the name is no op of the framework),
        ``op_name`` and ``op_type`` (object columns, aligned with ``names``). ``memo`` (name
        -> parse), where given, saves parsing a name twice."""
        values = np.asarray(names, dtype=object)
        return pd.DataFrame(
            {
                "category": np.full(len(values), UNKNOWN_OP, object),
                "op_name": values,
                "op_type": values,
            }
        )

    @hook(first_attributing)
    def device_ops(self, run, rows: np.ndarray) -> DeviceOps:
        """Which of the device events ``rows`` (kernels and copies on accelerator streams) run
        an op of this framework, and which op."""
        return DeviceOps.none()

    @hook(combine.rows_and_idle)
    def device_op_table(self, run) -> tuple[pd.DataFrame, pd.Series]:
        """Device op rows the framework builds from device planes by rules of its own (TPU
        cores' op lines), in ``run.ops``'s row columns, and per host those devices' IDLE, ps.
        Empty where it has none."""
        return pd.DataFrame(), pd.Series(dtype=float)

    @hook(combine.summed)
    def duty_cycle(self, run) -> tuple[float, float]:
        """(busy, idle) time of the cores whose ops the framework times (ps); (0, 0) where
        it has none."""
        return 0.0, 0.0

    @hook(combine.owner_of_op_type)
    def input_op_class(self, name: str, op_type: str) -> str:
        """XProf's class of a host input op (Enqueue, Demanded/Advanced file read or
        Preprocessing)."""
        return "Preprocessing"

    @hook(combine.any_true)
    def input_pipeline_in_use(self, ops: pd.DataFrame) -> bool:
        """Whether the framework's input pipeline ran on some host (from ``run.ops``)."""
        return False

    @hook(combine.any_true)
    def tensor_core_eligible(self, op_name: str) -> bool:
        """Whether an op of this framework could use Tensor Cores (XProf's kernel stats)."""
        return False

    def __repr__(self) -> str:
        return f"<{type(self).__name__} rules>"

    # -- hooks added for XLA ------------------------------------------------------------------
    @hook(combine.first)
    def device_op_units(self, run, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
        """How the device events ``rows`` (attributed to ops) count as occurrences: per
        event a unit id (int64; an op ran as often as its busiest unit) and whether it starts
        a new occurrence of its unit (bool). None: XProf's default, each kernel name a unit
        and every event an occurrence."""
        return None

    @hook(combine.filled)
    def kernel_op_names(self, run, rows: np.ndarray) -> np.ndarray | None:
        """The op each kernel ``rows`` runs as the kernel-stats table names it (object
        array; None entries keep the op of its ``tf_op`` stat), or None where the framework
        names none."""
        return None

    @hook(combine.first)
    def hlo_16bit_percent(self, run) -> float | None:
        """Share of device op time in ops whose compiled program says their output is 16-bit
        floating point, % (ours: XProf reads no shapes); None where the framework's captures
        carry no such program."""
        return None

    # -- hooks added for PyTorch ------------------------------------------------------------
    # Whether a host with a GPU takes its steps from its host step markers, counting its
    # host events beside its device events. XProf's rule (False): such a host's steps come
    # from the device's 'Steps' line and its device events alone.
    host_marks_device_steps: ClassVar[bool] = False

    @hook(combine.first)
    def overview_verdicts(self, run) -> dict | None:
        """The framework's own verdicts on a run's steps, replacing XProf's: a dict of
        :class:`~..overview.OverviewSummary` fields (the ``*_classification`` /
        ``*_statement`` ones and ``summary_next_step``) plus ``recommendations``, the list
        of sentences that leads the overview's advice. None keeps XProf's verdicts."""
        return None

    @hook(combine.chained)
    def device_rows_in_steps(self, run, rows: np.ndarray) -> np.ndarray:
        """Which of the device activity ``rows`` belong to the profiled iterations (what
        :mod:`..gpu_time` counts). Default: all of them."""
        return rows

    @hook(combine.collected)
    def memory_events(self, run) -> pd.DataFrame | None:
        """The framework's own allocator events as rows of schema.MEMORY (``run.memory``
        adds them to the allocator events XProf reads); None where it has none."""
        return None

    # -- hooks added for TPU steps ------------------------------------------------------------
    @hook(combine.collected)
    def device_steps(self, run) -> pd.DataFrame | None:
        """Steps the framework builds from its device cores by rules of its own, as
        schema.STEPS rows (TPU: XProf's TPU step database from each core's 'Steps' and op
        lines); they replace the steps of the step events for the hosts they name. None
        (the default) or an empty frame: the step events' steps alone."""
        return None

    @hook(combine.primary)
    def memory_data_type_names(self) -> dict[int, str] | None:
        """The names of the allocator events' ``data_type`` numbers, in the enum this
        framework's allocators write; an empty name is "not recorded" (shown blank). None:
        TensorFlow's DataType, named as XProf names it (DataTypeString, 0 = "INVALID")."""
        return None

    # -- hooks added for suggestions ----------------------------------------------------------
    @hook(combine.collected)
    def suggestion_rows(self, run) -> pd.DataFrame | None:
        """Rules of the framework's own that fire on the run, as schema.SUGGESTIONS rows
        (``run.suggestions`` adds them to XProf's); None where it has none."""
        return None

    # -- hooks added for collectives (issue 40) ------------------------------------------------
    @hook(combine.collected)
    def collective_ops(self, run) -> pd.DataFrame | None:
        """The device events that run a collective by the framework's own record (XLA: an
        event of a collective HLO instruction), one row each: ``row`` (of run.events),
        ``collective`` (one of :data:`~..analysis.collectives.COLLECTIVE_KINDS`), ``name``
        (the op's), ``communicator`` (its process group or replica groups, '' if unknown),
        ``group_size`` and ``size_bytes`` (float, NaN if unknown). None: the collective
        kernels found by their names alone (:mod:`..analysis.collectives`)."""
        return None


# The class attributes of :class:`Framework` that a run's frameworks answer together, and how
# (rules of :mod:`.combine` on their values, in the frameworks' order).
ATTRIBUTES: dict[str, Callable] = {
    "advice": combine.first_value,
    "op_label": combine.first_value,
    "input_op_types": combine.union,
    "copy_op_types": combine.merged,
    "host_marks_device_steps": combine.any_value,
}


def hooks() -> dict[str, Callable]:
    """Every hook method of :class:`Framework` (name -> method), in declaration order."""
    return {n: m for n, m in vars(Framework).items() if callable(getattr(m, "combine", None))}
