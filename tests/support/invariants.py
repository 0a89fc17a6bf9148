"""What must hold of every analysis and every view of every capture (issue 36's "lasting
fix"): each invariant is a function of one built capture that returns the figures breaking
it, as lines a person can check ("overview: n_steps 16 vs run.step_count.averaged 8"),
empty where it holds.

``tests/analysis/test_invariants.py`` runs each invariant on every capture bundled in
``tests/data/`` and ``sample_profiles/``; ``scripts/invariants_sweep.py`` runs the same on a
folder of captures (``--shared``: the team's shared captures) and prints capture x invariant.

A capture is built once (:func:`build`): its run, every analysis, and every view of the
report (the same views a user gets) with its text, its static HTML, its JSON payload (every
choice's blocks), its tables and its figures. The invariants read these and never recompute
an analysis. Where XProf's own figure would break an invariant, the invariant applies to the
figure we show the user; XProf's stays in its own column (``*_xprof``, "as XProf") and is
not checked.
"""

from __future__ import annotations

import dataclasses
import gzip
import itertools
import json
import math
import pathlib
import re
import shutil
import tempfile
import warnings
from collections.abc import Callable

import numpy as np
import pandas as pd

ROOT = pathlib.Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data"
SAMPLES = ROOT / "sample_profiles"

# Relative tolerance of "equal" for figures computed two ways (XProf's own fidelity bar).
REL = 5e-3
# A share printed with one decimal may be off by half a unit of it.
PRINTED = 0.051


# -- the captures ----------------------------------------------------------------------------
def bundled_captures() -> dict[str, Callable[[pathlib.Path], pathlib.Path]]:
    """Every capture in tests/data and sample_profiles, by a short name: name -> a function
    of a scratch folder giving the path to load (most are the file itself; the synthetic TPU
    capture is written from tests/data/tpu_hlo, gzip-stored tool data is decompressed)."""
    out: dict[str, Callable[[pathlib.Path], pathlib.Path]] = {}

    def same(p: pathlib.Path) -> Callable[[pathlib.Path], pathlib.Path]:
        return lambda _scratch: p

    for p in sorted(DATA.rglob("*.xplane.pb")):
        out[p.relative_to(DATA).as_posix()] = same(p)
    for p in sorted((DATA / "chrome").glob("*.json.gz")):
        out[p.relative_to(DATA).as_posix()] = same(p)
    for d in sorted(p for p in (DATA / "tooldata").iterdir() if p.is_dir()):
        out[d.relative_to(DATA).as_posix()] = _tool_data(d)
    for p in sorted(DATA.rglob("*.tfprof")):
        out[p.relative_to(DATA).as_posix()] = same(p)
    out["tpu_hlo/synthetic_tpu_capture"] = _synthetic_tpu
    for d in sorted(p for p in SAMPLES.iterdir() if p.is_dir()):
        tfprof = sorted(d.glob("*.tfprof"))
        out["sample_profiles/" + d.name] = same(tfprof[0] if tfprof else d)
    return out


def folder_captures(folder: pathlib.Path) -> dict[str, Callable[[pathlib.Path], pathlib.Path]]:
    """Every capture under a folder laid out as the team's shared captures: each .xplane.pb, Kineto
    or Chrome JSON and TF1 timeline file, and each tool-data run directory."""
    out: dict[str, Callable[[pathlib.Path], pathlib.Path]] = {}
    for p in sorted(folder.rglob("*")):
        rel = p.relative_to(folder).as_posix()
        if p.is_file() and "tooldata" in p.relative_to(folder).parts[:-1]:
            continue  # a tool-data run's files: the run directory is the capture
        if p.is_file() and (p.name.endswith((".xplane.pb", ".json", ".json.gz", ".tfprof"))):
            out[rel] = lambda _s, p=p: p
        elif p.is_dir() and p.parent.name == "tooldata":
            out[rel] = _tool_data(p)
    return out


def _tool_data(d: pathlib.Path) -> Callable[[pathlib.Path], pathlib.Path]:
    def make(scratch: pathlib.Path) -> pathlib.Path:
        if not any(f.name.endswith(".gz") and ".pb" in f.name for f in d.iterdir()):
            return d
        out = scratch / d.name  # as TensorFlow wrote it: the tests store big .pb gzipped
        out.mkdir(parents=True, exist_ok=True)
        for f in sorted(d.iterdir()):
            if f.name.endswith(".pb.gz"):
                (out / f.name[: -len(".gz")]).write_bytes(gzip.decompress(f.read_bytes()))
            else:
                shutil.copy(f, out / f.name)
        return out

    return make


def _synthetic_tpu(scratch: pathlib.Path) -> pathlib.Path:
    from tpu_builder import tpu_capture

    return tpu_capture().write(scratch / "tpu.xplane.pb")


# -- one built capture -----------------------------------------------------------------------
@dataclasses.dataclass
class ViewOut:
    """One view as the user gets it: its text, static HTML, JSON payload (parsed too), the
    tables of every choice and the plotly figures of every choice (as JSON dicts)."""

    text: str
    static_html: str
    payload: str
    tables: list  # views.base.TableBlock, every choice's, once each
    figures: list[dict]

    @property
    def words(self) -> str:
        """Everything of the view a person can read or export (the CSV included)."""
        return "\n".join((self.text, self.static_html, self.payload))


