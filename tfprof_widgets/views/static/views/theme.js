// The page's light/dark theme: JupyterLab's (<body data-jp-theme-light> and its --jp-*
// variables) or else the OS's (prefers-color-scheme); the colours a view and its plots use,
// and every mounted view re-themed when the theme changes. Python sends nothing for it: the
// figures of a view's payload (views/base.py View.payload_json) come without a template.

// JupyterLab marks its theme on <body data-jp-theme-light> and in --jp-* variables; a report
// or another page follows the OS (prefers-color-scheme).
const darkQuery = window.matchMedia ? window.matchMedia("(prefers-color-scheme: dark)") : null;
function inLab() {
  const b = document.body;
  return !!b && b.hasAttribute("data-jp-theme-light") && !b.hasAttribute("data-tfprof-page");
}
function isLight() {
  if (inLab()) return document.body.getAttribute("data-jp-theme-light") !== "false";
  return !(darkQuery && darkQuery.matches);
}
function cssVar(el, name) {
  return inLab() ? getComputedStyle(el).getPropertyValue(name).trim() : "";
}
export function theme(el) {
  const light = isLight();
  const v = (n, l, d) => cssVar(el, n) || (light ? l : d);
  return {
    light: light,
    bg: v("--jp-layout-color0", "#ffffff", "#1e1e1e"),
    bg2: v("--jp-layout-color2", "#f2f2f2", "#2c2c2c"),
    fg: v("--jp-ui-font-color1", "#1f1f1f", "#e0e0e0"),
    muted: v("--jp-ui-font-color2", "#616161", "#a8a8a8"),
    border: v("--jp-border-color1", "#bdbdbd", "#555555"),
    grid: v("--jp-border-color2", "#e3e3e3", "#3a3a3a"),
    link: v("--jp-content-link-color", "#1a6fd1", "#6cb2ff"),
    bad: light ? "#c62828" : "#ff7b72",
    good: light ? "#2e7d32" : "#56d364",
  };
}
export function setThemeVars(root, t) {
  const s = root.style;
  s.setProperty("--tf-bg", t.bg); s.setProperty("--tf-bg2", t.bg2); s.setProperty("--tf-fg", t.fg);
  s.setProperty("--tf-muted", t.muted); s.setProperty("--tf-border", t.border);
  s.setProperty("--tf-grid", t.grid); s.setProperty("--tf-link", t.link);
  s.setProperty("--tf-bad", t.bad); s.setProperty("--tf-good", t.good);
  root.dataset.theme = t.light ? "light" : "dark";
}
export function plotTemplate(t) {
  const axis = {gridcolor: t.grid, linecolor: t.border, zerolinecolor: t.border, tickcolor: t.border,
                automargin: true, title: {standoff: 8}};
  return {layout: {
    paper_bgcolor: t.bg, plot_bgcolor: t.bg,
    font: {color: t.fg, family: "system-ui, -apple-system, 'Segoe UI', Roboto, sans-serif", size: 12},
    xaxis: axis, yaxis: axis, legend: {bgcolor: "rgba(0,0,0,0)", font: {size: 12}},
    hoverlabel: {bgcolor: t.light ? "#ffffff" : "#333333", bordercolor: t.border, font: {color: t.fg, size: 12}},
    title: {font: {size: 14}, x: 0.01, xanchor: "left"},
    colorway: ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2",
               "#7f7f7f", "#bcbd22", "#17becf"],
  }};
}
export const views = new Set();   // mounted view roots, re-themed together
function rethemeAll() {
  for (const v of views) {
    if (!v.root.isConnected) { views.delete(v); continue; }
    v.retheme();
  }
}
let observing = false;
export function observeTheme() {
  if (observing || !document.body) return;
  observing = true;
  new MutationObserver(rethemeAll).observe(document.body,
    {attributes: true, attributeFilter: ["data-jp-theme-light", "data-jp-theme-name"]});
  if (darkQuery && darkQuery.addEventListener) darkQuery.addEventListener("change", rethemeAll);
}
