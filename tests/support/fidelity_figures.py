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
        # XProf's IDLE has no device ops of ours to leave out: IDLE + their self time.
        f[f"{side.lower()}_idle_us"] = float(
            s.loc[(s["type"] == "IDLE") | s["beyond_xprof"], "total_self_time_us"].sum()
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