@dataclasses.dataclass
class Capture:
    name: str
    run: object
    views: dict[str, ViewOut]
    error: str | None = None

    @property
    def frameworks(self) -> tuple[str, ...]:
        return tuple(self.run.framework.names)


def build(name: str, make: Callable[[pathlib.Path], pathlib.Path]) -> Capture:
    """Load a capture and build every analysis and every view of its report once."""
    import tfprof_widgets as tw
    from tfprof_widgets.catalog import ANALYSES
    from tfprof_widgets.report import report_views

    with tempfile.TemporaryDirectory(prefix="tfprof_inv_") as scratch, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        run = tw.load(make(pathlib.Path(scratch)), progress=False)
        for a in ANALYSES:
            try:
                getattr(run, a.name)
            except ValueError:  # the tfprof analyses of a run without a TF1 graph
                pass
        views = {k: _view_out(k, v) for k, v in report_views(run).items()}
    return Capture(name, run, views)


def _view_out(name: str, view) -> ViewOut:
    text = view.text()
    html = view.static_html()
    if not view.viewer_script:  # the trace viewer: its lanes, groups, steps and names
        payload = json.dumps(view.meta(), sort_keys=True, default=str)
        return ViewOut(text, html, payload, [], [])
    payload = view.payload_json()
    choices = view._choice_list
    ids = [c.id for c in choices]
    tables, seen = [], set()
    for combo in itertools.product(*[c.values() for c in choices]):
        for b in view.blocks_of(**dict(zip(ids, combo))):
            if type(b).__name__ == "TableBlock" and id(b.table) not in seen:
                seen.add(id(b.table))
                tables.append(b)
    figures = []
    parsed = json.loads(payload)
    for blocks in parsed.get("variants", {}).values():
        for b in blocks:
            if b.get("kind") == "figs":
                figures += [dict(f["fig"], _name=f.get("name", "")) for f in b["figs"]]
    return ViewOut(text, html, payload, tables, figures)


# -- helpers ---------------------------------------------------------------------------------
def _num(s: pd.Series) -> np.ndarray:
    return pd.to_numeric(s, errors="coerce").to_numpy(np.float64)


def _fmt(v: float) -> str:
    return f"{v:,.4g}" if isinstance(v, float) else str(v)


def _close(a: float, b: float, rel: float = REL, atol: float = 1e-6) -> bool:
    return abs(a - b) <= max(rel * max(abs(a), abs(b)), atol)


def _rows(df: pd.DataFrame, mask: np.ndarray, label: Callable[[pd.Series], str]) -> list[str]:
    return [label(r) for _, r in df[mask].head(5).iterrows()]


def _first_col(df: pd.DataFrame, *names: str) -> str | None:
    return next((n for n in names if n in df.columns), None)


def _name_of(r: pd.Series) -> str:
    for c in ("hlo_op_name", "operation", "kernel_name", "name", "path", "allocator", "step"):
        if c in r.index:
            return f"{c}={str(r[c])[:60]}"
    return f"row {r.name}"


def analysis_tables(cap: Capture) -> dict[str, pd.DataFrame]:
    """Every DataFrame the run's analyses give, the summaries' tables included."""
    from tfprof_widgets.catalog import ANALYSES

    run = cap.run
    out = {}
    for a in ANALYSES:
        v = run.__dict__.get(a.name)
        if isinstance(v, pd.DataFrame):
            out[a.name] = v
    ip, ov = run.__dict__.get("input_pipeline"), run.__dict__.get("overview_summary")
    if ip is not None:
        out["input_pipeline.steps"] = ip.steps
        out["input_pipeline.input_ops"] = ip.input_ops
    if ov is not None:
        out["overview_summary.top_ops"] = ov.top_ops
    td = run.__dict__.get("tf_data")
    if td is not None:
        out["tf_data.pipelines"] = td.pipelines
    return out


# A row of a rate table may carry a figure above its roof only where the row says so: a
# boolean column named for it, true on that row (the fix of issue 36 items 1-2 names it).
FLAG_COLUMN = re.compile(r"(flag|above_roof|beyond_roof|impossible|unattributed|not_attributed)")


def _flagged(df: pd.DataFrame) -> np.ndarray:
    mask = np.zeros(len(df), bool)
    for c in df.columns:
        if FLAG_COLUMN.search(c):
            s = df[c]
            mask |= (
                s.fillna(False).astype(bool).to_numpy()
                if pd.api.types.is_bool_dtype(s) or s.dtype == object
                else s.astype(str).str.len().to_numpy() > 0
            )
    return mask


# -- 1. shares -------------------------------------------------------------------------------
STEP_PARTS = (
    "device_compute_us",
    "device_to_device_us",
    "device_collectives_us",
    "host_compute_us",
    "kernel_launch_us",
    "input_us",
    "output_us",
    "compile_us",
    "all_others_us",
)
OVERVIEW_SHARES = (
    "input_percent",
    "output_percent",
    "compute_percent",
    "idle_percent",
    "kernel_launch_percent",
    "all_other_percent",
    "device_collectives_percent",
    "device_compute_16bit_percent",
    "device_compute_32bit_percent",
    "host_op_occurrence_percent",
    "device_op_occurrence_percent",
    "host_op_time_percent",
    "device_op_time_percent",
    "eager_host_op_percent",
    "eager_device_op_percent",
    "host_idle_percent",
    "device_idle_percent",
    "device_duty_cycle_percent",
    "program_16bit_percent",
    "dataloader_percent_tb",
)


