"""The JAX CPU capture cut to its first steps, for XProf's figures of a compile step.

XProf averages every step of a host with five steps or fewer, so a copy of
tests/data/jax_cpu/jax_cnn_cpu_10steps.xplane.pb whose Python thread keeps only the step
markers (``train``, ``step_num``) of steps 0-4 is what ``%%tfprof --backend jax`` gave in
issue 36 items 12 and 19: XProf then shows step 0, which compiles the program. Every other
event is kept as it is.

    python tests/support/jax_cpu_first_steps.py --golden   # xprof's overview of the 5-step copy

writes tests/golden/jax_cpu_5steps/overview_page.json (needs xprof).
"""

from __future__ import annotations

import json
import pathlib
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parents[2]
SOURCE = ROOT / "tests" / "data" / "jax_cpu" / "jax_cnn_cpu_10steps.xplane.pb"
GOLDEN = ROOT / "tests" / "golden" / "jax_cpu_5steps"


def first_steps(dst: pathlib.Path, n: int = 5, src: pathlib.Path = SOURCE) -> pathlib.Path:
    """Write ``src`` with the step markers of steps ``n`` and later removed to ``dst``."""
    from tfprof_widgets.proto import xplane_pb2

    space = xplane_pb2.XSpace()
    space.ParseFromString(src.read_bytes())
    for plane in space.planes:
        names = {k: v.name for k, v in plane.event_metadata.items()}
        stats = {k: v.name for k, v in plane.stat_metadata.items()}
        for line in plane.lines:
            keep = [
                e
                for e in line.events
                if names.get(e.metadata_id) != "train"
                or all(stats[s.metadata_id] != "step_num" or s.int64_value < n for s in e.stats)
            ]
            if len(keep) != len(line.events):
                del line.events[:]
                line.events.extend(keep)
    dst.write_bytes(space.SerializeToString())
    return dst


def main() -> None:
    sys.path.insert(0, str(ROOT / "scripts"))
    from make_golden import xprof_tool

    with tempfile.TemporaryDirectory() as tmp:
        path = first_steps(pathlib.Path(tmp) / "jax_cpu_5steps.xplane.pb")
        GOLDEN.mkdir(parents=True, exist_ok=True)
        text = json.dumps(xprof_tool(path, "overview_page"), indent=1, sort_keys=True)
        (GOLDEN / "overview_page.json").write_text(text + "\n")


if __name__ == "__main__":
    if sys.argv[1:] != ["--golden"]:
        sys.exit(__doc__)
    main()
