"""PyTorch ops in the neutral op table (``run.ops``), the kernel stats' operation and the op
stats view, on the real Kineto traces (tests/data/chrome), against torch-tb-profiler's operator view
(``run.torch_ops``, itself checked against tb_plugin 0.4.3 in tests/test_pytorch.py, and the
golden figures of ``scripts/make_hta_golden.py``)."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from conftest import ROOT, kineto_run

import tfprof_widgets as tw
from tfprof_widgets import schema
from tfprof_widgets.frameworks.pytorch import op_table

# The Kineto traces of the shared captures, bundled unchanged (tests/data/NOTICE); the folder
# holds other Chrome traces too, hence the list.
KINETO = ROOT / "tests" / "data" / "chrome"
GOLDEN = ROOT / "tests" / "golden" / "kineto"
TRACES = (
    "eager_b200.json.gz",
    "resnet50_v100_workers0.pt.trace.json.gz",
    "resnet50_v100_workers4.pt.trace.json.gz",
    "timesformer_h100.json.gz",
    "torch_transformer_h100.pt.trace.json.gz",
)


@pytest.fixture(params=TRACES, ids=lambda n: n.split(".")[0])
def loaded(request):
    return request.param, kineto_run(KINETO / request.param)


def _golden(name: str) -> dict:
    stem = name.removesuffix(".gz").removesuffix(".json").removesuffix(".trace").removesuffix(".pt")
    return json.loads((GOLDEN / f"{stem}.json").read_text())


def test_op_names_by_form():
    """Rule: a host op is a dispatcher op (namespace::op), an autograd node, a module or a
    DataLoader batch; its type is its namespace. Steps, runtime calls, Python frames, the
    optimizer's annotations and kernels are no ops."""
    names = [
        "aten::conv2d",
        "c10d::allreduce_",
        "autograd::engine::evaluate_function: AddmmBackward0",
        "AddmmBackward0",
        "nn.Module: Linear_0",
        "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__",
        "ProfilerStep#3",
        "cudaLaunchKernel",
        "torch/nn/modules/module.py(1736): _call_impl",
        "Optimizer.step#AdamW.step",
        "void at::native::vectorized_elementwise_kernel<4>",
        "[memory]",
    ]
    got = op_table.parse_op_names(pd.Index(names, dtype=object))
    known = got["category"] == op_table.CATEGORY
    assert known.tolist() == [True] * 6 + [False] * 6
    assert got["op_type"][known].tolist() == [
        "aten",
        "c10d",
        "autograd",
        "autograd",
        "nn.Module",
        "DataLoader",
    ]
    assert got["op_name"].tolist() == names


def test_device_ops_are_the_launching_operators(loaded):
    """Rule (torch-tb-profiler's operator view, HTA's kernel-to-op link): each kernel, memcpy
    and memset is a device op of the operator whose runtime call launched it (the call's
    correlation id, then its External id, the innermost operator around the call). So the
    device self time of each operator in run.ops equals run.torch_ops' device self time and
    tb_plugin 0.4.3's (within 0.05 µs); what no operator launched is device IDLE."""
    name, run = loaded
    ops = run.ops
    assert not schema.mismatches(ops, schema.OP_STATS)
    device = ops[(ops["host_or_device"] == "Device") & (ops["type"] != "IDLE")]
    assert len(device) and not device["beyond_xprof"].any()
    ours = device.groupby("operation", observed=True)["total_self_time_us"].sum()
    torch_ops = run.torch_ops.groupby("name", observed=True)["device_self_us"].sum()
    torch_ops = torch_ops[torch_ops > 0]
    assert sorted(ours.index.astype(str)) == sorted(torch_ops.index.astype(str))
    np.testing.assert_allclose(ours.reindex(torch_ops.index), torch_ops, rtol=1e-9, atol=1e-6)
    tb_plugin = _golden(name)["tb_plugin"]["operators"]
    for op, figures in tb_plugin.items():
        assert ours.get(op, 0.0) == pytest.approx(figures["device_self"], abs=0.05), op
    # Device op time + IDLE = the GPU's span: nothing counted twice.
    idle = ops[(ops["host_or_device"] == "Device") & (ops["type"] == "IDLE")]
    gpu = run.events[run.events["plane"].astype(str).str.startswith("/device:GPU")]
    span = gpu["end_us"].max() - gpu["start_us"].min()
    assert ours.sum() + idle["total_self_time_us"].sum() == pytest.approx(span, rel=1e-6)


