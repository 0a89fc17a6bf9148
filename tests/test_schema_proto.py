"""Our wire-compatible schema matches TF's xplane.proto field numbers; regeneration is exact."""

import importlib.util
import shutil
import subprocess
import sys

import pytest
from conftest import ROOT

from tfprof_widgets.proto import xplane_pb2

# Field numbers from TensorFlow's published tsl/profiler/protobuf/xplane.proto.
EXPECTED = {
    "XSpace": {"planes": 1, "errors": 2, "warnings": 3, "hostnames": 4},
    "XPlane": {"id": 1, "name": 2, "lines": 3, "event_metadata": 4, "stat_metadata": 5,
               "stats": 6},
    "XLine": {"id": 1, "display_id": 10, "name": 2, "display_name": 11, "timestamp_ns": 3,
              "duration_ps": 9, "events": 4},
    "XEvent": {"metadata_id": 1, "offset_ps": 2, "num_occurrences": 5, "duration_ps": 3,
               "stats": 4},
    "XStat": {"metadata_id": 1, "double_value": 2, "uint64_value": 3, "int64_value": 4,
              "str_value": 5, "bytes_value": 6, "ref_value": 7, "compressed_str_value": 8},
    "XEventMetadata": {"id": 1, "name": 2, "display_name": 4, "metadata": 3, "stats": 5,
                       "child_id": 6},
    "XStatMetadata": {"id": 1, "name": 2, "description": 3},
}


def test_field_numbers():
    for msg, fields in EXPECTED.items():
        desc = getattr(xplane_pb2, msg).DESCRIPTOR
        assert {f.name: f.number for f in desc.fields} == fields, msg


@pytest.mark.skipif(importlib.util.find_spec("grpc_tools") is None,
                    reason="grpcio-tools (dev extra) not installed")
def test_regeneration_reproduces_the_committed_module(tmp_path):
    shutil.copytree(ROOT / "tfprof_widgets" / "proto", tmp_path / "tfprof_widgets" / "proto")
    shutil.copytree(ROOT / "scripts", tmp_path / "scripts")
    (tmp_path / "tfprof_widgets" / "proto" / "xplane_pb2.py").unlink()
    subprocess.run([sys.executable, "scripts/regen_proto.py"], cwd=tmp_path, check=True,
                   capture_output=True, timeout=120)
    new = (tmp_path / "tfprof_widgets" / "proto" / "xplane_pb2.py").read_text()
    old = (ROOT / "tfprof_widgets" / "proto" / "xplane_pb2.py").read_text()
    assert new == old
