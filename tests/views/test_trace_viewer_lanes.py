"""The trace viewer's host lanes hold the events XProf's trace viewer holds (issue 42 item 6):
XProf leaves out its "internal" events (tsl's IsInternalEvent: MemoryAllocation,
MemoryDeallocation and tf.data's Produce/Consume bookkeeping), which the memory profile and the
input pipeline read instead; on the JAX H100 captures the python3 lane held 190 of them
(2,607 and 2,187 events where xprof 2.24 shows 2,417 and 1,997). Compared, lane by lane, with
the event counts of xprof's trace_viewer in tests/golden/<capture>/trace_lines.json (xprof's
classic and streaming ``trace_viewer@`` converters agree on these two captures).

Not matched, on purpose, on JAX 0.8's AMD captures: there xprof's two converters disagree with
each other on ``ThreadpoolListener`` markers (the classic one drops the zero-length
``ThreadpoolListener::Record``; the streaming one keeps it and adds a derived
``ThreadpoolListener::Region`` per StartRegion/StopRegion pair, which no event of the capture
is); we draw the capture's own events less the internal ones."""

from __future__ import annotations

import json
import warnings

import pytest
from conftest import ROOT

import tfprof_widgets as tw

DATA = ROOT / "tests" / "data"
CAPTURES = {
    "jax_cnn_graphs": DATA / "xplane_h100_jax" / "jax_cnn_graphs.xplane.pb",
    "jax_cnn_nographs": DATA / "xplane_h100_jax" / "jax_cnn_nographs.xplane.pb",
}


def _host_lanes(run) -> dict[str, int]:
    """Our host lanes' event counts, by the line name XProf names the thread by."""
    meta = tw.views.timeline(run).meta()
    host = {i for g in meta["groups"] if g["label"].startswith("/host:") for i in g["lanes"]}
    out = {}
    for i, lane in enumerate(meta["lanes"]):
        if i in host:
            out[lane["tooltip"].split(" (id ")[0]] = lane["n"]
    return out


@pytest.mark.parametrize("name", sorted(CAPTURES))
def test_host_lanes_hold_xprofs_events(name):
    gold = json.loads((ROOT / "tests" / "golden" / name / "trace_lines.json").read_text())
    want = gold["/host:CPU"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        run = tw.load(CAPTURES[name], progress=False)
    assert _host_lanes(run) == want
    # the events left out of the drawing are still the run's, for the analyses and search
    ev = run.events
    assert (ev["name"].astype(str) == "MemoryAllocation").sum() > 0
