"""HTA's critical path (``TraceAnalysis.critical_path_analysis``) of HTA's own critical-path
test traces and of every bundled Kineto trace, at exact times (HTA 0.5 with
``HTA_DISABLE_NS_ROUNDING=1``), written to ``tests/golden/hta/critical_path/<case>.json.gz`` for
``tests/pytorch/test_critical_path.py``.

    python scripts/make_critical_path_goldens.py [CASE ...]

Each golden holds the annotated window HTA analysed, the path's nodes in order (the event of
each, its name, start and duration in µs from HTA's first event, start or end node), its edges
(weight in µs, HTA's edge type, the event each is attributed to, HTA's ``bound_by``), the total
length (the sum of the weights) and HTA's summary (share of the length by ``bound_by``).
The goldens live in a folder of their own so that ``tests/golden/hta/*.json`` stays the four
analyses of ``scripts/make_hta_goldens.py``. HTA reads a trace directory (and may write beside
what it reads), so each trace is copied into a fresh temporary directory first.
"""

from __future__ import annotations

import argparse
import gzip
import importlib.util
import json
import logging
import os
import pathlib
import re
import shutil
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data" / "chrome"
OUT = ROOT / "tests" / "golden" / "hta" / "critical_path"
_FORWARD = "[param|pytorch.model.alex_net|0|0|0|measure|forward]"
# case -> (trace under tests/data/chrome, annotation, HTA's instance_id). The bundled Kineto
# traces take their last full ProfilerStep (HTA numbers the annotation's events in file
# order: the host's steps come first); a trace without steps, the whole trace (""). Not the
# resnet50_v100 traces: of the old Kineto layout (cat "Runtime"), HTA makes no node of their
# launch calls and stops on an assertion (test_critical_path.py checks ours there).
CASES = {
    "simple_add": ("hta_critical_path/simple_add.json.gz", _FORWARD, 1),
    "alexnet": ("hta_critical_path/alexnet.json.gz", _FORWARD, 1),
    "cuda_event_sync": ("hta_critical_path/cuda_event_sync.json.gz", "ProfilerStep", 0),
    "cuda_event_sync_multi_stream": (
        "hta_critical_path/cuda_event_sync_multi_stream.json.gz",
        "",
        None,
    ),
    "torch_transformer_h100": ("torch_transformer_h100.pt.trace.json.gz", "ProfilerStep", 2),
    "timesformer_h100": ("timesformer_h100.json.gz", "ProfilerStep", 0),
    "hta_sampled_rank0": ("hta_sampled_rank0.json.gz", "ProfilerStep", 0),
    "hta_sampled_rank1": ("hta_sampled_rank1.json.gz", "ProfilerStep", 0),
    "hta_sampled_rank0_triton": ("hta_sampled_rank0_triton.json.gz", "ProfilerStep", 0),
    "eager_b200": ("eager_b200.json.gz", "", None),
    # Made here by with_graph_launch from alexnet (no bundled Kineto trace has a CUDA graph).
    "alexnet_graph": ("hta_critical_path/alexnet_graph.json.gz", _FORWARD, 1),
}
GRAPH_KERNELS = 6  # kernels of alexnet's path that with_graph_launch makes one graph launch


def _hta_under_pandas_3() -> None:
    """Load HTA 0.5's critical path module with the calls that pandas 3 no longer runs
    as HTA means them: ``drop(axis=1, columns=...)`` (refused: both an axis and columns) and
    ``df.col.fillna(v, inplace=True)`` (under copy-on-write it fills a copy and leaves the
    column NaN, which silently drops every CUDA event sync); rewritten to what pandas 2 did."""
    name = "hta.analyzers.critical_path_analysis"
    if name in sys.modules:
        return
    spec = importlib.util.find_spec(name)
    src = pathlib.Path(spec.origin).read_text()
    src = re.sub(r"drop\(\s*axis=1,\s*columns=", "drop(columns=", src)
    fill = r"(\w+)\.(\w+)\.fillna\(([^,]+), inplace=True\)"
    src = re.sub(fill, r'\1["\2"] = \1["\2"].fillna(\3)', src)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    exec(compile(src, spec.origin, "exec"), module.__dict__)


def _event(df, sym, idx: int) -> dict:
    row = df.loc[idx]
    return {"name": sym[int(row["name"])], "ts_us": float(row["ts"]), "dur_us": float(row["dur"])}


