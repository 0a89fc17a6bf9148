"""XLA programs, TPU steps and tool data (issue 37 items 1-4 and 10, round three): HLO
programs that call themselves, chain deeply, or claim absurd shapes, 10^6 instructions or
kernels, nested and overflowing TPU steps, 2 M repeated tool-data rows. Each case: setup(d)
writes the input and returns the target, action(target) -> (outcome, whether its own check
held); a row is met when that check held, no bare exception, <= GOAL_SECS and GOAL_PEAK_MB.

    python benchmarks/bench_hostile_hlo.py          (bench_hostile.py --round-three-hlo)
"""

from __future__ import annotations

import json
import pathlib
import tempfile
import time

from fuzz_walkers import varint as _varint
from hostile_common import (
    GOAL_PEAK_MB,
    GOAL_SECS,
    reset_peak,
    rss_kb,
    shutil_rmtree,
)

import tfprof_widgets as tw


def _r3_program(extra=None, n=40):
    """tests/support/hlo_hostile_builder.py's program of ``n`` good fusions, changed by
    ``extra``."""
    from hlo_hostile_builder import good_program

    prog = good_program(n)
    if extra is not None:
        extra(prog)
    return prog


def _r3_capture(change=None, ran=None, steps=2):
    def setup(d):
        from hlo_hostile_builder import capture

        prog = _r3_program(change)
        return capture(d / "h.xplane.pb", prog, ran=ran, steps=steps)

    return setup


def _r3_xla(target, good: int = 40, report: bool = False):
    """Load, every XLA analysis (hlo_stats, roofline, op_profile, the cost model) and view
    payload; (outcome, whether the good fusions kept their FLOPs and every number is finite
    and not negative)."""
    import numpy as np

    from tfprof_widgets.frameworks.xla.cost import instruction_costs

    run = tw.load(target, progress=False, max_memory_bytes=GOAL_PEAK_MB << 20)
    # The good fusions' FLOPs as the roofline shows them (3,072 FLOPs per run); the cost
    # model's whole table (instruction_costs: every instruction of every program, most
    # never run) only where the program is small.
    rl = run.roofline
    fine = rl[rl["hlo_op_name"].astype(str).str.startswith("fusion.")]
    costed = int((fine["flops"] == fine["occurrences"] * 3 * 1024).sum())
    if sum(len(c.instructions) for _, _, m in run.hlo_modules for c in m.computations) < 1e5:
        instruction_costs(run)
    bad = []
    for name in ("hlo_stats", "roofline", "op_profile"):
        df = getattr(run, name)
        for col in df.select_dtypes("number").columns:
            v = df[col].to_numpy(float)
            if not (np.isfinite(v).all() and (v >= 0).all()):
                bad.append(f"{name}.{col}")
    for view in (tw.views.roofline(run), tw.views.hlo_op_profile(run)):
        json.loads(view.payload_json())
    out = f"{costed}/{good} good costed" + (f"; BAD {bad[:2]}" if bad else "")
    if report:
        from tfprof_widgets import report as report_module

        size = len(report_module.report_html(run).encode()) / 2**20
        out += f"; report {size:.1f} MB"
        bad += ["report"] if size > 20 else []
    warned = [w for w in run.warnings if "program" in w or "TPU" in w]
    out += f"; warns: {warned[0][:60]}" if warned else "; no warning"
    return out, costed == good and not bad


def _r3_self_call(prog):
    comp = prog.computation("fused_self")
    p = prog.add(comp, "param_0", "parameter")
    prog.add(comp, "fusion.inner", "fusion", operands=[p.id], called=[comp.id])
    prog.add(prog.entry, "fusion_bad", "fusion", operands=[1000], called=[comp.id])


def _r3_chain(prog):
    comps = [prog.computation(f"chain_{k}") for k in range(1500)]
    for k, comp in enumerate(comps):
        p = prog.add(comp, f"param_{k}", "parameter")
        if k + 1 < len(comps):
            prog.add(comp, f"fc{k}", "fusion", operands=[p.id], called=[comps[k + 1].id])
        else:
            prog.add(comp, f"add_c{k}", "add", operands=[p.id, p.id])
    prog.add(prog.entry, "fusion_deep", "fusion", operands=[1000], called=[comps[0].id])


def _r3_dims(dims):
    def change(prog):
        prog.add(prog.entry, "add_bad", "add", dims=dims, operands=[1000, 1000])

    return change