def test_host_ops_are_the_cpu_operators(loaded):
    """Rule (XProf's host op table on PyTorch's names): ATen and other dispatcher ops nest per
    thread, self = duration less the ops directly inside; calls per name are the operator
    events of that name (torch_ops counts a repeat nested in its namesake once, XProf each)."""
    name, run = loaded
    ops = run.ops
    host = ops[(ops["host_or_device"] == "Host") & (ops["type"] != "IDLE")].set_index("operation")
    assert (host["total_self_time_us"] <= host["total_time_us"] + 1e-6).all()
    assert (host["total_self_time_us"] >= -1e-6).all()
    aten = run.torch_ops[run.torch_ops["name"].astype(str).str.startswith("aten::")]
    assert set(aten["name"].astype(str)) <= set(host.index.astype(str))
    events = run.events[run.events["plane"] == "/host:CPU"]["name"].astype(str)
    counts = events[events.str.startswith("aten::")].value_counts()
    aten_rows = host[host["type"] == "aten"]
    assert (aten_rows["occurrences"] == counts.reindex(aten_rows.index)).all()
    calls = aten.set_index(aten["name"].astype(str))["calls"]
    assert (aten_rows["occurrences"].reindex(calls.index) >= calls).all()


def test_kernel_stats_name_the_launching_operator(loaded):
    """Rule: the kernel stats' operation is the operator that launched the kernel; each
    operator's kernel time is within its device op time (which adds its copies and
    memsets)."""
    name, run = loaded
    kernels = run.kernels
    named = kernels[kernels["operation"] != ""]
    assert len(named) and named["total_time_us"].sum() >= 0.99 * kernels["total_time_us"].sum()
    per_op = named.groupby("operation")["total_time_us"].sum()
    device = run.ops[run.ops["host_or_device"] == "Device"]
    device = device.groupby("operation", observed=True)["total_self_time_us"].sum()
    assert (per_op <= device.reindex(per_op.index) + 1e-3).all()


def test_op_stats_view_shows_the_operators():
    """The op stats view of a PyTorch run: aten rows on both sides and pies by operator."""
    path = KINETO / "resnet50_v100_workers0.pt.trace.json.gz"
    run = kineto_run(path)
    view = tw.views.op_stats(run)
    text = view.text()
    assert "aten::cudnn_convolution" in text
    df = view.table().df
    assert {"Host", "Device"} <= set(df["host_or_device"].astype(str))
    assert (df["operation"].astype(str) == "aten::conv2d").any()
    assert "device_operation" in view.figures()
    kernel_view = tw.views.kernel_stats(run)
    assert (kernel_view.table().df["operation"].astype(str).str.startswith("aten::")).any()
    pie = kernel_view.figures()["top_ops"].data[0]
    assert "aten::cudnn_convolution" in list(pie.labels)


def test_operator_views_static_image_mixes_bars_and_pies():
    """The operator view's one static figure (the image a notebook keeps): the step bars and
    the four pies in one grid (a pie has no axes to move; this once raised AttributeError
    when the view was displayed)."""
    path = ROOT / "tests" / "data" / "chrome" / "torch_transformer_h100.pt.trace.json.gz"
    run = tw.load(path)
    fig = tw.views.operators(run).static_figure()
    kinds = [t.type for t in fig.data]
    assert kinds.count("bar") == 8 and kinds.count("pie") == 4


def test_ranks_in_one_run_pair_launches_within_their_own_rank(tmp_path):
    """Two ranks of one job (HTA's sampled rank 0 and rank 1 traces) load as one run: each
    rank's CUPTI numbers its correlations from the same start, so a kernel pairs with its own
    rank's runtime call, and each rank's operator table is the one it has alone."""
    import shutil

    from tfprof_widgets.analysis.event_index import host_codes
    from tfprof_widgets.frameworks.pytorch import ops

    for rank in (0, 1):
        shutil.copy(
            ROOT / "tests" / "data" / "chrome" / f"hta_sampled_rank{rank}.json.gz",
            tmp_path / f"rank-{rank}.pt.trace.json.gz",
        )
    both = tw.load(tmp_path)
    gpu, call = ops.launches(both)
    host = host_codes(both)
    paired = call >= 0
    assert paired.sum() > 1000
    assert (host[gpu[paired]] == host[call[paired]]).all()
    hosts = list(dict.fromkeys(both.planes["host"].astype(str)))
    assert len(hosts) == 2
    for rank, name in enumerate(hosts):
        alone = tw.load(tmp_path / f"rank-{rank}.pt.trace.json.gz").torch_ops
        mine = both.torch_ops[both.torch_ops["host"].astype(str) == name]
        cols = ["name", "calls", "host_self_us", "device_self_us", "device_total_us"]
        pd.testing.assert_frame_equal(
            mine[cols].sort_values("name").reset_index(drop=True),
            alone[cols].sort_values("name").reset_index(drop=True),
            check_categorical=False,
        )
