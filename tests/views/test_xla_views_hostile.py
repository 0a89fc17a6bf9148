"""The XLA views on hostile programs (issue 41): a program of 10^5 instructions made of the
real H100 JAX program's entry repeated, a program whose operands form a cycle, programs
without a buffer assignment. Each view says what it could not show, in words, and never
raises, hangs or sends a graph per op of a huge program."""

from __future__ import annotations

import json
import pathlib
import time

import pytest
from hlo_hostile_builder import MODULE, PROGRAM, capture, good_program

import tfprof_widgets as tw
from tfprof_widgets.proto import xla_hlo_pb2
from tfprof_widgets.views import graph_viewer_view as gv

ROOT = pathlib.Path(__file__).resolve().parents[2]
H100 = ROOT / "tests" / "data" / "xplane_h100_jax" / "jax_cnn_nographs.xplane.pb"
HUGE = 100_000


def huge_program(instructions: int = HUGE) -> tuple[bytes, list[str]]:
    """The H100 capture's largest program with its entry computation's instructions copied
    (renamed ``<name>.r<k>``, operands kept within each copy) up to ``instructions``, and the
    names of the original's fusions and custom calls (what its kernels run)."""
    real = tw.load(H100, progress=False)
    _host, _pid, data = max(real.hlo_protos, key=lambda t: len(t[2]))
    proto = xla_hlo_pb2.HloProto()
    proto.ParseFromString(data)
    m = proto.hlo_module
    entry = next(c for c in m.computations if c.name == m.entry_computation_name)
    orig = list(entry.instructions)
    top = max(i.id for c in m.computations for i in c.instructions) + 1
    for r in range(1, instructions // len(orig) + 1):
        for ins in orig:
            c = entry.instructions.add()
            c.CopyFrom(ins)
            c.id, c.name = ins.id + r * top, f"{ins.name}.r{r}"
            c.operand_ids[:] = [o + r * top for o in ins.operand_ids]
            del c.control_predecessor_ids[:]
    m.name, m.id = MODULE, PROGRAM
    ran = [i.name for i in orig if i.opcode in ("fusion", "custom-call")]
    return proto.SerializeToString(), ran


@pytest.fixture(scope="module")
def huge_run(tmp_path_factory):
    data, ran = huge_program()
    path = capture(tmp_path_factory.mktemp("huge") / "huge.xplane.pb", data, ran=ran)
    return tw.load(path, progress=False)


def test_a_huge_program_draws_the_graph_of_its_op_only(huge_run):
    assert (
        sum(len(c.instructions) for _, _, m in huge_run.hlo_modules for c in m.computations) > HUGE
    )
    t0 = time.perf_counter()
    view = tw.views.graph_viewer(huge_run)
    payload = json.loads(view.payload_json())
    assert time.perf_counter() - t0 < 60  # ~14 s alone here (the program decoded, measured)
    nodes = view.graph.nodes
    assert 3 <= int(nodes["drawn"].sum()) <= gv.LABELS  # the neighbourhood, not the program
    assert payload["variants"][""][0]["kind"] == "html"


def test_a_huge_program_sends_few_graphs_with_the_op_profile(huge_run):
    ops = huge_run.op_profile
    ops = ops[ops["level"] == "op"]
    t0 = time.perf_counter()
    panel = gv.graph_panel(huge_run, ops["program_id"], ops["name"], ops["time_us"])
    seconds = time.perf_counter() - t0
    # Each graph walks the 10^5 instructions: the work budget keeps them to a few.
    assert 1 <= len(panel.items) <= gv.GRAPH_WORK // HUGE, len(panel.items)
    assert seconds < 30, seconds
    assert f"Only the {len(panel.items)} heaviest" in panel.missing


def test_a_huge_program_memory_viewer_shows_its_peak(huge_run):
    view = tw.views.memory_viewer(huge_run)
    json.loads(view.payload_json())
    assert "peak heap" in view.findings()[0]


def _cycle_run(tmp_path):
    prog = good_program(40)
    a, b = (
        next(i for i in prog.entry.instructions if i.name == n) for n in ("fusion.0", "fusion.1")
    )
    a.operand_ids.append(b.id)
    b.operand_ids[:] = [a.id]
    return tw.load(capture(tmp_path / "cycle.xplane.pb", prog), progress=False)


def test_a_cycle_is_drawn_with_its_edge_reversed_and_said(tmp_path):
    run = _cycle_run(tmp_path)
    view = tw.views.graph_viewer(run, op="fusion.0")
    json.loads(view.payload_json())
    assert "form a cycle" in view.header() and "reversed" in view.header()
    assert any("cycle" in line for line in view.findings())
    # The op profile sends the cycle's graph with it, the note in it.
    panel = {p.id: p for p in tw.views.hlo_op_profile(run).panels()}["graph"]
    key = gv.graph_key([PROGRAM], ["fusion.0"])[0]
    assert key in panel.items and "form a cycle" in panel.items[key][0].html


def test_programs_without_a_buffer_assignment_say_so_in_the_memory_viewer(tmp_path):
    run = tw.load(capture(tmp_path / "noba.xplane.pb", good_program(40)), progress=False)
    view = tw.views.memory_viewer(run)
    payload = json.loads(view.payload_json())
    text = json.dumps(payload)
    assert "no buffer assignment" in view.findings()[0]
    assert "no buffer assignment" in text and "plotly" not in text.lower()
    # The other views of the program still draw.
    for name in ("hlo_op_profile", "roofline", "graph_viewer", "source_lines"):
        json.loads(getattr(tw.views, name)(run).payload_json())
