// The trace viewer's geometry (label column, ruler, row and group heights), fonts, the name
// palette, the light and dark colours, and its CSS (put in the page once). Nothing from
// Python; views/trace/static.py draws the static image with the same palette.
import { luminance } from "./colors.js";

// The lane-name column: a fifth of the viewer's width, within these bounds (CSS px), so that a
// narrow output (a 700 px window) keeps most of its width for the timeline; dragging the
// column's edge sets it (within LABEL_MIN and LABEL_MAX_SHARE of the width).
export const LABEL_SHARE = 0.2;
export const LABEL_MIN = 80;
export const LABEL_MAX = 220;
export const LABEL_MAX_SHARE = 0.4;
export const LABEL_GRIP = 4;  // px either side of the column's edge that start a resize
export const RULER_H = 38;    // ruler: step labels above, time ticks below
export const ROW_H = 18;      // one nesting depth
export const GROUP_H = 22;    // a host/plane group header
export const LANE_PAD = 3;    // space under each lane
export const SCROLL_W = 9;    // vertical scrollbar
export const FONT = "11px system-ui, -apple-system, 'Segoe UI', Roboto, sans-serif";
export const BOLD = "600 11.5px system-ui, -apple-system, 'Segoe UI', Roboto, sans-serif";
export const PALETTE = ["#1f77b4", "#aec7e8", "#ff7f0e", "#ffbb78", "#2ca02c", "#98df8a", "#d62728",
  "#ff9896", "#9467bd", "#c5b0d5", "#8c564b", "#c49c94", "#e377c2", "#f7b6d2", "#7f7f7f",
  "#c7c7c7", "#bcbd22", "#dbdb8d", "#17becf", "#9edae5"];
export const TEXT_ON = PALETTE.map((c) => (luminance(c) > 0.55 ? "#111" : "#fff"));

export const LIGHT = { bg: "#ffffff", panel: "#f5f5f5", fg: "#1f1f1f", muted: "#666666",
  border: "#d0d0d0", grid: "rgba(0,0,0,0.07)", band: "rgba(0,0,0,0.045)",
  bandLabel: "#555", accent: "#1976d2", select: "#111111", flow: "#c2185b",
  tipBg: "#fffff0", tipFg: "#111", noteBg: "#fff8e1", block: 0.55, dim: 0.22 };
export const DARK = { bg: "#1e1e1e", panel: "#262626", fg: "#e6e6e6", muted: "#a0a0a0",
  border: "#444444", grid: "rgba(255,255,255,0.08)", band: "rgba(255,255,255,0.05)",
  bandLabel: "#bbb", accent: "#64b5f6", select: "#ffffff", flow: "#ff80ab",
  tipBg: "#333333", tipFg: "#eee", noteBg: "#3e3520", block: 0.5, dim: 0.2 };

export const VIEWER_CSS = `
.tfpv{font:12px/1.35 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:var(--tfpv-fg);
 background:var(--tfpv-bg);border:1px solid var(--tfpv-border);border-radius:4px;
 box-sizing:border-box;width:100%;min-width:0;max-width:100%;position:relative}
.tfpv *{box-sizing:border-box}
.tfpv-bar{display:flex;flex-wrap:wrap;align-items:center;gap:5px;padding:4px 6px;
 border-bottom:1px solid var(--tfpv-border);background:var(--tfpv-panel)}
.tfpv-bar button{font:inherit;color:inherit;background:var(--tfpv-bg);border:1px solid
 var(--tfpv-border);border-radius:3px;padding:0 7px;cursor:pointer;line-height:20px}
.tfpv-bar button.on{background:var(--tfpv-accent);color:#fff;border-color:var(--tfpv-accent)}
.tfpv-bar input{font:inherit;color:inherit;background:var(--tfpv-bg);border:1px solid
 var(--tfpv-border);border-radius:3px;padding:0 6px;line-height:20px;
 flex:1 1 120px;min-width:90px;max-width:210px}
.tfpv-bar input.bad{border-color:#d62728}
.tfpv-count{color:var(--tfpv-muted);min-width:40px}
.tfpv-status{margin-left:auto;color:var(--tfpv-muted);white-space:nowrap;overflow:hidden;
 text-overflow:ellipsis;max-width:100%;min-width:0}
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
.tfpv-details pre.hlo{margin:2px 0 6px;font:11px/1.4 ui-monospace,SFMono-Regular,Menlo,monospace;
 white-space:pre-wrap;overflow-wrap:anywhere}
.tfpv-details .x{float:right;cursor:pointer;color:var(--tfpv-muted);padding:0 4px}
.tfpv-help{color:var(--tfpv-muted);font-size:11px;padding:3px 8px;display:none;
 border-top:1px solid var(--tfpv-border);line-height:1.5}
`;
