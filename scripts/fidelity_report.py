"""How close our numbers are to the reference tools' on every capture they read.

    python scripts/fidelity_report.py [--shared DIR] [--markdown] [--no-pytorch] [CAPTURE ...]

XSpace captures (``.xplane.pb``): those of ``sample_profiles/``, the team's shared captures
(default ``../shared/captures``: TensorFlow on 8 GPUs, JAX on an H100 and an AMD MI300X), the
JAX and TensorFlow-with-XLA CPU captures of ``tests/data``, that JAX capture cut to 5 steps
(``tests/support/jax_cpu_first_steps.py``) and the TPU captures the test builders make
(``tests/support/tpu_builder.py``, ``tests/support/tpu_rates_builder.py``: shaped like
libtpu's; no real TPU capture is public). For each, xprof's converters (overview_page,
framework_op_stats, memory_profile, kernel_stats, hlo_stats, input_pipeline_analyzer; on
XLA captures roofline_model and op_profile: each call on a private copy of the file with
``use_saved_result`` off, so nothing is written beside the capture) against our analyses,
figure by figure (``tests/support/fidelity_figures.py``). Where we show a user a figure other than
XProf's, the comparison reads the column that keeps XProf's (``xprof_roofline_efficiency``,
``xprof_flop_utilization``, INPUT_OPS ``time_percent_xprof``, ``peak_bytes_lifetime_xprof``)
and a row ``... shown`` gives the figure the user reads, marked as a documented difference.

PyTorch traces (``kineto/*.json.gz`` of the shared captures): HTA's temporal and kernel-type
breakdowns (on a copy, ``HTA_DISABLE_NS_ROUNDING=1``: see tests/pytorch/test_pytorch.py for why not
its rounding) and torch-tb-profiler 0.4.3's DataLoader share (its figures as
``tests/golden/kineto`` keeps them: ``scripts/make_hta_golden.py``), beside
``OverviewSummary.dataloader_percent_tb`` and the verdict's input share.

Each row gets a status: equal (to the printed digits: xprof's percents, HTA's shares),
within 0.5 %, documented (a deliberate difference, listed with its reason and its test:
:data:`DELIBERATE`) or differs. The report prints a summary per capture, the documented
differences and every figure, as aligned text or with ``--markdown`` as Markdown
(docs/fidelity.md is this output on the shared captures). Rows come in the same order on
every run (xprof's allocators, a map in its output, by name). Needs the dev extra (xprof,
HTA).
"""

from __future__ import annotations

import argparse
import dataclasses
import fnmatch
import os
import pathlib
import sys
import warnings

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests" / "support"), str(ROOT / "scripts")]

from fidelity_figures import PERCENTS, our_figures, paired_figures, tool_of, xprof_figures  # noqa: E402

TOOLS = (
    "overview_page",
    "framework_op_stats",
    "memory_profile",
    "kernel_stats",
    "hlo_stats",
    "input_pipeline_analyzer",
)
XLA_TOOLS = ("roofline_model", "op_profile")
BUNDLED = ("jax_cpu/jax_cnn_cpu_10steps.xplane.pb", "tf_xla_cpu/keras_fit_jit.xplane.pb")
HEAD = ("capture", "tool", "figure", "ours", "reference", "difference", "status")


@dataclasses.dataclass(frozen=True)
class Deliberate:
    """A difference we keep on purpose: on captures matching ``captures`` (fnmatch of the
    capture's name), figures matching ``figures``; ``why`` says what and where it is tested."""

    key: str
    captures: str
    figures: str
    why: str


