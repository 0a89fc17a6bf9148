"""Pod scale on synthetic pods of several sizes: conversion time, dataset size and converting
workers' peak memory; each pod analysis's time on DuckDB and on Dask LocalClusters (2 worker
processes; 2 threads), the Dask/DuckDB ratio per analysis; a least-squares fit of every figure
over the sizes, evaluated at --extrapolate hosts; what the in-memory pandas path would need.

    python benchmarks/bench_scale.py [--hosts 16,64,256] [--events 1000000]
        [--from CAPTURE.xplane.pb] [--workdir DIR] [--keep] [--json OUT] [--reuse EARLIER.json]

Writes the pod with make_synthetic_pod.py (``--from``: every host a copy of a real capture;
64 hosts x 1 M generated events are ~2 GB: check ``df -h`` first), converts it with 2 worker
processes, then measures in fresh processes (peak RSS from getrusage). Each Dask run times a
DuckDB pod beside it, rounds alternating, and its ratio is to that DuckDB: on a shared
machine, figures from separate processes differ by the load of the moment. ``--reuse``
analyses an earlier run's datasets again (same --workdir) without converting. The workdir is
removed at the end unless ``--keep``.
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
from tfprof_widgets.views import pod_view
def analyses(pod, timed):
    timed("steps (per host and step)", lambda: pod.steps)
    timed("per_host_steps (pod viewer table)", lambda: pod.per_host_steps)
    timed("pod viewer summary + straggler",
          lambda: pod_view.straggler(pod_view.pod_summary(pod.steps)))
    timed("ops (host/device, IDLE)", lambda: pod.ops)
    timed("kernels", lambda: pod.kernels)
    timed("memory_summary (per allocator)", lambda: pod.memory_summary)
    timed("memory_breakdown (largest peak)", lambda: pod.memory_breakdown)
    timed("input_pipeline", lambda: pod.input_pipeline)
    timed("overview_summary", lambda: pod.overview_summary)
    timed("tf_data_bottleneck", lambda: pod.tf_data_bottleneck)
    timed("top_events(20)", lambda: pod.top_events(20))
def rounds(*pods, k=3):
    # The fastest of k rounds, each from an empty cache (every analysis read again); with
    # several pods, their rounds alternate, so each meets the same load from elsewhere.
    best = [{} for _ in pods]
    for _ in range(k):
        for pod, b in zip(pods, best):
            def keep(name, fn, b=b):
                timed(name, fn)
                b[name] = min(b.get(name, float("inf")), out[name])
            pod.clear_cache()
            analyses(pod, keep)
    out.update(best[0])
    return best
"""

DUCKDB = (
    PRELUDE
    + ANALYSES
    + r"""
import tfprof_widgets as tw
pod = timed("open", lambda: tw.open(sys.argv[1], memory_limit=sys.argv[2]))
rounds(pod)
timed("SQL: events and busy time per host", lambda: pod.sql(
    "SELECT host, count(*) AS events, sum(dur_us) AS busy_us FROM events GROUP BY host"))
timed("SQL: 20 slowest kernels over the pod", lambda: pod.sql(
    "SELECT host, name, dur_us FROM events WHERE plane LIKE '/device:%' "
    "ORDER BY dur_us DESC LIMIT 20"))
out["straggler"] = pod_view.straggler(pod_view.pod_summary(pod.steps))
out["rss"] = rss()
print(json.dumps(out, default=str))
"""
)

