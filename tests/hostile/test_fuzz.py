"""Property-based fuzzing of the readers on mutated real captures.

Every mutation of a real sample (truncation, bit flips, splices, inserted bytes, text
re-encoding) must either load or raise a ProfileError naming the file: never another
exception, never a crash of the C walker (which would kill the interpreter), never a hang.
The example count is bounded for CI; raise FUZZ_EXAMPLES for longer local runs.
"""

import gzip
import json
import os
import pathlib

import pytest
from conftest import ROOT, sample_files
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tfprof_widgets as tw
from tfprof_widgets.readers.xspace import reader as xspace

EXAMPLES = int(os.environ.get("FUZZ_EXAMPLES", "150"))
SETTINGS = settings(
    max_examples=EXAMPLES,
    deadline=5000,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
SAMPLE = sample_files("keras_fit")[0].read_bytes()  # the smallest real capture (~80 KB)


@st.composite
def mutated(draw, data: bytes = SAMPLE):
    kind = draw(st.sampled_from(["truncate", "flip", "splice", "insert", "reencode", "zero_run"]))
    n = len(data)
    if kind == "truncate":
        return data[: draw(st.integers(0, n - 1))]
    if kind == "flip":
        buf = bytearray(data)
        for pos in draw(st.lists(st.integers(0, n - 1), min_size=1, max_size=8)):
            buf[pos] ^= 1 << draw(st.integers(0, 7))
        return bytes(buf)
    if kind == "splice":
        a, b = sorted(draw(st.lists(st.integers(0, n), min_size=2, max_size=2)))
        c = draw(st.integers(0, n))
        return data[:c] + data[a:b] + data[c:]
    if kind == "insert":
        pos = draw(st.integers(0, n))
        return data[:pos] + draw(st.binary(min_size=1, max_size=32)) + data[pos:]
    if kind == "zero_run":
        pos = draw(st.integers(0, n - 1))
        return data[:pos] + bytes(draw(st.integers(1, 64))) + data[pos + 64 :]
    return data.decode("utf-8", "replace").encode("utf-8")


def load_or_profile_error(path: pathlib.Path) -> None:
    try:
        run = tw.load(path, progress=False)
    except tw.ProfileError as exc:
        assert str(path) in str(exc)
        return
    assert len(run.events) > 0  # a mutation that kept the file valid still loads


@pytest.mark.parametrize("walker_on", [True, False], ids=["c_walker", "protobuf_walk"])
def test_xspace_mutations(tmp_path, monkeypatch, walker_on):
    if walker_on and xspace._wire is None:
        pytest.skip("the C wire walker is not built here")
    if not walker_on:
        monkeypatch.setattr(xspace, "_wire", None)
    path = tmp_path / "h.xplane.pb"

    @SETTINGS
    @given(mutated())
    def check(data):
        path.write_bytes(data)
        load_or_profile_error(path)

    check()


TRACE = json.dumps(
    {
        "traceEvents": [
            {"ph": "M", "pid": 1, "name": "process_name", "args": {"name": "/host:CPU"}},
            *[
                {
                    "ph": "X",
                    "pid": 1,
                    "tid": t,
                    "name": f"op{i}",
                    "ts": 10.0 * i,
                    "dur": 5.0,
                    "args": {"k": i},
                }
                for t in range(2)
                for i in range(20)
            ],
            {"ph": "B", "pid": 1, "tid": 3, "name": "b", "ts": 1.0},
            {"ph": "E", "pid": 1, "tid": 3, "ts": 2.0},
        ]
    }
).encode()


@pytest.mark.parametrize("compress", [False, True], ids=["json", "json_gz"])
def test_chrome_trace_mutations(tmp_path, compress):
    path = tmp_path / ("h.trace.json.gz" if compress else "h.trace.json")
    base = gzip.compress(TRACE, mtime=0) if compress else TRACE

    @SETTINGS
    @given(mutated(base))
    def check(data):
        path.write_bytes(data)
        load_or_profile_error(path)

    check()


@pytest.mark.parametrize("depth", [100_000, 1_000_000])
def test_deeply_nested_json(tmp_path, depth):
    """orjson 3.8 overflowed the C stack (segfault) at 150,000 levels; deep input must be a
    ProfileError with every decoder."""
    path = tmp_path / "h.trace.json"
    path.write_text('{"traceEvents": ' + "[" * depth + "]" * depth + "}")
    with pytest.raises(tw.ProfileError, match="nested too deeply"):
        tw.load(path)
    path.write_text('{"traceEvents": ' + '{"a": ' * depth + "1" + "}" * (depth + 1))
    with pytest.raises(tw.ProfileError, match="nested too deeply"):
        tw.load(path)


def test_length_prefix_larger_than_the_file(tmp_path):
    """A plane claiming 2 GB in a 20-byte file is rejected before anything is allocated."""
    path = tmp_path / "h.xplane.pb"
    path.write_bytes(b"\x0a\xff\xff\xff\xff\x07" + bytes(14))
    with pytest.raises(tw.CorruptProfileError, match="truncated or damaged"):
        tw.load(path)


TF1 = ROOT / "sample_profiles" / "tf1_graph"


@pytest.mark.parametrize(
    "name,source",
    [
        ("h.tfprof", TF1 / "model.tfprof"),
        ("h.run_metadata.pb", TF1 / "steps" / "step_0.run_metadata.pb"),
    ],
    ids=["tfprof_profile", "run_metadata"],
)
def test_tf1_profile_mutations(tmp_path, name, source):
    path = tmp_path / name

    @SETTINGS
    @given(mutated(source.read_bytes()))
    def check(data):
        path.write_bytes(data)
        before = sorted(os.listdir(tmp_path))
        try:
            run = tw.load(path, progress=False)
        except tw.ProfileError as exc:
            assert str(path) in str(exc)
        else:
            # A mutation that kept the file valid still loads, views and all.
            if not run.tfprof_nodes.empty:
                tw.tfprof_table(run, "scope")
        assert sorted(os.listdir(tmp_path)) == before

    check()
