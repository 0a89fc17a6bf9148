"""HTA's critical path (``tfprof_widgets.frameworks.pytorch.critical_path``) against HTA 0.5's
``critical_path_analysis`` at exact times (``HTA_DISABLE_NS_ROUNDING=1``): the goldens in
``tests/golden/hta/critical_path/`` made by ``scripts/make_critical_path_goldens.py`` from
HTA's own critical-path test traces (``tests/data/chrome/hta_critical_path/``) and the
bundled Kineto traces. Beyond HTA: CUDA-graph launches (alexnet with one real launch sequence
made a graph launch, as no bundled Kineto trace has one) and the old Kineto layout."""

from __future__ import annotations

import gzip
import json
import pathlib
import re
import shutil

import numpy as np
import pandas as pd
import pytest

import tfprof_widgets as tw
from tfprof_widgets import schema, stat_columns
from tfprof_widgets.frameworks.pytorch import critical_path as cp
from tfprof_widgets.frameworks.pytorch import critical_path_graph as graph

ROOT = pathlib.Path(__file__).resolve().parents[1]
CHROME = ROOT / "data" / "chrome"
GOLDEN = ROOT / "golden" / "hta" / "critical_path"
CASES = sorted(p.name.removesuffix(".json.gz") for p in GOLDEN.glob("*.json.gz"))
# HTA's path leaves out the graph's kernels here: test_cuda_graph_kernels_are_on_the_path.
GRAPH = "alexnet_graph"
# HTA's times are µs floats from its first event: a difference carries ~1e-6 µs of rounding.
ABS_US = 1e-5


def _golden(case: str) -> dict:
    with gzip.open(GOLDEN / f"{case}.json.gz", "rt") as f:
        return json.load(f)


@pytest.fixture(scope="module", params=[c for c in CASES if c != GRAPH])
def case(request):
    ref = _golden(request.param)
    run = tw.load(CHROME / ref["trace"], progress=False)
    inst = ref["instance_id"]
    path = cp.critical_path(
        run, ref["trace_rank"], ref["annotation"], tuple(inst) if isinstance(inst, list) else inst
    )
    return run, path, ref


def _hta_events(ref: dict) -> pd.DataFrame:
    """HTA's path events in order of first appearance (name, start, duration)."""
    order = list(dict.fromkeys(ref["nodes"]["event"]))
    ev = ref["events"]
    return pd.DataFrame([ev[str(e)] for e in order])


def test_goldens_cover_htas_traces_and_the_bundled_kineto_traces():
    """Every trace of HTA's critical-path tests and every bundled Kineto trace has its
    golden, but the old-layout resnet50 ones (HTA stops on an assertion there)."""
    runtime = re.compile(rb'"cat": ?"(?:cuda_runtime|Runtime)"')
    traces = {f"hta_critical_path/{p.name}" for p in (CHROME / "hta_critical_path").glob("*.gz")}
    for p in CHROME.glob("*.json.gz"):
        with gzip.open(p) as f:
            if runtime.search(f.read()) and not p.name.startswith("resnet50"):
                traces.add(p.name)
    assert len(traces) >= 11
    assert traces == {_golden(c)["trace"] for c in CASES}


def test_path_is_htas(case):
    """The events the path passes through, in order (name, start, duration), and its
    length are HTA's, at exact times."""
    _, path, ref = case
    theirs = _hta_events(ref)
    ours = path[path["on_path"]]
    assert ours["name"].tolist() == theirs["name"].tolist()
    np.testing.assert_allclose(ours["dur_us"], theirs["dur_us"], rtol=0, atol=ABS_US)
    offset = ours["start_us"].iat[0] - theirs["ts_us"].iat[0]
    np.testing.assert_allclose(ours["start_us"] - offset, theirs["ts_us"], rtol=0, atol=ABS_US)
    assert path.attrs["length_us"] == pytest.approx(ref["length_us"], rel=1e-12, abs=ABS_US)


