// tfprof_widgets trace viewer: a trace drawn on a <canvas>, like TensorBoard's trace viewer
// and Perfetto. One ES module, no dependencies, no network. Two ways in:
//   * `export default { render }`: the anywidget view, fed by the kernel (custom messages
//     with binary buffers; see tfprof_widgets/widgets/trace_viewer.py for the protocol);
//   * `renderOffline(el, payload)`: the same viewer on an embedded multi-resolution payload,
//     for exported notebooks and HTML reports, with no kernel.
// Keys (canvas focused): w/s zoom, a/d pan, f fit the selection, Esc clears.

let colorCtx = null;  // a scratch canvas that normalises CSS colours
const LABEL_W = 220;   // lane-name column, CSS px
const RULER_H = 38;    // ruler: step labels above, time ticks below
const ROW_H = 18;      // one nesting depth
const GROUP_H = 22;    // a host/plane group header
const LANE_PAD = 3;    // space under each lane
const SCROLL_W = 9;    // vertical scrollbar
const FONT = "11px system-ui, -apple-system, 'Segoe UI', Roboto, sans-serif";
const BOLD = "600 11.5px system-ui, -apple-system, 'Segoe UI', Roboto, sans-serif";
const PALETTE = ["#1f77b4", "#aec7e8", "#ff7f0e", "#ffbb78", "#2ca02c", "#98df8a", "#d62728",
  "#ff9896", "#9467bd", "#c5b0d5", "#8c564b", "#c49c94", "#e377c2", "#f7b6d2", "#7f7f7f",
  "#c7c7c7", "#bcbd22", "#dbdb8d", "#17becf", "#9edae5"];
const TEXT_ON = PALETTE.map((c) => (luminance(c) > 0.55 ? "#111" : "#fff"));

const LIGHT = { bg: "#ffffff", panel: "#f5f5f5", fg: "#1f1f1f", muted: "#666666",
  border: "#d0d0d0", grid: "rgba(0,0,0,0.07)", band: "rgba(0,0,0,0.045)",
  bandLabel: "#555", accent: "#1976d2", select: "#111111", flow: "#c2185b",
  tipBg: "#fffff0", tipFg: "#111", noteBg: "#fff8e1", block: 0.55, dim: 0.22 };
const DARK = { bg: "#1e1e1e", panel: "#262626", fg: "#e6e6e6", muted: "#a0a0a0",
  border: "#444444", grid: "rgba(255,255,255,0.08)", band: "rgba(255,255,255,0.05)",
  bandLabel: "#bbb", accent: "#64b5f6", select: "#ffffff", flow: "#ff80ab",
  tipBg: "#333333", tipFg: "#eee", noteBg: "#3e3520", block: 0.5, dim: 0.2 };

const CSS = `
.tfpv{font:12px/1.35 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:var(--tfpv-fg);
 background:var(--tfpv-bg);border:1px solid var(--tfpv-border);border-radius:4px;
 box-sizing:border-box;width:100%;min-width:360px;position:relative}
.tfpv *{box-sizing:border-box}
.tfpv-bar{display:flex;flex-wrap:wrap;align-items:center;gap:5px;padding:4px 6px;
 border-bottom:1px solid var(--tfpv-border);background:var(--tfpv-panel)}
.tfpv-bar button{font:inherit;color:inherit;background:var(--tfpv-bg);border:1px solid
 var(--tfpv-border);border-radius:3px;padding:0 7px;cursor:pointer;line-height:20px}
.tfpv-bar button.on{background:var(--tfpv-accent);color:#fff;border-color:var(--tfpv-accent)}
.tfpv-bar input{font:inherit;color:inherit;background:var(--tfpv-bg);border:1px solid
 var(--tfpv-border);border-radius:3px;padding:0 6px;width:210px;line-height:20px}
.tfpv-bar input.bad{border-color:#d62728}
.tfpv-count{color:var(--tfpv-muted);min-width:64px}
.tfpv-status{margin-left:auto;color:var(--tfpv-muted);white-space:nowrap;overflow:hidden;
 text-overflow:ellipsis;max-width:50%}
.tfpv-main{position:relative;line-height:0}
.tfpv-main canvas{display:block;outline:none}
.tfpv-tip{position:absolute;pointer-events:none;z-index:5;max-width:560px;padding:5px 7px;
 border-radius:3px;background:var(--tfpv-tip-bg);color:var(--tfpv-tip-fg);line-height:1.35;
 box-shadow:0 1px 5px rgba(0,0,0,.35);font-size:11.5px;white-space:pre-wrap;
 overflow-wrap:anywhere;display:none}
.tfpv-note{position:absolute;right:14px;bottom:6px;z-index:4;padding:2px 8px;border-radius:3px;
 background:var(--tfpv-note-bg);color:var(--tfpv-fg);border:1px solid var(--tfpv-border);
 font-size:11.5px;line-height:1.4;display:none;max-width:60%}
.tfpv-details{border-top:1px solid var(--tfpv-border);padding:6px 8px;max-height:360px;
 overflow:auto;display:none;background:var(--tfpv-panel)}
.tfpv-details h4{margin:0 0 4px;font-size:12.5px;overflow-wrap:anywhere}
.tfpv-details table{border-collapse:collapse;font-size:11.5px;margin:2px 0 6px}
.tfpv-details td{padding:1px 10px 1px 0;vertical-align:top;overflow-wrap:anywhere}
.tfpv-details td:first-child{color:var(--tfpv-muted);white-space:nowrap}
.tfpv-details .sec{font-weight:600;margin-top:4px}
.tfpv-details a{color:var(--tfpv-accent);cursor:pointer;text-decoration:underline}
.tfpv-details .cols{display:flex;gap:24px;flex-wrap:wrap}
.tfpv-details .cols>div{flex:1 1 360px;min-width:0}
.tfpv-details .x{float:right;cursor:pointer;color:var(--tfpv-muted);padding:0 4px}
.tfpv-help{color:var(--tfpv-muted);font-size:11px;padding:3px 8px;display:none;
 border-top:1px solid var(--tfpv-border);line-height:1.5}
`;

