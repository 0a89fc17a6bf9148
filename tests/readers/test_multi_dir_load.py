"""Ranks and hosts (issue 40, item 1): a PyTorch trace whose ``distributedInfo`` names its
rank loads as host ``rank N``; ``tw.load([dir_a, dir_b, ...])`` merges hosts that wrote into
separate directories into one run, on one clock where every capture's times are epoch times,
and refuses with ``ClockMismatchError`` where they are not.

Real captures only: two ranks of one 128-rank NCCL job (HTA's own sample), the Kineto traces,
TensorFlow's BERT multi-worker XSpace (2020: its times count from the session's start) and
JAX's XSpaces (epoch ns). Each rank goes in its own directory, as a job's ranks write them.
"""

from __future__ import annotations

import gzip
import json
import pathlib
import shutil
import warnings

import numpy as np
import pandas as pd
import pytest
from conftest import tree_state

import tfprof_widgets as tw

DATA = pathlib.Path(__file__).resolve().parents[1] / "data"
CHROME = DATA / "chrome"
RANK = {r: CHROME / f"hta_sampled_rank{r}.json.gz" for r in (0, 1)}
TF_XSPACE = DATA / "bert_8gpu_multi_worker.xplane.pb"  # TF 2020: ns from the session's start
JAX_XSPACE = DATA / "xplane_h100_jax" / "jax_cnn_nographs.xplane.pb"  # epoch ns


def _put(src: pathlib.Path, directory: pathlib.Path, name: str | None = None) -> pathlib.Path:
    """A copy of ``src`` in ``directory``; a JSON trace named as a profiler names it there
    (``*.trace.json.gz``, what a run directory's listing takes for a capture)."""
    directory.mkdir(parents=True, exist_ok=True)
    if name is None and src.name.endswith(".json.gz") and ".trace." not in src.name:
        name = src.name.replace(".json.gz", ".pt.trace.json.gz")
    dst = directory / (name or src.name)
    shutil.copyfile(src, dst)
    return dst


@pytest.fixture(scope="module")
def rank_dirs(tmp_path_factory) -> list[pathlib.Path]:
    """Each rank's trace in a directory of its own, under the name a job gives it."""
    root = tmp_path_factory.mktemp("job")
    return [_put(RANK[r], root / f"worker{r}", f"rank-{r}.pt.trace.json.gz").parent for r in (0, 1)]


@pytest.fixture(scope="module")
def merged(rank_dirs) -> tw.Run:
    return tw.load(rank_dirs, progress=False)


@pytest.fixture(scope="module")
def alone() -> dict[int, tw.Run]:
    return {r: tw.load(RANK[r], progress=False) for r in (0, 1)}


def _load_quiet(path, **kw) -> tw.Run:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return tw.load(path, progress=False, **kw)


# -- hosts named by rank --------------------------------------------------------------------
def test_a_rank_trace_is_named_by_its_rank_and_keeps_rank_world_size_and_backend(alone):
    for r, run in alone.items():
        assert run.hosts == [f"rank {r}"]
        stats = run.plane_stats[run.plane_stats["plane"] == "/host:CPU"].set_index("stat")
        assert stats.loc["rank", "int_value"] == r
        assert stats.loc["world_size", "int_value"] == 128
        assert stats.loc["backend", "str_value"] == "nccl"
        assert run.comm_comp_overlap["rank"].tolist() == [r]


def test_a_trace_without_distributed_info_keeps_its_file_name():
    run = _load_quiet(CHROME / "torch_transformer_h100.pt.trace.json.gz")
    assert run.hosts == ["torch_transformer_h100.pt"]
    assert not (run.plane_stats["stat"].astype(str) == "rank").any()


def test_a_folder_of_rank_traces_loads_as_ranks(tmp_path):
    for r in (1, 0):
        _put(RANK[r], tmp_path, f"rank-{r}.pt.trace.json.gz")
    run = tw.load(tmp_path, progress=False)
    assert run.hosts == ["rank 0", "rank 1"]
    assert tw.list_runs(tmp_path)["hosts"].tolist() == [("rank 0", "rank 1")]
    assert _load_quiet(tmp_path, hosts=["rank 1"]).hosts == ["rank 1"]


def test_two_traces_of_one_rank_are_both_kept_and_named_apart(tmp_path):
    """A rank profiled twice (or files copied together): never merged into one host."""
    _put(RANK[0], tmp_path, "a.pt.trace.json.gz")
    _put(RANK[0], tmp_path, "b.pt.trace.json.gz")
    with pytest.warns(UserWarning, match=r"a\.pt\.trace\.json\.gz, b\.pt\.trace\.json\.gz.*rank 0"):
        run = tw.load(tmp_path, progress=False)
    assert run.hosts == ["rank 0 (a.pt)", "rank 0 (b.pt)"]
    n = run.events.groupby("host", observed=True).size()
    assert n["rank 0 (a.pt)"] == n["rank 0 (b.pt)"] == len(tw.load(RANK[0], progress=False).events)
    assert any("rank 0" in w and "each is kept" in w for w in run.warnings)


