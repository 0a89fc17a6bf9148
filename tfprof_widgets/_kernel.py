"""Whether this process is a notebook's IPython kernel: the preload
(:mod:`.views.page.preload`) and the viewer script sent ahead of a view
(:mod:`.views.page.display`) happen there only, never in a script, a terminal or a test's own
IPython shell. And whether the page that runs the cell keeps its outputs listening after the
cell ends (:func:`page_keeps_outputs`). It imports nothing of the package: the magics ask it
too, so it stays at the top, beside the views' page plumbing rather than in it."""

from __future__ import annotations

import sys

__all__ = ["in_kernel", "page_keeps_outputs"]


def in_kernel() -> bool:
    """Whether this is an IPython kernel (a notebook's), not a script or a terminal."""
    ipython = sys.modules.get("IPython")
    shell = ipython.get_ipython() if ipython is not None else None
    # A notebook's kernel runs ipykernel's shell; a script or a test that made an IPython
    # shell (the magics' tests do) and imported ipykernel for something else is no kernel.
    zmq = sys.modules.get("ipykernel.zmqshell")
    return shell is not None and zmq is not None and isinstance(shell, zmq.ZMQInteractiveShell)


def page_keeps_outputs() -> bool:
    """Whether the running cell was sent by JupyterLab (or Notebook 7, built on it): its
    request carries the cell's id with JupyterLab's ``deletedCells`` and ``recordTiming``.
    JupyterLab keeps a cell's outputs listening after the cell ends (until it runs again), so
    a display update sent later (a view's image) still reaches the output, and the notebook it
    saves from the page. nbclient (``nbconvert --execute``, nbval, papermill) stops reading a
    cell's messages when the cell ends, and other front ends are not known to keep them:
    there, what must be in the saved notebook is sent before the cell ends."""
    if not in_kernel():
        return False
    try:
        from IPython import get_ipython

        parent = get_ipython().kernel.get_parent() or {}
    except Exception:  # noqa: BLE001 - no request to read: assume the strictest front end
        return False
    meta = parent.get("metadata") or {}
    return all(k in meta for k in ("cellId", "deletedCells", "recordTiming"))
