"""Views without a browser: what each view sends equals the analyses, names are readable and
distinct, empty states say what is missing, and every view reaches every kind of viewer
(static text that sanitizers keep, a PNG where kaleido runs, the viewer script once).

The browser tests (tests/test_browser.py) check the same views drawn in Chromium."""

import json
import pathlib
import re

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import pytest
from conftest import ROOT, SAMPLES

import tfprof_widgets as tw
from tfprof_widgets.analysis.steps import CATEGORIES, overview_steps
from tfprof_widgets.views import base
from tfprof_widgets.views.memory_view import activity_window
from tfprof_widgets.views.names import short_kernel_name, short_op_name, unique_labels
from tfprof_widgets.views.op_stats_view import PIE_SLICES, pie_values
from tfprof_widgets.views.page import display as _display
from tfprof_widgets.views.page import lib as _lib
from tfprof_widgets.views.page import png as _png
from tfprof_widgets.views.pod_view import pod_summary, straggler
from tfprof_widgets.views.tables import Column, Table, encode_column

DATA = pathlib.Path(__file__).resolve().parents[1] / "data"
GPU_CAPTURE = DATA / "bert_8gpu_multi_worker.xplane.pb"

# The tags nbconvert's --sanitize-html keeps (bleach); anything else is shown as text.
SANITIZER_TAGS = {
    "a",
    "abbr",
    "acronym",
    "b",
    "blockquote",
    "code",
    "em",
    "i",
    "li",
    "ol",
    "strong",
    "ul",
    "div",
    "pre",
    "span",
    "table",
    "tr",
    "td",
}


@pytest.fixture(scope="module")
def ib():
    return tw.load(SAMPLES / "input_bound")


@pytest.fixture(scope="module")
def gpu():
    """The real 8-GPU BERT capture (tensorflow/profiler's demo, Apache-2.0)."""
    return tw.load(GPU_CAPTURE)


@pytest.fixture(scope="module")
def two_hosts():
    return tw.load(SAMPLES / "gpu_shaped")


def payload(view) -> dict:
    return json.loads(view.payload_json())


def variant_blocks(view, key: str | None = None) -> list:
    """The blocks of one choice (default: what the view opens on)."""
    p = payload(view)
    if key is None:
        key = "|".join(
            ("true" if c["value"] else "false") if c["kind"] == "checkbox" else str(c["value"])
            for c in p["controls"]
        )
    return p["variants"][key]


def decode(col):
    """What the viewer's decodeColumn does."""
    if isinstance(col, dict) and "fc" in col:
        cats, prev = [], ""
        for k in range(0, len(col["fc"]), 2):
            prev = prev[: col["fc"][k]] + col["fc"][k + 1]
            cats.append(prev)
        return [None if c < 0 else cats[c] for c in col["codes"]]
    if isinstance(col, dict) and "cats" in col:
        return [None if c < 0 else col["cats"][c] for c in col["codes"]]
    return col


# -- names --------------------------------------------------------------------------------------
def test_kernel_names_read_like_the_computation():
    full = (
        "void Eigen::internal::EigenMetaKernel<Eigen::TensorEvaluator<Eigen::TensorAssignOp<"
        "Eigen::TensorMap<Eigen::Tensor<Eigen::half, 1, 1, long>, 16, Eigen::MakePointer>, "
        "Eigen::TensorConversionOp<Eigen::half, Eigen::TensorMap<Eigen::Tensor<float const, 1, "
        "1, long>, 16, Eigen::MakePointer> const> const> const, Eigen::GpuDevice>, long>("
        "Eigen::TensorEvaluator<Eigen::TensorAssignOp<Eigen::TensorMap<Eigen::Tensor<Eigen::half"
        ", 1, 1, long>, 16, Eigen::MakePointer>, Eigen::TensorConversionOp<Eigen::half, Eigen::"
        "TensorMap<Eigen::Tensor<float const, 1, 1, long>, 16, Eigen::MakePointer> const> const>"
        " const, Eigen::GpuDevice>, long)"
    )
    assert short_kernel_name(full) == "EigenMetaKernel<TensorConversionOp<half ← float>>"
    assert short_kernel_name("volta_sgemm_128x64_nn") == "volta_sgemm_128x64_nn"
    assert short_kernel_name("void cub::Kern<int>(int*)") == "Kern<int>"
    assert len(short_kernel_name("void f<" + "A<" * 40 + "x" + ">" * 40 + ">()")) <= 72


