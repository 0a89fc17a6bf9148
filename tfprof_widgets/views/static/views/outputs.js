// Where a view is drawn: in a notebook, into its application/javascript output, hiding the
// static outputs before it (PNG, text table: views/base.py View._ipython_display_ says how many
// in payload.statics) and keeping them hidden when a display update replaces them; standing
// down while a kernel-backed live widget shows (payload.live); out of sight, waiting until
// scrolled near or the page is idle. In a report, every <div class="tfprof-mount"> with its
// payload in a JSON <script> (views/base.py View.html, report.py).
import { el, whenConnected } from "./dom.js";
import { injectCss } from "./style.js";
import { observeTheme, views } from "./theme.js";
import { View } from "./view.js";

function outputChild(element) {
  // The output (JupyterLab, Notebook, nbconvert) that holds this element; elsewhere (Colab's
  // output frame, VS Code's webview) the ancestor right after the view's text output, which
  // View._ipython_display_ marks with .tfprof-static.
  const known = element.closest(".jp-OutputArea-child") || element.closest(".output_area");
  if (known) return known;
  for (let a = element; a && a.parentElement && a !== document.body; a = a.parentElement) {
    const prev = a.previousElementSibling;
    if (prev && (prev.matches(".tfprof-static") || prev.querySelector(".tfprof-static"))) return a;
  }
  return null;
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
const NEAR_PX = 400;
function nearNow(node) {
  // In sight (or within NEAR_PX of it) now: draw at once, not one rendering step later when
  // the observer reports it (on a busy page that step took 0.1-0.8 s). A node in a hidden
  // panel has no box and waits for the observer.
  const r = node.getBoundingClientRect();
  const h = window.innerHeight || document.documentElement.clientHeight;
  return (r.width > 0 || r.height > 0) && r.bottom >= -NEAR_PX && r.top <= h + NEAR_PX;
}
function whenNear(node, fn) {
  if (!("IntersectionObserver" in window) || nearNow(node)) return fn();
  let done = false;
  const go = () => { if (done) return; done = true; io.disconnect(); fn(); };
  const io = new IntersectionObserver((entries) => {
    if (entries.some((e) => e.isIntersecting)) go();
  }, {rootMargin: `${NEAR_PX}px 0px`});
  io.observe(node);
  idleQueue.push(go);
  setTimeout(scheduleIdle, 100);
}
let mounts = 0;
export function mountCount() {
  // How many views this page has mounted (their nodes may not be in the page yet).
  return mounts;
}
export function mount(element, payload) {
  element = element && element.jquery ? element[0] : element;
  if (!element) return null;
  mounts += 1;
  // The line the output wrote while the viewer was not there (page/display.py viewer_js).
  for (const n of element.querySelectorAll(":scope > .tfprof-missing")) n.remove();
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
export function hideOutput(element) {
  // The viewer script's own output, sent ahead of a view's outputs: nothing to show.
  element = element && element.jquery ? element[0] : element;
  if (element) whenConnected(element, () => { const c = outputChild(element); if (c) c.style.display = "none"; });
}
export function mountAll(scope) {
  // Report pages: each <div class="tfprof-mount"> holds its payload in a JSON script.
  for (const m of (scope || document).querySelectorAll(".tfprof-mount:not([data-mounted])")) {
    m.dataset.mounted = "1";
    const s = m.querySelector("script[type='application/json']");
    if (s) mount(m, JSON.parse(s.textContent));
  }
}
// A page's first view takes 0.1-0.2 s longer to draw than the next ones: plotly.js's and the
// viewer's code run for the first time. Where the viewer script came ahead of a view (sent at
// a load(), or while the kernel builds the view), a small view like the real ones (a chooser,
// HTML, pies with a side legend and a click link, stacked and horizontal bars, lines with range
// buttons, a table) is drawn off screen meanwhile, then dropped.
const F8 = (bdata) => ({dtype: "f8", bdata});
function warmPayload() {
  const pie = {type: "pie", labels: ["a", "b", "c"], values: F8("AAAAAAAACEAAAAAAAAAAQAAAAAAAAPA/"),
               customdata: [["a", "a"], ["b", "b"], ["c", "c"]], hole: 0.35, sort: false,
               direction: "clockwise", textposition: "inside", texttemplate: "%{percent}",
               hovertext: ["a", "b", "c"],
               hovertemplate: "%{text}<br>%{value:,.1f} \u00b5s (%{percent})<extra></extra>"};
  const side = {min_width: 700, right_share: 0.55, height: 300, margin_b: 10, narrow_height: 541,
                narrow_margin_b: 241};
  const layout = (title, extra) => Object.assign({height: 300, title: {text: title},
    margin: {t: 40, b: 10, l: 10, r: 10}, template: {}}, extra || {});
  const blocks = [
    {kind: "html", html: "<div><b>warm-up</b>: <span>1 step</span></div>"},
    {kind: "figs", row: true, figs: [
      {name: "pie", fig: {data: [pie], layout: layout("pie", {uniformtext: {minsize: 10, mode: "hide"},
        legend: {orientation: "v", x: 1.02, xanchor: "left", y: 0.5, yanchor: "middle"}})},
       click: {table: "t", column: "name", others: ["a", "b", "c"], other: null}, legend_side: side},
      {name: "bars", fig: {data: [
        {type: "bar", name: "x", x: ["s1", "s2"], y: [1, 2], marker: {color: "#1f77b4"}},
        {type: "bar", name: "y", x: ["s1", "s2"], y: [2, 1], marker: {color: "#d62728"}}],
        layout: layout("bars", {barmode: "stack", xaxis: {type: "category"}, yaxis: {title: {text: "ms"}}})}},
    ]},
    {kind: "figs", figs: [
      {name: "lines", ranges: [["all", null]], fig: {data: [
        {type: "scatter", mode: "lines", x: F8("AAAAAAAAAAAAAAAAAADwPwAAAAAAAABAAAAAAAAACEA="),
         y: F8("AAAAAAAA8D8AAAAAAAAIQAAAAAAAAABAAAAAAAAAEEA="), fill: "tozeroy", line: {shape: "hv"}},
        {type: "bar", orientation: "h", y: ["a", "b"], x: [2, 1], xaxis: "x", yaxis: "y"}],
        layout: layout("lines", {hovermode: "x unified", xaxis: {title: {text: "time (ms)"}}})}},
    ]},
    {kind: "table", table: "t", title: "table", preset: {}},
  ];
  const table = {columns: [{name: "name", label: "Name", kind: "str"},
                           {name: "us", label: "Time (\u00b5s)", kind: "num", digits: 1},
                           {name: "pct", label: "%", kind: "pct"}, {name: "n", label: "N", kind: "int"}],
                 data: {name: {cats: ["a", "b", "c"], codes: [0, 1, 2]}, us: [3, 2, 1], pct: [50, 33.3, 16.7],
                        n: [1, 2, 3]},
                 n: 3, sort: ["us", "desc"], csv: "warm-up"};
  return {v: 1, title: "warm-up", controls: [{id: "c", label: "c", kind: "checkbox", value: false, options: []}],
          variants: {"false": blocks}, tables: {t: table}, statics: 0};
}
export function warmUp() {
  // Resolves to what it drew ({plots, rows}) or {error}; never rejects (nobody waits for it).
  injectCss();
  const host = el("div");
  host.style.cssText = "position:fixed;left:-10000px;top:0;width:900px;visibility:hidden";
  document.body.appendChild(host);
  const root = el("div", "tfprof-root tfprof-view");
  host.appendChild(root);
  let v = null;
  const drawn = () => ({plots: v.plots.length, rows: root.querySelectorAll(".tft-row").length});
  const done = (out) => {
    if (v) v.dropPlots();
    host.remove();
    return out;
  };
  try {
    v = new View(root, warmPayload());
    return Promise.resolve(v.render()).then(() => done(drawn()), (e) => done({error: String(e)}));
  } catch (e) {
    return Promise.resolve(done({error: String(e)}));
  }
}
