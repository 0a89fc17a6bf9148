"""The headline figures of TensorBoard's Profile tools, read two ways: from xprof's own tool
output (the JSON its converters return) and from our analyses of the same capture.

``tests/tensorflow/test_fidelity.py`` compares them on the goldens in ``tests/golden/`` and
``scripts/fidelity_report.py`` prints them for every capture xprof reads. Each figure has
the same key on both sides; a figure one side does not have is left out of that side's dict
(TensorBoard's GPU overview has no host idle %, for instance).
"""

from __future__ import annotations

import math

import pandas as pd

# xprof's per-step columns (overview and input-pipeline step tables) -> our STEPS columns.
STEP_COLUMNS = {
    "deviceComputeTimeMs": "device_compute_us",
    "deviceToDeviceTimeMs": "device_to_device_us",
    "deviceCollectivesTimeMs": "device_collectives_us",
    "hostComputeTimeMs": "host_compute_us",
    "kernelLaunchTimeMs": "kernel_launch_us",
    "infeedTimeMs": "input_us",
    "outfeedTimeMs": "output_us",
    "compileTimeMs": "compile_us",
    "otherTimeMs": "all_others_us",
}
# Overview properties xprof prints as "12.3%" -> our OverviewSummary fields.
PERCENTS = {
    "device_compute_16bit_percent": "device_compute_16bit_percent",
    "host_tf_op_percent": "host_op_occurrence_percent",
    "device_tf_op_percent": "device_op_occurrence_percent",
    "host_idle_time_percent": "host_idle_percent",
    "device_idle_time_percent": "device_idle_percent",
    "device_duty_cycle_percent": "device_duty_cycle_percent",
}
TPU_ONLY = ("host_idle_percent", "device_idle_percent", "device_duty_cycle_percent")
STATEMENTS = {
    "statement": "input_statement",
    "kernel_launch_statement": "kernel_launch_statement",
    "all_other_statement": "all_other_statement",
    "device_collectives_statement": "device_collectives_statement",
    "precision_statement": "precision_statement",
}
# xprof's framework_op_stats keeps this many rows per side (IDLE included).
XPROF_MAX_ROWS = 500
MEMORY = {
    "lifetime_peak": ("peakBytesUsageLifetime", "peak_bytes_lifetime_xprof"),
    "peak_in_use": ("peakBytesInUse", "peak_in_use_bytes"),
    "peak_heap": ("heapAllocatedBytes", "peak_heap_bytes"),
    "peak_stack": ("stackReservedBytes", "peak_stack_bytes"),
    "peak_free": ("freeMemoryBytes", "peak_free_bytes"),
    "capacity": ("memoryCapacity", "memory_capacity_bytes"),
}


def rows(table: dict) -> pd.DataFrame:
    """A Google DataTable ({cols, rows, p}) as a DataFrame."""
    cols = [c["id"] for c in table.get("cols", [])]
    return pd.DataFrame(
        [[c.get("v") if c else None for c in r["c"]] for r in table.get("rows", [])],
        columns=cols,
    )


def _percent(text) -> float | None:
    if text is None or text == "":
        return None
    try:
        return float(str(text).rstrip("%"))
    except ValueError:
        return math.nan


