"""XProf's graph viewer: the HLO instruction graph around one op of an XLA program, with each
node's measured device time, FLOPs and bytes; equal, node for node and edge for edge, to the
graph xprof 2.24's ``graph_viewer`` tool draws for the same op and width
(tests/xla/test_xla_graph_viewer.py against goldens of ``scripts/make_graph_viewer_goldens.py``).

xprof hands the program and the op to XLA's ``hlo_graph_dumper`` (``RenderNeighborhoodAround``,
no boundary; ``merge_fusion`` turns the fusion bodies off). The dumper

* walks breadth first from the op, in the op's own computation, ``depth`` hops at most: into
  operands (not a tuple's, unless the tuple is the op; a step to or from a bitcast costs no
  hop), into the roots of the computations an instruction calls, and into users (not a
  constant's, nor those of an instruction with more than 16 users: "some users omitted");
* draws that computation with every instruction the walk reached, and inside it the bodies of
  the computations they call: a fusion's body in place of the fusion (the *expanded* fusion)
  unless some of the fusion's operands were left out, another called computation as a cluster
  of its own unless it is a trivial reducer (``add`` of two parameters: printed on the node).
  Every instruction of a drawn body is drawn;
* leaves out constants (printed on their users), broadcasts of a scalar constant inside a
  fusion, get-tuple-elements (an edge from a GTE starts at its tuple), a fusion parameter bound
  to a constant and a tuple parameter whose (more than 3) shown users are all GTEs;
* draws an edge from each drawn instruction's operands (to a fused parameter from its
  fusion's operand; from an expanded fusion, out of its body's root) and from each called
  body's root to its caller.

Node and edge sets here are that dumper's; the layout is ours (:func:`layered_layout`: longest
path layers and barycentre ordering, in numpy). A program is decoded into arrays once per run;
the walk only visits the neighbourhood, so a program of 10^5 instructions costs its decoding
(docs/speed.md) and the few nodes shown; at most ``MAX_DRAWN`` nodes are measured and laid out
(a fusion body of more: the rest counted in ``note``). A malformed program whose operand
links form a cycle is walked safely (the walk marks what it saw) and laid out with the
cycle's edges reversed (said in ``note``).
"""

from __future__ import annotations

import collections
import dataclasses

import numpy as np
import pandas as pd

from ...analysis.memo import once
from ...errors import ProfileError

__all__ = [
    "HloGraph",
    "ProgramGraph",
    "UnknownHloOpError",
    "hlo_graph",
    "layered_layout",
    "neighbourhood",
    "program_graph",
]

#: XLA's dumper: users of an instruction with more are not walked into.
MAX_USERS_TO_RENDER = 16
#: A tuple parameter with more shown users than this, all get-tuple-elements, is merged.
MIN_USERS_TO_OMIT = 3
#: Nodes we lay out and draw at most (the rest listed in ``note``); xprof draws them all.
MAX_DRAWN = 2000
_TUPLE = 13  # xla PrimitiveType TUPLE
_TRIVIAL = {"add", "multiply", "maximum", "minimum", "and", "or", "compare"}


class UnknownHloOpError(ProfileError, KeyError):
    """The op (or program) asked for is not in the run's XLA programs."""

    def __str__(self) -> str:  # KeyError would quote the message
        return f"{self.path}: {self.problem}"


@dataclasses.dataclass
class ProgramGraph:
    """One XLA program's instructions as arrays (index = position in the module's
    computations, in order): names, opcodes, their computation, operands and users (CSR),
    called computations, and per computation its name, root and the fusion that calls it."""

    module: str
    names: np.ndarray
    opcode: np.ndarray
    comp: np.ndarray
    param_no: np.ndarray
    is_tuple: np.ndarray
    scalar_like: np.ndarray
    operands: _Ragged
    users: _Ragged
    called: list[np.ndarray]
    control: _Ragged
    comp_names: list[str]
    comp_root: np.ndarray
    comp_is_fusion: np.ndarray
    comp_caller: np.ndarray
    comp_start: np.ndarray
    by_name: dict[str, int]
    dangling: int = 0


