"""The XLA programs xprof's own tools read, for the golden scripts: xprof's ``tool_names``
conversion writes each program of a capture as ``<module>(<program id>).hlo_proto.pb`` beside
it (as its plugin's module list does), and the HLO tools (``memory_viewer``,
``graph_viewer``) read one of them by ``module_name``. Done on a private copy in a temporary
directory, so nothing is written beside the capture. Needs the dev extra (xprof)."""

from __future__ import annotations

import contextlib
import pathlib
import shutil
import tempfile
from collections.abc import Iterator


@contextlib.contextmanager
def programs_of(xplane: pathlib.Path, prefix: str) -> Iterator[tuple[pathlib.Path, list[str]]]:
    """(the capture's private copy, its programs' ``<module>(<program id>)`` names), while
    the copy and the programs xprof wrote beside it exist."""
    from xprof.convert import raw_to_tool_data as r

    with tempfile.TemporaryDirectory(prefix=prefix) as tmp:
        copy = pathlib.Path(tmp) / xplane.name
        shutil.copy2(xplane, copy)
        r.xspace_to_tool_names([str(copy)])  # writes <module>(<id>).hlo_proto.pb beside it
        found = sorted(pathlib.Path(tmp).glob("*.hlo_proto.pb"))
        yield copy, [f.name.removesuffix(".hlo_proto.pb") for f in found]
