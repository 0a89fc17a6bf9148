"""HTA's idle time breakdown, kernel launch statistics, communication/computation overlap and
queue length summary of every bundled Kineto trace, at exact times (HTA with
``HTA_DISABLE_NS_ROUNDING=1``), written to ``tests/golden/hta/<trace>.json`` for
``tests/pytorch/test_pytorch_hta.py``.

    python scripts/make_hta_goldens.py [TRACE ...]

Default traces: the Kineto traces bundled in ``tests/data/chrome/`` (the shared
``captures/kineto`` files, each copied there with a NOTICE line). HTA reads a trace directory
(and may write beside what it reads), so each trace is copied into a fresh temporary directory
first. HTA's rank is its ``trace_files`` key, 0 here (no bundled trace has ``distributedInfo``).
"""

from __future__ import annotations

import argparse
import contextlib
import gzip
import json
import logging
import os
import pathlib
import shutil
import sys
import tempfile

import pandas as pd

ROOT = pathlib.Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data" / "chrome"
OUT = ROOT / "tests" / "golden" / "hta"
KINETO = (
    "torch_transformer_h100.pt.trace.json.gz",
    "resnet50_v100_workers0.pt.trace.json.gz",
    "resnet50_v100_workers4.pt.trace.json.gz",
    "timesformer_h100.json.gz",
    "eager_b200.json.gz",
    "hta_sampled_rank0.json.gz",
    "hta_sampled_rank1.json.gz",
    "hta_sampled_rank0_triton.json.gz",
)
# A queue length some stream of every trace reaches, so the blocked time is not 0 everywhere
# (HTA's CUDA_MAX_LAUNCH_QUEUE_PER_STREAM, 1,024, is reached by none).
SMALL_QUEUE = 3


def stem(path: pathlib.Path) -> str:
    name = path.name
    for suffix in (".gz", ".json", ".trace", ".pt"):
        name = name.removesuffix(suffix)
    return name


def _columns(df) -> dict:
    """A frame as {column: [values]} (NaN as None), its index reset."""
    df = df.reset_index()
    return {str(c): [None if v != v else v for v in df[c].tolist()] for c in df.columns}


@contextlib.contextmanager
def _unrounded():
    """HTA rounds the idle breakdown and the overlap percentage to 2 decimals (pandas'
    ``round``) as it returns them; left as they are while this holds."""
    saved = pd.DataFrame.round, pd.Series.round
    pd.DataFrame.round = pd.Series.round = lambda self, *a, **k: self
    try:
        yield
    finally:
        pd.DataFrame.round, pd.Series.round = saved


def hta_figures(path: pathlib.Path) -> dict:
    """The four analyses of one trace (on a copy of it), as HTA returns them; the idle
    breakdown and overlap also unrounded (``exact``), and the time blocked on a queue of
    SMALL_QUEUE launches."""
    os.environ["HTA_DISABLE_NS_ROUNDING"] = "1"
    from hta.trace_analysis import TraceAnalysis

    with tempfile.TemporaryDirectory() as tmp:
        copy = pathlib.Path(tmp) / ("rank0." + path.name)
        shutil.copyfile(path, copy)
        analysis = TraceAnalysis(trace_files={0: str(copy)}, trace_dir=tmp)
        idle, _ = analysis.get_idle_time_breakdown(ranks=[0], visualize=False)
        launch = analysis.get_cuda_kernel_launch_stats(ranks=[0], visualize=False)[0]
        overlap = analysis.get_comm_comp_overlap(visualize=False)
        queue = analysis.get_queue_length_time_series(ranks=[0])
        summary = analysis.get_queue_length_summary(ranks=[0])
        blocked = analysis.get_time_spent_blocked_on_full_queue(queue)
        blocked_small = analysis.get_time_spent_blocked_on_full_queue(
            analysis.get_queue_length_time_series(ranks=[0]), max_queue_length=SMALL_QUEUE
        )
        with _unrounded():
            idle_exact, _ = analysis.get_idle_time_breakdown(ranks=[0], visualize=False)
            overlap_exact = analysis.get_comm_comp_overlap(visualize=False)
    summary.columns = [b for _, b in summary.columns]  # ('queue_length', 'mean') -> 'mean'
    return {
        "idle_time_breakdown": _columns(
            idle[["idle_category", "stream", "idle_time", "idle_time_ratio"]]
        ),
        "kernel_launch_stats": _columns(launch.sort_values("correlation").reset_index(drop=True)),
        "comm_comp_overlap": _columns(overlap),
        "queue_length_summary": _columns(summary),
        "blocked_on_full_queue": _columns(blocked),
        "blocked_on_small_queue": _columns(blocked_small),
        "exact": {
            "idle_time_breakdown": _columns(
                idle_exact[["idle_category", "stream", "idle_time", "idle_time_ratio"]]
            ),
            "comm_comp_overlap": _columns(overlap_exact),
        },
    }


def with_triton_launch(path: pathlib.Path, donor: pathlib.Path, out: pathlib.Path) -> None:
    """``path`` (a trace with NCCL kernels) with one more host event: ``donor``'s first
    ``cpu_op`` that carries a ``stream`` arg (torch.compile's host-side Triton launch),
    unchanged but for its thread (the one that launched the first NCCL kernel) and its time
    (that kernel's), written to ``out`` (gzip, no timestamp). HTA takes it for GPU work."""
    with gzip.open(path, "rt") as f:
        trace = json.load(f)
    with gzip.open(donor, "rt") as f:
        triton = next(
            e
            for e in json.load(f)["traceEvents"]
            if e.get("cat") == "cpu_op" and "stream" in (e.get("args") or {})
        )
    events = trace["traceEvents"]
    nccl = next(e for e in events if str(e.get("name", "")).startswith("ncclKernel"))
    corr = nccl["args"]["correlation"]
    call = next(
        e
        for e in events
        if e.get("cat") == "cuda_runtime" and (e.get("args") or {}).get("correlation") == corr
    )
    events.append(
        triton | {k: call[k] for k in ("pid", "tid")} | {k: nccl[k] for k in ("ts", "dur")}
    )
    with open(out, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) as f:
        f.write(json.dumps(trace).encode())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("traces", nargs="*", type=pathlib.Path)
    args = parser.parse_args(argv)
    logging.disable(logging.WARNING)
    import hta

    OUT.mkdir(parents=True, exist_ok=True)
    with_triton_launch(
        DATA / "hta_sampled_rank0.json.gz",
        DATA / "eager_b200.json.gz",
        DATA / "hta_sampled_rank0_triton.json.gz",
    )
    for path in args.traces or [DATA / n for n in KINETO]:
        figures = {"trace": path.name, "hta_version": getattr(hta, "__version__", "0.5.0")}
        figures |= hta_figures(path)
        out = OUT / f"{stem(path)}.json"
        out.write_text(json.dumps(figures, indent=None, sort_keys=True) + "\n")
        print(out.relative_to(ROOT))
    return 0


if __name__ == "__main__":
    sys.exit(main())