def program_graph(module) -> ProgramGraph:
    """Decode an ``xla.HloModuleProto`` into a :class:`ProgramGraph`. Operand ids that name no
    instruction (a damaged program) are dropped and counted in ``dangling``."""
    comps = list(module.computations)
    ins = [i for comp in comps for i in comp.instructions]
    n = len(ins)
    comp = np.repeat(np.arange(len(comps)), [len(c.instructions) for c in comps])
    ids = np.fromiter((i.id for i in ins), np.int64, n)
    order = np.argsort(ids, kind="stable")
    sorted_ids = ids[order]

    def index(want: np.ndarray) -> np.ndarray:
        if not n:
            return np.full(len(want), -1, np.int64)
        at = np.searchsorted(sorted_ids, want).clip(0, n - 1)
        return np.where(sorted_ids[at] == want, order[at], -1)

    def ragged(field: str) -> _Ragged:
        # One lookup for all instructions' ids (10^5 instructions in a few numpy calls).
        counts = np.fromiter((len(getattr(i, field)) for i in ins), np.int64, n)
        flat = index(np.fromiter(
            (v for i in ins for v in getattr(i, field)), np.int64, int(counts.sum())
        ))  # fmt: skip
        ok = flat >= 0
        counts = np.bincount(np.repeat(np.arange(n), counts)[ok], minlength=n)
        return _Ragged(np.concatenate([[0], np.cumsum(counts)]).astype(np.int64), flat[ok])

    operands = ragged("operand_ids")
    control = ragged("control_predecessor_ids")
    dangling = sum(len(i.operand_ids) for i in ins) - len(operands.flat)
    comp_of_id = {c.id: k for k, c in enumerate(comps)}
    called = [
        np.array([comp_of_id[c] for c in i.called_computation_ids if c in comp_of_id], np.int64)
        if len(i.called_computation_ids) else _NONE
        for i in ins
    ]  # fmt: skip
    users = _users(operands, n)
    comp_root = index(np.array([c.root_id for c in comps], np.int64))
    comp_caller = np.full(len(comps), -1, np.int64)
    opcode = np.array([i.opcode for i in ins], object)
    for k in np.flatnonzero(opcode == "fusion"):
        comp_caller[called[k]] = k
    names = np.array([i.name for i in ins], object)
    return ProgramGraph(
        module=module.name,
        names=names,
        opcode=opcode,
        comp=comp,
        param_no=np.fromiter((i.parameter_number for i in ins), np.int64, n),
        is_tuple=np.fromiter((i.shape.element_type == _TUPLE for i in ins), bool, n),
        scalar_like=np.fromiter(
            (
                i.shape.element_type != _TUPLE and all(d == 1 for d in i.shape.dimensions)
                for i in ins
            ),
            bool,
            n,
        ),  # fmt: skip
        operands=operands,
        users=users,
        called=called,
        control=control,
        comp_names=[c.name for c in comps],
        comp_root=comp_root,
        comp_is_fusion=np.array([c.is_fusion_computation for c in comps], bool),
        comp_caller=comp_caller,
        comp_start=np.concatenate([[0], np.cumsum([len(c.instructions) for c in comps])]),
        by_name=dict(zip(names.tolist(), range(n))),
        dangling=dangling,
    )


_NONE = np.zeros(0, np.int64)


@dataclasses.dataclass
class _Ragged:
    """Per instruction a list of instructions: ``flat[ptr[k]:ptr[k + 1]]``."""

    ptr: np.ndarray
    flat: np.ndarray

    def __getitem__(self, k: int) -> np.ndarray:
        return self.flat[self.ptr[k] : self.ptr[k + 1]]


def _users(operands: _Ragged, n: int) -> _Ragged:
    """Each instruction's users (an instruction once however many operands it takes from
    it), in instruction order: one sort of the (operand, user) pairs."""
    dst = np.repeat(np.arange(n, dtype=np.int64), np.diff(operands.ptr))
    pairs = np.unique(operands.flat * max(n, 1) + dst)
    src, dst = pairs // max(n, 1), pairs % max(n, 1)
    ptr = np.searchsorted(src, np.arange(n + 1)).astype(np.int64)
    return _Ragged(ptr, dst)


