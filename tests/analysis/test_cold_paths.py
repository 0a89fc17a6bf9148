"""The cheaper ways the views and analyses compute what a first (cold) view needs give what
the plain pandas ways give (issue 29 item 11): the op stats table's join, the tables' text
encodings and front coding, and the integer group keys the op and kernel tables group by."""

import random

import numpy as np
import pandas as pd
import pytest
from conftest import ROOT, SAMPLES

import tfprof_widgets as tw
from tfprof_widgets.analysis.nesting import group_numbers
from tfprof_widgets.analysis.op_stats import op_stats
from tfprof_widgets.views import tables
from tfprof_widgets.views.op_stats_view import KEY, PCT, _with_percents_without_idle

RUNS = {
    "gpu_shaped": SAMPLES / "gpu_shaped",
    "keras_fit": SAMPLES / "keras_fit",
    "torch_h100": ROOT / "tests" / "data" / "chrome" / "torch_transformer_h100.pt.trace.json.gz",
}


@pytest.mark.parametrize("case", list(RUNS))
def test_op_stats_join_is_pandas_merge(case):
    run = tw.load(RUNS[case], progress=False)
    with_idle, without = run.ops, op_stats(run, include_idle=False)
    df = with_idle.rename(columns={c: f"{c}_with_idle" for c in PCT})
    keys = [k for k in KEY if k in df]
    # Without IDLE rows, a shuffled subset too: rows missing on the right become NaN.
    for right in (without, without.sample(frac=0.6, random_state=0)):
        expected = df.merge(right[keys + list(PCT)], on=keys, how="left", sort=False)
        pd.testing.assert_frame_equal(
            _with_percents_without_idle(with_idle, right), expected, check_exact=True
        )


def _reference_text(s: pd.Series):
    """What the text encoder gave before its fast paths: a categorical of the values."""
    text = s.astype(object).where(s.notna(), None)
    values = [None if v is None else str(v) for v in text.tolist()]
    cats = pd.Categorical(values)
    return tables._text_payload([str(c) for c in cats.categories], cats.codes, values)


def test_text_columns_encode_as_a_categorical_of_their_values():
    rng = random.Random(7)
    pool = ["", "a", "b", "ab", "é", "Z", "a/b/c" * 60, "x" * 300, "日本", "\U0001f600", None]
    for _ in range(120):
        values = [rng.choice(pool) for _ in range(rng.randint(0, 25))]
        for s in (
            pd.Series(pd.Categorical(values)),
            pd.Series(values, dtype="str"),
            pd.Series(values, dtype=object),
            pd.Series(pd.Categorical([None if v is None else len(v) for v in values])),
        ):
            assert tables._encode(s, "text", None) == _reference_text(s)
            plain = s.astype(object)
            assert tables._empty(s) == (
                bool(plain.isna().all()) or bool((plain.astype(str).str.len() == 0).all())
            )


def test_shared_prefixes_are_the_bisections():
    rng = random.Random(11)
    alphabet = ["a", "b", "/", "é", "日", "\U0001f600", "_", "\x00"]
    for _ in range(300):
        base = "".join(rng.choice(alphabet[:7]) for _ in range(rng.randint(0, 50)))
        names = sorted(
            {
                base[: rng.randint(0, len(base))]
                + "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 20)))
                for _ in range(rng.randint(1, 30))
            }
        )
        expected = [tables._shared_prefix(p, n) for p, n in zip([""] + names[:-1], names)]
        assert tables._shared_prefixes(names).tolist() == expected


def test_group_numbers_follow_groupby_order():
    rng = np.random.default_rng(5)
    a = rng.choice(np.array(["x", "y", "z"], object), 500)
    b = rng.integers(0, 4, 500)
    c = rng.choice(np.array(["p", "q"], object), 500)
    group = group_numbers([a, b, c])
    frame = pd.DataFrame({"a": a, "b": b, "c": c, "v": rng.random(500)})
    by_keys = frame.groupby(["a", "b", "c"], sort=False)["v"].sum()
    by_number = frame["v"].groupby(group, sort=False).sum()
    assert by_number.to_numpy().tolist() == by_keys.to_numpy().tolist()
    first = np.unique(group, return_index=True)[1]
    assert list(zip(a[first], b[first], c[first])) == list(by_keys.index)
