/* tfprof_widgets views: the one viewer behind every view, in a notebook and in a report.
 *
 * Plain JavaScript, no dependency but the plotly.js bundle it is given, nothing fetched.
 * window.__tfprof.mount(element, payload) draws a view's payload (see views/base.py) into
 * element: its summary, choosers, plots (following the output's width and the page's
 * light/dark theme) and tables (sortable, filterable, virtual-scrolled, CSV).
 * In a notebook the view's static outputs (PNG, text table) sit just before this one; they are
 * hidden once the view has drawn, so script-stripping viewers keep them and others show this.
 */
(function (Plotly) {
  "use strict";
  const VERSION = 1;
  if (window.__tfprof && window.__tfprof.version >= VERSION) return;

  // -- theme ------------------------------------------------------------------------------
  // JupyterLab marks its theme on <body data-jp-theme-light> and in --jp-* variables; a report
  // or another page follows the OS (prefers-color-scheme).
  const darkQuery = window.matchMedia ? window.matchMedia("(prefers-color-scheme: dark)") : null;
  function inLab() {
    const b = document.body;
    return !!b && b.hasAttribute("data-jp-theme-light") && !b.hasAttribute("data-tfprof-page");
  }
  function isLight() {
    if (inLab()) return document.body.getAttribute("data-jp-theme-light") !== "false";
    return !(darkQuery && darkQuery.matches);
  }
  function cssVar(el, name) {
    return inLab() ? getComputedStyle(el).getPropertyValue(name).trim() : "";
  }
  function theme(el) {
    const light = isLight();
    const v = (n, l, d) => cssVar(el, n) || (light ? l : d);
    return {
      light: light,
      bg: v("--jp-layout-color0", "#ffffff", "#1e1e1e"),
      bg2: v("--jp-layout-color2", "#f2f2f2", "#2c2c2c"),
      fg: v("--jp-ui-font-color1", "#1f1f1f", "#e0e0e0"),
      muted: v("--jp-ui-font-color2", "#616161", "#a8a8a8"),
      border: v("--jp-border-color1", "#bdbdbd", "#555555"),
      grid: v("--jp-border-color2", "#e3e3e3", "#3a3a3a"),
      link: v("--jp-content-link-color", "#1a6fd1", "#6cb2ff"),
      bad: light ? "#c62828" : "#ff7b72",
      good: light ? "#2e7d32" : "#56d364",
    };
  }
  function setThemeVars(root, t) {
    const s = root.style;
    s.setProperty("--tf-bg", t.bg); s.setProperty("--tf-bg2", t.bg2); s.setProperty("--tf-fg", t.fg);
    s.setProperty("--tf-muted", t.muted); s.setProperty("--tf-border", t.border);
    s.setProperty("--tf-grid", t.grid); s.setProperty("--tf-link", t.link);
    s.setProperty("--tf-bad", t.bad); s.setProperty("--tf-good", t.good);
    root.dataset.theme = t.light ? "light" : "dark";
  }
  function plotTemplate(t) {
    const axis = {gridcolor: t.grid, linecolor: t.border, zerolinecolor: t.border, tickcolor: t.border,
                  automargin: true, title: {standoff: 8}};
    return {layout: {
      paper_bgcolor: t.bg, plot_bgcolor: t.bg,
      font: {color: t.fg, family: "system-ui, -apple-system, 'Segoe UI', Roboto, sans-serif", size: 12},
      xaxis: axis, yaxis: axis, legend: {bgcolor: "rgba(0,0,0,0)", font: {size: 12}},
      hoverlabel: {bgcolor: t.light ? "#ffffff" : "#333333", bordercolor: t.border, font: {color: t.fg, size: 12}},
      title: {font: {size: 14}, x: 0.01, xanchor: "left"},
      colorway: ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2",
                 "#7f7f7f", "#bcbd22", "#17becf"],
    }};
  }
  const views = new Set();   // mounted view roots, re-themed together
  function rethemeAll() {
    for (const v of views) {
      if (!v.root.isConnected) { views.delete(v); continue; }
      v.retheme();
    }
  }
  let observing = false;
  function observeTheme() {
    if (observing || !document.body) return;
    observing = true;
    new MutationObserver(rethemeAll).observe(document.body,
      {attributes: true, attributeFilter: ["data-jp-theme-light", "data-jp-theme-name"]});
    if (darkQuery && darkQuery.addEventListener) darkQuery.addEventListener("change", rethemeAll);
  }

  // -- CSS, once per page -------------------------------------------------------------------
  const ROW_H = 22;
  const CSS = `
.jp-OutputArea-child:has(+ .jp-OutputArea-child .tfprof-view),
.jp-OutputArea-child:has(+ .jp-OutputArea-child + .jp-OutputArea-child .tfprof-view[data-statics="2"]){display:none}
.tfprof-root{color:var(--tf-fg);font:13px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;
  max-width:100%;min-width:0;box-sizing:border-box;overflow:hidden;padding:2px 0}
.tfprof-root *{box-sizing:border-box}
.tfprof-title{font-weight:600;font-size:15px;margin:0 0 4px}
.tfprof-root .tf-muted{color:var(--tf-muted)}
.tfprof-root .tf-bad{color:var(--tf-bad)}
.tfprof-root .tf-good{color:var(--tf-good)}
.tfprof-root .tf-swatch{display:inline-block;width:.8em;height:.8em;border-radius:2px;margin:0 .25em 0 .5em;vertical-align:-1px}
.tfprof-root p,.tfprof-root ul{margin:3px 0}
.tfprof-root ul{padding-left:1.3em}
.tfprof-root code{font-size:12px}
.tfprof-html{margin:4px 0;overflow-wrap:anywhere}
.tfprof-controls{display:flex;flex-wrap:wrap;gap:6px 16px;align-items:center;margin:4px 0}
.tfprof-controls label{display:inline-flex;gap:6px;align-items:center}
.tfprof-root select,.tfprof-root input,.tfprof-root button{font:inherit;font-size:12px;color:var(--tf-fg);
  background:var(--tf-bg);border:1px solid var(--tf-border);border-radius:3px;padding:1px 5px;max-width:100%}
.tfprof-root button{cursor:pointer}
.tfprof-root button:hover{background:var(--tf-bg2)}
.tfprof-figs{display:grid;grid-template-columns:minmax(0,1fr);gap:4px 12px;min-width:0}
.tfprof-figs.tf-row{grid-template-columns:repeat(auto-fit,minmax(min(100%,360px),1fr))}
.tfprof-fig{min-width:0;position:relative}
.tfprof-fig .tf-figbar{display:flex;gap:6px;justify-content:flex-end;margin:0 0 -2px}
.tfprof-plot{width:100%;min-width:0}
.tft{max-width:100%;min-width:0;margin:6px 0;font-size:12px}
.tft-title{font-weight:600;margin:6px 0 2px}
.tft-bar{display:flex;flex-wrap:wrap;gap:6px 10px;align-items:center;margin:2px 0 4px}
.tft-bar input{width:16em}
.tft-count{color:var(--tf-muted)}
.tft-chip{display:none;border:1px solid var(--tf-border);border-radius:10px;padding:0 4px 0 8px;
  background:var(--tf-bg2);max-width:40em;white-space:nowrap;overflow:hidden;text-overflow:ellipsis}
.tft-chip button{border:0;background:transparent;padding:0 4px;margin-left:2px}
.tft-scroll{overflow:auto;position:relative;border-top:1px solid var(--tf-border);max-width:100%}
.tft-head{display:grid;align-items:end;position:sticky;top:0;z-index:1;background:var(--tf-bg);
  font-weight:600;border-bottom:1px solid var(--tf-border)}
.tft-head>div{padding:2px 6px;cursor:pointer;user-select:none;overflow:hidden;line-height:15px;
  max-height:48px;overflow-wrap:anywhere}
.tft-head>div:hover{background:var(--tf-bg2)}
.tft-body{position:relative}
.tft-row{display:grid;position:absolute;left:0;right:0;height:${ROW_H}px;border-bottom:1px solid var(--tf-grid)}
.tft-row:hover{background:var(--tf-bg2)}
.tft-row>div{padding:0 6px;white-space:nowrap;overflow:hidden;text-overflow:ellipsis;line-height:${ROW_H - 1}px}
.tft .tf-num{text-align:right;font-variant-numeric:tabular-nums}
.tft-empty{padding:6px;color:var(--tf-muted)}
`;
  function injectCss() {
    if (document.getElementById("tfprof-views-css")) return;
    const s = document.createElement("style");
    s.id = "tfprof-views-css";
    s.textContent = CSS;
    document.head.appendChild(s);
  }

  // -- small helpers ------------------------------------------------------------------------
  function el(tag, cls, text) {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined) e.textContent = text;
    return e;
  }
  function whenConnected(node, fn) {
    // JupyterLab evaluates application/javascript before attaching its node.
    if (node.isConnected) return fn();
    const t0 = Date.now();
    const iv = setInterval(() => {
      if (node.isConnected) { clearInterval(iv); fn(); }
      else if (Date.now() - t0 > 20000) clearInterval(iv);
    }, 16);
  }
  const fmtCache = new Map();
  function numberFormat(digits) {
    let f = fmtCache.get(digits);
    if (!f) {
      f = new Intl.NumberFormat("en-US", {minimumFractionDigits: digits, maximumFractionDigits: digits});
      fmtCache.set(digits, f);
    }
    return f;
  }
  function decodeColumn(c) {
    // Columns come as plain arrays, or dictionary-encoded strings {cats, codes}, or with the
    // dictionary front-coded {fc: [shared prefix length, rest, ...], codes}.
    if (c && !Array.isArray(c) && c.fc) {
      const cats = [];
      let prev = "";
      for (let k = 0; k < c.fc.length; k += 2) { prev = prev.slice(0, c.fc[k]) + c.fc[k + 1]; cats.push(prev); }
      return c.codes.map((k) => (k < 0 ? null : cats[k]));
    }
    if (c && !Array.isArray(c) && c.cats) return c.codes.map((k) => (k < 0 ? null : c.cats[k]));
    return c;
  }

  // -- tables -------------------------------------------------------------------------------
  // spec: {columns: [{name, label, kind: num|int|pct|bytes|text|bool, digits, full, color,
  //        hidden, title}], data: {name: column}, n, sort: [name, "asc"|"desc"], csv, empty}
  function formatCell(v, c) {
    if (v === null || v === undefined || (typeof v === "number" && isNaN(v))) return c.missing || "";
    switch (c.kind) {
      case "num": case "pct": return numberFormat(c.digits === undefined ? 1 : c.digits).format(v);
      case "int": return numberFormat(0).format(v);
      case "bytes": return numberFormat(c.digits === undefined ? 2 : c.digits).format(v / 1048576);
      case "bool": return v ? "yes" : "no";
      default: return String(v);
    }
  }
  const isNum = (c) => c.kind === "num" || c.kind === "int" || c.kind === "pct" || c.kind === "bytes";
  let chWidth = 0;
  function charWidth(root) {
    if (chWidth) return chWidth;
    const probe = el("span", "", "0000000000");
    probe.style.cssText = "position:absolute;visibility:hidden;font-size:12px;white-space:nowrap";
    root.appendChild(probe);
    chWidth = probe.getBoundingClientRect().width / 10 || 7;
    probe.remove();
    return chWidth;
  }

  class Table {
    constructor(spec, id) {
      this.spec = spec; this.id = id;
      this.cols = spec.columns;
      this.data = {};
      for (const c of this.cols) if (!c.ratio) this.data[c.name] = decodeColumn(spec.data[c.name]);
      for (const c of this.cols) {
        if (!c.ratio) continue;  // a / b of two other columns, computed here
        const a = this.data[c.ratio[0]], b = this.data[c.ratio[1]];
        this.data[c.name] = a.map((x, i) => (b[i] ? x / b[i] : (x === null ? null : 0)));
      }
      for (const c of this.cols) if (c.full && !this.data[c.full]) this.data[c.full] = decodeColumn(spec.data[c.full]);
      this.n = spec.n;
      this.sortCol = spec.sort ? spec.sort[0] : null;
      this.sortDir = spec.sort && spec.sort[1] === "asc" ? 1 : -1;
      this.query = ""; this.chip = null; this.preset = {};
      this.view = [];
      this.root = this.build();
    }
    visibleCols() {
      const hide = new Set(this.preset.hide || []);
      return this.cols.filter((c) => !c.hidden && !c.internal && !hide.has(c.name));
    }
    csvCols() {
      // Every column of the data (hidden ones too) but the other choice's.
      const hide = new Set(this.preset.hide || []);
      return this.cols.filter((c) => !c.internal && !hide.has(c.name));
    }
    build() {
      const root = el("div", "tft");
      root.dataset.table = this.id;
      const bar = el("div", "tft-bar");
      this.input = el("input"); this.input.type = "search"; this.input.placeholder = "Filter (text or regex)…";
      this.input.setAttribute("aria-label", "filter rows");
      this.count = el("span", "tft-count");
      this.chipEl = el("span", "tft-chip");
      this.csvBtn = el("button", "tft-csv", "CSV");
      this.csvBtn.title = "Download the rows shown (all columns, full names) as CSV";
      bar.append(this.input, this.count, this.chipEl, this.csvBtn);
      this.scroll = el("div", "tft-scroll");
      this.head = el("div", "tft-head");
      this.body = el("div", "tft-body");
      this.scroll.append(this.head, this.body);
      root.append(bar, this.scroll);
      let timer = 0;
      this.input.addEventListener("input", () => { clearTimeout(timer); timer = setTimeout(() => this.apply(), 120); });
      this.input.addEventListener("keydown", (e) => e.stopPropagation());  // no notebook shortcuts while typing
      this.scroll.addEventListener("scroll", () => {
        if (!this.raf) this.raf = requestAnimationFrame(() => { this.raf = 0; this.draw(); });
      }, {passive: true});
      this.csvBtn.addEventListener("click", () => this.downloadCsv());
      return root;
    }
    layout() {
      // Fixed column widths from the values (the header wraps onto two lines instead), so
      // every virtual row lines up; the name column, last, takes the rest and clips.
      const cw = charWidth(this.root), vis = this.visibleCols(), sample = Math.min(this.n, 400);
      const widths = [], mins = [];
      vis.forEach((c, k) => {
        const col = this.data[c.name];
        const words = (c.label || c.name).split(/\s+/).map((w) => w.length);
        let chars = Math.max(3, Math.min(Math.max(...words), 10));
        for (let i = 0; i < sample; i++) chars = Math.max(chars, formatCell(col[i], c).length);
        const last = k === vis.length - 1 && !isNum(c);
        if (last) { const px = Math.round(18 * cw + 12); widths.push("minmax(" + px + "px,1fr)"); mins.push(px); }
        else {
          const px = Math.round(Math.min(chars, isNum(c) ? 16 : 18) * cw + 14);
          widths.push(px + "px"); mins.push(px);
        }
      });
      this.grid = widths.join(" ");
      this.minWidth = Math.ceil(mins.reduce((a, b) => a + b, 0));
      this.head.style.gridTemplateColumns = this.grid;
      this.head.style.minWidth = this.body.style.minWidth = this.minWidth + "px";
      this.head.replaceChildren();
      for (const c of vis) {
        const h = el("div", isNum(c) ? "tf-num" : "");
        h.dataset.col = c.name;
        h.title = (c.title ? c.title + "\n" : "") + c.name + " — click to sort";
        h.textContent = (c.label || c.name) + (this.sortCol === c.name ? (this.sortDir > 0 ? " ▲" : " ▼") : "");
        h.addEventListener("click", () => this.sortBy(c.name));
        this.head.appendChild(h);
      }
    }
    setPreset(preset) {
      this.preset = preset || {};
      this.layout();
      this.apply();
    }
    sortBy(name) {
      const c = this.cols.find((k) => k.name === name);
      if (this.sortCol === name) this.sortDir = -this.sortDir;
      else { this.sortCol = name; this.sortDir = isNum(c) ? -1 : 1; }
      this.layout();
      this.apply();
    }
    setChip(chip) {
      this.chip = chip;
      this.apply();
    }
    apply() {
      const q = this.input.value.trim();
      let re = null;
      if (q) {
        try { re = new RegExp(q, "i"); }
        catch { re = new RegExp(q.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"), "i"); }
      }
      const textCols = [];
      for (const c of this.cols) {
        if (isNum(c)) continue;
        textCols.push(this.data[c.name]);
        if (c.full) textCols.push(this.data[c.full]);
      }
      const exclude = Object.entries(this.preset.exclude || {}).map(([k, vals]) => [this.data[k], new Set(vals)]);
      const chip = this.chip, chipCol = chip ? this.data[chip.column] : null, chipSet = chip ? new Set(chip.values) : null;
      const whereCol = chip && chip.where ? this.data[chip.where[0]] : null, whereVal = chip && chip.where ? chip.where[1] : null;
      const view = [];
      for (let i = 0; i < this.n; i++) {
        let ok = true;
        for (const [col, set] of exclude) if (set.has(col[i])) { ok = false; break; }
        if (ok && chip) ok = (!whereCol || whereCol[i] === whereVal) && chipSet.has(chipCol[i]) !== !!chip.exclude;
        if (ok && re) {
          ok = false;
          for (const col of textCols) { const v = col[i]; if (v !== null && v !== undefined && re.test(String(v))) { ok = true; break; } }
        }
        if (ok) view.push(i);
      }
      if (this.sortCol) {
        const col = this.data[this.sortCol], d = this.sortDir;
        const key = (v) => (v === null || v === undefined || (typeof v === "number" && isNaN(v)) ? null : v);
        view.sort((a, b) => {
          const x = key(col[a]), y = key(col[b]);
          if (x === null || y === null) return x === y ? a - b : x === null ? 1 : -1;  // missing last
          const r = typeof x === "number" && typeof y === "number" ? x - y : String(x).localeCompare(String(y));
          return r ? r * d : a - b;
        });
      }
      this.view = view;
      this.count.textContent = view.length === this.n
        ? numberFormat(0).format(this.n) + " rows"
        : numberFormat(0).format(view.length) + " of " + numberFormat(0).format(this.n) + " rows";
      this.root.dataset.rows = String(view.length);
      if (chip) {
        this.chipEl.style.display = "inline-block";
        this.chipEl.replaceChildren(document.createTextNode(chip.label));
        this.chipEl.title = chip.label;
        const x = el("button", "", "×"); x.title = "Clear this filter";
        x.addEventListener("click", () => this.setChip(null));
        this.chipEl.appendChild(x);
      } else this.chipEl.style.display = "none";
      const visibleRows = Math.min(Math.max(view.length, 1), 16);
      const headH = this.head.offsetHeight || 36;
      this.scroll.style.height = (visibleRows * ROW_H + headH + 2) + "px";
      this.body.style.height = view.length * ROW_H + "px";
      this.rendered = null;
      this.draw();
      this.root.dispatchEvent(new CustomEvent("tft-change", {bubbles: true, detail: {rows: view.length}}));
    }
    draw() {
      if (!this.view.length) {
        this.body.replaceChildren(el("div", "tft-empty", this.n ? "No row matches." : (this.spec.empty || "No rows.")));
        this.body.style.height = ROW_H + 8 + "px";
        return;
      }
      const headH = this.head.offsetHeight || 22;
      const top = Math.max(0, this.scroll.scrollTop - headH);
      const first = Math.max(0, Math.floor(top / ROW_H) - 8);
      const count = Math.ceil((this.scroll.clientHeight || 400) / ROW_H) + 16;
      const last = Math.min(this.view.length, first + count);
      if (this.rendered && this.rendered[0] === first && this.rendered[1] === last) return;
      this.rendered = [first, last];
      const vis = this.visibleCols(), frag = document.createDocumentFragment();
      for (let r = first; r < last; r++) {
        const i = this.view[r], row = el("div", "tft-row");
        row.style.top = r * ROW_H + "px";
        row.style.gridTemplateColumns = this.grid;
        for (const c of vis) {
          const v = this.data[c.name][i], cell = el("div", isNum(c) ? "tf-num" : "", formatCell(v, c));
          if (!isNum(c)) {
            const full = c.full ? this.data[c.full][i] : v;
            if (full !== null && full !== undefined) cell.title = String(full);
          }
          if (c.color === "sign" && typeof v === "number" && v) cell.className += v > 0 ? " tf-bad" : " tf-good";
          if (c.colors) { const k = c.colors[String(v)]; if (k) cell.className += " " + k; }
          row.appendChild(cell);
        }
        frag.appendChild(row);
      }
      this.body.replaceChildren(frag);
    }
    csvText() {
      const cols = this.csvCols();
      const names = [...new Set(cols.map((c) => c.full || c.name))];
      const q = (v) => {
        if (v === null || v === undefined || (typeof v === "number" && isNaN(v))) return "";
        const s = String(v);
        return /[",\n\r]/.test(s) ? '"' + s.replace(/"/g, '""') + '"' : s;
      };
      const lines = [names.map(q).join(",")];
      for (const i of this.view) lines.push(names.map((n) => q(this.data[n][i])).join(","));
      return lines.join("\n") + "\n";
    }
    downloadCsv() {
      const a = document.createElement("a");
      a.download = this.spec.csv || "table.csv";
      a.href = URL.createObjectURL(new Blob([this.csvText()], {type: "text/csv"}));
      document.body.appendChild(a); a.click(); a.remove();
      setTimeout(() => URL.revokeObjectURL(a.href), 2000);
    }
  }

  // -- plots --------------------------------------------------------------------------------
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
  class Plot {
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

  // -- a view -------------------------------------------------------------------------------
  class View {
    constructor(root, payload) {
      this.root = root; this.payload = payload;
      this.tables = new Map();
      this.plots = [];
      this.values = {};
      for (const c of payload.controls || []) this.values[c.id] = c.value;
      this.t = theme(root);
      setThemeVars(root, this.t);
    }
    key() {
      return (this.payload.controls || []).map((c) => String(this.values[c.id])).join("|");
    }
    table(id) {
      let t = this.tables.get(id);
      if (!t) { t = new Table(this.payload.tables[id], id); this.tables.set(id, t); }
      return t;
    }
    render() {
      const p = this.payload;
      this.root.replaceChildren();
      if (p.title) this.root.appendChild(el("div", "tfprof-title", p.title));
      if ((p.controls || []).length) this.root.appendChild(this.controls());
      this.content = el("div", "tfprof-content");
      this.root.appendChild(this.content);
      return this.renderContent();
    }
    controls() {
      const box = el("div", "tfprof-controls");
      for (const c of this.payload.controls) {
        const lab = el("label", "", "");
        lab.appendChild(document.createTextNode(c.label));
        let input;
        if (c.kind === "checkbox") {
          input = el("input"); input.type = "checkbox"; input.checked = !!c.value;
          input.addEventListener("change", () => { this.values[c.id] = input.checked; this.renderContent(); });
          lab.insertBefore(input, lab.firstChild);
        } else {
          input = el("select");
          for (const [label, value] of c.options) {
            const o = el("option", "", label); o.value = String(value);
            if (String(value) === String(c.value)) o.selected = true;
            input.appendChild(o);
          }
          input.addEventListener("change", () => { this.values[c.id] = input.value; this.renderContent(); });
          lab.appendChild(input);
        }
        input.dataset.control = c.id;
        box.appendChild(lab);
      }
      return box;
    }
    renderContent() {
      for (const pl of this.plots) { if (pl.ro) pl.ro.disconnect(); Plotly.purge(pl.div); }
      this.plots = [];
      this.content.replaceChildren();
      const blocks = this.payload.variants[this.key()] || [];
      const pending = [];
      for (const b of blocks) {
        if (b.kind === "html") {
          const d = el("div", "tfprof-html"); d.innerHTML = b.html; this.content.appendChild(d);
        } else if (b.kind === "figs") {
          const box = el("div", "tfprof-figs" + (b.row ? " tf-row" : ""));
          this.content.appendChild(box);
          for (const spec of b.figs) {
            const pl = new Plot(this, spec);
            box.appendChild(pl.root);
            this.plots.push(pl);
            pending.push(pl);
          }
        } else if (b.kind === "table") {
          if (b.title) this.content.appendChild(el("div", "tft-title", b.title));
          const t = this.table(b.table);
          this.content.appendChild(t.root);
          t.setPreset(b.preset);
        }
      }
      // Draw after the layout exists, so each plot starts at its container's width.
      return Promise.all(pending.map((pl) => pl.draw(this.t)));
    }
    retheme() {
      this.t = theme(this.root);
      setThemeVars(this.root, this.t);
      for (const pl of this.plots) pl.retheme(this.t);
    }
  }

  // -- notebook outputs -----------------------------------------------------------------------
  function outputChild(element) {
    return element.closest(".jp-OutputArea-child") || element.closest(".output_area");
  }
  function staticSiblings(element, n) {
    const child = outputChild(element), out = [];
    let s = child ? child.previousElementSibling : null;
    for (let k = 0; k < n && s; k++, s = s.previousElementSibling) out.push(s);
    return out;
  }
  function keepHidden(element, which) {
    // Hide the outputs before this one, and again whenever the output area changes: a
    // display update (the PNG rendered in the background) replaces its output's element.
    const hide = () => { for (const s of which()) s.style.display = "none"; };
    hide();
    const child = outputChild(element);
    if (child && child.parentElement) new MutationObserver(hide).observe(child.parentElement, {childList: true});
  }
  function liveDecision(element, payload, draw) {
    // A kernel-backed view's first output holds its live widget: stand down while it draws,
    // take over where it cannot (exported page: an image there; reopened without a kernel:
    // "Error displaying widget").
    const statics = staticSiblings(element, payload.statics || 1);
    const first = statics[statics.length - 1];
    if (!first || first.querySelector("img")) return draw();
    const decide = () => {
      if (first.querySelector(".tfprof-live-host")) {
        element.style.display = "none";
        keepHidden(element, () => staticSiblings(element, payload.statics || 1).slice(0, -1));
        return true;
      }
      if (/Error displaying widget/.test(first.textContent)) { draw(); return true; }
      return false;
    };
    if (decide()) return;
    const mo = new MutationObserver(() => { if (decide()) mo.disconnect(); });
    mo.observe(first, {subtree: true, childList: true, characterData: true});
    setTimeout(() => { mo.disconnect(); }, 60000);
  }
  // Views out of sight wait: drawn when scrolled near, or one by one when the page is idle.
  const idleQueue = [];
  let idleScheduled = false;
  function drainIdle() {
    idleScheduled = false;
    const next = idleQueue.shift();
    if (next) next();
    if (idleQueue.length) scheduleIdle();
  }
  function scheduleIdle() {
    if (idleScheduled) return;
    idleScheduled = true;
    if (window.requestIdleCallback) window.requestIdleCallback(drainIdle, {timeout: 1500});
    else setTimeout(drainIdle, 60);
  }
  function whenNear(node, fn) {
    if (!("IntersectionObserver" in window)) return fn();
    let done = false;
    const go = () => { if (done) return; done = true; io.disconnect(); fn(); };
    const io = new IntersectionObserver((entries) => {
      if (entries.some((e) => e.isIntersecting)) go();
    }, {rootMargin: "400px 0px"});
    io.observe(node);
    idleQueue.push(go);
    setTimeout(scheduleIdle, 100);
  }
  function mount(element, payload) {
    element = element && element.jquery ? element[0] : element;
    if (!element) return null;
    injectCss();
    observeTheme();
    const t0 = performance.now();
    const root = el("div", "tfprof-root");
    // Keep the place the view will take, so views below stay out of sight until drawn.
    root.style.minHeight = (payload.height_hint || 0) + "px";
    element.appendChild(root);
    const draw = () => {
      root.classList.add("tfprof-view");
      root.dataset.statics = String(payload.statics || 0);
      keepHidden(element, () => staticSiblings(element, payload.statics || 0));
      const v = new View(root, payload);
      views.add(v);
      root.__tfprofView = v;
      const t1 = performance.now();
      return Promise.resolve(v.render()).then(() => {
        root.style.minHeight = "";
        const now = performance.now();
        root.dataset.drawnMs = String(Math.round(now - t0));
        root.dataset.renderMs = String(Math.round(now - t1));
        root.dataset.drawnAt = String(performance.timeOrigin + now);
        root.dispatchEvent(new CustomEvent("tfprof-drawn", {bubbles: true}));
        return v;
      });
    };
    const start = () => (payload.live ? liveDecision(element, payload, draw) : draw());
    whenConnected(element, () => whenNear(root, start));
    return root;
  }
  function mountAll(scope) {
    // Report pages: each <div class="tfprof-mount"> holds its payload in a JSON script.
    for (const m of (scope || document).querySelectorAll(".tfprof-mount:not([data-mounted])")) {
      m.dataset.mounted = "1";
      const s = m.querySelector("script[type='application/json']");
      if (s) mount(m, JSON.parse(s.textContent));
    }
  }

  window.__tfprof = {version: VERSION, mount, mountAll, Plotly, theme, Table};
  const pending = window.__tfprofPending || [];
  window.__tfprofPending = [];
  for (const fn of pending) { try { fn(); } catch (e) { console.error(e); } }
})(window.__tfprofPlotly || window.Plotly);
