// The table component: sort by a header click, filter by text or regex, virtual scrolling,
// CSV of the rows shown, and a "chip" filter that a pie click sets. Its spec is
// views/tables.py Table.payload(): {columns: [{name, label, kind, digits, full, color, hidden,
// internal, title, missing, colors, ratio, csv}], data: {name: column}, n, sort, csv, empty}; a
// view's payload holds it under tables[id], and a table block's preset ({hide, exclude})
// under each variant (views/base.py View.payload_json).
import { ROW_H } from "./style.js";
import { el, numberFormat } from "./dom.js";
import { decodeColumn } from "./columns.js";

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

export class Table {
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
    this.query = ""; this.chip = null; this.preset = {}; this.links = null; this.onLink = null;
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
    this.body.addEventListener("click", (e) => this.clicked(e));
    return root;
  }
  layout() {
    // Fixed widths for numbers (from the values; the header wraps onto two lines instead),
    // so every virtual row lines up. Other text columns shrink to a floor where the table is
    // narrow (their cells then end in an ellipsis), and the name column, last, keeps room
    // of its own before they grow: in a 1,050 px panel the kernels' names were pushed past
    // the edge, cut without an ellipsis. No column is narrower than its header's longest
    // word (bold), so a header never breaks inside a word ("boun d by").
    const cw = charWidth(this.root), vis = this.visibleCols(), sample = Math.min(this.n, 400);
    const widths = [], mins = [];
    vis.forEach((c, k) => {
      const col = this.data[c.name];
      const words = (c.label || c.name).split(/\s+/).map((w) => w.length);
      const head = Math.min(Math.max(...words) * 1.1, 18);  // header text is bold
      let chars = Math.max(3, head);
      for (let i = 0; i < sample; i++) chars = Math.max(chars, formatCell(col[i], c).length);
      const last = k === vis.length - 1 && !isNum(c);
      const px = (n) => Math.round(n * cw + 14);
      if (last) { const lo = px(Math.max(head, 12)); widths.push("minmax(" + lo + "px,1fr)"); mins.push(lo); }
      else if (isNum(c)) { const w = px(Math.min(chars, 16)); widths.push(w + "px"); mins.push(w); }
      else {
        const hi = px(Math.min(chars, 18)), lo = Math.min(hi, px(Math.max(head, 7)));
        widths.push("minmax(" + lo + "px," + hi + "px)"); mins.push(lo);
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
  setLinks(links) {
    // [{panel, column, cell}] (views/base.py TableBlock.links): a row click opens the panel
    // at the row's key; a link with a cell takes clicks on that column's cell only.
    this.links = links && links.length ? links : null;
    this.root.classList.toggle("tft-linked", !!this.links);
  }
  clicked(e) {
    if (!this.links || !this.onLink) return;
    const row = e.target.closest(".tft-row"), cell = e.target.closest("[data-col]");
    if (!row || row.dataset.i === undefined) return;
    const col = cell ? cell.dataset.col : null;
    const link = this.links.find((l) => l.cell && l.cell === col) || this.links.find((l) => !l.cell);
    if (!link) return;
    const key = this.data[link.column][+row.dataset.i];
    if (key !== null && key !== undefined && key !== "") this.onLink(link.panel, key);
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
      const cmp = (a, b) => {
        const x = key(col[a]), y = key(col[b]);
        if (x === null || y === null) return x === y ? a - b : x === null ? 1 : -1;  // missing last
        const r = typeof x === "number" && typeof y === "number" ? x - y : String(x).localeCompare(String(y));
        return r ? r * d : a - b;
      };
      this.view = this.spec.tree ? this.treeOrder(view, cmp) : view.sort(cmp);
    } else this.view = view;
    this.showCount(view);
  }
  // A tree table (spec.tree = [node column, parent column]) sorts siblings only: each row
  // stays under its parent, depth first; a row whose parent is filtered out is a root.
  treeOrder(view, cmp) {
    const node = this.data[this.spec.tree[0]], parent = this.data[this.spec.tree[1]];
    const shown = new Set(view.map((i) => node[i]));
    const kids = new Map();
    for (const i of view) {
      const p = shown.has(parent[i]) && parent[i] !== node[i] ? parent[i] : "";
      if (!kids.has(p)) kids.set(p, []);
      kids.get(p).push(i);
    }
    const out = [], seen = new Set();
    const walk = (p) => {
      if (seen.has(p)) return;  // a node named twice (e.g. two hosts): its children once
      seen.add(p);
      for (const i of (kids.get(p) || []).sort(cmp)) { out.push(i); walk(node[i]); }
    };
    walk("");
    return out;
  }
  showCount(view) {
    const chip = this.chip;
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
      if (this.links) row.dataset.i = String(i);
      row.style.gridTemplateColumns = this.grid;
      for (const c of vis) {
        const v = this.data[c.name][i], cell = el("div", isNum(c) ? "tf-num" : "", formatCell(v, c));
        if (this.links) cell.dataset.col = c.name;
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
    // A column's header: its csv name where it has one (a TensorFlow-named key, exported
    // under its label), else the data's own key.
    const header = {};
    for (const c of cols) {
      const key = c.full || c.name;
      if (c.csv && !header[key]) header[key] = c.csv;
    }
    const q = (v) => {
      if (v === null || v === undefined || (typeof v === "number" && isNaN(v))) return "";
      const s = String(v);
      return /[",\n\r]/.test(s) ? '"' + s.replace(/"/g, '""') + '"' : s;
    };
    const lines = [names.map((n) => q(header[n] || n)).join(",")];
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