def shares(cap: Capture) -> list[str]:
    """Every share within [0, 100] % (fractions within [0, 1]), and the shares of a whole
    summing to it: the step breakdown to the step time, the overview's 16/32-bit split, its
    host/device splits, the op stats' self-time percentages per side (and their running sum
    ending at 100), the HTA breakdowns, the op profile's programs, every pie's values >= 0."""
    run, bad = cap.run, []
    for tname, df in analysis_tables(cap).items():
        for c in df.columns:
            if not (c.endswith("_percent") or c in ("percent", "time_percent")):
                continue
            v = _num(df[c])
            out = (v < -1e-9) | (v > 100 + 1e-6)
            if out.any():
                i = int(np.flatnonzero(out)[0])
                bad.append(f"{tname}.{c} = {_fmt(v[i])} ({_name_of(df.iloc[i])})")
    o = run.overview_summary
    for f in OVERVIEW_SHARES:
        v = float(getattr(o, f, float("nan")))
        if not math.isnan(v) and not -1e-9 <= v <= 100 + 1e-6:
            bad.append(f"overview_summary.{f} = {_fmt(v)}")
    pairs = (
        ("device_compute_16bit_percent", "device_compute_32bit_percent"),
        ("host_op_occurrence_percent", "device_op_occurrence_percent"),
        ("host_op_time_percent", "device_op_time_percent"),
    )
    for a, b in pairs:
        s = float(getattr(o, a)) + float(getattr(o, b))
        if s > 1e-9 and not _close(s, 100.0, atol=0.05):
            bad.append(f"overview_summary.{a} + {b} = {_fmt(s)} (not 100)")
    steps = run.steps
    if len(steps):
        parts = steps[list(STEP_PARTS)].to_numpy(np.float64)
        neg = (parts < -1e-6).any(axis=1)
        total = np.nansum(parts, axis=1)
        st = _num(steps["step_time_us"])
        off = ~np.isclose(total, st, rtol=REL, atol=0.01)
        for i in np.flatnonzero(neg | off)[:5]:
            bad.append(
                f"steps step {steps['step'].iloc[i]}: parts sum {_fmt(total[i])} µs, "
                f"step time {_fmt(st[i])} µs"
            )
        p = steps[["device_compute_16_us", "device_compute_32_us"]].to_numpy(np.float64)
        over = p.sum(axis=1) > _num(steps["device_compute_us"]) * (1 + REL) + 0.01
        for i in np.flatnonzero(over)[:3]:
            bad.append(
                f"steps step {steps['step'].iloc[i]}: 16+32-bit {_fmt(p[i].sum())} µs > "
                f"device compute {_fmt(float(steps['device_compute_us'].iloc[i]))} µs"
            )
    bad += _percent_sums(cap)
    for vname, v in cap.views.items():
        for fig in v.figures:
            for t in fig.get("data", []):
                if t.get("type") == "pie":
                    vals = [x for x in (t.get("values") or []) if isinstance(x, (int, float))]
                    if any(x < 0 for x in vals):
                        bad.append(f"{vname} pie {fig['_name']!r}: a negative value")
        for tb in v.tables:
            for c in tb.table.columns:
                if c.kind == "pct" and c.name in tb.table.df and not c.ratio:
                    x = _num(tb.table.df[c.name])
                    out = (x < -1e-9) | (x > 100 + 1e-6)
                    if out.any():
                        i = int(np.flatnonzero(out)[0])
                        bad.append(
                            f"{vname} table {tb.id} column {c.label or c.name!r} = {_fmt(x[i])}"
                        )
    return bad


def _percent_sums(cap: Capture) -> list[str]:
    run, bad = cap.run, []

    def summing(tname: str, df: pd.DataFrame, col: str, by: list[str]) -> None:
        if not len(df) or col not in df:
            return
        for key, g in df.groupby(by, observed=True, sort=True) if by else [((), df)]:
            s = float(np.nansum(_num(g[col])))
            if s > 1e-9 and not _close(s, 100.0, atol=0.1):
                bad.append(f"{tname}.{col} sums to {_fmt(s)} over {key or 'all rows'}")

    ops = run.ops
    summing("ops", ops, "self_time_percent", ["host", "host_or_device"])
    if len(ops):
        for key, g in ops.groupby(["host", "host_or_device"], observed=True, sort=True):
            c = _num(g["cumulative_self_time_percent"])
            if len(c) and (np.any(np.diff(c) < -1e-6) or c.max() > 100 + 0.1):
                bad.append(f"ops.cumulative_self_time_percent not rising to <= 100 on {key}")
    summing("kernel_breakdown", run.kernel_breakdown, "percent", ["host", "device"])
    tb = run.temporal_breakdown
    if len(tb):
        s = tb[["idle_percent", "compute_percent", "non_compute_percent"]].sum(axis=1)
        for i in np.flatnonzero(~np.isclose(s, 100, atol=0.1))[:3]:
            bad.append(f"temporal_breakdown idle+compute+non-compute = {_fmt(float(s[i]))}")
    # (hlo_stats' self_time_percent is a share of the device time IDLE included, which is
    # no row of it: its rows sum to 100 % less the idle share, so only its range is checked)
    op = run.op_profile
    if len(op):
        summing("op_profile programs", op[op["level"] == "program"], "time_percent", [])
    ip = run.input_pipeline.input_ops
    summing("input_pipeline.input_ops", ip, "self_time_percent", ["host"])
    return bad


