"""The timeline: it stays within its budget and re-samples on zoom (the other views are
tested in tests/test_views.py)."""

import sys

import numpy as np
import pytest
from conftest import ROOT, SAMPLES

import tfprof_widgets as tw
from tfprof_widgets.views.timeline_lod import MAX_MARKS, TimelineModel

sys.path.insert(0, str(ROOT / "benchmarks"))


@pytest.fixture(scope="module")
def ten_million():
    from synthetic_events import synthetic_events, synthetic_lines

    events = synthetic_events(10_000_000)
    return TimelineModel(events, *synthetic_lines(events))


def test_timeline_budget_at_ten_million_events(ten_million):
    m = ten_million
    full = m.window()
    assert len(m) == 10_000_000
    assert len(full) <= MAX_MARKS
    assert full.count.sum() == 10_000_000  # every event counted once, raw or in a block
    # Zooming into 1 ms sends exactly the raw events that overlap it.
    x0 = (m.t_min + m.t_max) / 2
    window = m.window(x0, x0 + 1000.0)
    assert window.raw.all()
    expected = np.flatnonzero((m.start < x0 + 1000.0) & (m.end > x0))
    assert sorted(window.row.tolist()) == sorted(m.row[expected].tolist())


def test_timeline_view_on_a_run():
    run = tw.load(SAMPLES / "custom_loop")
    view = tw.views.timeline(run)
    assert len(view.marks) <= MAX_MARKS
    assert view.marks.count.sum() == (run.events["occurrences"] == 1).sum()
    ev = run.events
    x0 = float(ev["start_us"].median())
    marks = view.zoom(x0, x0 + 500)
    assert marks.raw.all()
    inside = ev[(ev["start_us"] < x0 + 500) & (ev["end_us"] > x0)]
    assert sorted(marks.row.tolist()) == sorted(inside.index.tolist())
    details = view.event_details(int(marks.row[0]))
    assert {"name", "start_us", "dur_us", "step"} <= set(details["field"])
    assert view.payload_bytes() < 2_000_000


def test_timeline_zoom_callback_updates_the_live_figure():
    run = tw.load(SAMPLES / "input_bound")
    view = tw.views.timeline(run)
    box = view.widget()
    (fw,) = [
        w for part in box.children for w in getattr(part, "children", ()) if hasattr(w, "data")
    ]
    before = len(fw.data[0].x)
    x0 = float(run.events["start_us"].median())
    fw.layout.xaxis.range = [x0, x0 + 200]
    assert view.window_us == (x0, x0 + 200)
    assert len(fw.data[0].x) == len(view.marks) != before
