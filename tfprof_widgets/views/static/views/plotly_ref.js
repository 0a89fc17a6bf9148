// The plotly.js the views draw with: the vendored basic bundle (static/plotly-basic.min.js),
// which views/_display.py viewer_lib() runs first and keeps private as window.__tfprofPlotly
// (a page's own window.Plotly is left as it was), or else the page's.

export const Plotly = window.__tfprofPlotly || window.Plotly;