# -- XLA's neighbourhood filter and dumper rules ----------------------------------------------
_NORMAL, _SOME_USERS, _SOME_OPERANDS, _ALL_OPERANDS, _HIGHLIGHT = range(5)


def _walk(g: ProgramGraph, root: int, depth: int) -> dict[int, tuple[int, int]]:
    """XLA's MakeNodeRadiusAroundFilter: instruction -> (filter result, hops from root)."""
    nodes: dict[int, list[int]] = {}
    work = collections.deque([(root, 0)])
    while work:
        # As the C++ does: a node popped again is walked again from its new depth (a bitcast
        # hop costs nothing, so a later pop can be nearer), its status reset.
        k, d = work.popleft()
        hops = min(d, nodes[k][1]) if k in nodes else d
        nodes[k] = [_NORMAL, hops]
        if d == depth:
            continue
        if k == root or g.opcode[k] != "tuple":
            bitcast = g.opcode[k] == "bitcast"
            work.extend(
                (o, d if bitcast or g.opcode[o] == "bitcast" else d + 1)
                for o in g.operands[k].tolist()
                if o not in nodes
            )
        work.extend((int(g.comp_root[c]), d + 1) for c in g.called[k] if g.comp_root[c] >= 0)
        if g.opcode[k] == "constant":
            continue
        if len(g.users[k]) > MAX_USERS_TO_RENDER:
            nodes[k][0] = _SOME_USERS
            continue
        work.extend((u, d + 1) for u in g.users[k].tolist() if u not in nodes)
    home = g.comp[root]

    def shown(k: int) -> bool:
        return k in nodes or g.opcode[k] == "constant" or g.comp[k] != home

    for k, v in nodes.items():
        ops = [int(o) for o in g.operands[k]]
        flags = [shown(o) for o in ops]
        if any(flags) and not all(flags):
            v[0] = _SOME_OPERANDS
        elif ops and not any(flags):
            v[0] = _ALL_OPERANDS
        if v[0] == _SOME_USERS and all(shown(u) for u in g.users[k]):
            v[0] = _NORMAL
    nodes[root][0] = _HIGHLIGHT
    return {k: (v[0], v[1]) for k, v in nodes.items()}


