"""Read xprof's golden outputs (tests/golden/<sample>/<tool>.json) into DataFrames."""

from __future__ import annotations

import gzip
import json
import pathlib
import sys
import tempfile

import pandas as pd

GOLDEN = pathlib.Path(__file__).resolve().parents[1] / "golden"


def golden(sample: str, tool: str):
    """xprof's output of one tool for one capture (stored gzipped when large)."""
    path = GOLDEN / sample / f"{tool}.json"
    if not path.exists():
        return json.loads(gzip.decompress((GOLDEN / sample / f"{tool}.json.gz").read_bytes()))
    return json.loads(path.read_text())


def data_table(table: dict) -> pd.DataFrame:
    """A Google DataTable ({cols, rows, p}) as a DataFrame."""
    cols = [c["id"] for c in table["cols"]]
    return pd.DataFrame(
        [[c.get("v") if c else None for c in row["c"]] for row in table["rows"]], columns=cols
    )


_SCRATCH: tempfile.TemporaryDirectory | None = None


def _scratch(prefix: str) -> pathlib.Path:
    """A fresh folder inside this process's one temporary directory, which is removed when
    the process ends (the synthetic captures used to stay behind as /tmp/tfprof_gpu_*)."""
    global _SCRATCH
    if _SCRATCH is None:
        _SCRATCH = tempfile.TemporaryDirectory(prefix="tfprof_synthetic_")
    return pathlib.Path(tempfile.mkdtemp(prefix=prefix, dir=_SCRATCH.name))


def synthetic_gpu_path() -> pathlib.Path:
    """The synthetic GPU capture that the synthetic_gpu golden files were made from."""
    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
    from xspace_builder import SYNTHETIC_GPU_ARGS, gpu_capture

    return gpu_capture(**SYNTHETIC_GPU_ARGS).write(_scratch("gpu_") / "gpu.xplane.pb")


def synthetic_tpu_path() -> pathlib.Path:
    """The synthetic TPU capture that the synthetic_tpu golden files were made from."""
    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
    from tpu_builder import tpu_capture

    return tpu_capture().write(_scratch("tpu_") / "tpu.xplane.pb")


BERT = pathlib.Path(__file__).resolve().parents[1] / "data" / "bert_8gpu_multi_worker.xplane.pb"
