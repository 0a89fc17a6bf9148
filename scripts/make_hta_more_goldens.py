"""HTA's memory bandwidth counters of every bundled Kineto trace and its trace diff of pairs of
them, at exact times (HTA with ``HTA_DISABLE_NS_ROUNDING=1``), for
``tests/pytorch/test_pytorch_hta_more.py``:

* ``tests/golden/hta/counters/<trace>.json``: ``get_memory_bw_summary`` and
  ``get_memory_bw_time_series`` (rank 0, the trace alone);
* ``tests/golden/hta/sequences/<trace>.json``: ``get_frequent_cuda_kernel_sequences`` for
  each of SEQUENCE_VARIANTS (HTA 0.5's call stack fails on numpy 2: its sanity check
  ``np.unique(axis=0)`` of an object array; the script gives that check float arrays, all
  else is HTA's; where HTA still fails, the error is written);
* ``tests/golden/hta/trace_diff/<control>__<test>.json``: ``TraceDiff.compare_traces`` of the
  two traces' first iterations (all events, host events, GPU events; names and short names)
  and ``ops_diff``.

    python scripts/make_hta_more_goldens.py

The traces are the ones ``make_hta_goldens.py`` reads (``tests/data/chrome/``, run that first:
it writes the derived ``hta_sampled_rank0_triton`` trace). HTA reads a directory (and may write
beside what it reads), so each trace is copied into a fresh temporary directory first.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import pathlib
import shutil
import sys
import tempfile
import types
import warnings

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))

from make_hta_goldens import DATA, KINETO, OUT, ROOT, _columns, stem  # noqa: E402

# Pairs of runs to diff: two worker settings of one model, two ranks of one job, two models on
# one GPU, and a trace against itself with a host-side Triton launch (HTA: GPU work).
DIFF_PAIRS = (
    ("resnet50_v100_workers0.pt.trace.json.gz", "resnet50_v100_workers4.pt.trace.json.gz"),
    ("hta_sampled_rank0.json.gz", "hta_sampled_rank1.json.gz"),
    ("torch_transformer_h100.pt.trace.json.gz", "timesformer_h100.json.gz"),
    ("hta_sampled_rank0.json.gz", "hta_sampled_rank0_triton.json.gz"),
)
# The compare_traces variants written: (name, device type, use_short_name).
DIFF_VARIANTS = (
    ("all", "ALL", False),
    ("all_short", "ALL", True),
    ("cpu", "CPU", False),
    ("gpu", "GPU", False),
)


# (operator_name, min_pattern_len) of get_frequent_cuda_kernel_sequences.
SEQUENCE_VARIANTS = (("aten::", 3), ("aten::mm", 1), ("ProfilerStep", 3), ("autograd::engine", 3))


@contextlib.contextmanager
def _float_unique_check():
    """HTA's call stack asserts ``len(np.unique(events, axis=0)) == len(events)`` on an
    object array, which numpy 2 refuses; that one check is given the array as float64."""
    import hta.common.trace_call_stack as stack

    shim = types.ModuleType("numpy_for_hta")
    shim.__dict__.update(np.__dict__)

    def unique(a, *args, **kwargs):
        if getattr(getattr(a, "dtype", None), "kind", "") == "O":
            a = np.asarray(a, np.float64)
        return np.unique(a, *args, **kwargs)

    shim.unique = unique
    saved, stack.np = stack.np, shim
    try:
        yield
    finally:
        stack.np = saved


def sequences(path: pathlib.Path) -> dict:
    """HTA's frequent kernel sequences of one trace for each of SEQUENCE_VARIANTS."""
    from hta.trace_analysis import TraceAnalysis

    out: dict = {"trace": path.name}
    with tempfile.TemporaryDirectory() as tmp, tempfile.TemporaryDirectory() as written:
        copy = pathlib.Path(tmp) / ("rank0." + path.name)
        shutil.copyfile(path, copy)
        analysis = TraceAnalysis(trace_files={0: str(copy)}, trace_dir=tmp)
        for op, k in SEQUENCE_VARIANTS:
            key = f"{op}:{k}"
            try:
                with _float_unique_check():
                    df = analysis.get_frequent_cuda_kernel_sequences(op, written, k, 0, 5)
            except Exception as e:  # HTA's own failure, recorded for the test
                out[key] = {"error": f"{type(e).__name__}: {e}"}
                continue
            out[key] = _columns(df) if len(df) else {}
    return out


def memory_bw(path: pathlib.Path) -> dict:
    """HTA's memory bandwidth summary and time series of one trace (on a copy of it)."""
    from hta.trace_analysis import TraceAnalysis

    with tempfile.TemporaryDirectory() as tmp:
        copy = pathlib.Path(tmp) / ("rank0." + path.name)
        shutil.copyfile(path, copy)
        analysis = TraceAnalysis(trace_files={0: str(copy)}, trace_dir=tmp)
        summary = analysis.get_memory_bw_summary(ranks=[0])
        series = analysis.get_memory_bw_time_series(ranks=[0]).get(0)
    out = {"trace": path.name, "summary": None, "time_series": None}
    if summary is not None:
        summary.columns = [b for _, b in summary.columns]  # ('memory_bw_gbps', 'mean') -> 'mean'
        out["summary"] = _columns(summary)
    if series is not None:
        out["time_series"] = _columns(series.reset_index(drop=True))
    return out


def trace_diff(control: pathlib.Path, test: pathlib.Path) -> dict:
    """HTA's compare_traces (each variant) and ops_diff of two traces, each read alone."""
    from hta.trace_diff import DeviceType, LabeledTrace, TraceDiff

    out: dict = {"control": control.name, "test": test.name}
    with tempfile.TemporaryDirectory() as a, tempfile.TemporaryDirectory() as b:
        shutil.copyfile(control, pathlib.Path(a) / control.name)
        shutil.copyfile(test, pathlib.Path(b) / test.name)
        ca, tb = LabeledTrace("Control", trace_dir=a), LabeledTrace("Test", trace_dir=b)
        out["iterations"] = [ca.iterations(), tb.iterations()]
        for key, device, short in DIFF_VARIANTS:
            df = TraceDiff.compare_traces(
                ca, tb, device_type=DeviceType[device], use_short_name=short
            )
            out[key] = _columns(df.rename_axis("name"))
        out["ops_diff"] = TraceDiff.ops_diff(ca, tb)
    return out


def main(argv: list[str] | None = None) -> int:
    os.environ["HTA_DISABLE_NS_ROUNDING"] = "1"
    logging.disable(logging.WARNING)
    warnings.simplefilter("ignore")
    for sub in ("counters", "sequences", "trace_diff"):
        (OUT / sub).mkdir(parents=True, exist_ok=True)
    for name in KINETO:
        path = OUT / "counters" / f"{stem(DATA / name)}.json"
        path.write_text(json.dumps(memory_bw(DATA / name), sort_keys=True) + "\n")
        print(path.relative_to(ROOT))
    for name in KINETO:
        path = OUT / "sequences" / f"{stem(DATA / name)}.json"
        path.write_text(json.dumps(sequences(DATA / name), sort_keys=True) + "\n")
        print(path.relative_to(ROOT))
    for control, test in DIFF_PAIRS:
        figures = trace_diff(DATA / control, DATA / test)
        path = OUT / "trace_diff" / f"{stem(DATA / control)}__{stem(DATA / test)}.json"
        path.write_text(json.dumps(figures, sort_keys=True) + "\n")
        print(path.relative_to(ROOT))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
