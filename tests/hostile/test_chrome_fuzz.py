"""Chrome trace type confusion: wrong JSON types for pid, tid, id, ts, dur, args, ph (and
name, cat, bp, id2, s), extreme numbers and numbers beyond float range, in plain, Kineto,
TF1, TF trace-viewer and bare-array traces (tests/chrome_confusion.py).

Each must load, with every analysis computing, or raise a ProfileError naming the file:
never another exception, and nothing written. The example count is bounded for CI;
``python benchmarks/fuzz_chrome.py`` runs the full campaign (3,000+ traces).
"""

import os
import random

from chrome_confusion import confused_trace
from conftest import tree_state
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tfprof_widgets as tw

EXAMPLES = int(os.environ.get("FUZZ_EXAMPLES", "300"))


def load_and_analyse(path) -> str:
    """'loaded' or 'ProfileError'; anything else propagates (a failure)."""
    try:
        run = tw.load(path, progress=False)
    except tw.ProfileError as exc:
        assert str(path) in str(exc)
        return "ProfileError"
    for name in ("steps", "ops", "kernels", "memory", "overview_summary", "input_pipeline"):
        getattr(run, name)
    return "loaded"


def test_type_confusion(tmp_path):
    path = tmp_path / "h.trace.json"
    seen = set()

    @settings(
        max_examples=EXAMPLES,
        deadline=10_000,
        derandomize=True,
        suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    )
    @given(st.integers(0, 2**32 - 1))
    def check(seed):
        path.write_bytes(confused_trace(random.Random(seed)))
        before = tree_state(tmp_path)
        seen.add(load_and_analyse(path))
        assert tree_state(tmp_path) == before

    check()
    assert seen == {"loaded", "ProfileError"}  # both outcomes occur: the cases are not trivial
