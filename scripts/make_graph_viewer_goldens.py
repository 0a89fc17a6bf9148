"""Make the goldens ``tests/xla/test_xla_graph_viewer.py`` compares ``hlo_graph`` with: xprof's
``graph_viewer`` tool (type ``graph``, format ``dot``) around chosen ops of the bundled XLA
captures, at widths 1, 2 and 3.

    python scripts/make_graph_viewer_goldens.py

xprof's plugin first writes each program of a capture as ``<module>(<program id>).hlo_proto.pb``
beside the capture (its ``tool_names`` conversion), then ``graph_viewer`` reads one of them
(``module_name``) and renders XLA's ``RenderNeighborhoodAround`` of ``node_name`` as DOT. The
DOT names its nodes by pointer; each edge's tooltip names its two instructions ("a -> b"), so
the nodes are named from the edges (a node on no edge by the bold name of its label). The ops:
in every program, the heaviest instruction by our measured time where it ran, else its entry
root, and one instruction inside a fusion body; the first also with ``merge_fusion`` on
(key suffix ``|merged``: fusions drawn as single nodes). Written: ``tests/golden/graph_viewer/
<capture>.json``: per (program, op, width) the sorted node names and (src, dst) edges, or
xprof's error. Each capture is converted in a private copy in a temporary directory,
``use_saved_result`` off. Needs the dev extra (xprof).
"""

from __future__ import annotations

import json
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
sys.path.insert(0, str(ROOT))
from xprof_programs import programs_of  # noqa: E402

DATA = ROOT / "tests" / "data"
OUT = ROOT / "tests" / "golden" / "graph_viewer"
CAPTURES = {
    "jax_cnn_nographs": DATA / "xplane_h100_jax" / "jax_cnn_nographs.xplane.pb",
    **{
        f"jax08_{k}": DATA / "xplane_amd_jax" / f"jax08_{k}.xplane.pb"
        for k in ("attention", "conv", "elementwise", "gemm")
    },
    "jax_cpu_10steps": DATA / "jax_cpu" / "jax_cnn_cpu_10steps.xplane.pb",
}
WIDTHS = (1, 2, 3)
_NODE = re.compile(r"^(\w+) \[label=<(.*?)>, shape=", re.M)
_EDGE = re.compile(r"^(\w+) -> (\w+) \[(.*?)\];$", re.M)
_TIP = re.compile(r'tooltip="([^"]*?) -> ([^"]*?)"')
_BOLD = re.compile(r"<b>(.*?)</b>")


def parse_dot(dot: str) -> dict:
    """Node names and (src, dst) edges of a dumper's DOT: ids named from the instruction
    edges' tooltips ("operand -> user"; a called body's edge names the body, so only its
    head is named from it); the ROOT tag and its edge left out."""
    ids = {m[1]: _BOLD.findall(m[2]) for m in _NODE.finditer(dot) if m[2] != "ROOT"}
    names: dict[str, str] = {}
    raw = []
    for m in _EDGE.finditer(dot):
        src, dst, attrs = m[1], m[2], m[3]
        tip = _TIP.search(attrs)
        if dst not in ids or tip is None:
            continue  # the edge to the ROOT tag
        if "ltail=" not in attrs:
            names.setdefault(src, tip[1])
        names.setdefault(dst, tip[2])
        raw.append((src, dst))
    for i, bold in ids.items():
        if i not in names and bold:
            names[i] = bold[0]
    nodes = sorted(names.get(i, f"?{i}") for i in ids)
    edges = sorted({(names.get(s, f"?{s}"), names.get(d, f"?{d}")) for s, d in raw})
    return {"nodes": nodes, "edges": [list(e) for e in edges]}


def ops_of(xplane: pathlib.Path) -> dict[str, list[str]]:
    """``"<module>(<program id>)"`` -> the ops to render in it (see the module docstring)."""
    import tfprof_widgets as tw
    from tfprof_widgets.frameworks.xla.graph import default_op, program_graph

    run = tw.load(str(xplane))
    out = {}
    for host, program, module in run.hlo_modules:
        g = program_graph(module)
        ops = [default_op(run, g, host, program)]
        inside = [
            str(g.names[k])
            for k in range(len(g.names))
            if g.comp_is_fusion[g.comp[k]] and g.opcode[k] not in ("parameter", "constant")
        ]
        ops += inside[:1]
        out[f"{module.name}({program})"] = list(dict.fromkeys(ops))
    return out


def xprof_graphs(xplane: pathlib.Path, wanted: dict[str, list[str]]) -> dict[str, dict]:
    """``"<program>|<op>|<width>"`` -> xprof's parsed graph (or ``{"error": message}``)."""
    from xprof.convert import raw_to_tool_data as r

    out: dict[str, dict] = {}
    with programs_of(xplane, "tfprof_graphviewer_") as (copy, names):
        for name in names:
            ops = wanted.get(name, [])
            # Each op at each width with fusion bodies drawn, and the first op merged too.
            cases = [(op, w, 0) for op in ops for w in WIDTHS] + [(op, 2, 1) for op in ops[:1]]
            for op, width, merge in cases:
                options = {"module_name": name, "node_name": op, "graph_width": width,
                           "merge_fusion": merge, "type": "graph", "format": "dot"}  # fmt: skip
                params = {"use_saved_result": False, "graph_viewer_options": options}
                key = f"{name}|{op}|{width}" + ("|merged" if merge else "")
                try:
                    data, _ = r.xspace_to_tool_data([str(copy)], "graph_viewer", params)
                except Exception as e:  # noqa: BLE001 - xprof's refusal is the golden
                    out[key] = {"error": str(e).splitlines()[0]}
                    continue
                text = data.decode() if isinstance(data, bytes) else str(data or "")
                out[key] = parse_dot(text) if text else {"error": "no result"}
    return out


def main() -> int:
    OUT.mkdir(parents=True, exist_ok=True)
    for name, path in CAPTURES.items():
        graphs = xprof_graphs(path, ops_of(path))
        # One graph a line: a diff of a regenerated golden shows the graphs that changed.
        rows = sorted(graphs.items())
        lines = [f" {json.dumps(k)}: {json.dumps(v, sort_keys=True)}" for k, v in rows]
        capture = json.dumps(path.relative_to(ROOT).as_posix())
        body = ",\n".join(lines)
        text = f'{{\n "capture": {capture},\n "graphs": {{\n{body}\n }}\n}}\n'
        (OUT / f"{name}.json").write_text(text)
        print(f"{name}: {len(graphs)} graphs")
    return 0


if __name__ == "__main__":
    sys.exit(main())
