"""Two runs' operators and kernels compared, HolisticTraceAnalysis (HTA)'s trace diff
(``TraceDiff.compare_traces`` and ``ops_diff``), at exact times.

HTA compares one iteration (step) of one rank of each run: the events of the iteration are
the device's stream work (kernels, copies, memsets: device events with a ``stream`` arg)
whose launching host call (the one carrying the same correlation id) starts inside the
window of the iteration's step marker ([start, end)), and every other event that starts
inside it (any thread; device events without a stream, e.g. GPU annotations, too: HTA reads
them as host events). Each name's events are counted and their durations summed, per run;
the diff is the test run's less the control run's. HTA reads the complete events (instant
events have no duration) with a Kineto ``cat`` other than 'Trace' (the profiler's span).

Beyond HTA: a host event carrying a ``stream`` arg (``torch.compile``'s host-side Triton
launch) is a host event here, counted in the step it starts in; HTA takes it for GPU work
with no launch, in no iteration.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .. import schema, stat_columns
from ..frameworks import framework_of
from .event_index import on_device, times_ps
from .memo import per_run

__all__ = ["compare_traces", "event_iterations", "ops_diff", "shorten_name", "stream_work"]

DEVICES = ("all", "cpu", "gpu")
_MEMORY_PREFIXES = ("Memcpy", "Memset", "dma")
NO_ITERATION = -1


def shorten_name(name: str) -> str:
    """HTA's short name of an operator or kernel (``shorten_name``): template arguments,
    function arguments and return types removed, e.g. ``void at::native::f<float>(int)`` ->
    ``at::native::f``; copies and memsets keep their names."""
    if name.startswith(_MEMORY_PREFIXES) or ("<" not in name and "(" not in name):
        return name
    stack: list[str] = []
    for c in name.replace("->", ""):
        if c in ">)":
            opener = "<" if c == ">" else "("
            while stack and stack[-1] != opener:
                stack.pop()
            if stack:
                stack.pop()
        else:
            stack.append(c)
    return "".join(stack).split(" ")[-1]


@per_run
def _event_cats(run) -> pd.Categorical:
    return stat_columns.categorical(run.stat_store, "cat", len(run.events))


def _read(run) -> np.ndarray:
    """Per event: whether HTA reads it (a complete event, of a category other than 'Trace')."""
    cat = _event_cats(run)
    ok = np.r_[np.asarray(cat.categories.astype(str)) != "Trace", False]
    n = len(run.events)
    phase = stat_columns.categorical(run.stat_store, "ph", n)  # recorded for all but 'X'
    complete = np.r_[np.asarray(phase.categories.astype(str)) == "X", True]
    return ok[np.asarray(cat.codes)] & complete[np.asarray(phase.codes)]


@per_run
def stream_work(run) -> np.ndarray:
    """Per event: device stream work (a device event with a ``stream`` arg), what HTA's
    trace diff calls GPU events; every other event is a host event to it."""
    return on_device(run) & stat_columns.present(run.stat_store, "stream", len(run.events))


def _markers(run, host: np.ndarray) -> np.ndarray:
    """Rows of the step markers among ``host`` (host event rows), by the run's framework."""
    names = run.events["name"].array
    codes = np.asarray(names.codes)[host]
    used, inverse = np.unique(codes, return_inverse=True)
    text = pd.Series(np.asarray(names.categories.astype(str), object)[used], index=used)
    flags = np.asarray(framework_of(run).step_marker_names(text), bool)
    return host[flags[inverse]]


def event_iterations(run, host_name: str) -> np.ndarray:
    """Per event of host ``host_name``: its iteration as HTA's trace diff assigns it (the step
    number; NO_ITERATION where none, and for other hosts' events)."""
    ev = run.events
    n = len(ev)
    out = np.full(n, NO_ITERATION, np.int64)
    hosts = ev["host"].cat
    code = np.flatnonzero(np.asarray(hosts.categories.astype(str)) == host_name)
    mine = np.isin(hosts.codes.to_numpy(), code)
    device = stream_work(run)
    host_rows = np.flatnonzero(mine & ~device)
    markers = _markers(run, host_rows[~on_device(run)[host_rows]])
    step = ev["step"].to_numpy(dtype=np.float64, na_value=np.nan)
    markers = markers[np.isfinite(step[markers])]
    if not len(markers):
        return out
    start, end = times_ps(run)
    markers = markers[np.argsort(start[markers], kind="stable")]
    m_start, m_end = start[markers], end[markers]
    s = start[host_rows]
    i = np.searchsorted(m_start, s, side="right") - 1
    inside = (i >= 0) & (s < m_end[np.maximum(i, 0)])
    out[host_rows[inside]] = step[markers[i[inside]]].astype(np.int64)
    corr, has = stat_columns.numbers(run.stat_store, "correlation", n)
    calls = host_rows[has[host_rows]]
    owner = pd.Series(out[calls], index=corr[calls])
    owner = owner[~owner.index.duplicated(keep="last")]  # the last recorded call, as HTA
    dev = np.flatnonzero(mine & device & has)
    out[dev] = owner.reindex(corr[dev]).fillna(NO_ITERATION).to_numpy(np.int64)
    return out