def _r3_gemm(prog):
    lhs = prog.add(prog.entry, "lhs", "parameter", dims=[64, 1 << 40])
    ins = prog.add(prog.entry, "gemm", "custom-call", dims=[64, 64], operands=[lhs.id, lhs.id])
    ins.custom_call_target = "__cublas$gemm"
    numbers = {"lhs_contracting_dimensions": [1] * 1_000_000}
    config = {"gemm_backend_config": {"dot_dimension_numbers": numbers}}
    ins.backend_config = json.dumps(config).encode()


def _r3_conv(prog):
    x = prog.add(prog.entry, "x", "parameter", dims=[1, 1, 50_000_000])
    k = prog.add(prog.entry, "k", "parameter", dims=[1, 1, 50_000_000])
    conv = prog.add(prog.entry, "conv", "convolution", dims=[1, 1, 50_000_000],
                    operands=[x.id, k.id])  # fmt: skip
    dn = conv.convolution_dimension_numbers
    dn.input_feature_dimension, dn.kernel_input_feature_dimension = 1, 1
    dn.output_feature_dimension = 1
    for dims in (dn.input_spatial_dimensions, dn.kernel_spatial_dimensions,
                 dn.output_spatial_dimensions):  # fmt: skip
        dims.append(2)
    conv.window.dimensions.add(size=50_000_000, stride=1, padding_low=25_000_000)


def _r3_op_name(prog):
    prog.entry.instructions[3].metadata.op_name = "jit(f)/" + "x" * (32 << 20)


def _r3_million(d):
    """10^6 instructions of 7 bytes each (an add; no name, id or shape) in a 7 MB capture."""
    from hlo_hostile_builder import capture

    prog = _r3_program()
    adds = prog.entry.instructions
    one = adds.add(opcode="add")
    data = one.SerializeToString()
    del adds[-1]
    raw = prog.proto.SerializeToString()
    # Appending the same instruction 10^6 times through the proto API takes long: the bytes
    # of the entry computation (HloModuleProto field 3) get 10^6 more instructions (its
    # field 2) instead, its length prefix rewritten.
    extra = (b"\x12" + _varint(len(data)) + data) * 1_000_000
    proto = type(prog.proto)()
    proto.ParseFromString(raw)
    entry = proto.hlo_module.computations[-1]
    entry_bytes = entry.SerializeToString() + extra
    del proto.hlo_module.computations[-1]
    module = proto.hlo_module.SerializeToString() + b"\x1a" + _varint(len(entry_bytes))
    module += entry_bytes
    data = b"\x0a" + _varint(len(module)) + module
    return capture(d / "h.xplane.pb", data, ran=[f"fusion.{k}" for k in range(40)])


def _r3_kernels(d):
    """10^6 kernels (25,000 steps of the 40 fusions), each launched from the host."""
    from hlo_hostile_builder import capture

    return capture(d / "h.xplane.pb", _r3_program(), steps=25_000)


def _r3_tpu(change):
    def setup(d):
        from tpu_builder import tpu_capture

        b = tpu_capture()
        change(b)
        return b.write(d / "t.xplane.pb")

    return setup


def _r3_nested_steps(b):
    for plane in b.space.planes:
        if plane.name == "/device:TPU:0":
            (steps,) = [ln for ln in plane.lines if ln.name == "Steps"]
            first = min(steps.events, key=lambda e: e.offset_ps)
            inner = steps.events.add()
            inner.CopyFrom(first)
            inner.offset_ps += 100_000
            inner.duration_ps = 50_000


def _r3_huge_flops(b):
    for plane in b.space.planes:
        if plane.name.startswith("/device:TPU:"):
            ids = {m.name: i for i, m in plane.stat_metadata.items()}
            for md in plane.event_metadata.values():
                for stat in md.stats:
                    if md.display_name == "dot_general.4" and stat.metadata_id == ids["flops"]:
                        stat.uint64_value = (1 << 64) - 1
                    if md.display_name == "convolution" and stat.metadata_id == ids["flops"]:
                        stat.ClearField("uint64_value")
                        stat.double_value = float("inf")


