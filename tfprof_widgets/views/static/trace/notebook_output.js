// Output 3 of views/timeline_view.py TraceViewer._ipython_display_: a notebook's
// application/javascript output (TraceViewer.viewer_js) calls mountOutput(element, payload)
// with its element and the offline payload. Outputs 1 (the live widget) and 2 (the text, or
// the static image once rendered) come before it. JupyterLab 4.6 runs the script before
// attaching the element, so nothing is looked up until it is in the page. In a notebook app
// it then waits (up to 8 s) for the live widget to draw and stands down if it does; where
// none can (an exported page, a notebook reopened without a kernel: "model not found") it
// draws the embedded payload itself. Output 2 stays hidden, even when a display update
// replaces it.
import { renderOffline } from "./offline.js";

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