DELIBERATE = (
    Deliberate(
        "D1",
        "*",
        "* shown",
        "The figure a user reads where XProf's breaks an invariant; XProf's is in the row "
        "above it (its own column). Roofline efficiency and FLOP/HBM utilisation capped at 1: "
        "no op above its roof (issue 36 items 1, 2, 10; tests/xla/test_trust_xla.py). Op "
        "profile FLOP utilisation is the node's own rate over the peak, XProf's the node's "
        "FLOPs over the whole tree's time (tests/xla/test_xla_roofline.py). Input-op share: the "
        "share of the host's input time an op's calls cover, each instant once, within "
        "[0, 100]; XProf's divides summed durations by the input ops' self time (152 % for "
        "resnet50's DataLoader; tests/views/test_issue36_words.py). Memory lifetime peak: the "
        "heap counter's largest reading; XProf keeps the last event's in file order, an "
        "earlier and lower one on a multi-thread host "
        "(tests/analysis/test_memory_lifetime_peak.py).",
    ),
    Deliberate(
        "D2",
        "*gpu_shaped*",
        "hlo_*",
        "XProf 2.24's hlo_stats lists a GPU kernel of a TensorFlow capture without XLA as an "
        "HLO op of program 0 named '<TF op>/<kernel>'; ours lists XLA's HLO ops only (a "
        "capture without XLA programs has none; its kernels are in kernel_stats and op stats, "
        "equal to XProf's).",
    ),
    Deliberate(
        "D3",
        "*keras_fit*",
        "steps|input_statement",
        "Keras 3 callback batches (and a plain fit's train-function calls) count as steps; "
        "XProf finds none and says 'No step time measured' (docs/analyses.md; "
        "tests/tensorflow/test_tf_xla.py::test_steps_are_the_train_function_calls_where_xprof_finds_none).",
    ),
    Deliberate(
        "D4",
        "*jax_cnn_graphs*",
        "*",
        "Under CUDA graphs we attribute the kernels inside a graph to their HLO instruction "
        "(issue 36 item 5, beyond XProf, which leaves them out). select_and_scatter and "
        "select_n gain graph kernels, so their rows are beyond_xprof as a whole and leave "
        "XProf's comparison: XProf's 1,796.7 µs of them count to IDLE here (the whole IDLE "
        "gap), they leave the top ten and the row count, and their occurrences change the "
        "op placement by executions (tests/xla/test_xla_command_buffers.py). In the op profile "
        "the graph kernels' time goes to the program and the categories holding their ops "
        "(4 nodes), and XProf's FLOP utilisation, FLOPs over the whole tree's time at peak, "
        "changes with that time on the nodes with FLOPs (12 more; 12 of 28 equal).",
    ),
    Deliberate(
        "D5",
        "*jax08_*",
        "*gemm_custom_calls",
        "JAX's dot_general lowered to a GEMM custom call (custom-call.1): XProf 2.24's cost "
        "model gives it no FLOPs on ROCm (bound by 'Unknown', utilisation 0); ours counts the "
        "dot's FLOPs from its operands and dimension numbers, as it does on the H100, where "
        "XProf agrees. Every other op row and node equals XProf's "
        "(roofline_ops_gemm_custom_calls and op_profile_nodes_gemm_custom_calls count them).",
    ),
    Deliberate(
        "D6",
        "*",
        "op_profile_duplicate_groups|op_profile_fused_instruction_nodes",
        "XProf groups ops sharing a deduplicated_name under '<name> and its duplicate(s)' and "
        "lists each fusion's fused instructions (no time); we keep one level of ops: an op "
        "in a group is compared at its category, by name, and fused instructions are left "
        "out (tests/xla/test_xla_tpu_rates.py). The JAX H100 captures have no deduplicated "
        "instruction and XProf lists no fused instruction there: their op profile equals "
        "XProf's node for node (tests/analysis/test_fidelity_report.py).",
    ),
    Deliberate(
        "D7",
        "*kineto/*",
        "verdict input % shown",
        "The PyTorch verdict quotes the steps table's input share (the overview's and the "
        "input pipeline's figure: 40.1 % on resnet50), not torch-tb-profiler's DataLoader "
        "role share (33.4 %: its own step spans to the end of each step's GPU work, "
        "DataLoader counted only where no kernel, copy or runtime call runs), which stays in "
        "OverviewSummary.dataloader_percent_tb (issue 36 item 7; "
        "tests/views/test_issue36_words.py).",
    ),
    Deliberate(
        "D8",
        "*cpu*",
        "host_op_rows shown",
        "XLA:CPU's thunks (ours, beyond XProf) are host op rows named by their HLO "
        "instruction's framework op; XProf 2.24 counts none of them (no op at all on a JAX "
        "CPU capture, the TF ops only with TF's jit_compile) "
        "(tfprof_widgets/frameworks/xla/cpu.py; tests/xla/test_xla_cpu_ops.py).",
    ),
    Deliberate(
        "D9",
        "*jax_cpu_5steps*",
        "*",
        "Step 0 compiles the program (JAX's backend_compile_and_load, 1.1 s). XProf types "
        "compile events host compute and, with five steps or fewer, averages that step in "
        "(its verdict: 35.7 % All Others); ours types them compile time and leaves a step "
        "that is mostly compile out of the averages, saying so (issue 36 items 12, 19; "
        "tests/xla/test_fidelity_jax_cpu.py: per step, XProf's host compute = ours + compile).",
    ),
)


