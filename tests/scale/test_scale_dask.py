"""The Dask engine: a LocalCluster (2 worker processes on 127.0.0.1, started and closed here)
computes every per-host analysis from the stored tables and gives the same DataFrames as
DuckDB, with the dataset named by a file:// URL as a cluster's shared storage would be."""

from __future__ import annotations

import pytest
from conftest import SAMPLES
from test_scale import TABLES, assert_same, assert_same_summary, two_host_run

pytest.importorskip("duckdb")
pytest.importorskip("pyarrow")
distributed = pytest.importorskip("distributed")

import tfprof_widgets as tw  # noqa: E402


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


@pytest.mark.parametrize("capture", ["gpu_shaped", "two_cpu_hosts"])
def test_local_cluster_gives_the_same_dataframes_as_duckdb(client, capture, tmp_path):
    src = SAMPLES / "gpu_shaped" if capture == "gpu_shaped" else two_host_run(tmp_path)
    out = tmp_path / "ds"
    tw.convert(src, out, progress=False)
    url = out.as_uri()  # file:///...
    with tw.open(url) as local, tw.open(url, client=client) as dask:
        assert dask.engine == "dask" and local.engine == "duckdb"
        for name in TABLES:
            assert_same(getattr(dask, name), getattr(local, name), name)
        for name in ("input_pipeline", "overview_summary"):
            assert_same_summary(getattr(dask, name), getattr(local, name), name)
        assert_same(dask.top_events(25), local.top_events(25), "top_events")
        sizes = dask.map_hosts(lambda run: len(run.events))
        assert sizes == {h: n for h, n in zip(local.hosts, local.host_table["events"])}
