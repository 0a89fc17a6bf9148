"""scripts/fidelity_report.py: the ``--markdown`` its docstring offers (issue 36 item 19),
plain text otherwise, and rows in the same order on every run (issue 42 item 2: xprof's
allocators come as a map, in an order that changed from run to run)."""

from __future__ import annotations

import pathlib
import sys

import pytest
from fidelity_figures import MEMORY, xprof_figures

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))

import fidelity_report  # noqa: E402

AMD = ROOT / "tests" / "data" / "xplane_amd_jax" / "jax08_gemm.xplane.pb"


def _memory_profile(names: list[str]) -> dict:
    summary = {theirs: 1 for theirs, _ in MEMORY.values()}
    return {
        "memoryProfilePerAllocator": {
            n: {"profileSummary": dict(summary, peakStats={})} for n in names
        }
    }


def test_allocators_in_one_order_whatever_xprofs_map_order():
    """The same memory profile with its allocators in two orders gives the same figures in
    the same order (the report's rows follow them)."""
    names = ["GPU_4_bfc", "GPU_0_bfc", "GPU_7_bfc", "GPU_1_bfc"]
    a = xprof_figures({"memory_profile": _memory_profile(names)})
    b = xprof_figures({"memory_profile": _memory_profile(names[::-1])})
    assert list(a) == list(b)
    assert list(a)[0].startswith("memory GPU_0_bfc ")


def test_markdown_and_plain_text(capsys):
    """``--markdown`` prints a Markdown table of the capture's figures; without it the same
    rows in aligned columns."""
    pytest.importorskip("xprof")
    fidelity_report.main(["--markdown", str(AMD)])
    md = capsys.readouterr().out.splitlines()
    assert md[0] == "| capture | tool | figure | ours | xprof | difference |"
    assert md[1] == "|---|---|---|---|---|---|"
    body = [line for line in md[2:] if line.startswith("| xplane_amd_jax/jax08_gemm")]
    assert len(body) > 20 and all(line.count(" | ") == 5 for line in body)
    assert "memory_profile" in "\n".join(body)
    rows = [line.strip("| ").split(" | ") for line in body]
    plain = fidelity_report.table([tuple(r) for r in rows]).splitlines()
    assert plain[0].split() == list(fidelity_report.HEAD)
    starts = {line.index(rows[0][1]) for line, r in zip(plain[2:], rows) if r[1] == rows[0][1]}
    assert len(starts) == 1  # the tool column starts at one place on every row