# -- 2. roofs --------------------------------------------------------------------------------
def roofs(cap: Capture) -> list[str]:
    """No rate above its roof unless the row flags it: the roofline's and HLO stats' FLOP
    rate at most the device's peak FLOP/s, their HBM bandwidth at most the peak HBM GiB/s,
    efficiencies and utilisations (fractions) at most 1, every "% utilisation/occupancy"
    at most 100 %, and every roofline plot point on or under the roofs."""
    run, bad = cap.run, []
    peaks = run.roofline_peaks
    if len(peaks):
        top = peaks.groupby("host", observed=True)[["peak_gflops", "peak_hbm_gibps"]].max()
        for tname in ("roofline", "hlo_stats"):
            df = getattr(run, tname)
            if not len(df):
                continue
            pk = top.reindex(df["host"].astype(str)).to_numpy(np.float64)
            flagged = _flagged(df)
            for col, j, what in (
                ("model_gflops_per_s", 0, "GFLOP/s"),
                ("hbm_bw_gibps", 1, "HBM GiB/s"),
            ):
                if col not in df:
                    continue
                v = _num(df[col])
                over = (v > pk[:, j] * (1 + 1e-6)) & (pk[:, j] > 0) & ~flagged
                for i in np.flatnonzero(over)[:4]:
                    bad.append(
                        f"{tname} {_name_of(df.iloc[i])}: {_fmt(v[i])} {what} > peak "
                        f"{_fmt(pk[i, j])}"
                    )
    for tname, cols in (
        ("roofline", ("roofline_efficiency", "compute_efficiency", "max_mem_bw_utilization")),
        ("op_profile", ("flop_utilization", "hbm_bw_utilization")),
    ):
        df = getattr(run, tname)
        if not len(df):
            continue
        flagged = _flagged(df)
        for col in cols:
            v = _num(df[col])
            over = (v > 1 + 1e-6) & ~flagged
            for i in np.flatnonzero(over)[:4]:
                bad.append(f"{tname} {_name_of(df.iloc[i])}: {col} {_fmt(v[i])} > 1")
    k = run.kernels
    if len(k):
        v = _num(k["occupancy_percent"])
        for i in np.flatnonzero(v > 100 + 1e-6)[:3]:
            bad.append(f"kernels {_name_of(k.iloc[i])}: occupancy {_fmt(v[i])} % > 100")
    v = cap.views.get("roofline")
    if v is not None and len(peaks):
        bad += _points_under_roofs(v, peaks)
    return bad


def _points_under_roofs(v: ViewOut, peaks: pd.DataFrame) -> list[str]:
    """The roofline plot's op points (x: FLOP/B, y: GFLOP/s) under min(peak, x * HBM bw)."""
    bad = []
    peak = float(peaks["peak_gflops"].max())
    bw = float(peaks["peak_hbm_gibps"].max()) * 2**30 / 1e9  # GB/s: GFLOP/s per FLOP/B
    for fig in v.figures:
        for t in fig.get("data", []):
            if t.get("type") not in ("scatter", "scattergl") or "markers" not in str(
                t.get("mode", "")
            ):
                continue
            xs, ys = t.get("x") or [], t.get("y") or []
            if not isinstance(xs, list) or not isinstance(ys, list):
                continue
            for x, y in zip(xs, ys):
                if not isinstance(x, (int, float)) or not isinstance(y, (int, float)):
                    continue
                roof = min(peak, x * bw)
                if y > roof * (1 + 1e-3):
                    bad.append(
                        f"roofline plot {fig['_name']!r} trace {t.get('name')!r}: point "
                        f"({_fmt(float(x))} FLOP/B, {_fmt(float(y))} GFLOP/s) above the roof "
                        f"{_fmt(roof)}"
                    )
                    break
    return bad[:6]


