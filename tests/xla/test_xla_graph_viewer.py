"""XProf's graph viewer (``frameworks/xla/graph.py``, ``views/graph_viewer_view.py``):
node and edge sets equal to xprof 2.24's ``graph_viewer`` tool around every golden op, at
widths 1-3, fusions expanded and merged (goldens: ``scripts/make_graph_viewer_goldens.py``);
the measured numbers on the nodes; the layered layout; hostile programs (a cycle, 10^5
instructions, an unknown op)."""

from __future__ import annotations

import json
import pathlib
import time

import numpy as np
import pytest

import tfprof_widgets as tw
from tfprof_widgets.errors import ProfileError
from tfprof_widgets.frameworks.xla.graph import (
    UnknownHloOpError,
    hlo_graph,
    instruction_times,
    layered_layout,
    neighbourhood,
    program_graph,
)
from tfprof_widgets.proto import xla_hlo_pb2
from tfprof_widgets.views.graph_viewer_view import graph_viewer

ROOT = pathlib.Path(__file__).resolve().parents[2]
GOLDEN = ROOT / "tests" / "golden" / "graph_viewer"
CAPTURES = sorted(p.stem for p in GOLDEN.glob("*.json"))
_RUNS: dict = {}


def _run(name: str):
    if name not in _RUNS:
        golden = json.loads((GOLDEN / f"{name}.json").read_text())
        _RUNS[name] = (tw.load(str(ROOT / golden["capture"])), golden)
    return _RUNS[name]


@pytest.mark.parametrize("name", CAPTURES)
def test_nodes_and_edges_equal_xprof(name):
    run, golden = _run(name)
    graphs = {f"{m.name}({p})": program_graph(m) for _, p, m in run.hlo_modules}
    checked = 0
    for key, want in golden["graphs"].items():
        program, op, width, *merged = key.split("|")
        assert "error" not in want, key  # xprof renders every golden op
        nodes, edges = neighbourhood(graphs[program], op, int(width), expand_fusions=not merged)
        assert sorted(nodes.loc[nodes["drawn"], "instruction"]) == want["nodes"], key
        got = sorted({(a, b) for a, b in zip(edges["src"], edges["dst"])})
        assert got == [tuple(e) for e in want["edges"]], key
        checked += 1
    assert checked >= 50


def test_goldens_cover_expanded_fusions_and_wide_graphs():
    # The goldens are not all trivial: fusion bodies, merged fusions and 30+ node graphs.
    _, golden = _run("jax_cnn_nographs")
    sizes = [len(v["nodes"]) for v in golden["graphs"].values()]
    assert max(sizes) >= 30
    run, _ = _run("jax_cnn_nographs")
    g = hlo_graph(run, depth=2)
    assert g.nodes["expanded"].any() and (g.nodes["fusion"] != "").any()
    merged = hlo_graph(run, op=g.op, depth=2, program=g.program_id, expand_fusions=False)
    assert not merged.nodes["expanded"].any()
    assert set(merged.nodes["instruction"]) != set(g.nodes["instruction"])


def test_default_op_is_the_heaviest_and_nodes_carry_measurements():
    run, _ = _run("jax_cnn_nographs")
    times = instruction_times(run)
    g = hlo_graph(run)
    assert g.op == times["instruction"].iloc[0]
    me = g.nodes[g.nodes["instruction"] == g.op].iloc[0]
    assert me["total_time_us"] == pytest.approx(times["total_time_us"].iloc[0])
    assert me["occurrences"] > 0 and me["flops"] > 0 and me["bytes_accessed"] > 0
    stats = run.hlo_stats
    for r in g.nodes[g.nodes["total_time_us"] > 0].itertuples():
        row = stats[stats["hlo_op_name"].astype(str) == r.instruction]
        assert r.total_time_us == pytest.approx(row["total_time_us"].sum())
    inside = g.nodes[g.nodes["fusion"] != ""]
    assert inside["flops"].isna().all() and (inside["total_time_us"] == 0).all()
    assert set(g.edges["src"]) | set(g.edges["dst"]) <= set(g.nodes["instruction"])


def test_an_op_named_in_several_programs_is_taken_where_it_ran_longest():
    # custom-call.1 is in four programs of the gemm capture; the first listed is not the
    # busiest.
    run, _ = _run("jax08_gemm")
    t = instruction_times(run)
    holders = [p for _, p, m in run.hlo_modules if "custom-call.1" in program_graph(m).by_name]
    ran = t[t["instruction"] == "custom-call.1"]
    busiest = int(ran["program_id"].iloc[0])  # instruction_times: heaviest first
    assert len(holders) >= 2 and holders[0] != busiest
    assert hlo_graph(run, op="custom-call.1").program_id == busiest


