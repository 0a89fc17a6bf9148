"""How close our numbers are to TensorBoard's on every capture xprof reads.

    python scripts/fidelity_report.py [--shared DIR] [--markdown]

For each ``.xplane.pb`` in ``sample_profiles/`` and in the team's shared captures (default
``../shared/captures``), runs xprof's converters (overview_page, framework_op_stats,
memory_profile, kernel_stats, hlo_stats; each on a private copy of the file, ``use_saved_result``
off, so nothing is written beside the capture) and our analyses of the same file, and
prints one row per (capture, tool, figure): ours, xprof's, and the relative difference
(text figures: "same" or "differs"). The figures and their keys are those of
``tests/fidelity_figures.py``, which the tests compare on the goldens; on XLA captures (those
carrying HLO programs) also ``xla_device_ops_matching``: XProf's device op rows we have with
its name, type, occurrences and self time. Needs the dev extra
(xprof).
"""

from __future__ import annotations

import argparse
import math
import pathlib
import sys
import warnings

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests"), str(ROOT / "scripts")]

from fidelity_figures import PERCENTS, our_figures, tool_of, xprof_figures  # noqa: E402

TOOLS = ("overview_page", "framework_op_stats", "memory_profile", "kernel_stats", "hlo_stats")


def captures(shared: pathlib.Path) -> list[pathlib.Path]:
    found = sorted((ROOT / "sample_profiles").rglob("*.xplane.pb"))
    if shared.is_dir():
        found += sorted(shared.rglob("*.xplane.pb"))
    return found


def _show(v) -> str:
    if isinstance(v, float):
        return f"{v:,.3f}"
    if isinstance(v, list):
        return f"{len(v)} ops"
    text = str(v)
    return text if len(text) <= 40 else text[:37] + "..."


def _difference(key: str, ours, theirs) -> str:
    if isinstance(theirs, (int, float)) and not isinstance(theirs, bool):
        if ours is None:
            return "missing"
        a, b = float(ours), float(theirs)
        if a == b or (key in PERCENTS.values() and abs(a - b) <= 0.05):
            return "0"  # percents: xprof prints one digit
        return f"{(a - b) / abs(b):+.2%}" if b else "xprof 0"
    if ours is None:
        return "missing"
    return "same" if ours == theirs else "differs"


def xla_device_ops_matching(run, framework_op_stats) -> tuple[int, int]:
    """(how many of XProf's device op rows we have with the same name, type, occurrences and
    self time within 0.5 %, how many XProf has), IDLE left out: on an XLA capture, whether
    each framework op its HLO names has XProf's numbers."""
    import numpy as np
    from fidelity_figures import rows

    gold = rows(framework_op_stats[0])
    gold = gold[(gold["host_or_device"] == "Device") & (gold["type"] != "IDLE")]
    ops = run.ops
    dev = ops[(ops["host_or_device"] == "Device") & (ops["type"] != "IDLE")]
    m = gold.merge(
        dev.assign(operation=dev["operation"].astype(str)), on="operation", suffixes=("_x", "")
    )
    same = (
        (m["type_x"].astype(str) == m["type"].astype(str))
        & (m["occurrences_x"].astype(np.int64) == m["occurrences"])
        & np.isclose(m["total_self_time_us"], m["total_self_time"], rtol=5e-3, atol=1e-3)
    )
    return int(same.sum()), len(gold)


def report(paths: list[pathlib.Path]) -> list[tuple]:
    from make_golden import xprof_tool

    import tfprof_widgets as tw

    rows = []
    for path in paths:
        name = path.relative_to(path.parents[1]).as_posix()
        out = {t: xprof_tool(path, t) for t in TOOLS}
        theirs = xprof_figures(out)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            run = tw.load(path)
            ours = our_figures(run)
        if len(run.hlo_instructions):  # XLA: XProf's device op rows one by one
            got, want = xla_device_ops_matching(run, out["framework_op_stats"])
            ours["xla_device_ops_matching"], theirs["xla_device_ops_matching"] = got, want
        for key, want in theirs.items():
            got = ours.get(key)
            tool = "framework_op_stats" if key == "xla_device_ops_matching" else tool_of(key)
            rows.append((name, tool, key, _show(got), _show(want), _difference(key, got, want)))
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shared", default=str(ROOT.parent / "shared" / "captures"))
    args = ap.parse_args()
    rows = report(captures(pathlib.Path(args.shared)))
    head = ("capture", "tool", "figure", "ours", "xprof", "difference")
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for r in rows:
        print("| " + " | ".join(r) + " |")
    exact = sum(r[5] in ("0", "same") for r in rows)
    close = sum(
        r[5].endswith("%") and not math.isnan(float(r[5][:-1])) and abs(float(r[5][:-1])) <= 0.5
        for r in rows
    )
    apart = len(rows) - exact - close
    print(f"\n{len(rows)} figures: {exact} equal, {close} within 0.5 %, {apart} apart")


if __name__ == "__main__":
    main()
