// A view: its title, choosers and, for the chosen values, its blocks (HTML, plots, tables).
// The payload is views/base.py View.payload_json(): {v, title, controls: [{id, label, kind,
// value, options}], variants: {"value|value": [blocks]}, tables: {id: spec}, statics, live,
// height_hint, panels: {id: {title, missing, items: {key: [blocks]}}}}; every combination of
// choices is computed in Python, so no kernel is needed. A table row or plot point with a link
// opens a panel's item under the content (views/base.py Panel).
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
    if (!t) {
      t = new Table(this.payload.tables[id], id);
      t.onLink = (panel, key) => this.openPanel(panel, key);
      this.tables.set(id, t);
    }
    return t;
  }
  render() {
    const p = this.payload;
    this.root.replaceChildren();
    if (p.title) this.root.appendChild(el("div", "tfprof-title", p.title));
    if ((p.controls || []).length) this.root.appendChild(this.controls());
    this.content = el("div", "tfprof-content");
    this.root.appendChild(this.content);
    this.panelPlots = [];
    this.panel = el("div", "tfprof-panel");
    this.panel.style.display = "none";
    this.root.appendChild(this.panel);
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
    return Promise.all(this.fill(this.content, blocks, this.plots));
  }
  openPanel(id, key) {
    // A panel's item for the clicked key (views/base.py Panel), in place of the one shown.
    const spec = (this.payload.panels || {})[id];
    if (!spec || key === null || key === undefined) return Promise.resolve();
    for (const pl of this.panelPlots) { if (pl.ro) pl.ro.disconnect(); Plotly.purge(pl.div); }
    this.panelPlots = [];
    const box = this.panel;
    box.replaceChildren();
    box.style.display = "";
    box.dataset.panel = id; box.dataset.key = String(key);
    const bar = el("div", "tfprof-title", spec.title + ": " + String(key) + " ");
    const x = el("button", "", "×"); x.title = "Close";
    x.addEventListener("click", () => { box.style.display = "none"; box.replaceChildren(); });
    bar.appendChild(x);
    box.appendChild(bar);
    const blocks = spec.items[String(key)];
    let pending = [];
    if (blocks) pending = this.fill(box, blocks, this.panelPlots);
    else box.appendChild(el("div", "tf-muted", (spec.missing || "").split("{key}").join(String(key))));
    box.scrollIntoView({block: "nearest"});
    return Promise.all(pending);
  }
  fill(into, blocks, plots) {
    const pending = [];
    for (const b of blocks) {
      if (b.kind === "html") {
        const d = el("div", "tfprof-html"); d.innerHTML = b.html; into.appendChild(d);
      } else if (b.kind === "figs") {
        const box = el("div", "tfprof-figs" + (b.row ? " tf-row" : ""));
        into.appendChild(box);
        for (const spec of b.figs) {
          const pl = new Plot(this, spec);
          box.appendChild(pl.root);
          plots.push(pl);
          pending.push(pl);
        }
      } else if (b.kind === "table") {
        if (b.title) into.appendChild(el("div", "tft-title", b.title));
        const t = this.table(b.table);
        into.appendChild(t.root);
        t.setLinks(b.links);
        t.setPreset(b.preset);
      }
    }
    // Draw after the layout exists, so each plot starts at its container's width.
    return pending.map((pl) => pl.draw(this.t));
  }
  retheme() {
    this.t = theme(this.root);
    setThemeVars(this.root, this.t);
    for (const pl of this.plots.concat(this.panelPlots || [])) pl.retheme(this.t);
  }
}
