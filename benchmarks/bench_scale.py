"""Pod scale on a synthetic pod: convert time, each pod analysis's time and the analysing
process's peak memory, with DuckDB and with a Dask LocalCluster; and what the in-memory
pandas path would need for the same pod.

    python benchmarks/bench_scale.py [--hosts 64] [--events 1000000] [--workdir DIR] [--keep]

Writes the pod with make_synthetic_pod.py (64 hosts x 1 M events: ~2 GB of captures; check
``df -h`` first), converts it with 2 worker processes, then measures each phase in a fresh
process (peak RSS from getrusage). The workdir is removed at the end unless ``--keep``.
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

from make_synthetic_pod import make_pod  # noqa: E402

PRELUDE = r"""
import json, resource, sys, time, warnings
warnings.simplefilter("ignore")
def rss(who=resource.RUSAGE_SELF):
    return resource.getrusage(who).ru_maxrss * 1024
out = {}
def timed(name, fn):
    t = time.perf_counter(); value = fn(); out[name] = time.perf_counter() - t; return value
"""

CONVERT = (
    PRELUDE
    + r"""
import tfprof_widgets as tw
src, ds = sys.argv[1], sys.argv[2]
r = timed("convert", lambda: tw.convert(src, ds, workers=2, progress=False))
out["hosts"] = len(r.converted)
out["rss"] = rss(); out["worker_rss"] = rss(resource.RUSAGE_CHILDREN)
print(json.dumps(out))
"""
)

ANALYSES = r"""
def analyses(pod, timed):
    timed("steps (per host and step)", lambda: pod.steps)
    timed("per_host_steps (pod viewer table)", lambda: pod.per_host_steps)
    timed("pod viewer summary + straggler", lambda: __import__(
        "tfprof_widgets.views.pod_view", fromlist=["x"]).straggler(
        __import__("tfprof_widgets.views.pod_view", fromlist=["x"]).pod_summary(pod.steps)))
    timed("ops (host/device, IDLE)", lambda: pod.ops)
    timed("kernels", lambda: pod.kernels)
    timed("memory_summary (per allocator)", lambda: pod.memory_summary)
    timed("memory_breakdown (largest peak)", lambda: pod.memory_breakdown)
    timed("input_pipeline", lambda: pod.input_pipeline)
    timed("overview_summary", lambda: pod.overview_summary)
    timed("tf_data_bottleneck", lambda: pod.tf_data_bottleneck)
    timed("top_events(20)", lambda: pod.top_events(20))
"""

DUCKDB = (
    PRELUDE
    + ANALYSES
    + r"""
import tfprof_widgets as tw
pod = timed("open", lambda: tw.open(sys.argv[1], memory_limit=sys.argv[2]))
analyses(pod, timed)
timed("SQL: events and busy time per host", lambda: pod.sql(
    "SELECT host, count(*) AS events, sum(dur_us) AS busy_us FROM events GROUP BY host"))
timed("SQL: 20 slowest kernels over the pod", lambda: pod.sql(
    "SELECT host, name, dur_us FROM events WHERE plane LIKE '/device:%' "
    "ORDER BY dur_us DESC LIMIT 20"))
out["straggler"] = __import__("tfprof_widgets.views.pod_view", fromlist=["x"]).straggler(
    __import__("tfprof_widgets.views.pod_view", fromlist=["x"]).pod_summary(pod.steps))
out["rss"] = rss()
print(json.dumps(out, default=str))
"""
)

DASK = (
    PRELUDE
    + ANALYSES
    + r"""
import tfprof_widgets as tw
from distributed import Client, LocalCluster
if __name__ == "__main__":
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                      dashboard_address=None, memory_limit=0) as cluster, Client(cluster) as client:
        pod = tw.open(sys.argv[1], client=client)
        timed("all per-host analyses on the cluster (one task per host)",
              lambda: pod._dask_analyses)
        analyses(pod, timed)
        out["rss"] = rss()
        out["worker_rss"] = max(client.run(lambda: __import__("resource").getrusage(
            __import__("resource").RUSAGE_SELF).ru_maxrss * 1024).values())
    print(json.dumps(out))
"""
)

PANDAS = (
    PRELUDE
    + r"""