TPU_NAMES = Deliberate(
    "D10",
    "built/*tpu*",
    "input_statement|top_device_ops|device_op_rows|xla_device_ops_matching",
    "A TPU op without a tf_op is named by its instruction's framework op (metadata.op_name), "
    "typed by its HLO opcode where it has none; XProf 2.24 names it by the HLO op, type "
    "'Unknown' (issue 36 item 9). Times are XProf's: each row sums XProf's rows of its HLO "
    "ops, so two HLO ops of one framework op make one row (device_op_rows, the top ten) "
    "(tests/xla/test_xla_tpu.py). XProf's TPU overview leaves the input statement empty; ours "
    "states it (tests/xla/test_xla_tpu_steps.py).",
)
HTA_ROUNDING = Deliberate(
    "D11",
    "kineto/*",
    "hta *",
    "HTA 0.5's kernel-type breakdown truncates each stretch of kernels running at once to "
    "whole µs, and its temporal breakdown counts a host op carrying a 'stream' arg as GPU "
    "activity; ours keeps the fractional µs and the GPU's own events (the eager B200's "
    "sub-µs memsets: MEMORY 6.9 % against HTA's 6.6 %). tests/pytorch/test_pytorch.py holds ours "
    "within 0.1 point (temporal) and 0.5 point (kernel types) of HTA without its rounding.",
)
DELIBERATE = (*DELIBERATE, TPU_NAMES, HTA_ROUNDING)
# HTA prints its kernel-type shares to 0.1 point and its temporal shares to 0.01 point: a
# figure within half of that is equal.
HTA_PRINTED = {"hta kernel": 0.05, "hta ": 0.005}


def captures(shared: pathlib.Path) -> list[pathlib.Path]:
    """The XSpace captures: the samples, the shared ones and the bundled CPU captures."""
    found = sorted((ROOT / "sample_profiles").rglob("*.xplane.pb"))
    if shared.is_dir():
        found += sorted(shared.rglob("*.xplane.pb"))
    return found + [ROOT / "tests" / "data" / p for p in BUNDLED]


def built_captures(tmp: pathlib.Path) -> list[pathlib.Path]:
    """Captures made from the test builders and bundled data, written to ``tmp``: the TPU
    captures and the JAX CPU capture cut to 5 steps (tests/support/jax_cpu_first_steps.py)."""
    from jax_cpu_first_steps import first_steps
    from tpu_builder import tpu_capture
    from tpu_rates_builder import BUILDERS

    out = [tpu_capture().write(tmp / "synthetic_tpu.xplane.pb")]
    out += [b().write(tmp / f"{name}.xplane.pb") for name, b in sorted(BUILDERS.items())]
    return out + [first_steps(tmp / "jax_cpu_5steps.xplane.pb")]


