"""Readers: capture files on disk -> columnar :class:`~.columnar.HostTables`, one per host.

``formats`` tells the kinds of file apart and names their hosts, ``discovery`` finds runs
under logdirs, ``xspace`` / ``chrome_trace`` / ``tfprof`` read each kind, and ``assemble``
merges a run's hosts into DataFrames. Readers never import plotly or build widgets; they only
decode and validate files. ``tfprof_widgets.load()`` (in ``loading.py``) puts them together.
"""

from .chrome_trace import read_chrome_trace
from .discovery import find_runs, resolve
from .xspace import read_xspace

__all__ = ["find_runs", "read_chrome_trace", "read_xspace", "resolve"]
