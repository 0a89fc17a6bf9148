"""Stragglers of a distributed job: per step, each rank's step time against the other ranks'.

A *rank* here is what runs one replica of the step: a host (one process; its distributed rank
where the capture names it, Kineto's ``distributedInfo``), or, on a host whose GPUs each mark
the step on their own 'Steps' line (one TensorFlow process driving several GPUs, XProf's
per-device step markers), each such GPU. A host's step time and breakdown are those of
``run.steps``; a GPU's are its own marker's time and its own activity in it
(:func:`unit_steps`).

The rule (ours: HTA's ``get_potential_stragglers`` has no threshold; it always names its
``num_candidates`` ranks, those whose last long NCCL kernel of a step starts latest). Per
step, a rank is a straggler when its step time exceeds the *other* ranks' median by more than
:data:`MAD_K` of their scaled median absolute deviations (1.4826·MAD, the standard deviation
of normal data) and by more than :data:`MIN_SHARE` of that median. Leaving the rank out keeps
a slow rank from raising the median and the spread it is judged by, and with two ranks it
compares each with the other. ``why``: the step-breakdown category in which the rank exceeds
the other ranks' median of that category most (host compute, kernel launch, input, device
compute, collectives, all others = time no event covers...).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .. import schema
from .event_index import STEP_INFO_LINE_ID, event_plane_rows, times_ps
from .event_types import CATEGORIES
from .gpu_time import KINDS, kernel_kinds, stream_activity
from .memo import per_run
from .nesting import interval_union

__all__ = ["MAD_K", "MIN_SHARE", "stragglers", "stragglers_of", "unit_steps"]

# A straggler's step time is above the other ranks' median by more than both of these.
MAD_K = 3.0
MIN_SHARE = 0.05
_MAD_SCALE = 1.4826  # MAD -> standard deviation of normal data
_CATS = list(CATEGORIES)
# A GPU's own activity in its step, by XProf's priority where it overlaps (highest first:
# compute, device-to-host, device-to-device, collectives, host-to-device).
_DEVICE_ORDER = (
    "device_compute_us",
    "output_us",
    "device_to_device_us",
    "device_collectives_us",
    "input_us",
)


def _host_ranks(run) -> dict[str, int]:
    """Per host: the distributed rank its capture names (plane stat ``rank``)."""
    stats = run.plane_stats
    mine = stats[stats["stat"].astype(str) == "rank"]
    ranks = pd.to_numeric(mine["int_value"], errors="coerce")
    return {str(h): int(r) for h, r in zip(mine["host"], ranks) if pd.notna(r)}


def _device_markers(run) -> pd.DataFrame:
    """The step markers of each GPU's own 'Steps' line: host, device (plane row), group_id,
    step, start/end ps; only for hosts where two or more devices mark steps."""
    ev = run.events
    line_ids = run.lines["line_id"].to_numpy()
    on_steps = line_ids[run.event_line_rows] == STEP_INFO_LINE_ID
    kinds = run.planes["device_kind"].astype(str).to_numpy()
    plane = event_plane_rows(run)
    rows = np.flatnonzero(on_steps & (kinds[plane] == "GPU") & ev["group_id"].notna().to_numpy())
    start, end = times_ps(run)
    out = pd.DataFrame(
        {
            "host": ev["host"].to_numpy(object)[rows].astype(str),
            "plane": plane[rows],
            "group_id": ev["group_id"].to_numpy(np.int64, na_value=-1)[rows],
            "step": ev["step"].array[rows],
            "start_ps": start[rows],
            "end_ps": end[rows],
        }
    )
    devices = out.groupby("host")["plane"].transform("nunique")
    out = out[(devices >= 2) & out["step"].notna().to_numpy()]
    # A device may mark a step twice: its longest marker is the step (XProf's StepTime).
    out = out.assign(dur=out["end_ps"] - out["start_ps"]).sort_values("dur", kind="stable")
    out = out.drop_duplicates(["plane", "step"], keep="last").drop(columns="dur")
    return out.sort_values(["host", "plane", "start_ps"], ignore_index=True)


def _device_categories(run, markers: pd.DataFrame) -> np.ndarray:
    """Per marker: its device's activity of the same group inside it, µs per category of
    :data:`_DEVICE_ORDER`, each instant once (the highest category then)."""
    rows = stream_activity(run)
    ev = run.events
    plane = event_plane_rows(run)[rows]
    group = ev["group_id"].to_numpy(np.int64, na_value=-1)[rows]
    names = ev["name"]
    codes = names.cat.codes.to_numpy()[rows]
    kind = kernel_kinds(pd.Series(names.cat.categories))[codes]
    text = pd.Series(names.cat.categories.astype(str))  # once per name, not per event
    memory = kind == KINDS.index("MEMORY")
    h2d = memory & text.str.contains("HtoD|H2D", regex=True).to_numpy()[codes]
    d2h = memory & text.str.contains("DtoH|D2H", regex=True).to_numpy()[codes]
    cat = np.full(len(rows), -1)
    cat[kind == KINDS.index("COMPUTATION")] = 0
    cat[d2h] = 1
    cat[memory & ~h2d & ~d2h] = 2
    cat[kind == KINDS.index("COMMUNICATION")] = 3
    cat[h2d] = 4
    start, end = times_ps(run)
    start, end = start[rows], end[rows]
    out = np.zeros((len(markers), len(_DEVICE_ORDER)))
    key = pd.Series(np.arange(len(rows))).groupby([plane, group]).indices
    for i, m in enumerate(markers.itertuples(index=False)):
        mine = key.get((m.plane, m.group_id), np.empty(0, np.int64))
        s = np.maximum(start[mine], m.start_ps)
        e = np.minimum(end[mine], m.end_ps)
        keep = (e > s) & (cat[mine] >= 0)
        covered = 0
        for c in range(len(_DEVICE_ORDER)):  # time of categories up to c, less those above
            sel = keep & (cat[mine] <= c)
            us, ue = interval_union(s[sel], e[sel])
            total = int((ue - us).sum())
            out[i, c] = (total - covered) / 1e6
            covered = total
    return out


def _device_unit_steps(run, markers: pd.DataFrame, ranks: dict[str, int]) -> pd.DataFrame:
    """One row per (GPU, step) of :func:`_device_markers`, in :func:`unit_steps`' columns."""
    planes = run.planes["plane"].astype(str).to_numpy()
    values = _device_categories(run, markers)
    step_time = (markers["end_ps"] - markers["start_ps"]).to_numpy() / 1e6
    out = pd.DataFrame(
        {
            "host": markers["host"].to_numpy(),
            "rank": pd.array([ranks.get(h) for h in markers["host"]], dtype="Int64"),
            "device": planes[markers["plane"].to_numpy()],
            "step": pd.array(markers["step"], dtype="Int64"),
            "start_us": markers["start_ps"].to_numpy() / 1e6,
            "step_time_us": step_time,
        }
    )
    for c in _CATS:
        out[c] = 0.0
    for j, c in enumerate(_DEVICE_ORDER):
        out[c] = values[:, j]
    out["all_others_us"] = np.maximum(step_time - values.sum(axis=1), 0.0)
    return out


