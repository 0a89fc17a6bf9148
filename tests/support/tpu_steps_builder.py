"""A variant of the synthetic TPU capture (tests/support/tpu_builder.py) for the TPU step rules:
the same layout and ops, but some ops are of the categories a TensorCore waits for the host
in (``infeed``, ``outfeed``, ``host send``), differently on each core, and one ``Steps``
event is split in two (so one program run spans two steps).

``scripts/make_golden.py`` runs xprof on it (tests/golden/synthetic_tpu_feeds) and on the
capture without host step markers (:func:`tpu_unmarked_capture`,
tests/golden/synthetic_tpu_unmarked); the tests rebuild them and compare.
"""

from __future__ import annotations

from tpu_builder import tpu_capture
from xspace_builder import XSpaceBuilder

from tfprof_widgets.proto import xplane_pb2

# Per core: instruction -> the HLO category it gets instead of tpu_builder's.
FEEDS = {
    "/device:TPU:0": {
        "ynn_fusion.1": "infeed",
        "wrapped_convert.2": "infeed",
        "reduce_multiply_fusion": "outfeed",
    },
    "/device:TPU:1": {
        "ynn_fusion.1": "infeed",
        "dot_general.4": "host send",
        "reduce_multiply_fusion": "outfeed",
        "convolution": "outfeed",
    },
}
SPLIT_STEP = 1  # this step's 'Steps' event becomes two halves


def _split(line: xplane_pb2.XLine, index: int) -> None:
    events = sorted(line.events, key=lambda e: e.offset_ps)
    half = xplane_pb2.XEvent()
    half.CopyFrom(events[index])
    events[index].duration_ps //= 2
    half.offset_ps += events[index].duration_ps
    half.duration_ps -= events[index].duration_ps
    events.insert(index + 1, half)
    copies = [xplane_pb2.XEvent() for _ in events]
    for copy, event in zip(copies, events):
        copy.CopyFrom(event)
    del line.events[:]
    line.events.extend(copies)


def tpu_feeds_capture() -> XSpaceBuilder:
    """The variant capture (module docstring)."""
    b = tpu_capture()
    for plane in b.space.planes:
        categories = FEEDS.get(plane.name)
        if categories is None:
            continue
        (category_id,) = [i for i, m in plane.stat_metadata.items() if m.name == "hlo_category"]
        for md in plane.event_metadata.values():
            for stat in md.stats:
                if stat.metadata_id == category_id and md.display_name in categories:
                    stat.str_value = categories[md.display_name]
        (steps,) = [line for line in plane.lines if line.name == "Steps"]
        _split(steps, SPLIT_STEP)
    return b


def tpu_unmarked_capture() -> XSpaceBuilder:
    """The synthetic TPU capture without the host's ``train`` step markers (the program
    runs unannotated): the device steps are then the only step groups."""
    b = tpu_capture()
    for plane in b.space.planes:
        names = {i: m.name for i, m in plane.event_metadata.items()}
        for line in plane.lines:
            keep = [e for e in line.events if names.get(e.metadata_id) != "train"]
            if len(keep) == len(line.events):
                continue
            copies = [xplane_pb2.XEvent() for _ in keep]
            for copy, event in zip(copies, keep):
                copy.CopyFrom(event)
            del line.events[:]
            line.events.extend(copies)
    return b
