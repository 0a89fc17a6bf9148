"""The memory peak's step in the steps table's numbering (issue 36 item 3, invariant
'step_numbering'): the step of the peak event's own step group; an event the profiler put
in no group (PyTorch's autograd thread) is in the step whose group's host events span its
time. Not XProf's group id of the peak (a number of its own, "previous + 1" outside the
steps), and not the step whose steps-table span holds the peak's time: that span is the
device's work on a GPU, while the host allocates for the next step already.
"""

from __future__ import annotations

import functools
import re

import numpy as np
from conftest import ROOT

import tfprof_widgets as tw
from tfprof_widgets.analysis.memory import peak_events, peak_steps

DATA = ROOT / "tests" / "data"


@functools.cache
def _load(rel: str):
    return tw.load(DATA / rel if not rel.startswith("sample_profiles/") else ROOT / rel,
                   progress=False)  # fmt: skip


def _header(run, allocator: str) -> str:
    v = tw.views.memory_timeline(run, allocator)
    return re.sub(r"<[^>]+>", "", v.header(v.allocator, v.host))


def _steps(run) -> dict[str, int]:
    return dict(zip(run.memory_summary["allocator"].astype(str), peak_steps(run).tolist()))


def test_jax_host_allocation_for_the_next_step_is_in_that_step():
    """JAX H100 (no graphs): the host's input transfer for step 9 peaks xla_gpu_host_bfc at
    70.068 ms, inside the steps table's span of step 8 (the device's work, until 70.73 ms)."""
    run = _load("xplane_h100_jax/jax_cnn_nographs.xplane.pb")
    assert _steps(run) == {"GPU_0_bfc": 1, "xla_gpu_host_bfc": 9}
    s = run.memory_summary.set_index("allocator").loc["xla_gpu_host_bfc"]
    st = run.steps.set_index("step")
    assert st.loc[8, "start_us"] <= s["peak_time_us"] < st.loc[9, "start_us"]
    assert "(step 9;" in _header(run, "xla_gpu_host_bfc")


def test_the_peak_event_s_group_not_xprof_s_group_of_another_event():
    """custom_loop (TF): the peak event is in group 16, the steps table's step 18; XProf's
    peak_group_id 17 is of the last event at the peak's level, after the last step."""
    run = _load("sample_profiles/custom_loop")
    s = run.memory_summary.iloc[0]
    assert s["peak_group_id"] == 17 and 17 not in set(run.steps["group_id"].tolist())
    assert run.events["group_id"].iat[int(peak_events(run)[0])] == 16
    assert _steps(run) == {"mklcpu": 18}
    assert "(step 18;" in _header(run, "mklcpu")


def test_an_ungrouped_pytorch_backward_allocation_is_in_its_profiler_step():
    """ResNet-50 V100 (4 workers): GPU:0 peaks at 780.739 ms on the autograd thread, which
    the profiler groups with no step (XProf-style id 6: none of the table's); it is inside
    ProfilerStep#10 on the host, the steps table's step 10."""
    run = _load("chrome/resnet50_v100_workers4.pt.trace.json.gz")
    e = int(peak_events(run)[list(run.memory_summary["allocator"].astype(str)).index("GPU:0")])
    assert run.events["group_id"].isna().iat[e]
    assert _steps(run)["GPU:0"] == 10
    assert "(step 10;" in _header(run, "GPU:0")


def test_a_replica_s_peak_is_in_the_step_its_group_is_although_the_span_is_another_gpu_s():
    """bert 8-GPU: one step, whose steps-table span is GPU:6's work (2,440-2,461 ms); GPU:4's
    replica ran group 0 at 1,788-1,812 ms, where GPU_4_bfc peaks: step 0, not 'between'."""
    run = _load("bert_8gpu_multi_worker.xplane.pb")
    assert _steps(run)["GPU_4_bfc"] == 0
    assert "(step 0;" in _header(run, "GPU_4_bfc")


def test_hover_names_the_steps_table_step_of_each_event():
    """The plot's hover says each event's step in the steps table's numbering: custom_loop's
    mklcpu events of groups 0..16 read steps 2..18, those after the last step none."""
    run = _load("sample_profiles/custom_loop")
    fig, _ranges, custom = tw.views.memory_timeline(run).figure("mklcpu", "vm")
    steps = {str(x) for x in custom[1][7]}
    shown = {int(m) for x in steps for m in re.findall(r"step (\d+)", x)}
    assert shown and shown <= set(run.steps["step"].tolist())
    assert ", outside the steps" in steps
    assert "%{customdata[7]}" in str(fig.to_dict()["data"][1]["hovertemplate"])


def test_synthetic_tpu_memory_in_no_step_names_none():
    """Synthetic TPU: the allocations are on a runtime thread in no step group, and no step
    group has host events (the steps come from the device's Steps line): no step named."""
    import pathlib
    import tempfile

    from tpu_builder import tpu_capture

    with tempfile.TemporaryDirectory() as d:
        run = tw.load(tpu_capture().write(pathlib.Path(d) / "t.xplane.pb"), progress=False)
        assert len(run.steps) and (peak_steps(run) == -1).all()
        text = _header(run, "0")
    assert "outside the steps" in text and not re.search(r"\bstep \d", text)
    assert np.all(np.isin(run.steps["step"], [3, 4, 5]))
