"""Analyses: plain functions of a Run's DataFrames that a user can call too.

One module per tool of TensorBoard's Profile plugin: ``steps`` (step time breakdown),
``overview``, ``input_pipeline``, ``op_stats`` (TF stats), ``kernels`` (GPU kernel stats),
``memory`` (memory profile), ``tf_data`` (tf.data bottleneck analysis); plus the shared
``grouping`` (step ids), ``nesting`` and ``tf_ops`` (op-name rules).
"""

from .grouping import assign_groups

__all__ = ["assign_groups"]