def xprof_figures(out: dict) -> dict:
    """Figures from xprof's tool outputs: ``out`` maps a tool name (overview_page,
    framework_op_stats, memory_profile, kernel_stats) to its parsed JSON."""
    f: dict = {}
    ov = out.get("overview_page")
    if ov:
        analysis, steps_t, _env, rec = ov[0], ov[1], ov[2], ov[3]
        steps = rows(steps_t)
        f["steps"] = len(steps)
        if len(steps) and "stepTimeMs" in steps:  # the generic (GPU, CPU) step table
            f["step_time_ms_avg"] = float(steps["stepTimeMs"].mean())
            for theirs, ours in STEP_COLUMNS.items():
                if theirs in steps:
                    f[f"{ours[:-3]}_ms_avg"] = float(steps[theirs].mean())
        for theirs, ours in STATEMENTS.items():
            f[ours] = (rec.get("p") or {}).get(theirs, "")
        tpu = (steps_t.get("p") or {}).get("hardware_type") == "TPU"
        for theirs, ours in PERCENTS.items():
            v = _percent((analysis.get("p") or {}).get(theirs))
            # xprof computes the idle shares and the duty cycle only for TPUs (its CPU page
            # prints the field's default, 0.0 %).
            if v is not None and (tpu or ours not in TPU_ONLY):
                f[ours] = v
        f["top_device_ops"] = list(rows(analysis).get("operation", pd.Series(dtype=str)))
    ops = out.get("framework_op_stats")
    if ops:
        t = rows(ops[0])
        for side in ("Host", "Device"):
            s = t[t["host_or_device"] == side]
            idle = s[s["type"] == "IDLE"]
            if len(idle):
                f[f"{side.lower()}_idle_us"] = float(idle["total_self_time"].sum())
            f[f"{side.lower()}_op_rows"] = int((s["type"] != "IDLE").sum())
    mem = out.get("memory_profile")
    if mem:
        # A map in xprof's output: its order changes from run to run; by name, always.
        for alloc, per in sorted(mem.get("memoryProfilePerAllocator", {}).items()):
            s = per["profileSummary"]
            for key, (theirs, _) in MEMORY.items():
                v = s.get(theirs, s["peakStats"].get(theirs, 0))
                f[f"memory {alloc} {key}"] = int(v)
    ks = out.get("kernel_stats")
    if ks:
        t = rows(ks if isinstance(ks, dict) else ks[0])
        f["kernel_rows"] = len(t)
        f["kernel_total_us"] = float(t["total_duration_us"].sum()) if len(t) else 0.0
        f["kernel_occurrences"] = int(t["occurrences"].sum()) if len(t) else 0
    hs = out.get("hlo_stats")
    if hs:
        t = rows(hs if isinstance(hs, dict) else hs[0])
        f["hlo_rows"] = len(t)
        f["hlo_total_us"] = float(t["total_time"].sum()) if len(t) else 0.0
        f["hlo_occurrences"] = int(t["occurrences"].sum()) if len(t) else 0
    return f


def our_figures(run) -> dict:
    """The same figures from our analyses of ``run``."""
    from tfprof_widgets.analysis.memory import memory_summary
    from tfprof_widgets.analysis.overview import overview_summary

    f: dict = {}
    o = overview_summary(run)
    f["steps"] = o.n_steps
    if o.n_steps:
        f["step_time_ms_avg"] = o.step_time_ms_avg
        for ours in STEP_COLUMNS.values():
            f[f"{ours[:-3]}_ms_avg"] = o.breakdown_ms_avg[ours]
    for ours in STATEMENTS.values():
        f[ours] = getattr(o, ours)
    for ours in PERCENTS.values():
        v = getattr(o, ours)
        if not math.isnan(v):
            f[ours] = v
    top = o.top_ops
    if len(top):  # xprof lists device ops only, and none of ours
        top = top[(top["host_or_device"] == "Device") & ~top["beyond_xprof"]]
    f["top_device_ops"] = list(top["operation"].astype(str)) if len(top) else []
    ops = run.ops
    for side in ("Host", "Device"):
        s = ops[ops["host_or_device"] == side]
        # XProf's device IDLE has no device ops of ours to leave out: IDLE + their self
        # time. Our host rows beyond XProf (XLA:CPU's thunks) take nothing from its IDLE.
        ours_too = s["beyond_xprof"] if side == "Device" else False
        f[f"{side.lower()}_idle_us"] = float(
            s.loc[(s["type"] == "IDLE") | ours_too, "total_self_time_us"].sum()
        )
        shown = xprof_rows_shown(s[~s["beyond_xprof"] | (s["type"] == "IDLE")])
        f[f"{side.lower()}_op_rows"] = int((shown["type"] != "IDLE").sum())
    for r in memory_summary(run).itertuples():
        for key, (_, ours) in MEMORY.items():
            f[f"memory {r.allocator} {key}"] = int(getattr(r, ours))
    k = run.kernels
    f["kernel_rows"] = len(k)
    f["kernel_total_us"] = float(k["total_time_us"].sum()) if len(k) else 0.0
    f["kernel_occurrences"] = int(k["occurrences"].sum()) if len(k) else 0
    h = run.hlo_stats  # XProf's rows only: none of the instructions we add
    h = h[~h["beyond_xprof"]]
    f["hlo_rows"] = len(h)
    f["hlo_total_us"] = float(h["total_time_us"].sum())
    f["hlo_occurrences"] = int(h["occurrences"].sum())
    return f


