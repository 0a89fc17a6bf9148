"""Chrome trace-event JSON (``*.trace.json[.gz]``, PyTorch Kineto's ``*.pt.trace.json``).

``decode`` turns the JSON bytes into typed columns (the C decoder ``_chrome`` first, msgspec
where it is unsure), ``pairs`` binds phases into timed slices and flows into launch links,
``kineto`` puts Kineto's GPU activity on device planes, and ``reader`` assembles a host.
"""

from .reader import read_chrome_trace

__all__ = ["read_chrome_trace"]
