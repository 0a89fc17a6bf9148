"""Structural fuzzer of XLA programs: every XLA analysis and view on damaged HLO modules.

    python benchmarks/fuzz_hlo.py [--cases 2000] [--seed 0] [--keep DIR]

Each case takes a real program (the JAX H100 and MI300X captures' programs in tests/data:
convolutions, cuBLAS/cuDNN calls, fusions, reduces, the random-number programs) or the
synthetic one of tests/support/hlo_hostile_builder.py, damages its structure one to four times in a
way a byte flip rarely produces -- shapes (dimensions -1, 0, INT64_MIN, 2^62, thousands of
them, element types no XLA has, tuples), operands (missing, itself, a later one, hundreds),
called computations (itself, a cycle, a chain, a missing one, an empty one), backend configs
(not JSON, wrong types, 10^5 contracting dimensions, 1e400), windows and dimension numbers
(out of range, negative, huge), metadata (names of 100 KB, lines below 0), opcodes, ids and
schedules -- writes it into a GPU capture whose kernels name the entry's instructions
(tests/support/hlo_hostile_builder.py), loads it and computes ``run.hlo_instructions``, the cost
model, ``hlo_stats``, ``roofline``, ``op_profile`` and the payloads of the roofline and op
profile views. Prints the outcomes and, for the goal of issue 37: hangs (a case over
``--limit`` seconds), bare exceptions (not a ProfileError) and numbers that are not finite
or are negative, and programs whose cost rows are not one per top-level instruction (a
damaged instruction dropped its program's costs) (all 0), with the seed that reproduces
each.
"""

from __future__ import annotations

import argparse
import collections
import dataclasses
import json
import pathlib
import random
import signal
import sys
import tempfile
import time
import traceback

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "support"))

from hlo_hostile_builder import capture, good_program  # noqa: E402

import tfprof_widgets as tw  # noqa: E402
from tfprof_widgets.proto import xla_hlo_pb2  # noqa: E402

REAL = (
    ROOT / "tests/data/xplane_h100_jax/jax_cnn_nographs.xplane.pb",
    next((ROOT / "tests/data/xplane_amd_jax").glob("*.xplane.pb"), None),
)
KINDS = (
    "shape", "operands", "called", "backend config", "window", "dimension numbers",
    "metadata", "opcode", "ids", "schedule",
)  # fmt: skip
INT64_MIN, INT64_MAX = -(1 << 63), (1 << 63) - 1
ODD_DIMS = (-1, 0, 1, INT64_MIN, INT64_MAX, 1 << 62, 1 << 40, 1 << 31, 3, 50_000_001)
OPCODES = (
    "add", "exponential", "fusion", "reduce", "reduce-window", "scatter", "dot",
    "convolution", "custom-call", "concatenate", "slice", "gather", "tuple",
    "get-tuple-element", "parameter", "while", "conditional", "call", "sort", "no-such-op", "",
)  # fmt: skip
TARGETS = ("__cublas$gemm", "__cublas$lt$matmul", "__cudnn$convForward", "__hipblaslt", "x")
MAX_KERNELS = 60  # kernels per step of a case's capture (the analyses' time)


@dataclasses.dataclass
class Result:
    """What a campaign found: outcome counts, and per goal the (seed, what) that broke it."""

    outcomes: collections.Counter = dataclasses.field(default_factory=collections.Counter)
    kinds: collections.Counter = dataclasses.field(default_factory=collections.Counter)
    bare: list = dataclasses.field(default_factory=list)
    bad_numbers: list = dataclasses.field(default_factory=list)
    hangs: list = dataclasses.field(default_factory=list)
    slowest: tuple = (0.0, None)


_PROGRAMS: list[bytes] = []


def programs() -> list[bytes]:
    """Serialized HloProtos of the real captures' programs (decoded once), and the
    synthetic one."""
    if not _PROGRAMS:
        for path in REAL:
            if path is None or not path.exists():
                continue
            run = tw.load(path, progress=False)
            for _, _, module in run.hlo_modules:
                proto = xla_hlo_pb2.HloProto()
                proto.hlo_module.CopyFrom(module)
                _PROGRAMS.append(proto.SerializeToString())
        _PROGRAMS.append(good_program(12).bytes())
    return _PROGRAMS