def xprof_rows_shown(ops: pd.DataFrame, max_rows: int = XPROF_MAX_ROWS) -> pd.DataFrame:
    """The rows of one side of ``run.ops`` that xprof's table keeps: its first ``max_rows``
    by self time, descending, ties by name (SortedOpMetricsDb; IDLE takes part)."""
    order = ops.assign(_name=ops["operation"].astype(str)).sort_values(
        ["total_self_time_us", "_name"], ascending=[False, True], kind="stable"
    )
    return order.head(max_rows).drop(columns="_name")


def differences(ours: dict, theirs: dict, rtol: float = 0.005) -> list[str]:
    """Each figure xprof has that ours lacks or differs in: numbers beyond ``rtol`` (and
    1e-3 absolute, for xprof's rounding of times to ns), texts unequal."""
    out = []
    for key, want in theirs.items():
        if key not in ours:
            out.append(f"{key}: missing (xprof {want!r})")
            continue
        got = ours[key]
        if isinstance(want, (int, float)) and not isinstance(want, bool):
            if not math.isclose(float(got), float(want), rel_tol=rtol, abs_tol=1e-3) and not (
                key in PERCENTS.values() and abs(float(got) - float(want)) <= 0.05
            ):
                out.append(f"{key}: ours {got!r}, xprof {want!r}")
        elif got != want:
            out.append(f"{key}: ours {got!r}, xprof {want!r}")
    return out


def tool_of(key: str) -> str:
    """The TensorBoard tool a figure comes from."""
    if key.startswith("memory "):
        return "memory_profile"
    if key.startswith("kernel_"):
        return "kernel_stats"
    if key.startswith("hlo_"):
        return "hlo_stats"
    if key.endswith(("_idle_us", "_op_rows")):
        return "framework_op_stats"
    return "overview_page"


# -- figures read from the columns that keep XProf's, beside the ones a user reads ----------


def _close(a, b, rel: float = 5e-3) -> bool:
    return abs(float(a) - float(b)) <= rel * max(abs(float(b)), 1e-9)


def paired_figures(run, out: dict) -> tuple[dict, dict]:
    """(ours, xprof's) for the figures that need both sides at once: XProf's rows found among
    ours (``*_matching``: ours counts the rows equal to xprof's, xprof's how many it has),
    compared on the columns that keep XProf's figure, and each figure we show differently
    as ``... shown`` (ours: what a user reads; xprof's: its own). ``out``: xprof's tool
    outputs by name (the XLA tools only on XLA captures)."""
    ours: dict = {}
    theirs: dict = {}
    for part in (_xla_op_rows, _roofline, _op_profile, _input_ops, _lifetime_shown):
        o, t = part(run, out)
        ours.update(o)
        theirs.update(t)
    return ours, theirs


def _xla_op_rows(run, out: dict) -> tuple[dict, dict]:
    """XProf's device op rows of an XLA capture we have with its name, type, occurrences
    and self time within 0.5 % (IDLE left out); where our ops include XLA:CPU's thunks
    (beyond XProf) the host op rows a user reads beside XProf's."""
    import numpy as np

    if not len(run.hlo_instructions) or "framework_op_stats" not in out:
        return {}, {}
    gold = rows(out["framework_op_stats"][0])
    ops = run.ops
    o: dict = {}
    t: dict = {}
    host = ops[(ops["host_or_device"] == "Host") & (ops["type"] != "IDLE")]
    if host["beyond_xprof"].any():
        side = gold[(gold["host_or_device"] == "Host") & (gold["type"] != "IDLE")]
        o["host_op_rows shown"], t["host_op_rows shown"] = len(host), len(side)
    gold = gold[(gold["host_or_device"] == "Device") & (gold["type"] != "IDLE")]
    if not len(gold):
        return o, t
    dev = ops[(ops["host_or_device"] == "Device") & (ops["type"] != "IDLE")]
    m = gold.merge(
        dev.assign(operation=dev["operation"].astype(str)), on="operation", suffixes=("_x", "")
    )
    same = (
        (m["type_x"].astype(str) == m["type"].astype(str))
        & (m["occurrences_x"].astype(np.int64) == m["occurrences"])
        & np.isclose(m["total_self_time_us"], m["total_self_time"], rtol=5e-3, atol=1e-3)
    )
    o["xla_device_ops_matching"], t["xla_device_ops_matching"] = int(same.sum()), len(gold)
    return o, t


