"""Issue 41: the op rows of the op profile, roofline, op stats and PyTorch operators carry
their source ``file:line`` (``run.source_lines``' mapping) and open the source lines there;
the op profile's rows and the roofline's points open the graph around their op, from graphs
the page carries (so an exported page, without a kernel, opens them too)."""

from __future__ import annotations

import json
import pathlib

import pytest

import tfprof_widgets as tw
from tfprof_widgets.frameworks.source_lines import op_sources
from tfprof_widgets.views import graph_viewer_view as gv

ROOT = pathlib.Path(__file__).resolve().parents[2]
H100 = ROOT / "tests" / "data" / "xplane_h100_jax" / "jax_cnn_nographs.xplane.pb"
TORCH = ROOT / "tests" / "data" / "chrome" / "resnet50_v100_workers0.pt.trace.json.gz"


@pytest.fixture(scope="module")
def run():
    return tw.load(H100, progress=False)


def _payload(view) -> dict:
    return json.loads(view.payload_json())


def _lines(run) -> set[str]:
    t = run.source_lines
    named = t[(t["source_file"].astype(str) != "").to_numpy()]
    return set(named["source_file"].astype(str) + ":" + named["source_line"].astype(str))


def test_op_profile_rows_carry_their_line_and_graph(run):
    view = tw.views.hlo_op_profile(run)
    p = _payload(view)
    t = view.table().df
    ops = t[t["level"] == "op"]
    # Every op's line is one of run.source_lines' lines; most ops name one.
    lines = set(ops["source"]) - {""}
    assert lines <= _lines(run) and (ops["source"] != "").mean() > 0.8
    heaviest = ops.sort_values("time_us").iloc[-1]
    assert heaviest["name"] == "input_scatter_fusion"
    assert heaviest["source"].endswith("capture.py:113")
    # The same line as the instruction's row of op_sources (run.source_lines' input).
    h = run.hlo_instructions
    src = op_sources(run)
    row = src[(h["instruction"].astype(str).to_numpy()[src["op_id"]] == "input_scatter_fusion")]
    assert f"{row['source_file'].iloc[0]}:{row['source_line'].iloc[0]}" == heaviest["source"]
    # Program and category rows open nothing.
    assert (t.loc[t["level"] != "op", "graph_key"] == "").all()
    # The page carries the graphs of the heaviest ops and each op line's listing.
    graphs, listings = p["panels"]["graph"]["items"], p["panels"]["source"]["items"]
    top = ops.sort_values("time_us", ascending=False)["graph_key"].head(gv.GRAPH_PANELS)
    assert list(graphs) == list(top)
    assert set(listings) == lines
    first = graphs[heaviest["graph_key"]]
    assert first[1]["kind"] == "figs" and len(first[1]["figs"][0]["fig"]["data"][1]["x"]) >= 3
    assert "▶" in listings[heaviest["source"]][0]["html"]
    # The table block links a row to the graph and its source cell to the line.
    block = next(b for b in p["variants"]["op"] if b["kind"] == "table")
    assert {(x["panel"], x["column"]) for x in block["links"]} == {
        ("graph", "graph_key"),
        ("source", "source"),
    }
    assert "{key}" in p["panels"]["graph"]["missing"]


def test_roofline_points_open_the_graph_of_their_op(run):
    view = tw.views.roofline(run)
    p = _payload(view)
    fig = p["variants"][""][0]["figs"][0]
    assert fig["link"] == {"panel": "graph", "at": 6}
    points = [row for t in fig["fig"]["data"] for row in (t.get("customdata") or [])]
    keys = {row[6] for row in points}
    assert keys == set(gv.graph_key(run.roofline["program_id"], run.roofline["hlo_op_name"])) & keys
    # The heaviest ops' points find their graph in the page.
    heavy = run.roofline.sort_values("total_self_time_us", ascending=False).head(5)
    for key in gv.graph_key(heavy["program_id"], heavy["hlo_op_name"]):
        assert key in p["panels"]["graph"]["items"], key
    assert set(view.table().df["source"]) - {""} <= _lines(run)


def test_op_stats_rows_carry_the_line_of_their_op(run):
    view = tw.views.op_stats(run)
    p = _payload(view)
    df = view.table().df
    device = df[(df["host_or_device"] == "Device") & (df["type"] != "IDLE")]
    # The device ops' time is on a named line where run.source_lines names one (a fusion
    # without a framework op by its instruction's line; XLA's own broadcasts, pads and
    # copies name none: 6 % here), every line one of run.source_lines'.
    t = device["total_self_time_us"]
    assert t[device["source"] != ""].sum() / t.sum() > 0.9
    assert set(df["source"]) - {""} <= _lines(run)
    conv = df[df["operation"] == "jit(step)/transpose(jvp())/conv_general_dilated"]
    assert conv["source"].iloc[0].endswith("capture.py:107")
    assert set(p["panels"]["source"]["items"]) == set(df["source"]) - {""}


def test_pytorch_operators_carry_their_line():
    run = tw.load(TORCH, progress=False)
    view = tw.views.operators(run)
    df = view.table("name").df
    assert (df["source"] != "").sum() >= 10
    assert set(df["source"]) - {""} <= _lines(run)
    p = _payload(view)
    assert p["panels"]["source"]["items"]


def test_source_lines_rows_open_their_listing(run):
    view = tw.views.source_lines(run)
    p = _payload(view)
    items = p["panels"]["source"]["items"]
    assert set(items) == _lines(run)
    block = next(b for b in p["variants"][""] if b["kind"] == "table")
    assert block["links"] == [{"panel": "source", "column": "location"}]


def test_views_without_links_send_no_panels(run):
    for name in ("overview", "kernel_stats", "memory_viewer", "graph_viewer"):
        assert "panels" not in _payload(getattr(tw.views, name)(run)), name
