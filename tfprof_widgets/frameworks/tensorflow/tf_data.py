"""tf.data bottleneck analysis: which iterator of each input pipeline makes it slow.

tf.data records one ``Iterator::...`` event per ``GetNext`` call of each iterator, named by
its path from the root (``Iterator::Root::ForeverRepeat[0]::BatchV2::Map``), with stats
``id`` (the iterator) and ``parent_id``. An event whose name has two parts
(``Iterator::Root``) is a root call, one execution of its pipeline. Within an execution:

* an iterator event's children are the events of iterators whose ``parent_id`` is its
  ``id`` and that overlap it in time (on any thread: async iterators such as Prefetch run
  their input elsewhere);
* self time is duration minus the overlap with its children;
* an iterator is on the critical path ("blocking") when its parent is and they overlap;
* the bottleneck is the blocking iterator with the largest self time in the pipeline's
  slowest execution (XProf's rule; its suggestions per kind of iterator are given too).
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd

from ... import schema, stat_columns
from ...analysis.event_index import timed
from ...analysis.results import Summary

SLOW_CALL_US = 50.0
ASYNC_ITERATORS = {
    "Prefetch",
    "ParallelInterleave",
    "ParallelMap",
    "ParseExample",
    "MapAndBatch",
    "DataService",
    "LegacyParallelInterleave",
    "ParallelBatch",
}
_GUIDE = "https://www.tensorflow.org/guide/data_performance_analysis"
SUGGESTIONS = {
    "slow_source": (
        "1. Check the locality of the host and the input data: ideally the same cell or "
        "region. 2. Parallelize reading from this dataset source (interleave with "
        "num_parallel_calls; see " + _GUIDE + "#source_datasets)."
    ),
    "slow_data_service": (
        "1. Fetching data from tf.data service took a while: profile the tf.data service "
        "worker. 2. See https://www.tensorflow.org/api_docs/python/tf/data/experimental/service."
    ),
    "slow_remote_source": (
        "1. The remote data source is slow: profile its host. 2. See " + _GUIDE + "."
    ),
    "parallel_version": (
        "1. Parallelize this transformation with num_parallel_calls=tf.data.AUTOTUNE "
        "(https://www.tensorflow.org/guide/data_performance#parallelizing_data_transformation). "
        "2. Consider cache() after it if the data fits in memory and nothing upstream is "
        "random (e.g. shuffle). 3. More: " + _GUIDE + "#transformation_datasets."
    ),
    "sequential": (
        "1. This transformation is inherently sequential: add outer parallelism by running "
        "copies of the input pipeline over shards and combining them. 2. Consider cache() "
        "after it if the data fits in memory. 3. More: "
        + _GUIDE
        + "#3_are_you_reaching_high_cpu_utilization."
    ),
    "other": "See " + _GUIDE + " for suggestions.",
}
_BOTTLENECK_TYPES = {
    **{
        k: "slow_source"
        for k in (
            "TFRecord",
            "SSTable",
            "RecordIO",
            "Spanner",
            "TFColumn",
            "SleepwalkRemoteDataset",
            "TextLine",
            "StitchedTimelineDataset",
            "DateKeyDataset",
            "CapacitorProto",
            "LMDB",
            "ExternalDataset",
            "PearModel",
            "FixedLengthRecordV2",
            "FromTensor",
            "TensorSlice",
            "Generator",
            "SyntheticDatasetOp",
        )
    },
    "DataService": "slow_data_service",
    **{
        k: "slow_remote_source"
        for k in (
            "GuzzlerDataGuzzlerRemoteDataset",
            "ReverbDataset",
            "DatasetSampleGame",
            "Courier",
            "ReverbEpisodeDataset",
        )
    },
    "Map": "parallel_version",
    "Interleave": "parallel_version",
    "Filter": "sequential",
    "Batch": "sequential",
    "Unbatch": "sequential",
}


def iterator_kind(long_name: str) -> str:
    """'Iterator::Root::Batch::Map' -> 'Map' (the iterator's own name)."""
    return long_name.split("::")[-1]


def bottleneck_type(kind: str) -> str:
    return _BOTTLENECK_TYPES.get(kind, "other")


@dataclasses.dataclass
class TfDataSummary(Summary):
    """tf.data activity of a run (tables of schema.TF_DATA_ITERATORS, TF_DATA_EXECUTIONS,
    TF_DATA_PIPELINES and TF_DATA_EVENTS); ``to_frame()`` is the pipelines table.

    iterators: host, iterator_id, parent_id, name (its own kind, e.g. 'Map'), long_name,
        depth (1 = root), is_async, pipeline (root iterator id).
    executions: one row per root call: host, pipeline, pipeline_name ('Host:0'), event
        (row in Run.events), start_us, dur_us, is_slow (> 50 µs).
    pipelines: per (host, pipeline): pipeline_name, calls, avg/min/max latency µs, slow_calls.
    events: every iterator event inside an execution with its execution, parent event,
        self_us and is_blocking.
    """

    iterators: pd.DataFrame
    executions: pd.DataFrame
    pipelines: pd.DataFrame
    events: pd.DataFrame

    def to_frame(self) -> pd.DataFrame:
        """One row per input pipeline: its calls and their latency (the pipelines table)."""
        return self.pipelines

    def iterator_stats(
        self, execution: int | None = None, host: str | None = None, pipeline: int | None = None
    ) -> pd.DataFrame:
        """Per iterator in one execution (default: the slowest of the chosen pipeline):
        start_us, total_us, self_us, calls, is_blocking, with name/long_name/depth."""
        if execution is None:
            ex = self.executions
            if host is not None:
                ex = ex[ex["host"] == host]
            if pipeline is not None:
                ex = ex[ex["pipeline"] == pipeline]
            if not len(ex):
                return schema.empty(schema.TF_DATA_ITERATOR_STATS)
            execution = int(ex["dur_us"].idxmax())
        ev = self.events[self.events["execution"] == execution]
        per = (
            ev.groupby("iterator_id", sort=False)
            .agg(
                start_us=("start_us", "min"),
                total_us=("dur_us", "sum"),
                self_us=("self_us", "sum"),
                calls=("dur_us", "size"),
                is_blocking=("is_blocking", "any"),
            )
            .reset_index()
        )
        host_ = self.executions.loc[execution, "host"]
        meta = self.iterators[self.iterators["host"] == host_]
        per = per.merge(
            meta[["iterator_id", "name", "long_name", "depth", "is_async"]],
            on="iterator_id",
            how="left",
        )
        per = per.sort_values(["depth", "start_us"], ignore_index=True)
        return schema.conform(per, schema.TF_DATA_ITERATOR_STATS)


def tf_data(run) -> TfDataSummary:
    """Iterators, pipeline executions and per-event self time / blocking (see TfDataSummary)."""
    df = _iterator_events(run)
    meta = _iterators(df)
    df = df.merge(meta[["host", "iterator_id", "pipeline"]], on=["host", "iterator_id"])
    df = df[df["pipeline"].notna()]
    executions = _executions(df)
    events = _self_and_blocking(_events_in_executions(df, executions))
    pipelines = (
        executions.groupby(["host", "pipeline", "pipeline_name"], sort=False)
        .agg(
            calls=("dur_us", "size"),
            avg_latency_us=("dur_us", "mean"),
            min_latency_us=("dur_us", "min"),
            max_latency_us=("dur_us", "max"),
            slow_calls=("is_slow", "sum"),
        )
        .reset_index()
    )
    return TfDataSummary(
        schema.conform(meta.reset_index(drop=True), schema.TF_DATA_ITERATORS),
        schema.conform(executions, schema.TF_DATA_EXECUTIONS),
        schema.conform(pipelines, schema.TF_DATA_PIPELINES),
        schema.conform(events, schema.TF_DATA_EVENTS),
    )


def _iterator_events(run) -> pd.DataFrame:
    """Every timed ``Iterator::...`` event that carries its iterator's id."""
    ev = run.events
    n = len(ev)
    # Per distinct name, never per event.
    codes = np.asarray(ev["name"].array.codes)
    cats = np.asarray(ev["name"].cat.categories, dtype=object)
    cat_is_it = np.array([str(c).startswith("Iterator::") for c in cats.tolist()], bool)
    is_it = cat_is_it[codes] & timed(run)
    it_id, has_id = stat_columns.numbers(run.stat_store, "id", n)
    parent, has_parent = stat_columns.numbers(run.stat_store, "parent_id", n)
    rows = np.flatnonzero(is_it & has_id)
    long_names = np.array([str(x) for x in cats.tolist()], dtype=object)[codes[rows]]

    def text(col: str) -> np.ndarray:
        c = ev[col].array
        values = np.array([str(x) for x in c.categories.tolist()], dtype=object)
        return values[np.asarray(c.codes)[rows]]

    return pd.DataFrame(
        {
            "row": rows,
            "host": text("host"),
            "line": text("line"),
            "iterator_id": it_id[rows],
            "parent_id": np.where(has_parent[rows], parent[rows], 0),
            "long_name": long_names,
            "depth": np.array([s.count("::") for s in long_names.tolist()], np.int64),
            "start_us": ev["start_us"].to_numpy()[rows],
            "end_us": ev["end_us"].to_numpy()[rows],
            "dur_us": ev["dur_us"].to_numpy()[rows],
        }
    )


def _iterators(df: pd.DataFrame) -> pd.DataFrame:
    """One row per iterator, with its kind and its pipeline (the root its parents lead to)."""
    meta = df.drop_duplicates(["host", "iterator_id"]).copy()
    meta["name"] = [iterator_kind(s) for s in meta["long_name"]]
    meta["is_async"] = meta["name"].isin(ASYNC_ITERATORS)
    parent_of = {(h, i): p for h, i, p in zip(meta["host"], meta["iterator_id"], meta["parent_id"])}
    is_root = meta["depth"] == 1
    roots = set(zip(meta.loc[is_root, "host"], meta.loc[is_root, "iterator_id"]))

    def pipeline_of(h, i):
        for _ in range(100):  # bounded: ids come from a file
            if (h, i) in roots:
                return i
            if (h, i) not in parent_of:
                return None
            i = parent_of[(h, i)]
        return None

    meta["pipeline"] = [pipeline_of(h, i) for h, i in zip(meta["host"], meta["iterator_id"])]
    return meta[
        ["host", "iterator_id", "parent_id", "name", "long_name", "depth", "is_async", "pipeline"]
    ]


def _executions(df: pd.DataFrame) -> pd.DataFrame:
    """Root calls, pipelines named per host in order of first appearance ('Host:0', ...)."""
    root_ev = df[df["depth"] == 1].sort_values(["host", "start_us"])
    names_map: dict = {}
    for h, p in zip(root_ev["host"], root_ev["pipeline"]):
        if (h, p) not in names_map:
            names_map[(h, p)] = f"Host:{sum(1 for k in names_map if k[0] == h)}"
    return pd.DataFrame(
        {
            "host": root_ev["host"].to_numpy(),
            "pipeline": root_ev["pipeline"].astype(np.int64),
            "pipeline_name": [names_map[k] for k in zip(root_ev["host"], root_ev["pipeline"])],
            "event": root_ev["row"].to_numpy(),
            "start_us": root_ev["start_us"].to_numpy(),
            "dur_us": root_ev["dur_us"].to_numpy(),
            "is_slow": root_ev["dur_us"].to_numpy() > SLOW_CALL_US,
        }
    ).reset_index(drop=True)


def _events_in_executions(df: pd.DataFrame, executions: pd.DataFrame) -> pd.DataFrame:
    """Every iterator event with the root call (execution) of its pipeline that overlaps it."""
    parts = []
    for (h, p), ex in executions.groupby(["host", "pipeline"], sort=False):
        evs = df[(df["host"] == h) & (df["pipeline"] == p)]
        starts = ex["start_us"].to_numpy()
        ends = starts + ex["dur_us"].to_numpy()
        k = np.searchsorted(starts, evs["end_us"].to_numpy(), side="left") - 1
        ok = k >= 0
        kk = np.maximum(k, 0)
        ok &= evs["start_us"].to_numpy() < ends[kk]
        ok |= evs["depth"].to_numpy() == 1
        sub = evs[ok].copy()
        sub["execution"] = ex.index.to_numpy()[kk[ok]]
        parts.append(sub)
    return pd.concat(parts, ignore_index=True) if parts else df.assign(execution=0).iloc[:0]


def _self_and_blocking(events: pd.DataFrame) -> pd.DataFrame:
    """Per event: its parent event (the parent iterator's event that overlaps it most, in
    the same execution), self time (duration minus children's overlap) and is_blocking."""
    events = events.reset_index(drop=True)
    events["parent_event"] = -1
    if not len(events):
        events["self_us"] = events["dur_us"]
        events["is_blocking"] = False
        return events
    e = events.reset_index().rename(columns={"index": "eid"})
    pairs = e[["eid", "execution", "parent_id", "start_us", "end_us"]].merge(
        e[["eid", "execution", "iterator_id", "start_us", "end_us"]],
        left_on=["execution", "parent_id"],
        right_on=["execution", "iterator_id"],
        suffixes=("", "_p"),
    )
    pairs["overlap"] = np.minimum(pairs["end_us"], pairs["end_us_p"]) - np.maximum(
        pairs["start_us"], pairs["start_us_p"]
    )
    pairs = pairs[pairs["overlap"] > 0].sort_values("overlap", ascending=False)
    best = pairs.drop_duplicates("eid")
    events.loc[best["eid"].to_numpy(), "parent_event"] = best["eid_p"].to_numpy()
    overlap_sum = best.groupby("eid_p")["overlap"].sum()
    events["self_us"] = events["dur_us"] - events.index.map(overlap_sum).fillna(0.0).to_numpy()
    blocking = events["depth"].to_numpy() == 1
    parent_ev = events["parent_event"].to_numpy()
    for d in sorted(events["depth"].unique()):
        m = (events["depth"].to_numpy() == d) & (parent_ev >= 0)
        blocking[m] = blocking[parent_ev[m]]
    events["is_blocking"] = blocking
    return events


def tf_data_bottleneck(run) -> pd.DataFrame:
    """One row per host input pipeline, slowest first: its slowest call's latency and the
    bottleneck iterator (blocking, largest self time) with a suggestion (columns:
    schema.TF_DATA_BOTTLENECK)."""
    stats = run.tf_data
    rows = []
    for _, p in stats.pipelines.iterrows():
        its = stats.iterator_stats(host=p["host"], pipeline=p["pipeline"])
        blocking = its[its["is_blocking"]]
        if not len(blocking):
            continue
        b = blocking.loc[blocking["self_us"].idxmax()]
        kind = bottleneck_type(b["name"])
        rows.append(
            {
                "host": p["host"],
                "input_pipeline": p["pipeline_name"],
                "max_latency_us": p["max_latency_us"],
                "iterator_name": b["name"],
                "iterator_long_name": b["long_name"],
                "iterator_latency_us": b["self_us"],
                "bottleneck_type": kind,
                "suggestion": SUGGESTIONS[kind],
            }
        )
    out = pd.DataFrame(rows, columns=list(schema.TF_DATA_BOTTLENECK))
    out = out.sort_values("max_latency_us", ascending=False, ignore_index=True)
    return schema.conform(out, schema.TF_DATA_BOTTLENECK)


def tf_data_summary(bottlenecks: pd.DataFrame) -> str:
    """XProf's one-line verdict on the slowest input pipeline."""
    if not len(bottlenecks):
        return (
            "No tf.data activity captured in your profile. If your job uses tf.data, "
            "try to capture a longer profile."
        )
    if bottlenecks["max_latency_us"].iloc[0] > SLOW_CALL_US:
        return (
            "Your profile has a tf.data input pipeline slower than 50 us. For each slow "
            "input pipeline, below shows a bottleneck in the input pipeline and a "
            "suggestion on how to fix it."
        )
    return (
        "Your profile does not have any tf.data input pipeline slower than 50 us. Your "
        "job could be still input bound if this profile didn't capture all workers."
    )


__all__ = [
    "TfDataSummary",
    "bottleneck_type",
    "iterator_kind",
    "tf_data",
    "tf_data_bottleneck",
    "tf_data_summary",
]
