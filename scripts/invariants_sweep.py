"""The invariants of ``tests/support/invariants.py`` on a folder of captures: capture x invariant.

    python scripts/invariants_sweep.py [--shared DIR] [--bundled] [--details]

Builds each capture under ``DIR`` (default ``../shared/captures``; with ``--bundled``, the
captures of ``tests/data`` and ``sample_profiles`` instead, as ``tests/analysis/test_invariants.py``
does) once, runs every invariant on it and prints a table with one row per capture and one
column per invariant: ``pass``, or ``FAIL`` with the first offending figure; then, with
``--details``, every offending figure. A capture that fails to load shows its error.
"""

from __future__ import annotations

import argparse
import pathlib
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests" / "support")]

from invariants import INVARIANTS, build, bundled_captures, folder_captures  # noqa: E402


def sweep(captures: dict) -> list[tuple[str, dict[str, list[str]]]]:
    """[(capture, {invariant: offending figures})], one capture built at a time."""
    out = []
    for name, make in captures.items():
        try:
            cap = build(name, make)
        except Exception as e:  # a capture that does not load is a row of its own
            out.append((name, {k: [f"load: {type(e).__name__}: {e}"] for k in INVARIANTS}))
            continue
        found = {}
        for inv, check in INVARIANTS.items():
            try:
                found[inv] = check(cap)
            except Exception as e:
                found[inv] = [f"check raised {type(e).__name__}: {e}"]
        out.append((name, found))
        del cap
    return out


def _cell(bad: list[str], width: int) -> str:
    if not bad:
        return "pass"
    text = f"FAIL ({len(bad)}): {bad[0]}"
    return text if len(text) <= width else text[: width - 1] + "…"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shared", default=str(ROOT.parent / "shared" / "captures"))
    ap.add_argument("--bundled", action="store_true", help="tests/data and sample_profiles")
    ap.add_argument("--details", action="store_true", help="every offending figure")
    ap.add_argument("--width", type=int, default=70, help="characters per cell")
    args = ap.parse_args(argv)
    if args.bundled:
        captures = bundled_captures()
    else:
        folder = pathlib.Path(args.shared)
        if not folder.is_dir():
            print(f"no folder {folder}", file=sys.stderr)
            return 2
        captures = folder_captures(folder)
    t0 = time.perf_counter()
    results = sweep(captures)
    head = ("capture", *INVARIANTS)
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for name, found in results:
        cells = [_cell(found[k], args.width).replace("|", "\\|") for k in INVARIANTS]
        print("| " + " | ".join([name, *cells]) + " |")
    failing = sum(bool(v) for _, f in results for v in f.values())
    total = len(results) * len(INVARIANTS)
    print(
        f"\n{len(results)} captures x {len(INVARIANTS)} invariants: {total - failing} pass, "
        f"{failing} FAIL ({time.perf_counter() - t0:.1f} s)"
    )
    if args.details:
        for name, found in results:
            for inv, bad in found.items():
                for b in bad:
                    print(f"{name} | {inv} | {b}")
    return 1 if failing else 0


if __name__ == "__main__":
    sys.exit(main())
