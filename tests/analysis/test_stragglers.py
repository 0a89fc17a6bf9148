"""Straggler detection per step across ranks (run.stragglers, analysis/stragglers.py).

Real ranks: the two ranks of HTA's sampled NCCL job, and the TF BERT capture whose GPUs 4 and 6
mark their own steps. Where a test needs more ranks or a known straggler it builds them from
those real traces: copies of a real rank under another rank number, one of them with a delay
written into one step (its ProfilerStep marker lengthened and everything after it shifted
later), said in each test.
"""

from __future__ import annotations

import gzip
import json
import pathlib

import numpy as np
import pandas as pd
import pytest

import tfprof_widgets as tw
from tfprof_widgets import schema
from tfprof_widgets.analysis import stragglers as st

DATA = pathlib.Path(__file__).resolve().parents[1] / "data"
CHROME = DATA / "chrome"
BERT = DATA / "bert_8gpu_multi_worker.xplane.pb"
DELAY_US = 100_000.0  # well beyond 5 % of a ~0.62 s step


def _trace(rank: int) -> dict:
    with gzip.open(CHROME / f"hta_sampled_rank{rank}.json.gz") as f:
        return json.load(f)


def _write(folder: pathlib.Path, trace: dict, rank: int) -> None:
    """``trace`` as rank ``rank`` of the job (its distributedInfo says so)."""
    trace = dict(trace, distributedInfo=dict(trace["distributedInfo"], rank=rank))
    with gzip.open(folder / f"rank{rank}.pt.trace.json.gz", "wt") as f:
        json.dump(trace, f)


def _delayed(trace: dict, step: int, delay_us: float) -> dict:
    """The trace with ``delay_us`` of nothing at the end of ProfilerStep#``step``: the marker
    is longer by it and every event that starts at or after the marker's old end starts that
    much later (as a rank held up after its step's work would record it)."""
    events = [dict(e) for e in trace["traceEvents"]]
    marker = next(e for e in events if e.get("name") == f"ProfilerStep#{step}")
    end = marker["ts"] + marker["dur"]
    for e in events:
        if "ts" in e and e["ts"] >= end:
            e["ts"] = e["ts"] + delay_us
    marker["dur"] = marker["dur"] + delay_us
    return dict(trace, traceEvents=events)


@pytest.fixture(scope="module")
def two_ranks(tmp_path_factory):
    folder = tmp_path_factory.mktemp("two_ranks")
    for r in (0, 1):
        (folder / f"rank{r}.pt.trace.json.gz").write_bytes(
            (CHROME / f"hta_sampled_rank{r}.json.gz").read_bytes()
        )
    return tw.load(folder, progress=False)


@pytest.fixture(scope="module")
def four_ranks_one_late(tmp_path_factory):
    """Ranks 0 and 1 of the real job, rank 2 a copy of rank 0, rank 3 a copy of rank 1 held
    up for DELAY_US at the end of step 552."""
    folder = tmp_path_factory.mktemp("four_ranks")
    r0, r1 = _trace(0), _trace(1)
    _write(folder, r0, 0)
    _write(folder, r1, 1)
    _write(folder, r0, 2)
    _write(folder, _delayed(r1, 552, DELAY_US), 3)
    return tw.load(folder, progress=False)


def test_two_real_ranks_every_step_compared_and_none_flagged(two_ranks):
    """Both ranks of HTA's sample in both steps; each compared with the other (the median of
    the others is the other rank's step time); their step times are within 1.3 % of each
    other, below the 5 % floor: no straggler."""
    out = two_ranks.stragglers
    assert list(out.columns) == list(schema.STRAGGLERS)
    assert out[["rank", "step"]].astype(int).values.tolist() == [
        [0, 551], [1, 551], [0, 552], [1, 552]
    ]  # fmt: skip
    steps = two_ranks.steps.set_index([two_ranks.steps["host"].astype(str), "step"])
    for row in out.itertuples():
        assert row.step_time_us == steps.loc[(row.host, row.step), "step_time_us"]
        other = out[(out["step"] == row.step) & (out["rank"] != row.rank)]["step_time_us"].iloc[0]
        assert row.others_median_us == other
        assert row.median_us == (row.step_time_us + other) / 2
        assert row.threshold_us == pytest.approx(other * (1 + st.MIN_SHARE))
    assert not out["is_straggler"].any()
    assert out["unit"].tolist() == ["rank 0", "rank 1", "rank 0", "rank 1"]