# -- 3. peaks --------------------------------------------------------------------------------
def peaks(cap: Capture) -> list[str]:
    """A peak at least every value it summarises: each allocator's peak in use at least its
    every event's stack + heap, the allocator's lifetime peak (of its heap) at least the heap
    of the profile's peak and of every event, the peak in use = its heap + stack; max >=
    mean >= min >= 0 in every stat table; a total at least its self time; the overview's
    step-time max >= avg >= min equal to the steps'."""
    run, bad = cap.run, []
    ms, mem = run.memory_summary, run.memory
    if len(ms):
        for r in ms.itertuples():
            ev = mem[(mem["host"] == r.host) & (mem["allocator"] == r.allocator)]
            inuse = (
                (ev["stack_reserved_bytes"] + ev["heap_allocated_bytes"]).max() if len(ev) else 0
            )
            where = f"memory {r.host}/{r.allocator}"
            if len(ev) and r.peak_in_use_bytes < inuse:
                bad.append(
                    f"{where}: peak in use {r.peak_in_use_bytes:,} B < an event's {inuse:,} B"
                )
            if r.peak_in_use_bytes != r.peak_heap_bytes + r.peak_stack_bytes:
                bad.append(
                    f"{where}: peak in use {r.peak_in_use_bytes:,} B != heap "
                    f"{r.peak_heap_bytes:,} + stack {r.peak_stack_bytes:,}"
                )
            # The allocator's lifetime-peak counter is of its heap (allocated bytes; TF's
            # BFC peak_bytes_in_use, what TPU runtimes report beside a reserved stack), so
            # it bounds the heap, not heap + stack: on a TPU with a stack the two differ
            # by the stack and neither is wrong. XProf's reading of it
            # (peak_bytes_lifetime_xprof, an earlier one on a multi-thread host) is not
            # checked.
            heap = int(ev["heap_allocated_bytes"].max()) if len(ev) else 0
            if 0 < r.peak_bytes_lifetime < max(r.peak_heap_bytes, heap):
                bad.append(
                    f"{where}: lifetime peak {r.peak_bytes_lifetime:,} B < the heap in use "
                    f"{max(r.peak_heap_bytes, heap):,} B"
                )
    triples = (
        ("kernels", ("max_time_us", "avg_time_us", "min_time_us")),
        ("torch_kernels", ("max_us", "mean_us", "min_us")),
        ("tf_data.pipelines", ("max_latency_us", "avg_latency_us", "min_latency_us")),
    )
    tables = analysis_tables(cap)
    for tname, (hi, mid, lo) in triples:
        df = tables.get(tname)
        if df is None or not len(df):
            continue
        a, b, c = _num(df[hi]), _num(df[mid]), _num(df[lo])
        tol = 1e-6 * np.maximum(np.abs(a), 1)
        wrong = (a + tol < b) | (b + tol < c) | (c < -1e-9)
        for i in np.flatnonzero(wrong)[:4]:
            bad.append(
                f"{tname} {_name_of(df.iloc[i])}: max {_fmt(a[i])}, mean {_fmt(b[i])}, "
                f"min {_fmt(c[i])}"
            )
    for tname in ("ops", "overview_summary.top_ops"):
        df = tables.get(tname)
        if df is None or not len(df) or "total_time_us" not in df:
            continue
        t, s = _num(df["total_time_us"]), _num(df["total_self_time_us"])
        wrong = s > t * (1 + 1e-6) + 1e-3
        for i in np.flatnonzero(wrong)[:4]:
            bad.append(
                f"{tname} {_name_of(df.iloc[i])}: self {_fmt(s[i])} µs > total {_fmt(t[i])} µs"
            )
    o = run.overview_summary
    lo, avg, hi = o.step_time_ms_min, o.step_time_ms_avg, o.step_time_ms_max
    if not (hi + 1e-9 >= avg >= lo - 1e-9 >= -1e-9):
        bad.append(f"overview step time: max {_fmt(hi)}, avg {_fmt(avg)}, min {_fmt(lo)} ms")
    from tfprof_widgets.analysis.steps import overview_steps

    kept = overview_steps(run.steps) if len(run.steps) else run.steps
    if len(kept):
        st = _num(kept["step_time_us"]) / 1e3
        for what, ours, theirs in (("max", hi, np.nanmax(st)), ("min", lo, np.nanmin(st))):
            if not _close(ours, float(theirs)):
                bad.append(
                    f"overview step time {what} {_fmt(ours)} ms vs the steps it averages "
                    f"{_fmt(float(theirs))} ms"
                )
    return bad


# -- 4. one step numbering -------------------------------------------------------------------
STEP_MENTION = re.compile(
    r"\b[Ss]teps? #?(\d+)(?:\s*(?:\.\.|–|to)\s*(\d+))?(?![\d.,]*\s*(?:ms|µs|%))"
)


def step_numbering(cap: Capture) -> list[str]:
    """One step numbering everywhere: every step number a table, a plot's step axis or a
    view's text names is a step number of ``run.steps`` (a capture without steps names
    none); the memory peak's step is the step whose group holds it."""
    run, bad = cap.run, []
    steps = run.steps
    numbers = set(pd.unique(steps["step"].dropna()).tolist()) if len(steps) else set()
    tables = {
        "input_pipeline.steps": run.input_pipeline.steps,
        "temporal_breakdown_steps": run.temporal_breakdown_steps,
        "torch_steps": run.torch_steps,
    }
    for tname, df in tables.items():
        if len(df) and "step" in df:  # <NA>: a row of no step (a capture without steps)
            extra = sorted(set(pd.unique(df["step"].dropna()).tolist()) - numbers)
            if extra:
                bad.append(f"{tname} steps {extra[:6]} not in the steps table's {_span(numbers)}")
    bad += _memory_peak_step(cap, steps)
    for vname, v in cap.views.items():
        if vname in ("timeline", "memory"):  # the memory view: _memory_peak_step
            continue
        texts = [v.text, v.static_html] + _html_blocks(v.payload)
        seen = set()
        for t in texts:
            for m in STEP_MENTION.finditer(_plain(t)):
                for g in m.groups():
                    if g is not None and int(g) not in numbers and (int(g)) not in seen:
                        seen.add(int(g))
                        bad.append(
                            f"{vname}: {m.group(0)!r} names step {g}; the steps table has "
                            f"{_span(numbers)}"
                        )
        for fig in v.figures:
            bad += _step_axis(vname, fig, numbers)
    return list(dict.fromkeys(bad))[:12]  # a plot in every choice, a trace per part: once


