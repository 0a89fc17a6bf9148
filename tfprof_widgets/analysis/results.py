"""What the dataclass results of the analyses share: ``to_frame()``, their figures as a table.

``OverviewSummary``, ``InputPipelineSummary`` and ``TfDataSummary`` hold scalars and tables;
``to_frame()`` gives a summary's figures as a two-column (name, value) table
(schema.SUMMARY_FRAME), leaving out its tables, dicts and the lists of sentences it names in
``_not_in_frame``, which are fields of their own.
"""

from __future__ import annotations

import dataclasses

import pandas as pd

__all__ = ["Summary"]


class Summary:
    """Mixin for the result dataclasses."""

    _not_in_frame: tuple[str, ...] = ()

    def to_frame(self) -> pd.DataFrame:
        """The figures, one row each: name, value."""
        rows = [
            (f.name, getattr(self, f.name))
            for f in dataclasses.fields(self)
            if f.name not in self._not_in_frame
            and not isinstance(getattr(self, f.name), (pd.DataFrame, pd.Series, dict))
        ]
        return pd.DataFrame(rows, columns=["name", "value"])
