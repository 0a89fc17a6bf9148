"""Loading old captures: TensorBoard tool-data files and TF 2.0/2.1 .trace files.

    python benchmarks/bench_tool_data.py [--repeat 5] [--trace-events 1000000]

For each tool-data file and run directory of the shared captures (their copies in
tests/data/tooldata), and the derived samples there, prints the median time of
``tfprof_widgets.load()`` plus reading the run's overview and op stats (``load+tables``),
beside the protobuf/JSON decode of the same files alone (``decode``: the floor for any
reader), all in this process after a warm-up. Then a synthetic TF 2.0-style ``.trace`` of
``--trace-events`` events (host threads and GPU streams, two args per event) measures the
Trace reader's events/s.
"""

from __future__ import annotations

import argparse
import gzip
import json
import pathlib
import statistics
import sys
import tempfile
import time

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "support"))

import tfprof_widgets as tw  # noqa: E402
from tfprof_widgets.proto import tool_data_pb2, trace_events_pb2  # noqa: E402
from tfprof_widgets.readers.formats import tool_of  # noqa: E402

MESSAGES = {
    "overview_page": tool_data_pb2.OverviewPage,
    "input_pipeline": tool_data_pb2.InputPipelineAnalysisResult,
    "tensorflow_stats": tool_data_pb2.TfStatsDatabase,
    "kernel_stats": tool_data_pb2.KernelStatsDb,
}


def decode(path: pathlib.Path) -> None:
    """The files' bytes decoded with no mapping: protobuf parse or json.loads."""
    files = sorted(path.iterdir()) if path.is_dir() else [path]
    for f in files:
        data = f.read_bytes()
        if data[:2] == b"\x1f\x8b":
            data = gzip.decompress(data)
        tool = tool_of(f.name)
        if tool and tool[1] == "pb":
            MESSAGES[tool[0]].FromString(data)
        elif f.name.endswith(".trace"):
            trace_events_pb2.Trace.FromString(data)
        elif f.name.endswith((".json", ".json.gz")):
            json.loads(data)


def load(path: pathlib.Path):
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        run = tw.load(path, progress=False)
    return run.overview_summary, run.ops


def median_s(fn, repeat: int) -> float:
    fn()  # warm-up
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def synthetic_trace(n: int, path: pathlib.Path) -> None:
    """A TF 2.0-style Trace: /host:CPU with 8 threads, /device:GPU:0/stream:K for 4 streams."""
    rng = np.random.default_rng(0)
    t = trace_events_pb2.Trace()
    t.devices[0].name = "/host:CPU"
    for tid in range(8):
        t.devices[0].resources[tid].name = f"thread {tid}"
    for k in range(4):
        t.devices[1 + k].name = f"/device:GPU:0/stream:{7 + k}"
        t.devices[1 + k].resources[0].name = "0"
    dev = rng.integers(0, 5, n)
    res = np.where(dev == 0, rng.integers(0, 8, n), 0)
    ts = np.sort(rng.integers(0, 10**12, n))
    dur = rng.integers(1_000, 10**7, n)
    names = [f"op_{i}" for i in range(200)]
    which = rng.integers(0, 200, n)
    for i in range(n):
        e = t.trace_events.add(
            device_id=int(dev[i]),
            resource_id=int(res[i]),
            name=names[which[i]],
            timestamp_ps=int(ts[i]),
            duration_ps=int(dur[i]),
        )
        e.args["label"] = names[which[i]] + " = Op(x)"
        e.args["long name"] = "model/" + names[which[i]]
    path.write_bytes(t.SerializeToString())


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--trace-events", type=int, default=1_000_000)
    args = ap.parse_args()
    from tool_data_files import DEMO_RUNS, TOOLDATA, demo_run

    tmp = pathlib.Path(tempfile.mkdtemp(prefix="bench_tool_data_"))
    inputs: list[tuple[str, pathlib.Path]] = []
    for name in DEMO_RUNS:
        d = demo_run(name, tmp)
        inputs += [(f"{name}/{f.name}", f) for f in sorted(d.iterdir())]
        inputs.append((f"{name}/ (run dir)", d))
    for sub in ("bert_tf2x", "xprof_datatables"):
        inputs += [(f"{sub}/{f.name}", f) for f in sorted((TOOLDATA / sub).iterdir())]
    inputs += [
        (f"{s}/local.trace", TOOLDATA / s / "local.trace")
        for s in ("tf21_cpu", "tf20_gpu_timeline")
    ]
    rows = []
    for label, path in inputs:
        if path.name.endswith(".trace.json.gz"):
            continue  # the Chrome trace reader's, benchmarked in bench_chrome
        rows.append(
            (
                label,
                path.stat().st_size
                if path.is_file()
                else sum(f.stat().st_size for f in path.iterdir()),
                median_s(lambda p=path: decode(p), args.repeat),
                median_s(lambda p=path: load(p), args.repeat),
            )
        )
    print(f"{'input':58} {'bytes':>10} {'decode s':>9} {'load+tables s':>14}")
    for label, size, dec, ld in rows:
        print(f"{label:58} {size:>10,} {dec:>9.4f} {ld:>14.4f}")
    if args.trace_events:
        big = tmp / "big.trace"
        synthetic_trace(args.trace_events, big)
        t_dec = median_s(lambda: trace_events_pb2.Trace.FromString(big.read_bytes()), 1)
        t_load = median_s(lambda: tw.load(big, progress=False), 1)
        n = args.trace_events
        mb = big.stat().st_size / 2**20
        print(
            f"\nsynthetic .trace, {n:,} events, {mb:.0f} MB: protobuf decode {t_dec:.2f} s, "
            f"load() {t_load:.2f} s ({n / t_load / 1e6:.2f} M events/s)"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