# -- the mutations ------------------------------------------------------------------------------
def _instructions(m) -> list:
    return [i for c in m.computations for i in c.instructions]


def _shape(rng: random.Random, shape) -> str:
    what = rng.randrange(6)
    if what == 0 and len(shape.dimensions):
        shape.dimensions[rng.randrange(len(shape.dimensions))] = rng.choice(ODD_DIMS)
    elif what == 1:
        shape.dimensions.extend([rng.choice(ODD_DIMS)] * rng.choice((2, 30, 5000)))
    elif what == 2:
        shape.element_type = rng.choice((0, 13, 14, 17, 99, -5, 2**31 - 1))
    elif what == 3:
        shape.element_type = xla_hlo_pb2.TUPLE
        for _ in range(rng.randrange(4)):
            s = shape.tuple_shapes.add(element_type=rng.choice((1, 11, 13, 2)))
            s.dimensions.extend(rng.choice(ODD_DIMS) for _ in range(rng.randrange(3)))
    elif what == 4:
        del shape.dimensions[:]
    else:
        shape.dimensions.extend([1 << 62] * 200)
    return "shape"


def _backend(rng: random.Random, ins) -> None:
    ins.opcode, ins.custom_call_target = "custom-call", rng.choice(TARGETS)
    choice = rng.randrange(6)
    if choice == 0:
        ins.backend_config = bytes(rng.randrange(256) for _ in range(rng.randrange(40)))
    elif choice == 1:
        ins.backend_config = b'{"gemm_backend_config": [1, 2]}'
    elif choice == 2:
        dims = [rng.choice((-1, 0, 1, 2, 1 << 40)) for _ in range(100_000)]
        config = {"gemm_backend_config": {"dot_dimension_numbers": {
            "lhs_contracting_dimensions": dims}}}  # fmt: skip
        ins.backend_config = json.dumps(config).encode()
    elif choice == 3:
        ins.backend_config = (
            b'{"gemm_backend_config": {"dot_dimension_numbers": '
            b'{"lhs_contracting_dimensions": [1e400, "1", null]}}}'
        )
    elif choice == 4:
        ins.backend_config = b"[" * 100_000 + b"]" * 100_000
    else:
        ins.backend_config = b'{"gemm_backend_config": {"dot_dimension_numbers": {}}}'


