"""How many protobuf messages a file holds, counted before it is parsed.

Python's protobuf runtime builds an object for every message it parses, and reading one from
Python costs hundreds of bytes more: a small file of empty messages needs hundreds of times
its size in memory (docs/speed.md). The readers that go through the runtime (TF 2.0/2.1
traces, tool data) count the messages first, on a *skeleton* of the message type (every
message field read as ``bytes``, so that parsing it builds no object per element), and refuse
a file whose messages would cost more than the memory there is, as the XSpace walker and the
Chrome decoder do for theirs.
"""

from __future__ import annotations

import functools

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
from google.protobuf.message import DecodeError

from ..errors import ProfileTooLargeError
from .limits import available_memory_bytes, fmt_bytes

__all__ = ["check_message_budget", "count_messages"]

_MESSAGE_TYPES = (
    descriptor_pb2.FieldDescriptorProto.TYPE_MESSAGE,
    descriptor_pb2.FieldDescriptorProto.TYPE_GROUP,
)
# Repeated message fields of at most this many elements are looked into (their own nested
# messages counted); longer ones count one message per element, which bounds the work.
_LOOK_INTO = 64


def _flatten(proto: descriptor_pb2.DescriptorProto) -> None:
    """Every message field as bytes and every enum as int32 (the same wire types), no oneof
    (the skeleton is proto2: every singular field has presence): it refers to no other type."""
    for f in proto.field:
        if f.type in _MESSAGE_TYPES:
            f.type = descriptor_pb2.FieldDescriptorProto.TYPE_BYTES
            f.ClearField("type_name")
        elif f.type == descriptor_pb2.FieldDescriptorProto.TYPE_ENUM:
            f.type = descriptor_pb2.FieldDescriptorProto.TYPE_INT32
            f.ClearField("type_name")
        f.ClearField("default_value")
        f.ClearField("oneof_index")
        f.ClearField("proto3_optional")
        f.ClearField("options")
    for name in ("nested_type", "enum_type", "oneof_decl", "options", "extension_range"):
        proto.ClearField(name)


_POOL = descriptor_pool.DescriptorPool()


@functools.cache
def _skeleton(descriptor):
    """The skeleton class of a message type (made once per type)."""
    proto = descriptor_pb2.DescriptorProto()
    descriptor.CopyToProto(proto)
    _flatten(proto)
    proto.name = f"S{_skeleton.cache_info().currsize}"
    file = descriptor_pb2.FileDescriptorProto(
        name=f"tfprof_skeleton/{proto.name}.proto", package="tfprof_skeleton", syntax="proto2"
    )
    file.message_type.add().CopyFrom(proto)
    _POOL.Add(file)
    return message_factory.GetMessageClass(
        _POOL.FindMessageTypeByName(f"tfprof_skeleton.{proto.name}")
    )


def _repeated(field) -> bool:
    repeated = getattr(field, "is_repeated", None)  # protobuf >= 6; before, a label
    if repeated is None:
        return field.label == field.LABEL_REPEATED
    return repeated() if callable(repeated) else bool(repeated)


def _has_messages(descriptor) -> bool:
    return any(f.message_type is not None for f in descriptor.fields)


def count_messages(descriptor, data: bytes, depth: int = 0) -> int:
    """How many messages parsing ``data`` as ``descriptor`` builds (at least: the elements
    of long repeated fields count once each, not their own nested messages). Damaged bytes
    count 0: the real parse says what is wrong with them."""
    skel = _skeleton(descriptor)()
    try:
        skel.ParseFromString(data)
    except DecodeError:
        return 0
    n = 1
    for f in descriptor.fields:
        if f.message_type is None:
            continue
        deeper = depth < 8 and _has_messages(f.message_type)
        if _repeated(f):
            values = getattr(skel, f.name)
            n += len(values)
            if deeper and len(values) <= _LOOK_INTO:
                n += sum(count_messages(f.message_type, v, depth + 1) - 1 for v in values)
        elif skel.HasField(f.name):
            n += count_messages(f.message_type, getattr(skel, f.name), depth + 1)
    return n


def check_message_budget(cls, data: bytes, path: str, what: str, per_message: int) -> int:
    """The messages ``data`` holds as a ``cls``; a :class:`ProfileTooLargeError` when they
    would cost more (``per_message`` bytes each, parsed and read) than the memory there is."""
    n = count_messages(cls.DESCRIPTOR, data)
    avail = available_memory_bytes()
    if avail is not None and n * per_message > avail:
        raise ProfileTooLargeError(
            path,
            f"{what} holds {n:,} protobuf messages in {fmt_bytes(len(data))}; reading them "
            f"needs about {fmt_bytes(n * per_message)}, more than the "
            f"{fmt_bytes(avail)} of memory available",
        )
    return n
