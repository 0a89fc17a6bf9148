"""PyTorch Kineto traces (``torch.profiler``'s Chrome JSON): GPU activity on device planes.

Kineto writes every GPU's activity under a process whose name is the *host* process's
("python"), so the device is told by the event's ``cat``, never by its pid or process name:

* ``kernel``/``gpu_memcpy``/``gpu_memset`` (PyTorch 1.8/1.9: ``Kernel``/``Memcpy``/
  ``Memset``) go to ``/device:GPU:<args.device>``, on the line ``Stream #<args.stream>``
  (line id = the stream); ``gpu_user_annotation`` (no device arg: its pid and tid) goes to the
  same plane on a "GPU user annotations" line whose id is in XProf's derived-line range, so
  that, like XProf's derived lines, it is not counted again as device time;
* everything else on a process id >= 0 is host work, on ``/host:CPU``, one line per
  (pid, tid), even where it sits on a GPU's pid (H100 traces put Python events there). Torch
  1.9 writes the same thread id as ``"25738"`` and ``25738``: digit strings are read as
  integers here (elsewhere ids of different JSON types stay different). Bookkeeping on
  string or negative pids ("Spans", "Traces", ``overhead`` on -1) keeps its own planes.

Host launches connect to their kernels: the CUDA runtime/driver event and the GPU event that
share ``args.correlation`` become a producer/consumer link (the file's ``ac2g`` or torch 1.9
``async``/``launch`` flow events say the same and are not loaded again), with the correlation
id as flow id, XProf's GPU-launch flow type (9), and ``correlation_id`` on both ends. Each
kernel gets a ``kernel_details`` stat in TensorFlow's form (``regs:38 shm:0 grid:50,1,1
block:256,1,1 occ_pct:8``) from its launch arguments, which is what ``run.kernels`` reads;
Kineto reports static and dynamic shared memory together, so ``shm`` (read as static shared
memory) holds their sum. ``ProfilerStep#N`` events on the host are step markers (``step_num``
N, ``_r`` 1), as TensorFlow's ``train`` step markers are.
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd

from ..errors import CorruptProfileError
from .chrome_pairs import Links

STREAM_CATS = ("kernel", "gpu_memcpy", "gpu_memset", "Kernel", "Memcpy", "Memset")
ANNOTATION_CATS = ("gpu_user_annotation",)
KERNEL_CATS = ("kernel", "Kernel")
RUNTIME_CATS = ("cuda_runtime", "cuda_driver", "Runtime")
GPU_LAUNCH_FLOW_TYPE = 9  # XProf's ContextType::kGpuLaunch
# The line id of GPU user annotations: in XProf's derived-line range (0xdeadbeef + 40).
ANNOTATION_LINE_ID = 0xDEADBEEF + 40 - (1 << 32)
ANNOTATION_LINE = "GPU user annotations"
_STEP = re.compile(r"^ProfilerStep#(\d{1,18})$")
_STREAM_TID = re.compile(r"^stream (\d{1,9})\s*$")
_MAX_ORDINAL = 2**31 - 1
# deviceProperties keys that are the planes table's device properties.
_PROPERTY_STATS = {
    "numSms": "core_count",
    "totalGlobalMem": "memory_size",
    "computeMajor": "compute_cap_major",
    "computeMinor": "compute_cap_minor",
}


def is_kineto(top) -> bool:
    """Whether the trace's top-level object is Kineto's (its own keys are there)."""
    return top is not None and any(
        v is not None
        for v in (
            top.schemaVersion,
            top.deviceProperties,
            top.baseTimeNanoseconds,
            top.distributedInfo,
        )
    )


def is_launch_flow(cat: str | None, name: str | None) -> bool:
    """Kineto's launch → GPU flow events (replaced by correlation links)."""
    return cat == "ac2g" or (cat == "async" and name == "launch")


def base_time_ns(top, path: str) -> int:
    """``baseTimeNanoseconds``: newer Kineto writes ts relative to it (0 when absent)."""
    base = top.baseTimeNanoseconds if top is not None else None
    if base is None:
        return 0
    if isinstance(base, bool) or not isinstance(base, int) or not 0 <= base < 2**62:
        raise CorruptProfileError(
            path, f"baseTimeNanoseconds is {base!r}, not an epoch time in nanoseconds"
        )
    return base


def normalise_tid(tid):
    """Torch 1.9's "25738" is the thread 25738."""
    if isinstance(tid, str) and tid.isascii() and tid.isdigit() and len(tid) <= 18:
        return int(tid)
    return tid


