"""The Dask engine: a LocalCluster (2 worker processes on 127.0.0.1, started and closed here)
gives the same DataFrames as DuckDB on every pod analysis, with the dataset named by a
file:// URL as a cluster's shared storage would be: reading each host's stored tables on the
workers (the default), and recomputing them there (``recompute=True``); the TF GPU sample, two
real CPU hosts, the BERT 8-GPU capture, two PyTorch ranks of one job and two JAX hosts."""

from __future__ import annotations

import shutil

import pytest
from conftest import ROOT, SAMPLES
from test_scale import BERT, TABLES, _plain, assert_same, assert_same_summary, two_host_run

pytest.importorskip("duckdb")
pytest.importorskip("pyarrow")
distributed = pytest.importorskip("distributed")

import tfprof_widgets as tw  # noqa: E402

DATA = ROOT / "tests" / "data"


@pytest.fixture(scope="module")
def client():
    with (
        distributed.LocalCluster(
            n_workers=2,
            threads_per_worker=1,
            processes=True,
            host="127.0.0.1",
            dashboard_address=None,
        ) as cluster,
        distributed.Client(cluster) as c,
    ):
        yield c


def _capture(name: str, tmp_path):
    if name == "gpu_shaped":
        return SAMPLES / "gpu_shaped"
    if name == "two_cpu_hosts":
        return two_host_run(tmp_path)
    if name == "bert_gpu":
        return BERT
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    if name == "pytorch_ranks":  # HTA's two ranks of one NCCL job
        for r in (0, 1):
            src = DATA / "chrome" / f"hta_sampled_rank{r}.json.gz"
            shutil.copy(src, run_dir / f"rank{r}.pt.trace.json.gz")
    else:  # two JAX hosts: the H100 captures with and without CUDA graphs
        for f in (DATA / "xplane_h100_jax").glob("*.xplane.pb"):
            shutil.copy(f, run_dir / f.name)
    return run_dir


def _same_everywhere(dask, local) -> None:
    # First, before `memory` is cached: the breakdown reads one host's allocator alone.
    assert_same(dask.memory_breakdown, local.memory_breakdown, "memory_breakdown")
    summary = local.memory_summary
    for host, alloc in zip(summary["host"].astype(str), summary["allocator"].astype(str)):
        # (categories: a pod that has read `memory` whole keeps every host's)
        a, b = dask.memory_of(host, alloc), local.memory_of(host, alloc)
        assert_same(_plain(a), _plain(b), "memory_of")
    assert_same(dask.memory_of("no such host", "x"), local.memory_of("no such host", "x"))
    for n in (0, 1, 25, 10_000):
        assert_same(dask.top_events(n), local.top_events(n), f"top_events({n})")
    for name in TABLES:
        assert_same(getattr(dask, name), getattr(local, name), name)
    for name in ("input_pipeline", "overview_summary"):
        assert_same_summary(getattr(dask, name), getattr(local, name), name)


@pytest.mark.parametrize(
    "capture", ["gpu_shaped", "two_cpu_hosts", "bert_gpu", "pytorch_ranks", "jax_hosts"]
)
def test_local_cluster_gives_the_same_dataframes_as_duckdb(client, capture, tmp_path):
    out = tmp_path / "ds"
    tw.convert(_capture(capture, tmp_path), out, progress=False)
    url = out.as_uri()  # file:///...
    with tw.open(url) as local, tw.open(url, client=client) as dask:
        assert dask.engine == "dask" and local.engine == "duckdb"
        _same_everywhere(dask, local)
        sizes = dask.map_hosts(lambda run: len(run.events))
        assert sizes == {h: n for h, n in zip(local.hosts, local.host_table["events"])}


def test_recomputed_on_the_cluster_gives_the_same_dataframes(client, tmp_path):
    out = tmp_path / "ds"
    tw.convert(_capture("two_cpu_hosts", tmp_path), out, progress=False)
    with tw.open(out.as_uri()) as local, tw.open(out.as_uri(), client=client, recompute=True) as d:
        _same_everywhere(d, local)
