"""Fuzzing the tool-data and TF 2.0/2.1 trace readers with mutated real files (the mutations
of test_fuzz.py): each must load, with its analyses and views working, or raise a
ProfileError naming the file; never another exception, never a hang, never a write."""

import gzip
import shutil

import pytest
from hypothesis import given, settings
from test_fuzz import EXAMPLES, SETTINGS, mutated
from tool_data_files import BERT_HOST, TOOLDATA

import tfprof_widgets as tw
from tfprof_widgets import views

# Nine files (the mutations reach every reader path within these).
FEWER = settings(SETTINGS, max_examples=max(EXAMPLES // 3, 10))
FILES = {
    "overview_page.pb": TOOLDATA / "demo_GPU-compute-bound" / "localhost.overview_page.pb",
    "input_pipeline.pb": TOOLDATA / "demo_GPU-input-bound" / "localhost.input_pipeline.pb",
    "tensorflow_stats.pb": TOOLDATA / "demo_Cloud-TPU" / "10.240.1.50.tensorflow_stats.pb",
    "kernel_stats.pb": TOOLDATA / "bert_tf2x" / f"{BERT_HOST}.kernel_stats.pb",
    "overview_page.json": TOOLDATA / "demo_Cloud-TPU" / "10.240.1.50.overview_page.json",
    "input_pipeline.json": TOOLDATA / "demo_Cloud-TPU" / "10.240.1.50.input_pipeline.json",
    "pod_viewer.json": TOOLDATA / "xprof_datatables" / f"{BERT_HOST}.pod_viewer.json",
    "trace": TOOLDATA / "tf20_gpu_timeline" / "local.trace",
}


def use(run) -> None:
    """What a notebook does with a run: its tables and the views that read them."""
    for name in ("steps", "ops", "kernels", "memory_summary", "overview_summary"):
        getattr(run, name)
    _ = run.input_pipeline
    views.overview(run).html(include_plotlyjs=False)
    views.op_stats(run).html(include_plotlyjs=False)


@pytest.mark.parametrize("suffix", sorted(FILES))
def test_tool_file_mutations(tmp_path, suffix):
    path = tmp_path / f"h.{suffix}"
    original = FILES[suffix].read_bytes()

    @FEWER
    @given(mutated(original))
    def check(data):
        path.write_bytes(data)
        try:
            run = tw.load(path, progress=False)
        except tw.ProfileError as exc:
            assert str(path) in str(exc)
            return
        use(run)

    check()


def test_memory_profile_mutations(tmp_path):
    """The memory profile is gzip-compressed JSON: mutate the JSON, then compress it."""
    src = TOOLDATA / "bert_tf2x" / f"{BERT_HOST}.memory_profile.json.gz"
    # One allocator keeps each example fast; the structure is the same for all.
    text = gzip.decompress(src.read_bytes())[:60_000]
    path = tmp_path / "h.memory_profile.json.gz"

    @FEWER
    @given(mutated(text))
    def check(data):
        path.write_bytes(gzip.compress(data))
        try:
            run = tw.load(path, progress=False)
        except tw.ProfileError as exc:
            assert str(path) in str(exc)
            return
        _ = run.memory_breakdown
        views.memory_timeline(run).html(include_plotlyjs=False)

    check()


def test_a_mutated_file_in_a_run_directory_leaves_the_others(tmp_path):
    shutil.copy(FILES["input_pipeline.pb"], tmp_path / "localhost.input_pipeline.pb")
    data = FILES["overview_page.pb"].read_bytes()
    (tmp_path / "localhost.overview_page.pb").write_bytes(data[: len(data) // 2])
    with pytest.warns(UserWarning, match="overview_page.pb: not loaded"):
        run = tw.load(tmp_path)
    assert run.tool_data.tools == ["input_pipeline"]
    assert len(run.steps) == 11
