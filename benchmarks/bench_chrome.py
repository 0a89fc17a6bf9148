"""Chrome-trace loading speed against HolisticTraceAnalysis (HTA) on real Kineto traces.

    python benchmarks/bench_chrome.py [--repeat 5] [--all] [FILES...]

For each file (default: the real PyTorch Kineto traces in tests/data/chrome; ``--all``: every
Chrome/Kineto/TF1 trace there), in one process, runs pairs of
``tfprof_widgets.load(path).events`` (decode, columns, device mapping, stats, DataFrames,
step grouping) and HTA 0.5's ``parse_trace_dataframe`` (its default JSON backend), alternating
which goes first, and prints the medians: our seconds, HTA's, their ratio (the goal is
<= 0.25 on the Kineto traces), our events/s, and bytes per event of the events table and of
the events table plus its stats (``run.stat_store``, every arg of every event). ``read s``:
the reader alone (``read_chrome_trace``: gunzip, decode, columns; no DataFrames), timed in
the same pairs.
"""

from __future__ import annotations

import argparse
import gzip
import logging
import pathlib
import statistics
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import tfprof_widgets as tw  # noqa: E402
from tfprof_widgets.readers.chrome.reader import read_chrome_trace  # noqa: E402

DATA = ROOT / "tests" / "data" / "chrome"
KINETO = (
    "resnet50_v100_workers0.pt.trace.json.gz",
    "resnet50_v100_workers4.pt.trace.json.gz",
    "timesformer_h100.json.gz",
    "eager_b200.json.gz",
)


def hta_parser():
    try:
        from hta.common.trace_parser import parse_trace_dataframe
        from hta.configs.parser_config import ParserConfig
    except ImportError:
        return None
    logging.disable(logging.WARNING)  # HTA logs every parse
    return lambda path: parse_trace_dataframe(str(path), ParserConfig())[1]


def ours(path):
    return tw.load(path, progress=False)


def timed(fn, path) -> tuple[float, object]:
    t = time.perf_counter()
    out = fn(path)
    return time.perf_counter() - t, out


def measure(path: pathlib.Path, repeat: int, hta) -> dict:
    """Median seconds of ours and HTA's in paired runs (alternating which goes first), with
    our events/s and bytes per event."""
    ours_t, hta_t, read_t = [], [], []
    ours(path)  # warm: imports, first-use caches
    run = None
    for i in range(repeat):
        pair = [(ours_t, ours), (read_t, read_chrome_trace)] + ([(hta_t, hta)] if hta else [])
        for times, fn in pair if i % 2 == 0 else pair[::-1]:
            t, out = timed(fn, path)
            times.append(t)
            if fn is ours:
                run = out
    n = len(run.events)
    ev_bytes = run.events.memory_usage(deep=True).sum()
    # Every arg of every event, as the run holds them (its stat store; the long table
    # run.event_stats is built from it only when read).
    st_bytes = run.stat_store.nbytes()
    o = statistics.median(ours_t)
    h = statistics.median(hta_t) if hta_t else float("nan")
    r = statistics.median(read_t)
    return {"events": n, "ours_s": o, "hta_s": h, "read_s": r, "ev_bytes": ev_bytes,
            "st_bytes": st_bytes}  # fmt: skip


def speed_rows(repeat: int = 5) -> list[dict]:
    """The Kineto rows of the speed table (see bench_speed.py): one per real Kineto trace."""
    hta = hta_parser()
    rows = []
    for name in KINETO:
        m = measure(DATA / name, repeat, hta)
        rows.append(
            {
                "work": f"load {name} ({m['events'] // 1000}k events) vs HTA parse_trace_dataframe",
                "ours_s": m["ours_s"],
                "anchor_s": m["hta_s"],
                "ratio": m["ours_s"] / m["hta_s"],
                "goal": "<= 0.25",
                "extra": f"{m['events'] / m['ours_s']:,.0f} events/s, "
                f"{(m['ev_bytes'] + m['st_bytes']) / m['events']:.0f} B/event with stats",
            }
        )
    return rows


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("files", nargs="*")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--all", action="store_true", help="every trace in tests/data/chrome")
    a = ap.parse_args()
    files = [pathlib.Path(f) for f in a.files] or (
        sorted(DATA.glob("*.json.gz")) if a.all else [DATA / f for f in KINETO]
    )
    hta = hta_parser()
    if hta is None:
        print("HolisticTraceAnalysis is not installed (pip install -e '.[dev]'): HTA columns empty")
    head = (
        f"{'file':46s} {'JSON MB':>7s} {'events':>7s} {'ours s':>7s} {'read s':>7s} "
        f"{'HTA s':>7s} {'ratio':>6s} {'events/s':>9s} {'B/event':>8s} {'+stats':>7s}"
    )
    print(head)
    print("-" * len(head))
    for path in files:
        json_mb = len(gzip.decompress(path.read_bytes()) if path.suffix == ".gz" else
                      path.read_bytes()) / 1e6  # fmt: skip
        m = measure(path, a.repeat, hta)
        n, o, r, h = m["events"], m["ours_s"], m["read_s"], m["hta_s"]
        print(
            f"{path.name:46s} {json_mb:7.1f} {n:7d} {o:7.3f} {r:7.3f} {h:7.3f} {o / h:6.2f} "
            f"{n / o:9,.0f} {m['ev_bytes'] / n:8.0f} {(m['ev_bytes'] + m['st_bytes']) / n:7.0f}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
