"""Whether this process is a notebook's IPython kernel: the preload (:mod:`._preload`) and
the viewer script sent ahead of a view (:mod:`.views._display`) happen there only, never in a
script, a terminal or a test's own IPython shell."""

from __future__ import annotations

import sys

__all__ = ["in_kernel"]


def in_kernel() -> bool:
    """Whether this is an IPython kernel (a notebook's), not a script or a terminal."""
    ipython = sys.modules.get("IPython")
    shell = ipython.get_ipython() if ipython is not None else None
    # A notebook's kernel runs ipykernel's shell; a script or a test that made an IPython
    # shell (the magics' tests do) and imported ipykernel for something else is no kernel.
    zmq = sys.modules.get("ipykernel.zmqshell")
    return shell is not None and zmq is not None and isinstance(shell, zmq.ZMQInteractiveShell)