def mutate(rng: random.Random, data: bytes) -> tuple[bytes, list[str]]:
    """One to four structural damages of a serialized HloProto; (bytes, their kinds)."""
    proto = xla_hlo_pb2.HloProto()
    proto.ParseFromString(data)
    m = proto.hlo_module
    done = []
    for _ in range(rng.randint(1, 4)):
        ins_all = _instructions(m)
        if not ins_all:
            break
        ins = rng.choice(ins_all)
        comps = list(m.computations)
        kind = rng.choice(KINDS)
        ids = [i.id for i in ins_all]
        if kind == "shape":
            _shape(rng, ins.shape)
        elif kind == "operands":
            what = rng.randrange(5)
            if what == 0:
                del ins.operand_ids[:]
            elif what == 1:
                ins.operand_ids.append(ins.id)
            elif what == 2:
                ins.operand_ids.extend(rng.choice(ids) for _ in range(300))
            elif what == 3:
                ins.operand_ids.append(rng.choice((-1, 1 << 62, 999_999)))
            else:
                ins.operand_ids[:] = [max(ids)] * max(len(ins.operand_ids), 1)
        elif kind == "called":
            what = rng.randrange(5)
            own = next(c for c in comps if ins in c.instructions)
            ins.opcode = rng.choice(("fusion", "reduce", "reduce-window", "scatter", "call"))
            if what == 0:
                ins.called_computation_ids[:] = [own.id]
            elif what == 1:
                ins.called_computation_ids[:] = [rng.choice(comps).id]
            elif what == 2:
                ins.called_computation_ids[:] = [rng.choice((-1, 0, 1 << 40))]
            elif what == 3:
                empty = m.computations.add(name="empty", id=max(c.id for c in comps) + 1)
                empty.is_fusion_computation = True
                empty.root_id = 12345
                ins.called_computation_ids[:] = [empty.id]
            else:  # a chain of fusions 300 deep, ending in a cycle or an add
                base = max(c.id for c in comps) + 1
                for k in range(300):
                    c = m.computations.add(name=f"chain_{k}", id=base + k)
                    c.is_fusion_computation = True
                    inner = c.instructions.add(name=f"f{k}", opcode="fusion", id=(1 << 40) + k)
                    inner.shape.element_type, inner.shape.dimensions[:] = 11, [64]
                    nxt = base + k + 1 if k < 299 else rng.choice((base, base + 150))
                    inner.called_computation_ids.append(nxt)
                    c.root_id = inner.id
                ins.called_computation_ids[:] = [base]
        elif kind == "backend config":
            _backend(rng, ins)
        elif kind == "window":
            ins.opcode = rng.choice(("convolution", "reduce-window"))
            w = ins.window.dimensions.add()
            w.size = rng.choice(ODD_DIMS)
            w.stride = rng.choice((0, -3, 1, 1 << 62))
            w.padding_low = rng.choice((0, -(1 << 40), 1 << 40, 5))
            w.window_dilation = rng.choice((0, 1, 2, 1 << 40))
            w.base_dilation = rng.choice((0, 1, 3))
        elif kind == "dimension numbers":
            dn = ins.convolution_dimension_numbers
            dn.input_feature_dimension = rng.choice((-1, 0, 7, 1 << 40))
            dn.kernel_spatial_dimensions.append(rng.choice((-2, 0, 99)))
            ins.dot_dimension_numbers.lhs_contracting_dimensions.extend(
                [rng.choice((-1, 0, 1, 64))] * rng.choice((1, 1000))
            )
            ins.dimensions.append(rng.choice((-1, 0, 1, 1 << 40)))
            ins.feature_group_count = rng.choice((0, -1, 1 << 40, 3))
            ins.opcode = rng.choice(("convolution", "dot", "concatenate"))
        elif kind == "metadata":
            md = ins.metadata
            what = rng.randrange(4)
            if what == 0:
                md.op_name = "jit(f)/" + "x" * rng.choice((70_000, 100))
            elif what == 1:
                md.source_line = rng.choice((-1, INT64_MIN >> 32, 2**31 - 1))
                md.source_file = "/" * rng.choice((1, 70_000))
            elif what == 2:
                md.stack_frame_id = rng.choice((-1, 1 << 30, 1))
            else:
                ins.name = rng.choice(("", "a" * 70_000, ins.name + "\u202e<script>"))
        elif kind == "opcode":
            ins.opcode = rng.choice(OPCODES)
            ins.fusion_kind = rng.choice(("kLoop", "kInput", "kOutput", "kCustom", "", "x"))
            ins.custom_call_target = rng.choice(TARGETS)
        elif kind == "ids":
            what = rng.randrange(3)
            if what == 0:
                ins.id = rng.choice(ids)  # a duplicate
            elif what == 1:
                rng.choice(comps).id = rng.choice(comps).id
            else:
                rng.choice(comps).root_id = rng.choice((-1, 1 << 50))
        else:
            seq = m.schedule.sequences[rng.choice(comps).id]
            seq.instruction_ids.extend([rng.choice(ids + [-1, 1 << 50])] * rng.randrange(1, 50))
        done.append(kind)
    return proto.SerializeToString(), done


# -- one case -----------------------------------------------------------------------------------
class _Hang(Exception):
    pass


def _alarm(signum, frame):
    raise _Hang()


def _numbers_ok(name: str, df) -> list[str]:
    """Columns of ``df`` holding a number that is not finite or is negative."""
    bad = []
    for col in df.select_dtypes("number").columns:
        v = df[col].to_numpy(float)
        if not (np.isfinite(v).all() and (v >= 0).all()):
            bad.append(f"{name}.{col}")
    return bad


