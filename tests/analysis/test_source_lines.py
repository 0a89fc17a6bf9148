"""Device time per line of the user's source (issue 41 item 4): ``source_lines`` and its view.

On the bundled JAX captures (H100, AMD, XLA:CPU) at least 90 % of the device op time lands on
a line the programs' metadata names, and the device time is the per-instruction tools' own;
PyTorch's ``with_stack=True`` stacks (``python_function`` events, the older ``Call stack``
argument) name the user's frame outside torch. Synthetic programs (tests/hlo_hostile_builder)
check the rules one at a time: a fusion without metadata takes its fused root's line, the
stack frame index names the function, a program without source metadata gives the empty
table with a note, and a huge program is attributed whole.
"""

from __future__ import annotations

import pathlib

import numpy as np
import pytest
from conftest import kineto_run
from hlo_hostile_builder import FUSED_ID, capture, good_program

import tfprof_widgets as tw
from tfprof_widgets.analysis.source_lines import (
    NO_LINES_NOTE,
    file_lines,
    line_coverage,
    source_lines,
    source_text,
)
from tfprof_widgets.frameworks.pytorch.op_table import launching_operators
from tfprof_widgets.frameworks.xla.gpu import kernel_instructions
from tfprof_widgets.schema import SOURCE_LINES
from tfprof_widgets.views.source_lines_view import source_lines as source_lines_view

DATA = pathlib.Path(__file__).resolve().parents[1] / "data"
JAX = [
    "xplane_h100_jax/jax_cnn_nographs.xplane.pb",
    "xplane_h100_jax/jax_cnn_graphs.xplane.pb",
    "xplane_amd_jax/jax08_attention.xplane.pb",
    "xplane_amd_jax/jax08_conv.xplane.pb",
    "xplane_amd_jax/jax08_elementwise.xplane.pb",
    "xplane_amd_jax/jax08_gemm.xplane.pb",
    "jax_cpu/jax_cnn_cpu_10steps.xplane.pb",
]
_RUNS: dict = {}


def run_of(name: str):
    if name not in _RUNS:
        _RUNS[name] = tw.load(DATA / name, progress=False)
    return _RUNS[name]


@pytest.mark.parametrize("name", JAX)
def test_jax_device_time_lands_on_named_lines(name):
    t = source_lines(run_of(name))
    assert list(t.columns) == list(SOURCE_LINES)
    assert line_coverage(t) >= 90.0
    named = t[t["source_file"].astype(str) != ""]
    assert (named["source_line"] > 0).all()
    assert t["device_time_percent"].sum() == pytest.approx(100.0)
    # Heaviest first, the ops without a line last.
    assert np.all(np.diff(named["device_time_us"].to_numpy()) <= 0)
    assert (t["source_file"].astype(str) == "").to_numpy().argmax() in (0, len(t) - 1)


@pytest.mark.parametrize("name", [n for n in JAX if "cpu" not in n])
def test_gpu_device_time_is_the_kernels_of_instructions(name):
    """Every kernel that names an instruction counts once: the table's device time is theirs."""
    run = run_of(name)
    k = kernel_instructions(run)
    kernels_us = run.events["dur_us"].to_numpy()[k["row"].to_numpy()].sum()
    t = source_lines(run)
    assert t["device_time_us"].sum() == pytest.approx(kernels_us, rel=1e-9)
    assert t["occurrences"].sum() == len(k)


def test_lines_and_functions_are_the_programs_metadata():
    """Each named line is one some instruction's metadata (or stack frame) names, and the
    H100 program's stack frame index names its function."""
    run = run_of("xplane_h100_jax/jax_cnn_nographs.xplane.pb")
    h = run.hlo_instructions
    known = set(zip(h["source_file"].astype(str), h["source_line"]))
    t = source_lines(run)
    named = t[t["source_file"].astype(str) != ""]
    assert set(zip(named["source_file"].astype(str), named["source_line"])) <= known
    assert (named["function"].astype(str) != "").all()
    assert (named["framework"].astype(str) == "JAX").all()


def _program_with_lines(n: int = 40):
    """The good program, its fused add written at model.py:12 in ``add_fn`` (a stack frame
    of the module's index); the fusions themselves carry no source metadata."""
    prog = good_program(n)
    index = prog.module.stack_frame_index
    index.file_names.append("model.py")
    index.function_names.append("add_fn")
    index.file_locations.add(file_name_id=1, function_name_id=1, line=12)
    index.stack_frames.add(file_location_id=1)
    fused = next(c for c in prog.module.computations if c.id == FUSED_ID)
    fused.instructions[-1].metadata.op_name = "jit(f)/add"
    fused.instructions[-1].metadata.stack_frame_id = 1
    return prog


def test_fusion_without_metadata_takes_its_roots_line(tmp_path):
    run = tw.load(capture(tmp_path / "f.xplane.pb", _program_with_lines()), progress=False)
    t = source_lines(run)
    assert len(t) == 1
    row = t.iloc[0]
    assert (str(row["source_file"]), int(row["source_line"])) == ("model.py", 12)
    assert str(row["function"]) == "add_fn" and str(row["framework"]) == "JAX"
    # 40 fusions, 2 steps, one 8 µs kernel each.
    assert row["device_time_us"] == pytest.approx(40 * 2 * 8.0)
    assert row["occurrences"] == 80 and row["ops"] == 40
    assert line_coverage(t) == 100.0


def test_no_source_metadata_is_an_empty_table_with_a_note(tmp_path):
    run = tw.load(capture(tmp_path / "n.xplane.pb", good_program(10)), progress=False)
    t = source_lines(run)
    assert len(t) == 0 and list(t.columns) == list(SOURCE_LINES)
    assert t.attrs["note"] == NO_LINES_NOTE
    assert NO_LINES_NOTE in run.warnings
    v = source_lines_view(run)
    assert NO_LINES_NOTE in v.text()
    assert v.figures() == {} and v.tables() == {}
    assert "source line" in v.html()


