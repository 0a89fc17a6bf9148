// Text for the viewer: durations and times (µs in, precise to the ns at any zoom), numbers,
// HTML escaping, the short form of a long kernel or op name for bar labels, and the name hash
// that gives a name the same colour in every view. Nothing from Python.

export function hash(s) {  // FNV-1a: the same colour for the same name, in every view
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) { h ^= s.charCodeAt(i); h = Math.imul(h, 0x01000193); }
  return h >>> 0;
}
export function esc(s) {
  return String(s).replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;",
    '"': "&quot;", "'": "&#39;" }[c]));
}
export function fmtDur(us) {
  const a = Math.abs(us);
  if (!isFinite(us)) return "—";
  if (a === 0) return "0";
  if (a < 1) return `${+(us * 1e3).toPrecision(3)} ns`;
  if (a < 1e3) return `${+us.toPrecision(4)} µs`;
  if (a < 1e6) return `${+(us / 1e3).toPrecision(4)} ms`;
  return `${+(us / 1e6).toPrecision(4)} s`;
}
export function fmtAt(us) {  // a point in time, precise to the ns at any zoom
  const a = Math.abs(us);
  if (a < 1e3) return `${fmtNum(us, 3)} µs`;
  if (a < 1e6) return `${fmtNum(us / 1e3, 6)} ms`;
  return `${fmtNum(us / 1e6, 9)} s`;
}
export function fmtNum(v, digits) {
  return v.toLocaleString("en-US", { minimumFractionDigits: digits,
    maximumFractionDigits: digits });
}
export function clamp(v, a, b) { return v < a ? a : v > b ? b : v; }
// A short form of a long event name for bar labels: a C++ kernel without its return type,
// template arguments and parameters; a TF op path's last component.
export function shortName(name) {
  let s = name;
  if (s.length > 40 && (s.includes("<") || s.includes("("))) {
    s = s.replace(/^(void|[\w:]+\*?)\s+(?=[\w:~]+[<(])/, "");
    let out = "", depth = 0;
    for (const ch of s) {
      if (ch === "<") depth++;
      else if (ch === ">") depth = Math.max(0, depth - 1);
      else if (ch === "(" && depth === 0) break;
      else if (depth === 0) out += ch;
    }
    s = out.trim() || s;
  }
  if (s.length > 40 && s.includes("/")) s = "…/" + s.slice(s.lastIndexOf("/") + 1);
  return s;
}
