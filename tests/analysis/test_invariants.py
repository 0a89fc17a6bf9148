"""Issue 36's invariants (tests/invariants.py: shares, roofs, peaks, one step numbering,
units, figures equal across views, each framework's words) on every capture bundled in
tests/data/ and sample_profiles/: property tests, one per (capture, invariant).

Each capture is loaded, analysed and its report's views built once (a module-scoped fixture
per capture; pytest runs a capture's tests together and drops it before the next), so the
module runs in well under a minute. ``scripts/invariants_sweep.py`` runs the same checks on
a folder of captures (``--shared``: the team's shared captures) and prints capture x invariant.
"""

from __future__ import annotations

import pytest
from invariants import INVARIANTS, build, bundled_captures

CAPTURES = bundled_captures()


@pytest.fixture(scope="module", params=sorted(CAPTURES))
def capture(request):
    """One capture, built once for all its invariants."""
    return build(request.param, CAPTURES[request.param])


@pytest.mark.parametrize("invariant", sorted(INVARIANTS))
def test_invariant(capture, invariant):
    bad = INVARIANTS[invariant](capture)
    assert not bad, f"{capture.name}: {invariant} broken by\n  " + "\n  ".join(bad)


def test_every_bundled_capture_is_checked():
    """A capture added to tests/data or sample_profiles joins the invariants by itself: the
    list is read from the folders, and holds every kind bundled (XLA GPU and TPU, AMD,
    PyTorch, TF, TF1, tool data, Chrome)."""
    names = " ".join(CAPTURES)
    for kind in ("xplane_h100_jax", "xplane_amd_jax", "tpu_hlo", "chrome/", "tooldata/",
                 "tfprof", "bert_8gpu", "sample_profiles/jax_cnn_cpu"):  # fmt: skip
        assert kind in names, kind
    assert len(CAPTURES) >= 35
