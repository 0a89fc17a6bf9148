"""The job view (views/job_view.py): a distributed run's ranks side by side, on a Run and on a
pod dataset, in the report where the run has several hosts or ranks.

Real ranks: the two ranks of HTA's sampled NCCL job, and the TF BERT capture whose GPUs 4 and
6 mark their own steps. The three-rank job is built from those real traces: ranks 0 and 1
as recorded, rank 2 a copy of rank 1 with every time stretched by STRETCH (a uniformly slower
rank), said where used.
"""

from __future__ import annotations

import gzip
import json
import pathlib
import types

import numpy as np
import pandas as pd
import pytest

import tfprof_widgets as tw
from tfprof_widgets.report import report_html
from tfprof_widgets.views.job_view import IDLE_LABELS
from tfprof_widgets.views.registry import report_specs

DATA = pathlib.Path(__file__).resolve().parents[1] / "data"
CHROME = DATA / "chrome"
BERT = DATA / "bert_8gpu_multi_worker.xplane.pb"
STRETCH = 1.2


def _copy_ranks(folder: pathlib.Path) -> pathlib.Path:
    for r in (0, 1):
        (folder / f"rank{r}.pt.trace.json.gz").write_bytes(
            (CHROME / f"hta_sampled_rank{r}.json.gz").read_bytes()
        )
    return folder


def _stretched(rank: int, as_rank: int, factor: float) -> dict:
    """Rank ``rank``'s trace as rank ``as_rank``, every start (from the trace's first) and
    every duration ``factor`` times as long."""
    with gzip.open(CHROME / f"hta_sampled_rank{rank}.json.gz") as f:
        trace = json.load(f)
    t0 = min(e["ts"] for e in trace["traceEvents"] if "ts" in e)
    events = []
    for e in trace["traceEvents"]:
        e = dict(e)
        if "ts" in e:
            e["ts"] = t0 + (e["ts"] - t0) * factor
        if "dur" in e:
            e["dur"] = e["dur"] * factor
        events.append(e)
    info = dict(trace["distributedInfo"], rank=as_rank)
    return dict(trace, traceEvents=events, distributedInfo=info)


@pytest.fixture(scope="module")
def two_ranks(tmp_path_factory):
    return tw.load(_copy_ranks(tmp_path_factory.mktemp("job2")), progress=False)


@pytest.fixture(scope="module")
def three_ranks(tmp_path_factory):
    folder = _copy_ranks(tmp_path_factory.mktemp("job3"))
    with gzip.open(folder / "rank2.pt.trace.json.gz", "wt") as f:
        json.dump(_stretched(1, 2, STRETCH), f)
    return tw.load(folder, progress=False)


def test_two_real_ranks_side_by_side_with_htas_overlap_and_idle(two_ranks):
    view = tw.views.job(two_ranks)
    assert view.text().splitlines()[1].startswith("No straggler: in each of the 2 steps")
    figs = view.figures()
    assert set(figs) == {"ranks", "overlap", "idle"}
    bars = figs["ranks"]
    # Average step time per rank, slowest on top: rank 1 (619.3 ms) over rank 0 (615.1 ms).
    assert list(bars.data[0].y) == ["rank 1", "rank 0"]
    total = np.sum([np.asarray(t.x, float) for t in bars.data], axis=0)
    mean = two_ranks.steps.groupby(two_ranks.steps["host"].astype(str))["step_time_us"].mean()
    assert total == pytest.approx(mean[["rank 1", "rank 0"]].to_numpy() / 1e3)
    overlap = figs["overlap"].data[0]
    assert list(overlap.x) == ["rank 0", "rank 1"]
    assert list(overlap.y) == pytest.approx(
        two_ranks.comm_comp_overlap["comp_comm_overlap_percent"].tolist()
    )
    idle = two_ranks.idle_time_breakdown
    want = idle.groupby([idle["rank"].astype(int), "idle_category"], observed=True)[
        "idle_time_us"
    ].sum()
    for trace in figs["idle"].data:
        cat = next(k for k, v in IDLE_LABELS.items() if v == trace.name)
        assert list(trace.y) == pytest.approx([want[(r, cat)] / 1e3 for r in (0, 1)])
    table = view.ranks_table().df
    assert len(table) == 4 and not table["is_straggler"].any()


def test_a_slower_rank_is_named_with_why(three_ranks):
    """Rank 2, rank 1 stretched by 1.2: the straggler of both steps, 20 % behind the others'
    median; its largest category, host compute, grows most."""
    view = tw.views.job(three_ranks)
    verdict = view.verdict()
    assert verdict.startswith("rank 2 is the straggler of step ")
    assert "Host compute" in verdict and "1 more straggling (rank, step)" in verdict
    checked = view.checked
    assert checked[checked["is_straggler"]]["unit"].tolist() == ["rank 2", "rank 2"]
    assert list(view.figures()["ranks"].data[0].y)[0] == "rank 2"
    html = view.html()
    assert "rank 2 is the straggler" in html


