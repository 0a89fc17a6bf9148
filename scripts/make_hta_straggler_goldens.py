"""HTA's potential stragglers of real multi-rank jobs, at exact times (HTA 0.5's
``get_potential_stragglers`` with ``HTA_DISABLE_NS_ROUNDING=1``), for
``tests/pytorch/test_hta_stragglers.py``:

* ``tests/golden/hta/stragglers/two_ranks.json``: HTA's two sampled ranks of one job
  (``tests/data/chrome/hta_sampled_rank{0,1}.json.gz``);
* ``tests/golden/hta/stragglers/four_ranks_late.json``: four ranks built from those real ranks
  (rank 2 a copy of rank 0, rank 3 a copy of rank 1, each held up at the first NCCL kernel
  of step LATE_STEP: every event from its start on starts LATE_US[rank] later, so that the
  copies reach the step's last long NCCL kernel later than the real ranks).

Each golden holds HTA's candidates (``candidates``) and the metric it ranked them by: one row
per rank and step of the kernel HTA picked (``metric``: rank, iteration, stream, name, ts, dur,
normalized_start_time) and the mean iteration time it normalised by.

    python scripts/make_hta_straggler_goldens.py

HTA reads a directory of rank files (and may write beside them), so each job's ranks are
written into a fresh temporary directory, one file per rank.
"""

from __future__ import annotations

import gzip
import json
import os
import pathlib
import sys
import tempfile

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))

from make_hta_goldens import DATA, OUT, _columns  # noqa: E402

LATE_STEP = 551
# Rank 2 (rank 0's copy) then starts the metric kernel between ranks 1 and 3: HTA's two
# candidates are the two copies, not the real rank 1 it names in the two-rank job.
LATE_US = {2: 180000.0, 3: 200000.0}
NUM_CANDIDATES = 2


def _trace(rank: int) -> dict:
    with gzip.open(DATA / f"hta_sampled_rank{rank}.json.gz", "rt") as f:
        return json.load(f)


def write_rank(folder: pathlib.Path, trace: dict, rank: int) -> None:
    """``trace`` as rank ``rank`` of the job (its distributedInfo says so)."""
    trace = dict(trace, distributedInfo=dict(trace["distributedInfo"], rank=rank))
    with gzip.open(folder / f"rank{rank}.pt.trace.json.gz", "wt") as f:
        json.dump(trace, f)


def delayed_from_nccl(trace: dict, step: int, delay_us: float) -> dict:
    """The trace with every event that starts at or after the start of the first NCCL kernel
    (``ncclKernel*``) launched in ProfilerStep#``step`` ``delay_us`` later (a rank that
    reached the step's collectives late, its last one included), the step's marker longer
    by it."""
    events = [dict(e) for e in trace["traceEvents"]]
    marker = next(e for e in events if e.get("name") == f"ProfilerStep#{step}")
    lo, hi = marker["ts"], marker["ts"] + marker["dur"]
    launched = {
        e["args"]["correlation"]
        for e in events
        if e.get("cat") == "cuda_runtime" and lo <= e["ts"] < hi and "correlation" in e["args"]
    }
    nccl = [
        e
        for e in events
        if e.get("cat") == "kernel"
        and str(e.get("name", "")).startswith("ncclKernel")
        and e["args"].get("correlation") in launched
    ]
    start = min(e["ts"] for e in nccl)
    for e in events:
        if "ts" in e and e["ts"] >= start:
            e["ts"] = e["ts"] + delay_us
    marker["dur"] = marker["dur"] + delay_us
    return dict(trace, traceEvents=events)


def hta_stragglers(folder: pathlib.Path) -> dict:
    """HTA's candidates of the job in ``folder`` and the metric it ranked them by."""
    os.environ["HTA_DISABLE_NS_ROUNDING"] = "1"
    from hta.analyzers import straggler
    from hta.trace_analysis import TraceAnalysis

    seen: dict = {}

    def identify(df, symbol_table, n_stragglers, visualize):
        metric, name = straggler._compute_normalized_start_time_of_significant_comm_kernels(
            df, symbol_table, visualize
        )
        t_min = df["ts"].min()
        steps = [i for i in df["iteration"].unique() if i != -1]
        seen["mean_iter_time"] = float(((df["ts"] + df["dur"]).max() - t_min) / len(steps))
        seen["metric"] = metric
        return straggler._get_top_k_stragglers_with_metric(metric, name, n_stragglers, visualize)

    analysis = TraceAnalysis(trace_dir=str(folder))
    candidates = analysis.get_potential_stragglers(
        num_candidates=NUM_CANDIDATES, straggler_identification_impl=identify
    )
    metric = seen["metric"].copy()
    sym = analysis.t.symbol_table.get_sym_table()
    metric["name"] = [sym[i] for i in metric["name"]]
    cols = ["rank", "iteration", "stream", "name", "ts", "dur", "normalized_start_time"]
    metric = metric[cols].sort_values(["iteration", "rank"]).reset_index(drop=True)
    return {
        "num_candidates": NUM_CANDIDATES,
        "candidates": [int(r) for r in candidates],
        "mean_iter_time": seen["mean_iter_time"],
        "metric": _columns(metric),
    }


def jobs() -> dict[str, tuple[tuple[int, dict], ...]]:
    """The jobs of the goldens, (rank, trace) each: HTA's two real ranks, and four ranks built
    from them (copies of ranks 0 and 1 as ranks 2 and 3, reaching step LATE_STEP's
    collectives LATE_US later). The tests build the same."""
    r0, r1 = _trace(0), _trace(1)
    return {
        "two_ranks": ((0, r0), (1, r1)),
        "four_ranks_late": (
            (0, r0),
            (1, r1),
            (2, delayed_from_nccl(r0, LATE_STEP, LATE_US[2])),
            (3, delayed_from_nccl(r1, LATE_STEP, LATE_US[3])),
        ),
    }


def main() -> int:
    out = OUT / "stragglers"
    out.mkdir(parents=True, exist_ok=True)
    for job, ranks in jobs().items():
        with tempfile.TemporaryDirectory() as tmp:
            for rank, trace in ranks:
                write_rank(pathlib.Path(tmp), trace, rank)
            golden = hta_stragglers(pathlib.Path(tmp))
        (out / f"{job}.json").write_text(json.dumps(golden, indent=1) + "\n")
        print(job, golden["candidates"])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
