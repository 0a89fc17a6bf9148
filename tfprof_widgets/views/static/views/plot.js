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
    const config = {displaylogo: false, responsive: false, modeBarButtonsToRemove: ["select2d", "lasso2d"],
                    toImageButtonOptions: {filename: this.spec.name || "tfprof"}};
    const p = Plotly.newPlot(this.div, data, layout, config);
    this.themeKey = JSON.stringify(t);
    if (this.spec.click) this.div.on("plotly_click", (ev) => this.clicked(ev));
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
        } else resize();
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
