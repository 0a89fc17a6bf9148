"""Make the goldens ``tests/analysis/test_suggestions.py`` compares ``suggestions(run)`` with:
xprof 2.24's smart suggestions on the bundled captures, and the signals its rules read.

    python scripts/make_suggestion_goldens.py

xprof 2.24 serves its smart suggestions as the ``smart_suggestion`` tool
(``raw_to_tool_data.xspace_to_tool_data(..., "smart_suggestion", ...)``); its pip build runs
one rule, BarrierCoresRule (``RegisterAllRulesFor3P`` in
``xprof/convert/smart_suggestion/all_rules.h``; the other rule names are not in its
library). So each golden holds, from a private copy of the capture converted with
``use_saved_result`` off:

* ``suggestions``: what the tool gave (rule name and text);
* ``signals``: the figures XProf's other rules read (``signal_provider.h``), taken from its
  own tools: MXU and HBM utilisation (``overview_page``: ``mxu_utilization_percent`` and
  ``memory_bw_utilization_relative_to_hw_limit``, which it writes for a TPU alone: 0, the
  proto's default, elsewhere); the input share of step time (the step table of
  ``input_pipeline_analyzer``: input time over step time) and its host input split; the
  collective and data-shuffle shares of the steps' time on every core (``hlo_stats``'s
  self time by HLO category over the step table's time × the cores; XProf averages the
  share per step);
* ``fired_full_build``: the rules of ``RegisterAllRules`` (XProf's own build) that fire on
  those signals, by the conditions of their headers transcribed below.

The captures: the bundled ones, and tests/support/tpu_builder.py's synthetic TPU capture
(``synthetic_tpu``: no TPU capture is bundled; the only one where XProf's TPU signals exist).
Written: ``tests/golden/suggestions/<name>.json``. Needs the dev extra (xprof).
"""

from __future__ import annotations

import json
import pathlib
import shutil
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data"
CAPTURES = {
    "bert_8gpu": DATA / "bert_8gpu_multi_worker.xplane.pb",
    "jax_cnn_nographs": DATA / "xplane_h100_jax" / "jax_cnn_nographs.xplane.pb",
    "jax_cnn_graphs": DATA / "xplane_h100_jax" / "jax_cnn_graphs.xplane.pb",
    **{
        f"jax08_{k}": DATA / "xplane_amd_jax" / f"jax08_{k}.xplane.pb"
        for k in ("attention", "conv", "elementwise", "gemm")
    },
    "jax_cpu_10steps": DATA / "jax_cpu" / "jax_cnn_cpu_10steps.xplane.pb",
    "tf_xla_cpu": DATA / "tf_xla_cpu" / "keras_fit_jit.xplane.pb",
    "input_bound": next((ROOT / "sample_profiles" / "input_bound").rglob("*.xplane.pb")),
}
# Built by tests/support/tpu_builder.py (no TPU capture is bundled): two TensorCores.
SYNTHETIC_TPU = "synthetic_tpu"
RULES_RUN = ["BarrierCoresRule"]
TOOLS = ("smart_suggestion", "overview_page", "input_pipeline_analyzer", "hlo_stats")

# signal_provider.h: IsCollective / IsDataShuffle; constants.h: the thresholds.
COLLECTIVE = {
    "all-reduce", "all-reduce fusion", "all-reduce-scatter fusion", "all-to-all",
    "all-gather", "all-gather-start", "all-gather-done", "all-gather fusion",
    "reduce-scatter", "collective-permute", "collective-permute-done",
    "collective-permute-start", "megacore fusion", "host recv", "host recv-done",
    "host send", "host send-done",
}  # fmt: skip
DATA_SHUFFLE = {
    "broadcast", "concatenate", "data formatting", "dynamic-slice", "dynamic-update-slice",
    "gather", "pad", "reverse", "scatter", "select", "select-and-scatter", "shuffle", "slice",
    "sort",
}  # fmt: skip


