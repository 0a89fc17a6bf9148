// The viewer: state (view window, scroll, selection, search, measure), its DOM (toolbar,
// canvas, tooltip, details), geometry (lanes and groups laid out from meta.lanes: each lane
// is meta.lanes[i].rows rows deep, the rows views/trace/rows.py packs by real overlap),
// theme and view changes. meta is views/trace/viewer.py TraceViewer.meta(): {t_min, t_max,
// initial, activity, lanes: [{label, tooltip, group, rows, n}], groups: [{label, device, n,
// lanes, collapsed}], steps: [[step, start, dur]], height, names: {code: name}, n_events}.
// Fetching, search, details, input and drawing are methods of their own modules, added here.
import { luminance } from "./colors.js";
import { DetailsMethods } from "./details.js";
import { DrawMethods } from "./draw.js";
import { MarkMethods } from "./draw_marks.js";
import { FetchMethods } from "./fetching.js";
import { clamp, hash } from "./format.js";
import { InputMethods } from "./input.js";
import { emptyMarks } from "./marks.js";
import { SearchMethods } from "./search.js";
import { DARK, GROUP_H, LABEL_MAX, LABEL_MAX_SHARE, LABEL_MIN, LABEL_SHARE, LANE_PAD, LIGHT, PALETTE, ROW_H, RULER_H, SCROLL_W, VIEWER_CSS } from "./style.js";

export class Viewer {
  constructor(host, source, meta, first) {
    this.source = source;
    this.meta = meta;
    this.names = new Map();
    this.colorOf = new Map();
    this.addNames(meta.names || {});
    this.collapsed = new Set(meta.groups.map((g, i) => (g.collapsed ? i : -1)).filter((i) => i >= 0));
    const [a, b] = meta.initial;
    this.vx0 = a; this.vx1 = b;
    this.scrollY = 0;
    this.labelW = LABEL_MAX;    // the lane-name column (CSS px), set by resize()
    this.userLabelW = null;     // the width the user dragged it to, if any
    this.marks = first.marks || emptyMarks(a, b);
    this.overview = first.overview || null;
    this.selected = null;       // {row, lane, depth, start, end, name}
    this.details = null;
    this.search = { regex: "", count: null, error: null };
    this.measure = null;        // [t0, t1]
    this.box = null;            // box-zoom drag [t0, t1]
    this.boxMode = false;
    this.origin = { t: 0, label: "capture start" };
    this.keys = new Map();      // held key -> time it went down
    this.mouse = null;          // {x, y} over the canvas
    this.fetching = false;
    this.wanted = false;
    this.drawQueued = false;
    this.lastFrame = 0;
    this.stats = { created: performance.now(), firstDraw: null, frames: [], draws: [],
      roundTrips: [], requests: 0, labels: [] };
    this.build(host);
    this.layout();
    this.theme = null;
    this.media = window.matchMedia ? window.matchMedia("(prefers-color-scheme: dark)") : null;
    this.applyTheme();
    this.watch();
  }

  addNames(names) {
    for (const [id, name] of Object.entries(names)) {
      const k = +id;
      this.names.set(k, name);
      this.colorOf.set(k, hash(name) % PALETTE.length);
    }
  }
  nameOf(id) { return this.names.get(id) ?? ""; }

