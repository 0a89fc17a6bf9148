"""TPU captures: the synthetic capture of tests/support/tpu_builder.py, laid out as a real
libtpu JAX capture (tests/data/reference/xla-capture-inventory.txt), against xprof 2.24's
converters run on it (tests/golden/synthetic_tpu, made by scripts/make_golden.py)."""

from __future__ import annotations

import pathlib
import re

import numpy as np
import pandas as pd
import pytest
from fidelity_figures import differences, our_figures, rows, xprof_figures
from golden_tables import golden, synthetic_tpu_path

import tfprof_widgets as tw
from tfprof_widgets.analysis.overview import overview_summary
from tfprof_widgets.proto import xplane_pb2

ROOT = pathlib.Path(__file__).resolve().parents[2]
INVENTORY = ROOT / "tests" / "data" / "reference" / "xla-capture-inventory.txt"
TOOLS = ("overview_page", "framework_op_stats", "memory_profile", "kernel_stats")


@pytest.fixture(scope="module")
def path():
    return synthetic_tpu_path()


@pytest.fixture(scope="module")
def tpu(path):
    return tw.load(path, progress=False)


@pytest.fixture(scope="module")
def xprof_ops():
    """xprof's device rows: one per HLO op, named by the HLO op (no tf_op on the ops)."""
    t = rows(golden("synthetic_tpu", "framework_op_stats")[0])
    return t[(t["host_or_device"] == "Device") & (t["type"] != "IDLE")].reset_index(drop=True)


def _inventory_tpu() -> dict[str, set]:
    """Plane stats, line names and op metadata stats of the real TPU capture's core plane."""
    text = INVENTORY.read_text()
    part = text.split("== JAX on 4 TPU")[1].split("plane '/host:metadata'")[0]

    def names(label: str) -> set:
        line = re.search(rf"{label}[^:]*: (.*)", part).group(1)
        return {re.sub(r":\w+( \d+)?$", "", s.strip()) for s in line.split(", ")}

    return {
        "plane_stats": names("plane stats"),
        "metadata_stats": names(r"event-metadata stats \(count\)"),
        "lines": set(re.findall(r"line '([^']+)'", part)),
    }


def test_the_builder_has_the_real_tpu_layout(path):
    """Rule for the builder: every plane stat, line and op-metadata stat of the real libtpu
    capture, the core's clock on the ops as uint64, the programs on /host:metadata without
    a program_id stat, and no tf_op on an XLA op (libtpu names the framework op in the HLO)."""
    real = _inventory_tpu()
    space = xplane_pb2.XSpace()
    space.ParseFromString(path.read_bytes())
    core = next(p for p in space.planes if p.name == "/device:TPU:0")
    stat_name = {k: m.name for k, m in core.stat_metadata.items()}
    assert {stat_name[s.metadata_id] for s in core.stats} == real["plane_stats"]
    assert {ln.name for ln in core.lines} >= real["lines"]
    op_stats = set()
    for md in core.event_metadata.values():
        op_stats |= {stat_name[s.metadata_id] for s in md.stats}
    assert op_stats <= real["metadata_stats"] and "tf_op" not in op_stats
    assert {"hlo_category", "program_id", "symbol_id", "flops", "bytes_accessed"} <= op_stats
    ops = next(ln for ln in core.lines if ln.name == "XLA Ops")
    kinds = {stat_name[s.metadata_id]: s.WhichOneof("value") for s in ops.events[0].stats}
    assert kinds == {"device_offset_ps": "uint64_value", "device_duration_ps": "uint64_value"}
    meta = next(p for p in space.planes if p.name == "/host:metadata")
    meta_stats = {meta.stat_metadata[s.metadata_id].name for m in meta.event_metadata.values()
                  for s in m.stats}  # fmt: skip
    assert meta_stats == {"Hlo Proto"} and min(meta.event_metadata) < 0  # a fingerprint > 2**63


def test_tpu_figures_are_xprofs(tpu):
    """Device IDLE (per core: the span of its op and step lines minus the ops' self time),
    device idle % and host idle % (a JAX host runs no TF op: 100 %, XProf's TPU page), the
    duty cycle (XLA Ops over the window of ops and modules, XEvent clock, leaving out the
    off-duty categories: the 'megacore fusion' here takes it from 74.1 % to 72.9 %), device op
    occurrence %, HLO rows, the allocators and the steps (the TPU step table:
    tests/test_xla_tpu_steps.py checks each of its rules). The op names are the next test's;
    the input statement is left out because XProf's TPU page leaves it empty (ours is stated in
    tests/test_xla_tpu_steps.py)."""
    theirs = xprof_figures({t: golden("synthetic_tpu", t) for t in TOOLS})
    theirs |= xprof_figures({"hlo_stats": golden("synthetic_tpu", "hlo_stats")})
    drop = ("input_statement", "top_device_ops", "device_op_rows")
    keep = {k: v for k, v in theirs.items() if k not in drop}
    assert keep["device_duty_cycle_percent"] == 72.9 and keep["host_idle_percent"] == 100.0
    assert keep["device_idle_us"] == 2.323 and keep["hlo_rows"] == 11
    assert differences(our_figures(tpu), keep) == []