def test_every_real_kernel_gets_a_distinct_short_label(gpu):
    names = list(dict.fromkeys(gpu.kernels["kernel_name"]))
    labels = unique_labels(names, short_kernel_name, [{"verbose": True}])
    assert len(set(labels)) == len(names) == 11
    assert max(map(len, labels)) <= 72
    assert all(" #" not in lab for lab in labels)  # told apart by content, not by number
    # Two names that shorten alike still get two labels.
    assert unique_labels(["a::K<int>(x)", "b::K<int>(y)"], short_kernel_name) == [
        "K<int>",
        "K<int> #2",
    ]


def test_op_paths_keep_their_head_and_tail():
    assert short_op_name("bert/encoder/layer_0/attention/self/query/MatMul", 40) == (
        "bert/…/attention/self/query/MatMul"
    )
    assert short_op_name("short/op", 40) == "short/op"
    assert len(short_op_name("x" * 90, 40)) <= 40


# -- pies ---------------------------------------------------------------------------------------
def test_kernel_pie_has_one_slice_per_kernel_and_filters_the_table(gpu):
    view = tw.views.kernel_stats(gpu)
    pie = view.figures()["top_kernels"].data[0]
    by_kernel = gpu.kernels.groupby("kernel_name")["total_time_us"].sum()
    assert (
        len(set(pie.labels)) == len(pie.labels) == min(len(by_kernel), 10) + (len(by_kernel) > 10)
    )
    assert sum(pie.values) == pytest.approx(gpu.kernels["total_time_us"].sum())
    keys = [c[0] for c in pie.customdata]
    assert set(k for k in keys if k) <= set(by_kernel.index)
    (figs,) = [b for b in variant_blocks(view) if b["kind"] == "figs"]
    click = figs["figs"][0]["click"]
    assert click["table"] == "kernels" and click["column"] == "kernel_name"
    table = payload(view)["tables"]["kernels"]
    assert set(decode(table["data"]["kernel_name"])) == set(gpu.kernels["kernel_name"])
    shown = decode(table["data"]["kernel"])
    assert max(map(len, shown)) <= 72  # the short form shows; the full name is the hover/CSV
    col = next(c for c in table["columns"] if c["name"] == "kernel")
    assert col["full"] == "kernel_name"


def test_op_pies_equal_run_ops_and_share_one_size(gpu):
    view = tw.views.op_stats(gpu)
    figs = view.figures()
    ops = gpu.ops[gpu.ops["type"] != "IDLE"]
    for name, fig in figs.items():
        side, by = name.split("_", 1)
        sub = ops[ops["host_or_device"] == side.capitalize()]
        pie = fig.data[0]
        expected = pie_values(sub, by)
        assert list(pie.values) == pytest.approx(expected.to_numpy())
        assert len(set(pie.labels)) == len(pie.labels)
        # Percentages only on slices big enough to hold them (no stacked labels).
        share = np.asarray(pie.values) / sum(pie.values)
        assert all((t == "") == (s < 0.04) for t, s in zip(pie.texttemplate, share))
    sizes = {
        json.dumps(f["legend_side"], sort_keys=True)
        for b in variant_blocks(view)
        if b["kind"] == "figs"
        for f in b["figs"]
    }
    assert len(sizes) == 1  # every pie of the view lays out alike


