"""One meaning per name for a run's step counts (issue 42 item 4): ``OverviewSummary.n_steps``
is the count of steps the overview averages over as every text counts steps (distinct step
numbers, ``run.step_count.averaged``), not the host-step rows averaged, which a multi-host run
has more of."""

from __future__ import annotations

import warnings

from conftest import SAMPLES

import tfprof_widgets as tw
from tfprof_widgets.analysis.steps import overview_steps


def test_overview_n_steps_counts_steps_not_host_rows():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        run = tw.load(SAMPLES / "gpu_shaped", progress=False)
    kept = overview_steps(run.steps)
    assert run.step_count.hosts == 2
    assert len(kept) == 2 * kept["step"].nunique()  # each kept step on both hosts
    o = run.overview_summary
    assert o.n_steps == run.step_count.averaged == kept["step"].nunique() == 6
    assert f"over {o.n_steps} steps" in tw.views.overview(run).text()
    frame = dict(zip(o.to_frame()["name"], o.to_frame()["value"]))
    assert frame["n_steps"] == 6
