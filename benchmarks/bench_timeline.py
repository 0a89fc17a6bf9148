"""Timeline speed: first render, per-zoom time and payload at 1 M and 10 M events.

    python benchmarks/bench_timeline.py

First render = building the lane model + the first window + the plotly figure. A zoom =
recomputing the marks for a window plus the arrays sent to the browser (what the live
widget's range callback does). Target: < 300 ms per zoom.
"""

from __future__ import annotations

import pathlib
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from synthetic_events import synthetic_events, synthetic_lines  # noqa: E402

from tfprof_widgets.views.timeline_lod import TimelineModel  # noqa: E402


class _StubRun:
    """Just enough of a Run for TimelineView (events with their line rows, lines, steps)."""

    def __init__(self, events):
        import pandas as pd

        self.events = events.assign(step=pd.array([pd.NA] * len(events), dtype="Int64"))
        self.event_line_rows, self.lines = synthetic_lines(events)
        self.steps = pd.DataFrame({"start_us": [], "step_time_us": [], "step": []})


def main() -> None:
    from tfprof_widgets.views.timeline_view import TimelineView

    print(
        f"{'events':>11} {'first render s':>15} {'zoom':>12} {'marks':>6} {'zoom ms':>8} "
        f"{'payload KB':>11}"
    )
    for n in (1_000_000, 10_000_000):
        run = _StubRun(synthetic_events(n))
        t = time.perf_counter()
        model = TimelineModel(run.events, run.event_line_rows, run.lines)
        view = TimelineView(run, model=model)
        view.figure()
        first = time.perf_counter() - t
        span = model.t_max - model.t_min
        for label, frac in (
            ("full", 1.0),
            ("10 %", 0.1),
            ("1 %", 0.01),
            ("0.01 %", 1e-4),
            ("1 ms", None),
        ):
            x0 = model.t_min + 0.4 * span
            x1 = x0 + (1000.0 if frac is None else span * frac)
            if frac == 1.0:
                x0, x1 = model.t_min, model.t_max
            times = []
            for _ in range(3):
                t = time.perf_counter()
                marks = view.zoom(x0, x1)
                view.trace_data(marks)
                times.append(time.perf_counter() - t)
            kb = view.payload_bytes(marks) / 1024
            print(
                f"{n:>11,} {first:>15.2f} {label:>12} {len(marks):>6} "
                f"{1000 * min(times):>8.1f} {kb:>11,.0f}"
            )


if __name__ == "__main__":
    main()