def test_pie_groups_the_tail_as_other(ib):
    ops = ib.ops
    vals = pie_values(ops[ops["type"] != "IDLE"], "operation")
    assert len(vals) == PIE_SLICES + 1 and vals.index[-1] == "Other"
    total = ops.loc[ops["type"] != "IDLE", "total_self_time_us"].sum()
    assert vals.sum() == pytest.approx(total)


def test_idle_is_a_choice_in_the_page(ib):
    view = tw.views.op_stats(ib)
    p = payload(view)
    assert [c["id"] for c in p["controls"]] == ["include_idle"]
    assert set(p["variants"]) == {"false", "true"}
    pies = {
        k: [f["fig"]["data"][0] for b in blocks if b["kind"] == "figs" for f in b["figs"]]
        for k, blocks in p["variants"].items()
    }
    assert any("IDLE" in pie["labels"] for pie in pies["true"])
    assert not any("IDLE" in pie["labels"] for pie in pies["false"])
    table = p["tables"]["ops"]
    assert table["n"] == len(ib.ops)  # one table, both choices: IDLE rows hidden without it
    (tb,) = [b for b in p["variants"]["false"] if b["kind"] == "table"]
    assert tb["preset"]["exclude"] == {"type": ["IDLE"]}
    # Percentages without IDLE are the analysis' own.
    from tfprof_widgets.analysis.op_stats import op_stats

    mine = op_stats(ib, include_idle=False)
    got = pd.DataFrame({k: decode(table["data"][k]) for k in ("operation", "self_time_percent")})
    got = got.dropna().set_index("operation")["self_time_percent"]
    want = mine.set_index(mine["operation"].astype(str))["self_time_percent"]
    assert got.sort_index().to_numpy() == pytest.approx(want.sort_index().to_numpy(), abs=1e-3)


def test_table_filter_and_sort(ib):
    view = tw.views.op_stats(ib)
    rows = view.filtered(name_regex="^irfft2d_[12]$")
    assert sorted(rows["operation"].astype(str)) == ["irfft2d_1", "irfft2d_2"]
    assert (view.filtered(op_type="Dataset")["type"] == "Dataset").all()
    assert view.filtered(sort_by="occurrences", ascending=True)[
        "occurrences"
    ].is_monotonic_increasing
    assert len(view.filtered(side="Device")) == 0  # a CPU-only run
    with pytest.raises(ValueError, match="invalid name filter"):
        view.filtered(name_regex="(")


# -- tables -------------------------------------------------------------------------------------
def test_table_puts_numbers_first_and_encodes_compactly(gpu):
    names = [f"model/layer_{i}/attention/self/query/MatMul_{i % 7}" for i in range(300)]
    df = pd.DataFrame({"t_us": np.arange(300) * 1.23456, "n": np.arange(300), "name": names})
    t = Table(df, [Column("t_us", digits=1), Column("n"), Column("name")], csv="x.csv")
    p = t.payload()
    assert [c["kind"] for c in p["columns"]] == ["num", "int", "text"]
    assert decode(p["data"]["name"]) == names
    # Real op paths share long prefixes: front-coded, they cost a third.
    ops = gpu.ops["operation"].astype(str)
    sent = Table(gpu.ops, [Column("operation")]).payload()["data"]["operation"]
    assert decode(sent) == ops.tolist()
    assert len(json.dumps(sent)) < 0.4 * len(json.dumps(ops.tolist()))
    assert p["data"]["t_us"][1] == pytest.approx(1.235, abs=1e-3)
    static = t.static_html(rows=5)
    assert static.startswith("<pre><code><b>") and "295 more rows" in static
    assert max(len(re.sub(r"<[^>]+>", "", line)) for line in static.splitlines()) <= 100


def test_static_text_uses_only_tags_sanitizers_keep(ib, gpu):
    for view in (
        tw.views.overview(gpu),
        tw.views.op_stats(gpu),
        tw.views.kernel_stats(gpu),
        tw.views.memory_timeline(ib),
        tw.views.tf_data_graph(ib),
        tw.views.input_pipeline(ib),
    ):
        html = view.static_html()
        tags = set(re.findall(r"</?([a-zA-Z0-9]+)", html))
        assert tags <= SANITIZER_TAGS, (type(view).__name__, tags - SANITIZER_TAGS)
        assert "style=" not in html and "<script" not in html


