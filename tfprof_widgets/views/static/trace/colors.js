// CSS colours as numbers: any CSS colour normalised by a scratch canvas, and its luminance
// (text on a coloured bar is black or white by it). Nothing from Python.

let colorCtx = null;  // a scratch canvas that normalises CSS colours
export function luminance(color) {
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