def test_edges_and_summary_are_htas(case):
    """Each edge of the path (weight, HTA's type, bound_by) and HTA's summary: the length
    by what bounds it (cpu_bound, gpu_compute_bound, launch and kernel-kernel overhead)."""
    _, path, ref = case
    edges = path.attrs["edges"]
    assert graph.EDGE_TYPES[edges["type"].to_numpy()].tolist() == ref["edges"]["type"]
    assert edges["bound_by"].tolist() == ref["edges"]["bound_by"]
    np.testing.assert_allclose(edges["weight_us"], ref["edges"]["weight_us"], rtol=0, atol=ABS_US)
    summary = cp.summarize(path).set_index("bound_by")["critical_us"]
    theirs = {k: v for k, v in ref["summary_us"].items() if k}
    assert sorted(map(str, summary.index)) == sorted(theirs)
    for k, v in theirs.items():
        assert summary[k] == pytest.approx(v, rel=1e-9, abs=ABS_US)


def test_each_events_time_adds_up_to_the_length(case):
    """The rows' critical_us and the launch delays (HTA attributes them to no event) sum to
    the path's length; each row's bound_by is one of HTA's; a kernel's is a GPU one."""
    _, path, _ = case
    total = path["critical_us"].sum() + path["launch_delay_us"].sum()
    assert total == pytest.approx(path.attrs["length_us"], abs=1e-6)
    assert set(path["bound_by"].astype(str)) <= set(cp.RESOURCES)
    kernels = path[path["kind"] == "kernel"]
    assert kernels["bound_by"].astype(str).str.startswith("gpu_").all()
    assert schema.mismatches(path, schema.CRITICAL_PATH) == []


def _graph_kernels(run) -> np.ndarray:
    """Rows of the GPU activity launched by the trace's cudaGraphLaunch."""
    n = len(run.events)
    corr, has = stat_columns.numbers(run.stat_store, "correlation", n)
    names = run.events["name"].astype(str).to_numpy()
    launch = np.flatnonzero(names == "cudaGraphLaunch")
    assert len(launch) == 1
    stream, on_stream = stat_columns.numbers(run.stat_store, "stream", n)
    return np.flatnonzero(has & on_stream & (stream >= 0) & (corr == corr[launch[0]]))


def test_cuda_graph_kernels_are_on_the_path():
    """Beyond HTA: six kernels of alexnet's path made the kernels of one cudaGraphLaunch.
    HTA pairs the call with one of them and drops the five others from its graph, booking
    their time as kernel-kernel overhead (1,225 µs more); ours keeps every kernel on the
    path, and the path and its summary are those of the original trace."""
    ref = _golden(GRAPH)
    run = tw.load(CHROME / ref["trace"], progress=False)
    kernels = _graph_kernels(run)
    assert len(kernels) == 6
    path = cp.critical_path(run, 0, ref["annotation"], ref["instance_id"])
    on = path[path["on_path"]]
    assert set(kernels) <= set(on["event"])
    # HTA's path events by (name, start from the path's first event): it lost five kernels.
    theirs = _hta_events(ref)
    theirs = set(zip(theirs["name"], (theirs["ts_us"] - theirs["ts_us"].iat[0]).round(3)))
    mine = on.set_index("event").loc[kernels]
    mine = zip(mine["name"], (mine["start_us"] - on["start_us"].iat[0]).round(3))
    assert sum(k in theirs for k in mine) == 1
    original = _golden("alexnet")
    assert path.attrs["length_us"] == pytest.approx(original["length_us"])
    ours = cp.summarize(path).set_index("bound_by")["critical_us"].to_dict()
    assert ours == pytest.approx({k: v for k, v in original["summary_us"].items() if k})
    lost = ref["summary_us"]["gpu_kernel_kernel_overhead"] - ours["gpu_kernel_kernel_overhead"]
    assert lost == pytest.approx(ours["gpu_compute_bound"] - ref["summary_us"]["gpu_compute_bound"])
    assert lost > 1000
    graph_launch = path[path["kind"] == "graph_launch"]
    assert graph_launch.empty or (graph_launch["name"] == "cudaGraphLaunch").all()