# argv: dataset URL, "processes" (2 worker processes of 1 thread) or "threads" (1 worker
# process of 2 threads, in the client's process: no pickling, one GIL).
DASK = (
    PRELUDE
    + ANALYSES
    + r"""
import tfprof_widgets as tw
from distributed import Client, LocalCluster
if __name__ == "__main__":
    procs = sys.argv[2] == "processes"
    with LocalCluster(n_workers=2 if procs else 1, threads_per_worker=1 if procs else 2,
                      processes=procs, dashboard_address=None,
                      **({"host": "127.0.0.1"} if procs else {}),  # threads: in-process comms
                      memory_limit=0) as cluster, Client(cluster) as client:
        pod = timed("open", lambda: tw.open(sys.argv[1], client=client))
        # DuckDB beside it, in the same process and rounds: the ratio meets one load
        _, out["paired_duckdb"] = rounds(pod, tw.open(sys.argv[1], memory_limit=sys.argv[3]))
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


def measure(
    work: pathlib.Path, hosts: int, events: int, memory_limit: str, prior=None, source=None
) -> dict:
    """One pod size: write (or extend) the synthetic pod, convert it, run each engine
    (``prior``: this size's figures from an earlier --json; its dataset is analysed again,
    not converted again)."""
    if prior is not None:
        print(
            f"\n## {hosts} hosts x {prior['events']:,} events "
            f"(converted: {prior['convert_s']:.1f} s)"
        )
        return {**prior, **analyse(work / f"dataset_{hosts}", memory_limit)}
    t = time.perf_counter()
    run_dir = make_pod(str(work / "logs"), hosts, events, source=source)
    files = sorted(pathlib.Path(run_dir).iterdir())[:hosts]
    src_bytes = sum(f.stat().st_size for f in files)
    if len(os.listdir(run_dir)) > hosts:  # a bigger pod written before: a run of these hosts
        run_dir = str(work / f"logs_{hosts}")
        shutil.rmtree(run_dir, ignore_errors=True)
        os.makedirs(run_dir)
        for f in files:
            os.link(f, os.path.join(run_dir, f.name))
    print(
        f"\n## {hosts} hosts x {events if source is None else source}: "
        f"{src_bytes / 1e9:.2f} GB of .xplane.pb "
        f"({time.perf_counter() - t:.0f} s to write)"
    )
    ds = work / f"dataset_{hosts}"
    shutil.rmtree(ds, ignore_errors=True)
    conv = child(CONVERT, run_dir, str(ds))
    manifest = json.loads((ds / "manifest.json").read_text())
    worker_peak = max(e.get("peak_rss_bytes", 0) for e in manifest["hosts"])
    total = sum(e["events"] for e in manifest["hosts"])
    ds_bytes = sum(f.stat().st_size for f in ds.rglob("*") if f.is_file())
    print(
        f"convert (2 worker processes): {conv['convert']:.1f} s "
        f"({src_bytes / 1e6 / conv['convert']:.1f} MB/s of captures, "
        f"{total / conv['convert'] / 1e6:.2f} M events/s), dataset "
        f"{ds_bytes / 1e9:.3f} GB, peak RSS: parent {gb(conv['rss'])}, "
        f"largest converting worker {gb(worker_peak)}"
    )
    return {"hosts": hosts, "events": total // hosts, "src_bytes": src_bytes,
            "dataset_bytes": ds_bytes, "convert_s": conv["convert"], "worker_peak": worker_peak,
            "run_dir": run_dir, **analyse(ds, memory_limit)}  # fmt: skip


def analyse(ds: pathlib.Path, memory_limit: str) -> dict:
    """Every pod analysis on DuckDB, on Dask worker processes and on Dask threads."""
    duck = child(DUCKDB, str(ds), memory_limit)
    procs = child(DASK, ds.as_uri(), "processes", memory_limit)
    threads = child(DASK, ds.as_uri(), "threads", memory_limit)
    skip = ("rss", "worker_rss", "straggler", "open", "paired_duckdb")
    names = [k for k in procs if k not in skip]
    dp, dt = procs["paired_duckdb"], threads["paired_duckdb"]  # DuckDB in the same rounds
    print(
        "\n| analysis | DuckDB, s | Dask 2 processes, s | ratio | DuckDB, s | "
        "Dask 2 threads, s | ratio |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|")
    for e in (dp, procs, dt, threads):
        e["all analyses"] = sum(e[k] for k in names)
    for k in [*names, "all analyses"]:
        print(
            f"| {k} | {dp[k]:.3f} | {procs[k]:.3f} | {ratio(procs[k], dp[k])} | "
            f"{dt[k]:.3f} | {threads[k]:.3f} | {ratio(threads[k], dt[k])} |"
        )
    print(
        "\n(ratio: Dask / DuckDB, each the fastest of 3 rounds alternating in one process; "
        f"DuckDB alone: all analyses {sum(duck[k] for k in names):.3f} s)"
    )
    print("| figure | DuckDB | Dask 2 processes | Dask 2 threads |\n|---|---:|---:|---:|")
    for k in ("open", "SQL: events and busy time per host", "SQL: 20 slowest kernels over the pod"):
        print(
            f"| {k}, s | {duck[k]:.3f} | {procs.get(k, float('nan')):.3f} | "
            f"{threads.get(k, float('nan')):.3f} |"
        )
    print(
        f"| peak RSS of the analysing process | {gb(duck['rss'])} | {gb(procs['rss'])} | "
        f"{gb(threads['rss'])} |"
    )
    print(f"| peak RSS of a Dask worker | | {gb(procs['worker_rss'])} | |")
    print(f"\nstraggler: {duck['straggler']}")
    return {"duckdb": duck, "dask": procs, "dask_threads": threads}


def ratio(a: float, b: float) -> str:
    return f"{a / b:.1f}x" if b > 0 else "-"


def fit(results: list[dict], target: int) -> None:
    """Least squares ``a + b * hosts`` per figure over the sizes measured, at ``target``."""
    xs = [r["hosts"] for r in results]

    def line(ys):
        import numpy as np

        b, a = np.polyfit(xs, ys, 1) if len(xs) > 1 else (ys[0] / xs[0], 0.0)
        return a, b, a + b * target

    print(f"\n## extrapolated to {target} hosts (fit a + b x hosts over {xs})")
    print(
        "| figure | "
        + " | ".join(f"{x} hosts" for x in xs)
        + f" | a | b per host | {target} hosts |"
    )
    print("|---|" + "---:|" * (len(xs) + 3))
    rows = [
        ("convert, s", [r["convert_s"] for r in results]),
        ("dataset, GB", [r["dataset_bytes"] / 1e9 for r in results]),
        ("converting worker peak, GiB", [r["worker_peak"] / 2**30 for r in results]),
    ]
    for eng in ("duckdb", "dask"):
        for k in results[0]["dask"]:
            if (
                k not in ("rss", "worker_rss", "straggler", "paired_duckdb")
                and k in results[0][eng]
            ):
                rows.append((f"{eng}: {k}, s", [r[eng][k] for r in results]))
    for name, ys in rows:
        a, b, at = line(ys)
        print(
            f"| {name} | "
            + " | ".join(f"{y:.3f}" for y in ys)
            + f" | {a:.3f} | {b:.5f} | {at:.2f} |"
        )


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--hosts", default="64", help="pod sizes, comma-separated: 16,64,256")
    ap.add_argument("--events", type=int, default=1_000_000)
    ap.add_argument("--workdir", default=None)
    ap.add_argument("--memory-limit", default="1GB", help="DuckDB's memory limit")
    ap.add_argument("--extrapolate", type=int, default=1024)
    ap.add_argument("--json", default=None, help="write every figure here")
    ap.add_argument("--keep", action="store_true")
    ap.add_argument("--from", dest="source", default=None, help="make_synthetic_pod's --from")
    ap.add_argument("--reuse", default=None, help="an earlier --json: analyse its datasets again")
    args = ap.parse_args()
    sizes = sorted(int(h) for h in args.hosts.split(","))
    work = pathlib.Path(args.workdir or tempfile.mkdtemp(prefix="tfprof_pod_"))
    try:
        prior = {r["hosts"]: r for r in json.loads(pathlib.Path(args.reuse).read_text())} if (
            args.reuse) else {}  # fmt: skip
        results = [
            measure(work, h, args.events, args.memory_limit, prior.get(h), args.source)
            for h in sizes
        ]
        if args.json:
            pathlib.Path(args.json).write_text(json.dumps(results, indent=1, default=str))
        fit(results, args.extrapolate)
        pandas_path(results[-1]["run_dir"], sizes[-1])
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)


def pandas_path(run_dir: str, hosts: int) -> None:
    one = child(PANDAS, run_dir, "1")
    two = child(PANDAS, run_dir, "2")
    per_host = two["rss"] - one["rss"]
    need = one["rss"] + (hosts - 1) * per_host
    print(
        f"\npandas path (tfprof_widgets.load + analyses in one process): 1 host "
        f"{gb(one['rss'])}, 2 hosts {gb(two['rss'])} peak RSS -> {gb(per_host)} per host; "
        f"{hosts} hosts would need ~{gb(need)} "
        f"(load of 1 host {one['load']:.2f} s, of 2 {two['load']:.2f} s)"
    )


if __name__ == "__main__":
    main()