def _memory_peak_step(cap: Capture, steps: pd.DataFrame) -> list[str]:
    """The memory view names a peak's step only as the steps table numbers the step its
    event is in: the step of the event's own step group (run.events, on its host), or, for
    an event in no group, a step whose group's host events span its time; a peak in no
    step names none.

    Not the memory profile's ``peak_group_id``: that is XProf's, of the latest event at the
    peak's level (custom_loop: 17, the "previous group + 1" XProf gives events after the
    last step, while the peak event the view times is in group 16, step 18). Not the step
    whose steps-table span holds the peak's time either: on a GPU the steps table spans the
    device's work while the host allocates for the next step (JAX H100: the host's step-9
    input transfer at 70.07 ms, device step 8 until 70.73 ms)."""
    run = cap.run
    v, ms, mem = cap.views.get("memory"), run.memory_summary, run.memory
    if v is None or not len(ms) or "event" not in mem:
        return []
    ev = run.events
    number = (
        {
            (str(h), int(g)): int(n)
            for h, g, n in zip(steps["host"], steps["group_id"], steps["step"])
            if pd.notna(g) and pd.notna(n)
        }
        if len(steps)
        else {}
    )
    host_ev = ev[ev["plane"].astype(str).str.startswith("/host:") & ev["group_id"].notna()]
    spans = (
        host_ev.groupby([host_ev["host"].astype(str), "group_id"], observed=True)
        .agg(lo=("start_us", "min"), hi=("end_us", "max"))
        .reset_index()
    )
    allowed, groups = set(), set()
    for r in ms.itertuples():
        at = mem[
            (mem["host"] == r.host)
            & (mem["allocator"] == r.allocator)
            & (mem["time_us"] == r.peak_time_us)
            & (mem["in_use_bytes"] == r.peak_in_use_bytes)
        ]
        for e in at["event"].tolist():
            if e < 0:  # a memory profile without its trace (tool data): no step to name
                continue
            h, g, t = str(ev["host"].iat[e]), ev["group_id"].iat[e], float(ev["start_us"].iat[e])
            if pd.notna(g):
                groups.add(int(g))
                if (h, int(g)) in number:
                    allowed.add(number[h, int(g)])
                continue
            hold = spans[(spans["host"] == h) & (spans["lo"] <= t) & (t <= spans["hi"])]
            allowed |= {number[h, int(x)] for x in hold["group_id"] if (h, int(x)) in number}
    named = set()
    for t in [v.text, v.static_html] + _html_blocks(v.payload):
        for m in STEP_MENTION.finditer(_plain(t)):
            named |= {int(g) for g in m.groups() if g is not None}
    extra = sorted(named - allowed)
    if not extra:
        return []
    return [
        f"memory: names step(s) {extra[:6]} for its peaks; the steps table's steps of the "
        f"peak events (groups {sorted(groups)[:6] or 'none'}) are {sorted(allowed) or 'none'}"
    ]


def _span(numbers: set) -> str:
    if not numbers:
        return "no step"
    return f"steps {min(numbers)}..{max(numbers)}" if len(numbers) > 1 else f"step {min(numbers)}"


def _plain(html: str) -> str:
    return re.sub(r"<[^>]+>", " ", html).replace("&nbsp;", " ")


def _html_blocks(payload: str) -> list[str]:
    try:
        p = json.loads(payload)
    except ValueError:
        return [payload]
    out = []
    for blocks in p.get("variants", {}).values():
        out += [b["html"] for b in blocks if b.get("kind") == "html"]
    return out


def _step_axis(vname: str, fig: dict, numbers: set) -> list[str]:
    lay = fig.get("layout", {})
    out = []
    for t in fig.get("data", []):
        if t.get("type") not in ("bar", "scatter", "scattergl", None):
            continue
        axis = "xaxis" + str(t.get("xaxis", "x"))[1:]
        title = lay.get(axis, {}).get("title", {})
        title = title.get("text", "") if isinstance(title, dict) else str(title)
        if not re.search(r"\bstep\b", str(title), re.I) or re.search(r"time|ms|µs", str(title)):
            continue
        xs = t.get("x")
        if not isinstance(xs, list):
            continue
        # a category axis sends the step numbers as text
        ints = [
            int(x)
            for x in xs
            if (isinstance(x, (int, float)) and float(x).is_integer())
            or (isinstance(x, str) and re.fullmatch(r"-?\d+", x))
        ]
        extra = sorted(set(ints) - numbers)
        if extra:
            out.append(
                f"{vname} plot {fig['_name']!r} step axis shows steps {extra[:6]}; the steps "
                f"table has {_span(numbers)}"
            )
    return out


# -- 5. units --------------------------------------------------------------------------------
UNIT = re.compile(
    r"(µs|\bms\b|\bns\b|\(s\)|MiB|GiB|KiB|\(B\)|\bbytes\b|FLOPs?\b|%|/|×|\bfraction\b)"
)
DIMENSIONED = re.compile(r"(_us|_ms|_ns|_bytes|_percent|_gibps|_gflops_per_s|_flops)$")


