"""PyTorch's rules: how a ``torch.profiler`` (Kineto) trace is told apart.

A run is PyTorch's when its events are ATen operators (``aten::...``), ``ProfilerStep#N``
steps, or carry Kineto's ``External id`` / ``Record function id`` links between an operator
and the runtime calls it makes.
"""

from __future__ import annotations

from .base import Framework, RunNames

_EVENTS = ("aten::", "ProfilerStep#")
_STATS = frozenset({"External id", "Record function id"})


class PyTorch(Framework):
    name = "pytorch"
    title = "PyTorch"
    vocabulary = ("aten::", "ProfilerStep#", "External id", "Record function id")

    def present(self, names: RunNames) -> bool:
        if names.stats & _STATS:
            return True
        return bool(names.events.str.startswith(_EVENTS).any())
