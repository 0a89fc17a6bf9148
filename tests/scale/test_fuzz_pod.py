"""A small seeded run of ``benchmarks/fuzz_pod.py``: one mutation of each kind (manifest and
Parquet) of a converted two-host dataset, each a ProfileError naming a file of the dataset or
an open whose every table reads (the full run: ``--n 2000``)."""

import sys

import pytest
from conftest import ROOT

pytest.importorskip("duckdb")
pytest.importorskip("pyarrow")
sys.path.insert(0, str(ROOT / "benchmarks"))

import fuzz_pod  # noqa: E402


def test_one_mutation_of_each_kind_is_refused_by_name_or_opens():
    got = fuzz_pod.fuzz(n=len(fuzz_pod.KINDS), seed=3, workers=2)
    assert not got["failures"], got["failures"]
    assert sum(sum(c.values()) for c in got["counts"].values()) == len(fuzz_pod.KINDS)