def _roofline(run, out: dict) -> tuple[dict, dict]:
    """The first device's peaks and HBM ridge point; XProf's per-op rows with its bound by,
    model FLOP rate, HBM bandwidth and (``xprof_roofline_efficiency``) efficiency within
    0.5 %, GEMM custom calls XProf gives no FLOPs apart; the largest efficiency shown."""
    if "roofline_model" not in out:
        return {}, {}
    p = out["roofline_model"][0].get("p", {})
    t = {
        "peak_gflops": float(p.get("peak_flop_rate", 0)),
        "peak_hbm_gibps": float(p.get("peak_hbm_bw", 0)),
        "hbm_ridge_point": float(p.get("hbm_ridge_point", 0)),
    }
    peaks = run.roofline_peaks
    # no device plane with peaks (a CPU capture): 0, as xprof shows
    o = {k: float(peaks[k].iloc[0]) if len(peaks) else 0.0 for k in t}
    table = rows(out["roofline_model"][0])
    if not len(table):
        return o, t
    table = table[
        (table["step"] == "Total")
        & (table["rank"] > 0)
        & table["include_infeed_outfeed"].astype(bool)
    ]
    rl = run.roofline
    mine = {
        (str(a), str(b)): r for a, b, r in zip(rl["program_id"], rl["hlo_op_name"], rl.itertuples())
    }
    same = gemm = 0
    for r in table.itertuples():
        m = mine.get((str(r.hlo_module_id), str(r.operation)))
        if m is None:
            continue
        if _unmodelled_gemm(r.bound_by, float(r.model_flop_rate), m):
            gemm += 1
            continue
        same += str(m.bound_by) == r.bound_by and all(
            _close(getattr(m, a), getattr(r, b))
            for a, b in (
                ("model_gflops_per_s", "model_flop_rate"),
                ("hbm_bw_gibps", "hbm_bw"),
                ("xprof_roofline_efficiency", "roofline_efficiency"),
            )
        )
    o["roofline_ops_matching"], t["roofline_ops_matching"] = same, len(table) - gemm
    if gemm:
        o["roofline_ops_gemm_custom_calls"], t["roofline_ops_gemm_custom_calls"] = gemm, 0
    key = "roofline_efficiency max shown"
    o[key] = float(rl["roofline_efficiency"].max())
    t[key] = float(table["roofline_efficiency"].astype(float).max())
    return o, t


def _unmodelled_gemm(bound_by: str, xprof_flop_rate: float, ours) -> bool:
    """A GEMM custom call XProf's cost model gives no FLOPs ('Unknown') and ours models."""
    return (
        bound_by == "Unknown"
        and xprof_flop_rate == 0
        and str(ours.category) == "custom-call"
        and float(ours.flops) > 0
    )


def _walk(node: dict, path: str, out: dict) -> None:
    for child in node.get("children", []):
        here = f"{path}/{child['name']}" if path else child["name"]
        out[here] = child.get("metrics", {})
        _walk(child, here, out)