def test_nbconvert_sanitizer_keeps_the_static_text(gpu):
    strings = pytest.importorskip("nbconvert.filters.strings")
    html = tw.views.kernel_stats(gpu).static_html()
    cleaned = strings.clean_html(html)  # what `nbconvert --sanitize-html` does to outputs
    assert cleaned.count("&lt;") == html.count("&lt;")  # no tag of ours escaped into text
    assert "<abbr title=" in cleaned and "<pre><code>" in cleaned


# -- each view ------------------------------------------------------------------------------------
def test_step_time_graph_equals_run_steps(ib):
    fig = tw.views.overview(ib).figures()["step_time"]
    kept = overview_steps(ib.steps)
    bars = {t.uid.removeprefix("step-"): t for t in fig.data}
    assert set(bars) == {c for c in CATEGORIES if (kept[c] > 0).any()}
    for cat, bar in bars.items():
        np.testing.assert_allclose(bar.y, kept[cat].to_numpy() / 1e3)
    assert bars["input_us"].marker.color == "#d62728"  # waiting for input, in red
    # The legend sits above the plot, the step axis title below it.
    assert fig.layout.legend.yanchor == "bottom" and fig.layout.legend.y >= 1


def test_overview_speaks_of_views_not_xprof_pages(ib, gpu):
    for run in (ib, gpu):
        view = tw.views.overview(run)
        text = view.text() + view.header()
        assert "Section 3" not in text
        assert "trace_viewer" not in text  # no such function here
        assert "tw.views." in text


def test_one_step_reads_right(gpu):
    view = tw.views.overview(gpu)
    text = view.text()
    assert "1 step (" in text and "1 steps" not in text and "σ" not in text
    pipeline = tw.views.input_pipeline(gpu).text()
    assert "(1 step)" in pipeline and "σ" not in pipeline  # as the summary counts it


def test_two_hosts_top_ops_name_their_host(two_hosts):
    view = tw.views.overview(two_hosts)
    table = payload(view)["tables"]["top_ops"]
    host = next(c for c in table["columns"] if c["name"] == "host")
    assert not host.get("hidden")
    rows = list(zip(decode(table["data"]["host"]), decode(table["data"]["operation"])))
    assert len(rows) == len(set(rows))  # dense/MatMul once per host, told apart
    fig = view.figures()["step_time"]
    assert fig.layout.xaxis.title.text == "step · host"


def test_compare_uses_run_names_and_colours_changes(ib):
    other = tw.load(SAMPLES / "custom_loop")
    view = tw.views.compare(ib, other, names=("slow", "fast"))
    bar = view.figures()["step_time"].data[0]
    assert list(bar.x) == ["slow", "fast"]
    assert "fast is" in view.headline() and "faster" in view.headline()
    table = payload(view)["tables"]["diff"]
    # Both runs have steps: the table leads with the change per step, coloured by sign.
    first = table["columns"][0]
    assert first["name"] == "delta_per_step_us" and first["color"] == "sign"
    ratio = decode(table["data"]["ratio"])
    change = decode(table["data"]["change"])
    a = decode(table["data"]["self_time_a_per_step_us"])
    b = decode(table["data"]["self_time_b_per_step_us"])
    for r, c, x, y in zip(ratio, change, a, b):
        if x == 0 or y == 0:
            assert r is None and c.startswith("only in")  # never a ratio of 0.000
    delta = view.figures()["delta"].data[0]
    colors = list(delta.marker.color)
    assert all((c == "#d62728") == (d > 0) for c, d in zip(colors, delta.x))
    # Without names: the runs' own (a logdir's name when the run folder is a timestamp).
    assert tw.views.compare(ib, other).names == ("input_bound", "custom_loop")