def _unit_labels(host: pd.Series, rank: pd.Series, device: pd.Series) -> np.ndarray:
    """What the views call each unit: 'rank 3' (its host beside it where several hosts share
    a rank), the host, or 'host GPU:4'."""
    host = host.astype(str).to_numpy(object)
    rank = pd.array(rank, dtype="Int64")
    device = device.astype(str).to_numpy(object)
    has = ~np.asarray(pd.isna(rank))
    named = np.where(has, np.array([f"rank {r}" for r in rank.fillna(-1)], object), host)
    # The loader names a rank's host 'rank 3' already ('rank 3 (a.pt)' where two files claim
    # it): that name is the label.
    own = has & np.array([h == n or h.startswith(n + " (") for h, n in zip(host, named)], bool)
    named = np.where(own, host, named)
    # Hosts that name the same rank (two runs of one job loaded together) stay apart.
    hosts_of = pd.Series(host[has]).groupby(named[has]).nunique()
    shared = has & ~own & np.isin(named, hosts_of.index[hosts_of > 1])
    named = np.where(shared, named + " (" + host + ")", named)
    dev = np.array([d.removeprefix("/device:") for d in device], object)
    return np.where(device != "", named + " " + dev, named).astype(object)


@per_run
def unit_steps(run) -> pd.DataFrame:
    """Each rank's steps with their breakdown (schema.STRAGGLERS' unit columns, then
    ``start_us``, ``step_time_us`` and the categories of schema.STEPS): a host's rows of
    ``run.steps``, or on a host whose GPUs mark their own steps, each GPU's (its marker's
    time; its compute, copies and collectives inside it, each instant once; the rest all
    others). Shared by the analyses: not to be changed in place."""
    ranks = _host_ranks(run)
    markers = _device_markers(run)
    steps = run.steps
    by_host = steps[~steps["host"].astype(str).isin(set(markers["host"]))]
    hosts = pd.DataFrame(
        {
            "host": by_host["host"].astype(str).to_numpy(),
            "rank": pd.array([ranks.get(str(h)) for h in by_host["host"]], dtype="Int64"),
            "device": "",
            "step": pd.array(by_host["step"], dtype="Int64"),
            "start_us": by_host["start_us"].to_numpy(float),
            "step_time_us": by_host["step_time_us"].to_numpy(float),
            **{c: by_host[c].to_numpy(float) for c in _CATS},
        }
    )
    parts = [hosts]
    if len(markers):
        parts.append(_device_unit_steps(run, markers, ranks))
    out = pd.concat(parts, ignore_index=True) if len(parts) > 1 else hosts
    out.insert(3, "unit", _unit_labels(out["host"], out["rank"], out["device"]))
    return out


