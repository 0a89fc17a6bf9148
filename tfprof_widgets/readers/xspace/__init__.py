"""XSpace captures (``*.xplane.pb``): what TF, TSL/XProf and JAX profilers write.

``reader`` decodes one file into a host's columns (through the C walker ``_wire`` where it
built, protobuf otherwise), ``host_pool`` reads a run's hosts on every core, and
``profile_options`` decodes the options a capture records about itself.
"""

from .reader import read_xspace

__all__ = ["read_xspace"]
