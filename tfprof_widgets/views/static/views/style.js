// The views' CSS, put in the page once (a <style id="tfprof-views-css">), and the table row
// height it and the table component share. Nothing from Python. No :has() rules: in a
// JupyterLab page each one is checked again on every change of the DOM below it, and two that
// hid a view's static outputs (outputs.js keepHidden does that) made plotly's drawing slower.

export const ROW_H = 22;
const VIEWS_CSS = `
.tfprof-root{color:var(--tf-fg);font:13px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;
max-width:100%;min-width:0;box-sizing:border-box;overflow:hidden;padding:2px 0}
.tfprof-root *{box-sizing:border-box}
.tfprof-title{font-weight:600;font-size:15px;margin:0 0 4px}
.tfprof-root .tf-muted{color:var(--tf-muted)}
.tfprof-root .tf-bad{color:var(--tf-bad)}
.tfprof-root .tf-good{color:var(--tf-good)}
.tfprof-root .tf-swatch{display:inline-block;width:.8em;height:.8em;border-radius:2px;margin:0 .25em 0 .5em;vertical-align:-1px}
.tfprof-root p,.tfprof-root ul{margin:3px 0}
.tfprof-root ul{padding-left:1.3em}
.tfprof-root code{font-size:12px}
.tfprof-html{margin:4px 0;overflow-wrap:anywhere}
.tfprof-controls{display:flex;flex-wrap:wrap;gap:6px 16px;align-items:center;margin:4px 0}
.tfprof-controls label{display:inline-flex;gap:6px;align-items:center}
.tfprof-root select,.tfprof-root input,.tfprof-root button{font:inherit;font-size:12px;color:var(--tf-fg);
background:var(--tf-bg);border:1px solid var(--tf-border);border-radius:3px;padding:1px 5px;max-width:100%}
.tfprof-root button{cursor:pointer}
.tfprof-root button:hover{background:var(--tf-bg2)}
.tfprof-figs{display:grid;grid-template-columns:minmax(0,1fr);gap:4px 12px;min-width:0}
.tfprof-figs.tf-row{grid-template-columns:repeat(auto-fit,minmax(min(100%,360px),1fr))}
.tfprof-fig{min-width:0;position:relative}
.tfprof-fig .tf-figbar{display:flex;gap:6px;justify-content:flex-end;margin:0 0 -2px}
.tfprof-plot{width:100%;min-width:0}
.tft{max-width:100%;min-width:0;margin:6px 0;font-size:12px}
.tft-title{font-weight:600;margin:6px 0 2px}
.tft-bar{display:flex;flex-wrap:wrap;gap:6px 10px;align-items:center;margin:2px 0 4px}
.tft-bar input{width:16em}
.tft-count{color:var(--tf-muted)}
.tft-chip{display:none;border:1px solid var(--tf-border);border-radius:10px;padding:0 4px 0 8px;
background:var(--tf-bg2);max-width:40em;white-space:nowrap;overflow:hidden;text-overflow:ellipsis}
.tft-chip button{border:0;background:transparent;padding:0 4px;margin-left:2px}
.tft-scroll{overflow:auto;position:relative;border-top:1px solid var(--tf-border);max-width:100%}
.tft-head{display:grid;align-items:end;position:sticky;top:0;z-index:1;background:var(--tf-bg);
font-weight:600;border-bottom:1px solid var(--tf-border)}
.tft-head>div{padding:2px 6px;cursor:pointer;user-select:none;overflow:hidden;line-height:15px;
max-height:64px;overflow-wrap:normal;word-break:normal}
.tft-head>div:hover{background:var(--tf-bg2)}
.tft-body{position:relative}
.tft-row{display:grid;position:absolute;left:0;right:0;height:${ROW_H}px;border-bottom:1px solid var(--tf-grid)}
.tft-row:hover{background:var(--tf-bg2)}
.tft-linked .tft-row{cursor:pointer}
.tfprof-panel{margin-top:8px;padding-top:6px;border-top:2px solid var(--tf-grid)}
.tft-row>div{padding:0 6px;white-space:nowrap;overflow:hidden;text-overflow:ellipsis;line-height:${ROW_H - 1}px}
.tft .tf-num{text-align:right;font-variant-numeric:tabular-nums}
.tft-empty{padding:6px;color:var(--tf-muted)}
`;
export function injectCss() {
  if (document.getElementById("tfprof-views-css")) return;
  const s = document.createElement("style");
  s.id = "tfprof-views-css";
  s.textContent = VIEWS_CSS;
  document.head.appendChild(s);
}
