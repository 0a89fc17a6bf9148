// A view: its title, choosers and, for the chosen values, its blocks (HTML, plots, tables).
// The payload is views/base.py View.payload_json(): {v, title, controls: [{id, label, kind,
// value, options}], variants: {"value|value": [blocks]}, tables: {id: spec}, statics, live,
// height_hint}; every combination of choices is computed in Python, so no kernel is needed.
import { Plotly } from "./plotly_ref.js";
import { el } from "./dom.js";
import { theme, setThemeVars } from "./theme.js";
import { Table } from "./table.js";
import { Plot } from "./plot.js";

export class View {
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
  dropPlots() {
    // Its plots' resize observers and plotly's state, before they are replaced or dropped.
    for (const pl of this.plots) { if (pl.ro) pl.ro.disconnect(); Plotly.purge(pl.div); }
    this.plots = [];
  }
  renderContent() {
    this.dropPlots();
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
