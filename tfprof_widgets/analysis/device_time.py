"""Device clocks: TPU ops timed by the device, not by the host's record of them.

A TPU capture records each XLA op twice: the XEvent's offset and duration (when the host
runtime saw it) and the stats ``device_offset_ps``/``device_duration_ps`` (what the core's
own clock measured; durations differ by up to ~15 %). XProf times ops, steps and the idle
time of a core by the device clock (``GetDeviceEventTimespan``), and only the duty cycle by
the XEvent. So a run gives such events their device times in ``run.events`` (``start_us``,
``dur_us``, ``end_us``), and keeps the XEvent's own times in the small table
``run.xevent_times`` (schema.XEVENT_TIMES), one row per event that carries both stats; a
capture without them (CPU, GPU) has an empty table and pays nothing.

``device_offset_ps`` is on the same scale as the line's ``timestamp_ns`` × 1000 plus the
event's ``offset_ps`` (XProf compares the two directly), so it lands on the run's clock the
way the XEvent does.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .. import schema, stat_columns

# Device times this far from their XEvent's are on a clock of their own (an hour, in µs).
_OTHER_CLOCK_US = 3.6e9


def use_device_times(run, line_base_ns: np.ndarray | None = None) -> pd.DataFrame:
    """Give the events of ``run`` that carry device-time stats their device times, in
    place, and return the XEvent times they had (schema.XEVENT_TIMES).

    ``line_base_ns``: each line's clock origin in ns, as assembly placed it on the run's
    clock (the line's ``timestamp_ns`` plus the profile start when the line was relative
    to it); by default ``timestamp_ns``. Rows are re-sorted by start within their line if
    the device times change their order (the events table stays sorted by line, then
    start); the stats follow.
    """
    ev = run.events
    n = len(ev)
    stats = run.stat_store
    off, has_off = stat_columns.numbers(stats, "device_offset_ps", n)
    dur, has_dur = stat_columns.numbers(stats, "device_duration_ps", n)
    rows = np.flatnonzero(has_off & has_dur & (ev["occurrences"].to_numpy() == 1))
    if not len(rows):
        return schema.empty(schema.XEVENT_TIMES)
    lines = run.lines
    ts = lines["timestamp_ns"].to_numpy(np.int64)
    base = ts if line_base_ns is None or len(line_base_ns) != len(ts) else line_base_ns
    line = run.event_line_rows[rows]
    xevent_us = ev["start_us"].to_numpy()[rows]
    # µs on the run's clock = device ps - the line's stored origin + where that origin lies
    # on the run's clock (ns differences first: they are small where the values are not).
    shift_ns = np.asarray(base, np.int64)[line] - ts[line] - run.t0_ns
    start_us = off[rows] / 1e6 + shift_ns / 1e3
    if np.abs(start_us - xevent_us).max(initial=0.0) > _OTHER_CLOCK_US:
        # The device clock is not the host's: keep its spacing, anchored at each line's
        # first device-timed event.
        first = pd.Series(np.arange(len(rows))).groupby(line).transform("first").to_numpy()
        start_us = xevent_us[first] + (off[rows] - off[rows][first]) / 1e6
    raw = pd.DataFrame(
        {
            "event": rows.astype(np.int64),
            "xevent_start_us": ev["start_us"].to_numpy()[rows],
            "xevent_dur_us": ev["dur_us"].to_numpy()[rows],
        }
    )
    all_start = ev["start_us"].to_numpy().copy()
    all_dur = ev["dur_us"].to_numpy().copy()
    all_start[rows] = start_us
    all_dur[rows] = dur[rows] / 1e6
    ev["start_us"] = all_start
    ev["dur_us"] = all_dur
    ev["end_us"] = all_start + all_dur
    _keep_sorted(run, raw)
    return schema.conform(raw, schema.XEVENT_TIMES)


def _keep_sorted(run, raw: pd.DataFrame) -> None:
    """Re-sort the events by (line, start) if device times broke that order; the stats and
    ``raw`` are re-pointed at the new rows."""
    ev = run.events
    start = np.nan_to_num(ev["start_us"].to_numpy(), nan=np.inf)
    line = run.event_line_rows
    same_line = line[1:] == line[:-1]
    if not (same_line & (start[1:] < start[:-1])).any():
        return
    order = np.lexsort((start, line))
    new_row = np.empty_like(order)
    new_row[order] = np.arange(len(order))
    run.events = ev.iloc[order].reset_index(drop=True)
    run.stat_store = run.stat_store.remap(new_row)
    raw["event"] = new_row[raw["event"].to_numpy()]
    raw.sort_values("event", inplace=True, ignore_index=True)


def xevent_times(run) -> tuple[np.ndarray, np.ndarray]:
    """Every event's XEvent start and end (µs on the run's clock): ``run.events`` times,
    except where device times replaced them."""
    start = run.events["start_us"].to_numpy().copy()
    end = run.events["end_us"].to_numpy().copy()
    raw = run.xevent_times
    if len(raw):
        rows = raw["event"].to_numpy()
        start[rows] = raw["xevent_start_us"].to_numpy()
        end[rows] = start[rows] + raw["xevent_dur_us"].to_numpy()
    return start, end


__all__ = ["use_device_times", "xevent_times"]
