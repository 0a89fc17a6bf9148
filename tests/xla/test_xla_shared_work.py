"""The XLA analyses share their work within a run without changing what they give: each
program's HloProto is decoded once per run, the cost model runs per program and only on the
programs a table asks for, and the column helpers (xla/columns.py) give what pandas' own
conversions give. Each test states the rule it checks."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from conftest import ROOT

import tfprof_widgets as tw
from tfprof_widgets import schema
from tfprof_widgets.frameworks.xla import columns, cost
from tfprof_widgets.readers.xspace import hlo

NOGRAPHS = ROOT / "tests" / "data" / "xplane_h100_jax" / "jax_cnn_nographs.xplane.pb"


@pytest.fixture(scope="module")
def run():
    return tw.load(NOGRAPHS, progress=False)


def test_each_program_is_decoded_once_per_run(monkeypatch):
    """Rule: run.hlo_instructions tabulates run.hlo_modules (one decode of the 16 programs
    for the table and the cost model), and equals the table decoded on its own."""
    calls = []
    real = hlo.program_protos
    monkeypatch.setattr(hlo, "program_protos", lambda ms: calls.append(1) or real(ms))
    fresh = tw.load(NOGRAPHS, progress=False)
    table = fresh.hlo_instructions
    assert len(fresh.hlo_modules) == 16 and len(calls) == 1
    pd.testing.assert_frame_equal(table, hlo.hlo_instructions(fresh.metadata_stats))


def test_the_cost_model_of_some_programs_is_their_rows_of_all(run):
    """Rule: cost.program_costs of some programs are instruction_costs' rows of them, in
    order; costs_by_instruction is the same rows as a lookup by (host, program, name)."""
    everything = cost.instruction_costs(run)
    step = {("vm", 9941)}  # jit_step, the program the kernels ran
    some = cost.program_costs(run, step)
    ours = everything[(everything["program_id"] == 9941).to_numpy()].reset_index(drop=True)
    pd.testing.assert_frame_equal(some, ours)
    lookup = cost.costs_by_instruction(run, step)
    assert len(lookup) == len(some) > 100
    row = some.iloc[0]
    assert lookup[("vm", 9941, row["instruction"])] == (
        row["flops"], row["device_flops"], row["bytes_accessed"], row["hbm_bytes"],
        row["flops_modeled"],
    )  # fmt: skip


def test_column_helpers_give_pandas_own_results():
    """Rule: schema.text_categorical() is astype('category') of the text (categories the
    values present, sorted); ranks() orders rows as sorting the text does, categorical or
    not; text() is astype(str); with_columns() is assign() (replaced columns in place, new
    ones after)."""
    values = np.array(["fusion.2", "", "conv", "fusion.10", "conv"], object)
    pd.testing.assert_series_equal(
        pd.Series(schema.text_categorical(values)), pd.Series(values).astype(str).astype("category")
    )
    unsorted = pd.Series(pd.Categorical(values, categories=["fusion.2", "conv", "", "fusion.10"]))
    for column in (unsorted, pd.Series(values), pd.Series(pd.Categorical(values))):
        rank, names = columns.ranks(column)
        assert list(names[rank]) == list(column.astype(str))
        assert list(np.argsort(rank, kind="stable")) == list(
            np.argsort(column.astype(str).to_numpy(object), kind="stable")
        )
        assert list(columns.text(column)) == list(column.astype(str))
    df = pd.DataFrame({"a": [1, 2], "b": pd.Categorical(["x", "y"]), "c": [0.5, 1.5]})
    new = {"b": np.array([3, 4]), "d": np.array([True, False])}
    pd.testing.assert_frame_equal(columns.with_columns(df, new), df.assign(**new))


def test_program_stats_are_read_without_building_the_metadata_tables():
    """Rule: the XLA programs' stats ('Hlo Proto', 'program_id' of /host:metadata) are read
    from the hosts' metadata without building event_metadata / metadata_stats, and are those
    rows of metadata_stats (same order and values); once the tables are built they are read
    from them."""
    fresh = tw.load(NOGRAPHS, progress=False)
    rows = fresh._program_stats()
    assert "metadata_stats" not in fresh.__dict__ and fresh._metadata._built is None
    assert len(fresh.hlo_modules) == 16 and fresh._metadata._built is None
    ms = fresh.metadata_stats
    want = ms[(ms["plane"] == hlo.METADATA_PLANE) & ms["stat"].isin(["Hlo Proto", "program_id"])]
    assert len(rows) == len(want) == 32
    for col in ("host", "plane", "metadata_id", "stat", "int_value"):
        assert list(rows[col]) == list(want[col].astype(object)), col
    assert list(rows["str_value"].astype(object)) == list(want["str_value"].astype(object))
    assert hlo.program_protos(rows) == hlo.program_protos(ms)
    pd.testing.assert_frame_equal(fresh._program_stats(), want)  # built: its own rows


def test_the_frameworks_found_at_load_are_the_runs(monkeypatch):
    """Rule: the frameworks a run's loading finds (to group its events) are its
    framework_of(run), not found a second time; clear_cache() forgets them and the next
    read finds the same ones again."""
    from tfprof_widgets.frameworks import registry

    fresh = tw.load(NOGRAPHS, progress=False)
    calls = []
    real = registry.frameworks_in
    monkeypatch.setattr(registry, "frameworks_in", lambda r: calls.append(1) or real(r))
    found = registry.framework_of(fresh)
    assert not calls and found.name == real(fresh).name == "xla"
    fresh.clear_cache()
    assert registry.framework_of(fresh).name == "xla" and len(calls) == 1