def test_on_a_pod_dataset_the_same_ranks_and_verdict(two_ranks, tmp_path):
    """A pod dataset of the two ranks: the view reads each host's steps from the pod's steps
    table and HTA's overlap and idle tables the pod stores per host: the same step times,
    straggler test and overlap as the run's. A source with steps alone says it has no more."""
    tw.convert(two_ranks.path, tmp_path / "pod", workers=1, progress=False)
    with tw.open(tmp_path / "pod") as pod:
        view = tw.views.job(pod)
        mine = view.checked.set_index(["host", "step"])
        run_view = tw.views.job(two_ranks)
        run = run_view.checked.set_index(["host", "step"])
        cols = ["step_time_us", "median_us", "threshold_us", "is_straggler", "why"]
        pd.testing.assert_frame_equal(mine[cols], run[cols])
        assert set(view.figures()) == {"ranks", "overlap", "idle"}
        pct = "comp_comm_overlap_percent"
        assert view.overlap[pct].tolist() == pytest.approx(run_view.overlap[pct].tolist())
    bare = tw.views.job(types.SimpleNamespace(steps=two_ranks.steps))
    assert "keeps each rank's steps only: no overlap or idle" in bare.html()
    bert = tw.views.job(tw.load(BERT, progress=False))
    assert "No GPU stream activity tied to its host launch" in bert.html()


def test_in_the_report_of_several_hosts_and_on_gpus_that_mark_their_own_steps(two_ranks):
    """A report of the two ranks holds the job section; a one-host run's report has none
    (the pod viewer's rule: the ranks of a job are hosts), yet the view called on the BERT
    capture (one host, GPUs 4 and 6 each marking step 0) compares its GPUs and names GPU 6."""
    assert "job" in [s.name for s in report_specs(two_ranks)]
    page = report_html(two_ranks)
    assert '<section id="job">' in page and "No straggler: in each of the 2 steps" in page
    run = tw.load(BERT, progress=False)
    assert "job" not in [s.name for s in report_specs(run)]
    view = tw.views.job(run)
    assert view.verdict().startswith("34.83.195.179:6003 GPU:6 is the straggler of step 0")
    one = tw.load(CHROME / "torch_transformer_h100.pt.trace.json.gz", progress=False)
    assert tw.views.job(one).verdict() == "One rank: nothing to compare."


def test_the_collectives_table_is_drawn_where_the_source_has_one(two_ranks):
    """A source with a ``collectives`` table (here each rank's NCCL kernels of the real trace,
    counted and timed per name) gets it as a table of the view; without one, none."""
    ev = two_ranks.events
    nccl = ev[ev["name"].astype(str).str.startswith("ncclKernel")]
    coll = (
        nccl.groupby([nccl["host"].astype(str), nccl["name"].astype(str)])["dur_us"]
        .agg(["size", "sum"])
        .reset_index()
        .set_axis(["host", "name", "count", "total_time_us"], axis=1)
    )
    coll.insert(1, "rank", pd.array([int(h.split()[1]) for h in coll["host"]], dtype="Int64"))
    source = types.SimpleNamespace(steps=two_ranks.steps, collectives=coll)
    view = tw.views.job(source)
    assert "collectives" in view.tables()
    shown = view.tables()["collectives"].table.df
    assert shown["total_time_us"].sum() == pytest.approx(nccl["dur_us"].sum())
    # A run has its own run.collectives (the NCCL kernels of each rank, with their bytes).
    mine = tw.views.job(two_ranks).tables()["collectives"].table.df
    assert mine["total_time_us"].sum() == pytest.approx(
        two_ranks.collectives["total_time_us"].sum()
    )
    assert mine["total_time_us"].sum() == pytest.approx(nccl["dur_us"].sum())
    bare = types.SimpleNamespace(steps=two_ranks.steps)
    assert "collectives" not in tw.views.job(bare).tables()


def test_anything_else_is_refused():
    with pytest.raises(TypeError, match="job takes a Run or a pod dataset"):
        tw.views.job(object())


def test_htas_straggler_candidates_under_the_verdict(two_ranks):
    """HTA names both ranks of the two-rank job (its two candidates); rank 1's last long NCCL
    kernel of step 551 starts 164.19 ms after rank 0's (run.straggler_candidates)."""
    view = tw.views.job(two_ranks)
    line = (
        "HTA's straggler candidates: rank 1 (its last long NCCL kernel starts 164.19 ms after "
        "the earliest rank's), rank 0 (its last long NCCL kernel starts 0.00 ms after the "
        "earliest rank's)"
    )
    assert view.hta_candidates_line() == line
    c = two_ranks.straggler_candidates
    assert c.loc[c["rank"] == 1, "after_first_us"].tolist() == [164191.0]
    lines = view.text().splitlines()
    assert lines[lines.index(line) - 1] == view.verdict()
    bert = tw.views.job(tw.load(BERT, progress=False))
    assert bert.hta_candidates_line() is None
    assert "HTA's straggler candidates" not in bert.html()
