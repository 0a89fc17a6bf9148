"""Faster ways to the same numbers (the JAX bench row, issue 27): each equal, bit for bit, to
the pandas way it replaced."""

import numpy as np
import pandas as pd
import pytest

from tfprof_widgets.analysis.overview import _mean_std
from tfprof_widgets.frameworks.tensorflow.op_names import name_table


@pytest.mark.parametrize("seed", range(300))
def test_mean_std_is_pandas_bit_for_bit(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(0, 60))
    values = rng.random(n) * 10.0 ** int(rng.integers(-3, 9))
    if seed % 5 == 0 and n:
        values[rng.integers(0, n)] = np.nan  # pandas skips NaN: the fallback
    s = pd.Series(values)
    mean, std = _mean_std(values)
    np.testing.assert_equal((mean, std), (float(s.mean()), float(s.std(ddof=1))))


@pytest.mark.parametrize(
    "names",
    [
        [],
        ["MatMul:MatMul", "dense/BiasAdd:BiasAdd", "jit(step)/dot_general", "Iterator::Map"],
        ["memcpyHtoD", "é/Conv2D:Conv2D", "x"],  # a non-ASCII name is parsed in Python
    ],
)
def test_name_table_is_three_object_columns(names):
    from tfprof_widgets.frameworks.tensorflow.op_names import parse_tf_op

    table = name_table(pd.Index(names, dtype=object))
    expected = pd.DataFrame(
        {
            k: pd.Series([parse_tf_op(n)[i] for n in names], dtype=object)
            for i, k in enumerate(("category", "op_name", "op_type"))
        }
    )
    pd.testing.assert_frame_equal(table, expected, check_exact=True)