import tfprof_widgets as tw
run_dir, n = sys.argv[1], int(sys.argv[2])
base = rss()
hosts = [p.split("/")[-1].removesuffix(".xplane.pb") for p in sorted(
    __import__("glob").glob(run_dir + "/*.xplane.pb"))][:n]
run = timed("load", lambda: tw.load(run_dir, hosts=hosts, progress=False))
for a in ("steps", "ops", "kernels", "memory", "memory_summary", "tf_data_bottleneck"):
    timed(a, lambda a=a: getattr(run, a))
out["base_rss"] = base; out["rss"] = rss()
print(json.dumps(out))
"""
)


def child(code: str, *args: str) -> dict:
    path = pathlib.Path(tempfile.mkdtemp(prefix="tfprof_bench_")) / "child.py"
    path.write_text(code)
    res = subprocess.run(
        [sys.executable, str(path), *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    shutil.rmtree(path.parent, ignore_errors=True)
    if res.returncode:
        raise RuntimeError(res.stderr[-3000:])
    return json.loads(res.stdout.strip().splitlines()[-1])


def gb(n: float) -> str:
    return f"{n / 2**30:.2f} GiB"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--hosts", type=int, default=64)
    ap.add_argument("--events", type=int, default=1_000_000)
    ap.add_argument("--workdir", default=None)
    ap.add_argument("--memory-limit", default="1GB", help="DuckDB's memory limit")
    ap.add_argument("--keep", action="store_true")
    args = ap.parse_args()
    work = pathlib.Path(args.workdir or tempfile.mkdtemp(prefix="tfprof_pod_"))
    try:
        t = time.perf_counter()
        run_dir = make_pod(str(work / "logs"), args.hosts, args.events)
        src_bytes = sum(f.stat().st_size for f in pathlib.Path(run_dir).iterdir())
        print(
            f"synthetic pod: {args.hosts} hosts x {args.events:,} events, "
            f"{src_bytes / 1e9:.2f} GB of .xplane.pb ({time.perf_counter() - t:.0f} s to write)"
        )
        ds = work / "dataset"
        shutil.rmtree(ds, ignore_errors=True)
        conv = child(CONVERT, run_dir, str(ds))
        ds_bytes = sum(f.stat().st_size for f in ds.rglob("*") if f.is_file())
        print(
            f"\nconvert (2 worker processes): {conv['convert']:.1f} s "
            f"({conv['convert'] / args.hosts:.2f} s per host), dataset {ds_bytes / 1e9:.2f} GB, "
            f"peak RSS: parent {gb(conv['rss'])}, largest worker {gb(conv['worker_rss'])}"
        )
        duck = child(DUCKDB, str(ds), args.memory_limit)
        dask = child(DASK, ds.as_uri())
        names = [k for k in duck if k not in ("rss", "straggler")]
        duck_col = f"DuckDB (limit {args.memory_limit}), s"
        print(f"\n| analysis | {duck_col} | Dask LocalCluster (2 workers), s |")
        print("|---|---:|---:|")
        for k in [*names, *[k for k in dask if k not in duck and k not in ("rss", "worker_rss")]]:
            d = f"{duck[k]:.3f}" if k in duck else ""
            k2 = f"{dask[k]:.3f}" if k in dask else ""
            print(f"| {k} | {d} | {k2} |")
        print(f"| peak RSS of the analysing process | {gb(duck['rss'])} | {gb(dask['rss'])} |")
        print(f"| peak RSS of a Dask worker | | {gb(dask['worker_rss'])} |")
        print(f"\nstraggler: {duck['straggler']}")
        one = child(PANDAS, run_dir, "1")
        two = child(PANDAS, run_dir, "2")
        per_host = two["rss"] - one["rss"]
        need = one["rss"] + (args.hosts - 1) * per_host
        print(
            f"\npandas path (tfprof_widgets.load + analyses in one process): 1 host "
            f"{gb(one['rss'])}, 2 hosts {gb(two['rss'])} peak RSS -> {gb(per_host)} per host; "
            f"{args.hosts} hosts would need ~{gb(need)} "
            f"(load of 1 host {one['load']:.2f} s, of 2 {two['load']:.2f} s)"
        )
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
