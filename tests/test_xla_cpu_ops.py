"""XLA on CPU (issue 36 item 12): the work of a JAX program on the CPU as op rows.

The JAX CPU capture (tests/data/jax_cpu, 10 steps of a jitted two-conv train step) holds
XLA:CPU's thunks on the PjRt client and XLAEigen threads, each naming its HLO instruction
(``hlo_op``, ``program_id``), and the program's HLO on /host:metadata. XProf 2.24 shows no op
for it (tests/golden/jax_cpu_10steps: op stats with a host IDLE of 0 and nothing else); ours
counts each thunk for its instruction's framework op, as host rows marked beyond_xprof
(tfprof_widgets/analysis/frameworks/xla/cpu.py), and leaves XProf's own figures as they are.
"""

from __future__ import annotations

import pathlib

import numpy as np
import pytest
from fidelity_figures import differences, our_figures, rows, xprof_figures
from golden_tables import golden

import tfprof_widgets as tw
from tfprof_widgets.analysis.frameworks.xla.cpu import cpu_thunks

ROOT = pathlib.Path(__file__).resolve().parents[1]
JAX_CPU = ROOT / "tests" / "data" / "jax_cpu" / "jax_cnn_cpu_10steps.xplane.pb"
AMD = ROOT / "tests" / "data" / "xplane_amd_jax" / "jax08_gemm.xplane.pb"


@pytest.fixture(scope="module")
def run():
    return tw.load(JAX_CPU, progress=False)


def test_xprof_shows_no_op_of_the_jax_cpu_capture():
    """Where we differ: XProf's op table of this capture is one host IDLE row of 0 µs."""
    gold = rows(golden("jax_cpu_10steps", "framework_op_stats")[0])
    assert gold[["host_or_device", "type", "total_self_time"]].values.tolist() == [
        ["Host", "IDLE", 0.0]
    ]


def test_every_thunk_is_counted_for_its_instructions_framework_op(run):
    """Every host event naming an instruction (220 thunks) is found in the program's HLO and
    counted once: the rows' self time is the thunks' summed duration, each row is Host and
    beyond XProf, and the convolutions are JAX's conv_general_dilated, once per step."""
    ev = run.events
    named = run.stat("hlo_op").notna().to_numpy()
    t = cpu_thunks(run)
    assert len(t) == int(named.sum()) == 220
    ops = run.ops
    ours = ops[ops["beyond_xprof"]]
    assert len(ours) == 17 and (ours["host_or_device"] == "Host").all()
    assert ours["total_self_time_us"].sum() == pytest.approx(
        ev["dur_us"].to_numpy()[t["row"].to_numpy()].sum(), rel=1e-9
    )
    conv = ours[ours["type"] == "conv_general_dilated"]
    assert sorted(conv["operation"].astype(str)) == [
        "jit(train_step)/jvp()/conv_general_dilated",
        "jit(train_step)/transpose(jvp())/conv_general_dilated",
    ]
    assert (conv["occurrences"] == 10).all()
    # An instruction without op_name metadata keeps its own name, as on the GPU.
    unknown = ours[ours["type"] == "Unknown"]["operation"].astype(str)
    assert len(unknown) and unknown.str.contains("fusion|broadcast").all()
    assert (ours["total_self_time_us"] > 0).all()
    np.testing.assert_allclose(ours["self_time_percent"].sum(), 100.0)


def test_xprofs_figures_stay_xprofs(run):
    """Every figure XProf has of this capture is still ours: the op placement and the host
    IDLE count XProf's rows only, the steps and their breakdown are unchanged."""
    tools = ("overview_page", "framework_op_stats")
    theirs = xprof_figures({t: golden("jax_cpu_10steps", t) for t in tools})
    ours = our_figures(run)
    assert theirs["host_idle_us"] == 0.0 and theirs["host_op_rows"] == 0
    assert differences(ours, theirs) == []
    top = run.overview_summary.top_ops
    assert len(top) == 10 and top["beyond_xprof"].all()


def test_launches_on_a_gpu_host_are_not_cpu_work():
    """On a host with a GPU the runtime's launch calls carry hlo_op and program_id too
    (hipModuleLaunchKernel on the MI300X capture): device work, counted on the device, not
    host op rows."""
    amd = tw.load(AMD, progress=False)
    assert amd.stat("hlo_op").notna().sum() > 0
    assert cpu_thunks(amd).empty
    host = amd.ops[amd.ops["host_or_device"] == "Host"]
    assert not host["beyond_xprof"].any()
