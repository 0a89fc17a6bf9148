"""How close our numbers are to TensorBoard's on every capture xprof reads.

    python scripts/fidelity_report.py [--shared DIR] [--markdown] [CAPTURE ...]

For each ``.xplane.pb`` in ``sample_profiles/`` and in the team's shared captures (default
``../shared/captures``), or each CAPTURE named, runs xprof's converters (overview_page,
framework_op_stats, memory_profile, kernel_stats, hlo_stats; each on a private copy of the
file, ``use_saved_result`` off, so nothing is written beside the capture) and our analyses of
the same file, and
prints one row per (capture, tool, figure): ours, xprof's, and the relative difference
(text figures: "same" or "differs"). The figures and their keys are those of
``tests/support/fidelity_figures.py``, which the tests compare on the goldens; on XLA captures
(those carrying HLO programs) also ``xla_device_ops_matching``: XProf's device op rows we have with
its name, type, occurrences and self time, and (roofline_model, op_profile) the device's
peaks and ridge point, the roofline's op rows and the op profile's nodes that equal xprof's
(:func:`xla_roofline_figures`). Needs the dev extra (xprof).

The table prints as aligned plain text, or with ``--markdown`` as a Markdown table (for an
issue or a pull request). Its rows come in the same order on every run: xprof's allocators
(a map in its output, in no fixed order) are listed by name.
"""

from __future__ import annotations

import argparse
import math
import pathlib
import sys
import warnings

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests" / "support"), str(ROOT / "scripts")]

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


XLA_TOOLS = ("roofline_model", "op_profile")


def _close(a, b, rel: float = 5e-3) -> bool:
    return abs(float(a) - float(b)) <= rel * max(abs(float(b)), 1e-9)


def xla_roofline_figures(run, roofline_model, op_profile) -> tuple[dict, dict]:
    """(ours, xprof's) on an XLA capture: the first device's peaks and HBM ridge point
    (roofline_model), the roofline's per-op rows with xprof's bound by, model FLOP rate,
    HBM bandwidth and roofline efficiency within 0.5 % (roofline_ops_matching), and the op
    profile's nodes (IDLE excluded) with xprof's time within 0.5 % and FLOP utilisation
    within its 4 decimals (op_profile_nodes_matching)."""
    from fidelity_figures import rows

    p = roofline_model[0].get("p", {})
    theirs = {
        "peak_gflops": float(p.get("peak_flop_rate", 0)),
        "peak_hbm_gibps": float(p.get("peak_hbm_bw", 0)),
        "hbm_ridge_point": float(p.get("hbm_ridge_point", 0)),
    }
    peaks = run.roofline_peaks
    # no device plane with peaks (a CPU capture): 0, as xprof shows
    ours = {k: float(peaks[k].iloc[0]) if len(peaks) else 0.0 for k in theirs}
    t = rows(roofline_model[0])
    t = t[(t["step"] == "Total") & (t["rank"] > 0) & t["include_infeed_outfeed"].astype(bool)]
    rl = run.roofline
    mine = {
        (str(a), str(b)): r for a, b, r in zip(rl["program_id"], rl["hlo_op_name"], rl.itertuples())
    }
    same = 0
    for r in t.itertuples():
        o = mine.get((str(r.hlo_module_id), str(r.operation)))
        same += (
            o is not None
            and str(o.bound_by) == r.bound_by
            and all(
                _close(getattr(o, a), getattr(r, b))
                for a, b in (
                    ("model_gflops_per_s", "model_flop_rate"),
                    ("hbm_bw_gibps", "hbm_bw"),
                    ("roofline_efficiency", "roofline_efficiency"),
                )
            )
        )
    ours["roofline_ops_matching"], theirs["roofline_ops_matching"] = same, len(t)
    nodes: dict = {}
    _walk(op_profile.get("byProgramExcludeIdle", {}), "", nodes)
    tree = run.op_profile
    got = dict(zip(tree["path"], zip(tree["time_us"], tree["flop_utilization"])))
    ok = sum(
        path in got
        and _close(got[path][0] * 1e6, m.get("rawTime", 0))
        and abs(got[path][1] - m.get("flops", 0)) <= 6e-5
        for path, m in nodes.items()
    )
    ours["op_profile_nodes_matching"], theirs["op_profile_nodes_matching"] = ok, len(nodes)
    return ours, theirs


def _walk(node: dict, path: str, out: dict) -> None:
    for child in node.get("children", []):
        here = f"{path}/{child['name']}" if path else child["name"]
        out[here] = child.get("metrics", {})
        _walk(child, here, out)


def report(paths: list[pathlib.Path]) -> list[tuple]:
    from make_golden import xprof_tool

    import tfprof_widgets as tw

    rows = []
    for path in paths:
        path = path.resolve()
        name = path.relative_to(path.parents[1]).as_posix()
        tools = {"xla_device_ops_matching": "framework_op_stats"}
        out = {t: xprof_tool(path, t) for t in TOOLS}
        theirs = xprof_figures(out)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            run = tw.load(path)
            ours = our_figures(run)
        if len(run.hlo_instructions):  # XLA: XProf's device op rows one by one
            got, want = xla_device_ops_matching(run, out["framework_op_stats"])
            ours["xla_device_ops_matching"], theirs["xla_device_ops_matching"] = got, want
            ours_rl, theirs_rl = xla_roofline_figures(
                run, *(xprof_tool(path, t) for t in XLA_TOOLS)
            )
            ours.update(ours_rl)
            theirs.update(theirs_rl)
            tools.update(dict.fromkeys(theirs_rl, "roofline_model"))
            tools["op_profile_nodes_matching"] = "op_profile"
        for key, want in theirs.items():
            got = ours.get(key)
            tool = tools.get(key) or tool_of(key)
            rows.append((name, tool, key, _show(got), _show(want), _difference(key, got, want)))
    return rows


HEAD = ("capture", "tool", "figure", "ours", "xprof", "difference")


def table(rows: list[tuple], markdown: bool = False) -> str:
    """The rows under HEAD: a Markdown table (``|`` in a cell escaped), or plain text in
    columns as wide as their widest cell."""
    if markdown:
        lines = ["| " + " | ".join(HEAD) + " |", "|" + "---|" * len(HEAD)]
        lines += ["| " + " | ".join(c.replace("|", "\\|") for c in r) + " |" for r in rows]
        return "\n".join(lines)
    widths = [max(len(str(c)) for c in col) for col in zip(HEAD, *rows)]
    fmt = "  ".join(f"{{:<{w}}}" for w in widths)
    lines = [fmt.format(*HEAD), fmt.format(*("-" * w for w in widths))]
    lines += [fmt.format(*r) for r in rows]
    return "\n".join(line.rstrip() for line in lines)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shared", default=str(ROOT.parent / "shared" / "captures"))
    ap.add_argument("--markdown", action="store_true", help="print a Markdown table")
    ap.add_argument("capture", nargs="*", help="only these .xplane.pb files")
    args = ap.parse_args(argv)
    paths = [pathlib.Path(p) for p in args.capture] or captures(pathlib.Path(args.shared))
    rows = report(paths)
    print(table(rows, args.markdown))
    exact = sum(r[5] in ("0", "same") for r in rows)
    close = sum(
        r[5].endswith("%") and not math.isnan(float(r[5][:-1])) and abs(float(r[5][:-1])) <= 0.5
        for r in rows
    )
    apart = len(rows) - exact - close
    print(f"\n{len(rows)} figures: {exact} equal, {close} within 0.5 %, {apart} apart")


if __name__ == "__main__":
    main()