def tool_outputs(xplane: pathlib.Path) -> dict:
    """Each tool's parsed output for a private copy of the capture (None where it fails)."""
    from xprof.convert import raw_to_tool_data as r

    out = {}
    with tempfile.TemporaryDirectory(prefix="tfprof_suggest_") as tmp:
        copy = pathlib.Path(tmp) / xplane.name
        shutil.copy2(xplane, copy)
        for tool in TOOLS:
            try:
                data, _ = r.xspace_to_tool_data([str(copy)], tool, {"use_saved_result": False})
            except RuntimeError:
                out[tool] = None
                continue
            text = data.decode() if isinstance(data, bytes) else data
            out[tool] = json.loads(text) if text else None
    return out


def _props(tables) -> dict:
    """Every custom property of a list of DataTables, merged."""
    merged: dict = {}
    for t in tables if isinstance(tables, list) else [tables]:
        merged.update((t or {}).get("p") or {})
    return merged


def _pct(text) -> float:
    try:
        return float(str(text).rstrip("%"))
    except ValueError:
        return 0.0


def step_figures(table: dict) -> dict:
    """Totals over the input pipeline's step table, ms, from its exact cells (its properties
    are rounded to 0.1 ms): step time and input time; on a TPU (whose table has no step
    time column) the step is TensorCore compute + infeed + outfeed + idle + host transfer,
    and its TensorCore idle and SparseCore (``scv0``) time come too (None elsewhere)."""
    cols = [c.get("id") for c in table["cols"]]

    def total(*names: str) -> float:
        idx = [cols.index(n) for n in names if n in cols]
        return sum(float(r["c"][i]["v"]) for r in table["rows"] for i in idx)

    if "tcIdleTimeMs" not in cols:
        return {"step_ms": total("stepTimeMs"), "input_ms": total("infeedTimeMs"),
                "tc_idle_ms": None, "sc_ms": None}  # fmt: skip
    parts = ("tcComputeTimeMs", "tcInfeedTimeMs", "tcOutfeedTimeMs", "tcIdleTimeMs",
             "hostTransferTimeMs")  # fmt: skip
    return {
        "step_ms": total(*parts),
        "input_ms": total("tcInfeedTimeMs"),
        "tc_idle_ms": total("tcIdleTimeMs"),
        "sc_ms": total("scv0ComputeTimeMs", "scv0InfeedTimeMs"),
    }


def signals(tools: dict) -> dict:
    """The figures XProf's rules read, from its tools (module docstring)."""
    ov, ip = _props(tools["overview_page"]), tools["input_pipeline_analyzer"] or []
    ipp = _props(ip)
    steps = step_figures(ip[1] if len(ip) > 1 else {"cols": [], "rows": []})
    step_total_ms = steps["step_ms"]
    enqueue = _pct(ipp.get("enqueue_us", 0))
    other = sum(
        _pct(ipp.get(k, 0))
        for k in ("demanded_file_read_us", "advanced_file_read_us", "preprocessing_us",
                  "unclassified_nonequeue_us")
    )  # fmt: skip
    total = enqueue + other
    cores = max(1, int(_pct(ov.get("device_core_count", 1)))) // max(
        1, int(_pct(ov.get("host_count", 1)))
    )
    device_us = step_total_ms * 1e3 * max(1, cores)
    hlo = tools["hlo_stats"] or {"cols": [], "rows": []}
    ids = [c["id"] for c in hlo["cols"]]
    by_cat: dict[str, float] = {}
    for r in hlo["rows"]:
        v = dict(zip(ids, (c.get("v") for c in r["c"])))
        by_cat[v["category"]] = by_cat.get(v["category"], 0.0) + float(v["total_self_time"])

    def tpu_share(ms: float | None) -> float | None:
        if ms is None:
            return None
        return 100 * ms / step_total_ms if step_total_ms else 0.0

    def share(cats: set) -> float:
        t = sum(us for c, us in by_cat.items() if c in cats)
        return 100 * t / device_us if device_us > 0 else 0.0

    return {
        "hardware_type": ov.get("hardware_type", ""),
        "mxu_utilization_percent": _pct(ov.get("mxu_utilization_percent", 0)),
        "hbm_utilization_percent": _pct(ov.get("memory_bw_utilization_relative_to_hw_limit", 0)),
        "input_percent": 100 * steps["input_ms"] / step_total_ms if step_total_ms else 0.0,
        "enqueue_percent_of_input": 100 * enqueue / total if total else 0.0,
        "non_enqueue_percent_of_input": 100 * other / total if total else 0.0,
        "collective_percent": share(COLLECTIVE),
        "data_shuffle_percent": share(DATA_SHUFFLE),
        # A TPU's step breakdown (TpuStepTimeBreakdown); None elsewhere (XProf: not ok).
        "tensor_core_idle_percent": tpu_share(steps["tc_idle_ms"]),
        "sparse_core_percent": tpu_share(steps["sc_ms"]),
    }


