"""Make the golden lane names and XLA line events of XProf's trace viewer for the XLA captures.

    python scripts/make_trace_lines_golden.py

For each XLA capture of scripts/make_golden.py (JAX on an H100 with and without CUDA graphs,
JAX 0.8 on AMD MI300X), xprof 2.24's ``trace_viewer`` tool (run on a private copy, nothing
cached reused) is read down to what tests/views/test_trace_model.py compares: every process's
thread names, and the events of its ``XLA Modules``/``XLA Ops`` lines (name, start and
duration in µs, in time order). Written to tests/golden/<name>/trace_lines.json. Needs the dev
extra (xprof).
"""

from __future__ import annotations

import json
import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from make_golden import GOLDEN, ROOT, XLA_CAPTURES, xprof_tool  # noqa: E402

KEEP = ("XLA Modules", "XLA Ops")


def trace_lines(xplane: pathlib.Path) -> dict:
    """{process name: {thread name: [[name, ts_us, dur_us], ...] for XLA lines, else its
    event count}} of xprof's trace viewer for one capture."""
    events = xprof_tool(xplane, "trace_viewer")["traceEvents"]
    process = {e["pid"]: e["args"]["name"] for e in events if e.get("name") == "process_name"}
    thread = {
        (e["pid"], e["tid"]): e["args"]["name"] for e in events if e.get("name") == "thread_name"
    }
    out: dict = {}
    for e in sorted((e for e in events if e.get("ph") == "X"), key=lambda e: (e["ts"], e["name"])):
        name = thread.get((e["pid"], e.get("tid")))
        if name is None:
            continue
        lines = out.setdefault(process[e["pid"]], {})
        if name.startswith(KEEP):
            lines.setdefault(name, []).append([e["name"], e["ts"], e["dur"]])
        else:
            lines[name] = lines.get(name, 0) + 1
    return out


def main() -> None:
    for name, xplane in XLA_CAPTURES.items():
        path = GOLDEN / name / "trace_lines.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(trace_lines(xplane), indent=0, sort_keys=True))
        print(f"{path.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
