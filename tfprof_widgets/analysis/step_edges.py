"""XProf's rule for the steps an overview averages over, apart from the step analysis so
that the summaries (:mod:`.results`) can count what it leaves out without importing it."""

from __future__ import annotations

import numpy as np
import pandas as pd

# XProf drops a host's first and last step from its averages when it has more steps than
# this (kDropIncomplteteStepThreshold in xprof's step_events_to_steps_db.cc).
DROP_EDGE_STEPS_ABOVE = 5


def edge_steps_kept(steps: pd.DataFrame) -> pd.DataFrame:
    """XProf's part of :func:`.steps.overview_steps`: all but each host's first and last step."""
    if steps.attrs.get("edge_steps_dropped") or not len(steps):
        return steps
    col = steps["host"]
    is_cat = isinstance(col.dtype, pd.CategoricalDtype)
    host = np.asarray(col.cat.codes if is_cat else pd.factorize(col)[0], np.int64)
    # Each host's steps, in the order the host first appears (its steps are contiguous).
    order = np.argsort(_first_seen_rank(host)[host], kind="stable")
    h = host[order]
    starts = np.flatnonzero(np.r_[True, h[1:] != h[:-1]])
    ends = np.r_[starts[1:], len(h)]
    keep = np.ones(len(h), bool)
    big = (ends - starts) > DROP_EDGE_STEPS_ABOVE
    keep[starts[big]] = False
    keep[ends[big] - 1] = False
    return steps.iloc[order[keep]]


def _first_seen_rank(codes: np.ndarray) -> np.ndarray:
    """Per code: its rank by first appearance in ``codes``."""
    _, first = np.unique(codes, return_index=True)
    rank = np.zeros(int(codes.max()) + 1, np.int64)
    used = np.unique(codes)
    rank[used[np.argsort(first)]] = np.arange(len(used))
    return rank