@pytest.mark.parametrize("trace", ["resnet50_v100_workers0.pt.trace.json.gz"])
def test_old_kineto_layout_has_a_path(trace):
    """Beyond HTA: Kineto's old layout (cat "Runtime", "Operator", "Kernel") makes HTA stop
    on an assertion (its launch calls are no nodes); ours takes them as the new layout's
    (its record_function annotations, named with a '#', as user annotations): the graph of
    the last full step has its kernels and their launch delays; the step is host-bound."""
    run = tw.load(CHROME / trace, progress=False)
    path = run.critical_path
    host, rows, _ = cp._host_of_rank(run, 0)
    t = cp.trace_table(run, rows)
    g = graph.build(t, *cp.window(t, "ProfilerStep", cp.last_full_instance(t, "ProfilerStep")))
    assert (t["stream"][g["node_ev"]] >= 0).sum() > 1000
    assert (g["type"] == graph.LAUNCH).sum() > 100
    kinds = set(path["kind"].astype(str))
    assert {"cpu_op", "launch"} <= kinds
    assert not path[path["on_path"]]["name"].str.contains("#").any()
    assert cp.summarize(path)["bound_by"].astype(str).tolist() == ["cpu_bound"]
    step = run.events[run.events["name"].astype(str) == "ProfilerStep#9"]
    lo, hi = step["start_us"].iat[0], step["end_us"].iat[0]
    host = path[path["kind"] != "kernel"]
    assert host["start_us"].between(lo, hi).all()
    assert 0 < path.attrs["length_us"] <= path["start_us"].add(path["dur_us"]).max() - lo


def test_default_is_the_last_full_step_and_run_keeps_it():
    """run.critical_path: rank 0's last full ProfilerStep (the last but one: #4 of #2..#5);
    its summary's shares sum to 100 %."""
    run = tw.load(CHROME / "torch_transformer_h100.pt.trace.json.gz", progress=False)
    pd.testing.assert_frame_equal(run.critical_path, cp.critical_path(run, 0, "ProfilerStep", 2))
    step = run.events[run.events["name"].astype(str) == "ProfilerStep#4"].iloc[0]
    host = run.critical_path[run.critical_path["kind"] != "kernel"]
    assert host["start_us"].between(step["start_us"], step["end_us"]).all()
    summary = run.critical_path_summary
    assert summary["percent"].sum() == pytest.approx(100)
    assert set(summary["resource"].astype(str)) <= {"cpu", "gpu", "waiting"}


def test_bad_arguments_and_other_frameworks():
    """A rank, annotation or instance the trace lacks is a ValueError (HTA logs and returns
    None); the rank is Kineto's distributedInfo's; a trace without CUDA events has an empty
    path."""
    rank1 = tw.load(CHROME / "hta_sampled_rank1.json.gz", progress=False)
    with pytest.raises(ValueError, match="rank 0"):
        cp.critical_path(rank1, 0)
    assert len(cp.critical_path(rank1, 1))
    with pytest.raises(ValueError, match="no event named"):
        cp.critical_path(rank1, 1, "no_such_annotation", 0)
    with pytest.raises(ValueError, match="instances"):
        cp.critical_path(rank1, 1, "ProfilerStep", 7)
    tf = tw.load(CHROME / "GPU_timeline_01.json.gz", progress=False)
    assert tf.critical_path.empty and list(tf.critical_path.columns) == list(schema.CRITICAL_PATH)
    assert tf.critical_path_summary.empty


def test_each_rank_of_a_job(tmp_path):
    """A folder of two ranks' traces (one job): each rank's path (Kineto's distributedInfo
    names the host's rank) is the one HTA finds on that rank's trace alone."""
    for r in (0, 1):
        shutil.copyfile(
            CHROME / f"hta_sampled_rank{r}.json.gz", tmp_path / f"rank-{r}.pt.trace.json.gz"
        )
    run = tw.load(tmp_path, progress=False)
    for r in (0, 1):
        path = cp.critical_path(run, r, "ProfilerStep", 0)
        ref = _golden(f"hta_sampled_rank{r}")
        assert path["rank"].unique().tolist() == [r]
        assert path.attrs["length_us"] == pytest.approx(ref["length_us"], abs=ABS_US)
        assert path[path["on_path"]]["name"].tolist() == _hta_events(ref)["name"].tolist()
