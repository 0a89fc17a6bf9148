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
