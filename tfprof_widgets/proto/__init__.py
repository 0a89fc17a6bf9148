"""Our wire-compatible XSpace schema (xplane.proto) and its generated Python module."""
