"""Readers: capture files on disk -> columnar :class:`~.capture.HostCapture` objects.

Readers never import plotly or build widgets; they only decode and validate files.
"""

from .chrome_trace import read_chrome_trace
from .discovery import find_runs, list_runs, resolve
from .xspace import read_xspace

__all__ = ["find_runs", "list_runs", "read_chrome_trace", "read_xspace", "resolve"]
