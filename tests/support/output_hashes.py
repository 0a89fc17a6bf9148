"""A hash of every analysis table and every view payload of some captures, printed as JSON:
``python tests/support/output_hashes.py NAME...`` (names of :func:`invariants.bundled_captures`).

``tests/analysis/test_deterministic_output.py`` runs this in two fresh processes (different
``PYTHONHASHSEED``) and compares: the same input must give the same bytes.
"""

from __future__ import annotations

import hashlib
import json
import pathlib
import sys

import pandas as pd

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2]))

from invariants import analysis_tables, build, bundled_captures  # noqa: E402


def _table_bytes(df: pd.DataFrame) -> bytes:
    """A table's bytes: its columns, dtypes and values in row order (the index left out)."""
    head = json.dumps([[str(c), str(t)] for c, t in df.dtypes.items()]).encode()
    rows = pd.util.hash_pandas_object(df.astype(object), index=False).to_numpy().tobytes()
    return head + rows


def hashes(name: str) -> dict[str, str]:
    cap = build(name, bundled_captures()[name])
    out = {}
    for tname, df in analysis_tables(cap).items():
        out[f"table {tname}"] = hashlib.sha256(_table_bytes(df)).hexdigest()[:16]
    for field in ("overview_summary", "input_pipeline"):
        frame = getattr(cap.run, field).to_frame().astype(str)
        out[f"summary {field}"] = hashlib.sha256(_table_bytes(frame)).hexdigest()[:16]
    for vname, v in cap.views.items():
        for part in ("text", "static_html", "payload"):
            digest = hashlib.sha256(getattr(v, part).encode()).hexdigest()[:16]
            out[f"view {vname} {part}"] = digest
    return out


if __name__ == "__main__":
    print(json.dumps({n: hashes(n) for n in sys.argv[1:]}, indent=1, sort_keys=True))