def test_why_is_the_category_most_above_the_other_rank(two_ranks):
    """Rank 1's step 552: its device compute (142.4 ms) exceeds rank 0's (104.7 ms) by more
    than any other category does."""
    out = two_ranks.stragglers.set_index(["rank", "step"])
    steps = two_ranks.steps.set_index([two_ranks.steps["host"].astype(str), "step"])
    r1, r0 = steps.loc[("rank 1", 552)], steps.loc[("rank 0", 552)]
    excess = {c: r1[c] - r0[c] for c in st.CATEGORIES}
    assert out.loc[(1, 552), "why"] == "device_compute"
    assert max(excess, key=excess.get) == "device_compute_us"
    assert out.loc[(1, 552), "why_excess_us"] == excess["device_compute_us"]


def test_a_rank_held_up_in_one_step_is_flagged_in_that_step_alone(four_ranks_one_late):
    """Four ranks (real ranks 0 and 1, copies as 2 and 3; rank 3 held up DELAY_US at the end
    of step 552): rank 3 is the straggler of step 552, by the delay, and the extra time is
    time no event covers (all others); step 551 has none."""
    out = four_ranks_one_late.stragglers
    flagged = out[out["is_straggler"]]
    assert flagged[["rank", "step"]].astype(int).values.tolist() == [[3, 552]]
    late = flagged.iloc[0]
    on_time = out[(out["rank"] == 1) & (out["step"] == 552)].iloc[0]
    assert late["step_time_us"] == pytest.approx(on_time["step_time_us"] + DELAY_US)
    assert late["why"] == "all_others"
    units = st.unit_steps(four_ranks_one_late)
    others = units[(units["step"] == 552) & (units["rank"] != 3)]["all_others_us"]
    mine = units[(units["step"] == 552) & (units["rank"] == 3)]["all_others_us"].iloc[0]
    rank1 = units[(units["step"] == 552) & (units["rank"] == 1)]["all_others_us"].iloc[0]
    assert mine == pytest.approx(rank1 + DELAY_US)  # the delay, all of it idle
    assert late["why_excess_us"] == pytest.approx(mine - np.median(others))
    assert late["median_us"] == pytest.approx(np.median(out[out["step"] == 552]["step_time_us"]))
    assert late["deviation_us"] == pytest.approx(late["step_time_us"] - late["median_us"])


def test_gpus_that_mark_their_own_steps_are_the_ranks():
    """The TF BERT capture: one host whose GPUs 4 and 6 each mark step 0 on their own 'Steps'
    line. Each GPU is a rank with its own marker's time; GPU 6 (21.31 ms) is 7.3 % behind GPU
    4 (19.87 ms) and flagged, its extra time idle (all others). The GPU whose marker is the
    host's step has the host's time no event covers, and the same covered time."""
    run = tw.load(BERT, progress=False)
    out = run.stragglers.set_index("device")
    assert list(out.index) == ["/device:GPU:4", "/device:GPU:6"]
    assert out["step_time_us"].tolist() == pytest.approx([19865.491, 21310.352])
    assert out["is_straggler"].tolist() == [False, True]
    assert out.loc["/device:GPU:6", "why"] == "all_others"
    assert out.loc["/device:GPU:6", "unit"] == "34.83.195.179:6003 GPU:6"
    host = run.steps.iloc[0]
    gpu6 = st.unit_steps(run).set_index("device").loc["/device:GPU:6"]
    assert gpu6["all_others_us"] == pytest.approx(host["all_others_us"])
    assert gpu6[list(st.CATEGORIES)].sum() == pytest.approx(host[list(st.CATEGORIES)].sum())


