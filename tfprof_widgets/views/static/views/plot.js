// One plot of a view: a plotly figure that fills its output's width, follows resizes and the
// theme, with range buttons and a slice/bar click that filters a table. Its spec is one entry
// of a "figs" block of views/base.py View.payload_json(): {name, fig: plotly JSON (fig_json in
// views/_display.py), click: {table, column, others, other, prefix, where}, ranges,
// legend_side, custom: {trace: [columns]}} (views/base.py Plot).
import { Plotly } from "./plotly_ref.js";
import { el } from "./dom.js";
import { decodeColumn } from "./columns.js";
import { plotTemplate } from "./theme.js";

function pointKey(pt) {
  // The key a clicked slice or bar stands for: the first entry of its customdata row. Read
  // from the trace, by point number: on a pie, plotly.js gives pt.customdata as the list of
  // the rows of every point the slice gathers ([[key, full]]), not the row itself.
  const n = pt.pointNumber !== undefined ? pt.pointNumber : (pt.pointNumbers || [])[0];
  const all = pt.data && pt.data.customdata;
  const row = all && n !== undefined && n !== null ? all[n] : pt.customdata;
  return row && typeof row === "object" && row.length !== undefined ? row[0] : row;
}
function legendLayout(spec, narrow, width) {
  // Pies: legend beside the pie where the plot is wide, under it where narrow; the plot
  // area stays the same for every pie of a view, so they keep one size.
  const side = spec.legend_side;
  if (!side) return {};
  return narrow
    ? {"legend.orientation": "h", "legend.x": 0, "legend.xanchor": "left", "legend.y": -0.02,
       "legend.yanchor": "top", height: side.narrow_height, "margin.b": side.narrow_margin_b, "margin.r": 10,
       autosize: true}
    : {"legend.orientation": "v", "legend.x": 1.02, "legend.xanchor": "left", "legend.y": 0.5,
       "legend.yanchor": "middle", height: side.height, "margin.b": side.margin_b,
       "margin.r": Math.round(width * side.right_share), autosize: true};  // a new height alone turns autosize off
}
// Other plots at the width they get (a notebook beside a side panel, a phone): a title wider
// than the plot wraps at a space (it was cut at both ends: "ntation at the peak"), a legend in
// rows under the title gets the rows this width needs (a fixed margin let it run into the
// title), and a legend beside the plot goes under it under 640 px or where it would take
// over a third of the width (it took half of the roofline, whose points then drew under it
// in ~100 px). Values for every key it manages,
// the figure's own where nothing needs changing, so that a wider plot gets them back.
const NARROW_PX = 640, ROW_PX = 22, TITLE_PX = 32, LEGEND_CH_PX = 7, TITLE_CH_PX = 8.5;
function legendNames(data, layout) {
  const names = data.filter((t) => t.type !== "pie" && t.showlegend !== false && t.name !== undefined
    && t.name !== null && t.name !== "").map((t) => String(t.name));
  return names.length > 1 || layout.showlegend ? names : [];
}
function legendRows(names, width) {
  if (!names.length) return 0;
  const entry = 40 + LEGEND_CH_PX * Math.max(...names.map((n) => n.length));
  return Math.ceil(names.length / Math.max(1, Math.floor(width / entry)));
}
function wrapTitle(text, width) {
  const max = Math.max(12, Math.floor((width - 30) / TITLE_CH_PX));
  if (!text || text.length <= max || text.includes("<br>")) return [text, 1];
  const lines = [];
  let line = "";
  for (const word of text.split(" ")) {
    if (line && (line + " " + word).length > max) { lines.push(line); line = word; }
    else line = line ? line + " " + word : word;
  }
  if (line) lines.push(line);
  return [lines.join("<br>"), lines.length];
}
export function fitLayout(layout, data, width) {
  const leg = layout.legend || {}, m = layout.margin || {}, title = layout.title || {};
  const names = legendNames(data, layout);
  const [text, lines] = wrapTitle(title.text || "", width);
  const extra = (lines - 1) * 20;
  const own = (v) => (v === undefined ? null : v);
  const out = {"title.text": title.text === undefined ? null : text, "margin.t": own(m.t), "margin.b": own(m.b),
    "legend.orientation": own(leg.orientation), "legend.x": own(leg.x), "legend.xanchor": own(leg.xanchor),
    "legend.y": own(leg.y), "legend.yanchor": own(leg.yanchor), "legend.yref": own(leg.yref), height: own(layout.height)};
  const plotW = width - (m.l === undefined ? 80 : m.l) - (m.r === undefined ? 80 : m.r);
  const top = m.t === undefined ? 80 : m.t;
  if (names.length && leg.orientation === "h" && (leg.y === undefined || leg.y >= 1)) {
    const need = TITLE_PX + extra + legendRows(names, plotW) * ROW_PX + 8;
    if (need > top) { out["margin.t"] = need; if (layout.height) out.height = layout.height + need - top; }
    else if (extra) out["margin.t"] = top + extra;
  } else if (names.length && leg.orientation !== "h"
             && (width < NARROW_PX || 40 + LEGEND_CH_PX * Math.max(...names.map((n) => n.length)) > 0.35 * width)) {
    const rows = legendRows(names, width - 20), add = rows * ROW_PX + 10;
    Object.assign(out, {"legend.orientation": "h", "legend.x": 0, "legend.xanchor": "left", "legend.y": 0,
      "legend.yanchor": "bottom", "legend.yref": "container",
      "margin.b": Math.max(m.b === undefined ? 80 : m.b, 50) + add, "margin.t": top + extra});
    if (layout.height) out.height = layout.height + add + extra;
  } else if (extra) {
    out["margin.t"] = top + extra;
    if (layout.height) out.height = layout.height + extra;
  }
  return out;
}
function isNarrow(spec, width) {
  return !!spec.legend_side && width < spec.legend_side.min_width;
}
function setPath(layout, k, v) {
  const parts = k.split(".");
  if (parts.length === 1) layout[k] = v;
  else layout[parts[0]] = Object.assign({}, layout[parts[0]] || {}, {[parts[1]]: v});
}
export class Plot {
  constructor(view, spec) {
    this.view = view; this.spec = spec;
    this.root = el("div", "tfprof-fig");
    if (spec.ranges) {
      const bar = el("div", "tf-figbar");
      for (const [label, range] of spec.ranges) {
        const b = el("button", "", label);
        b.addEventListener("click", () => Plotly.relayout(this.div, {"xaxis.range": range, "xaxis.autorange": false}));
        bar.appendChild(b);
      }
      this.root.appendChild(bar);
    }
    this.div = el("div", "tfprof-plot");
    this.root.appendChild(this.div);
  }
  draw(t) {
    const fig = this.spec.fig, layout = Object.assign({}, fig.layout || {});
    let data = fig.data;
    if (this.spec.custom) {
      // Hover details sent as columns (shorter), zipped into plotly's per-point rows here.
      data = data.slice();
      for (const [ti, cols] of Object.entries(this.spec.custom)) {
        const decoded = cols.map(decodeColumn), n = decoded.length ? decoded[0].length : 0, rows = new Array(n);
        for (let i = 0; i < n; i++) rows[i] = decoded.map((c) => c[i]);
        data[+ti] = Object.assign({}, data[+ti], {customdata: rows});
      }
    }
    delete layout.width;
    layout.autosize = true;
    layout.template = plotTemplate(t);
    const width = this.root.clientWidth || this.view.root.clientWidth || 800;
    this.narrow = isNarrow(this.spec, width);
    for (const [k, v] of Object.entries(legendLayout(this.spec, this.narrow, width))) setPath(layout, k, v);
    if (!this.spec.legend_side) {
      for (const [k, v] of Object.entries(fitLayout(fig.layout || {}, data, width))) {
        if (v !== null) setPath(layout, k, v);
      }
    }
    const config = {displaylogo: false, responsive: false, modeBarButtonsToRemove: ["select2d", "lasso2d"],
                    toImageButtonOptions: {filename: this.spec.name || "tfprof"}};
    const p = Plotly.newPlot(this.div, data, layout, config);
    this.themeKey = JSON.stringify(t);
    if (this.spec.click) this.div.on("plotly_click", (ev) => this.clicked(ev));
    if (this.spec.link) this.div.on("plotly_click", (ev) => this.linked(ev));
    let raf = 0, lastW = width;
    this.ro = new ResizeObserver(() => {
      cancelAnimationFrame(raf);
      raf = requestAnimationFrame(() => {
        if (!this.div.isConnected) return;
        const w = this.root.clientWidth;
        if (!w || w === lastW) return;
        lastW = w;
        const resize = () => this.div.isConnected && Plotly.Plots.resize(this.div);
        if (this.spec.legend_side) {
          // Legend beside or below for the new width, then the new size (one after the other:
          // a resize during a relayout is dropped).
          this.narrow = isNarrow(this.spec, w);
          Plotly.relayout(this.div, legendLayout(this.spec, this.narrow, w)).then(resize);
        } else {
          // autosize with it: a new height alone turns autosize off and freezes the width at
          // the old one (a plot drawn at 1,400 px stayed 1,360 px wide in a 700 px window).
          const fit = fitLayout(this.spec.fig.layout || {}, this.spec.fig.data || [], w);
          Plotly.relayout(this.div, Object.assign(fit, {autosize: true, width: null})).then(resize);
        }
      });
    });
    this.ro.observe(this.root);
    return p;
  }
  retheme(t) {
    const key = JSON.stringify(t);
    if (key === this.themeKey || !this.div.data) return;
    this.themeKey = key;
    Plotly.relayout(this.div, {template: plotTemplate(t)});
  }
  linked(ev) {
    // A point click opens the view's panel at the point's key (views/base.py Plot.link).
    const pt = ev && ev.points && ev.points[0], at = this.spec.link.at || 0;
    if (!pt) return;
    const n = pt.pointNumber, all = pt.data && pt.data.customdata;
    const row = all && n !== undefined && n !== null ? all[n] : pt.customdata;
    const key = row && typeof row === "object" && row.length !== undefined ? row[at] : row;
    this.view.openPanel(this.spec.link.panel, key);
  }
  clicked(ev) {
    // A click on a slice (or bar) filters the view's table to the rows it stands for.
    const link = this.spec.click, pt = ev && ev.points && ev.points[0];
    if (!pt) return;
    const table = this.view.tables.get(link.table);
    if (!table) return;
    const key = pointKey(pt);
    const label = String(pt.label !== undefined ? pt.label : key);
    const where = link.where || null;
    if (key === null || key === undefined || key === link.other) {
      table.setChip({column: link.column, values: link.others || [], exclude: true, where: where,
                     label: (link.prefix || "") + label});
    } else {
      table.setChip({column: link.column, values: [key], exclude: false, where: where,
                     label: (link.prefix || "") + label});
    }
    table.root.scrollIntoView({block: "nearest"});
  }
}
