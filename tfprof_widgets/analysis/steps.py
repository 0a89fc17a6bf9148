"""Step time and its breakdown, as TensorBoard's overview page and pod viewer show them.

For each step (a ``group_id``) the events grouped into it are classified into XProf's event
types (host compute, waiting for input, kernel launch, device compute, copies, ...). Where
events overlap, on any thread or device, the instant counts once, for the highest-priority
type active then (XProf's priorities: device waiting for host beats compute beats host work).
Time inside the step that no event covers is "all others". Everything is clipped to the
step's time, which is its longest host step marker (or its device step, for GPU runs whose
host marker does not contain the device step).

``step_breakdown(run)`` keeps every step; XProf's overview and input-pipeline pages drop the
first and the last step of a capture that has more than five (they are usually cut by the
capture window), and ``overview_steps(steps)`` does the same.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd

from .. import schema, stat_columns
from .event_index import event_line_ids, event_plane_rows, on_device
from .grouping import function_call_markers
from .inputs import per_run
from .nesting import to_ps
from .tf_ops import STEP_INFO_LINE_ID, event_names, is_derived_line

# XProf drops a host's first and last step from its averages when it has more steps than
# this (kDropIncomplteteStepThreshold in xprof's step_events_to_steps_db.cc).
DROP_EDGE_STEPS_ABOVE = 5

# XProf's EventType values: a higher number wins where events overlap.
UNKNOWN_TIME = 0
HOST_COMPUTE = 10
HOST_PREPROCESS = 20
HOST_POSTPROCESS = 30
HOST_BATCH_FORMATION = 40
HOST_RUNTIME = 50
HOST_COMPILE = 60
HOST_TO_HOST = 70
HOST_TO_DEVICE = 80
HOST_PREPARE = 90
DEVICE_COLLECTIVES = 100
HOST_WAIT_INPUT = 110
DEVICE_TO_DEVICE = 120
DEVICE_TO_HOST = 130
DEVICE_COMPUTE_32 = 140
DEVICE_COMPUTE_16 = 150
DEVICE_WAIT_DEVICE = 160
DEVICE_WAIT_HOST = 170
EVENT_TYPES = {
    UNKNOWN_TIME: "unknown",
    HOST_COMPUTE: "host_compute",
    HOST_PREPROCESS: "host_preprocess",
    HOST_POSTPROCESS: "host_postprocess",
    HOST_BATCH_FORMATION: "host_batch_formation",
    HOST_RUNTIME: "host_runtime",
    HOST_COMPILE: "host_compile",
    HOST_TO_HOST: "host_to_host",
    HOST_TO_DEVICE: "host_to_device",
    HOST_PREPARE: "host_prepare",
    DEVICE_COLLECTIVES: "device_collectives",
    HOST_WAIT_INPUT: "host_wait_input",
    DEVICE_TO_DEVICE: "device_to_device",
    DEVICE_TO_HOST: "device_to_host",
    DEVICE_COMPUTE_32: "device_compute_32",
    DEVICE_COMPUTE_16: "device_compute_16",
    DEVICE_WAIT_DEVICE: "device_wait_device",
    DEVICE_WAIT_HOST: "device_wait_host",
}

# The categories TensorBoard shows (step-time graph and overview), from the event types.
CATEGORIES = {
    "device_compute_us": (DEVICE_COMPUTE_16, DEVICE_COMPUTE_32),
    "device_to_device_us": (DEVICE_TO_DEVICE, DEVICE_WAIT_DEVICE),
    "device_collectives_us": (DEVICE_COLLECTIVES,),
    "host_compute_us": (HOST_COMPUTE,),
    "kernel_launch_us": (HOST_PREPARE,),
    "input_us": (HOST_WAIT_INPUT, HOST_TO_DEVICE, DEVICE_WAIT_HOST),
    "output_us": (DEVICE_TO_HOST,),
    "compile_us": (HOST_COMPILE,),
    "all_others_us": (UNKNOWN_TIME,),
}

# What TensorBoard calls each category.
CATEGORY_LABELS = {
    "device_compute_us": "Device compute",
    "device_to_device_us": "Device to device",
    "device_collectives_us": "Device collectives",
    "host_compute_us": "Host compute",
    "kernel_launch_us": "Kernel launch",
    "input_us": "Input (waiting for data)",
    "output_us": "Output",
    "compile_us": "Compilation",
    "all_others_us": "All others",
}

_NOT_REAL_CPU = ("EagerExecute", "EagerLocalExecute", "EagerKernelExecute", "FunctionRun")
_INFEED_TYPES = ("InfeedEnqueue", "InfeedEnqueueTuple", "InfeedEnqueueTupleOp")


def _is_explicit_marker(names: pd.Series) -> np.ndarray:
    """XProf's explicit host step markers, plus Keras 3's 'Profiled batch' (which XProf 2.24
    does not recognise, so it finds no steps in captures made by the TensorBoard callback)."""
    cats = pd.Series(names.cat.categories.astype(str))
    is_marker = (
        (cats.str.startswith(("train", "test", "TraceContext")) & ~cats.str.contains("/"))
        | (cats == "Profiled batch")
    ).to_numpy()
    codes = names.cat.codes.to_numpy()
    return is_marker[np.maximum(codes, 0)] & (codes >= 0)


def _device_hosts(run) -> set[str]:
    """Hosts whose capture has a GPU or TPU plane (even an empty one): XProf builds their
    steps from device events alone."""
    p = run.planes
    return set(p.loc[p["device_kind"].isin(["GPU", "TPU"]), "host"].astype(str))


def step_events(run) -> pd.DataFrame:
    """Every event that counts toward some step, with XProf's event type; plus the markers.

    Columns: host, group_id, kind ('host_marker', 'device_marker' or 'event'), type (the
    XProf event type), start_ps, end_ps, step. A host whose capture has a GPU plane
    contributes its device events only (XProf's ``ConvertXSpaceToOpStats`` adds host step
    events only when there is no device): markers from the device's 'Steps' line, and
    every event with a correlation id and a group on the device's own lines, kept only for
    groups that the same device also marks. Other hosts contribute their host events.
    """
    ev = run.events
    n = len(ev)
    group = ev["group_id"].to_numpy(dtype=float, na_value=np.nan)
    device = on_device(run)
    line_id = event_line_ids(run)
    derived = is_derived_line(line_id)
    names = ev["name"]
    codes = names.cat.codes.to_numpy()
    cat_str = pd.Series(names.cat.categories.astype(str))
    grouped = ~np.isnan(group) & (ev["occurrences"].to_numpy() == 1)
    corr, has_corr = stat_columns.numbers(run.stat_store, "correlation_id", n)
    _, has_step_name = stat_columns.strings(run.stat_store, "step_name", n)
    host_name = ev["host"]
    on_device_host = np.isin(
        host_name.cat.codes.to_numpy(),
        [i for i, h in enumerate(host_name.cat.categories.astype(str)) if h in _device_hosts(run)],
    )

    # XProf compares the 64-bit line id itself with kThreadIdStepInfo (-559038737, as TF
    # writes it); a 'Steps' line stored as 0xdeadbeef is derived but holds no markers.
    dev_marker = grouped & device & (line_id == STEP_INFO_LINE_ID)
    dev_event = grouped & device & ~derived & has_corr & (corr >= 0) & on_device_host
    dev_marker, dev_event = _marked_on_the_same_device(run, group, dev_marker, dev_event)

    host = grouped & ~device & ~on_device_host
    explicit = _is_explicit_marker(names) & host
    implicit = host & has_step_name & ~explicit
    if not (explicit | implicit).any():  # no markers: the repeated tf.function calls
        implicit = function_call_markers(ev, run.stat_store, host)[0]
    cat_not_real = cat_str.str.startswith(_NOT_REAL_CPU).to_numpy()
    real = host & ~explicit & ~implicit & ~cat_not_real[codes] & ~_is_explicit_marker(names)

    op_types = event_names(run)["op_type"].to_numpy()  # per name category
    types = _host_types(names, op_types)
    dtypes = _device_types(names, op_types, run.stat_store)
    start = to_ps(ev["start_us"].to_numpy())
    end = to_ps(ev["end_us"].to_numpy())
    parts = []
    for mask, kind_name, typ in (
        (explicit | implicit, "host_marker", types),
        (dev_marker, "device_marker", dtypes),
        (real, "event", types),
        (dev_event, "event", dtypes),
    ):
        rows = np.flatnonzero(mask)
        parts.append(
            pd.DataFrame(
                {
                    "host": host_name.to_numpy()[rows],
                    "group_id": group[rows].astype(np.int64),
                    "kind": kind_name,
                    "type": typ[rows],
                    "start_ps": start[rows],
                    "end_ps": end[rows],
                    "step": ev["step"].to_numpy(dtype=float, na_value=np.nan)[rows],
                }
            )
        )
    return pd.concat(parts, ignore_index=True)


def _marked_on_the_same_device(run, group, dev_marker, dev_event):
    """XProf's IntersectCombineStepEvents per device: a device's events count for the groups
    it also marks on its 'Steps' line, and its markers only for groups it has events in."""
    plane = event_plane_rows(run).astype(np.int64)
    g = np.nan_to_num(group).astype(np.int64)
    key = plane * (1 << 32) + (g & 0xFFFFFFFF)
    both = np.intersect1d(key[dev_marker], key[dev_event])
    return dev_marker & np.isin(key, both), dev_event & np.isin(key, both)


def _host_types(names: pd.Series, op_types: np.ndarray) -> np.ndarray:
    """XProf's event type of each host event of a capture without a device: compute,
    waiting for input, copies (kernel launches only exist where there is a device, whose
    steps XProf builds from device events alone)."""
    codes = names.cat.codes.to_numpy()
    cat_lower = pd.Series(names.cat.categories.astype(str)).str.lower()
    op_type = op_types[codes]
    types = np.full(len(names), HOST_COMPUTE, np.int16)
    getnext = cat_lower.str.startswith("iteratorgetnext").to_numpy()[codes]
    types[getnext] = HOST_WAIT_INPUT
    types[op_type == "MemcpyHToH"] = HOST_TO_HOST
    types[np.isin(op_type, ["MemcpyHToD", *_INFEED_TYPES])] = HOST_TO_DEVICE
    return types


def _device_types(names: pd.Series, op_types: np.ndarray, event_stats) -> np.ndarray:
    """XProf's event type of each device event (``ClassifyGpuEvent``): copies by XProf's
    name rule, NCCL collectives, else 16- or 32-bit compute: 16-bit when the ``shape``
    stat (the kernel's tensor shapes) mentions 'half', or, without shapes, when the kernel
    name has 'half' or 'fp16'.

    XProf's copy rule (``ParseTfOpFullname``) knows only the 'MemcpyHToD' spelling, so the
    CUPTI copies of GPU captures ('MemcpyH2D', 'MemcpyD2H') count as device compute, as in
    TensorBoard."""
    n = len(names)
    codes = names.cat.codes.to_numpy()
    cats = pd.Series(names.cat.categories.astype(str))
    shapes, has_shapes = stat_columns.strings(event_stats, "shape", n)
    dtypes = np.full(n, DEVICE_COMPUTE_32, np.int16)
    half = cats.str.contains("half|fp16").to_numpy()[codes]
    shape_half = np.zeros(n, bool)
    if has_shapes.any():
        shape_half[has_shapes] = (
            pd.Series(shapes[has_shapes], dtype=object)
            .astype(str)
            .str.contains("half", regex=False)
            .to_numpy()
        )
    has_shapes &= pd.Series(shapes, dtype=object).fillna("").astype(str).to_numpy() != ""
    dtypes[np.where(has_shapes, shape_half, half)] = DEVICE_COMPUTE_16
    dtypes[cats.str.lower().str.startswith("nccl").to_numpy()[codes]] = DEVICE_COLLECTIVES
    op_type = op_types[codes]
    dtypes[op_type == "MemcpyHToD"] = HOST_TO_DEVICE
    dtypes[op_type == "MemcpyDToH"] = DEVICE_TO_HOST
    dtypes[op_type == "MemcpyDToD"] = DEVICE_TO_DEVICE
    return dtypes


def _step_spans(se: pd.DataFrame) -> pd.DataFrame:
    """Per (host, group): the step's time span, by XProf's StepTime rule."""

    def longest(kind):
        m = se[se["kind"] == kind]
        if not len(m):
            return pd.DataFrame(
                {
                    "host": pd.Series(dtype=object),
                    "group_id": pd.Series(dtype=np.int64),
                    **{f"{kind}_{c}": pd.Series(dtype=float) for c in ("s", "e", "step")},
                }
            )
        # The first of the longest, as StepDetails::StepTime keeps a marker only when it is
        # strictly longer than the one it has.
        m = m.assign(d=m["start_ps"] - m["end_ps"]).sort_values("d", kind="stable")
        m = m.drop_duplicates(["host", "group_id"], keep="first")
        return m[["host", "group_id", "start_ps", "end_ps", "step"]].rename(
            columns={"start_ps": f"{kind}_s", "end_ps": f"{kind}_e", "step": f"{kind}_step"}
        )

    h, d = longest("host_marker"), longest("device_marker")
    spans = h.merge(d, on=["host", "group_id"], how="outer")
    hs = spans["host_marker_s"].to_numpy(dtype=float)
    he = spans["host_marker_e"].to_numpy(dtype=float)
    ds = spans["device_marker_s"].to_numpy(dtype=float)
    de = spans["device_marker_e"].to_numpy(dtype=float)
    with np.errstate(invalid="ignore"):  # NaN where a step has no marker of one kind
        use_host = np.isnan(ds) | (~np.isnan(hs) & (hs <= ds) & (he >= de))
    spans["start_ps"] = np.where(use_host, hs, ds)
    spans["end_ps"] = np.where(use_host, he, de)
    spans["step"] = (
        spans["host_marker_step"].fillna(spans["device_marker_step"]).fillna(spans["group_id"])
    )
    spans = spans.dropna(subset=["start_ps"])
    spans["start_ps"] = spans["start_ps"].astype(np.int64)
    spans["end_ps"] = spans["end_ps"].astype(np.int64)
    return spans[["host", "group_id", "step", "start_ps", "end_ps"]]


def _non_overlapped(ev: pd.DataFrame, n_steps: int) -> np.ndarray:
    """Time per (step index, event type) where that type was the highest active one.

    ``ev`` has step index ``k``, ``type`` and clipped ``start_ps``/``end_ps``. A sweep over
    all boundaries at once: per-type active counts are running sums within each step."""
    type_codes = np.array(sorted(EVENT_TYPES))
    out = np.zeros((n_steps, len(type_codes)), np.int64)
    if not len(ev):
        return out
    t_idx = np.searchsorted(type_codes, ev["type"].to_numpy())
    k = ev["k"].to_numpy()
    times = np.concatenate([ev["start_ps"].to_numpy(), ev["end_ps"].to_numpy()])
    steps = np.concatenate([k, k])
    tcol = np.concatenate([t_idx, t_idx])
    delta = np.concatenate([np.ones(len(ev), np.int64), -np.ones(len(ev), np.int64)])
    order = np.lexsort((delta, times, steps))  # ends before starts at equal times
    times, steps, tcol, delta = times[order], steps[order], tcol[order], delta[order]
    counts = np.zeros((len(times), len(type_codes)), np.int32)
    counts[np.arange(len(times)), tcol] = delta
    np.cumsum(counts, axis=0, out=counts)
    # Highest active type after each boundary, held until the next boundary of that step.
    active = counts > 0
    top = np.where(active.any(axis=1), len(type_codes) - 1 - np.argmax(active[:, ::-1], axis=1), 0)
    seg = np.diff(times)
    same_step = steps[1:] == steps[:-1]
    np.add.at(out, (steps[:-1][same_step], top[:-1][same_step]), seg[same_step])
    return out


@dataclasses.dataclass
class StepDb:
    """XProf's step database of a run: the steps (schema.STEPS) and, per host, the time each
    precision of device compute took over every step group (schema.DEVICE_PRECISION, the
    overview's 16/32-bit shares)."""

    steps: pd.DataFrame
    precision: pd.DataFrame


@per_run
def step_db(run) -> StepDb:
    """The steps of a run and its device-compute precision, computed once per run.

    A step is kept when it is well formed as XProf requires (ConvertStepDetailsToStepInfo):
    on a host with a device some device compute happened in its group, on other hosts some
    host compute did. The precision shares come from every group's events, unclipped and
    before that filter (ComputePrecisionStats over the non-overlapped step events).
    """
    se = step_events(run)
    ev = se[se["kind"] == "event"]
    # Each (host, group)'s events without clipping: what decides well-formedness and
    # precision.
    groups = ev[["host", "group_id"]].drop_duplicates(ignore_index=True)
    groups["g"] = np.arange(len(groups))
    by_group = _non_overlapped(
        ev.merge(groups, on=["host", "group_id"]).rename(columns={"g": "k"}), len(groups)
    )
    col = {t: i for i, t in enumerate(sorted(EVENT_TYPES))}
    precision = (
        pd.DataFrame(
            {
                "host": groups["host"],
                "device_compute_16_us": by_group[:, col[DEVICE_COMPUTE_16]] / 1e6,
                "device_compute_32_us": by_group[:, col[DEVICE_COMPUTE_32]] / 1e6,
            }
        )
        .groupby("host", observed=True, sort=False)
        .sum()
        .reset_index()
    )
    device_hosts = _device_hosts(run)
    groups["well_formed"] = np.where(
        groups["host"].astype(str).isin(device_hosts),
        (by_group[:, col[DEVICE_COMPUTE_16]] + by_group[:, col[DEVICE_COMPUTE_32]]) > 0,
        by_group[:, col[HOST_COMPUTE]] > 0,
    )
    spans = _step_spans(se).merge(
        groups[["host", "group_id", "well_formed"]], on=["host", "group_id"]
    )
    spans = spans[spans["well_formed"]]
    return StepDb(_breakdown(ev, spans), schema.conform(precision, schema.DEVICE_PRECISION))


def step_breakdown(run) -> pd.DataFrame:
    """One row per (host, step) with the step time and its breakdown: schema.STEPS."""
    return step_db(run).steps


def device_precision(run) -> pd.DataFrame:
    """Per host, device compute by precision over every step group (schema.DEVICE_PRECISION):
    XProf's ComputePrecisionStats, not clipped to the steps and before any step is left
    out."""
    return step_db(run).precision


def _breakdown(events: pd.DataFrame, spans: pd.DataFrame) -> pd.DataFrame:
    """Each step's time by category: the events of its group clipped to the step."""
    spans = spans.sort_values(["host", "start_ps"], kind="stable").reset_index(drop=True)
    if not len(spans):
        return schema.empty(schema.STEPS)
    spans["k"] = np.arange(len(spans))
    ev = events.merge(
        spans[["host", "group_id", "k", "start_ps", "end_ps"]],
        on=["host", "group_id"],
        suffixes=("", "_step"),
    )
    ev["start_ps"] = np.maximum(ev["start_ps"], ev["start_ps_step"])
    ev["end_ps"] = np.minimum(ev["end_ps"], ev["end_ps_step"])
    ev = ev[ev["end_ps"] > ev["start_ps"]]
    by_type = _non_overlapped(ev, len(spans))
    type_codes = sorted(EVENT_TYPES)
    step_ps = (spans["end_ps"] - spans["start_ps"]).to_numpy()
    covered = by_type.sum(axis=1) - by_type[:, 0]
    by_type[:, 0] = np.maximum(step_ps - covered, 0)  # time no event covers: all others
    col = {t: by_type[:, i] for i, t in enumerate(type_codes)}
    out = pd.DataFrame(
        {
            "host": spans["host"].astype("category"),
            "step": spans["step"].astype("Int64"),
            "group_id": spans["group_id"].astype("Int32"),
            "start_us": spans["start_ps"] / 1e6,
            "step_time_us": step_ps / 1e6,
        }
    )
    for name, types in CATEGORIES.items():
        out[name] = sum(col[t] for t in types) / 1e6
    out["device_compute_16_us"] = col[DEVICE_COMPUTE_16] / 1e6
    out["device_compute_32_us"] = col[DEVICE_COMPUTE_32] / 1e6
    out["host_wait_input_us"] = col[HOST_WAIT_INPUT] / 1e6
    out["host_to_device_us"] = (col[HOST_TO_DEVICE] + col[DEVICE_WAIT_HOST]) / 1e6
    return out[list(schema.STEPS)]


def overview_steps(steps: pd.DataFrame) -> pd.DataFrame:
    """The steps XProf's overview and input-pipeline pages average over: per host, all but
    the first and the last when the host has more than DROP_EDGE_STEPS_ABOVE steps (they
    are usually cut by the capture window); all of them otherwise, and all of them when
    the steps are TensorBoard's own list (a run without a trace), which it already cut."""
    if steps.attrs.get("edge_steps_dropped"):
        return steps
    keep = []
    for _, g in steps.groupby("host", observed=True, sort=False):
        keep.append(g.iloc[1:-1] if len(g) > DROP_EDGE_STEPS_ABOVE else g)
    return pd.concat(keep) if keep else steps


def per_host_steps(run) -> pd.DataFrame:
    """Step time per host side by side (like XProf's pod viewer), one row per step number:
    see :func:`per_host_table`."""
    return per_host_table(run.steps)


def per_host_table(steps: pd.DataFrame) -> pd.DataFrame:
    """Step time per host side by side, from a steps table (``run.steps``).

    Columns (schema.PER_HOST_STEPS): one per host (step time, µs), ``slowest_host``,
    ``spread_us`` (slowest minus fastest host) and ``bottleneck`` (the largest category of
    the slowest host's step).
    """
    if not len(steps):
        return schema.empty(schema.PER_HOST_STEPS)
    wide = steps.pivot_table(
        index="step", columns="host", values="step_time_us", observed=True, aggfunc="max"
    )
    wide.columns = [str(c) for c in wide.columns]
    hosts = list(wide.columns)
    wide["slowest_host"] = wide[hosts].idxmax(axis=1)
    wide["spread_us"] = wide[hosts].max(axis=1) - wide[hosts].min(axis=1)
    cats = list(CATEGORIES)
    top = steps.set_index(["step", steps["host"].astype(str)])[cats].idxmax(axis=1)
    wide["bottleneck"] = [
        top.get((s, h), "").removesuffix("_us").replace("_", " ")
        for s, h in zip(wide.index, wide["slowest_host"])
    ]
    wide.index = wide.index.astype("Int64")
    wide.index.name = "step"
    return wide


__all__ = [
    "CATEGORIES",
    "EVENT_TYPES",
    "overview_steps",
    "per_host_steps",
    "step_breakdown",
    "step_events",
]