def test_memory_shows_heap_peak_and_activity(gpu):
    view = tw.views.memory_timeline(gpu)
    fig = view.figures()["memory"]
    traces = {t.uid: t for t in fig.data}
    s = view.series()
    heap = traces["mem-heap_allocated_bytes"]
    assert heap.fill == "tozeroy"  # an area: visible under "in use"
    np.testing.assert_allclose(
        np.asarray(traces["mem-in_use_bytes"].y, dtype=float) * 2**20,
        s["in_use_bytes"].to_numpy(),
        rtol=1e-6,
    )
    peak = traces["mem-peak"]
    row = gpu.memory_summary.set_index("allocator").loc[view.allocator]
    assert peak.y[0] == pytest.approx(row["peak_in_use_bytes"] / 2**20)
    assert fig.layout.yaxis.title.text == "MiB"
    assert list(fig.layout.yaxis2.tickvals) == [0, 0.25, 0.5, 0.75, 1]
    assert fig.layout.yaxis.range[0] == 0 and fig.layout.yaxis2.range[0] == 0  # zeros align
    # The capture's allocations crowd its end: the view opens zoomed on them.
    x0, x1 = fig.layout.xaxis.range
    span = s["time_us"].max() / 1e3 - s["time_us"].min() / 1e3
    assert x1 - x0 < 0.6 * span and x0 <= row["peak_time_us"] / 1e3 <= x1
    (figs,) = [b for b in variant_blocks(view) if b["kind"] == "figs"]
    assert [r[0] for r in figs["figs"][0]["ranges"]] == ["Zoom to activity", "Whole capture"]
    assert "%{x:,.3f} ms" in traces["mem-in_use_bytes"].hovertemplate
    # Every allocator is one choice in the page.
    p = payload(view)
    assert len(p["variants"]) == len(gpu.memory_summary) == 4


def test_activity_window_holds_most_events_and_the_peak():
    t = np.r_[np.arange(10) * 1.0, 1000 + np.arange(200) * 0.1]
    a, b = activity_window(t, must_hold=1019.0)
    assert 990 < a < 1000 and 1019 <= b < 1025


def test_empty_states_say_what_is_missing(ib, gpu):
    fit = tw.load(SAMPLES / "keras_fit")
    ip = tw.views.input_pipeline(fit)
    html = "".join(b["html"] for b in variant_blocks(ip) if b["kind"] == "html")
    assert "no step waited for input" in html
    assert "device_side" not in ip.figures()
    two = tw.load(SAMPLES / "gpu_shaped")
    tf_data = tw.views.tf_data_graph(two)
    assert tf_data.choices() == [] and "No tf.data iterator events" in tf_data.text()
    assert tw.views.kernel_stats(ib).figures() == {}
    assert "No GPU kernels" in tw.views.kernel_stats(ib).text()


def test_kernel_details_never_show_nan(gpu):
    table = payload(tw.views.kernel_stats(gpu))["tables"]["kernels"]
    op = next(c for c in table["columns"] if c["name"] == "operation")
    assert op.get("hidden")  # this capture names no TF op per kernel: no empty column
    assert "nan" not in json.dumps(table["data"]).lower().replace("nanos", "")


def test_tf_data_graph_offers_pipelines_and_calls(ib):
    view = tw.views.tf_data_graph(ib)
    nodes = view.nodes()
    assert nodes.loc[nodes["is_bottleneck"], "name"].tolist() == ["Map"]
    node_trace = next(t for t in view.figures()["graph"].data if t.uid == "tfdata-nodes")
    assert list(node_trace.text) == nodes["name"].tolist()
    assert "num_parallel_calls" in view.header(view.host, view.pipeline)
    p = payload(view)
    assert [c["id"] for c in p["controls"]] == ["rank"]
    assert len(p["variants"]) == 5  # the five slowest calls


