"""TensorBoard's tool data (TF 2.2-2.10 run directories, the 2019 Cloud TPU profiler's
DataTable JSON) and TF 2.0/2.1's ``.trace``.

``reader`` decodes a host's tool files into a :class:`~.host.HostToolData`; ``pages`` maps the
overview page and the input pipeline, ``proto_json`` the memory profile and the pod viewer;
``trace_proto`` reads a ``Trace`` of trace_events.proto into event columns.
"""

from .host import HostToolData
from .reader import read_tool_data
from .trace_proto import read_trace_proto

__all__ = ["HostToolData", "read_tool_data", "read_trace_proto"]
