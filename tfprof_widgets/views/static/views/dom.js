// Small DOM helpers: make an element, run something once a node is in the page (JupyterLab
// runs a notebook's application/javascript before attaching its node), number formats.
// Nothing from Python.

export function el(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
}
export function whenConnected(node, fn) {
  // JupyterLab evaluates application/javascript before attaching its node.
  if (node.isConnected) return fn();
  const t0 = Date.now();
  const iv = setInterval(() => {
    if (node.isConnected) { clearInterval(iv); fn(); }
    else if (Date.now() - t0 > 20000) clearInterval(iv);
  }, 16);
}
const fmtCache = new Map();
export function numberFormat(digits) {
  let f = fmtCache.get(digits);
  if (!f) {
    f = new Intl.NumberFormat("en-US", {minimumFractionDigits: digits, maximumFractionDigits: digits});
    fmtCache.set(digits, f);
  }
  return f;
}