  build(host) {
    if (!document.getElementById("tfprof-trace-style")) {
      const st = document.createElement("style");
      st.id = "tfprof-trace-style";
      st.textContent = VIEWER_CSS;
      document.head.appendChild(st);
    }
    const root = document.createElement("div");
    root.className = "tfpv";
    // JupyterLab's command-mode shortcuts (a, b, d d, ...) must not fire while typing here.
    root.setAttribute("data-lm-suppress-shortcuts", "true");
    root.innerHTML = `
      <div class="tfpv-bar">
        <button data-act="reset" title="Show the whole capture (0)">⟲ Reset</button>
        <button data-act="activity" title="Zoom to where the events are">⤢ Activity</button>
        <button data-act="box" title="Box zoom: drag over a time range (or alt/ctrl-drag)">⬚ Box zoom</button>
        <button data-act="fit" title="Fit the selection or measured range (f, double-click)">⊡ Fit</button>
        <input type="search" placeholder="Search names (regex)" title="A regular expression over event names; Enter: next match, shift+Enter: previous" spellcheck="false">
        <span class="tfpv-count"></span>
        <button data-act="prev" title="Previous match (shift+Enter)">◀</button>
        <button data-act="next" title="Next match (Enter)">▶</button>
        <button data-act="help" title="Keys and mouse">?</button>
        <span class="tfpv-status"></span>
      </div>
      <div class="tfpv-help">Wheel: zoom at the cursor · drag: pan · shift+wheel: scroll lanes ·
        w/s: zoom · a/d: pan · alt/ctrl-drag or Box zoom: zoom to a range · shift-drag: measure ·
        click: select (details below; arrows are flows) · click a block: zoom into it ·
        double-click or f: fit the selection · click a group name: collapse it · click a step
        label: time from that step · drag the lane names' edge: resize them · Esc: clear</div>
      <div class="tfpv-main"><canvas tabindex="0"></canvas><div class="tfpv-tip"></div>
        <div class="tfpv-note"></div></div>
      <div class="tfpv-details"></div>`;
    host.appendChild(root);
    this.root = root;
    this.canvas = root.querySelector("canvas");
    this.ctx = this.canvas.getContext("2d");
    this.tip = root.querySelector(".tfpv-tip");
    this.note = root.querySelector(".tfpv-note");
    this.detailsEl = root.querySelector(".tfpv-details");
    this.status = root.querySelector(".tfpv-status");
    this.input = root.querySelector("input");
    this.countEl = root.querySelector(".tfpv-count");
    this.helpEl = root.querySelector(".tfpv-help");
    root.__tfprof = this;
    (window.__tfprofViewers = window.__tfprofViewers || []).push(this);
  }

  watch() {
    const c = this.canvas;
    this.listeners = [];
    const on = (el, ev, fn, opts) => { el.addEventListener(ev, fn, opts);
      this.listeners.push([el, ev, fn, opts]); };
    on(c, "wheel", (e) => this.onWheel(e), { passive: false });
    on(c, "mousedown", (e) => this.onDown(e));
    on(window, "mousemove", (e) => this.onMove(e));
    on(window, "mouseup", (e) => this.onUp(e));
    on(c, "mouseleave", () => { this.mouse = null; this.hideTip(); });
    on(c, "dblclick", (e) => { e.preventDefault(); this.fitSelection(); });
    on(c, "keydown", (e) => this.onKey(e, true));
    on(c, "keyup", (e) => this.onKey(e, false));
    on(c, "blur", () => this.keys.clear());
    on(this.root, "keydown", (e) => e.stopPropagation());
    on(this.root.querySelector(".tfpv-bar"), "click", (e) => {
      const act = e.target.closest("button")?.dataset.act;
      if (act) this.action(act);
    });
    on(this.input, "input", () => {
      clearTimeout(this.searchTimer);
      this.searchTimer = setTimeout(() => this.runSearch(this.input.value), 250);
    });
    on(this.input, "keydown", (e) => {
      if (e.key === "Enter") {
        e.preventDefault();
        clearTimeout(this.searchTimer);
        const run = this.input.value !== this.search.regex ? this.runSearch(this.input.value)
          : Promise.resolve();
        run.then(() => this.nextMatch(e.shiftKey ? -1 : 1));
      } else if (e.key === "Escape") { this.input.value = ""; this.runSearch(""); }
    });
    on(this.note, "click", (e) => {
      if (e.target.dataset.act !== "exact") return;
      const t = this.source.tiles.find((x) => x.exact);
      if (t) this.setView(t.x0, t.x1);
    });
    on(this.detailsEl, "click", (e) => {
      const a = e.target.closest("[data-row]");
      if (a) { this.jumpTo(JSON.parse(a.dataset.go)); return; }
      if (e.target.closest(".x")) this.select(null);
    });
    this.resizer = new ResizeObserver(() => this.resize());
    this.resizer.observe(this.root);
    // Theme: JupyterLab's (its CSS variables and body attributes, live), or the page's
    // prefers-color-scheme offline.
    this.themeWatch = new MutationObserver(() => this.applyTheme());
    this.themeWatch.observe(document.body, { attributes: true,
      attributeFilter: ["data-jp-theme-light", "data-jp-theme-name", "class", "style"] });
    this.themeWatch.observe(document.head, { childList: true });
    if (this.media) on(this.media, "change", () => this.applyTheme());
    this.resize();
  }

