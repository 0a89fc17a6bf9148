"""Issue 14's acceptance for the real XSpace captures nobody here made (JAX 0.8 on AMD MI300X,
copied into tests/data/xplane_amd_jax; the TF BERT capture is tested in test_real_chrome_traces
and the views' tests): every plane's event count equals a count made independently with
protobuf, the GPU planes are device planes, kernels are every device event that carries
launch details, and there are no steps (the captures mark none; xprof 2.24 finds none)."""

import pathlib

import pytest
from conftest import ROOT

import tfprof_widgets as tw
from tfprof_widgets.proto import xplane_pb2

FILES = sorted((ROOT / "tests" / "data" / "xplane_amd_jax").glob("*.xplane.pb"))


def raw_counts(path: pathlib.Path) -> tuple[dict, int]:
    """Events per plane (planes with events) and device events with kernel details, counted
    from the protobuf message itself."""
    space = xplane_pb2.XSpace()
    space.ParseFromString(path.read_bytes())
    per_plane, kernels = {}, 0
    for plane in space.planes:
        n = sum(len(line.events) for line in plane.lines)
        if n:
            per_plane[plane.name] = n
        if not plane.name.startswith("/device:GPU:"):
            continue
        details = {i for i, m in plane.stat_metadata.items() if m.name == "kernel_details"}
        for line in plane.lines:
            for ev in line.events:
                meta = plane.event_metadata[ev.metadata_id]
                if any(s.metadata_id in details for s in (*ev.stats, *meta.stats)):
                    kernels += 1
    return per_plane, kernels


def test_every_real_xplane_is_here():
    assert [f.name for f in FILES] == [
        f"jax08_{k}.xplane.pb" for k in ("attention", "conv", "elementwise", "gemm")
    ]


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_real_xplane_loads_as_the_protobuf_says(path):
    run = tw.load(path, progress=False)
    per_plane, kernels = raw_counts(path)
    assert run.events.groupby("plane", observed=True).size().to_dict() == per_plane
    gpus = run.planes[run.planes["plane"].astype(str).str.startswith("/device:GPU:")]
    assert len(gpus) == 8 and set(gpus["device_kind"].astype(str)) == {"GPU"}
    assert kernels > 0 and int(run.kernels["occurrences"].sum()) == kernels
    assert len(run.steps) == 0
