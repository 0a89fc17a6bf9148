"""schema.text_categorical: the categorical the XLA tables and the op table build from text
values is exactly what pandas' ``astype("category")`` makes of them (categories sorted,
the same codes and dtypes), on its fast path (all str) and on pandas' path (missing values,
no values)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from tfprof_widgets import schema


@pytest.mark.parametrize(
    "values",
    [
        ["fusion", "custom-call", "fusion", "", "copy", "custom-call"],  # str, with ''
        np.array(["b", "a", "b", "c"], object),  # an object array
        np.array(["z", "y"]),  # a numpy str array
        ["b", None, "a", None],  # missing values: pandas' own way
        [],  # nothing
        ["only"] * 300,  # one category, many rows
    ],
)
def test_same_as_astype_category(values):
    got = pd.Series(schema.text_categorical(values))
    want = pd.Series(np.asarray(values, object)).astype("category")
    pd.testing.assert_series_equal(got, want, check_exact=True)
    assert got.cat.categories.dtype == want.cat.categories.dtype
    assert got.cat.codes.dtype == want.cat.codes.dtype


def test_categories_sorted_as_text():
    cat = schema.text_categorical(["b", "B", "a", "_x", "b"])
    assert list(cat.categories) == sorted({"b", "B", "a", "_x"})
    assert list(cat.astype(str)) == ["b", "B", "a", "_x", "b"]
