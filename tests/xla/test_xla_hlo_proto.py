"""The vendored XLA protos (tfprof_widgets/proto/xla_hlo.proto) and the HLO instruction table
decoded from a capture's programs (``run.hlo_instructions``, readers/xspace/hlo.py)."""

from __future__ import annotations

import re

import pytest
from conftest import ROOT

import tfprof_widgets as tw
from tfprof_widgets import schema
from tfprof_widgets.proto import xla_hlo_pb2
from tfprof_widgets.readers.xspace.hlo import hlo_category, shape_text

UPSTREAM = ROOT / "tests" / "data" / "xla_proto_upstream"
H100 = ROOT / "tests" / "data" / "xplane_h100_jax"
_FIELD = re.compile(r"^\s*(repeated\s+)?([\w.<>, ]+?)\s+(\w+)\s*=\s*(\d+)")
_SCALARS = {
    1: "double", 2: "float", 3: "int64", 4: "uint64", 5: "int32", 8: "bool", 9: "string",
    12: "bytes", 13: "uint32",
}  # fmt: skip


def upstream_fields() -> dict[str, dict[str, tuple[int, str, bool]]]:
    """message name -> field name -> (number, type, repeated), from the upstream excerpts."""
    out: dict[str, dict] = {}
    stack: list[str] = []
    for path in sorted(UPSTREAM.glob("*.txt")):
        for line in path.read_text().splitlines():
            if m := re.match(r"^\s*(message|enum)\s+(\w+)\s*\{", line):
                stack.append(m[2])
                out.setdefault(".".join(stack), {})
            elif line.strip() == "}":
                stack.pop()
            elif stack and (m := _FIELD.match(line.split("//")[0])):
                typ = m[2].split(".")[-1]
                out[".".join(stack)][m[3]] = (int(m[4]), typ, bool(m[1]))
            elif stack and (m := re.match(r"^\s*(\w+)\s*=\s*(\d+);", line)):
                out[".".join(stack)][m[1]] = (int(m[2]), "enum value", False)
    return out


def _ours(descriptor, prefix: str = ""):
    name = prefix + descriptor.name
    yield name, descriptor
    for nested in descriptor.nested_types:
        if not nested.GetOptions().map_entry:
            yield from _ours(nested, name + ".")


def test_every_vendored_field_has_upstreams_number_and_type():
    """Rule: a vendored message may leave fields out but never renumber or retype one."""
    up = upstream_fields()
    checked = 0
    for top in xla_hlo_pb2.DESCRIPTOR.message_types_by_name.values():
        for name, d in _ours(top):
            assert name in up, f"{name} is not in the upstream excerpts"
            for f in d.fields:
                number, typ, repeated = up[name][f.name]
                if f.message_type is not None and f.message_type.GetOptions().map_entry:
                    assert typ.startswith("map") and number == f.number
                    continue
                ours = (
                    f.message_type.name
                    if f.message_type is not None
                    else f.enum_type.name
                    if f.enum_type is not None
                    else _SCALARS[f.type]
                )
                is_repeated = (
                    f.is_repeated if hasattr(f, "is_repeated") else f.label == f.LABEL_REPEATED
                )
                assert (f.number, ours, is_repeated) == (number, typ, repeated), f"{name}.{f.name}"
                checked += 1
    for value in xla_hlo_pb2.PrimitiveType.DESCRIPTOR.values:
        assert up["PrimitiveType"][value.name][0] == value.number
    assert checked > 60


def test_vendored_fields_agree_with_tensorflows_own_xla_protos():
    """The same check against the XLA protos TensorFlow ships, where it is installed."""
    hlo_pb2 = pytest.importorskip("tensorflow.compiler.xla.service.hlo_pb2")
    theirs = {
        d.full_name.removeprefix("xla."): d
        for d in (*hlo_pb2.DESCRIPTOR.message_types_by_name.values(),)
    }
    data = pytest.importorskip("tensorflow.compiler.xla.xla_data_pb2")
    theirs.update({d.name: d for d in data.DESCRIPTOR.message_types_by_name.values()})
    for top in xla_hlo_pb2.DESCRIPTOR.message_types_by_name.values():
        other = theirs.get(top.name)
        if other is None:
            continue
        for f in top.fields:
            if f.name in other.fields_by_name:
                assert other.fields_by_name[f.name].number == f.number, f"{top.name}.{f.name}"