def units(cap: Capture) -> list[str]:
    """A unit in every numeric header of every view's tables: a time, size, rate or share
    column says what it is in (µs, MiB, GiB/s, %...), a bytes column shown in MiB says MiB,
    a share column says % (a fraction shown there says so); counts need none unless the
    column holds a dimensioned figure."""
    bad, seen = [], set()
    for vname, v in cap.views.items():
        for tb in v.tables:
            for c in tb.table.columns:
                label = c.label or c.name
                if c.hidden or c.internal or c.kind in ("text", "bool"):
                    continue
                if (vname, tb.id, label, c.kind) in seen:  # the same table in other choices
                    continue
                seen.add((vname, tb.id, label, c.kind))
                where = f"{vname} table {tb.id!r} column {label!r} ({c.kind})"
                if c.kind == "bytes" and "MiB" not in label:
                    bad.append(f"{where}: shows MiB, says no MiB")
                elif c.kind == "pct" and "%" not in label:
                    bad.append(f"{where}: a share without %")
                elif c.kind == "num" and not UNIT.search(label):
                    bad.append(f"{where}: no unit")
                elif c.kind == "int" and DIMENSIONED.search(c.name) and not UNIT.search(label):
                    bad.append(f"{where}: no unit")
    return bad


# -- 6. one figure, equal in every view ------------------------------------------------------
AVG_STEP = re.compile(r"average step time ([\d,.]+) ms over (?:all )?([\d,]+) steps?")
# The input share of all steps' time (the verdicts) and its mean over the steps ("on average").
INPUT_SHARE = (
    re.compile(r"([\d.]+) ?% of the step time is in DataLoader"),
    re.compile(r"([\d.]+) ?% of the total step time sampled is waiting for input"),
)
INPUT_MEAN = re.compile(r"Input takes ([\d.]+) ?%[^\n]*?on average")
SIXTEEN = re.compile(r"16-bit[^.\n%]*?([\d.]+) ?%")


def figures_agree(cap: Capture) -> list[str]:
    """A figure shown in two views is equal in both: the overview's average step time and
    its step count against the steps table (and run.step_count); the input share in every
    sentence of the overview and input pipeline; the 16-bit share wherever printed; on XLA,
    the op stats' device time against the op profile's and the HLO stats' totals; the kernel
    stats' total, less the launches no op accounts for (the op stats' IDLE, said on the
    kernels view), at most the device op time it is part of."""
    from tfprof_widgets.analysis.steps import overview_steps

    run, bad = cap.run, []
    o = run.overview_summary
    kept = overview_steps(run.steps) if len(run.steps) else run.steps
    count = run.step_count
    if o.n_steps != count.averaged:
        bad.append(
            f"overview_summary.n_steps {o.n_steps} vs run.step_count.averaged {count.averaged}"
        )
    if len(kept):
        mean_ms = float(kept["step_time_us"].mean()) / 1e3
        if not _close(o.step_time_ms_avg, mean_ms):
            bad.append(
                f"overview avg step {_fmt(o.step_time_ms_avg)} ms vs steps table {_fmt(mean_ms)} ms"
            )
    ov = cap.views.get("overview")
    if ov is not None:
        m = AVG_STEP.search(ov.text)
        if m:
            shown, n = float(m.group(1).replace(",", "")), int(m.group(2).replace(",", ""))
            if len(kept) and not _close(
                shown, float(kept["step_time_us"].mean()) / 1e3, atol=0.006
            ):
                bad.append(f"overview text: average step time {shown} ms vs steps table")
            if n != count.averaged:
                bad.append(
                    f"overview text: over {n} steps vs run.step_count.averaged {count.averaged}"
                )
    ip = run.input_pipeline
    for vname in ("overview", "input_pipeline"):
        v = cap.views.get(vname)
        if v is None:
            continue
        for rx in INPUT_SHARE:
            for x in rx.findall(v.text):
                if abs(float(x) - o.input_percent) > PRINTED:
                    bad.append(
                        f"{vname}: input share {x} % in {rx.pattern[9:45]!r}; the steps' "
                        f"input share is {o.input_percent:.2f} %"
                    )
        # torch-tb-profiler's own DataLoader share is kept (OverviewSummary) but not shown
        # beside the one input figure the pages quote.
        tb = float(getattr(o, "dataloader_percent_tb", float("nan")))
        if not math.isnan(tb) and abs(tb - o.input_percent) > PRINTED:
            if re.search(rf"\b{tb:.1f} ?%", v.text):
                bad.append(
                    f"{vname}: torch-tb-profiler's DataLoader share {tb:.1f} % shown beside "
                    f"the steps' input share {o.input_percent:.2f} %"
                )
        for x in INPUT_MEAN.findall(v.text):
            if abs(float(x) - ip.input_percent_avg) > PRINTED:
                bad.append(
                    f"{vname}: 'Input takes {x} % on average'; the steps' mean input share "
                    f"is {ip.input_percent_avg:.2f} %"
                )
    for vname, v in cap.views.items():
        got = sorted({float(x) for x in SIXTEEN.findall(v.text) if x.replace(".", "").isdigit()})
        if len(got) > 1 and got[-1] - got[0] > 0.15:
            bad.append(f"{vname}: 16-bit share printed as {', '.join(f'{x} %' for x in got)}")
    ops = run.ops
    dev = ops[(ops["host_or_device"] == "Device") & (ops["type"] != "IDLE")] if len(ops) else ops
    dev_us = float(dev["total_self_time_us"].sum()) if len(dev) else 0.0
    op = run.op_profile
    if len(op):
        prof = float(op.loc[op["level"] == "program", "time_us"].sum())
        if not _close(prof, dev_us):
            bad.append(
                f"op profile total {_fmt(prof)} µs vs op stats device time {_fmt(dev_us)} µs"
            )
    if len(run.hlo_stats):
        hlo = float(run.hlo_stats["total_self_time_us"].sum())
        if not _close(hlo, dev_us):
            bad.append(f"HLO stats total {_fmt(hlo)} µs vs op stats device time {_fmt(dev_us)} µs")
    k = run.kernels
    if len(k) and len(dev):
        kv = cap.views.get("kernels")
        for host, g in k.groupby("host", observed=True, sort=True):
            # Launches no op accounts for (no_op_time_us: ROCm's copy kernels, a launch
            # whose annotation was lost) are not part of the device op time: the op stats
            # (as XProf's, whose kernel_stats lists them too) count them as IDLE. The rest
            # of the kernel time is part of it; the kernels view must say why the two
            # totals differ.
            kt = float(g["total_time_us"].sum())
            no_op = float(g["no_op_time_us"].sum())
            dt = float(dev.loc[dev["host"] == host, "total_self_time_us"].sum())
            if kt - no_op > dt * (1 + REL) + 0.01 or not -1e-9 <= no_op <= kt + 1e-6:
                bad.append(
                    f"{host}: kernel stats total {_fmt(kt)} µs ({_fmt(no_op)} µs of it in no "
                    f"op) > device op time {_fmt(dt)} µs"
                )
            if no_op > 0.05 and kv is not None and "no op accounts for" not in kv.text:
                bad.append(
                    f"{host}: {_fmt(no_op)} µs of kernel time in no op (op stats IDLE), and "
                    "the kernels view does not say so"
                )
    return bad