def capture_name(path: pathlib.Path, built: pathlib.Path | None = None) -> str:
    """A short name a reader can find: ``sample/<run>/<host>`` for a sample's log folder,
    ``built/<name>`` for one made here, else the last two path parts."""
    parts = path.parts
    stem = path.name.removesuffix(".xplane.pb")
    if "sample_profiles" in parts and "plugins" in parts:
        run = parts[parts.index("sample_profiles") + 1 : parts.index("plugins")]
        return "/".join(("sample", *run, stem))
    if built is not None and path.is_relative_to(built):
        return f"built/{stem}"
    return f"{path.parent.name}/{path.name}"


def _show(v) -> str:
    if isinstance(v, float):
        return f"{v:,.3f}"
    if isinstance(v, list):
        return f"{len(v)} ops"
    text = str(v)
    return text if len(text) <= 40 else text[:37] + "..."


def _difference(key: str, ours, theirs) -> str:
    if isinstance(theirs, (int, float)) and not isinstance(theirs, bool):
        if ours is None:
            return "missing"
        a, b = float(ours), float(theirs)
        if a == b or (key in PERCENTS.values() and abs(a - b) <= 0.05):
            return "0"  # percents: xprof prints one digit
        printed = next((v for k, v in HTA_PRINTED.items() if key.startswith(k)), None)
        if printed is not None and key.endswith("%") and abs(a - b) <= printed + 1e-9:
            return "0"
        return f"{(a - b) / abs(b):+.2%}" if b else "reference 0"
    if ours is None:
        return "missing"
    return "same" if ours == theirs else "differs"


def status(capture: str, figure: str, difference: str) -> str:
    """equal, within 0.5 %, documented (Dn) or differs."""
    if difference in ("0", "same"):
        return "equal"
    if difference.endswith("%") and abs(float(difference[:-1])) <= 0.5:
        return "within 0.5 %"
    # The generic rule (D1) last: a capture's own reason first.
    for d in sorted(DELIBERATE, key=lambda d: d.captures == "*"):
        figures = d.figures.split("|")
        if fnmatch.fnmatch(capture, d.captures) and any(
            fnmatch.fnmatch(figure, f) for f in figures
        ):
            return f"documented ({d.key})"
    return "differs"


def _rows(name: str, ours: dict, theirs: dict, tools: dict) -> list[tuple]:
    out = []
    for key, want in theirs.items():
        got = ours.get(key)
        diff = _difference(key, got, want)
        tool = tools.get(key) or tool_of(key)
        out.append((name, tool, key, _show(got), _show(want), diff, status(name, key, diff)))
    return out


def xplane_rows(path: pathlib.Path, name: str) -> list[tuple]:
    """Every figure of one XSpace capture against xprof's converters run on it now."""
    from make_golden import xprof_tool

    import tfprof_widgets as tw

    out = {t: xprof_tool(path, t) for t in TOOLS}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        run = tw.load(path, progress=False)
        if len(run.hlo_instructions) or len(run.roofline):
            out.update({t: xprof_tool(path, t) for t in XLA_TOOLS})
        return figure_rows(run, out, name)


def figure_rows(run, out: dict, name: str) -> list[tuple]:
    """The rows of ``run`` against xprof's tool outputs ``out`` (by tool name: made now, or
    the goldens of tests/golden for a test)."""
    theirs = xprof_figures(out)
    ours = our_figures(run)
    mine, refs = paired_figures(run, out)
    ours.update(mine)
    theirs.update(refs)
    return _rows(name, ours, theirs, {k: _paired_tool(k) for k in refs})


def _paired_tool(key: str) -> str:
    for prefix, tool in (
        ("op_profile", "op_profile"),
        ("xla_device_ops", "framework_op_stats"),
        ("host_op_rows", "framework_op_stats"),
        ("input_op", "input_pipeline_analyzer"),
        ("memory ", "memory_profile"),
    ):
        if key.startswith(prefix):
            return tool
    return "roofline_model"


