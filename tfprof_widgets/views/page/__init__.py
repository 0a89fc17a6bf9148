"""The page plumbing every view shares: how a view's HTML, script and image reach a notebook's
page, an exported notebook and a report.

``bundle`` joins the viewer's script modules (``views/static``), ``lib`` sends that script
(with plotly.js) to the page once, ``display`` turns figures into the JSON the page draws and
builds a view's outputs, ``png`` renders the static image (optional ``png`` extra) and
``preload`` warms plotly up in a notebook's kernel. Nothing here knows a tool: the views use
it, it never imports them.
"""