// -- small helpers ----------------------------------------------------------------------
function luminance(color) {
  const rgb = parseColor(color);
  if (!rgb) return 1;
  const f = (v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; };
  return 0.2126 * f(rgb[0]) + 0.7152 * f(rgb[1]) + 0.0722 * f(rgb[2]);
}
function parseColor(c) {
  if (!c) return null;
  if (typeof document !== "undefined") {
    colorCtx = colorCtx || document.createElement("canvas").getContext("2d");
    colorCtx.fillStyle = "#000";
    colorCtx.fillStyle = c;
    c = colorCtx.fillStyle;
  }
  let m = /^#([0-9a-f]{6})$/i.exec(c);
  if (m) return [0, 2, 4].map((i) => parseInt(m[1].slice(i, i + 2), 16));
  m = /rgba?\(\s*([\d.]+)[,\s]+([\d.]+)[,\s]+([\d.]+)/i.exec(c);
  return m ? [+m[1], +m[2], +m[3]] : null;
}
function hash(s) {  // FNV-1a: the same colour for the same name, in every view
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) { h ^= s.charCodeAt(i); h = Math.imul(h, 0x01000193); }
  return h >>> 0;
}
function esc(s) {
  return String(s).replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;",
    '"': "&quot;", "'": "&#39;" }[c]));
}
function fmtDur(us) {
  const a = Math.abs(us);
  if (!isFinite(us)) return "—";
  if (a === 0) return "0";
  if (a < 1) return `${+(us * 1e3).toPrecision(3)} ns`;
  if (a < 1e3) return `${+us.toPrecision(4)} µs`;
  if (a < 1e6) return `${+(us / 1e3).toPrecision(4)} ms`;
  return `${+(us / 1e6).toPrecision(4)} s`;
}
function fmtAt(us) {  // a point in time, precise to the ns at any zoom
  const a = Math.abs(us);
  if (a < 1e3) return `${fmtNum(us, 3)} µs`;
  if (a < 1e6) return `${fmtNum(us / 1e3, 6)} ms`;
  return `${fmtNum(us / 1e6, 9)} s`;
}
function fmtNum(v, digits) {
  return v.toLocaleString("en-US", { minimumFractionDigits: digits,
    maximumFractionDigits: digits });
}
function clamp(v, a, b) { return v < a ? a : v > b ? b : v; }
// A short form of a long event name for bar labels: a C++ kernel without its return type,
// template arguments and parameters; a TF op path's last component.
function shortName(name) {
  let s = name;
  if (s.length > 40 && (s.includes("<") || s.includes("("))) {
    s = s.replace(/^(void|[\w:]+\*?)\s+(?=[\w:~]+[<(])/, "");
    let out = "", depth = 0;
    for (const ch of s) {
      if (ch === "<") depth++;
      else if (ch === ">") depth = Math.max(0, depth - 1);
      else if (ch === "(" && depth === 0) break;
      else if (depth === 0) out += ch;
    }
    s = out.trim() || s;
  }
  if (s.length > 40 && s.includes("/")) s = "…/" + s.slice(s.lastIndexOf("/") + 1);
  return s;
}

// -- marks: the binary layout written by Marks.pack() in trace_model.py ------------------
const TYPED = { f8: Float64Array, i4: Int32Array, u4: Uint32Array, u2: Uint16Array };
function toArrayBuffer(buf) {
  if (buf instanceof ArrayBuffer) return buf;
  // DataView or typed array from the widget manager: copy so every column is aligned.
  return new Uint8Array(buf.buffer, buf.byteOffset, buf.byteLength).slice().buffer;
}
function unpackMarks(header, buf) {
  const ab = toArrayBuffer(buf);
  const n = header.n;
  const m = { x0: header.x0, x1: header.x1, cols: header.cols, n, nEvents: header.n_events,
    reqCols: header.req_cols || header.cols,
    complete: header.complete, hits: null };
  for (const [field, dtype, off] of header.layout) m[field] = new TYPED[dtype](ab, off, n);
  return m;
}
function emptyMarks(x0, x1) {
  return { x0, x1, cols: 0, n: 0, nEvents: 0, complete: true, start: new Float64Array(0),
    end: new Float64Array(0), row: new Int32Array(0), lane: new Int32Array(0),
    name: new Int32Array(0), count: new Uint32Array(0), depth: new Uint16Array(0),
    hits: null };
}

// -- data sources ---------------------------------------------------------------------------
// The live source talks to the kernel; each request carries this view's id (several views
// of one widget share the kernel side) and a sequence number (stale answers are dropped).
class KernelSource {
  constructor(model) {
    this.model = model;
    this.vid = Math.random().toString(36).slice(2);
    this.pending = new Map();
    this.seq = 0;
    this.live = true;
    this.onMsg = (msg, buffers) => {
      if (!msg || msg.vid !== this.vid) return;
      const p = this.pending.get(msg.seq);
      if (!p) return;
      this.pending.delete(msg.seq);
      if (msg.type === "error") p.reject(new Error(msg.message));
      else p.resolve([msg, buffers || []]);
    };
    model.on("msg:custom", this.onMsg);
  }
  close() { this.model.off("msg:custom", this.onMsg); }
  ask(content) {
    const seq = ++this.seq;
    return new Promise((resolve, reject) => {
      this.pending.set(seq, { resolve, reject });
      this.model.send({ ...content, vid: this.vid, seq });
    });
  }
  async window(x0, x1, cols, regex) {
    const [msg, buffers] = await this.ask({ type: "window", x0, x1, cols, search: regex || null });
    return { marks: unpackMarks(msg.marks, buffers[0]), names: msg.names || {} };
  }
  async details(row) { return (await this.ask({ type: "details", row }))[0].details; }
  async search(regex) { return (await this.ask({ type: "search", search: regex }))[0]; }
  async next(regex, t, row, direction) {
    return (await this.ask({ type: "next", search: regex, t, row, direction }))[0].event;
  }
}

// The offline source answers from the embedded tiles: a tree of zoom levels (each tile cut
// in four below it, where it had merged blocks) and the busiest step in full.
class StaticSource {
  constructor(payload) {
    this.live = false;
    this.payload = payload;
    this.tiles = payload.tiles;
    this.nameCounts = payload.name_counts || {};
    this.ready = Promise.all(this.tiles.map(async (t) => {
      const bytes = Uint8Array.from(atob(t.data), (c) => c.charCodeAt(0));
      let raw = bytes.buffer;
      if (t.deflate) {
        const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("deflate"));
        raw = await new Response(stream).arrayBuffer();
      }
      t.marks = unpackMarks(t.header, raw);
      delete t.data;
    }));
  }
  pick(x0, x1, pxUs) {
    // The coarsest tiles of the tree fine enough for the view (or the finest there are,
    // which is where detail ends).
    const out = [];
    let short = false;
    const visit = (i) => {
      const t = this.tiles[i];
      if (t.x1 <= x0 || t.x0 >= x1) return;
      const colw = t.marks.cols ? (t.x1 - t.x0) / t.marks.cols : 0;
      if (t.marks.complete || colw <= pxUs * 1.5 || !t.children) {
        if (!t.marks.complete && colw > pxUs * 3) short = true;
        out.push(t);
        return;
      }
      for (const c of t.children) visit(c);
    };
    visit(0);
    return { tiles: out, short };
  }
  async window(x0, x1, cols) {
    await this.ready;
    // The view is the middle half of what is asked for: inside the span kept in full, that
    // span answers alone (the viewer draws the overview around it).
    const v0 = x0 + (x1 - x0) / 4, v1 = x1 - (x1 - x0) / 4;
    const exact = this.tiles.find((t) => t.exact && t.x0 <= v0 && v1 <= t.x1);
    if (exact) {
      return { marks: { ...exact.marks, reqCols: 0, short: false, exactStep: true,
        order: undefined }, names: {} };
    }
    const { tiles, short } = this.pick(x0, x1, (x1 - x0) / Math.max(1, cols));
    const seen = new Set();
    const parts = [];
    let n = 0;
    for (const t of tiles) {
      const m = t.marks;
      const keep = [];
      for (let i = 0; i < m.n; i++) {
        if (m.end[i] < x0 || m.start[i] > x1) continue;
        if (m.row[i] >= 0) { if (seen.has(m.row[i])) continue; seen.add(m.row[i]); }
        keep.push(i);
      }
      parts.push([m, keep]);
      n += keep.length;
    }
    const out = emptyMarks(x0, x1);
    for (const k of ["start", "end"]) out[k] = new Float64Array(n);
    for (const k of ["row", "lane", "name"]) out[k] = new Int32Array(n);
    out.count = new Uint32Array(n);
    out.depth = new Uint16Array(n);
    let j = 0, events = 0, complete = true, colsUsed = 0;
    for (const [m, keep] of parts) {
      if (!m.complete) complete = false;
      colsUsed = Math.max(colsUsed, m.cols ? Math.round(m.cols * (x1 - x0) / (m.x1 - m.x0)) : 0);
      for (const i of keep) {
        out.start[j] = m.start[i]; out.end[j] = m.end[i]; out.row[j] = m.row[i];
        out.lane[j] = m.lane[i]; out.name[j] = m.name[i]; out.count[j] = m.count[i];
        out.depth[j] = m.depth[i]; events += m.count[i]; j++;
      }
    }
    Object.assign(out, { n, nEvents: events, complete, cols: complete ? 0 : colsUsed,
      reqCols: cols,
      short, exactStep: tiles.length === 1 && !!tiles[0].exact });
    return { marks: out, names: {} };
  }
  async details() { return null; }
  async search(regex) {
    const re = new RegExp(regex);
    let count = 0;
    for (const [id, name] of Object.entries(this.payload.meta.names)) {
      if (re.test(name)) count += this.nameCounts[id] || 0;
    }
    return { count, offline: true };
  }
  async next(regex, t, row, direction) {
    await this.ready;
    const re = new RegExp(regex);
    const names = this.payload.meta.names;
    const match = new Map();
    let best = null;
    for (const tile of this.tiles) {
      const m = tile.marks;
      for (let i = 0; i < m.n; i++) {
        if (m.row[i] < 0) continue;
        let ok = match.get(m.name[i]);
        if (ok === undefined) { ok = re.test(names[m.name[i]] || ""); match.set(m.name[i], ok); }
        if (!ok) continue;
        const s = m.start[i], r = m.row[i];
        const after = direction >= 0 ? (s > t || (s === t && r > row)) : (s < t || (s === t && r < row));
        if (!after) continue;
        if (!best || (direction >= 0 ? (s < best.start || (s === best.start && r < best.row))
          : (s > best.start || (s === best.start && r > best.row)))) {
          best = { row: r, lane: m.lane[i], depth: m.depth[i], start: s, end: m.end[i],
            name: names[m.name[i]] || "" };
        }
      }
    }
    return best;
  }
}