def test_tf_data_graph_reads_each_calls_iterators_once(ib, monkeypatch):
    view = tw.views.tf_data_graph(ib)
    stats, calls = view.stats, []
    real = type(stats).iterator_stats
    monkeypatch.setattr(
        type(stats), "iterator_stats", lambda self, **kw: calls.append(kw) or real(self, **kw)
    )
    view.static_html()
    p = payload(view)
    assert len(p["variants"]) == 5 and len(calls) == 5  # its graph and its table share it


def test_pod_viewer_names_the_straggler_and_its_cause():
    rows = []
    for h, extra_input in (("w0", 0), ("w1", 0), ("w2", 5000), ("w3", 0)):
        for step in range(5):
            r = {c: 0.0 for c in CATEGORIES}
            r.update(host=h, step=step, device_compute_us=10000.0, input_us=1000.0 + extra_input)
            rows.append(r)
    steps = pd.DataFrame(rows)
    summary = pod_summary(steps)
    assert summary["host"].tolist()[0] == "w2" and summary["rank"].tolist() == [1, 2, 3, 4]
    st = straggler(summary)
    assert st["host"] == "w2" and st["cause"] == "input_us"
    assert st["behind_us"] == pytest.approx(5000)
    view = tw.views.pod_viewer(steps)
    assert "w2 is the straggler" in view.text() and "Input" in view.text()
    fig = view.figures()["hosts"]
    assert list(fig.data[0].y) == ["w2", "w0", "w1", "w3"]  # slowest on top

    # Anything with per_host_steps() feeds it too (a pod-scale dataset).
    class Pod:
        def per_host_steps(self):
            return steps

    assert tw.views.pod_viewer(Pod()).summary.equals(summary)
    with pytest.raises(ValueError, match="missing columns"):
        pod_summary(steps.drop(columns=["input_us"]))


def test_pod_viewer_on_two_equal_hosts(two_hosts):
    view = tw.views.pod_viewer(two_hosts)
    assert view.straggler is None and "No straggler" in view.text()
    assert len(view.summary) == 2
    assert set(payload(view)["variants"]) >= {"avg"}


# -- how a view reaches the page ---------------------------------------------------------------
class FakeDisplay:
    """Stands in for IPython.display.display: records what a view sends."""

    def __init__(self):
        self.outputs, self.updates = [], []

    def __call__(self, data, raw=False, display_id=None, metadata=None):
        self.outputs.append(data)
        if display_id:
            outer = self

            class Handle:
                def update(self, data, raw=False):
                    outer.updates.append(data)

            return Handle()


@pytest.fixture
def shown(monkeypatch):
    import IPython.display

    fake = FakeDisplay()
    monkeypatch.setattr(IPython.display, "display", fake)
    _display.reset_lib()
    yield fake
    _png.wait()


def test_a_view_is_image_text_and_script(shown, ib, monkeypatch):
    monkeypatch.setattr(_png, "available", lambda: True)
    monkeypatch.setattr(_png, "render", lambda fig, **kw: b"\x89PNG fake")
    view = tw.views.overview(ib)
    view._ipython_display_()
    _png.wait()
    first, text, script = shown.outputs
    assert set(first) == {"text/plain"} and set(text) == {"text/html", "text/plain"}
    assert set(script) == {"application/javascript", "text/plain"}
    assert shown.updates and "image/png" in shown.updates[0]  # the image follows, async
    js = script["application/javascript"]
    assert "plotly.js (basic - minified) v4.1.1" in js  # the first view carries the viewer
    assert js.startswith("(function (element) {")  # one scope per output (nbconvert)
    payload_json = re.search(r"var payload = (\{.*?\});\n", js).group(1)
    assert json.loads(payload_json)["statics"] == 2
    assert "</" not in payload_json  # safe inside nbconvert's <script>
    tw.views.op_stats(ib)._ipython_display_()
    assert "plotly.js" not in shown.outputs[-1]["application/javascript"]  # once per notebook


