"""Each framework's rules in one place, asked by the neutral analyses (a dialect each).

``base`` holds the contract (:class:`~.base.Framework`: step markers, op names, device-op
attribution, input ops, advice) with XProf's defaults, and says of each hook how several
frameworks' answers combine (rules in ``combine``); ``tensorflow``, ``xla`` and ``pytorch``
fill it in, each with its tables' schema and the analyses only its captures have;
``registry`` lists them once (``PACKAGES``), tells which frameworks a run holds
(``run.framework``) and asks their rules together. The neutral analyses (steps, op stats,
overview, input pipeline, kernels) never name a framework.
"""

from .base import UNKNOWN_OP, Advice, DeviceOps, Framework, RunNames
from .registry import FRAMEWORKS, PACKAGES, RunFrameworks, framework_of, frameworks_in, rules_of

# The analyses only one framework has, as run attributes: each framework package lists its own.
ANALYSES = tuple(a for p in PACKAGES for a in p.ANALYSES)

__all__ = [
    "ANALYSES",
    "FRAMEWORKS",
    "PACKAGES",
    "UNKNOWN_OP",
    "Advice",
    "DeviceOps",
    "Framework",
    "RunFrameworks",
    "RunNames",
    "framework_of",
    "frameworks_in",
    "rules_of",
]