// -- the viewer -----------------------------------------------------------------------------
class Viewer {
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

  // -- names and colours --------------------------------------------------------------
  addNames(names) {
    for (const [id, name] of Object.entries(names)) {
      const k = +id;
      this.names.set(k, name);
      this.colorOf.set(k, hash(name) % PALETTE.length);
    }
  }
  nameOf(id) { return this.names.get(id) ?? ""; }

  // -- DOM ----------------------------------------------------------------------------
  build(host) {
    if (!document.getElementById("tfprof-trace-style")) {
      const st = document.createElement("style");
      st.id = "tfprof-trace-style";
      st.textContent = CSS;
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
        label: time from that step · Esc: clear</div>
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

  // -- geometry -------------------------------------------------------------------------
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

  resize() {
    const w = Math.max(360, this.root.clientWidth - 2);
    const maxH = this.meta.height || 620;
    const h = Math.round(Math.min(maxH, RULER_H + this.contentH + 2));
    const dpr = window.devicePixelRatio || 1;
    if (w === this.W && h === this.H && dpr === this.dpr) return;
    this.W = w; this.H = h; this.dpr = dpr;
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
  get trackW() { return this.W - LABEL_W - SCROLL_W; }
  maxScroll() { return Math.max(0, this.contentH - (this.H - RULER_H)); }
  xOf(t) { return LABEL_W + (t - this.vx0) * this.trackW / (this.vx1 - this.vx0); }
  tOf(x) { return this.vx0 + (x - LABEL_W) * (this.vx1 - this.vx0) / this.trackW; }
  screenY(contentY) { return RULER_H + contentY - this.scrollY; }

  // -- view changes ---------------------------------------------------------------------
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

  // -- fetching ---------------------------------------------------------------------------
  // At most one request in flight; a view change meanwhile asks again when it answers. The
  // canvas keeps drawing what it has at the new scale.
  needsFetch() {
    const m = this.marks;
    const pxUs = (this.vx1 - this.vx0) / this.trackW;
    const lo = Math.max(this.vx0, this.meta.t_min), hi = Math.min(this.vx1, this.meta.t_max);
    const covered = m.x0 <= lo + 1e-9 && m.x1 >= hi - 1e-9;
    if (!covered) return true;
    if (this.search.regex && m.searched !== this.search.regex) return true;
    if (m.complete) return false;
    // the resolution the window was asked for (the kernel may have used fewer columns to
    // keep within its budget; asking again would not change that)
    const colw = m.reqCols ? (m.x1 - m.x0) / m.reqCols : 0;
    return colw > pxUs * 1.6 || colw < pxUs / 6;
  }
  maybeFetch() {
    if (!this.needsFetch()) return;
    if (this.fetching) { this.wanted = true; return; }
    this.fetch();
  }
  async fetch() {
    this.fetching = true;
    this.wanted = false;
    const w = this.vx1 - this.vx0;
    const x0 = this.vx0 - w * 0.5, x1 = this.vx1 + w * 0.5;
    const cols = Math.round(this.trackW * 2);
    const regex = this.search.regex;
    const t0 = performance.now();
    this.stats.requests++;
    this.showBusy(true);
    try {
      const { marks, names } = await this.source.window(x0, x1, cols, regex);
      this.stats.roundTrips.push(performance.now() - t0);
      if (this.stats.roundTrips.length > 500) this.stats.roundTrips.shift();
      this.addNames(names);
      marks.searched = regex;
      this.setMarks(marks);
    } catch (err) {
      this.flash(`Could not load this window: ${err.message || err}`);
    } finally {
      this.fetching = false;
      this.showBusy(false);
    }
    if (this.wanted || this.needsFetch()) {
      if (this.needsFetch()) this.fetch();
    }
  }
  setMarks(m) {
    this.marks = m;
    this.tipStale = true;
    if (!this.overview) this.overview = m;
    this.requestDraw();
    this.updateStatus();
    if (!this.source.live) {
      this.note.style.display = m.short ? "block" : "none";
      const exact = this.source.tiles.find((t) => t.exact);
      this.note.innerHTML = m.short ? esc(this.meta.offline_note || "Offline copy: detail ends here.") +
        (exact ? ' <a data-act="exact" style="cursor:pointer;text-decoration:underline">Show it</a>' : "") : "";
    }
  }
  showBusy(on) { this.root.dataset.busy = on ? "1" : "0"; this.updateStatus(); }
  updateStatus() {
    const m = this.marks;
    const busy = this.fetching ? " · loading…" : "";
    this.status.textContent = `${fmtNum(m.n, 0)} marks for ${fmtNum(m.nEvents, 0)} events ` +
      `in ${fmtDur(m.x1 - m.x0)}${busy}${this.source.live ? "" : " · offline"}`;
  }
  flash(text) {
    this.note.textContent = text;
    this.note.style.display = "block";
    clearTimeout(this.flashTimer);
    this.flashTimer = setTimeout(() => { this.note.style.display = "none"; }, 4000);
  }

  // -- search ---------------------------------------------------------------------------
  async runSearch(regex) {
    this.search = { regex: "", count: null, error: null };
    this.input.classList.remove("bad");
    if (!regex) { this.countEl.textContent = ""; this.requestDraw(); this.maybeFetch(); return; }
    if (!this.source.live) {  // offline, JavaScript's regex engine does the matching
      try { new RegExp(regex); } catch {
        this.input.classList.add("bad"); this.countEl.textContent = "bad regex"; return;
      }
    }  // live, Python's re decides (as pandas' str.contains does)
    this.countEl.textContent = "…";
    try {
      const res = await this.source.search(regex);
      if (this.input.value !== regex && this.input.value !== "") return;
      if (res.error) { this.input.classList.add("bad"); this.countEl.textContent = "bad regex"; return; }
      this.search = { regex, count: res.count, error: null };
      this.nameMatch = new Map();
      this.countEl.textContent = `${fmtNum(res.count, 0)} match${res.count === 1 ? "" : "es"}` +
        (res.offline ? " (offline)" : "");
      this.countEl.dataset.count = String(res.count);
      this.maybeFetch();
      this.requestDraw();
    } catch (err) { this.countEl.textContent = "error"; this.countEl.title = String(err); }
  }
  matches(nameId) {
    let ok = this.nameMatch.get(nameId);
    if (ok === undefined) {
      try { ok = new RegExp(this.search.regex).test(this.nameOf(nameId)); } catch { ok = false; }
      this.nameMatch.set(nameId, ok);
    }
    return ok;
  }
  async nextMatch(direction) {
    if (!this.search.regex) return;
    const cur = this.selected;
    const t = cur ? cur.start : this.vx0;
    const row = cur ? cur.row : -1;
    const ev = await this.source.next(this.search.regex, t, row, direction);
    if (ev) this.jumpTo(ev);
  }

  // -- selection and details ----------------------------------------------------------
  async select(ev) {
    this.selected = ev;
    this.details = null;
    this.requestDraw();
    if (!ev) { this.detailsEl.style.display = "none"; return; }
    this.renderDetails();
    try {
      const d = await this.source.details(ev.row);
      if (this.selected !== ev) return;
      this.details = d;
      this.renderDetails();
      this.requestDraw();
    } catch (err) { this.flash(`No details: ${err.message || err}`); }
  }
  jumpTo(ev) {
    // Show an event: scroll its lane into view (opening its group) and pan/zoom so that
    // it and the current selection are both visible where possible.
    const g = this.laneGroup[ev.lane];
    if (this.collapsed.has(g)) { this.collapsed.delete(g); this.layout(); this.resize(); }
    let a = ev.start, b = Math.max(ev.end, ev.start + 1e-3);
    const w = this.vx1 - this.vx0;
    if (b - a > w * 0.9) this.setView(a - (b - a) * 0.1, b + (b - a) * 0.1);
    else if (a < this.vx0 || b > this.vx1) {
      const sel = this.selected;
      if (sel && Math.max(b, sel.end) - Math.min(a, sel.start) < w * 0.9) {
        const c = (Math.max(b, sel.end) + Math.min(a, sel.start)) / 2;
        this.setView(c - w / 2, c + w / 2);
      } else this.setView((a + b) / 2 - w / 2, (a + b) / 2 + w / 2);
    }
    const y = this.laneY[ev.lane] + ev.depth * ROW_H;
    const viewH = this.H - RULER_H;
    if (y < this.scrollY || y + ROW_H > this.scrollY + viewH) this.scrollBy(y - this.scrollY - viewH / 3);
    this.select(ev);
  }
  renderDetails() {
    const ev = this.selected;
    const el = this.detailsEl;
    if (!ev) { el.style.display = "none"; return; }
    el.style.display = "block";
    const lane = this.meta.lanes[ev.lane];
    const origin = this.origin.t;
    const rows = (pairs) => `<table>${pairs.map(([k, v]) => `<tr><td>${esc(k)}</td><td>${esc(v)}</td></tr>`).join("")}</table>`;
    const link = (f, text) => `<a data-row="${f.row}" title="${esc(f.name)}" data-go='${esc(JSON.stringify(
      { row: f.row, lane: f.lane, depth: f.depth, start: f.start, end: f.end, name: f.name }))}'>${esc(shortName(text))}</a>`;
    const short = shortName(ev.name);
    let html = `<span class="x" title="Close (Esc)">✕</span><h4 title="${esc(ev.name)}">${esc(short)}</h4>` +
      (short !== ev.name ? `<div style="opacity:.75;overflow-wrap:anywhere">${esc(ev.name)}</div>` : "") +
      `<div>${esc(lane ? `${this.meta.groups[lane.group].label} · ${lane.label}` : "")} · ` +
      `start ${esc(fmtAt(ev.start - origin))} (from ${esc(this.origin.label)}) · ` +
      `duration ${esc(fmtDur(ev.end - ev.start))}</div>`;
    const d = this.details;
    if (!d) {
      html += this.source.live ? `<div class="sec">Loading details…</div>`
        : `<div class="sec">Stats and flows need the live kernel (this is an offline copy).</div>`;
      el.innerHTML = html;
      return;
    }
    let left = "", right = "";
    if (d.launch && d.launch.length) left += `<div class="sec">Launch arguments</div>${rows(d.launch)}`;
    if (d.flows && d.flows.length) {
      right += `<div class="sec">Flows</div><table>${d.flows.map((f) => {
        const dir = f.dir === "in" ? "from" : "to";
        const what = f.kind === "launch" ? (f.dir === "in" ? "launched by" : "launches") : (f.dir === "in" ? "consumes output of" : "produces for");
        const op = f.launched_by && f.launched_by.length ? f.launched_by[0] : null;
        const by = op ? `<br>inside op: <span title="${esc(op)}">${esc(shortName(op))}</span>` : "";
        return `<tr><td>${esc(what)}</td><td>${link(f, f.name)} <span style="opacity:.75">(${esc(dir)} ${esc(f.lane_label)}, at ${esc(fmtAt(f.start - origin))})</span>${by}</td></tr>`;
      }).join("")}</table>`;
    }
    if (d.parents && d.parents.length) {
      right += `<div class="sec">Inside</div><table>${d.parents.map((p) =>
        `<tr><td>depth ${p.depth}</td><td>${link(p, p.name)}</td></tr>`).join("")}</table>`;
    }
    left += `<div class="sec">Fields</div>${rows(d.fields)}`;
    if (d.stats && d.stats.length) left += `<div class="sec">Stats</div>${rows(d.stats)}`;
    html += `<div class="cols"><div>${left}</div><div>${right}</div></div>`;
    el.innerHTML = html;
  }

  // -- input ----------------------------------------------------------------------------
  local(e) {
    const r = this.canvas.getBoundingClientRect();
    return { x: e.clientX - r.left, y: e.clientY - r.top };
  }
  onWheel(e) {
    e.preventDefault();
    const { x } = this.local(e);
    const unit = e.deltaMode === 1 ? 16 : e.deltaMode === 2 ? 400 : 1;
    const dx = e.deltaX * unit, dy = e.deltaY * unit;
    if (e.shiftKey) { this.scrollBy(dy || dx); return; }
    if (Math.abs(dx) > Math.abs(dy) && !e.ctrlKey) {
      this.pan(dx * (this.vx1 - this.vx0) / this.trackW);
      return;
    }
    // A wheel notch (100 px) zooms 2x; a pinch (ctrl+wheel, small deltas) twice as fast.
    const factor = Math.exp(clamp(dy, -600, 600) * (e.ctrlKey ? 0.0139 : 0.00693));
    this.zoomAt(factor, clamp(x, LABEL_W, LABEL_W + this.trackW));
  }
  onDown(e) {
    if (e.button !== 0) return;
    const p = this.local(e);
    this.canvas.focus({ preventScroll: true });
    e.preventDefault();
    if (p.x >= this.W - SCROLL_W && this.maxScroll() > 0) {
      this.drag = { mode: "scrollbar", y: p.y, scroll: this.scrollY };
      return;
    }
    if (p.x < LABEL_W) { this.drag = { mode: "label", x: p.x, y: p.y }; return; }
    if (p.y < RULER_H) { this.drag = { mode: "ruler", x: p.x, y: p.y }; return; }
    let mode = "pan";
    if (e.shiftKey) mode = "measure";
    else if (e.altKey || e.ctrlKey || e.metaKey || this.boxMode) mode = "box";
    this.drag = { mode, x: p.x, y: p.y, vx0: this.vx0, vx1: this.vx1, scroll: this.scrollY,
      t: this.tOf(p.x), moved: false };
  }
  onMove(e) {
    const p = this.local(e);
    const inside = p.x >= 0 && p.y >= 0 && p.x < this.W && p.y < this.H;
    this.mouse = inside ? p : null;
    const d = this.drag;
    if (!d) {
      if (inside) this.hover(p); else this.hideTip();
      return;
    }
    if (Math.abs(p.x - d.x) + Math.abs(p.y - d.y) > 3) d.moved = true;
    if (d.mode === "scrollbar") {
      const viewH = this.H - RULER_H;
      this.scrollY = clamp(d.scroll + (p.y - d.y) * this.contentH / viewH, 0, this.maxScroll());
      this.requestDraw();
    } else if (d.mode === "pan" && d.moved) {
      const dt = (p.x - d.x) * (d.vx1 - d.vx0) / this.trackW;
      this.setView(d.vx0 - dt, d.vx1 - dt);
      this.scrollY = clamp(d.scroll - (p.y - d.y), 0, this.maxScroll());
      this.hideTip();
    } else if (d.mode === "measure" && d.moved) {
      this.measure = [d.t, this.tOf(clamp(p.x, LABEL_W, LABEL_W + this.trackW))];
      this.requestDraw();
    } else if (d.mode === "box" && d.moved) {
      this.box = [d.t, this.tOf(clamp(p.x, LABEL_W, LABEL_W + this.trackW))];
      this.requestDraw();
    }
  }
  onUp(e) {
    const d = this.drag;
    this.drag = null;
    if (!d) return;
    const p = this.local(e);
    if (d.mode === "box") {
      const box = this.box;
      this.box = null;
      if (box && Math.abs(this.xOf(box[1]) - this.xOf(box[0])) > 4) {
        this.setView(Math.min(...box), Math.max(...box));
        if (this.boxMode) this.action("box");
      } else this.requestDraw();
      if (d.moved) return;
    }
    if (d.moved) { this.requestDraw(); return; }
    if (d.mode === "label") this.clickLabel(p);
    else if (d.mode === "ruler") this.clickRuler(p);
    else if (d.mode === "pan" || d.mode === "box" || d.mode === "measure") this.clickTrack(p);
  }
  onKey(e, down) {
    const k = e.key.toLowerCase();
    if (e.ctrlKey || e.metaKey || e.altKey) return;
    if ("wasd".includes(k) && k.length === 1) {
      e.preventDefault();
      if (down && !this.keys.has(k)) {
        this.keys.set(k, performance.now());
        this.keyStep(k, 1 / 8);  // a tap moves at once; holding keeps moving
        this.lastFrame = 0;
        this.requestDraw();
      } else if (!down) this.keys.delete(k);
      return;
    }
    if (!down) return;
    if (k === "f") { e.preventDefault(); this.fitSelection(); }
    else if (k === "0") { e.preventDefault(); this.action("reset"); }
    else if (k === "escape") { this.measure = null; this.box = null; this.select(null); }
    else if (k === "/") { e.preventDefault(); this.input.focus(); }
  }
  keyStep(k, seconds) {
    // w/s: zoom ×3 per second around the mouse (or the centre); a/d: pan 1 view per second.
    const x = this.mouse && this.mouse.x > LABEL_W ? this.mouse.x : LABEL_W + this.trackW / 2;
    if (k === "w") this.zoomAt(Math.exp(-Math.log(3) * seconds), x);
    else if (k === "s") this.zoomAt(Math.exp(Math.log(3) * seconds), x);
    else if (k === "a") this.pan(-(this.vx1 - this.vx0) * seconds);
    else if (k === "d") this.pan((this.vx1 - this.vx0) * seconds);
  }

  hit(p) {
    // The mark under a point: raw events before blocks, the narrowest first.
    const m = this.marks;
    const t = this.tOf(p.x);
    const slack = 2 * (this.vx1 - this.vx0) / this.trackW;
    let best = -1, bestW = Infinity, bestRaw = false;
    for (let i = 0; i < m.n; i++) {
      const li = m.lane[i];
      const ly = this.laneY[li];
      if (ly < 0) continue;
      const y = this.screenY(ly + m.depth[i] * ROW_H);
      if (p.y < y || p.y >= y + ROW_H - 1) continue;
      if (t < m.start[i] - slack || t > m.end[i] + slack) continue;
      const raw = m.row[i] >= 0;
      const w = m.end[i] - m.start[i];
      if ((raw && !bestRaw) || (raw === bestRaw && w < bestW)) { best = i; bestW = w; bestRaw = raw; }
    }
    return best;
  }
  markEvent(i) {
    const m = this.marks;
    return { row: m.row[i], lane: m.lane[i], depth: m.depth[i], start: m.start[i],
      end: m.end[i], name: this.nameOf(m.name[i]) };
  }
  clickTrack(p) {
    if (this.measure) {  // a click inside the measured range keeps it (double-click: fit it)
      const t = this.tOf(p.x);
      if (t >= Math.min(...this.measure) && t <= Math.max(...this.measure)) return;
      this.measure = null;
      this.requestDraw();
    }
    const i = this.hit(p);
    if (i < 0) { this.select(null); return; }
    const m = this.marks;
    if (m.row[i] < 0) {  // a block: zoom into it
      const a = m.start[i], b = Math.max(m.end[i], a + 1e-3);
      this.setView(a - (b - a) * 0.1, b + (b - a) * 0.1);
      return;
    }
    this.select(this.markEvent(i));
  }
  clickLabel(p) {
    if (p.y < RULER_H) return;
    const cy = p.y - RULER_H + this.scrollY;
    this.meta.groups.forEach((g, gi) => {
      const y = this.groupY[gi];
      if (cy >= y && cy < y + GROUP_H) {
        if (this.collapsed.has(gi)) this.collapsed.delete(gi); else this.collapsed.add(gi);
        this.layout();
        this.resize();
        this.scrollY = clamp(this.scrollY, 0, this.maxScroll());
        this.requestDraw();
      }
    });
  }
  clickRuler(p) {
    // A step label sets the ruler's origin to that step (again: back to the capture start).
    for (const s of this.stepLabels || []) {
      if (p.x >= s.x0 && p.x <= s.x1 && p.y < 18) {
        if (this.origin.step === s.step) this.origin = { t: 0, label: "capture start" };
        else this.origin = { t: s.start, label: `step ${s.step}`, step: s.step };
        this.renderDetails();
        this.requestDraw();
        return;
      }
    }
  }
  hover(p) {
    if (p.x < LABEL_W && p.y >= RULER_H) {
      const cy = p.y - RULER_H + this.scrollY;
      const lanes = this.meta.lanes;
      for (let li = 0; li < lanes.length; li++) {
        const y = this.laneY[li];
        if (y >= 0 && cy >= y && cy < y + this.laneH[li]) {
          const l = lanes[li];
          this.showTip(p, `${l.label}\n${l.tooltip}`);
          return;
        }
      }
      this.meta.groups.forEach((g, gi) => {
        if (cy >= this.groupY[gi] && cy < this.groupY[gi] + GROUP_H) {
          this.showTip(p, `${g.label}\n${fmtNum(g.n, 0)} events · ${g.lanes.length} lanes · click to ${this.collapsed.has(gi) ? "expand" : "collapse"}`);
        }
      });
      return;
    }
    if (p.y < RULER_H || p.x >= this.W - SCROLL_W) { this.hideTip(); return; }
    const i = this.hit(p);
    if (i < 0) { this.hideTip(); return; }
    const m = this.marks;
    let name = this.nameOf(m.name[i]);
    if (name.length > 300) name = `${name.slice(0, 300)}…`;
    const lane = this.meta.lanes[m.lane[i]];
    const dur = m.end[i] - m.start[i];
    let text;
    if (m.row[i] < 0) {
      text = `${fmtNum(m.count[i], 0)} events (click to zoom in)\nfirst: ${name}\n` +
        `${fmtAt(m.start[i] - this.origin.t)} … ${fmtAt(m.end[i] - this.origin.t)}`;
    } else {
      text = `${name}\n${fmtDur(dur)} · starts ${fmtAt(m.start[i] - this.origin.t)} from ` +
        `${this.origin.label}\n${lane ? lane.label : ""}`;
    }
    if (this.search.regex && m.hits) text += `\n${m.hits[i]} match${m.hits[i] === 1 ? "" : "es"}`;
    this.showTip(p, text);
  }
  showTip(p, text) {
    const tip = this.tip;
    tip.textContent = text;
    tip.style.display = "block";
    const tw = tip.offsetWidth, th = tip.offsetHeight;
    let x = p.x + 14, y = p.y + 16;
    if (x + tw > this.W) x = Math.max(0, p.x - tw - 10);
    if (y + th > this.H) y = Math.max(0, p.y - th - 10);
    tip.style.left = `${x}px`;
    tip.style.top = `${y}px`;
  }
  hideTip() { this.tip.style.display = "none"; }

  // -- drawing --------------------------------------------------------------------------
  requestDraw() {
    if (this.drawQueued) return;
    this.drawQueued = true;
    requestAnimationFrame((ts) => this.frame(ts));
  }
  frame(ts) {
    this.drawQueued = false;
    const held = this.keys.size > 0;
    if (held) {
      const dt = this.lastFrame ? Math.min(0.1, (ts - this.lastFrame) / 1000) : 0;
      if (this.lastFrame) {
        this.stats.frames.push(ts - this.lastFrame);
        if (this.stats.frames.length > 2000) this.stats.frames.shift();
      }
      this.lastFrame = ts;
      for (const [k, since] of this.keys) if (ts - since > 120) this.keyStep(k, dt);
    } else this.lastFrame = 0;
    this.drawNow();
    if (this.tipStale) {  // what is under the mouse changed: tooltip follows
      this.tipStale = false;
      if (this.mouse && !this.drag) this.hover(this.mouse); else this.hideTip();
    }
    if (held) this.requestDraw();
  }
  drawNow() {
    if (!this.W || !this.theme) return;
    const t0 = performance.now();
    this.draw();
    const t1 = performance.now();
    this.stats.draws.push(t1 - t0);
    if (this.stats.draws.length > 2000) this.stats.draws.shift();
    if (this.stats.firstDraw === null) this.stats.firstDraw = t1;
    this.root.dataset.window = `${this.vx0},${this.vx1}`;
  }
  draw() {
    const ctx = this.ctx, th = this.theme;
    ctx.setTransform(this.dpr, 0, 0, this.dpr, 0, 0);
    ctx.fillStyle = th.bg;
    ctx.fillRect(0, 0, this.W, this.H);
    const x0 = LABEL_W, x1 = LABEL_W + this.trackW;
    // Tracks: bands, groups, marks, flows, overlays; clipped so nothing leaves the area.
    ctx.save();
    ctx.beginPath();
    ctx.rect(x0, RULER_H, this.trackW, this.H - RULER_H);
    ctx.clip();
    this.drawSteps(ctx, false);
    this.drawGroupRows(ctx);
    this.drawGrid(ctx);
    const m = this.marks;
    if (this.overview && this.overview !== m) {
      // What the last answer does not cover, from the overview (until the kernel answers).
      const ax = this.xOf(m.x0), bx = this.xOf(m.x1);
      for (const [c0, c1] of [[x0, ax], [bx, x1]]) {
        if (c1 - c0 < 1) continue;
        ctx.save(); ctx.beginPath(); ctx.rect(c0, RULER_H, c1 - c0, this.H); ctx.clip();
        this.drawMarks(ctx, this.overview, false);
        ctx.restore();
      }
      ctx.save(); ctx.beginPath(); ctx.rect(Math.max(ax, x0), RULER_H, Math.min(bx, x1) - Math.max(ax, x0), this.H); ctx.clip();
      this.drawMarks(ctx, m, true);
      ctx.restore();
    } else this.drawMarks(ctx, m, true);
    this.drawSelection(ctx);
    this.drawRange(ctx, this.measure, th.accent, true);
    this.drawRange(ctx, this.box, th.accent, false);
    ctx.restore();
    this.drawLabels(ctx);
    this.drawRuler(ctx);
    this.drawScrollbar(ctx);
  }
  laneScreen(li, depth) {
    const ly = this.laneY[li];
    if (ly >= 0) return [this.screenY(ly + depth * ROW_H), ROW_H - 2];
    // collapsed group: everything in its header row
    const gy = this.screenY(this.groupY[this.laneGroup[li]]);
    return [gy + 5, GROUP_H - 10];
  }
  drawGroupRows(ctx) {
    const th = this.theme;
    ctx.fillStyle = th.panel;
    this.meta.groups.forEach((g, gi) => {
      const y = this.screenY(this.groupY[gi]);
      if (y > this.H || y + GROUP_H < RULER_H) return;
      ctx.globalAlpha = this.collapsed.has(gi) ? 0.6 : 0.9;
      ctx.fillRect(LABEL_W, y, this.trackW, GROUP_H);
    });
    ctx.globalAlpha = 1;
    // lane separators
    ctx.fillStyle = th.grid;
    for (let li = 0; li < this.meta.lanes.length; li++) {
      const y = this.laneY[li];
      if (y < 0) continue;
      const sy = this.screenY(y + this.laneH[li]) - 1;
      if (sy < RULER_H || sy > this.H) continue;
      ctx.fillRect(LABEL_W, sy, this.trackW, 1);
    }
  }
  ticks() {
    // Tick spacing 1, 2 or 5 × 10^k µs, at least 90 px apart; the unit follows the spacing.
    const pxUs = this.trackW / (this.vx1 - this.vx0);
    const raw = 90 / pxUs;
    const p10 = 10 ** Math.floor(Math.log10(raw));
    const step = [1, 2, 5, 10].map((k) => k * p10).find((s) => s >= raw) || 10 * p10;
    const unit = step < 1 ? ["ns", 1e-3] : step < 1e3 ? ["µs", 1] : step < 1e6 ? ["ms", 1e3] : ["s", 1e6];
    const digits = Math.max(0, Math.ceil(-Math.log10(step / unit[1]) - 1e-9));
    const o = this.origin.t;
    const first = Math.ceil((this.vx0 - o) / step) * step + o;
    const out = [];
    for (let t = first; t <= this.vx1; t += step) out.push(t);
    return { out, step, unit, digits };
  }
  drawGrid(ctx) {
    ctx.fillStyle = this.theme.grid;
    for (const t of this.ticks().out) ctx.fillRect(Math.round(this.xOf(t)), RULER_H, 1, this.H);
  }
  drawSteps(ctx, labels) {
    const steps = this.meta.steps || [];
    const th = this.theme;
    if (!labels) this.stepLabels = [];
    for (let i = 0; i < steps.length; i++) {
      const [step, start, dur] = steps[i];
      if (start + dur < this.vx0 || start > this.vx1) continue;
      const a = this.xOf(start), b = this.xOf(start + dur);
      if (!labels) {
        ctx.fillStyle = th.band;
        if (i % 2 === 0) ctx.fillRect(a, RULER_H, Math.max(1, b - a), this.H);
        ctx.fillStyle = th.grid;
        ctx.fillRect(Math.round(a), RULER_H, 1, this.H);
      } else {
        const la = Math.max(a, LABEL_W), lb = Math.min(b, LABEL_W + this.trackW);
        if (lb - la < 8) continue;
        ctx.fillStyle = this.origin.step === step ? th.accent : th.band;
        ctx.fillRect(la, 2, lb - la - 1, 15);
        const text = `step ${step}`;
        if (lb - la > 30) {
          ctx.fillStyle = this.origin.step === step ? "#fff" : th.bandLabel;
          ctx.fillText(text, la + 3, 13, lb - la - 6);
        }
        this.stepLabels.push({ x0: la, x1: lb, step, start });
      }
    }
  }
  drawMarks(ctx, m, labels) {
    const th = this.theme;
    const n = m.n;
    if (!n) return;
    const scale = this.trackW / (this.vx1 - this.vx0);
    const vx0 = this.vx0, X0 = LABEL_W, X1 = LABEL_W + this.trackW;
    const searching = !!this.search.regex;
    const hits = searching && m.searched === this.search.regex ? m.hits : null;
    // One pass per colour (few fillStyle changes): blocks faint, raw events solid.
    if (!m.order) {
      const buckets = PALETTE.map(() => []);
      for (let i = 0; i < n; i++) buckets[this.colorOf.get(m.name[i]) ?? 0].push(i);
      m.order = buckets.map((b) => Int32Array.from(b));
    }
    const H = this.H;
    const drawn = [];
    for (let pass = 0; pass < 2; pass++) {
      for (let c = 0; c < PALETTE.length; c++) {
        const idx = m.order[c];
        if (!idx.length) continue;
        ctx.fillStyle = PALETTE[c];
        for (let k = 0; k < idx.length; k++) {
          const i = idx[k];
          const raw = m.row[i] >= 0;
          if (raw !== (pass === 1)) continue;
          let xa = (m.start[i] - vx0) * scale + X0;
          let xb = (m.end[i] - vx0) * scale + X0;
          if (xb < X0 || xa > X1) continue;
          const [y, h] = this.laneScreen(m.lane[i], m.depth[i]);
          if (y > H || y + h < RULER_H) continue;
          let w = xb - xa;
          if (w < 1) { w = 1; }
          let alpha = raw ? 1 : th.block;
          if (searching) {
            const hit = hits ? hits[i] > 0 : this.matches(m.name[i]);
            if (!hit) alpha *= th.dim;
          }
          ctx.globalAlpha = alpha;
          ctx.fillRect(xa, y, w, h);
          if (labels && w > 26 && this.laneY[m.lane[i]] >= 0) drawn.push(i);
        }
      }
    }
    ctx.globalAlpha = 1;
    if (hits) {  // outline what matches
      ctx.strokeStyle = th.select;
      ctx.lineWidth = 1;
      for (let i = 0; i < n; i++) {
        if (!(hits[i] > 0)) continue;
        const xa = Math.max((m.start[i] - vx0) * scale + X0, X0 - 2);
        const xb = Math.min((m.end[i] - vx0) * scale + X0, X1 + 2);
        if (xb < X0 || xa > X1) continue;
        const [y, h] = this.laneScreen(m.lane[i], m.depth[i]);
        if (y > H || y + h < RULER_H) continue;
        ctx.strokeRect(xa + 0.5, y + 0.5, Math.max(1, xb - xa - 1), h - 1);
      }
    }
    if (!labels) return;
    // Names inside bars wide enough, clipped to the visible part of the bar.
    ctx.font = FONT;
    ctx.textBaseline = "middle";
    const seen = [];
    for (const i of drawn) {
      const xa = Math.max((m.start[i] - vx0) * scale + X0, X0);
      const xb = Math.min((m.end[i] - vx0) * scale + X0, X1);
      const room = xb - xa - 6;
      if (room < 20) continue;
      const [y, h] = this.laneScreen(m.lane[i], m.depth[i]);
      const raw = m.row[i] >= 0;
      const full = raw ? this.nameOf(m.name[i]) : `${fmtNum(m.count[i], 0)} events`;
      const text = this.fit(ctx, full, room);
      if (!text) continue;
      ctx.fillStyle = raw ? TEXT_ON[this.colorOf.get(m.name[i]) ?? 0] : th.fg;
      ctx.globalAlpha = searching && !(hits ? hits[i] > 0 : this.matches(m.name[i])) ? 0.5 : 1;
      ctx.fillText(text, xa + 3, y + h / 2 + 0.5);
      if (seen.length < 4000) seen.push({ row: m.row[i], text, x: xa, w: xb - xa });
    }
    ctx.globalAlpha = 1;
    this.stats.labels = seen;
  }
  fit(ctx, name, room) {
    // The name if it fits, else its short form, else that cut with an ellipsis.
    this.widths = this.widths || new Map();
    const width = (s) => {
      let w = this.widths.get(s);
      if (w === undefined) {
        w = ctx.measureText(s).width;
        if (this.widths.size > 20000) this.widths.clear();
        this.widths.set(s, w);
      }
      return w;
    };
    if (width(name) <= room) return name;
    const short = shortName(name);
    if (short !== name && width(short) <= room) return short;
    const per = width(short) / short.length;
    let k = Math.floor(room / per) - 1;
    if (k < 3) return "";
    let s = short.slice(0, k) + "…";
    while (k > 3 && ctx.measureText(s).width > room) { k--; s = short.slice(0, k) + "…"; }
    return k >= 3 ? s : "";
  }
  drawSelection(ctx) {
    const sel = this.selected;
    if (!sel) return;
    const th = this.theme;
    const at = (ev) => {
      const [y, h] = this.laneScreen(ev.lane, ev.depth);
      return { xa: this.xOf(ev.start), xb: Math.max(this.xOf(ev.end), this.xOf(ev.start) + 1), y, h };
    };
    const s = at(sel);
    ctx.strokeStyle = th.select;
    ctx.lineWidth = 2;
    ctx.strokeRect(s.xa - 1, s.y - 1, s.xb - s.xa + 2, s.h + 2);
    // Flow arrows: launch -> kernel, producer -> consumer.
    const flows = (this.details && this.details.flows) || [];
    ctx.strokeStyle = th.flow;
    ctx.fillStyle = th.flow;
    ctx.lineWidth = 1.5;
    for (const f of flows) {
      const o = at(f);
      let from, to;
      if (f.dir === "in") {
        from = { x: f.kind === "launch" ? o.xa : o.xb, y: o.y + o.h / 2 };
        to = { x: s.xa, y: s.y + s.h / 2 };
      } else {
        from = { x: f.kind === "launch" ? s.xa : s.xb, y: s.y + s.h / 2 };
        to = { x: o.xa, y: o.y + o.h / 2 };
      }
      for (const q of [from, to]) q.y = clamp(q.y, RULER_H + 2, this.H - 2);
      const mid = Math.max(30, Math.abs(to.x - from.x) / 2);
      ctx.beginPath();
      ctx.moveTo(from.x, from.y);
      ctx.bezierCurveTo(from.x + mid, from.y, to.x - mid, to.y, to.x, to.y);
      ctx.stroke();
      ctx.beginPath();  // arrow head pointing right, into the target
      ctx.moveTo(to.x, to.y);
      ctx.lineTo(to.x - 7, to.y - 4);
      ctx.lineTo(to.x - 7, to.y + 4);
      ctx.closePath();
      ctx.fill();
      ctx.beginPath();
      ctx.arc(from.x, from.y, 2.5, 0, Math.PI * 2);
      ctx.fill();
    }
  }
  drawRange(ctx, range, color, label) {
    if (!range) return;
    const a = this.xOf(Math.min(...range)), b = this.xOf(Math.max(...range));
    ctx.fillStyle = color;
    ctx.globalAlpha = 0.15;
    ctx.fillRect(a, RULER_H, b - a, this.H);
    ctx.globalAlpha = 1;
    ctx.fillRect(a, RULER_H, 1, this.H);
    ctx.fillRect(b, RULER_H, 1, this.H);
    if (label) {
      const text = `Δ ${fmtDur(Math.abs(range[1] - range[0]))}`;
      ctx.font = BOLD;
      const w = ctx.measureText(text).width + 10;
      const x = clamp((a + b) / 2 - w / 2, LABEL_W, LABEL_W + this.trackW - w);
      ctx.fillStyle = this.theme.bg;
      ctx.fillRect(x, RULER_H + 3, w, 17);
      ctx.fillStyle = color;
      ctx.textBaseline = "middle";
      ctx.fillText(text, x + 5, RULER_H + 12);
    }
  }
  drawLabels(ctx) {
    const th = this.theme;
    ctx.fillStyle = th.panel;
    ctx.fillRect(0, RULER_H, LABEL_W, this.H - RULER_H);
    ctx.save();
    ctx.beginPath();
    ctx.rect(0, RULER_H, LABEL_W, this.H - RULER_H);
    ctx.clip();
    ctx.textBaseline = "middle";
    this.meta.groups.forEach((g, gi) => {
      const y = this.screenY(this.groupY[gi]);
      if (y > this.H || y + GROUP_H < RULER_H) return;
      ctx.fillStyle = th.bg;
      ctx.fillRect(0, y, LABEL_W, GROUP_H);
      ctx.fillStyle = th.grid;
      ctx.fillRect(0, y, this.W, 1);
      ctx.font = BOLD;
      ctx.fillStyle = th.fg;
      const arrow = this.collapsed.has(gi) ? "▸" : "▾";
      ctx.fillText(`${arrow} ${g.label}`, 6, y + GROUP_H / 2, LABEL_W - 12);
    });
    ctx.font = FONT;
    const lanes = this.meta.lanes;
    for (let li = 0; li < lanes.length; li++) {
      const y = this.laneY[li];
      if (y < 0) continue;
      const sy = this.screenY(y);
      if (sy > this.H || sy + this.laneH[li] < RULER_H) continue;
      ctx.fillStyle = th.fg;
      const text = this.fit(ctx, lanes[li].label, LABEL_W - 26);
      ctx.fillText(text, 16, sy + ROW_H / 2);
      ctx.fillStyle = th.grid;
      ctx.fillRect(0, sy + this.laneH[li] - 1, LABEL_W, 1);
    }
    ctx.restore();
    ctx.fillStyle = th.border;
    ctx.fillRect(LABEL_W - 1, RULER_H, 1, this.H - RULER_H);
  }
  drawRuler(ctx) {
    const th = this.theme;
    ctx.fillStyle = th.panel;
    ctx.fillRect(0, 0, this.W, RULER_H);
    ctx.fillStyle = th.border;
    ctx.fillRect(0, RULER_H - 1, this.W, 1);
    ctx.save();
    ctx.beginPath();
    ctx.rect(LABEL_W, 0, this.trackW, RULER_H);
    ctx.clip();
    ctx.font = FONT;
    ctx.textBaseline = "alphabetic";
    this.drawSteps(ctx, true);
    const { out, unit, digits } = this.ticks();
    ctx.fillStyle = th.fg;
    for (const t of out) {
      const x = Math.round(this.xOf(t));
      ctx.fillStyle = th.muted;
      ctx.fillRect(x, RULER_H - 8, 1, 7);
      ctx.fillStyle = th.fg;
      ctx.fillText(fmtNum((t - this.origin.t) / unit[1], digits), x + 3, RULER_H - 6);
    }
    ctx.restore();
    // the corner: unit and origin, and the view's span
    ctx.font = FONT;
    ctx.fillStyle = th.muted;
    ctx.fillText(`${unit[0]} from ${this.origin.label}`, 6, RULER_H - 6, LABEL_W - 12);
    ctx.fillText(`view: ${fmtDur(this.vx1 - this.vx0)}`, 6, 14, LABEL_W - 12);
  }
  drawScrollbar(ctx) {
    const max = this.maxScroll();
    const th = this.theme;
    ctx.fillStyle = th.panel;
    ctx.fillRect(this.W - SCROLL_W, RULER_H, SCROLL_W, this.H - RULER_H);
    if (max <= 0) return;
    const viewH = this.H - RULER_H;
    const h = Math.max(24, viewH * viewH / this.contentH);
    const y = RULER_H + (viewH - h) * this.scrollY / max;
    ctx.fillStyle = th.muted;
    ctx.globalAlpha = 0.5;
    ctx.fillRect(this.W - SCROLL_W + 2, y, SCROLL_W - 4, h);
    ctx.globalAlpha = 1;
  }
}

// -- entry points ---------------------------------------------------------------------------
function fromHeader(header, buf) { return header && buf ? unpackMarks(header, buf) : null; }

function render({ model, el }) {
  const meta = { ...model.get("_meta") };
  const last = model.get("window_us");  // a view drawn again (scrolled back, a new tab)
  if (last && last[1] > last[0]) meta.initial = last;  // opens where the last one was
  const first = {
    marks: fromHeader(model.get("_marks0_header"), model.get("_marks0")),
    overview: fromHeader(model.get("_overview_header"), model.get("_overview")),
  };
  if (first.marks) first.marks.searched = "";
  const viewer = new Viewer(el, new KernelSource(model), meta, first);
  // Report the view back (debounced) so Python can read viewer.window_us / selected_row.
  let timer = null;
  const sync = () => {
    clearTimeout(timer);
    timer = setTimeout(() => {
      model.set("window_us", [viewer.vx0, viewer.vx1]);
      model.set("selected_row", viewer.selected ? viewer.selected.row : -1);
      model.save_changes();
    }, 300);
  };
  const draw = viewer.drawNow.bind(viewer);
  viewer.drawNow = () => { draw(); sync(); };
  return () => viewer.destroy();
}

export function renderOffline(el, payload) {
  const source = new StaticSource(payload);
  const viewer = new Viewer(el, source, payload.meta, { marks: null, overview: null });
  source.ready.then(() => {
    source.window(payload.meta.t_min, payload.meta.t_max, 2048).then(({ marks }) => {
      viewer.overview = marks;
      viewer.fetch();
    });
  }).catch((err) => viewer.flash(`Could not read the embedded trace: ${err}`));
  return viewer;
}

// Output 3 of TraceViewer._ipython_display_ (a notebook's application/javascript output,
// run with its element): outputs 1 (the live widget) and 2 (the text, or the static image
// once rendered) come before it. JupyterLab 4.6 runs the script before attaching the element,
// so nothing is looked up until it is in the page. In a notebook app it then waits (up to
// 8 s) for the live widget to draw and stands down if it does; where none can (an exported
// page, a notebook reopened without a kernel: "model not found") it draws the embedded
// payload itself. Output 2 stays hidden, even when a display update replaces it.
function whenConnected(node, fn) {
  if (node.isConnected) { fn(); return; }
  const t0 = Date.now();
  const iv = setInterval(() => {
    if (node.isConnected) { clearInterval(iv); fn(); }
    else if (Date.now() - t0 > 600000) clearInterval(iv);
  }, 30);
}

export function mountOutput(element, payload) {
  whenConnected(element, () => {
    const out = element.closest(".jp-OutputArea-child, .output_area") || element;
    const before = () => {
      const prev = [];
      for (let p = out.previousElementSibling; p && prev.length < 2; p = p.previousElementSibling) prev.push(p);
      return prev;
    };
    let offline = false;
    const hide = () => {
      const prev = before();
      if (prev[0]) prev[0].style.display = "none";
      if (offline && prev[1]) prev[1].style.display = "none";
    };
    hide();
    if (out.parentElement) new MutationObserver(hide).observe(out.parentElement, { childList: true });
    const widget = () => before()[1];
    const live = () => widget() && widget().querySelector(".tfpv canvas");
    const failed = () => widget() && /model not found|Error displaying widget/i.test(widget().textContent || "");
    // No notebook app on the page (an exported page): no live widget can come.
    const app = window.jupyterapp || window.Jupyter || typeof acquireVsCodeApi !== "undefined";
    let tries = 0;
    const wait = () => {
      if (live()) return;
      if (app && !failed() && ++tries < 80) { setTimeout(wait, 100); return; }
      offline = true;
      hide();
      const view = document.createElement("div"), div = document.createElement("div");
      view.className = "tfprof-view";
      view.appendChild(div);
      element.appendChild(view);
      renderOffline(div, payload);
    };
    wait();
  });
}

export default { render };