def pytorch_rows(path: pathlib.Path, name: str) -> list[tuple]:
    """A Kineto trace's figures against HTA run now (rounding off) and torch-tb-profiler
    0.4.3's steps as tests/golden/kineto keeps them."""
    import json

    from make_hta_golden import hta_figures, stem

    import tfprof_widgets as tw

    before = os.environ.get("HTA_DISABLE_NS_ROUNDING")
    try:
        hta = hta_figures(path, ns_rounding=False)
    finally:
        os.environ.pop("HTA_DISABLE_NS_ROUNDING", None)
        if before is not None:
            os.environ["HTA_DISABLE_NS_ROUNDING"] = before
    golden = ROOT / "tests" / "golden" / "kineto" / f"{stem(path)}.json"
    steps = json.loads(golden.read_text())["tb_plugin"]["steps"] if golden.exists() else []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return pytorch_figure_rows(tw.load(path, progress=False), hta, steps, name)


def pytorch_figure_rows(run, hta: dict, tb_steps: list[dict], name: str) -> list[tuple]:
    """The rows of a PyTorch ``run`` against HTA's figures (``hta``: temporal_breakdown and
    kernel_type_breakdown, as scripts/make_hta_golden.py gives them) and torch-tb-profiler's
    steps (``tb_steps``: each with its dataloader and total µs)."""
    t = run.temporal_breakdown.iloc[0]
    ref = hta["temporal_breakdown"]
    ours = {f"hta {k} time %": float(getattr(t, f"{k}_percent")) for k in _HTA_KINDS}
    theirs = {f"hta {k} time %": ref[f"{k}_time_pctg"] for k in _HTA_KINDS}
    ours["hta span us"], theirs["hta span us"] = float(t.span_us), ref["kernel_time_us"]
    kb = run.kernel_breakdown
    share = dict(zip(kb["kernel_type"].astype(str), kb["percent"]))
    for kind, r in sorted(hta["kernel_type_breakdown"].items()):
        ours[f"hta kernel {kind} %"] = float(share.get(kind, 0.0))
        theirs[f"hta kernel {kind} %"] = r["percentage"]
    tools = dict.fromkeys(theirs, "HTA")
    total = sum(s["total"] for s in tb_steps)
    o = run.overview_summary
    if total and not _nan(o.dataloader_percent_tb):
        tb = 100 * sum(s["dataloader"] for s in tb_steps) / total
        ours["dataloader %"] = float(o.dataloader_percent_tb)
        theirs["dataloader %"] = tb
        ours["verdict input % shown"] = float(o.input_percent)
        theirs["verdict input % shown"] = tb
        tools.update(dict.fromkeys(("dataloader %", "verdict input % shown"), "tb_plugin 0.4.3"))
    return _rows(name, ours, theirs, tools)


_HTA_KINDS = ("idle", "compute", "non_compute")


def _nan(v) -> bool:
    return v != v


def report(
    paths: list[pathlib.Path], traces: list[pathlib.Path] = (), built: pathlib.Path | None = None
) -> list[tuple]:
    """The rows of every XSpace capture, then every PyTorch trace (``built``: the folder
    of the captures made here, named ``built/...``)."""
    rows = []
    for path in paths:
        rows += xplane_rows(path.resolve(), capture_name(path.resolve(), built))
    for path in traces:
        rows += pytorch_rows(path.resolve(), capture_name(path.resolve()))
    return rows


def table(rows: list[tuple], markdown: bool = False, head: tuple = HEAD) -> str:
    """The rows under ``head``: a Markdown table (``|`` in a cell escaped), or plain text in
    columns as wide as their widest cell."""
    if markdown:
        lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        lines += ["| " + " | ".join(c.replace("|", "\\|") for c in r) + " |" for r in rows]
        return "\n".join(lines)
    widths = [max(len(str(c)) for c in col) for col in zip(head, *rows)]
    fmt = "  ".join(f"{{:<{w}}}" for w in widths)
    lines = [fmt.format(*head), fmt.format(*("-" * w for w in widths))]
    lines += [fmt.format(*r) for r in rows]
    return "\n".join(line.rstrip() for line in lines)