def _op_profile(run, out: dict) -> tuple[dict, dict]:
    """XProf's op profile nodes (IDLE excluded) with its time within 0.5 % and
    (``xprof_flop_utilization``) FLOP utilisation within its 4 decimals. An op inside
    XProf's '<name> and its duplicate(s)' group is matched at its category, as we list it;
    the groups are counted apart, and so are the fused instructions XProf lists under a
    fusion with no time and the nodes whose only difference is FLOPs XProf does not model
    (a GEMM custom call); the largest op FLOP utilisation shown."""
    if "op_profile" not in out:
        return {}, {}
    nodes: dict = {}
    _walk(out["op_profile"].get("byProgramExcludeIdle", {}), "", nodes)
    tree = run.op_profile
    got = dict(zip(tree["path"], zip(tree["time_us"], tree["xprof_flop_utilization"])))
    groups = [p for p in nodes if p.endswith(" and its duplicate(s)")]
    ok = unmodelled = compared = fused = 0
    for path, m in nodes.items():
        if path in groups:
            continue
        for g in groups:
            path = path.replace(g + "/", g.rsplit("/", 1)[0] + "/")
        if path.count("/") >= 3 and not m.get("rawTime"):
            fused += 1  # a fusion's fused instruction, which XProf lists with no time
            continue
        compared += 1
        mine = got.get(path)
        if mine is None or not _close(mine[0] * 1e6, m.get("rawTime", 0)):
            continue
        if abs(mine[1] - m.get("flops", 0)) <= 6e-5:
            ok += 1
        elif not m.get("flops") and m.get("rawTime"):
            unmodelled += 1
    o = {"op_profile_nodes_matching": ok}
    t = {"op_profile_nodes_matching": compared - unmodelled}
    if unmodelled:
        o["op_profile_nodes_gemm_custom_calls"] = unmodelled
        t["op_profile_nodes_gemm_custom_calls"] = 0
    o["op_profile_duplicate_groups"], t["op_profile_duplicate_groups"] = 0, len(groups)
    if fused:
        o["op_profile_fused_instruction_nodes"], t["op_profile_fused_instruction_nodes"] = 0, fused
    leaves = tree[tree["level"] == "op"]
    if len(leaves):
        key = "op_profile flop_utilization max shown"
        o[key] = float(leaves["flop_utilization"].max())
        t[key] = max(
            (float(m.get("flops", 0)) for p, m in nodes.items() if p.count("/") >= 2),
            default=0.0,
        )
    return o, t


def _input_ops(run, out: dict) -> tuple[dict, dict]:
    """XProf's input ops (its input pipeline's op table) we list with its count and total
    % (``time_percent_xprof``) within 0.05 point; the largest share a user reads (of the
    input time, each instant once) beside XProf's largest."""
    ip = out.get("input_pipeline_analyzer")
    if not ip or len(ip) < 3 or "cols" not in ip[2]:
        return {}, {}
    gold = rows(ip[2])
    if not len(gold):
        return {}, {}
    mine = run.input_pipeline.input_ops
    by_name = {str(n): r for n, r in zip(mine["operation"], mine.itertuples())}
    same = 0
    for r in gold.itertuples():
        m = by_name.get(str(r.opName))
        same += (
            m is not None
            and int(m.occurrences) == int(r.count)
            and abs(float(m.time_percent_xprof) - 100 * float(r.timeInPercent)) <= 0.05
        )
    o, t = {"input_ops_matching": same}, {"input_ops_matching": len(gold)}
    shown = mine["time_percent"].dropna()
    if len(shown):
        key = "input_op time % max shown"
        o[key], t[key] = float(shown.max()), 100 * float(gold["timeInPercent"].max())
    return o, t


def _lifetime_shown(run, out: dict) -> tuple[dict, dict]:
    """Per allocator: the lifetime peak a user reads beside XProf's (its own column is the
    ``memory <allocator> lifetime_peak`` figure)."""
    from tfprof_widgets.analysis.memory import memory_summary

    mem = out.get("memory_profile")
    if not mem:
        return {}, {}
    per = mem.get("memoryProfilePerAllocator", {})
    o: dict = {}
    t: dict = {}
    for r in memory_summary(run).itertuples():
        s = per.get(str(r.allocator))
        if s is None or int(r.peak_bytes_lifetime) == int(r.peak_bytes_lifetime_xprof):
            continue
        key = f"memory {r.allocator} lifetime_peak shown"
        o[key] = int(r.peak_bytes_lifetime)
        t[key] = int(s["profileSummary"].get("peakBytesUsageLifetime", 0))
    return o, t
