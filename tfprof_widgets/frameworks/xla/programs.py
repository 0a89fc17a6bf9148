"""The XLA programs a run carries, as its analyses read them: where each program's
instructions lie in the instruction table, and the instructions of the programs that ran.

XLA writes every program it ran to the ``/host:metadata`` plane as an ``xla.HloProto``.
Decoding those protos and tabulating their instructions is the readers' work
(``readers/xspace/hlo.py``); a :class:`~tfprof_widgets.Run` decodes each program once
(``run.hlo_modules``) and tabulates them when first read (``run.hlo_instructions``). The
analyses of a capture's device ops often need a few of those programs only (on the JAX H100
capture 2 of 16, 493 of 1,864 instructions): :func:`instructions_of` gives their rows without
tabulating the others. The functions that read the protos are handed in by the run, so that
the analyses never import the readers.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pandas as pd

__all__ = ["instructions_of", "program_rows"]

# (host, program id, xla.HloModuleProto): one decoded program, as run.hlo_modules lists them.
Program = tuple[str, int, object]


def program_rows(
    modules: list[Program], count: Callable[[object], int]
) -> dict[tuple[str, int], range]:
    """(host, program id) -> that program's rows of the instruction table, which lists each
    program's instructions together in ``modules`` order; ``count(module)`` is how many rows
    a program makes, counted from the decoded program without tabulating it."""
    out, start = {}, 0
    for host, program, module in modules:
        stop = start + count(module)
        out[(host, program)] = range(start, stop)
        start = stop
    return out


def instructions_of(
    run,
    programs: set[tuple[str, int]],
    tabulate: Callable[[list[Program], list], pd.DataFrame],
) -> pd.DataFrame:
    """The rows of ``run.hlo_instructions`` of the programs named ((host, program id) pairs),
    labelled by their rows there: taken from that table when the run has built it, else
    ``tabulate(modules, notes)`` of those programs alone (the readers' instruction table, its
    notes going to ``run.warnings``). Text columns are the same; a categorical's categories
    are the values present."""
    spans = run.hlo_program_rows
    chosen = [k for k in spans if k in programs]
    labels = np.concatenate(
        [np.arange(spans[k].start, spans[k].stop, dtype=np.int64) for k in chosen]
        or [np.zeros(0, np.int64)]
    )
    if "hlo_instructions" in vars(run):
        return run.hlo_instructions.iloc[labels]
    modules = [m for m in run.hlo_modules if (m[0], m[1]) in programs]
    table = tabulate(modules, run.warnings)
    table.index = labels
    return table
