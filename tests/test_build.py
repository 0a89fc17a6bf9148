"""The optional C extensions must really be built where CI runs (it has a compiler)."""

import os

import pytest

from tfprof_widgets.readers.xspace.reader import fast_reader_available


@pytest.mark.skipif(os.environ.get("CI") != "true", reason="only enforced in CI")
def test_c_walker_built_in_ci():
    assert fast_reader_available(), "tfprof_widgets.readers.xspace._wire did not build"


@pytest.mark.skipif(os.environ.get("CI") != "true", reason="only enforced in CI")
def test_op_name_parser_built_in_ci():
    from tfprof_widgets.frameworks.tensorflow import op_names as tf_ops

    assert tf_ops._tf_ops is not None, "tfprof_widgets.frameworks.tensorflow._tf_ops did not build"
