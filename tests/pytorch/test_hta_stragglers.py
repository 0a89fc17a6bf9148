"""``run.straggler_candidates`` against HTA 0.5's ``get_potential_stragglers`` at exact times
(goldens in ``tests/golden/hta/stragglers/`` made by ``scripts/make_hta_straggler_goldens.py``).

Both jobs are built from real ranks: HTA's two sampled ranks of one job, and four ranks made
of them (rank 2 a copy of rank 0, rank 3 a copy of rank 1, both held up from the first NCCL
kernel of step 551 on), each written by the golden script's own helpers."""

from __future__ import annotations

import importlib.util
import json
import pathlib

import numpy as np
import pytest

import tfprof_widgets as tw
from tfprof_widgets import schema

ROOT = pathlib.Path(__file__).resolve().parents[2]
GOLDEN = ROOT / "tests" / "golden" / "hta" / "stragglers"
CHROME = ROOT / "tests" / "data" / "chrome"


def _script():
    path = ROOT / "scripts" / "make_hta_straggler_goldens.py"
    spec = importlib.util.spec_from_file_location("make_hta_straggler_goldens", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def jobs(tmp_path_factory):
    make = _script()
    built = make.jobs()
    runs = {}
    for job, ranks in built.items():
        folder = tmp_path_factory.mktemp(job)
        for rank, trace in ranks:
            make.write_rank(folder, trace, rank)
        runs[job] = tw.load(folder, progress=False)
    return runs


@pytest.mark.parametrize("job", ["two_ranks", "four_ranks_late"])
def test_equals_hta(jobs, job):
    golden = json.loads((GOLDEN / f"{job}.json").read_text())
    got = jobs[job].straggler_candidates
    assert schema.mismatches(got, schema.STRAGGLER_CANDIDATES) == []
    metric = golden["metric"]
    assert got["rank"].tolist() == metric["rank"]
    assert got["step"].tolist() == metric["iteration"]
    assert got["stream"].tolist() == metric["stream"]
    assert got["kernel"].tolist() == metric["name"]
    # HTA's ts is from the steps' earliest event (its normalised time times the mean).
    assert got["start_us"].tolist() == metric["ts"]
    assert got["duration_us"].tolist() == metric["dur"]
    np.testing.assert_allclose(got["normalized_start_time"], metric["normalized_start_time"],
                               rtol=1e-12)  # fmt: skip
    ts = np.asarray(metric["ts"])
    assert got["after_first_us"].tolist() == (ts - ts.min()).tolist()
    candidates = sorted(got.loc[got["is_candidate"], "rank"].unique().tolist())
    assert candidates == sorted(golden["candidates"])


def test_four_ranks_names_the_held_up_copies(jobs):
    got = jobs["four_ranks_late"].straggler_candidates
    assert set(got.loc[got["is_candidate"], "rank"]) == {2, 3}
    assert got["late_in_step"].tolist() == [False, False, True, True]
    # The real rank 1, a candidate of the two-rank job, is not one once two ranks start later.
    two = jobs["two_ranks"].straggler_candidates
    assert set(two.loc[two["is_candidate"], "rank"]) == {0, 1}


def test_one_rank_is_empty():
    """HTA fails on one rank (no spread of durations across ranks): no candidates here."""
    run = tw.load(CHROME / "hta_sampled_rank0.json.gz", progress=False)
    got = run.straggler_candidates
    assert schema.mismatches(got, schema.STRAGGLER_CANDIDATES) == []
    assert not got["is_candidate"].any()
    assert got.empty
