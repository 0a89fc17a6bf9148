"""Re-execute the notebooks in notebooks/ in place, the way they are kept in the repository.

    python scripts/execute_notebooks.py [NAME.ipynb ...]

Each runs in its own kernel with notebooks/ as the working directory. Widget state is not
stored: the exported HTML then shows each view's static plot (its text/html part), which
works offline, while a live kernel shows the interactive widgets.
"""

from __future__ import annotations

import os
import pathlib
import subprocess
import sys

NOTEBOOKS = pathlib.Path(__file__).resolve().parents[1] / "notebooks"


def main(names: list[str]) -> int:
    paths = [NOTEBOOKS / n for n in names] if names else sorted(NOTEBOOKS.glob("*.ipynb"))
    for path in paths:
        print(f"executing {path.name}", flush=True)
        subprocess.run(
            [
                sys.executable,
                "-m",
                "jupyter",
                "nbconvert",
                "--to",
                "notebook",
                "--execute",
                "--inplace",
                "--ExecutePreprocessor.timeout=600",
                "--ExecutePreprocessor.store_widget_state=False",
                str(path),
            ],
            cwd=NOTEBOOKS,
            check=True,
            # No page draws here: a view's image need not wait for one (views/_png.py).
            env={**os.environ, "TFPROF_WIDGETS_IMAGE_GRACE_S": "0"},
        )
        print(f"  {path.stat().st_size / 2**20:.1f} MiB", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
