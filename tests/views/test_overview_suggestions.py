"""The overview shows the suggestions that fire (run.suggestions), as XProf's overview shows
its smart suggestions: rule, severity, text, evidence and the view to open."""

from __future__ import annotations

import pytest
from conftest import ROOT

import tfprof_widgets as tw

DATA = ROOT / "tests" / "data"


@pytest.fixture(scope="module")
def resnet():
    return tw.load(DATA / "chrome" / "resnet50_v100_workers0.pt.trace.json.gz", progress=False)


def test_the_overview_lists_every_suggestion_high_first_with_its_view(resnet):
    sugg = resnet.suggestions
    assert len(sugg) >= 2  # DataLoader-bound, small kernels, CPU-bound
    view = tw.views.overview(resnet)
    table = view.tables()["suggestions"].table.df
    high = sugg[sugg["severity"] == "high"]["rule"].tolist()
    assert table["rule"].tolist()[: len(high)] == high
    assert sorted(table["rule"]) == sorted(sugg["rule"])
    for r in table.itertuples():
        assert r.open == f"tw.views.{r.view}(run)"
        assert callable(getattr(tw.views, r.view))  # a view that exists
    text = view.text()
    for r in sugg.itertuples():
        line = f"Suggestion ({r.severity}) {r.rule}: {r.text} [{r.evidence}]"
        assert line in text
    assert all(rule in view.html() for rule in sugg["rule"])


def test_a_run_where_no_rule_fires_shows_no_suggestion_section():
    run = tw.load(DATA / "xplane_h100_jax" / "jax_cnn_nographs.xplane.pb", progress=False)
    assert not len(run.suggestions)
    view = tw.views.overview(run)
    assert "suggestions" not in view.tables()
    assert "Suggestion (" not in view.text()
