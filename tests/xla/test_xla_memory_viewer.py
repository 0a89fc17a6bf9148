"""The memory viewer (frameworks/xla/memory_viewer.py) against xprof's
``memory_viewer`` tool on every program of the bundled XLA captures (goldens made by
scripts/make_memory_viewer_goldens.py), its hostile inputs, and its view."""

from __future__ import annotations

import json

import numpy as np
import pytest
from conftest import ROOT

import tfprof_widgets as tw
from tfprof_widgets import schema
from tfprof_widgets.frameworks.xla import memory_viewer as mv

GOLDEN = ROOT / "tests" / "golden" / "memory_viewer"
# The captures the goldens were made of (scripts/make_memory_viewer_goldens.py names them).
GOLDENS = {p.stem: json.loads(p.read_text()) for p in sorted(GOLDEN.glob("*.json"))}
CAPTURES = {name: ROOT / g["capture"] for name, g in GOLDENS.items()}
MIB = float(1 << 20)


@pytest.fixture(scope="module", params=sorted(CAPTURES))
def case(request):
    run = tw.load(CAPTURES[request.param], progress=False)
    return run, GOLDENS[request.param]["programs"]


def test_every_bundled_xla_capture_has_a_golden():
    assert len(CAPTURES) == 8 and all(p.exists() for p in CAPTURES.values())


def test_tables_follow_their_schemas(case):
    run, _ = case
    assert schema.mismatches(mv.hlo_memory(run), schema.HLO_MEMORY) == []
    assert schema.mismatches(mv.hlo_memory_peak(run), schema.HLO_MEMORY_PEAK) == []
    assert schema.mismatches(mv.hlo_heap_timeline(run), schema.HLO_HEAP_TIMELINE) == []


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


def test_programs_without_a_buffer_assignment_give_empty_tables_and_a_note(tmp_path):
    """The synthetic TPU capture's programs are HloProtos without field 3: no rows, the
    tables keep their schema, and run.warnings says which programs and why."""
    from tpu_builder import tpu_capture

    run = tw.load(tpu_capture().write(tmp_path / "t.xplane.pb"), progress=False)
    assert len(run.hlo_modules) == 2
    mem, peak = mv.hlo_memory(run), mv.hlo_memory_peak(run)
    assert len(mem) == 0 and len(peak) == 0
    assert schema.mismatches(mem, schema.HLO_MEMORY) == []
    assert schema.mismatches(peak, schema.HLO_MEMORY_PEAK) == []
    notes = [w for w in run.warnings if "buffer assignment" in w]
    assert len(notes) == 1 and "jit_train_step" in notes[0]
    mv.hlo_memory(run)
    assert len([w for w in run.warnings if "buffer assignment" in w]) == 1  # once


class _Run:
    """The parts of a Run the memory viewer reads, around one hand-made HloProto."""

    def __init__(self, proto) -> None:
        self.warnings: list[str] = []
        self.hlo_modules = [("h", 7, proto.hlo_module)]
        data = proto.SerializeToString() + _field3(proto.buffer_assignment)
        self.hlo_protos = [("h", 7, data)]


def _field3(ba) -> bytes:
    body = ba.SerializeToString()
    n, out = len(body), bytearray([3 << 3 | 2])
    while True:
        out.append((n & 0x7F) | (0x80 if n > 0x7F else 0))
        n >>= 7
        if not n:
            return bytes(out) + body


def _program(n_buffers: int, events: list[tuple[int, int, int]]):
    """A module whose entry computation defines ``n_buffers`` f32[256] buffers (1 KiB each)
    in one temporary allocation, plus a 64 KiB parameter, and a heap simulator trace of
    ``events`` (kind, buffer, canonical)."""
    from types import SimpleNamespace

    from tfprof_widgets.proto import xla_hlo_pb2 as x

    proto = SimpleNamespace(hlo_module=x.HloModuleProto(), buffer_assignment=None)
    m = proto.hlo_module
    m.name = m.entry_computation_name = "main"
    comp = m.computations.add(name="main", id=1)
    ba = x.BufferAssignmentProto()
    param = ba.buffer_allocations.add(index=0, size=65536, is_entry_computation_parameter=True)
    temp = ba.buffer_allocations.add(index=1, size=1024 * n_buffers)
    for i in range(n_buffers + 1):
        ins = comp.instructions.add(name=f"op.{i}", opcode="add", id=i)
        ins.shape.element_type = x.F32
        ins.shape.dimensions.append(16384 if i == n_buffers else 256)
        size = 65536 if i == n_buffers else 1024
        lb = ba.logical_buffers.add(id=i, size=size)
        lb.defined_at.instruction_id = i
        (param if i == n_buffers else temp).assigned.add(logical_buffer_id=i, size=size)
    trace = ba.heap_simulator_traces.add()
    for kind, buf, canon in events:
        trace.events.add(
            kind=kind, buffer_id=buf, share_with_canonical_id=canon, instruction_name=f"op.{buf}"
        )
    proto.buffer_assignment = ba
    proto.SerializeToString = lambda: _field1(m)
    return proto


def _field1(module) -> bytes:
    return _field3(module).replace(bytes([3 << 3 | 2]), bytes([1 << 3 | 2]), 1)


