// The offline data source: answers the same questions as the kernel from the payload that
// views/trace/viewer.py TraceViewer.offline_payload() embeds: {meta, tiles: [{x0, x1, level,
// exact, header, deflate, data (base64 of the deflated Marks.pack() buffer), children}],
// name_counts, bytes}: a tree of zoom levels (each tile cut in four where it had merged
// blocks) and the busiest step in full. Tiles are inflated with DecompressionStream.
import { emptyMarks, unpackMarks } from "./marks.js";

// The offline source answers from the embedded tiles: a tree of zoom levels (each tile cut
// in four below it, where it had merged blocks) and the busiest step in full.
export class StaticSource {
  constructor(payload) {
    this.live = false;
    this.payload = payload;
    this.tiles = payload.tiles;
    this.nameCounts = payload.name_counts || {};
    this.ready = Promise.all(this.tiles.map(async (t) => {
      const bytes = Uint8Array.from(atob(t.data), (c) => c.charCodeAt(0));
      let raw = bytes.buffer;
      if (t.deflate) {
        const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("deflate"));
        raw = await new Response(stream).arrayBuffer();
      }
      t.marks = unpackMarks(t.header, raw);
      delete t.data;
    }));
  }
  pick(x0, x1, pxUs) {
    // The coarsest tiles of the tree fine enough for the view (or the finest there are,
    // which is where detail ends).
    const out = [];
    let short = false;
    const visit = (i) => {
      const t = this.tiles[i];
      if (t.x1 <= x0 || t.x0 >= x1) return;
      const colw = t.marks.cols ? (t.x1 - t.x0) / t.marks.cols : 0;
      if (t.marks.complete || colw <= pxUs * 1.5 || !t.children) {
        if (!t.marks.complete && colw > pxUs * 3) short = true;
        out.push(t);
        return;
      }
      for (const c of t.children) visit(c);
    };
    visit(0);
    return { tiles: out, short };
  }
  async window(x0, x1, cols) {
    await this.ready;
    // The view is the middle half of what is asked for: inside the span kept in full, that
    // span answers alone (the viewer draws the overview around it).
    const v0 = x0 + (x1 - x0) / 4, v1 = x1 - (x1 - x0) / 4;
    const exact = this.tiles.find((t) => t.exact && t.x0 <= v0 && v1 <= t.x1);
    if (exact) {
      return { marks: { ...exact.marks, reqCols: 0, short: false, exactStep: true,
        order: undefined }, names: {} };
    }
    const { tiles, short } = this.pick(x0, x1, (x1 - x0) / Math.max(1, cols));
    const seen = new Set();
    const parts = [];
    let n = 0;
    for (const t of tiles) {
      const m = t.marks;
      const keep = [];
      for (let i = 0; i < m.n; i++) {
        if (m.end[i] < x0 || m.start[i] > x1) continue;
        if (m.row[i] >= 0) { if (seen.has(m.row[i])) continue; seen.add(m.row[i]); }
        keep.push(i);
      }
      parts.push([m, keep]);
      n += keep.length;
    }
    const out = emptyMarks(x0, x1);
    for (const k of ["start", "end"]) out[k] = new Float64Array(n);
    for (const k of ["row", "lane", "name"]) out[k] = new Int32Array(n);
    out.count = new Uint32Array(n);
    out.depth = new Uint16Array(n);
    let j = 0, events = 0, complete = true, colsUsed = 0;
    for (const [m, keep] of parts) {
      if (!m.complete) complete = false;
      colsUsed = Math.max(colsUsed, m.cols ? Math.round(m.cols * (x1 - x0) / (m.x1 - m.x0)) : 0);
      for (const i of keep) {
        out.start[j] = m.start[i]; out.end[j] = m.end[i]; out.row[j] = m.row[i];
        out.lane[j] = m.lane[i]; out.name[j] = m.name[i]; out.count[j] = m.count[i];
        out.depth[j] = m.depth[i]; events += m.count[i]; j++;
      }
    }
    Object.assign(out, { n, nEvents: events, complete, cols: complete ? 0 : colsUsed,
      reqCols: cols,
      short, exactStep: tiles.length === 1 && !!tiles[0].exact });
    return { marks: out, names: {} };
  }
  async details() { return null; }
  async search(regex) {
    const re = new RegExp(regex);
    let count = 0;
    for (const [id, name] of Object.entries(this.payload.meta.names)) {
      if (re.test(name)) count += this.nameCounts[id] || 0;
    }
    return { count, offline: true };
  }
  async next(regex, t, row, direction) {
    await this.ready;
    const re = new RegExp(regex);
    const names = this.payload.meta.names;
    const match = new Map();
    let best = null;
    for (const tile of this.tiles) {
      const m = tile.marks;
      for (let i = 0; i < m.n; i++) {
        if (m.row[i] < 0) continue;
        let ok = match.get(m.name[i]);
        if (ok === undefined) { ok = re.test(names[m.name[i]] || ""); match.set(m.name[i], ok); }
        if (!ok) continue;
        const s = m.start[i], r = m.row[i];
        const after = direction >= 0 ? (s > t || (s === t && r > row)) : (s < t || (s === t && r < row));
        if (!after) continue;
        if (!best || (direction >= 0 ? (s < best.start || (s === best.start && r < best.row))
          : (s > best.start || (s === best.start && r > best.row)))) {
          best = { row: r, lane: m.lane[i], depth: m.depth[i], start: s, end: m.end[i],
            name: names[m.name[i]] || "" };
        }
      }
    }
    return best;
  }
}