  destroy() {
    for (const [el, ev, fn, opts] of this.listeners) el.removeEventListener(ev, fn, opts);
    this.resizer.disconnect();
    this.themeWatch.disconnect();
    if (this.source.close) this.source.close();
    const list = window.__tfprofViewers || [];
    const i = list.indexOf(this);
    if (i >= 0) list.splice(i, 1);
  }

  applyTheme() {
    const cs = getComputedStyle(this.root);
    const jp = (n) => cs.getPropertyValue(n).trim();
    const jbg = jp("--jp-layout-color0");
    let dark;
    if (jbg) dark = document.body.dataset.jpThemeLight === "false" || luminance(jbg) < 0.35;
    else dark = !!(this.media && this.media.matches);
    const t = { ...(dark ? DARK : LIGHT), dark };
    if (jbg) {
      t.bg = jbg;
      t.panel = jp("--jp-layout-color1") || t.panel;
      t.fg = jp("--jp-ui-font-color1") || t.fg;
      t.muted = jp("--jp-ui-font-color2") || t.muted;
      t.border = jp("--jp-border-color2") || t.border;
      t.accent = jp("--jp-brand-color1") || t.accent;
    }
    const key = JSON.stringify(t);
    if (key === this.themeKey) return;
    this.themeKey = key;
    this.theme = t;
    const s = this.root.style;
    s.setProperty("--tfpv-bg", t.bg); s.setProperty("--tfpv-panel", t.panel);
    s.setProperty("--tfpv-fg", t.fg); s.setProperty("--tfpv-muted", t.muted);
    s.setProperty("--tfpv-border", t.border); s.setProperty("--tfpv-accent", t.accent);
    s.setProperty("--tfpv-tip-bg", t.tipBg); s.setProperty("--tfpv-tip-fg", t.tipFg);
    s.setProperty("--tfpv-note-bg", t.noteBg);
    this.root.dataset.theme = dark ? "dark" : "light";
    this.requestDraw();
  }

  layout() {
    // Content y of every group header and lane (lanes of a collapsed group are hidden).
    const lanes = this.meta.lanes;
    this.laneY = new Float64Array(lanes.length).fill(-1);
    this.laneH = new Float64Array(lanes.length);
    this.groupY = [];
    let y = 0;
    this.meta.groups.forEach((g, gi) => {
      this.groupY.push(y);
      y += GROUP_H;
      const open = !this.collapsed.has(gi);
      for (const li of g.lanes) {
        this.laneH[li] = lanes[li].rows * ROW_H + LANE_PAD;
        if (open) { this.laneY[li] = y; y += this.laneH[li]; }
      }
    });
    this.contentH = y;
    this.laneGroup = new Int32Array(lanes.length);
    this.meta.groups.forEach((g, gi) => { for (const li of g.lanes) this.laneGroup[li] = gi; });
  }