def _pick_host(run, host: str | None) -> str:
    hosts = sorted(map(str, run.events["host"].unique()))
    if host is None:
        if not hosts:
            raise ValueError("the run has no events to compare")
        return hosts[0]
    if host not in hosts:
        raise ValueError(f"no host {host!r} in the run (hosts: {hosts})")
    return host


def _summary(run, host: str | None, iteration, device: str, short: bool) -> pd.DataFrame:
    """Per name, the events of the iteration(s) and their summed durations (µs)."""
    if device not in DEVICES:
        raise ValueError(f"device must be one of {DEVICES}, not {device!r}")
    read = _read(run)
    if not read.any():  # no Kineto categories (another framework's run): nothing HTA reads
        return pd.DataFrame({"count": [], "total": []}, index=pd.Index([], name="name"))
    it = event_iterations(run, _pick_host(run, host))
    found = np.unique(it[it != NO_ITERATION])
    if iteration is None:
        if not len(found):
            raise ValueError("the run has no iteration (step marker) to compare")
        wanted = found[:1]
    else:
        wanted = np.atleast_1d(np.asarray(iteration, np.int64))
        missing = np.setdiff1d(wanted, found)
        if len(missing):
            raise ValueError(f"no iteration {missing.tolist()} (iterations: {found.tolist()})")
    keep = np.isin(it, wanted) & read
    if device != "all":
        keep &= stream_work(run) == (device == "gpu")
    rows = np.flatnonzero(keep)
    ev = run.events
    names = ev["name"].array
    codes = np.asarray(names.codes)[rows]
    text = np.asarray(names.categories.astype(str), object)
    if short:
        text = np.array([shorten_name(t) for t in text], object)
    start, end = times_ps(run)
    df = pd.DataFrame({"name": text[codes], "dur": (end[rows] - start[rows]) / 1e6})
    return df.groupby("name").agg(count=("dur", "size"), total=("dur", "sum"))


def compare_traces(
    control,
    test,
    control_host: str | None = None,
    test_host: str | None = None,
    control_iteration: int | list[int] | None = None,
    test_iteration: int | list[int] | None = None,
    device: str = "all",
    use_short_name: bool = False,
) -> pd.DataFrame:
    """Each operator and kernel name of two runs with its count and total time in each and
    their differences (TRACE_DIFF), HTA's ``TraceDiff.compare_traces``: one host (rank) of
    each run, default the first by name; the given iteration(s) (step numbers), default the
    first; ``device`` 'all', 'cpu' (host events) or 'gpu' (stream work); names or HTA's
    short names (:func:`shorten_name`). Sorted by name."""
    a = _summary(control, control_host, control_iteration, device, use_short_name)
    b = _summary(test, test_host, test_iteration, device, use_short_name)
    m = a.add_suffix("_a").join(b.add_suffix("_b"), how="outer").sort_index().fillna(0)
    out = pd.DataFrame({"name": m.index.astype(str)})
    out["control_count"] = m["count_a"].to_numpy(np.int64)
    out["test_count"] = m["count_b"].to_numpy(np.int64)
    out["control_total_us"] = m["total_a"].to_numpy(np.float64)
    out["test_total_us"] = m["total_b"].to_numpy(np.float64)
    out["diff_count"] = out["test_count"] - out["control_count"]
    out["diff_us"] = out["test_total_us"] - out["control_total_us"]
    d = out["diff_count"].to_numpy()
    out["change"] = np.where(d > 0, "+", np.where(d < 0, "-", "="))
    return schema.conform(out, schema.TRACE_DIFF)


def ops_diff(control, test, **kwargs) -> dict[str, list[str]]:
    """HTA's ``TraceDiff.ops_diff``: the names of :func:`compare_traces` (same arguments) by
    change: 'added' (only in the test run), 'deleted' (only in the control run),
    'increased', 'decreased' and 'unchanged' (in both; by count)."""
    df = compare_traces(control, test, **kwargs)
    a, b, d = (df[c].to_numpy() for c in ("control_count", "test_count", "diff_count"))
    names = df["name"].to_numpy(object)
    groups = {
        "added": (a == 0) & (b > 0),
        "deleted": (a > 0) & (b == 0),
        "increased": (a > 0) & (d > 0),
        "decreased": (b > 0) & (d < 0),
        "unchanged": (b > 0) & (d == 0),
    }
    return {k: names[v].tolist() for k, v in groups.items()}
