"""Pod scale: a capture of many hosts converted once into a Parquet dataset, one file set per
host, and analysed where the data is: by DuckDB on one machine (bounded memory), or by Dask on
a cluster.

    tfprof_widgets.convert("logs/", "pod_dataset")    # or: tfprof-widgets convert logs/ -o ...
    pod = tfprof_widgets.open("pod_dataset")          # or "s3://bucket/pod_dataset", client=...
    pod.steps, pod.ops, pod.kernels, pod.memory_summary   # as on a Run, over every host
    pod.top_events(20); pod.sql("SELECT host, count(*) FROM events GROUP BY host")
    pod.host("worker-3")                              # one host as an in-memory Run

Modules: ``dataset`` (layout, manifest, Parquet I/O), ``conversion`` (``convert``),
``per_host`` (the work done per host), ``sql`` (the pod-level SQL), ``pod`` (the ``Pod``),
``dask_engine``. Needs the ``scale`` extra: ``pip install "tfprof_widgets[scale]"`` (duckdb,
pyarrow, dask[distributed]).
See docs/scale.md.
"""

from .conversion import ConvertResult, convert
from .dataset import DATASET_VERSION
from .pod import Pod, open_dataset

__all__ = ["DATASET_VERSION", "ConvertResult", "Pod", "convert", "open_dataset"]
