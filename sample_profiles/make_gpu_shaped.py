"""Make ``sample_profiles/gpu_shaped``: a synthetic two-host GPU run, for the GPU tour notebook.

CPU TensorFlow cannot record GPU planes, kernels or a GPU allocator, and no GPU machine was
available when the samples were made, so this run is built by the test helpers
(``tests/support/xspace_builder.py``) with the structure of a real GPU capture: host step markers,
kernel launches, per-GPU streams with kernels and copies, the derived "Steps" and "TensorFlow
Ops" lines, device properties, and a ``GPU_0_bfc`` allocator. Its numbers are made up; the
readers and analyses treat it exactly as a real capture.

Run from the repository root:  python sample_profiles/make_gpu_shaped.py
"""

from __future__ import annotations

import pathlib
import shutil
import sys
import tempfile

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests" / "support"))

from xspace_builder import write_multi_host_run  # noqa: E402


def main() -> None:
    target = HERE / "gpu_shaped"
    with tempfile.TemporaryDirectory() as tmp:
        write_multi_host_run(tmp, hosts=("worker0", "worker1"), n_steps=8)
        if target.exists():
            shutil.rmtree(target)
        shutil.copytree(tmp, target)
    print(f"wrote {target}")


if __name__ == "__main__":
    main()