def test_a_rank_is_read_from_the_header_kineto_writes(tmp_path):
    """The rank comes from the trace's header, before traceEvents, where Kineto writes it (the
    name is needed before the file is read); written after the events, the trace keeps its
    file's name, and its rank still reaches the analyses through the host plane's stats."""
    top = json.loads(gzip.decompress(RANK[1].read_bytes()))
    info = top.pop("distributedInfo")
    top["distributedInfo"] = info  # now after traceEvents
    late = tmp_path / "late.pt.trace.json.gz"
    late.write_bytes(gzip.compress(json.dumps(top).encode(), mtime=0))
    run = tw.load(late, progress=False)
    assert run.hosts == ["late.pt"] and run.comm_comp_overlap["rank"].tolist() == [1]


# -- a list of directories ------------------------------------------------------------------
def test_ranks_in_separate_directories_merge_into_one_run(merged, rank_dirs):
    assert merged.hosts == ["rank 0", "rank 1"]
    assert merged.name == "worker0 + worker1"
    assert sorted(merged.files) == sorted(str(next(d.iterdir())) for d in rank_dirs)
    assert not merged.warnings


def test_the_merged_run_is_on_the_ranks_common_clock(merged, alone):
    """Kineto's ts are epoch µs: each rank's events keep their absolute times."""
    assert merged.t0_ns == min(run.t0_ns for run in alone.values())
    for r, run in alone.items():
        mine = merged.events[merged.events["host"] == f"rank {r}"].reset_index(drop=True)
        assert len(mine) == len(run.events)
        shift = (run.t0_ns - merged.t0_ns) / 1e3
        absolute = run.events["start_us"].to_numpy() + shift
        np.testing.assert_allclose(mine["start_us"].to_numpy(), absolute, rtol=0, atol=1e-6)
    assert alone[1].t0_ns != alone[0].t0_ns  # the ranks did not start together


@pytest.mark.parametrize("analysis", ["idle_time_breakdown", "comm_comp_overlap"])
def test_per_rank_analyses_of_the_merged_run_are_each_ranks_alone(merged, alone, analysis):
    both = getattr(merged, analysis)
    assert set(both["host"].astype(str)) == {"rank 0", "rank 1"}
    for r, run in alone.items():
        mine = _plain(both[both["host"] == f"rank {r}"])
        theirs = _plain(getattr(run, analysis))
        assert len(theirs)
        pd.testing.assert_frame_equal(mine, theirs, check_exact=False, rtol=1e-12)


def _plain(df: pd.DataFrame) -> pd.DataFrame:
    """A table's rows with its categorical columns as text (a merged run's categories hold
    every host's values)."""
    cats = [c for c in df.columns if isinstance(df[c].dtype, pd.CategoricalDtype)]
    return df.astype({c: str for c in cats}).reset_index(drop=True)


def test_a_list_of_one_directory_is_load_of_it(rank_dirs):
    one, plain = tw.load(rank_dirs[:1], progress=False), tw.load(rank_dirs[0], progress=False)
    assert (one.name, one.path, one.hosts, one.files) == (
        plain.name,
        plain.path,
        plain.hosts,
        plain.files,
    )
    pd.testing.assert_frame_equal(one.events, plain.events)
    pd.testing.assert_frame_equal(one.idle_time_breakdown, plain.idle_time_breakdown)


def test_a_list_of_files_and_a_host_chosen_from_it(rank_dirs):
    files = [next(d.iterdir()) for d in rank_dirs]
    assert tw.load(files, progress=False).hosts == ["rank 0", "rank 1"]
    assert tw.load(files, hosts=["rank 1"], progress=False).hosts == ["rank 1"]


def test_the_same_rank_in_two_directories_is_told_apart_by_the_directory(tmp_path):
    dirs = [_put(RANK[0], tmp_path / d).parent for d in ("day1", "day2")]
    with pytest.warns(UserWarning, match="same name in several of the paths"):
        run = tw.load(dirs, progress=False)
    assert run.hosts == ["rank 0 (day1)", "rank 0 (day2)"]


def test_xspaces_of_one_host_name_in_two_logdirs_merge_apart(tmp_path):
    """JAX's XSpaces (epoch ns) of host 'tw003' written into two directories: one run, each
    host's events at their own absolute times."""
    amd = DATA / "xplane_amd_jax"
    dirs = [_put(amd / f"jax08_{k}.xplane.pb", tmp_path / k).parent for k in ("gemm", "conv")]
    with pytest.warns(UserWarning, match="same name"):
        run = tw.load(dirs, progress=False)
    assert run.hosts == ["tw003 (gemm)", "tw003 (conv)"]
    for k in ("gemm", "conv"):
        single = _load_quiet(amd / f"jax08_{k}.xplane.pb")
        mine = run.events[run.events["host"] == f"tw003 ({k})"]
        assert len(mine) == len(single.events)
        first = mine["start_us"].min() * 1e3 + run.t0_ns
        assert abs(first - single.t0_ns) < 1


