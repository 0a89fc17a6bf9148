"""The GPU rules of XLA captures read the HLO instructions of the programs that ran only
(run.hlo_instructions_of: on the JAX H100 capture 2 of 16 programs, 493 of 1,864
instructions), labelled by their rows of run.hlo_instructions, so that every result is the
one the whole table gives and the whole table is made only when someone reads it. Each test
states the rule it checks."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from conftest import ROOT

import tfprof_widgets as tw
from tfprof_widgets.analysis import grouping
from tfprof_widgets.frameworks.xla import columns, gpu

DATA = ROOT / "tests" / "data" / "xplane_h100_jax"
NOGRAPHS, GRAPHS = DATA / "jax_cnn_nographs.xplane.pb", DATA / "jax_cnn_graphs.xplane.pb"


def _text(df: pd.DataFrame) -> pd.DataFrame:
    """A table with each categorical as its text (a part's categories are its own)."""
    return df.assign(
        **{c: columns.text(df[c]) for c in df if isinstance(df[c].dtype, pd.CategoricalDtype)}
    )


@pytest.fixture(scope="module")
def runs():
    """The same capture twice: analysed without the whole table, and with it built first."""
    lazy, eager = tw.load(NOGRAPHS, progress=False), tw.load(NOGRAPHS, progress=False)
    assert len(eager.hlo_instructions) == 1864
    for run in (lazy, eager):
        _ = run.overview_summary, run.ops, run.hlo_stats, run.kernels
    return lazy, eager


def test_program_rows_are_the_tables_rows(runs):
    """Rule: run.hlo_program_rows gives each program's rows of run.hlo_instructions (counted
    from the decoded programs, in the table's order)."""
    _, eager = runs
    h = eager.hlo_instructions
    spans = eager.hlo_program_rows
    assert len(spans) == 16 and sum(len(r) for r in spans.values()) == len(h) == 1864
    hosts = columns.text(h["host"])
    for (host, program), rows in spans.items():
        mine = np.flatnonzero((hosts == host) & (h["program_id"].to_numpy() == program))
        assert mine.tolist() == list(rows)


def test_the_analyses_do_not_make_the_whole_table(runs):
    """Rule: the overview, op stats, HLO stats and kernel stats of a GPU capture tabulate the
    programs that ran (2 of 16 here, 493 instructions), not every program."""
    lazy, _ = runs
    assert "hlo_instructions" not in lazy.__dict__
    ran = gpu.ran_instructions(lazy)
    assert len(ran) == 493
    assert sorted(set(ran["program_id"].tolist())) == [8617, 9941]


def test_a_part_is_the_whole_tables_rows(runs):
    """Rule: run.hlo_instructions_of(programs) is the rows of run.hlo_instructions of those
    programs, with their row labels there, whether it is tabulated alone or taken from the
    whole table; text the same (a part's categoricals keep the values present)."""
    lazy, eager = runs
    host = columns.text(eager.hlo_instructions["host"])[0]
    programs = {(host, 9941), (host, 8617), ("nowhere", 1)}  # one the capture has not
    alone, taken = lazy.hlo_instructions_of(programs), eager.hlo_instructions_of(programs)
    want = eager.hlo_instructions.iloc[
        np.concatenate([eager.hlo_program_rows[(host, p)] for p in (8617, 9941)]).astype(int)
    ]
    pd.testing.assert_frame_equal(_text(alone), _text(want.sort_index()))
    pd.testing.assert_frame_equal(taken, want.sort_index())
    assert len(lazy.hlo_instructions_of(set())) == 0


@pytest.mark.parametrize("path", [NOGRAPHS, GRAPHS], ids=["nographs", "graphs"])
def test_results_are_those_of_the_whole_table(path):
    """Rule: every result that reads instructions is the same whether the whole table was
    built first or not (CUDA graphs included: their library kernels go by the schedule)."""
    lazy, eager = tw.load(path, progress=False), tw.load(path, progress=False)
    assert len(eager.hlo_instructions)
    pd.testing.assert_frame_equal(gpu.kernel_instructions(lazy), gpu.kernel_instructions(eager))
    for name in ("ops", "hlo_stats", "kernels", "roofline", "op_profile"):
        pd.testing.assert_frame_equal(getattr(lazy, name), getattr(eager, name), check_exact=True)
    assert repr(lazy.overview_summary) == repr(eager.overview_summary)


def test_joint_codes_are_equal_for_equal_tuples():
    """Rule: grouping's joint codes (flows, launches) are equal exactly where every column's
    values are equal, as a MultiIndex's factorize has them."""
    rng = np.random.default_rng(0)
    cols = [rng.integers(-1, 3, 500), rng.integers(0, 4, 500), rng.integers(0, 1 << 40, 500) % 7]
    got = grouping._joint_codes(*[np.asarray(c, np.int64) for c in cols])
    want, _ = pd.MultiIndex.from_arrays(cols).factorize()
    assert got.min() == 0 and got.max() == want.max()
    same_got = got[:, None] == got[None, :]
    same_want = want[:, None] == want[None, :]
    assert (same_got == same_want).all()
