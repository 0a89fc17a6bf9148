"""Make the goldens ``tests/analysis/test_suggestions.py`` compares ``suggestions(run)`` with: xprof
2.24's ``smart_suggestion`` tool on the bundled captures.

    python scripts/make_suggestion_goldens.py

Each capture is converted in a private copy in a temporary directory, ``use_saved_result``
off. Written: ``tests/golden/suggestions/<name>.json``: the capture's path, the rules xprof's
pip build runs (``RegisterAllRulesFor3P`` in ``xprof/convert/smart_suggestion/all_rules.h``:
BarrierCoresRule alone) and the suggestions it gave (rule name and text). Needs the dev extra
(xprof).
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
RULES_RUN = ["BarrierCoresRule"]


def xprof_suggestions(xplane: pathlib.Path) -> list[dict]:
    from xprof.convert import raw_to_tool_data as r

    with tempfile.TemporaryDirectory(prefix="tfprof_suggest_") as tmp:
        copy = pathlib.Path(tmp) / xplane.name
        shutil.copy2(xplane, copy)
        data, _ = r.xspace_to_tool_data(
            [str(copy)], "smart_suggestion", {"use_saved_result": False}
        )
    out = json.loads(data)["suggestions"]
    return [{"rule": s.get("ruleName", ""), "text": s.get("suggestionText", "")} for s in out]


def main() -> int:
    out = ROOT / "tests" / "golden" / "suggestions"
    out.mkdir(parents=True, exist_ok=True)
    for name, path in CAPTURES.items():
        golden = {
            "capture": path.relative_to(ROOT).as_posix(),
            "rules_run": RULES_RUN,
            "suggestions": xprof_suggestions(path),
        }
        (out / f"{name}.json").write_text(json.dumps(golden, indent=1, sort_keys=True) + "\n")
        print(f"{name}: {len(golden['suggestions'])} suggestions")
    return 0


if __name__ == "__main__":
    sys.exit(main())