def test_hlo_category_and_shape_text_follow_xla():
    """XProf's categories (HloInstruction::ToCategory) and XLA's shape text."""
    assert hlo_category("fusion", "kLoop") == "loop fusion"
    assert hlo_category("fusion", "kCustom") == "custom fusion"
    assert hlo_category("copy", "") == "data formatting"
    assert hlo_category("multiply", "") == "non-fusion elementwise"
    assert hlo_category("custom-call", "") == "custom-call"
    s = xla_hlo_pb2.ShapeProto(element_type=xla_hlo_pb2.BF16, dimensions=[8, 32])
    t = xla_hlo_pb2.ShapeProto(element_type=xla_hlo_pb2.TUPLE, tuple_shapes=[s, s])
    assert shape_text(s) == ("bf16[8,32]", "bf16", 512)
    assert shape_text(t) == ("(bf16[8,32], bf16[8,32])", "bf16", 1024)


@pytest.fixture(scope="module")
def nographs():
    return tw.load(H100 / "jax_cnn_nographs.xplane.pb", progress=False)


def test_hlo_instructions_are_decoded_lazily_once(nographs):
    """Loading decodes no program; the table is built when first read, then kept."""
    assert "hlo_instructions" not in nographs.__dict__
    h = nographs.hlo_instructions
    assert nographs.hlo_instructions is h
    assert schema.mismatches(h, schema.HLO_INSTRUCTIONS) == []


def test_every_kernel_names_an_instruction_of_its_program(nographs):
    """Rule: a kernel's (program_id, hlo_op) is an instruction of that program; its
    metadata.op_name is the JAX op, whose last component is the op type."""
    h = nographs.hlo_instructions
    ev = nographs.events_with("hlo_op", "program_id")
    ev = ev[ev["hlo_op"].notna()]
    keys = set(zip(h["program_id"], h["instruction"]))
    found = [(int(p), str(o)) in keys for p, o in zip(ev["program_id"], ev["hlo_op"])]
    assert len(found) > 500 and all(found)
    conv = h[(h["instruction"] == "cudnn-conv.3") & (h["module"] == "jit_step")].iloc[0]
    assert conv["op_name"] == "jit(step)/jvp()/conv_general_dilated"
    assert conv["op_type"] == "conv_general_dilated"
    assert conv["custom_call_target"] == "__cudnn$convForward"
    assert conv["category"] == "custom-call" and conv["is_entry"]
    assert conv["source_file"].endswith("capture.py") and conv["source_line"] > 0
    assert conv["shape"].startswith("(bf16[64,64,64,64]")
    # Every program of the metadata plane (16 here), by its program_id stat.
    assert h["program_id"].nunique() == 16


def test_a_damaged_program_is_left_out_and_absurd_shapes_are_capped():
    """A proto that does not parse is skipped (the others stay); a shape whose size does not
    fit int64 has no size (0: refused, issue 37) rather than failing the table."""
    import pandas as pd

    from tfprof_widgets.readers.xspace.hlo import hlo_instructions

    good = xla_hlo_pb2.HloProto()
    comp = good.hlo_module.computations.add(name="main", id=1)
    ins = comp.instructions.add(name="huge", opcode="broadcast", id=1)
    ins.shape.element_type = xla_hlo_pb2.F64
    ins.shape.dimensions.extend([1 << 40, 1 << 40])
    good.hlo_module.name = good.hlo_module.entry_computation_name = "m"
    stats = pd.DataFrame(
        {
            "host": ["h", "h", "h"],
            "plane": ["/host:metadata"] * 3,
            "metadata_id": [1, 1, 2],
            "stat": ["Hlo Proto", "program_id", "Hlo Proto"],
            "kind": ["bytes", "uint", "bytes"],
            "int_value": [0, 5, 0],
            "float_value": [float("nan")] * 3,
            "str_value": [good.SerializeToString(), None, b"\xff\xff\xff"],
        }
    )
    h = hlo_instructions(stats)
    assert h["instruction"].tolist() == ["huge"] and h["program_id"].tolist() == [5]
    assert h["result_bytes"].iloc[0] == 0