def test_device_ops_are_named_by_the_framework_op_of_their_instruction(tpu, xprof_ops):
    """Rule: an HLO op without a tf_op is named by its instruction's metadata.op_name in the
    program's HLO (parsed like XProf's TF op names: type = its last component), as XProf does
    on GPUs; XProf 2.24 names TPU ops by the HLO op with type 'Unknown' (the gap we close).
    An instruction without op_name keeps XProf's row as is. Times are XProf's: each of our
    rows sums XProf's rows of its HLO ops and runs as often as the busiest of them."""
    h = tpu.hlo_instructions
    named = dict(zip(h["instruction"].astype(str), h["op_name"].astype(str)))
    opcode = dict(zip(h["instruction"].astype(str), h["opcode"].astype(str)))
    # Without an op_name, ours types the op by its HLO opcode where XProf says 'Unknown'
    # (issue 36 item 9: on a real v6e capture 96.5 % of the device time read 'Unknown').
    gold = xprof_ops.assign(
        ours=[named.get(n) or n for n in xprof_ops["operation"]],
        ours_type=[
            named[n].rsplit("/", 1)[-1] if named.get(n) else opcode[n]
            for n in xprof_ops["operation"]
        ],
    )
    assert (gold["type"] == "Unknown").all()
    want = gold.groupby("ours").agg(
        type=("ours_type", "first"),
        occurrences=("occurrences", "max"),
        total=("total_time", "sum"),
        self_=("total_self_time", "sum"),
    )
    ops = tpu.ops
    dev = ops[(ops["host_or_device"] == "Device") & (ops["type"] != "IDLE")].set_index("operation")
    dev = dev.loc[want.index]
    assert len(dev) == len(want) == len(gold) - 1  # two HLO ops of one transposed dot_general
    assert "jit(train_step)/transpose(jvp())/dot_general" in want.index
    assert "wrapped_convert.2" in want.index  # an XLA-added convert: no framework op
    assert dev["type"].astype(str).tolist() == want["type"].tolist()
    np.testing.assert_array_equal(dev["occurrences"], want["occurrences"])
    np.testing.assert_allclose(dev["total_time_us"], want["total"], atol=1e-6)
    np.testing.assert_allclose(dev["total_self_time_us"], want["self_"], atol=1e-6)
    assert not dev["beyond_xprof"].any()


def test_top_device_ops_are_xprofs_under_our_names(tpu, xprof_ops):
    """The overview's top ten device ops: XProf's top ten HLO ops by self time, each under
    its framework op (above), ordered by the framework op's self time (two HLO ops of one
    framework op add up, so the order is not XProf's, and the one row that frees makes room
    for XProf's eleventh)."""
    top_theirs = rows(golden("synthetic_tpu", "overview_page")[0])["operation"].tolist()
    h = tpu.hlo_instructions
    named = dict(zip(h["instruction"].astype(str), h["op_name"].astype(str)))
    top = overview_summary(tpu).top_ops
    ours = set(top["operation"].astype(str))
    assert ours >= {named.get(n) or n for n in top_theirs}
    assert ours <= {named.get(n) or n for n in xprof_ops["operation"]}
    self_t = top["total_self_time_us"].to_numpy()
    assert (np.diff(self_t) <= 0).all() and len(top) == len(top_theirs) == 10


def test_16bit_share_from_the_programs_output_types(tpu):
    """Ours (XProf's overview prints no 16-bit share on TPU): the self time of ops whose
    instruction outputs bf16/f16, over all ops' self time; the output type is read here from
    XProf's own HLO text of each op (hlo_op_expression)."""
    h = rows(golden("synthetic_tpu", "hlo_stats"))
    out_type = h["hlo_op_expression"].str.extract(r" = \(?([a-z0-9]+)\[", expand=False)
    sixteen = out_type.isin(["bf16", "f16"])
    assert sixteen.sum() >= 3 and (~sixteen).sum() >= 3
    want = 100 * h.loc[sixteen, "total_self_time"].sum() / h["total_self_time"].sum()
    o = overview_summary(tpu)
    assert o.program_16bit_percent == pytest.approx(want, rel=5e-3)
    assert o.device_compute_16bit_percent == 0.0  # XProf's figure stays XProf's


