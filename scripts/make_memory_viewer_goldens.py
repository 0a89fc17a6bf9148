"""Make the goldens ``tests/xla/test_xla_memory_viewer.py`` compares ``hlo_memory`` /
``hlo_memory_peak`` with: xprof's ``memory_viewer`` tool on every program of the bundled
XLA captures.

    python scripts/make_memory_viewer_goldens.py

xprof's plugin first writes each program of a capture as ``<module>(<program id>).hlo_proto.pb``
beside the capture (its ``tool_names`` conversion does, as the plugin's module list does), then
its ``memory_viewer`` tool reads one of those files (``module_name`` option) with memory space 0
and the 16 KiB small-buffer threshold. Each capture is converted in a private copy in a
temporary directory, ``use_saved_result`` off. Written: ``tests/golden/memory_viewer/
<capture>.json``, per program the numbers the tests compare (MiB as xprof gives them, buffer
ids as xprof's ``maxHeap`` lists them, the spans of the heap simulator's buffers) or xprof's
error. Needs the dev extra (xprof).
"""

from __future__ import annotations

import json
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
from xprof_programs import programs_of  # noqa: E402

DATA = ROOT / "tests" / "data"
OUT = ROOT / "tests" / "golden" / "memory_viewer"
CAPTURES = {
    "jax_cnn_nographs": DATA / "xplane_h100_jax" / "jax_cnn_nographs.xplane.pb",
    "jax_cnn_graphs": DATA / "xplane_h100_jax" / "jax_cnn_graphs.xplane.pb",
    **{
        f"jax08_{k}": DATA / "xplane_amd_jax" / f"jax08_{k}.xplane.pb"
        for k in ("attention", "conv", "elementwise", "gemm")
    },
    "jax_cpu_10steps": DATA / "jax_cpu" / "jax_cnn_cpu_10steps.xplane.pb",
    "tf_xla_cpu": DATA / "tf_xla_cpu" / "keras_fit_jit.xplane.pb",
}
_FILE = re.compile(r"^(?P<module>.*)\((?P<program>\d+)\)\.hlo_proto\.pb$")


def xprof_memory_viewer(xplane: pathlib.Path) -> dict[str, dict]:
    """``"<module>(<program id>)"`` -> xprof's memory viewer JSON of that program (or
    ``{"error": message}``), for every program xprof extracts from the capture."""
    from xprof.convert import raw_to_tool_data as r

    out: dict[str, dict] = {}
    with programs_of(xplane, "tfprof_memviewer_") as (copy, names):
        for name in names:
            params = {"use_saved_result": False, "module_name": name}
            try:
                data, _ = r.xspace_to_tool_data([str(copy)], "memory_viewer", params)
            except Exception as e:  # noqa: BLE001 - xprof's refusal is part of the golden
                out[name] = {"error": str(e)}
                continue
            out[name] = json.loads(data) if data else {"error": "no result"}
    return out


def compact(result: dict) -> dict:
    """The parts of one memory viewer result the tests compare."""
    if "error" in result:
        return result
    return {
        "module": result.get("moduleName", ""),
        "peak_heap_mib": result.get("peakHeapMib", 0.0),
        "peak_unpadded_heap_mib": result.get("peakUnpaddedHeapMib", 0.0),
        "peak_position": result.get("peakHeapSizePosition", 0),
        "heap_sizes_mib": result.get("heapSizes", []),
        "instruction_names": result.get("hloInstructionNames", []),
        "entry_parameters_mib": result.get("entryComputationParametersMib", 0.0),
        "maybe_live_out_mib": result.get("maybeLiveOutMib", 0.0),
        "indefinite_mib": result.get("indefiniteBufferAllocationMib", 0.0),
        "total_allocation_mib": result.get("totalBufferAllocationMib", 0.0),
        "max_heap": sorted(
            [
                int(o.get("logicalBufferId", 0)),
                o.get("logicalBufferSizeMib", 0.0),
                o.get("instructionName", ""),
                o.get("shapeString", ""),
                o.get("groupName", ""),
            ]
            for o in result.get("maxHeap", [])
        ),
        "spans": {
            k: [v.get("start", 0), v.get("limit", 0)]
            for k, v in sorted(
                result.get("logicalBufferSpans", {}).items(), key=lambda kv: int(kv[0])
            )
        },
    }


def main() -> int:
    OUT.mkdir(parents=True, exist_ok=True)
    for name, path in CAPTURES.items():
        programs = {}
        for key, result in xprof_memory_viewer(path).items():
            m = _FILE.match(key + ".hlo_proto.pb")
            programs[m["program"]] = {"name": key, **compact(result)}
        golden = {"capture": path.relative_to(ROOT).as_posix(), "programs": programs}
        text = json.dumps(golden, indent=1, sort_keys=True)
        (OUT / f"{name}.json").write_text(text + "\n")
        print(f"{name}: {len(programs)} programs")
    return 0


if __name__ == "__main__":
    sys.exit(main())
