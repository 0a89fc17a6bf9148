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

from ...errors import CorruptProfileError
from .pairs import Links, id_codes

STREAM_CATS = ("kernel", "gpu_memcpy", "gpu_memset", "Kernel", "Memcpy", "Memset")
ANNOTATION_CATS = ("gpu_user_annotation",)
KERNEL_CATS = ("kernel", "Kernel")
RUNTIME_CATS = ("cuda_runtime", "cuda_driver", "Runtime")
GPU_LAUNCH_FLOW_TYPE = 9  # XProf's ContextType::kGpuLaunch
# The line id of GPU user annotations: in XProf's derived-line range (0xdeadbeef + 40).
ANNOTATION_LINE_ID = 0xDEADBEEF + 40 - (1 << 32)
ANNOTATION_LINE = "GPU user annotations"
# ASCII digits only: ``\d`` takes any script's (``ProfilerStep#٣``), which torch never writes.
_STEP = re.compile(r"^ProfilerStep#([0-9]{1,18})$")
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


def launch_flows(dec, idx: np.ndarray) -> np.ndarray:
    """Which of the events ``idx`` are Kineto's launch → GPU flow events (replaced by
    correlation links): category ``ac2g``, or torch 1.9's ``async`` named ``launch``."""
    torch19 = dec.cat.isin(["async"], idx) & dec.name.isin(["launch"], idx)
    return dec.cat.isin(["ac2g"], idx) | torch19


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


def gpu_placement(dec, args, src: np.ndarray, path: str):
    """For the output events ``src``: which are GPU stream activity, which GPU annotations,
    and each one's device ordinal and stream (or annotation) line.

    Returns (on_stream mask, annotation mask, device int64, stream int64), device/stream
    valid where either mask is.
    """
    on_stream = dec.cat.isin(STREAM_CATS, src)
    annot = dec.cat.isin(ANNOTATION_CATS, src)
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
        need = gpu[~present[s]]
        if not len(need):
            continue
        ids = getattr(dec, field)
        number, is_number = _id_numbers(ids.values)
        code = ids.codes[src[need]]
        bad = need[~is_number[code]]
        if len(bad):
            i = int(bad[0])
            raise CorruptProfileError(
                path,
                f"traceEvents[{src[i]}] is GPU activity ({dec.cat.value(src[i])}) without "
                f"args.{'device' if field == 'pid' else 'stream'} and its {field} "
                f"{ids.value(src[i])!r} is not a number",
            )
        values[need] = number[code]
    for what, values in (("device", device), ("stream", stream)):
        bad = gpu[(values[gpu] < 0) | (values[gpu] > _MAX_ORDINAL)]
        if len(bad):
            raise CorruptProfileError(
                path,
                f"traceEvents[{src[bad[0]]}].args.{what} is {values[bad[0]]}, not a GPU "
                f"{what} number (0 to {_MAX_ORDINAL})",
            )
    return on_stream, annot, device, stream


def _id_numbers(values: list) -> tuple[np.ndarray, np.ndarray]:
    """Per distinct pid (or tid) value, then for "none" (code -1): the number it stands for
    (an int, or "stream 7" as 7; -1 past int64) and whether it is one."""
    number = np.zeros(len(values) + 1, np.int64)
    is_number = np.zeros(len(values) + 1, bool)
    for k, raw in enumerate(values):  # per distinct value, not per event
        m = _STREAM_TID.match(raw) if isinstance(raw, str) else None
        if m:
            raw = int(m.group(1))
        if isinstance(raw, int) and not isinstance(raw, bool):
            number[k] = raw if -(2**63) <= raw < 2**63 else -1
            is_number[k] = True
    return number, is_number


def correlation_links(args, src: np.ndarray, runtime: np.ndarray, on_stream: np.ndarray, n: int):
    """Runtime launch → GPU activity links through ``args.correlation``; ``runtime``: which
    output events are CUDA runtime/driver calls."""
    corr, has = args.ints("correlation", n)
    c = corr[src]
    h = has[src]
    prod = np.flatnonzero(runtime & h)
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


# Launch arguments past these cannot be real (a GPU has at most 255 registers a thread and
# 228 KiB of shared memory a block; occupancy is a share): written as 0 (not recorded).
_MAX_REGISTERS, _MAX_SHARED = 65536, 2**32


def kernel_details(
    args, src: np.ndarray, kernels: np.ndarray, n: int, warnings: list[str] | None = None
) -> tuple[np.ndarray, list]:
    """TF-style ``kernel_details`` for the output events ``kernels``: (codes, strings).
    Registers, shared memory and occupancy past what a GPU can have are written as 0, with
    a line in ``warnings``."""
    s = src[kernels]
    regs, _ = args.ints("registers per thread", n)
    shm, _ = args.ints("shared memory", n)
    occ_i, has_occ_i = args.ints("est. achieved occupancy %", n)
    occ = np.where(has_occ_i[s], occ_i[s].astype(float), 0.0)
    occ_f = args.floats("est. achieved occupancy %", n)
    occ = np.where(occ_f[1][s], occ_f[0][s], occ)
    regs, shm = regs[s], shm[s]
    bad = (regs < 0) | (regs > _MAX_REGISTERS) | (shm < 0) | (shm > _MAX_SHARED)
    with np.errstate(invalid="ignore"):
        bad |= ~((occ >= 0) & (occ <= 100))
    if bad.any():
        regs = np.where((regs < 0) | (regs > _MAX_REGISTERS), 0, regs)
        shm = np.where((shm < 0) | (shm > _MAX_SHARED), 0, shm)
        occ = np.where((occ >= 0) & (occ <= 100), occ, 0.0)
        if warnings is not None:
            warnings.append(
                f"{int(bad.sum())} kernel(s) with registers per thread, shared memory or "
                f"occupancy no GPU has (the first: traceEvents[{int(s[bad][0])}]): read as 0"
            )
    # grid and block as codes into the texts; one code for "[1,1,1]", written or not.
    texts = [*args.str_values, _NO_DIMS]
    ones = texts.index(_NO_DIMS)
    grid = args.text_codes("grid", n)[s]
    block = args.text_codes("block", n)[s]
    grid, block = np.where(grid >= 0, grid, ones), np.where(block >= 0, block, ones)
    cols = [regs, shm, occ, grid, block]
    # Distinct (regs, shm, occ, grid, block) in order of first appearance; -0.0 is 0.0.
    codes = pd.factorize(id_codes(*cols[:2], cols[2] + 0.0, *cols[3:]))[0]
    first = np.unique(codes, return_index=True)[1]
    # Each distinct grid or block text once (a few shapes shared by many configurations).
    dims = {i: _dims(texts[i]) for i in np.unique(np.r_[grid[first], block[first]]).tolist()}
    strings = [
        f"regs:{r} shm:{m} grid:{dims[g]} block:{dims[b]} occ_pct:{o:g}"
        for r, m, o, g, b in zip(*(c[first].tolist() for c in cols))
    ]
    return codes.astype(np.int64), strings


_NO_DIMS = "[1,1,1]"


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


def distributed_info(top) -> list[tuple[str, object]]:
    """Kineto's ``distributedInfo`` (``rank``, ``world_size``, ``backend``, ...) as (stat,
    value) pairs: the scalars as written (a bool is no rank)."""
    info = top.distributedInfo if top is not None else None
    if not isinstance(info, dict):
        return []
    return [
        (str(k), v)
        for k, v in info.items()
        if isinstance(v, (int, float, str)) and not isinstance(v, bool)
    ]


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