def test_16bit_share_on_the_h100_conv_net():
    """The JAX H100 conv net is a bf16 program: XProf prints 0.0 % on both captures (it reads
    names, not shapes); by the output types of its instructions (XProf's hlo_op_expression;
    a tuple by its first element, as a cuDNN call's (bf16 result, u8 workspace)), weighted by
    the kernels' time, most of its device time is 16-bit."""
    capture = ROOT / "tests" / "data" / "xplane_h100_jax" / "jax_cnn_nographs.xplane.pb"
    theirs = golden("jax_cnn_nographs", "overview_page")
    assert theirs[0]["p"]["device_compute_16bit_percent"] == "0.0%"
    h = rows(golden("jax_cnn_nographs", "hlo_stats"))
    out_type = h["hlo_op_expression"].str.extract(r" = \(?([a-z0-9]+)\[", expand=False)
    sixteen = out_type.isin(["bf16", "f16"])
    want = 100 * h.loc[sixteen, "total_time"].sum() / h["total_time"].sum()
    run = tw.load(capture, progress=False)
    o = overview_summary(run)
    assert 70 < want < 90
    assert o.program_16bit_percent == pytest.approx(want, rel=5e-3)
    # The same program under CUDA graphs: its kernels attributed inside the command buffers
    # (ours) give nearly the same share.
    graphs = overview_summary(tw.load(capture.with_name("jax_cnn_graphs.xplane.pb")))
    assert abs(graphs.program_16bit_percent - want) < 5
    # The overview says it as its one precision figure, marked as ours; XProf's 0.0 % (which
    # would contradict it, issue 36 item 4) stays in the summary only.
    (line,) = [s for s in tw.views.overview(run).findings() if s.startswith("Device compute p")]
    assert f"{want:.1f} % of device op time" in line and "ours" in line and "0.0 %" not in line


def test_no_program_no_16bit_share():
    """A capture whose framework carries no compiled program has no such share (NaN)."""
    capture = ROOT / "tests" / "data" / "bert_8gpu_multi_worker.xplane.pb"
    assert np.isnan(overview_summary(tw.load(capture, progress=False)).program_16bit_percent)


def test_tpu_op_metadata_carries_the_cost_analysis(tpu):
    """XLA's cost analysis rides on each op's metadata (flops, model_flops, bytes_accessed per
    run): what XProf's HLO stats turn into FLOP rates; xprof's model FLOP rate = flops × runs
    / total time."""
    from tfprof_widgets.frameworks.xla.tpu import tpu_device_ops

    ops = tpu_device_ops(tpu)
    per = ops.groupby("op_name").agg(flops=("model_flops", "sum"), t=("dur_ps", "sum"))
    gold = rows(golden("synthetic_tpu", "hlo_stats")).set_index("hlo_op_name")
    rate = per["flops"] / (per["t"] / 1e12) / 1e9  # GFLOP/s
    np.testing.assert_allclose(rate[gold.index], gold["model_flop_rate"], rtol=5e-3)
    assert isinstance(pd.Series(rate).iloc[0], float)


def test_without_the_programs_the_names_are_xprofs(tmp_path, xprof_ops):
    """A TPU capture without /host:metadata (no HLO to read): every device op row is XProf's
    as is (the HLO op's name; its type the name's stem where XProf says 'Unknown'), and there
    is no 16-bit share of ours."""
    from tpu_builder import tpu_capture

    b = tpu_capture()
    planes = [p for p in b.space.planes if p.name != "/host:metadata"]
    del b.space.planes[:]
    b.space.planes.extend(planes)
    run = tw.load(b.write(tmp_path / "no_programs.xplane.pb"), progress=False)
    assert len(run.hlo_instructions) == 0
    ops = run.ops
    dev = ops[(ops["host_or_device"] == "Device") & (ops["type"] != "IDLE")]
    assert sorted(dev["operation"].astype(str)) == sorted(xprof_ops["operation"])
    # XProf's type is 'Unknown'; ours the name's stem, the HLO opcode (issue 36 item 9)
    stems = dev["operation"].astype(str).str.replace(r"\.\d+$", "", regex=True)
    assert (dev["type"].astype(str) == stems).all()
    assert np.isnan(overview_summary(run).program_16bit_percent)
