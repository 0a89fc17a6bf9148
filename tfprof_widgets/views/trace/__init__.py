"""The trace viewer (``tfprof_widgets.views.timeline``): a run's events drawn on a canvas,
live in a kernel and offline in an exported notebook or a report.

``model`` holds every timed event in lanes and rows and answers windows, searches and
lookups (:class:`~.model.TraceModel`, built once per run as ``run.trace_model``); ``lanes``
names the lanes, ``rows`` packs a lane's events into rows, ``marks`` is what one window sends
to the page and how it is packed; ``details`` answers the details panel from the run's
per-event stats and flows (:class:`~.details.TraceIndex`); ``viewer`` is the view itself
(:class:`~.viewer.TraceViewer`, the kernel <-> page protocol, the offline payload) and
``static`` its static image. The page's script is ``views/static/trace/``.
"""
