"""The optional C walker must really be built where CI runs (it has a compiler)."""

import os

import pytest

from tfprof_widgets.readers.xspace import fast_reader_available


@pytest.mark.skipif(os.environ.get("CI") != "true", reason="only enforced in CI")
def test_c_walker_built_in_ci():
    assert fast_reader_available(), "tfprof_widgets.readers._wire did not build"