class _Dumper:
    """XLA's HloDotDumper: which instructions it draws and the edges between them."""

    def __init__(self, g: ProgramGraph, root: int, nodes: dict, expand: bool) -> None:
        self.g, self.root, self.nodes, self.expand = g, root, nodes, expand
        self.home = g.comp[root]

    def show(self, k: int) -> bool:
        return k in self.nodes or self.g.comp[k] != self.home

    def members(self, c: int) -> range:
        """The instructions of computation ``c`` (the module lists them together)."""
        return range(int(self.g.comp_start[c]), int(self.g.comp_start[c + 1]))

    def show_subcomputation(self, c: int) -> bool:
        g = self.g
        if g.comp_is_fusion[c]:
            f = g.comp_caller[c]
            if f < 0 or not self.show(f) or not self.expand:
                return False
            if f in self.nodes and self.nodes[f][0] in (_SOME_OPERANDS, _ALL_OPERANDS):
                return False
        elif self.trivial(c):
            return False
        return any(self.show(k) for k in self.members(c))

    def trivial(self, c: int) -> bool:
        """XLA's MatchTrivialComputation: two parameters combined by one binary op."""
        g = self.g
        members = self.members(c)
        r = g.comp_root[c]
        if len(members) != 3 or r < 0 or g.opcode[r] not in _TRIVIAL:
            return False
        ops = g.operands[r]
        return len(ops) == 2 and all(g.opcode[o] == "parameter" for o in ops)

    def fusion_expanded(self, k: int) -> bool:
        g = self.g
        return g.opcode[k] == "fusion" and any(
            g.comp_is_fusion[c] and self.show_subcomputation(c) for c in g.called[k]
        )

    def fused_root(self, k: int) -> int:
        for c in self.g.called[k]:
            if self.g.comp_is_fusion[c]:
                return int(self.g.comp_root[c])
        return k

    def param_constant(self, k: int) -> bool:
        g = self.g
        if g.opcode[k] != "parameter" or not g.comp_is_fusion[g.comp[k]]:
            return False
        f = g.comp_caller[g.comp[k]]
        ops = g.operands[f] if f >= 0 else []
        p = g.param_no[k]
        return 0 <= p < len(ops) and g.opcode[ops[p]] == "constant"

    def is_root_of_comp(self, k: int) -> bool:
        return self.g.comp_root[self.g.comp[k]] == k

    def merged(self, k: int) -> bool:
        g = self.g
        if (g.opcode[k] == "get-tuple-element" and not self.is_root_of_comp(k)) or (
            self.param_constant(k)
        ):
            return True
        if g.opcode[k] != "parameter" or not g.is_tuple[k] or g.comp_is_fusion[g.comp[k]]:
            return False
        shown = [u for u in g.users[k] if self.show(u)]
        return len(shown) > MIN_USERS_TO_OMIT and all(
            g.opcode[u] == "get-tuple-element" for u in shown
        )

    def scalar_broadcast(self, k: int) -> bool:
        g = self.g
        ops = g.operands[k]
        return (
            bool(g.comp_is_fusion[g.comp[k]])
            and g.opcode[k] == "broadcast"
            and len(ops) > 0
            and g.opcode[ops[0]] == "constant"
            and bool(g.scalar_like[ops[0]])
        )

    def drawn(self, k: int) -> bool:
        g = self.g
        if (g.opcode[k] == "constant" or self.scalar_broadcast(k)) and not self.is_root_of_comp(k):
            return False
        return not self.merged(k) and not self.fusion_expanded(k)

    def node_for_edge(self, k: int) -> int:
        g = self.g
        if g.opcode[k] == "get-tuple-element" and len(g.operands[k]):
            k = int(g.operands[k][0])
        seen = set()
        while self.fusion_expanded(k) and k not in seen:
            seen.add(k)
            k = self.fused_root(k)
        return k

    def run(self) -> tuple[list[int], list[tuple[int, int, int, str]], set[int]]:
        """(drawn instructions in drawing order, edges (from, to, operand, kind), the
        computations drawn)."""
        drawn: list[int] = []
        edges: list[tuple[int, int, int, str]] = []
        comps: set[int] = set()
        self._computation(self.home, drawn, edges, comps)
        return drawn, edges, comps

    def _computation(self, c: int, drawn, edges, comps) -> None:
        g = self.g
        comps.add(c)
        # The op's own computation: only what the walk reached shows (not a scan of a
        # computation of 10^5 instructions); any other: all of it.
        here = sorted(k for k in self.nodes if g.comp[k] == c) if c == self.home else None
        for k in here if here is not None else self.members(c):
            if not self.show(k):
                continue
            for sub in g.called[k].tolist():
                if not self.show_subcomputation(sub):
                    continue
                if not g.comp_is_fusion[sub] and g.comp_root[sub] >= 0:
                    edges.append((self.node_for_edge(int(g.comp_root[sub])), k, 0, "called"))
                if sub not in comps:
                    self._computation(sub, drawn, edges, comps)
            if self.drawn(k):
                drawn.append(k)
                self._incoming(k, edges)

    def _incoming(self, k: int, edges) -> None:
        g = self.g

        def add(src: int, operand: int, kind: str) -> None:
            src = self.node_for_edge(src)
            if (
                not self.show(src)
                or g.opcode[src] == "constant"
                or self.scalar_broadcast(src)
                or self.merged(src)
            ):
                return
            edges.append((src, k, operand, kind))

        if g.opcode[k] == "parameter" and g.comp_is_fusion[g.comp[k]]:
            f = g.comp_caller[g.comp[k]]
            if g.comp[k] != self.home and f >= 0 and g.param_no[k] < len(g.operands[f]):
                add(int(g.operands[f][g.param_no[k]]), 0, "fusion parameter")
            return
        for i, o in enumerate(g.operands[k].tolist()):
            add(o, i, "operand")
        for o in g.control[k].tolist():
            add(o, 0, "control")


