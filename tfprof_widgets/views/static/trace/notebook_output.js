// Output 3 of views/trace/viewer.py TraceViewer._ipython_display_: a notebook's
// application/javascript output (TraceViewer.viewer_js) calls mountOutput(element, payload)
// with its element and the offline payload. Outputs 1 (the live widget) and 2 (the text, or
// the static image once rendered) come before it. JupyterLab 4.6 runs the script before
// attaching the element, so nothing is looked up until it is in the page. In a notebook app
// it then waits (up to 8 s) for the live widget to draw and stands down if it does; where
// none can (an exported page, a notebook reopened without a kernel: "model not found") it
// draws the embedded payload itself. Output 2 stays hidden, even when a display update
// replaces it. A saved notebook reopened with a new kernel: JupyterLab's widget manager
// console.error()s "widget model not found" for output 1 (its model died with the old
// kernel); that is the case output 3 is for, so that one error is kept out of the console
// (see quietStaleWidget), and nothing else.
import { renderOffline } from "./offline.js";

const STALE = /model not found/i;

function outputsBefore(out) {
  const prev = [];
  for (let p = out.previousElementSibling; p && prev.length < 2; p = p.previousElementSibling) prev.push(p);
  return prev;
}

function staleWidgetOfOurs() {
  // Is output 1 of a trace viewer on this page a live-widget output showing the widget
  // manager's "model not found"?
  for (const el of document.querySelectorAll(".tfpv-output")) {
    const out = el.closest(".jp-OutputArea-child");
    const widget = out && outputsBefore(out)[1];
    // The manager's renderer adds .jupyter-widgets to the output it failed to fill.
    if (widget && widget.querySelector(".jupyter-widgets") && STALE.test(widget.textContent || "")) return true;
  }
  return false;
}

function quietStaleWidget() {
  // Once per page: drop the widget manager's console.error(Error("widget model not found"))
  // while it concerns a trace viewer's output 1 (the manager writes that text into the
  // output just before it logs); every other error is logged as before.
  if (window.__tfpvQuietStale) return;
  window.__tfpvQuietStale = true;
  const log = console.error;
  console.error = function (...args) {
    const e = args[0];
    if (args.length === 1 && e instanceof Error && e.message === "widget model not found" && staleWidgetOfOurs()) return;
    log.apply(this, args);
  };
}

function whenConnected(node, fn) {
  if (node.isConnected) { fn(); return; }
  const t0 = Date.now();
  const iv = setInterval(() => {
    if (node.isConnected) { clearInterval(iv); fn(); }
    else if (Date.now() - t0 > 600000) clearInterval(iv);
  }, 30);
}

function markedOutput(element) {
  // Elsewhere (Colab's output frame, VS Code's webview): the ancestor right after output 2,
  // which TraceViewer._ipython_display_ marks with .tfprof-static (or its image, once the
  // display update brought it).
  for (let a = element; a && a.parentElement && a !== document.body; a = a.parentElement) {
    const prev = a.previousElementSibling;
    if (prev && (prev.matches(".tfprof-static, img") || prev.querySelector(".tfprof-static, img"))) return a;
  }
  return null;
}

export function mountOutput(element, payload) {
  element.classList.add("tfpv-output");
  quietStaleWidget();
  whenConnected(element, () => {
    const out = element.closest(".jp-OutputArea-child, .output_area") || markedOutput(element) || element;
    const before = () => outputsBefore(out);
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
    const failed = () => widget() && (STALE.test(widget().textContent || "") || /Error displaying widget/i.test(widget().textContent || ""));
    // No notebook app on the page (an exported page): no live widget can come.
    const app = window.jupyterapp || window.Jupyter || typeof acquireVsCodeApi !== "undefined"
      || (window.google && window.google.colab);
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
