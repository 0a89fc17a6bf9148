"""A synthetic TPU XSpace shaped like what libtpu writes, for the TPU rules (no TPU here).

What it writes, as real TPU captures do (xprof's own test capture tpu_inference_2 and its
converters, see the notes in analysis/tpu.py):

* planes ``/device:TPU:0`` and ``/device:TPU:1`` (tensor cores) with the plane stat
  ``device_type_string``; lines ``XLA Modules`` (one event per program run, metadata stat
  ``program_id``), ``XLA Ops``, ``Async XLA Ops`` and ``Steps``;
* the op's identity on its EVENT METADATA: ``name`` the long HLO text, ``display_name`` the
  short HLO name, stats ``program_id``, ``symbol_id``, ``hlo_category`` and ``tf_op``
  (no ``tf_op`` on a copy XLA added; symbol 0 for the program's root tuple);
* the device clock on each op EVENT: ``device_offset_ps``/``device_duration_ps`` (offsets
  shifted from the XEvent's, durations about 10 % shorter), int64;
* ``/host:CPU`` with a TF op, a runtime TraceMe and ``MemoryAllocation``/
  ``MemoryDeallocation`` events whose allocator is named by ``index_on_host`` or
  ``device_ordinal`` (TPU allocators) or ``allocator_name`` (the host's), one allocation
  carrying ``tf_op``;
* ``XSpace.hostnames`` with one name, and no ``group_id`` (XProf groups TPU captures
  itself).

``scripts/make_golden.py`` runs xprof on it (tests/golden/synthetic_tpu); the tests rebuild
it with :func:`tpu_capture` and compare.
"""

from __future__ import annotations

from xspace_builder import XSpaceBuilder

TS_NS = 1_000_000  # every line's timestamp_ns
BASE_PS = TS_NS * 1000


def _tpu_core(b: XSpaceBuilder, index: int, clock_shift_ps: int) -> None:
    p = b.plane(f"/device:TPU:{index}", index + 1)
    p.add_plane_stat("device_type_string", "TPU v4")
    modules = p.line("XLA Modules", 1, timestamp_ns=TS_NS)
    ops = p.line("XLA Ops", 2, timestamp_ns=TS_NS)
    asynchronous = p.line("Async XLA Ops", 3, timestamp_ns=TS_NS)
    steps = p.line("Steps", 4, timestamp_ns=TS_NS)

    def op(name, short, symbol, category, tf_op=None):
        stats = {"program_id": 77, "symbol_id": symbol, "hlo_category": category}
        if tf_op:
            stats["tf_op"] = tf_op
        p.event_id(name, display_name=short, stats=stats)
        return name

    conv = op("%fusion.1 = f32[8,128] fusion(...)", "fusion.1", 1, "convolution fusion",
              "model/conv/Conv2D:Conv2D")  # fmt: skip
    copy = op("%copy.2 = f32[8,128] copy(...)", "copy.2", 2, "copy")
    infeed = op("%infeed.3 = infeed(...)", "infeed.3", 3, "infeed",
                "InfeedQueue/dequeue:InfeedDequeueTuple")  # fmt: skip
    dense = op("%fusion.4 = f32[8,10] fusion(...)", "fusion.4", 4, "output fusion",
               "model/dense/MatMul:MatMul")  # fmt: skip
    bias = op("%add.5 = f32[8,10] add(...)", "add.5", 5, "non-fusion elementwise",
              "model/dense/BiasAdd:BiasAdd")  # fmt: skip
    root = op("%tuple.6 = tuple(...)", "tuple.6", 0, "tuple")
    copy_start = op("%copy-start.7 = copy-start(...)", "copy-start.7", 7, "copy-start")
    p.event_id("jit_train_step(77)", stats={"program_id": 77})

    def timed(line, name, off_ps, dur_ps, device_dur_ps=None):
        device = {
            "device_offset_ps": BASE_PS + off_ps + clock_shift_ps,
            "device_duration_ps": device_dur_ps if device_dur_ps is not None else dur_ps * 9 // 10,
        }
        line.event(name, off_ps, dur_ps, device)

    modules.event("jit_train_step(77)", 0, 1_000_000)
    modules.event("jit_train_step(77)", 1_500_000, 400_000)
    steps.event("0", 0, 1_950_000)
    timed(ops, infeed, 0, 100_000)
    timed(ops, conv, 100_000, 400_000, 380_000)
    timed(ops, copy, 150_000, 100_000, 100_000)  # inside the conv on the device clock
    timed(ops, dense, 600_000, 200_000)
    timed(ops, bias, 820_000, 50_000)
    timed(ops, root, 900_000, 50_000)
    timed(ops, conv, 1_500_000, 300_000)
    timed(ops, dense, 1_800_000, 90_000)
    timed(asynchronous, copy_start, 200_000, 700_000)


def _host(b: XSpaceBuilder) -> None:
    p = b.plane("/host:CPU", 1000)
    python = p.line("python", 11, timestamp_ns=TS_NS)
    runtime = p.line("tf_pjrt_thread", 12, timestamp_ns=TS_NS)
    python.event("TfrtTpuLoadedExecutable::ExecuteLaunch", 0, 1_900_000)
    python.event("train_step/Adam:ResourceApplyAdam", 50_000, 100_000)
    bfc = {"bytes_reserved": 0, "bytes_available": 1000, "fragmentation": 0.0}

    def memory(name, off_ps, allocator, nbytes, addr, **extra):
        stats = {**allocator, "bytes_allocated": nbytes, "peak_bytes_in_use": max(nbytes, 256)}
        stats.update(requested_bytes=256, allocation_bytes=256, addr=addr, **bfc, **extra)
        runtime.event(name, off_ps, 0, stats)

    memory("MemoryAllocation", 10_000, {"index_on_host": 0}, 256, 1,
           tf_op="model/conv/Conv2D:Conv2D")  # fmt: skip
    memory("MemoryAllocation", 20_000, {"device_ordinal": 1}, 512, 2)
    memory("MemoryAllocation", 30_000, {"allocator_name": "tpu_host_bfc"}, 64, 3)
    memory("MemoryDeallocation", 700_000, {"index_on_host": 0}, 0, 1)


def tpu_capture(hostname: str = "tpu-vm-7") -> XSpaceBuilder:
    """The synthetic TPU capture (two cores, clock shifts of 3 and 7 ns)."""
    b = XSpaceBuilder(hostname)
    _tpu_core(b, 0, clock_shift_ps=3_000)
    _tpu_core(b, 1, clock_shift_ps=7_000)
    _host(b)
    return b