SUMMARY_HEAD = ("capture", "figures", "equal", "within 0.5 %", "documented", "differs")


def summary(rows: list[tuple]) -> list[tuple]:
    """Per capture (first seen first): its figures and how many have each status."""
    out: dict = {}
    for r in rows:
        c = out.setdefault(r[0], dict.fromkeys(SUMMARY_HEAD[1:], 0))
        c["figures"] += 1
        c["documented" if r[6].startswith("documented") else r[6]] += 1
    return [(k, *(str(v) for v in c.values())) for k, c in out.items()]


def deliberate_text(rows: list[tuple]) -> str:
    """The documented differences the rows refer to, each with its reason."""
    used = {r[6][len("documented (") : -1] for r in rows if r[6].startswith("documented")}
    return "\n".join(f"- **{d.key}** ({d.figures}): {d.why}" for d in DELIBERATE if d.key in used)


def main(argv: list[str] | None = None) -> None:
    import tempfile

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shared", default=str(ROOT.parent / "shared" / "captures"))
    ap.add_argument("--markdown", action="store_true", help="print Markdown")
    ap.add_argument("--no-pytorch", action="store_true", help="XSpace captures only")
    ap.add_argument("capture", nargs="*", help="only these .xplane.pb files or Kineto traces")
    args = ap.parse_args(argv)
    shared = pathlib.Path(args.shared)
    with tempfile.TemporaryDirectory(prefix="tfprof_fidelity_") as tmp:
        if args.capture:
            named = [pathlib.Path(p) for p in args.capture]
            paths = [p for p in named if p.name.endswith(".xplane.pb")]
            traces = [p for p in named if not p.name.endswith(".xplane.pb")]
        else:
            paths = captures(shared) + built_captures(pathlib.Path(tmp))
            kineto = shared / "kineto"
            traces = [] if args.no_pytorch else sorted(kineto.glob("*.json.gz"))
        rows = report(paths, traces, pathlib.Path(tmp).resolve())
    print(render(rows, args.markdown), end="")


INTRO = """# Fidelity: our figures against XProf, HTA and torch-tb-profiler

The output of `python scripts/fidelity_report.py --markdown` on the shared captures (see the
script's docstring for what it runs and reads). Each figure of ours is compared with the
reference tool's on the column that keeps the tool's own figure (`xprof_roofline_efficiency`,
`xprof_flop_utilization`, `time_percent_xprof`, `peak_bytes_lifetime_xprof`,
`dataloader_percent_tb`); a row `... shown` gives the figure a user reads where it differs
on purpose. Status: equal (to the tool's printed digits), within 0.5 %, documented (a
deliberate difference: its reason and test below) or differs.
`tests/analysis/test_fidelity_report.py` holds the comparisons that run on the bundled captures."""


def render(rows: list[tuple], markdown: bool = False) -> str:
    """The whole report: (Markdown: a title and what it is,) the per-capture summary, the
    totals, the documented differences the rows refer to and the table of every figure."""
    counts = summary(rows)
    total = [sum(int(c[i]) for c in counts) for i in range(1, len(SUMMARY_HEAD))]
    parts = [INTRO, "## Summary"] if markdown else []
    parts += [
        table(counts, markdown, SUMMARY_HEAD),
        f"{total[0]} figures: {total[1]} equal, {total[2]} within 0.5 %, {total[3]} "
        f"documented, {total[4]} differing.",
    ]
    text = deliberate_text(rows)
    if text:
        parts += ["## Documented differences" if markdown else "Documented differences:", text]
    parts += ["## Every figure" if markdown else "Every figure:", table(rows, markdown)]
    return "\n\n".join(parts) + "\n"


if __name__ == "__main__":
    main()