def test_a_hand_made_trace_is_replayed_like_xprof():
    """ALLOC 0, ALLOC 1, SHARE 2 -> 1, FREE 1, FREE 0, FREE 2: 2 KiB at the peak (position
    1), buffer 1's memory held until its sharer is freed; the parameter adds 64 KiB."""
    run = _Run(_program(3, [(0, 0, 0), (0, 1, 0), (2, 2, 1), (1, 1, 0), (1, 0, 0), (1, 2, 0)]))
    peak = mv.hlo_memory_peak(run).iloc[0]
    assert peak["peak_heap_bytes"] == 2048 + 65536 and peak["peak_position"] == 1
    assert peak["indefinite_bytes"] == 65536 and peak["note"] == ""
    heap = mv.hlo_heap_timeline(run)["heap_bytes"] - 65536
    assert heap.tolist() == [0, 1024, 2048, 2048, 2048, 1024, 0]
    mem = mv.hlo_memory(run).set_index("buffer_id")
    assert mem.loc[[0, 1], "start_position"].tolist() == [0, 1]
    assert mem.loc[[0, 1], "end_position"].tolist() == [4, 5]
    assert sorted(mem.index[mem["live_at_peak"]]) == [0, 1, 3]


@pytest.mark.parametrize(
    "events, problem",
    [
        ([(0, 0, 0), (1, 0, 0), (1, 0, 0)], "freed more often"),
        ([(0, 0, 0), (2, 1, 2), (2, 2, 1), (1, 1, 0)], "cycle"),
    ],
)
def test_a_trace_xprof_refuses_leaves_the_whole_program_numbers_and_says_why(events, problem):
    run = _Run(_program(3, events))
    peak = mv.hlo_memory_peak(run).iloc[0]
    assert problem in peak["note"]
    assert peak["peak_heap_bytes"] == 65536 and peak["positions"] == 0
    assert (mv.hlo_memory(run)["start_position"] == -1).all()


def test_a_damaged_buffer_assignment_counts_as_none():
    from tfprof_widgets.proto import xla_hlo_pb2 as x

    assert mv.buffer_assignment(b"\x1a\x05\xff\xff") is None  # field 3 longer than the bytes
    assert mv.buffer_assignment(b"\x1a\x02\xff\xff") is None  # field 3 not a message
    assert mv.buffer_assignment(b"") is None
    ba = x.BufferAssignmentProto()
    ba.logical_buffers.add(id=4, size=8)
    assert mv.buffer_assignment(_field3(ba)).logical_buffers[0].size == 8


def test_a_large_program_is_replayed_without_a_loop_per_event():
    """50,000 buffers allocated and freed in turn, each shared once: the trace replay is
    numpy (well under a second here; reading the protos into arrays is the rest)."""
    import time

    n = 50_000
    events = [(0, 0, 0)]
    for i in range(1, n):
        events += [(0, i, 0), (1, i - 1, 0)] if i % 2 else [(2, i, i - 1), (1, i - 1, 0)]
    events.append((1, n - 1, 0))
    proto = _program(n, events)
    bufs = mv._buffer_arrays(proto.buffer_assignment)
    tr = mv._trace_arrays(proto.buffer_assignment.heap_simulator_traces[0])
    ids = bufs["id"]
    bufs["unpadded"] = bufs["size"].copy()
    bufs["alloc_of"] = np.where(ids == n, 0, 1)
    t0 = time.perf_counter()
    sim = mv._replay(tr, bufs, np.ones(n + 1, bool), lambda q: (q, (q >= 0) & (q <= n)))
    took = time.perf_counter() - t0
    assert sim["peak"] == 2048 and took < 2.0


def test_the_view_draws_the_heap_its_peak_and_the_largest_buffers_then():
    from tfprof_widgets.views.memory_viewer_view import memory_viewer

    run = tw.load(CAPTURES["jax_cnn_nographs"], progress=False)
    v = memory_viewer(run)
    peak = mv.hlo_memory_peak(run).set_index("program_id").loc[v.program]
    assert peak["module"] == "jit_step"  # the largest peak of the capture
    figs = v.figures()
    assert set(figs) == {"heap", "peak_buffers"}
    heap, marker = figs["heap"].data
    assert max(heap.y) == pytest.approx(peak["peak_heap_bytes"] / MIB)
    assert list(marker.x) == [peak["peak_position"]]
    bars = figs["peak_buffers"].data[0]
    at_peak = mv.hlo_memory(run).query("program_id == @v.program and live_at_peak")
    assert len(bars.x) == min(20, len(at_peak))
    assert max(bars.x) == pytest.approx(at_peak["size_bytes"].max() / MIB)
    assert "cudnn-conv.3{0} bf16[64,64,64,64]" in bars.y
    # The text fallback (every viewer's text/plain) names the program, peak and buffers.
    text = v.text()
    assert "jit_step (9941): peak heap 207.66 MiB at position 31 of 98" in text
    assert "loop_broadcast_fusion{0} bf16[64,64,64,64]" in text
    assert json.loads(v.payload_json())["controls"][0]["id"] == "program"
    assert v.static_figure() is not None
    other = memory_viewer(run, program="jit__normal")
    assert other.program != v.program and "jit__normal" in other.text()


def test_the_view_says_why_it_has_nothing_and_refuses_an_unknown_program(tmp_path):
    from tpu_builder import tpu_capture

    from tfprof_widgets.views.memory_viewer_view import memory_viewer

    run = tw.load(tpu_capture().write(tmp_path / "t.xplane.pb"), progress=False)
    v = memory_viewer(run)
    assert v.figures() == {} and "no buffer assignment" in v.text()
    with pytest.raises(mv.NoBufferAssignmentError, match="jit_train_step"):
        memory_viewer(run, program="jit_train_step")
    assert isinstance(mv.NoBufferAssignmentError("p", "x"), tw.ProfileError)