# -- 7. each framework's words ---------------------------------------------------------------
TF_WORDS = re.compile(r"(\bTF ops?\b|tf\.data|TensorBoard|tf_op)")
TORCH_WORDS = re.compile(r"(\baten\b|PyTorch)")


def framework_words(cap: Capture) -> list[str]:
    """No framework's words on another framework's capture: no "TF op", "tf.data",
    "TensorBoard" or "tf_op" anywhere in a view (text, static HTML, payload: what the page
    shows and the CSV exports) of a pure JAX/XLA or PyTorch capture; no "aten" or "PyTorch"
    in a TensorFlow capture's views. Exempt: a table column's internal key ``tf_op`` /
    ``tf_op_name`` (a schema name holding any framework's op) where its label and its CSV
    header are the framework's words (:func:`_without_neutral_keys`). TensorFlow's own tool
    (the tf.data view) is no view of a JAX or PyTorch run's report."""
    fw = cap.frameworks
    if "tensorflow" in fw and "pytorch" not in fw:
        rx, kind = TORCH_WORDS, "TensorFlow"
    elif fw and "tensorflow" not in fw:
        rx, kind = TF_WORDS, "/".join(fw)
    else:
        return []
    bad = []
    for vname, v in cap.views.items():
        words = v.words
        if rx is TF_WORDS:
            words = _without_neutral_keys(vname, v, bad)
        for m in itertools.islice(rx.finditer(words), 1):
            around = words[max(0, m.start() - 40) : m.end() + 30]
            bad.append(f"{vname} ({kind}): {m.group(0)!r} in …{around!r}…")
    return bad


def _without_neutral_keys(vname: str, v: ViewOut, bad: list[str]) -> str:
    """The view's words without the payload's references to a table column keyed by a
    TensorFlow schema name that holds any framework's op (``tf_op``, ``tf_op_name``): an
    internal key the user never sees, exempt only where every table column so keyed shows
    a label and exports a CSV header (``csv``) in the framework's words. A column that
    shows or exports the key is reported in ``bad``."""
    try:
        payload = json.loads(v.payload)
    except ValueError:
        return v.words
    keys = set()
    for tid, t in (payload.get("tables") or {}).items():
        for c in t.get("columns", []):
            name = c.get("name", "")
            if not TF_WORDS.fullmatch(name) and name not in ("tf_op_name", "tf_op_type"):
                continue
            label, csv = c.get("label") or name, c.get("csv") or name
            if TF_WORDS.search(label) or TF_WORDS.search(csv):
                bad.append(f"{vname} table {tid}: column {name!r} shown as {label!r}, CSV {csv!r}")
            else:
                keys.add(name)
    text = v.words
    for k in sorted(keys, key=len, reverse=True):
        text = text.replace(f'"{k}"', '"<op key>"')
    return text


INVARIANTS: dict[str, Callable[[Capture], list[str]]] = {
    "shares": shares,
    "roofs": roofs,
    "peaks": peaks,
    "step_numbering": step_numbering,
    "units": units,
    "figures_agree": figures_agree,
    "framework_words": framework_words,
}
