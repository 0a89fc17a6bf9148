"""What op each event name runs, by the rules of the run's frameworks, once per run.

Event names are a categorical; each distinct name is parsed once (by the first framework of
the run that knows it as an op: :meth:`~.frameworks.RunFrameworks.parse_op_names`) and the
analyses index the result with the name codes, so no event is parsed twice.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..frameworks import framework_of
from .memo import per_run, shared


def name_memo(run) -> dict:
    """The names of a run parsed so far (shared by its analyses)."""
    return shared(run).setdefault("event_ops.parsed", {})


@per_run
def event_names(run) -> pd.DataFrame:
    """One row per category of ``run.events['name']``: category ('unknown' where the name is
    no framework op), op_name, op_type (object columns)."""
    cats = run.events["name"].cat.categories
    return framework_of(run).parse_op_names(pd.Index(cats, dtype=object), name_memo(run))


def parsed_values(run, values: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(category, op_name, op_type) arrays of any op-name values (each distinct one parsed
    once, by the run's frameworks)."""
    codes, uniques = pd.factorize(values, use_na_sentinel=False)
    table = framework_of(run).parse_op_names(pd.Index(uniques, dtype=object), name_memo(run))
    return tuple(table[c].to_numpy()[codes] for c in ("category", "op_name", "op_type"))