def test_the_image_is_built_after_the_viewer_is_sent(shown, ib, monkeypatch):
    """The static figure is built and rendered in the background once all three outputs are
    out: kaleido's browser start (seconds) and plotly.py's figure build must not hold up the
    interactive view (issue 29 item 11)."""
    monkeypatch.setattr(_png, "available", lambda: True)
    asked: list = []

    def render_async(fig, done):
        asked.append((len(shown.outputs), fig))

    monkeypatch.setattr(_png, "render_async", render_async)
    built: list = []
    view = tw.views.overview(ib)
    monkeypatch.setattr(view, "static_figure", lambda: built.append(1) or go.Figure())
    view._ipython_display_()
    assert [n for n, _ in asked] == [3] and not built  # after the script; nothing built yet
    assert callable(asked[0][1]) and asked[0][1]() is not None and built == [1]


def test_quick_figures_give_what_plotly_validates(two_hosts, monkeypatch):
    """Step-time graphs, pies and memory plots skip plotly.py's per-property validation (the
    pod viewer builds a graph per step choice; validated, each took 0.15-0.2 s): built
    validated, they give the same payload, so every property is one plotly accepts, as plotly
    writes it."""
    from tfprof_widgets.views import _common

    makers = [
        tw.views.pod_viewer,
        tw.views.overview,
        tw.views.op_stats,
        tw.views.kernel_stats,
        tw.views.memory_timeline,
        lambda r: tw.views.compare(r, r),
    ]
    quick = [payload(make(two_hosts)) for make in makers]
    assert len(quick[0]["variants"]) > 2  # the pod viewer's step choices are in it
    monkeypatch.setattr(_common, "VALIDATE_FIGURES", True)
    assert [payload(make(two_hosts)) for make in makers] == quick
    with pytest.raises(ValueError, match="bogus"):
        _common.quick_figure([dict(type="bar", y=[1], bogus=1)], {})
    monkeypatch.setattr(_common, "VALIDATE_FIGURES", False)
    assert _common.quick_figure([dict(type="bar", y=[1], bogus=1)], {}) is not None


def test_without_kaleido_a_view_is_text_and_script(shown, ib, monkeypatch):
    monkeypatch.setattr(_png, "available", lambda: False)
    view = tw.views.memory_timeline(ib)
    view._ipython_display_()
    text, script = shown.outputs
    assert "tfprof_widgets[png]" in text["text/html"]  # says what a script-less viewer misses
    assert '"statics":1' in script["application/javascript"]


def test_the_viewer_script_comes_again_when_its_cell_reruns(monkeypatch):
    cells = iter([("c1", 1), ("c1", 1), ("c2", 2), ("c1", 3), ("c1", 3)])
    monkeypatch.setattr(_lib, "_cell", lambda: next(cells))
    _display.reset_lib()
    assert [_display.lib_needed() for _ in range(5)] == [True, False, False, True, False]
    _display.reset_lib()


def test_payloads_are_small_enough_for_a_3_mb_report(gpu):
    from tfprof_widgets import report

    sizes = {k: len(v.html()) for k, v in report.report_views(gpu).items() if k != "timeline"}
    lib = len(_display.viewer_lib())
    assert lib < 1_300_000
    assert lib + sum(sizes.values()) < 2_600_000, sizes


def test_vendored_plotly_matches_plotly_py():
    import plotly.offline

    head = _lib._static("plotly-basic.min.js")[:200]
    assert f"v{plotly.offline.get_plotlyjs_version()}" in head
    lic = (ROOT / "tfprof_widgets" / "views" / "static" / "plotly-basic.LICENSE.txt").read_text()
    assert "MIT License" in lic


def test_static_image_combines_a_views_plots(two_hosts):
    fig = tw.views.op_stats(two_hosts).static_figure()
    pies = [t for t in fig.data if t.type == "pie"]
    assert len(pies) == 4 and len({t.legend for t in pies}) == 4  # a legend per pie
    ip = base.combine_figures(
        list(tw.views.input_pipeline(tw.load(SAMPLES / "input_bound")).figures().values())
    )
    assert {t.type for t in ip.data} == {"bar", "scatter"}