def gpu_placement(dec, args, src: np.ndarray, cat_of: np.ndarray, path: str):
    """For the output events ``src``: which are GPU stream activity, which GPU annotations,
    and each one's device ordinal and stream (or annotation) line.

    ``cat_of``: each output event's category (object array). Returns (on_stream mask,
    annotation mask, device int64, stream int64), device/stream valid where either mask is.
    """
    on_stream = np.isin(cat_of, STREAM_CATS)
    annot = np.isin(cat_of, ANNOTATION_CATS)
    n = len(dec)
    dev_arg, has_dev = args.ints("device", n)
    stream_arg, has_stream = args.ints("stream", n)
    gpu = np.flatnonzero(on_stream | annot)
    device = np.zeros(len(src), np.int64)
    stream = np.zeros(len(src), np.int64)
    s = src[gpu]
    device[gpu] = dev_arg[s]
    stream[gpu] = stream_arg[s]
    # No device/stream arg (GPU annotations): the pid is the device, the tid the stream.
    for field, values, present in (("pid", device, has_dev), ("tid", stream, has_stream)):
        for i in gpu[~present[s]].tolist():
            raw = getattr(dec, field)[src[i]]
            m = _STREAM_TID.match(raw) if isinstance(raw, str) else None
            if m:
                raw = int(m.group(1))
            if isinstance(raw, bool) or not isinstance(raw, int):
                raise CorruptProfileError(
                    path,
                    f"traceEvents[{src[i]}] is GPU activity ({cat_of[i]}) without "
                    f"args.{'device' if field == 'pid' else 'stream'} and its {field} "
                    f"{raw!r} is not a number",
                )
            values[i] = raw if -(2**63) <= raw < 2**63 else -1
    for what, values in (("device", device), ("stream", stream)):
        bad = gpu[(values[gpu] < 0) | (values[gpu] > _MAX_ORDINAL)]
        if len(bad):
            raise CorruptProfileError(
                path,
                f"traceEvents[{src[bad[0]]}].args.{what} is {values[bad[0]]}, not a GPU "
                f"{what} number (0 to {_MAX_ORDINAL})",
            )
    return on_stream, annot, device, stream


def correlation_links(args, src: np.ndarray, cat_of: np.ndarray, on_stream: np.ndarray, n: int):
    """Runtime launch → GPU activity links through ``args.correlation``."""
    corr, has = args.ints("correlation", n)
    c = corr[src]
    h = has[src]
    prod = np.flatnonzero(np.isin(cat_of, RUNTIME_CATS) & h)
    cons = np.flatnonzero(on_stream & h)
    if not len(prod) or not len(cons):
        return Links.empty(), np.zeros(0, np.int64), np.zeros(0, np.int64)
    pidx = pd.Index(c[prod])
    first = ~pidx.duplicated()
    pidx, prod = pidx[first], prod[first]
    hit = pidx.get_indexer(c[cons])
    ok = hit >= 0
    p, q = prod[hit[ok]], cons[ok]
    ids = c[q]
    links = Links(p, q, ids, np.full(len(q), GPU_LAUNCH_FLOW_TYPE, np.int64), 0)
    both = np.concatenate([p, q])
    return links, both, np.concatenate([ids, ids])


def kernel_details(args, src: np.ndarray, kernels: np.ndarray, n: int) -> tuple[np.ndarray, list]:
    """TF-style ``kernel_details`` for the output events ``kernels``: (codes, strings)."""
    s = src[kernels]
    regs, _ = args.ints("registers per thread", n)
    shm, _ = args.ints("shared memory", n)
    occ_i, has_occ_i = args.ints("est. achieved occupancy %", n)
    grid, has_grid = args.texts("grid", n)
    block, has_block = args.texts("block", n)
    occ = np.where(has_occ_i[s], occ_i[s].astype(float), 0.0)
    occ_f = args.floats("est. achieved occupancy %", n)
    occ = np.where(occ_f[1][s], occ_f[0][s], occ)
    cols = [
        regs[s],
        shm[s],
        occ,
        np.where(has_grid[s], grid[s], "[1,1,1]"),
        np.where(has_block[s], block[s], "[1,1,1]"),
    ]
    frame = pd.DataFrame({str(i): c for i, c in enumerate(cols)})
    codes, uniq = pd.MultiIndex.from_frame(frame).factorize()
    strings = [
        f"regs:{r} shm:{m} grid:{_dims(g)} block:{_dims(b)} occ_pct:{o:g}" for r, m, o, g, b in uniq
    ]
    return codes.astype(np.int64), strings


def _dims(text: str) -> str:
    """'[50, 1, 1]' -> '50,1,1'."""
    return re.sub(r"[\[\]\s]", "", str(text))


def step_numbers(names: list) -> dict[int, int]:
    """Name index -> N for every ``ProfilerStep#N`` name."""
    out = {}
    for i, name in enumerate(names):
        m = _STEP.match(name) if isinstance(name, str) else None
        if m:
            out[i] = int(m.group(1))
    return out


def device_properties(top, ordinal: int) -> list[tuple[str, object]]:
    """The ``deviceProperties`` entry of a GPU as (stat, value) pairs: the planes table's
    properties under their names (``numSms`` as ``core_count``...), the rest as written."""
    props = top.deviceProperties if top is not None else None
    if not isinstance(props, list):
        return []
    for p in props:
        if isinstance(p, dict) and p.get("id") == ordinal:
            return [
                (_PROPERTY_STATS.get(k, k), v)
                for k, v in p.items()
                if k != "id" and isinstance(v, (int, float, str)) and not isinstance(v, bool)
            ]
    return []
