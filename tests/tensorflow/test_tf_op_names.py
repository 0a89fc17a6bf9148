"""The compiled op-name parser gives exactly parse_tf_op's results (XProf's rules)."""

import glob

import pytest
from conftest import ROOT
from hypothesis import given, settings
from hypothesis import strategies as st

import tfprof_widgets as tw
from tfprof_widgets.frameworks.tensorflow import op_names as tf_ops

pytestmark = pytest.mark.skipif(tf_ops._tf_ops is None, reason="the C parser is not built here")

EDGES = [
    "",
    ":",
    "::",
    "a:",
    ":A",
    "dense/MatMul:MatMul",
    "dense/MatMul:matMul",
    "Iterator",
    "Iterator::Root::Prefetch",
    "Iterator:",
    "iterator::x",
    "MemcpyHToD",
    "memcpyDtoH x",
    "MEMCPYDTOD",
    "memcpyhtoh",
    "Memcpy",
    "MemcpyH2D",
    "jit_f/dot_general:",
    "f/g_12:",
    "f/g_-12:",
    "f/g_:",
    "f/_12:",
    "f/g_1a:",
    "a/b/:",
    "x:dot_general[precision=HIGH]",
    "x:dot[a]b]",
    "x:dot[\n]",
    "x:dot[]",
    "x:dot[",
    "x:_A",
    "x:A-b",
    ".a:B",
    "-a:B",
    "a>b:C",
    "a b:C",
    "a:B:C",
    "a:B c",
    "name:Type\n",
    "a/b_3:",
    "ExecutorState::Process",
    "$file.py:12 func",
    "train",
    "é:X",
    "a:É",
    "日本:op",
    "tf_op:x",
]


def reference(names):
    return [tf_ops.parse_tf_op(n) for n in names]


def compiled(names):
    cat, name, typ = tf_ops._parse_in_c(list(names))
    return list(zip(cat.tolist(), name.tolist(), typ.tolist()))


def test_edge_names():
    assert compiled(EDGES) == reference(EDGES)


def test_every_name_of_the_real_captures():
    paths = [
        ROOT / "tests" / "data" / "bert_8gpu_multi_worker.xplane.pb",
        *sorted((ROOT / "tests" / "data" / "xplane_amd_jax").glob("*.xplane.pb")),
        *sorted(glob.glob(str(ROOT / "sample_profiles" / "*" / "plugins" / "profile" / "*"))),
        *sorted((ROOT / "tests" / "data" / "chrome").glob("*.json.gz")),
    ]
    for p in paths:
        names = tw.load(p, progress=False).events["name"].cat.categories.tolist()
        assert compiled(names) == reference(names), p


@settings(max_examples=400, deadline=None)
@given(st.lists(st.text(alphabet="aZ_09./>-:[]\n Mm Iterator emcpyHDtTo", max_size=24)))
def test_generated_names(names):
    assert compiled(names) == reference(names)