def fired(s: dict) -> list[str]:
    """The rules of XProf's RegisterAllRules that fire on the signals (their headers'
    MeetsConditions); BarrierCores (and DebugPrint) are the tool's own answer."""
    mxu, hbm, inp = s["mxu_utilization_percent"], s["hbm_utilization_percent"], s["input_percent"]
    enq, other = s["enqueue_percent_of_input"], s["non_enqueue_percent_of_input"]
    latency_bound = mxu < 50 and hbm < 50  # IsLatencyBound
    idle, sc = s["tensor_core_idle_percent"], s["sparse_core_percent"]
    out = []
    if latency_bound and idle is not None and idle > 10:
        out.append("TensorCoreIdleBoundRule")
    if latency_bound and sc is not None and sc > 10:
        out.append("SparseCoreBoundRule")
    if mxu > 70 and hbm < 50:
        out.append("ComputeBoundRule")
    if hbm > 70 and mxu < 50:
        out.append("MemoryBoundRule")
    if inp > 10 and other >= 50:
        out.append("HostProcessingBoundRule")
    if inp > 10 and enq >= 30:
        out.append("DataTransferBoundRule")
    if inp > 10 and abs(enq) < 1e-6 and abs(other) < 1e-6:
        out.append("InputBoundRule")
    if s["collective_percent"] >= 30:
        out.append("CollectiveBoundRule")
    if s["data_shuffle_percent"] >= 30:
        out.append("DataShuffleBoundRule")
    return sorted(out)


def synthetic_tpu(tmp: pathlib.Path) -> pathlib.Path:
    """tests/support/tpu_builder.py's TPU capture, written in ``tmp``."""
    sys.path.insert(0, str(ROOT / "tests" / "support"))
    from tpu_builder import tpu_capture

    return tpu_capture().write(tmp / "tpu.xplane.pb")


def golden(path: pathlib.Path, capture: str) -> dict:
    tools = tool_outputs(path)
    found = (tools["smart_suggestion"] or {}).get("suggestions", [])
    sig = signals(tools)
    return {
        "capture": capture,
        "rules_run": RULES_RUN,
        "suggestions": [
            {"rule": s.get("ruleName", ""), "text": s.get("suggestionText", "")} for s in found
        ],
        "signals": sig,
        "fired_full_build": fired(sig),
    }


def main() -> int:
    out = ROOT / "tests" / "golden" / "suggestions"
    out.mkdir(parents=True, exist_ok=True)
    goldens = {n: golden(p, p.relative_to(ROOT).as_posix()) for n, p in CAPTURES.items()}
    with tempfile.TemporaryDirectory(prefix="tfprof_suggest_tpu_") as tmp:
        goldens[SYNTHETIC_TPU] = golden(synthetic_tpu(pathlib.Path(tmp)), SYNTHETIC_TPU)
    for name, g in goldens.items():
        (out / f"{name}.json").write_text(json.dumps(g, indent=1, sort_keys=True) + "\n")
        print(f"{name}: {len(g['suggestions'])} suggestions; full build: {g['fired_full_build']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