def _r3_tpu_action(target):
    import numpy as np

    run = tw.load(target, progress=False, max_memory_bytes=GOAL_PEAK_MB << 20)
    bad = []
    for name in ("steps", "hlo_stats", "roofline", "op_profile"):
        df = getattr(run, name)
        for col in df.select_dtypes("number").columns:
            v = df[col].to_numpy(float)
            if col != "program_id" and not (np.isfinite(v).all() and (v >= 0).all()):
                bad.append(f"{name}.{col}")
    ops = sum(len(g) for g in [run.hlo_stats])
    steps = len(run.steps)
    warned = [w for w in run.warnings if "TPU" in w]
    out = f"{steps} steps, {ops} HLO ops" + (f"; BAD {bad[:2]}" if bad else "")
    out += f"; warns: {warned[0][:60]}" if warned else "; no warning"
    return out, not bad and bool(warned) and steps == 3


def _r3_tool_data(d):
    """A tool-data file of 2 M repeated op rows (round two's remnant)."""
    recs = b"\x0a\x00" * 2_000_000
    (d / "h.tensorflow_stats.pb").write_bytes(b"\x22" + _varint(len(recs)) + recs)
    return d


def _r3_tool_action(target):
    run = tw.load(target, progress=False, max_memory_bytes=GOAL_PEAK_MB << 20)
    return f"loaded: {len(run.events)} event(s), {len(run.ops)} op rows", True


def _round_three_hlo_cases():
    """(item, case, setup(dir) -> target, action(target) -> (outcome, check held))."""
    xla = _r3_xla
    yield 1, "fusion calling its own computation", _r3_capture(_r3_self_call), xla
    yield 1, "a 1,500-deep chain of fusions", _r3_capture(_r3_chain), xla
    yield 1, "dimensions 2^40 x 3 (product past int64)", _r3_capture(_r3_dims([1 << 40] * 3)), xla
    yield 2, "a dimension of -1", _r3_capture(_r3_dims([8, -1])), xla
    yield 2, "a dimension of INT64_MIN", _r3_capture(_r3_dims([8, -(1 << 63)])), xla
    yield 2, "200,000 dimensions of 2^62", _r3_capture(_r3_dims([1 << 62] * 200_000)), xla
    yield 2, "GEMM config: 10^6 contracting dims", _r3_capture(_r3_gemm), xla
    yield 2, "convolution window of 5e7", _r3_capture(_r3_conv), xla
    yield 3, "a 32 MB op_name (+ report)", _r3_capture(_r3_op_name), (lambda t: xla(t, report=True))
    yield 3, "10^6 HLO instructions (7 MB capture)", _r3_million, xla
    yield 3, "10^6 kernels of an XLA program", _r3_kernels, xla
    yield 4, "TPU: a Steps event nested in another", _r3_tpu(_r3_nested_steps), _r3_tpu_action
    yield 4, "TPU: op flops 2^64-1 and inf", _r3_tpu(_r3_huge_flops), _r3_tpu_action
    yield 10, "tool data: 2 M repeated op rows", _r3_tool_data, _r3_tool_action


def round_three_hlo_table() -> None:
    """Issue 37's XLA program, TPU and tool-data cases: seconds, peak RSS above the baseline
    (setup excluded), met or not, outcome."""
    print(f"{'item':>4} {'case (issue 37: HLO, TPU, tool data)':44} {'seconds':>7} "
          f"{'peak MB':>7} {'goals':>5}  outcome")  # fmt: skip
    with tempfile.TemporaryDirectory() as tmp:
        for i, (item, case, setup, action) in enumerate(_round_three_hlo_cases()):
            d = pathlib.Path(tmp) / f"case{i}"
            d.mkdir()
            target = setup(d)
            import gc

            gc.collect()
            reset_peak()
            base = rss_kb("VmRSS")
            t0 = time.perf_counter()
            try:
                outcome, held = action(target)
            except Exception as exc:  # noqa: BLE001 - the bench reports it
                kind = "" if isinstance(exc, tw.ProfileError) else "BARE "
                outcome = f"{kind}{type(exc).__name__}: {getattr(exc, 'problem', exc)}"[:110]
                held = False
            secs = time.perf_counter() - t0
            peak = max(0, rss_kb("VmHWM") - base) / 1024
            ok = held and secs <= GOAL_SECS and peak <= GOAL_PEAK_MB
            print(f"{item:>4} {case[:44]:44} {secs:7.2f} {peak:7.0f} "
                  f"{'met' if ok else 'MISS':>5}  {outcome[:110]}", flush=True)  # fmt: skip
            shutil_rmtree(d)


if __name__ == "__main__":
    round_three_hlo_table()
