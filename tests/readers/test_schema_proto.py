"""Our wire-compatible schema matches TF's xplane.proto field numbers; regeneration is exact."""

import importlib.util
import json
import shutil
import subprocess
import sys

import pytest
from conftest import ROOT
from google.protobuf.descriptor import FieldDescriptor

from tfprof_widgets.proto import profiler_service_pb2, tool_data_pb2, trace_events_pb2, xplane_pb2

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
    assert modules == [
        "profiler_service_pb2.py",
        "tfprof_pb2.py",
        "tool_data_pb2.py",
        "trace_events_pb2.py",
        "xla_hlo_pb2.py",
        "xplane_pb2.py",
    ]
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


# Every message of xprof's own generated modules (tool data: package tensorflow.profiler;
# the TF 2.0/2.1 Trace: xprof's trace_events_old.proto), as {message: {number: (name, wire)}}.
# In a subprocess: xprof's and TensorFlow's modules register the same names in one pool.
_XPROF_FIELDS = r"""
import importlib, json, pkgutil
import xprof.protobuf as pkg
from google.protobuf.descriptor import FieldDescriptor as F
WIRE = {F.TYPE_DOUBLE: "i64", F.TYPE_FIXED64: "i64", F.TYPE_SFIXED64: "i64", F.TYPE_FLOAT: "i32",
        F.TYPE_FIXED32: "i32", F.TYPE_SFIXED32: "i32", F.TYPE_STRING: "len", F.TYPE_BYTES: "len",
        F.TYPE_MESSAGE: "len", F.TYPE_SINT32: "zigzag", F.TYPE_SINT64: "zigzag"}
out = {}
def walk(desc, prefix):
    name = desc.full_name.rsplit(".", 1)[-1] if not prefix else prefix + "." + desc.name
    out.setdefault(name, {str(f.number): (f.name, WIRE.get(f.type, "varint")) for f in desc.fields})
    for nested in desc.nested_types:
        walk(nested, name)
for m in pkgutil.iter_modules(pkg.__path__):
    if m.name.endswith("_pb2"):
        mod = importlib.import_module("xprof.protobuf." + m.name)
        for desc in mod.DESCRIPTOR.message_types_by_name.values():
            walk(desc, "xprof" if mod.DESCRIPTOR.package == "xprof" else "")
print(json.dumps(out))
"""
_WIRE = {
    FieldDescriptor.TYPE_DOUBLE: "i64",
    FieldDescriptor.TYPE_FIXED64: "i64",
    FieldDescriptor.TYPE_SFIXED64: "i64",
    FieldDescriptor.TYPE_FLOAT: "i32",
    FieldDescriptor.TYPE_FIXED32: "i32",
    FieldDescriptor.TYPE_SFIXED32: "i32",
    FieldDescriptor.TYPE_STRING: "len",
    FieldDescriptor.TYPE_BYTES: "len",
    FieldDescriptor.TYPE_MESSAGE: "len",
    FieldDescriptor.TYPE_SINT32: "zigzag",
    FieldDescriptor.TYPE_SINT64: "zigzag",
}


@pytest.mark.skipif(importlib.util.find_spec("xprof") is None, reason="xprof (dev extra) missing")
def test_tool_data_messages_match_xprofs_field_for_field():
    """Our tool-data and Trace messages (own package, so no clash with TensorFlow's pool)
    have xprof's field numbers, names and wire types: every field of ours is one of its."""
    r = subprocess.run(
        [sys.executable, "-c", _XPROF_FIELDS], capture_output=True, text=True, timeout=120
    )
    assert r.returncode == 0, r.stderr[-2000:]
    theirs = json.loads(r.stdout)
    checked = 0
    # The Trace of TF 2.0/2.1 is xprof's trace_events_old.proto; Resource.sort_index came
    # with the later one (trace_events.proto, package tensorflow.profiler).
    for module, prefixes in ((tool_data_pb2, ("",)), (trace_events_pb2, ("xprof.", ""))):
        for desc in module.DESCRIPTOR.message_types_by_name.values():
            refs = [theirs[p + desc.name] for p in prefixes if p + desc.name in theirs]
            assert refs, f"xprof has no message {desc.name}"
            for f in desc.fields:
                if (desc.name, f.name) in _FROM_TENSORFLOW:
                    continue
                wire = _WIRE.get(f.type, "varint")
                assert [f.name, wire] in [r.get(str(f.number)) for r in refs], (desc.name, f.name)
                checked += 1
    assert checked > 300


# Fields xprof's copies lack but TensorFlow's tsl/profiler/protobuf/trace_events.proto has
# (xprof reuses Resource's 3 for num_events); checked against TensorFlow below.
_FROM_TENSORFLOW = {("Resource", "sort_index")}
_TF_TRACE_FIELDS = r"""
import json
from tensorflow.tsl.profiler.protobuf import trace_events_pb2 as m
print(json.dumps({name: {str(f.number): f.name for f in d.fields}
                  for name, d in m.DESCRIPTOR.message_types_by_name.items()}))
"""


@pytest.mark.skipif(
    importlib.util.find_spec("tensorflow") is None, reason="tensorflow (capture extra) missing"
)
def test_trace_messages_match_tensorflows():
    r = subprocess.run(
        [sys.executable, "-c", _TF_TRACE_FIELDS], capture_output=True, text=True, timeout=300
    )
    assert r.returncode == 0, r.stderr[-2000:]
    theirs = json.loads(r.stdout.strip().splitlines()[-1])
    for desc in trace_events_pb2.DESCRIPTOR.message_types_by_name.values():
        assert {str(f.number): f.name for f in desc.fields} == theirs[desc.name], desc.name
