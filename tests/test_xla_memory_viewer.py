"""The memory viewer (analysis/frameworks/xla/memory_viewer.py) against xprof's
``memory_viewer`` tool on every program of the bundled XLA captures (goldens made by
scripts/make_memory_viewer_goldens.py), its hostile inputs, and its view."""

from __future__ import annotations

import json

import numpy as np
import pytest
from conftest import ROOT

import tfprof_widgets as tw
from tfprof_widgets import schema
from tfprof_widgets.analysis.frameworks.xla import memory_viewer as mv

GOLDEN = ROOT / "tests" / "golden" / "memory_viewer"
DATA = ROOT / "tests" / "data"
CAPTURES = {
    "jax_cnn_nographs": DATA / "xplane_h100_jax" / "jax_cnn_nographs.xplane.pb",
    "jax_cnn_graphs": DATA / "xplane_h100_jax" / "jax_cnn_graphs.xplane.pb",
    **{
        f"jax08_{k}": DATA / "xplane_amd_jax" / f"jax08_{k}.xplane.pb"
        for k in ("attention", "conv", "elementwise", "gemm")
    },
    "jax_cpu_10steps": DATA / "jax_cpu" / "jax_cnn_cpu_10steps.xplane.pb",
    "tf_xla_cpu": DATA / "tf_xla_cpu" / "keras_fit_jit.xplane.pb",
}
MIB = float(1 << 20)


@pytest.fixture(scope="module", params=sorted(CAPTURES))
def case(request):
    run = tw.load(CAPTURES[request.param], progress=False)
    golden = json.loads((GOLDEN / f"{request.param}.json").read_text())
    return run, golden


def test_tables_follow_their_schemas(case):
    run, _ = case
    assert schema.mismatches(mv.hlo_memory(run), mv.HLO_MEMORY) == []
    assert schema.mismatches(mv.hlo_memory_peak(run), mv.HLO_MEMORY_PEAK) == []
    assert schema.mismatches(mv.hlo_heap_timeline(run), mv.HLO_HEAP_TIMELINE) == []


def test_peak_heap_and_its_position_equal_xprofs(case):
    """Every program xprof shows: the same peak heap (padded and unpadded), position,
    whole-program allocations and heap over program order."""
    run, golden = case
    peak = mv.hlo_memory_peak(run).set_index("program_id")
    timeline = mv.hlo_heap_timeline(run)
    assert sorted(map(int, golden)) == sorted(peak.index)
    for program, g in golden.items():
        row = peak.loc[int(program)]
        assert "error" not in g, g
        assert row["module"] == g["module"]
        assert row["peak_heap_bytes"] / MIB == pytest.approx(g["peak_heap_mib"], rel=1e-12)
        assert row["peak_unpadded_heap_bytes"] / MIB == pytest.approx(
            g["peak_unpadded_heap_mib"], rel=1e-12
        )
        assert row["peak_position"] == g["peak_position"]
        assert row["indefinite_bytes"] / MIB == pytest.approx(g["indefinite_mib"], rel=1e-12)
        assert row["entry_parameters_bytes"] / MIB == pytest.approx(g["entry_parameters_mib"])
        assert row["maybe_live_out_bytes"] / MIB == pytest.approx(g["maybe_live_out_mib"])
        assert row["total_allocation_bytes"] / MIB == pytest.approx(g["total_allocation_mib"])
        heap = timeline[timeline["program_id"] == int(program)]
        np.testing.assert_allclose(heap["heap_bytes"] / MIB, g["heap_sizes_mib"], rtol=1e-12)
        assert heap["instruction"].tolist() == g["instruction_names"]
        assert row["positions"] == max(len(g["heap_sizes_mib"]) - 1, 0)


def test_buffers_at_the_peak_and_live_ranges_equal_xprofs(case):
    """The buffers live at the peak (xprof's maxHeap: those of 16 KiB and more by id, the
    rest as one 'small' block of their summed bytes) and every simulated buffer's span."""
    run, golden = case
    mem = mv.hlo_memory(run)
    peak = mv.hlo_memory_peak(run).set_index("program_id")
    for program, g in golden.items():
        rows = mem[mem["program_id"] == int(program)]
        at = rows[rows["live_at_peak"]]
        big = at[at["size_bytes"] >= mv.SMALL_BUFFER_BYTES]
        ours = sorted(
            [int(r.buffer_id), r.size_bytes / MIB, r.instruction + r.shape_index, r.allocation_kind]
            for r in big.itertuples()
        )
        theirs = sorted([o[0], o[1], o[2], o[4]] for o in g["max_heap"] if o[0] != -1)
        assert ours == theirs, program
        small = [o[1] for o in g["max_heap"] if o[0] == -1]
        assert peak.loc[int(program), "small_bytes_at_peak"] / MIB == pytest.approx(
            small[0] if small else 0.0
        )
        # Shapes as xprof prints them, less the layout.
        shapes = {o[0]: o[3].split("{")[0] for o in g["max_heap"] if o[0] != -1}
        assert {int(r.buffer_id): r.shape for r in big.itertuples()} == shapes
        spans = {
            str(r.buffer_id): [r.start_position, r.end_position]
            for r in rows[rows["start_position"] >= 0].itertuples()
        }
        assert spans == g["spans"], program