def neighbourhood(
    g: ProgramGraph, op: str, depth: int = 2, expand_fusions: bool = True, path: str = "run"
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The dumper's graph around ``op`` in one program: (nodes, edges). Nodes: the drawn
    instructions (``drawn``) and the fusions drawn expanded (``expanded``: their bodies'
    instructions carry the fusion's name in ``fusion``), each with its hops from ``op``
    (``hops``, -1 inside a body the walk did not reach) and the filter's ``status``. Edges:
    ``src`` -> ``dst`` instruction names, the operand number and the kind ('operand',
    'fusion parameter': from a fusion's operand to the body's parameter, 'called': from a
    called body's root to its caller, 'control')."""
    root = g.by_name.get(op)
    if root is None:
        raise UnknownHloOpError(path, f"no HLO instruction {op!r} in program {g.module}")
    if depth < 0:
        raise ValueError(f"depth must be >= 0, not {depth}")
    walked = _walk(g, root, int(depth))
    dumper = _Dumper(g, root, walked, expand_fusions)
    drawn, edges, comps = dumper.run()
    expanded = [k for k in walked if g.opcode[k] == "fusion" and dumper.fusion_expanded(k)]
    # Expanded fusions inside expanded bodies too (every instruction of a drawn body shows).
    for c in comps:
        for k in dumper.members(c):
            if g.opcode[k] == "fusion" and k not in walked and dumper.fusion_expanded(k):
                expanded.append(k)
    keys = np.array(drawn + sorted(set(expanded)), np.int64)
    caller = g.comp_caller[g.comp[keys]]
    status_names = ("normal", "some users omitted", "some operands omitted",
                    "operands omitted", "highlight")  # fmt: skip
    nodes = pd.DataFrame(
        {
            "instruction": g.names[keys].astype(str),
            "opcode": g.opcode[keys].astype(str),
            "computation": [g.comp_names[c] for c in g.comp[keys]],
            "fusion": np.where(caller >= 0, g.names[np.maximum(caller, 0)], "").astype(str),
            "hops": np.array([walked.get(int(k), (0, -1))[1] for k in keys], np.int64),
            "status": [
                status_names[walked[int(k)][0]] if int(k) in walked else "in body" for k in keys
            ],  # fmt: skip
            "drawn": np.arange(len(keys)) < len(drawn),
            "expanded": np.arange(len(keys)) >= len(drawn),
        }
    )
    e = np.array([t[:3] for t in edges], np.int64).reshape(-1, 3)
    edge_df = pd.DataFrame(
        {
            "src": g.names[e[:, 0]].astype(str),
            "dst": g.names[e[:, 1]].astype(str),
            "operand": e[:, 2],
            "kind": [t[3] for t in edges],
        }
    )
    return nodes, edge_df.drop_duplicates(["src", "dst", "kind"], ignore_index=True)


# -- the graph of a run's program, measured -----------------------------------------------------
@dataclasses.dataclass
class HloGraph:
    """The graph around ``op`` in one program: ``nodes`` (see :func:`neighbourhood`, plus the
    instruction's ``shape``, ``category``, measured ``occurrences`` and ``total_time_us`` (its
    device events, as the HLO stats count them; 0 for one that did not run on its own, as a
    fused instruction), ``flops`` and ``bytes_accessed`` per execution (XLA's cost analysis as
    XProf runs it; NaN inside a fusion body) and the layout's ``layer``/``x``/``y``), ``edges``
    (``src``, ``dst``, ``operand``, ``kind``, ``reversed``: laid out against its direction to
    break a cycle), and ``note`` (what was left out or broken, '' if nothing)."""

    host: str
    program_id: int
    module: str
    op: str
    depth: int
    nodes: pd.DataFrame
    edges: pd.DataFrame
    note: str = ""


def _programs(run) -> list[tuple[str, int, object]]:
    return list(run.hlo_modules)


def _graph_of(run, host: str, program: int, module) -> ProgramGraph:
    return once(run, ("xla.graph.program_graph", host, program), lambda: program_graph(module))


def _path(run) -> str:
    return str(getattr(run, "path", "") or "run")


def instruction_times(run) -> pd.DataFrame:
    """Measured time per (host, program_id, instruction): the HLO stats' rows (GPU kernels,
    TPU ops; ``occurrences``, ``total_time_us``) and, on a CPU, XLA:CPU's thunk events
    (:func:`.cpu.cpu_thunks`); heaviest first."""

    def compute() -> pd.DataFrame:
        from .cpu import cpu_thunks

        s = run.hlo_stats
        parts = [
            pd.DataFrame(
                {
                    "host": s["host"].astype(str).to_numpy(),
                    "program_id": s["program_id"].to_numpy(np.uint64).astype(np.int64),
                    "instruction": s["hlo_op_name"].astype(str).to_numpy(),
                    "occurrences": s["occurrences"].to_numpy(np.int64),
                    "total_time_us": s["total_time_us"].to_numpy(float),
                }
            )
        ]
        t = cpu_thunks(run)
        if len(t):
            h = run.hlo_instructions
            dur = run.events["dur_us"].to_numpy(float)[t["row"].to_numpy()]
            parts.append(
                pd.DataFrame(
                    {
                        "host": t["host"].astype(str).to_numpy(),
                        "program_id": t["program_id"].to_numpy(np.int64),
                        "instruction": h["instruction"]
                        .astype(str)
                        .to_numpy()[t["instruction"].to_numpy()],
                        "occurrences": 1,
                        "total_time_us": dur,
                    }
                )
            )
        out = pd.concat(parts, ignore_index=True)
        out = out.groupby(["host", "program_id", "instruction"], as_index=False, sort=False).sum()
        return out.sort_values("total_time_us", ascending=False, kind="stable", ignore_index=True)

    return once(run, "xla.graph.instruction_times", compute)


def default_op(run, g: ProgramGraph, host: str, program: int) -> str:
    """The program's heaviest instruction by measured time (:func:`instruction_times`), else
    its entry computation's root."""
    t = instruction_times(run)
    mine = t[(t["host"] == host) & (t["program_id"] == program)]
    names = [n for n in mine["instruction"] if n in g.by_name]
    if names:
        return names[0]
    entry = len(g.comp_names) - 1  # XLA lists the entry computation last
    root = int(g.comp_root[entry]) if len(g.comp_root) else -1
    return str(g.names[root]) if root >= 0 else (str(g.names[-1]) if len(g.names) else "")


def _choose(run, op: str | None, program: int | str | None):
    """(host, program id, module, ProgramGraph, op) for the arguments of :func:`hlo_graph`."""
    mods = _programs(run)
    if not mods:
        raise UnknownHloOpError(_path(run), "the capture carries no XLA program (no HLO)")
    if program is not None:
        mods = [m for m in mods if str(m[1]) == str(program) or m[2].name == str(program)]
        if not mods:
            raise UnknownHloOpError(_path(run), f"no XLA program {program!r} in this run")
    if op is None:
        t = instruction_times(run)
        if len(t) and program is None:
            host, pid = str(t["host"].iloc[0]), int(t["program_id"].iloc[0])
            mods = [m for m in mods if m[0] == host and m[1] == pid] or mods
        host, pid, module = mods[0]
        g = _graph_of(run, host, pid, module)
        return host, pid, module, g, default_op(run, g, host, pid)
    # Instruction names repeat across programs ('copy.1'): the program where it ran longest.
    t = instruction_times(run)
    ran = t[t["instruction"] == op]
    busiest = dict(zip(zip(ran["host"], ran["program_id"]), ran["total_time_us"]))
    mods = sorted(mods, key=lambda m: -busiest.get((m[0], m[1]), -1.0))
    for host, pid, module in mods:
        g = _graph_of(run, host, pid, module)
        if op in g.by_name:
            return host, pid, module, g, op
    raise UnknownHloOpError(
        _path(run),
        f"no HLO instruction {op!r} in "
        + (f"program {program!r}" if program is not None else "any XLA program of this run"),
    )


def hlo_graph(
    run, op: str | None = None, depth: int = 2, program: int | str | None = None,
    expand_fusions: bool = True,
) -> HloGraph:  # fmt: skip
    """XProf's graph viewer around ``op`` (an HLO instruction name; default the heaviest
    instruction by device time) in ``program`` (a program id or module name; default the one
    holding ``op``), ``depth`` hops wide (xprof's ``graph_width``), fusion bodies drawn in place
    of their fusions unless ``expand_fusions`` is off (xprof's ``merge_fusion``); measured and
    laid out. Raises :class:`UnknownHloOpError` naming an op or program the run lacks."""
    host, pid, module, g, op = _choose(run, op, program)
    nodes, edges = neighbourhood(g, op, depth, expand_fusions, _path(run))
    note = []
    if g.dangling:
        note.append(f"{g.dangling:,} operand links name no instruction of the program (left out)")
    drawn = nodes["drawn"].to_numpy()
    if drawn.sum() > MAX_DRAWN:
        # Keep what the walk reached (nearest first), then bodies in program order, and
        # every expanded fusion (the op may be one).
        near = np.where(nodes["hops"].to_numpy() >= 0, nodes["hops"].to_numpy(), 1 << 40)
        rank = np.argsort(np.where(drawn, near, -1), kind="stable")
        kept = np.sort(rank[: MAX_DRAWN + int((~drawn).sum())])
        note.append(f"{int(drawn.sum()) - MAX_DRAWN:,} of {int(drawn.sum()):,} instructions "
                    f"not drawn (too many)")  # fmt: skip
        nodes = nodes.iloc[kept].reset_index(drop=True)
        keep = set(nodes["instruction"])
        edges = edges[edges["src"].isin(keep) & edges["dst"].isin(keep)].reset_index(drop=True)
    nodes = _measured(run, host, pid, nodes)
    index = {n: i for i, n in enumerate(nodes["instruction"])}
    drawn = nodes["drawn"].to_numpy()
    src = edges["src"].map(index).to_numpy(np.int64)
    dst = edges["dst"].map(index).to_numpy(np.int64)
    group = pd.factorize(nodes["fusion"].where(nodes["fusion"] != ""))[0]
    layer, x, rev = layered_layout(len(nodes), src, dst, drawn, group=group)
    if rev.any():
        cyc = ", ".join(f"{a} -> {b}" for a, b in zip(edges["src"][rev], edges["dst"][rev]))
        note.append(f"the program's operand links form a cycle (malformed): laid out with "
                    f"{int(rev.sum())} edge(s) reversed ({cyc[:200]})")  # fmt: skip
    nodes = nodes.assign(layer=layer, x=x, y=-layer.astype(float))
    edges = edges.assign(reversed=rev)
    return HloGraph(host, pid, module.name, op, int(depth), nodes, edges, "; ".join(note))


def _measured(run, host: str, program: int, nodes: pd.DataFrame) -> pd.DataFrame:
    """``nodes`` with shape, category, measured time and costs (see :class:`HloGraph`)."""
    names = nodes["instruction"].to_numpy()
    h = run.hlo_instructions_of({(host, program)})
    h = h[h["program_id"].to_numpy() == program]
    first = h.drop_duplicates("instruction").set_index("instruction")
    shape = first["shape"].reindex(names).fillna("").astype(str).to_numpy()
    category = first["category"].astype(str).reindex(names).fillna("").to_numpy()
    t = instruction_times(run)
    by = t[(t["host"] == host) & (t["program_id"] == program)].set_index("instruction")
    total = by["total_time_us"].reindex(names).fillna(0.0).to_numpy(float)
    occ = by["occurrences"].reindex(names).fillna(0).to_numpy(np.int64)
    top = nodes["fusion"].to_numpy() == ""
    flops = np.full(len(names), np.nan)
    nbytes = np.full(len(names), np.nan)
    if top.any():
        from .cost import costs_by_instruction

        keys = [(host, program, str(n)) for n in names[top]]
        costs = costs_by_instruction(run, {(host, program)}, keys)
        got = [costs.get(k) for k in keys]
        flops[top] = [c[0] if c else np.nan for c in got]
        nbytes[top] = [c[2] if c else np.nan for c in got]
    return nodes.assign(
        shape=shape, category=category, occurrences=occ, total_time_us=total,
        flops=flops, bytes_accessed=nbytes,
    )  # fmt: skip


# -- layout -------------------------------------------------------------------------------------
def layered_layout(
    n: int,
    src: np.ndarray,
    dst: np.ndarray,
    placed: np.ndarray | None = None,
    sweeps: int = 4,
    group: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A layered (Sugiyama-style) layout of ``n`` nodes and edges ``src -> dst``: (layer per
    node, x per node, which edges were reversed to break cycles). Layers are longest paths
    from the sources (operands above their users; a source just above its first user);
    within a layer nodes are ordered by the
    mean position of their neighbours in the layer above, then below (``sweeps`` passes), and
    spaced one apart, centred. Nodes of one ``group`` (>= 0: a fusion's body) stay side by
    side in each layer, the group placed by its members' mean. Nodes not ``placed``
    (expanded fusions: drawn as the box around their body) take no slot: layer -1, x NaN."""
    src = np.asarray(src, np.int64)
    dst = np.asarray(dst, np.int64)
    placed = np.ones(n, bool) if placed is None else np.asarray(placed, bool)
    ok = (src >= 0) & (dst >= 0) & (src != dst)
    ok &= placed[np.maximum(src, 0)] & placed[np.maximum(dst, 0)]
    rev = np.zeros(len(src), bool)
    s, d = src.copy(), dst.copy()
    layer = np.zeros(n, np.int64)
    indeg = np.bincount(d[ok], minlength=n)
    done = ~placed
    live = ok.copy()
    while not done.all():
        ready = ~done & (indeg == 0)
        if not ready.any():  # a cycle: reverse the edges into its least-entered node
            rest = np.flatnonzero(~done)
            k = rest[np.argmin(indeg[rest])]
            into = live & (d == k)
            rev[into] = True
            s[into], d[into] = d[into], s[into]
            indeg = np.bincount(d[live], minlength=n)
            continue
        done |= ready
        out = live & ready[s]
        np.maximum.at(layer, d[out], layer[s[out]] + 1)
        live &= ~out
        indeg = np.bincount(d[live], minlength=n)
    # Sources (parameters, iotas) sit just above their first user, not all on the top layer.
    so, do = s[ok], d[ok]
    src_only = placed & (np.bincount(do, minlength=n) == 0) & (np.bincount(so, minlength=n) > 0)
    at = src_only[so]
    below = np.full(n, np.iinfo(np.int64).max)
    np.minimum.at(below, so[at], layer[do[at]])
    layer = np.where(src_only, below - 1, layer)
    group = np.full(n, -1, np.int64) if group is None else np.asarray(group, np.int64)
    x = _order(n, layer, s[ok], d[ok], placed, sweeps, group)
    layer[~placed] = -1
    return layer, x, rev


def _order(n, layer, s, d, placed, sweeps, group) -> np.ndarray:
    """Barycentre ordering within layers, all layers at once (one sort keyed by layer first);
    x of each node (not placed: NaN)."""
    idx = np.flatnonzero(placed)
    lay = layer[idx]
    # A node outside any group is a group of its own.
    gid = np.where(group >= 0, group, group.max(initial=-1) + 1 + np.arange(n))[idx]
    _, pair = np.unique(np.stack([lay, gid]), axis=1, return_inverse=True)
    pair = pair.reshape(-1)
    pos = np.zeros(n)

    def place(order: np.ndarray) -> None:
        ranked = lay[order]
        pos[idx[order]] = np.arange(len(order)) - np.searchsorted(ranked, ranked)

    place(np.lexsort((idx, lay)))
    for sweep in range(sweeps):
        a, b = (s, d) if sweep % 2 == 0 else (d, s)  # down: by operands; up: by users
        total = np.bincount(b, weights=pos[a], minlength=n)
        count = np.bincount(b, minlength=n)
        bary = np.where(count > 0, total / np.maximum(count, 1), pos)[idx]
        mean = np.bincount(pair, weights=bary) / np.bincount(pair)
        place(np.lexsort((pos[idx], bary, gid, mean[pair], lay)))
    x = np.full(n, np.nan)
    width = np.bincount(lay - lay.min(initial=0), minlength=1) if len(idx) else np.zeros(1)
    x[idx] = pos[idx] - (width[lay - lay.min(initial=0)] - 1) / 2
    return x
