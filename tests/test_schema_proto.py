"""Our wire-compatible schema matches TF's xplane.proto field numbers; regeneration is exact."""

import importlib.util
import shutil
import subprocess
import sys

import pytest
from conftest import ROOT

from tfprof_widgets.proto import profiler_service_pb2, xplane_pb2

# Field numbers from TensorFlow's published tsl/profiler/protobuf/xplane.proto.
EXPECTED = {
    "XSpace": {"planes": 1, "errors": 2, "warnings": 3, "hostnames": 4},
    "XPlane": {"id": 1, "name": 2, "lines": 3, "event_metadata": 4, "stat_metadata": 5, "stats": 6},
    "XLine": {
        "id": 1,
        "display_id": 10,
        "name": 2,
        "display_name": 11,
        "timestamp_ns": 3,
        "duration_ps": 9,
        "events": 4,
    },
    "XEvent": {
        "metadata_id": 1,
        "offset_ps": 2,
        "num_occurrences": 5,
        "duration_ps": 3,
        "stats": 4,
    },
    "XStat": {
        "metadata_id": 1,
        "double_value": 2,
        "uint64_value": 3,
        "int64_value": 4,
        "str_value": 5,
        "bytes_value": 6,
        "ref_value": 7,
        "compressed_str_value": 8,
    },
    "XEventMetadata": {
        "id": 1,
        "name": 2,
        "display_name": 4,
        "metadata": 3,
        "stats": 5,
        "child_id": 6,
    },
    "XStatMetadata": {"id": 1, "name": 2, "description": 3},
}


# From tsl/profiler/protobuf/profiler_options.proto and profiler_service.proto (the parts a
# capture client sends and reads).
EXPECTED_SERVICE = {
    "ProfileOptions": {
        "version": 5,
        "device_type": 6,
        "include_dataset_ops": 1,
        "host_tracer_level": 2,
        "device_tracer_level": 3,
        "python_tracer_level": 4,
        "enable_hlo_proto": 7,
        "start_timestamp_ns": 8,
        "duration_ms": 9,
        "repository_path": 10,
        "trace_options": 11,
        "advanced_configuration": 12,
        "raise_error_on_start_failure": 13,
        "session_id": 14,
        "override_hostname": 15,
    },
    "ProfileRequest": {
        "duration_ms": 1,
        "max_events": 2,
        "tools": 3,
        "opts": 4,
        "repository_root": 5,
        "session_id": 6,
        "host_name": 7,
        "emit_xspace": 9,
    },
    "ProfileResponse": {"empty_trace": 7, "xspace": 8},
    "TerminateRequest": {"session_id": 1},
}


@pytest.mark.parametrize(
    "module,expected", [(xplane_pb2, EXPECTED), (profiler_service_pb2, EXPECTED_SERVICE)]
)
def test_field_numbers(module, expected):
    for msg, fields in expected.items():
        desc = getattr(module, msg).DESCRIPTOR
        assert {f.name: f.number for f in desc.fields} == fields, msg


@pytest.mark.skipif(
    importlib.util.find_spec("grpc_tools") is None, reason="grpcio-tools (dev extra) not installed"
)
def test_regeneration_reproduces_the_committed_module(tmp_path):
    shutil.copytree(ROOT / "tfprof_widgets" / "proto", tmp_path / "tfprof_widgets" / "proto")
    shutil.copytree(ROOT / "scripts", tmp_path / "scripts")
    modules = sorted(p.name for p in (ROOT / "tfprof_widgets" / "proto").glob("*_pb2.py"))
    assert modules == ["profiler_service_pb2.py", "tfprof_pb2.py", "xplane_pb2.py"]
    for name in modules:
        (tmp_path / "tfprof_widgets" / "proto" / name).unlink()
    subprocess.run(
        [sys.executable, "scripts/regen_proto.py"],
        cwd=tmp_path,
        check=True,
        capture_output=True,
        timeout=120,
    )
    for name in modules:
        new = (tmp_path / "tfprof_widgets" / "proto" / name).read_text()
        assert new == (ROOT / "tfprof_widgets" / "proto" / name).read_text(), name
