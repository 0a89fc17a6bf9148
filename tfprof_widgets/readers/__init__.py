"""Readers: capture files on disk -> columnar :class:`~.columnar.HostTables`, one per host.

One subpackage per format: ``xspace`` (``.xplane.pb``, with the C walker and the host pool),
``chrome`` (Chrome/Kineto JSON, with the C decoder and the flow pairing), ``tool_data``
(TensorBoard's tool-data files and TF 2.0's ``.trace``) and ``tfprof`` (TF1 tfprof and
RunMetadata). Beside them, what every format shares: ``formats`` tells the kinds of file
apart and names their hosts, ``discovery`` finds runs under logdirs, ``columnar`` holds the
tables every reader returns, ``assemble`` merges a run's hosts into DataFrames, ``limits``
bounds memory and ``text`` keeps undecodable text. Readers never import plotly or build
widgets; they only decode and validate files. ``tfprof_widgets.load()`` (in ``loading.py``)
puts them together.
"""

from .chrome import read_chrome_trace
from .discovery import find_runs, resolve
from .xspace import read_xspace

__all__ = ["find_runs", "read_chrome_trace", "read_xspace", "resolve"]
