"""XLA on CPU (issue 36 item 12): the work of a JAX program on the CPU as op rows.

The JAX CPU capture (tests/data/jax_cpu, 10 steps of a jitted two-conv train step) holds
XLA:CPU's thunks on the PjRt client and XLAEigen threads, each naming its HLO instruction
(``hlo_op``, ``program_id``), and the program's HLO on /host:metadata. XProf 2.24 shows no op
for it (tests/golden/jax_cpu_10steps: op stats with a host IDLE of 0 and nothing else); ours
counts each thunk for its instruction's framework op, as host rows marked beyond_xprof
(tfprof_widgets/frameworks/xla/cpu.py), and leaves XProf's own figures as they are.
"""

from __future__ import annotations

import pathlib

import numpy as np
import pytest
from fidelity_figures import differences, our_figures, rows, xprof_figures
from golden_tables import golden

import tfprof_widgets as tw
from tfprof_widgets.frameworks.xla.cpu import cpu_thunks

ROOT = pathlib.Path(__file__).resolve().parents[2]
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


def test_the_overview_says_how_much_of_all_others_is_xla_cpu(run):
    """XProf's verdict on this capture rests on 'All Others' (97 %): step time its breakdown
    (the TF-op threads) leaves out. Ours says what filled it: XLA:CPU ran the program during
    92.7 % of the averaged steps' time (its thunks over all threads, each instant once: a
    1 µs grid here), where other captures keep the general note."""
    from tfprof_widgets.frameworks.xla.cpu import cpu_step_share

    steps = run.steps.iloc[1:9]  # the overview's steps 1..8
    share = cpu_step_share(run, steps)
    ev = run.events.iloc[cpu_thunks(run)["row"].to_numpy()]
    busy = total = 0
    for a, d in zip(steps["start_us"], steps["step_time_us"]):
        grid = np.zeros(int(d) + 1, bool)
        for s, e in zip(ev["start_us"] - a, ev["end_us"] - a):
            grid[max(int(round(s)), 0) : max(min(int(round(e)), len(grid)), 0)] = True
        busy, total = busy + grid.sum(), total + d
    assert share == pytest.approx(100 * busy / total, abs=0.05)
    assert 90 < share <= 100
    note = tw.views.overview(run).potentially_note()
    assert (
        f"XLA:CPU ran the program (its thunks: the 'ours only' host ops) during {share:.1f} %"
        in note
    )
    gpu = tw.load(AMD, progress=False)
    share = cpu_step_share(gpu, gpu.steps)
    assert share != share  # NaN: no XLA:CPU work