def test_cpu_capture_uses_thunk_times():
    run, _ = _run("jax_cpu_10steps")
    g = hlo_graph(run)
    me = g.nodes[g.nodes["instruction"] == g.op].iloc[0]
    assert me["total_time_us"] > 0 and me["occurrences"] >= 1


def test_unknown_op_and_program_raise_a_profile_error_naming_them():
    run, _ = _run("jax08_gemm")
    with pytest.raises(UnknownHloOpError, match="no_such_op") as e:
        hlo_graph(run, op="no_such_op")
    assert isinstance(e.value, ProfileError)
    with pytest.raises(UnknownHloOpError, match="nope"):
        hlo_graph(run, program="nope")
    with pytest.raises(UnknownHloOpError, match="no_such_op"):
        graph_viewer(run, op="no_such_op")
    with pytest.raises(ValueError, match="depth"):
        hlo_graph(run, depth=-1)


# -- hostile programs, built here ---------------------------------------------------------------
def _module(chain: int, cycle: bool = False) -> xla_hlo_pb2.HloModuleProto:
    """An entry computation: a parameter, then ``chain`` negates one after another, the last
    the root; with ``cycle`` the first negate takes the last as an operand too, closing a loop
    through the chain (no valid XLA program does)."""
    m = xla_hlo_pb2.HloModuleProto(name="hostile")
    c = m.computations.add(name="main", id=1)
    p = c.instructions.add(name="p", opcode="parameter", id=1)
    p.shape.element_type = xla_hlo_pb2.F32
    for i in range(2, chain + 2):
        ins = c.instructions.add(name=f"neg.{i}", opcode="negate", id=i)
        ins.shape.element_type = xla_hlo_pb2.F32
        ins.operand_ids.append(i - 1)
    if cycle:
        c.instructions[1].operand_ids.append(chain + 1)
    c.root_id = chain + 1
    return m


def test_a_cycle_is_walked_and_laid_out_with_its_edges_reversed():
    g = program_graph(_module(5, cycle=True))
    nodes, edges = neighbourhood(g, "neg.4", depth=10)
    assert set(nodes["instruction"]) == {"p", *(f"neg.{i}" for i in range(2, 7))}
    index = {n: i for i, n in enumerate(nodes["instruction"])}
    src = edges["src"].map(index).to_numpy()
    dst = edges["dst"].map(index).to_numpy()
    layer, x, rev = layered_layout(len(nodes), src, dst)
    assert rev.any()
    keep = ~rev
    assert (layer[src[keep]] < layer[dst[keep]]).all()  # the rest point downwards
    assert (layer[dst[rev]] < layer[src[rev]]).all()  # the reversed ones point up
    assert np.isfinite(x).all()


def _empty_times():
    import pandas as pd

    return pd.DataFrame(
        {"host": [], "program_id": np.zeros(0, np.int64), "instruction": [],
         "occurrences": np.zeros(0, np.int64), "total_time_us": np.zeros(0)}
    )  # fmt: skip


@pytest.fixture
def bare_run(monkeypatch):
    """A run of one hand-made program and no measurements (hostile programs no capture has)."""
    from tfprof_widgets.frameworks.xla import graph as graph_mod

    def unmeasured(run, host, pid, nodes):
        return nodes.assign(shape="", category="", occurrences=0, total_time_us=0.0,
                            flops=np.nan, bytes_accessed=np.nan)  # fmt: skip

    monkeypatch.setattr(graph_mod, "_measured", unmeasured)
    monkeypatch.setattr(graph_mod, "instruction_times", lambda run: _empty_times())

    class BareRun:
        path = "hostile.xplane.pb"

        def __init__(self, module) -> None:
            self.hlo_modules = [("h", 7, module)]

    return BareRun


def test_cycle_is_said_in_the_note(bare_run):
    g = hlo_graph(bare_run(_module(5, cycle=True)), op="neg.4", depth=10)
    assert "cycle" in g.note and "reversed" in g.note
    assert g.edges["reversed"].sum() >= 1