@pytest.mark.skipif(not _png.available(), reason="needs kaleido and Chromium (the png extra)")
def test_png_renders_with_the_system_chromium(gpu):
    assert _png.browser_path() and "chromium" in _png.browser_path()
    png = _png.render(tw.views.kernel_stats(gpu).static_figure())
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 10_000


def test_every_view_has_static_and_viewer_forms(ib, gpu, two_hosts):
    for view in (
        tw.views.overview(ib),
        tw.views.op_stats(ib),
        tw.views.memory_timeline(ib),
        tw.views.tf_data_graph(ib),
        tw.views.kernel_stats(gpu),
        tw.views.input_pipeline(ib),
        tw.views.compare(ib, two_hosts),
        tw.views.pod_viewer(two_hosts),
    ):
        bundle = view._repr_mimebundle_()
        assert {"text/plain", "text/html"} <= set(bundle)
        assert bundle["text/plain"] == repr(view)
        p = payload(view)
        assert p["variants"] and all(isinstance(v, list) for v in p["variants"].values())
        assert view.html().startswith('<div class="tfprof-mount"')


def test_a_kernel_backed_view_carries_its_live_widget_first(shown, monkeypatch):
    """The template's path for a view that needs the kernel (the trace viewer has its own
    three outputs: tests/test_trace_model.py)."""
    import ipywidgets

    monkeypatch.setattr(_png, "available", lambda: False)

    class Live(type(tw.views.overview(tw.load(SAMPLES / "custom_loop")))):
        def live_widget(self):
            return ipywidgets.HTML("live")

    view = Live(tw.load(SAMPLES / "custom_loop"))
    view._ipython_display_()
    first, text, script = shown.outputs
    assert "application/vnd.jupyter.widget-view+json" in first
    js = script["application/javascript"]
    meta = json.loads(re.search(r"var payload = (\{.*?\});\n", js).group(1))
    assert meta["live"] is True and meta["statics"] == 2


def test_table_columns_encode_as_before_on_the_fast_paths():
    """Front coding finds each shared prefix by bisection and whole-int columns skip the
    per-row check: the encodings stay what the page decodes."""
    from tfprof_widgets.views.tables import _front_code

    names = ["", "a", "a/b/c", "a/b/cd", "a/b/d", "a/x", "b"]
    assert _front_code(names) == [0, "", 0, "a", 1, "/b/c", 5, "d", 4, "d", 2, "x", 0, "b"]
    assert encode_column(pd.Series([3, 1, 2], dtype="int64"), "int") == [3, 1, 2]
    assert encode_column(pd.Series([3.7, None]), "int") == [3, None]
    assert encode_column(pd.Series([True, False]), "int") == [1, 0]


def test_an_image_waits_while_the_page_draws_the_view(monkeypatch):
    """Image work starts IMAGE_GRACE_S after the view is displayed (kaleido's browser took
    the CPU from the page's draw), or at once with TFPROF_WIDGETS_IMAGE_GRACE_S=0."""
    import time

    monkeypatch.setattr(_png, "IMAGE_GRACE_S", 0.3)
    monkeypatch.delenv("TFPROF_WIDGETS_IMAGE_GRACE_S", raising=False)
    monkeypatch.setattr(_png, "render", lambda fig, **kw: b"\x89PNG fake")
    for grace, ok in (("", lambda s: s >= 0.3), ("0", lambda s: s < 0.25)):
        if grace:
            monkeypatch.setenv("TFPROF_WIDGETS_IMAGE_GRACE_S", grace)
        got: list = []
        t0 = time.monotonic()
        _png.render_async(go.Figure, lambda png, t0=t0, got=got: got.append(time.monotonic() - t0))
        _png.wait()
        assert len(got) == 1 and ok(got[0]), (grace, got)