def test_a_lone_rank_is_never_a_straggler():
    run = tw.load(CHROME / "torch_transformer_h100.pt.trace.json.gz", progress=False)
    out = run.stragglers
    assert len(out) == len(run.steps) and not out["is_straggler"].any()
    assert out["threshold_us"].isna().all() and (out["why"] == "").all()


def test_the_rule_on_a_pod_steps_table_and_its_threshold(two_ranks):
    """``stragglers_of`` takes any steps table (a pod dataset's): eight hosts from the real
    ranks' steps, one of them 8 % slower in every category: flagged by the 5 % floor (the
    others' MAD is 0), with a threshold of exactly the others' median + 5 %."""
    base = two_ranks.steps[two_ranks.steps["host"].astype(str) == "rank 0"]
    cats = list(st.CATEGORIES)
    parts = []
    for h in range(8):
        part = base.assign(host=f"host{h}")
        if h == 5:
            part[["step_time_us", *cats]] = part[["step_time_us", *cats]] * 1.08
        parts.append(part)
    out = st.stragglers_of(pd.concat(parts, ignore_index=True))
    flagged = out[out["is_straggler"]]
    assert set(flagged["host"]) == {"host5"} and len(flagged) == 2
    others = base.set_index("step")["step_time_us"]
    assert flagged.set_index("step")["threshold_us"].tolist() == pytest.approx(
        (others * (1 + st.MIN_SHARE)).tolist()
    )
    assert set(flagged["why"]) == {"host_compute"}  # the largest category, 8 % more of it
    assert out["rank"].isna().all() and (out["unit"] == out["host"]).all()


def test_the_mad_term_keeps_a_noisy_job_quiet():
    """Ranks whose step times spread widely: one 6 % above the others' median is within 3
    scaled MADs of them, so not flagged; far beyond them it is."""
    times = [100.0, 90.0, 110.0, 95.0, 105.0, 112.0]
    frame = pd.DataFrame(
        {"host": [f"h{i}" for i in range(6)], "step": 1, "step_time_us": times}
        | {c: 0.0 for c in st.CATEGORIES}
    )
    frame["all_others_us"] = frame["step_time_us"]
    assert not st.stragglers_of(frame)["is_straggler"].any()
    frame.loc[5, ["step_time_us", "all_others_us"]] = 160.0
    assert st.stragglers_of(frame)["is_straggler"].tolist() == [False] * 5 + [True]


def test_the_others_median_is_the_median_of_the_others(four_ranks_one_late):
    """Each rank's others_median_us (computed from one sort per step) is np.median of the other
    ranks' step times, ties included (ranks 0 and 2 are copies), and so are the categories'
    medians that ``why`` is measured from."""
    out = four_ranks_one_late.stragglers
    units = st.unit_steps(four_ranks_one_late)
    for row in out.itertuples():
        others = units[(units["step"] == row.step) & (units["unit"] != row.unit)]
        assert row.others_median_us == np.median(others["step_time_us"])
        mine = units[(units["step"] == row.step) & (units["unit"] == row.unit)].iloc[0]
        if row.why:
            col = row.why + "_us"
            assert row.why_excess_us == pytest.approx(mine[col] - np.median(others[col]))


def test_hosts_that_name_the_same_rank_stay_apart(tmp_path):
    """Rank 1's real trace twice (its copy as another file, the same distributedInfo rank):
    two ranks of their own, named with their hosts, each compared with the other."""
    for name in ("a", "b"):
        (tmp_path / f"{name}.pt.trace.json.gz").write_bytes(
            (CHROME / "hta_sampled_rank1.json.gz").read_bytes()
        )
    out = tw.load(tmp_path, progress=False).stragglers
    assert sorted(set(out["unit"])) == ["rank 1 (a.pt)", "rank 1 (b.pt)"]
    assert len(out) == 4 and (out["others_median_us"] == out["step_time_us"]).all()