def run_case(seed: int, work: pathlib.Path) -> tuple[str, list[str], str]:
    """(outcome, kinds of damage, detail) of one seeded case; the detail names what broke."""
    from tfprof_widgets.frameworks.xla.cost import instruction_costs

    rng = random.Random(seed)
    data, kinds = mutate(rng, rng.choice(programs()))
    proto = xla_hlo_pb2.HloProto()
    proto.ParseFromString(data)
    entry = next(
        (c for c in proto.hlo_module.computations
         if c.name == proto.hlo_module.entry_computation_name),
        proto.hlo_module.computations[-1] if proto.hlo_module.computations else None,
    )  # fmt: skip
    names = [i.name for i in entry.instructions if i.opcode != "parameter"] if entry else []
    # Kernels name the entry's instructions, and now and then no instruction at all.
    names = names[:MAX_KERNELS] + (["no-such-instruction"] if rng.random() < 0.2 else [])
    path = capture(work / f"case{seed}.xplane.pb", data, ran=names or ["x"])
    try:
        run = tw.load(path, progress=False)
        costs = instruction_costs(run)
        bad = _numbers_ok("instruction_costs", costs)
        # Each instruction is costed on its own: a damaged one never drops its program's.
        top = sum(len(c.instructions) for c in proto.hlo_module.computations
                  if not c.is_fusion_computation)  # fmt: skip
        if run.hlo_modules and len(costs) != top:
            bad.append(f"instruction_costs: {len(costs)} rows for {top} instructions")
        h = run.hlo_instructions
        bad += [c for c in _numbers_ok("hlo_instructions", h[["result_bytes"]])]
        for name in ("hlo_stats", "roofline", "op_profile"):
            bad += _numbers_ok(name, getattr(run, name))
        for view in (tw.views.roofline(run), tw.views.hlo_op_profile(run)):
            json.loads(view.payload_json())
        warned = any("cost model" in w for w in run.warnings)
        cut = any("is cut to" in w for w in run.warnings)
        outcome = "analysed" + (", costs refused" if warned else "")
        outcome += ", texts cut" if cut else ""
        return ("bad numbers" if bad else outcome), kinds, ", ".join(bad)
    except tw.ProfileError as exc:
        return "ProfileError", kinds, str(exc)[:200]
    finally:
        path.unlink(missing_ok=True)


def campaign(seeds, work: pathlib.Path, limit: float = 60.0) -> Result:
    """Every seed's case, each stopped after ``limit`` seconds (a hang)."""
    out = Result()
    old = signal.signal(signal.SIGALRM, _alarm)
    try:
        for seed in seeds:
            t = time.perf_counter()
            signal.setitimer(signal.ITIMER_REAL, limit)
            try:
                outcome, kinds, detail = run_case(seed, pathlib.Path(work))
                if outcome == "bad numbers":
                    out.bad_numbers.append((seed, kinds, detail))
            except _Hang:
                outcome, kinds = "hang", []
                out.hangs.append(seed)
            except Exception as exc:  # noqa: BLE001 - what this campaign looks for
                outcome, kinds = "bare exception", []
                tb = traceback.format_exc(limit=-3)
                out.bare.append((seed, f"{type(exc).__name__}: {str(exc)[:200]}", tb))
            finally:
                signal.setitimer(signal.ITIMER_REAL, 0)
            out.outcomes[outcome] += 1
            out.kinds.update(kinds)
            dt = time.perf_counter() - t
            if dt > out.slowest[0]:
                out.slowest = (dt, seed)
    finally:
        signal.signal(signal.SIGALRM, old)
    return out


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--cases", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--limit", type=float, default=60.0, help="seconds a case may take")
    a = ap.parse_args()
    programs()
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        r = campaign(range(a.seed, a.seed + a.cases), pathlib.Path(tmp), a.limit)
    print(f"{a.cases} damaged XLA programs (seeds {a.seed}..{a.seed + a.cases - 1}), "
          f"{time.perf_counter() - t0:.0f} s")  # fmt: skip
    for k, v in sorted(r.outcomes.items()):
        print(f"  {k:24s} {v:6d}")
    print("  damages applied: " + ", ".join(f"{k} {v}" for k, v in sorted(r.kinds.items())))
    print(f"  hangs (> {a.limit:.0f} s): {len(r.hangs)}   bare exceptions: {len(r.bare)}   "
          f"cases with a number not finite or below 0: {len(r.bad_numbers)}")  # fmt: skip
    print(f"  slowest: {r.slowest[0]:.2f} s (seed {r.slowest[1]})")
    for seed in r.hangs[:10]:
        print(f"\nseed {seed}: hang")
    for seed, msg, tb in r.bare[:10]:
        print(f"\nseed {seed}: {msg}\n{tb}")
    for seed, kinds, detail in r.bad_numbers[:10]:
        print(f"\nseed {seed} ({', '.join(kinds)}): {detail}")
    return 1 if r.hangs or r.bare or r.bad_numbers else 0


if __name__ == "__main__":
    sys.exit(main())
