"""XProf's HLO Stats on TPU, on the synthetic TPU capture shaped like libtpu's
(tests/support/tpu_builder.py), against xprof 2.24's output
(tests/golden/synthetic_tpu/hlo_stats.json)."""

from __future__ import annotations

import numpy as np
from fidelity_figures import rows
from golden_tables import golden, synthetic_tpu_path

import tfprof_widgets as tw


def test_tpu_hlo_stats_are_xprofs_row_by_row():
    """Rule: one row per (program, HLO op) of the cores' op lines, merged across cores;
    category and framework op (the tf_op as is: libtpu writes none, so '' as XProf 2.24
    shows on TPU) from the op's metadata; self time net of the ops nested in it; ordered by
    self time; shares of the cores' time, IDLE included. Program ids are uint64
    fingerprints (the schema's int64 holds their bit pattern)."""
    gold = rows(golden("synthetic_tpu", "hlo_stats"))
    ours = tw.load(synthetic_tpu_path(), progress=False).hlo_stats
    assert len(ours) == len(gold) == 11
    assert ours["hlo_op_name"].astype(str).tolist() == gold["hlo_op_name"].tolist()
    assert ours["category"].astype(str).tolist() == gold["category"].tolist()
    assert ours["tf_op_name"].astype(str).tolist() == gold["tf_op_name"].tolist()
    their_ids = [int(p) for p in gold["program_id"]]
    assert max(their_ids) >= 2**63
    assert ours["program_id"].to_numpy(np.int64).view(np.uint64).tolist() == their_ids
    np.testing.assert_array_equal(ours["occurrences"], gold["occurrences"])
    for col, theirs in (
        ("total_time_us", "total_time"),
        ("total_self_time_us", "total_self_time"),
        ("avg_self_time_us", "avg_self_time"),
        ("self_time_percent", "total_self_time_percent"),
        ("cumulative_self_time_percent", "cumulative_total_self_time_percent"),
    ):
        np.testing.assert_allclose(ours[col], gold[theirs], rtol=5e-3, atol=1e-3, err_msg=col)