  labelWidth(w) {
    // A fifth of the width within [LABEL_MIN, LABEL_MAX], or where the user dragged it (at
    // most LABEL_MAX_SHARE of the width): a narrow output keeps most of it for the timeline.
    const auto = clamp(Math.round(w * LABEL_SHARE), LABEL_MIN, LABEL_MAX);
    if (this.userLabelW === null) return auto;
    return Math.round(clamp(this.userLabelW, Math.min(LABEL_MIN, auto), Math.max(auto, w * LABEL_MAX_SHARE)));
  }
  setLabelWidth(px) {
    this.userLabelW = px;
    this.labelW = this.labelWidth(this.W);
    this.requestDraw();
  }
  resize() {
    const w = Math.max(200, this.root.clientWidth - 2);
    const maxH = this.meta.height || 620;
    const h = Math.round(Math.min(maxH, RULER_H + this.contentH + 2));
    const dpr = window.devicePixelRatio || 1;
    if (w === this.W && h === this.H && dpr === this.dpr) return;
    this.W = w; this.H = h; this.dpr = dpr;
    this.labelW = this.labelWidth(w);
    this.canvas.style.width = `${w}px`;
    this.canvas.style.height = `${h}px`;
    this.canvas.width = Math.round(w * dpr);
    this.canvas.height = Math.round(h * dpr);
    this.scrollY = clamp(this.scrollY, 0, this.maxScroll());
    this.drawNow();
    this.maybeFetch();
    // devicePixelRatio changes (browser zoom, another screen) come as a media change.
    if (this.dprWatch) this.dprWatch.removeEventListener("change", this.dprFn);
    if (window.matchMedia) {
      this.dprWatch = window.matchMedia(`(resolution: ${dpr}dppx)`);
      this.dprFn = () => this.resize();
      this.dprWatch.addEventListener("change", this.dprFn);
    }
  }
  get trackW() { return this.W - this.labelW - SCROLL_W; }
  maxScroll() { return Math.max(0, this.contentH - (this.H - RULER_H)); }
  xOf(t) { return this.labelW + (t - this.vx0) * this.trackW / (this.vx1 - this.vx0); }
  tOf(x) { return this.vx0 + (x - this.labelW) * (this.vx1 - this.vx0) / this.trackW; }
  screenY(contentY) { return RULER_H + contentY - this.scrollY; }

  setView(a, b, { fetch = true } = {}) {
    const span = this.meta.t_max - this.meta.t_min;
    const minW = 1e-3;                       // 1 ns
    const maxW = Math.max(span * 1.5, 1);
    let w = clamp(b - a, minW, maxW);
    let c = (a + b) / 2;
    const lo = this.meta.t_min - span * 0.25, hi = this.meta.t_max + span * 0.25;
    c = clamp(c, lo + w / 2 > hi - w / 2 ? (lo + hi) / 2 : lo + w / 2,
      lo + w / 2 > hi - w / 2 ? (lo + hi) / 2 : hi - w / 2);
    this.vx0 = c - w / 2; this.vx1 = c + w / 2;
    this.tipStale = true;
    this.requestDraw();
    if (fetch) this.maybeFetch();
  }
  zoomAt(factor, x) {
    const t = this.tOf(x);
    this.setView(t - (t - this.vx0) * factor, t + (this.vx1 - t) * factor);
  }
  pan(dt) { this.setView(this.vx0 + dt, this.vx1 + dt); }
  scrollBy(dy) {
    this.scrollY = clamp(this.scrollY + dy, 0, this.maxScroll());
    this.requestDraw();
  }
  action(act) {
    if (act === "reset") this.setView(this.meta.t_min, this.meta.t_max);
    else if (act === "activity") this.setView(...this.meta.activity);
    else if (act === "fit") this.fitSelection();
    else if (act === "box") {
      this.boxMode = !this.boxMode;
      this.root.querySelector('[data-act="box"]').classList.toggle("on", this.boxMode);
    } else if (act === "next" || act === "prev") this.nextMatch(act === "next" ? 1 : -1);
    else if (act === "help") {
      this.helpEl.style.display = this.helpEl.style.display === "block" ? "none" : "block";
    }
    this.canvas.focus({ preventScroll: true });
  }
  fitSelection() {
    let a, b;
    if (this.measure) [a, b] = this.measure;
    else if (this.selected) [a, b] = [this.selected.start, this.selected.end];
    else { this.setView(...this.meta.activity); return; }
    if (b < a) [a, b] = [b, a];
    const w = Math.max(b - a, 0.01);
    this.setView(a - w * 0.08, b + w * 0.08);
  }

}

// The methods of the other modules, as if written in the class above.
for (const part of [FetchMethods, SearchMethods, DetailsMethods, InputMethods, DrawMethods, MarkMethods]) {
  for (const key of Object.getOwnPropertyNames(part.prototype)) {
    if (key !== "constructor") Object.defineProperty(Viewer.prototype, key, Object.getOwnPropertyDescriptor(part.prototype, key));
  }
}