def test_a_fusion_body_too_large_to_draw_is_cut_and_said(bare_run):
    from tfprof_widgets.frameworks.xla.graph import MAX_DRAWN

    m = xla_hlo_pb2.HloModuleProto(name="wide")
    body = m.computations.add(name="fused", id=2, is_fusion_computation=True)
    body.instructions.add(name="fp", opcode="parameter", id=100)
    for i in range(101, 101 + MAX_DRAWN + 500):
        body.instructions.add(name=f"n.{i}", opcode="negate", id=i).operand_ids.append(i - 1)
    body.root_id = 100 + MAX_DRAWN + 500
    main = m.computations.add(name="main", id=1)
    main.instructions.add(name="p", opcode="parameter", id=1)
    f = main.instructions.add(name="f", opcode="fusion", id=2)
    f.operand_ids.append(1)
    f.called_computation_ids.append(2)
    main.root_id = 2
    g = hlo_graph(bare_run(m), op="f", depth=1)
    assert (
        g.nodes["drawn"].sum() == MAX_DRAWN and "502 of 2,502 instructions" in g.note
    )  # 2,501 in the body, and p
    assert set(g.nodes.loc[~g.nodes["drawn"], "instruction"]) == {"f"}  # the op, expanded
    assert {"p", "fp"} <= set(g.nodes["instruction"])  # the walked one and the body start kept
    assert np.isfinite(g.nodes.loc[g.nodes["drawn"], "x"]).all()
    assert "f" in graph_viewer(bare_run(m), op="f", depth=1).text()


def test_a_huge_program_lays_out_only_the_neighbourhood():
    m = _module(100_000)
    t0 = time.perf_counter()
    g = program_graph(m)
    decode = time.perf_counter() - t0
    t0 = time.perf_counter()
    nodes, edges = neighbourhood(g, "neg.50000", depth=3)
    index = {n: i for i, n in enumerate(nodes["instruction"])}
    layer, x, rev = layered_layout(
        len(nodes), edges["src"].map(index).to_numpy(), edges["dst"].map(index).to_numpy()
    )
    walk = time.perf_counter() - t0
    assert len(nodes) == 7 and len(edges) == 6 and not rev.any()
    assert sorted(layer.tolist()) == list(range(7))
    assert walk < 1.0, walk  # the neighbourhood only, not the 10^5 instructions
    assert decode < 30, decode


def test_layout_orders_layers_by_longest_path_and_spreads_siblings():
    # a -> c, b -> c, c -> d, a -> d: d on layer 2 (longest path), a and b side by side.
    layer, x, rev = layered_layout(4, np.array([0, 1, 2, 0]), np.array([2, 2, 3, 3]))
    assert layer.tolist() == [0, 0, 1, 2] and not rev.any()
    assert x[0] != x[1] and abs(x[0] + x[1]) < 1e-9  # centred in their layer


def test_view_draws_offline_with_text_fallback():
    run, _ = _run("jax_cnn_nographs")
    v = graph_viewer(run, depth=2)
    fig = v.figures()["graph"]
    nodes = v.graph.nodes
    drawn = nodes[nodes["drawn"]]
    markers = fig.data[1]
    assert len(markers.x) == len(drawn)
    assert sum(1 for p in fig.data[0].x if p is None) == len(v.graph.edges)
    assert any(v.graph.op in t or "fusion" in t for t in markers.hovertext)
    assert len(fig.layout.shapes) == drawn.loc[drawn["fusion"] != "", "fusion"].nunique() > 0
    text = v.text()
    assert v.graph.op in text and "µs" in text
    html = v.html()
    assert "tfprof-mount" in html
    # Where no script runs (GitHub, an untrusted notebook): the findings and the table.
    bundle = v._repr_mimebundle_()
    assert v.graph.op in bundle["text/html"] and "Instructions in the graph" in bundle["text/html"]
    assert bundle["text/plain"] == text


def test_layout_keeps_a_fusion_body_side_by_side():
    # Layer 1 holds 1, 2 (one body) and 3 (none), 3's operand between theirs: ungrouped,
    # barycentres put 3 between 1 and 2; grouped, 1 and 2 stay neighbours.
    src, dst = np.array([0, 5, 4]), np.array([1, 2, 3])
    layer, x, _ = layered_layout(6, src, dst)
    assert layer[1] == layer[2] == layer[3] == 1 and abs(x[1] - x[2]) == 2
    group = np.array([-1, 0, 0, -1, -1, -1])
    layer, x, _ = layered_layout(6, src, dst, group=group)
    assert abs(x[1] - x[2]) == 1


def test_a_run_without_xla_programs_is_told_so():
    class NoHlo:
        path = "kineto.json"
        hlo_modules: list = []

    with pytest.raises(UnknownHloOpError, match="kineto.json: .*no XLA program"):
        hlo_graph(NoHlo())