def test_pytorch_and_jax_captures_on_epoch_clocks_merge(tmp_path):
    """A PyTorch trace (baseTimeNanoseconds + ts) and a JAX XSpace (epoch ns) made the same
    morning on one H100 machine: one timeline, each at its own absolute times."""
    torch = CHROME / "torch_transformer_h100.pt.trace.json.gz"
    dirs = [_put(torch, tmp_path / "torch").parent, _put(JAX_XSPACE, tmp_path / "jax").parent]
    run = _load_quiet(dirs)
    assert run.hosts == ["torch_transformer_h100.pt", "vm"]
    for host, path in zip(run.hosts, (torch, JAX_XSPACE)):
        single = _load_quiet(path)
        first = run.events.loc[run.events["host"] == host, "start_us"].min()
        assert abs(first * 1e3 + run.t0_ns - single.t0_ns) < 1


def test_captures_years_apart_are_refused(tmp_path):
    """HTA's 2023 job and a 2026 JAX capture are both in epoch time, but no one job's."""
    dirs = [_put(RANK[0], tmp_path / "hta").parent, _put(JAX_XSPACE, tmp_path / "jax").parent]
    with pytest.raises(tw.ClockMismatchError, match="days after") as err:
        _load_quiet(dirs)
    assert err.value.path.endswith("jax_cnn_nographs.xplane.pb")


# -- refused --------------------------------------------------------------------------------
def _relative_kineto(tmp_path: pathlib.Path) -> pathlib.Path:
    """The H100 transformer trace without its header's baseTimeNanoseconds: its ts are then µs
    from the machine's boot (weeks), as a trace whose base was lost has them."""
    top = json.loads(
        gzip.decompress((CHROME / "torch_transformer_h100.pt.trace.json.gz").read_bytes())
    )
    del top["baseTimeNanoseconds"]
    out = tmp_path / "nobase" / "rank-x.pt.trace.json.gz"
    out.parent.mkdir(parents=True)
    out.write_bytes(gzip.compress(json.dumps(top).encode(), mtime=0))
    return out


def test_a_relative_kineto_trace_with_an_absolute_one_is_refused(tmp_path):
    rel = _relative_kineto(tmp_path)
    epoch = _put(CHROME / "torch_transformer_h100.pt.trace.json.gz", tmp_path / "base")
    with pytest.raises(tw.ClockMismatchError) as err:
        tw.load([epoch.parent, rel.parent], progress=False)
    assert err.value.path == str(rel) and str(epoch) in err.value.problem
    assert isinstance(err.value, tw.ProfileError)


@pytest.mark.parametrize(
    "other", [JAX_XSPACE, RANK[1], CHROME / "tf2_bert_8gpu.trace.json.gz"], ids=lambda p: p.name
)
def test_a_capture_counting_from_its_own_start_is_refused_beside_another(tmp_path, other):
    """TensorFlow's 2020 multi-worker XSpace counts ns from its session's start: nothing places
    it against another directory's capture, whichever framework wrote that one."""
    tf = _put(TF_XSPACE, tmp_path / "tf")
    dirs = [tf.parent, _put(other, tmp_path / "other").parent]
    with pytest.raises(tw.ClockMismatchError, match="not at an epoch time") as err:
        _load_quiet(dirs)
    assert err.value.path == str(tf) and "Load each directory on its own" in err.value.problem


def test_two_workers_each_counting_from_their_own_start_are_refused(tmp_path):
    dirs = [_put(TF_XSPACE, tmp_path / w).parent for w in ("worker0", "worker1")]
    with pytest.raises(tw.ClockMismatchError, match="worker1"):
        _load_quiet(dirs)


def test_an_empty_list_a_missing_path_and_a_repeated_one_are_typed_errors(tmp_path, rank_dirs):
    with pytest.raises(tw.EmptyProfileError, match="empty list"):
        tw.load([], progress=False)
    missing = tmp_path / "never_written"
    with pytest.raises(tw.ProfileNotFoundError) as err:
        tw.load([rank_dirs[0], missing], progress=False)
    assert err.value.path == str(missing)
    with pytest.raises(tw.ProfileError, match="given twice"):
        tw.load([rank_dirs[0], rank_dirs[1], rank_dirs[0]], progress=False)
    with pytest.raises(tw.ProfileError, match="given twice"):
        tw.load([rank_dirs[0], next(rank_dirs[0].iterdir())], progress=False)


def test_loading_a_list_writes_nothing(rank_dirs, tmp_path):
    tf = _put(TF_XSPACE, tmp_path / "tf").parent
    roots = [rank_dirs[0].parent, tmp_path]
    before = [tree_state(r) for r in roots]
    tw.load(rank_dirs, progress=False)
    with pytest.raises(tw.ClockMismatchError):
        _load_quiet([tf, rank_dirs[0]])
    assert [tree_state(r) for r in roots] == before
