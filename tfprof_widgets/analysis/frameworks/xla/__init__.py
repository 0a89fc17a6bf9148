"""XLA's rules (:mod:`.rules`) and its TPU device ops, IDLE and duty cycle (:mod:`.tpu`)."""

from .rules import XLA

__all__ = ["XLA"]
