"""TF1-style profiles: tfprof's serialized ``ProfileProto`` and ``RunMetadata`` step stats."""

from .reader import read_run_metadata, read_tfprof_profile

__all__ = ["read_run_metadata", "read_tfprof_profile"]