def test_a_capture_without_ops_is_an_empty_table():
    run = tw.load(DATA / "chrome" / "flow.json.gz", progress=False)
    t = source_lines(run)
    assert len(t) == 0 and list(t.columns) == list(SOURCE_LINES)
    assert np.isnan(line_coverage(t))


def test_huge_program_is_attributed_whole(tmp_path):
    """20,000 instructions, each fusion's line through its fused root: every kernel lands."""
    n = 20_000
    run = tw.load(
        capture(tmp_path / "h.xplane.pb", _program_with_lines(n), steps=1), progress=False
    )
    t = source_lines(run)
    assert len(t) == 1 and t["ops"].iat[0] == n
    assert t["device_time_us"].iat[0] == pytest.approx(n * 8.0)


def test_tpu_ops_self_time_lands_on_their_lines(tmp_path):
    """TPU cores (the synthetic libtpu capture, real XLA programs): each op's self time, once."""
    from tpu_builder import tpu_capture

    from tfprof_widgets.frameworks.xla.tpu import tpu_device_ops

    run = tw.load(tpu_capture().write(tmp_path / "t.xplane.pb"), progress=False)
    t = source_lines(run)
    ops = tpu_device_ops(run)
    assert t["device_time_us"].sum() == pytest.approx(ops["self_ps"].sum() / 1e6, rel=1e-9)
    assert t["occurrences"].sum() == len(ops)
    assert line_coverage(t) >= 90.0
    named = t[t["source_file"].astype(str) != ""]
    assert (named["function"].astype(str) != "").all()


def test_pytorch_python_function_events_name_the_users_frame():
    run = kineto_run(DATA / "chrome" / "eager_b200.json.gz")
    t = source_lines(run)
    named = t[t["source_file"].astype(str) != ""]
    assert line_coverage(t) >= 99.0
    assert not named["source_file"].astype(str).str.startswith("torch/").any()
    assert (named["framework"].astype(str) == "PyTorch").all()
    gpu, owner = launching_operators(run)
    owned_us = run.events["dur_us"].to_numpy()[gpu[owner >= 0]].sum()
    assert t["device_time_us"].sum() == pytest.approx(owned_us, rel=1e-9)


def test_pytorch_call_stack_argument_names_the_users_frame():
    """PyTorch 1.x: the ``Call stack`` argument; the backward pass runs on autograd's thread,
    which records no stack, so only the forward's lines are named."""
    run = kineto_run(DATA / "chrome" / "resnet50_v100_workers0.pt.trace.json.gz")
    t = source_lines(run)
    named = t[t["source_file"].astype(str) != ""]
    assert (
        len(named)
        and not named["source_file"].astype(str).str.contains("site-packages/torch/").any()
    )
    assert named["source_file"].astype(str).str.endswith("resnet.py").any()
    assert 0 < line_coverage(t) < 100


def test_a_pytorch_trace_without_stacks_has_no_lines():
    run = kineto_run(DATA / "chrome" / "torch_transformer_h100.pt.trace.json.gz")
    t = source_lines(run)
    assert len(t) == 0 and t.attrs["note"] == NO_LINES_NOTE


def test_view_top_lines_and_text_fallback():
    run = run_of("xplane_h100_jax/jax_cnn_nographs.xplane.pb")
    v = source_lines_view(run)
    t = source_lines(run)
    top = t.iloc[0]
    text = v.text()
    assert f"{top['source_file']}:{top['source_line']}" in text.splitlines()[2]
    assert list(v.figures()) == ["top_lines"]
    assert v.figures()["top_lines"].data[0].x[-1] == pytest.approx(top["device_time_us"])
    assert list(v.tables()) == ["lines"]
    assert "Source lines" in v.html()


def test_view_of_a_file_lists_its_lines_with_time(tmp_path):
    """A file not here: its timed lines alone; a readable file: its text beside the times."""
    run = run_of("xplane_h100_jax/jax_cnn_nographs.xplane.pb")
    v = source_lines_view(run)
    file = v.files[0]
    timed = file_lines(source_lines(run), file)
    listed = source_lines_view(run, file).listing(file)
    assert [r[0] for r in listed] == timed["source_line"].tolist()
    assert all(r[1] == "" for r in listed)
    # The same lines, as if the file were this machine's: the text shows beside them.
    mine = tmp_path / "capture.py"
    mine.write_text("".join(f"line_{k}\n" for k in range(1, 200)))
    here = source_lines_view(run, file)
    here.lines = here.lines.assign(
        source_file=here.lines["source_file"].cat.rename_categories(
            lambda c: str(mine) if c == file else c
        )
    )
    rows = here.listing(str(mine))
    assert {r[0] for r in rows if r[2] > 0} == set(timed["source_line"])
    assert all(r[1] == f"line_{r[0]}" for r in rows)
    assert len(rows) > len(timed)  # context lines around the timed ones
    assert "line_" in here.listing_html(str(mine))


def test_source_text_never_raises(tmp_path):
    assert source_text("") is None
    assert source_text(str(tmp_path / "missing.py")) is None
    assert source_text(str(tmp_path)) is None  # a directory
    assert source_text("<string>") is None
    big = tmp_path / "big.py"
    big.write_bytes(b"x = 1\n" * 1000)
    assert source_text(str(big), max_bytes=100) is None
    assert source_text(str(big)) == ["x = 1"] * 1000
    odd = tmp_path / "odd.py"
    odd.write_bytes(b"\xff\xfe\x00bad\n")
    assert len(source_text(str(odd))) == 1