def _others_median(values: np.ndarray) -> np.ndarray:
    """Per element: the median of the others (NaN when alone), from one sort: without the
    element at sorted position i, the others' j-th value is sorted[j] below i, sorted[j + 1]
    from i on."""
    n = len(values)
    if n < 2:
        return np.full(n, np.nan)
    order = np.argsort(values, kind="stable")
    v = values[order]
    i = np.arange(n)
    lo, hi = np.full(n, (n - 2) // 2), np.full(n, (n - 1) // 2)  # the others' middle ones
    med = (v[lo + (lo >= i)] + v[hi + (hi >= i)]) / 2
    out = np.empty(n)
    out[order] = med
    return out


def _others_mad(values: np.ndarray, med: np.ndarray) -> np.ndarray:
    """Per element: the scaled MAD of the others about their median ``med``."""
    n = len(values)
    if n < 2:
        return np.full(n, np.nan)
    others = np.broadcast_to(values, (n, n))[~np.eye(n, dtype=bool)].reshape(n, n - 1)
    return _MAD_SCALE * np.median(np.abs(others - med[:, None]), axis=1)


def stragglers_of(units: pd.DataFrame) -> pd.DataFrame:
    """The straggler test per step of a table of ranks' steps (schema.STRAGGLERS).

    ``units``: one row per (rank, step) with ``host``, ``step``, ``step_time_us`` and the
    category columns of schema.STEPS (``rank``, ``device`` and ``unit`` where known): e.g.
    :func:`unit_steps`, or a pod dataset's ``steps``. A rank that numbers a step twice keeps
    its longer one. See the module's docstring for the rule.
    """
    u = units.copy()
    u["host"] = u["host"].astype(str)
    if "rank" not in u:
        u["rank"] = pd.array([None] * len(u), dtype="Int64")
    if "device" not in u:
        u["device"] = ""
    if "unit" not in u:
        u["unit"] = _unit_labels(u["host"], u["rank"], u["device"])
    u = u[u["step"].notna()].sort_values("step_time_us", ascending=False, kind="stable")
    u = u.drop_duplicates(["unit", "step"]).sort_values(["step", "unit"], ignore_index=True)
    if not len(u):
        return schema.empty(schema.STRAGGLERS)
    t = u["step_time_us"].to_numpy(float)
    cats = u[_CATS].to_numpy(float)
    med_all = np.empty(len(u))
    med_o, mad_o = np.empty(len(u)), np.empty(len(u))
    cat_o = np.empty_like(cats)
    for idx in u.groupby("step", sort=False).indices.values():  # per step: few ranks' rows
        med_all[idx] = np.median(t[idx])
        med_o[idx] = _others_median(t[idx])
        mad_o[idx] = _others_mad(t[idx], med_o[idx])
        for j in range(cats.shape[1]):
            cat_o[idx, j] = _others_median(cats[idx, j])
    threshold = med_o + np.maximum(MAD_K * mad_o, MIN_SHARE * med_o)
    excess = cats - cat_o
    alone = np.isnan(med_o)
    top = np.argmax(np.where(np.isnan(excess), -np.inf, excess), axis=1)
    top_excess = excess[np.arange(len(u)), top]
    has_why = ~alone & (top_excess > 0)
    out = pd.DataFrame(
        {
            "host": u["host"].to_numpy(),
            "rank": pd.array(u["rank"], dtype="Int64"),
            "device": u["device"].astype(str).to_numpy(),
            "unit": u["unit"].astype(str).to_numpy(),
            "step": pd.array(u["step"], dtype="Int64"),
            "step_time_us": t,
            "median_us": med_all,
            "deviation_us": t - med_all,
            "others_median_us": med_o,
            "threshold_us": threshold,
            "is_straggler": ~alone & (t > threshold),
            "why": np.where(has_why, np.array([c.removesuffix("_us") for c in _CATS])[top], ""),
            "why_excess_us": np.where(has_why, top_excess, 0.0),
        }
    )
    return schema.conform(out, schema.STRAGGLERS)


def stragglers(run) -> pd.DataFrame:
    """Per step and rank (a host, or each GPU of a host whose GPUs mark their own steps): its
    step time, the median across ranks, its deviation, the threshold the other ranks set and
    whether it is beyond it, and why (schema.STRAGGLERS)."""
    return stragglers_of(unit_steps(run))