def hta_critical_path(path: pathlib.Path, annotation: str, instance_id) -> dict:
    """HTA's critical path of rank 0 of one trace (on a copy of it)."""
    os.environ["HTA_DISABLE_NS_ROUNDING"] = "1"
    _hta_under_pandas_3()
    from hta.trace_analysis import TraceAnalysis

    with tempfile.TemporaryDirectory() as tmp:
        copy = pathlib.Path(tmp) / ("rank0." + path.name)
        shutil.copyfile(path, copy)
        analysis = TraceAnalysis(trace_files={0: str(copy)}, trace_dir=tmp)
        cp, ok = analysis.critical_path_analysis(0, annotation, instance_id)
        assert ok, path
        df, sym = cp.trace_df, cp.sym_table
        nodes = [cp.node_list[n] for n in cp.critical_path_nodes]
        edges = [
            cp.edges[u, v]["object"]
            for u, v in zip(cp.critical_path_nodes, cp.critical_path_nodes[1:])
        ]
        weights = [float(cp.edges[e.begin, e.end]["weight"]) for e in edges]
        attributed = [cp.get_event_attribution_for_edge(e) for e in edges]
        breakdown = cp.get_critical_path_breakdown()
        bound = dict(
            zip(zip(breakdown["event_idx"].fillna(-1), breakdown["type"]), breakdown["bound_by"])
        )
        summary = breakdown.groupby("bound_by")["duration"].sum()
        events = {int(n.ev_idx) for n in nodes} | {int(a) for a in attributed if a is not None}
        return {
            "n_nodes": len(cp.node_list),
            "n_edges": cp.number_of_edges(),
            "length_us": float(sum(weights)),
            "nodes": {
                "event": [int(n.ev_idx) for n in nodes],
                "is_start": [bool(n.is_start) for n in nodes],
                "ts_us": [float(n.ts) for n in nodes],
            },
            "edges": {
                "weight_us": weights,
                "type": [e.type.value for e in edges],
                "event": [-1 if a is None else int(a) for a in attributed],
                "bound_by": [
                    bound.get((-1 if a is None else a, e.type.value), "")
                    for a, e in zip(attributed, edges)
                ],
            },
            "events": {str(i): _event(df, sym, i) for i in sorted(events) if i >= 0},
            "summary_us": {str(k): float(v) for k, v in summary.items()},
        }


def with_graph_launch(path: pathlib.Path, golden: dict, out: pathlib.Path) -> None:
    """``path`` (alexnet) with one real launch sequence made a CUDA graph launch: the
    GRAPH_KERNELS kernels on HTA's critical path (``golden``) from the first
    ``ampere_sgemm`` on (the classifier's linear layers, dropout and ReLU, one stream, one
    thread) become the kernels of one ``cudaGraphLaunch``: the first one's
    ``cudaLaunchKernel`` is renamed so, the others' calls and their flow events are removed,
    and every kernel carries the graph launch's correlation id (as Kineto records a graph's
    kernels). Written to ``out`` (gzip, no timestamp)."""
    with gzip.open(path, "rt") as f:
        trace = json.load(f)
    events = trace["traceEvents"]  # HTA's event index is the position here
    kernels = [
        e
        for e, s in zip(golden["nodes"]["event"], golden["nodes"]["is_start"])
        if s and events[e].get("cat") == "kernel"
    ]
    first = next(i for i, e in enumerate(kernels) if events[e]["name"].startswith("ampere_sgemm"))
    chosen = kernels[first : first + GRAPH_KERNELS]
    corrs = [events[e]["args"]["correlation"] for e in chosen]
    calls = {
        e["args"]["correlation"]: e
        for e in events
        if e.get("cat") == "cuda_runtime" and (e.get("args") or {}).get("correlation") in corrs
    }
    assert all(calls[c]["name"] == "cudaLaunchKernel" for c in corrs), "not all kernel launches"
    graph = corrs[0]
    calls[graph]["name"] = "cudaGraphLaunch"
    gone = set(corrs[1:])
    kept = []
    for e in events:
        args = e.get("args") or {}
        if e.get("cat") == "cuda_runtime" and args.get("correlation") in gone:
            continue
        if e.get("cat") == "ac2g" and e.get("id") in gone:
            continue
        if args.get("correlation") in gone:
            args["correlation"] = args["External id"] = graph
        kept.append(e)
    trace["traceEvents"] = kept
    with open(out, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) as f:
        f.write(json.dumps(trace).encode())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("cases", nargs="*", choices=[[], *CASES], default=[])
    args = parser.parse_args(argv)
    logging.disable(logging.WARNING)
    import hta

    OUT.mkdir(parents=True, exist_ok=True)
    alexnet = CASES["alexnet"]
    with_graph_launch(
        DATA / alexnet[0],
        hta_critical_path(DATA / alexnet[0], *alexnet[1:]),
        DATA / CASES["alexnet_graph"][0],
    )
    for case in args.cases or list(CASES):
        trace, annotation, instance_id = CASES[case]
        golden = {
            "trace": trace,
            "annotation": annotation,
            "instance_id": instance_id,
            "hta_version": getattr(hta, "__version__", "0.5.0"),
        }
        golden |= hta_critical_path(DATA / trace, annotation, instance_id)
        with gzip.open(DATA / trace, "rt") as f:  # HTA's rank is its key, 0; the trace's:
            golden["trace_rank"] = json.load(f).get("distributedInfo", {}).get("rank", 0)
        out = OUT / f"{case}.json.gz"
        with open(out, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) as f:
            f.write((json.dumps(golden, indent=None, sort_keys=True) + "\n").encode())
        print(out.relative_to(ROOT), golden["length_us"], len(golden["nodes"]["event"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
