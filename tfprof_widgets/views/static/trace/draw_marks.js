// Viewer methods that draw the marks of the current window (views/trace/model.py
// TraceModel.window(): raw events and "n events" blocks, at most 8,000), the names that fit
// inside their bars, the selection with its flow arrows, and measured or box-zoom ranges.
import { clamp, fmtDur, fmtNum, shortName } from "./format.js";
import { BOLD, FONT, PALETTE, RULER_H, TEXT_ON } from "./style.js";

export class MarkMethods {
  drawMarks(ctx, m, labels) {
    const th = this.theme;
    const n = m.n;
    if (!n) return;
    const scale = this.trackW / (this.vx1 - this.vx0);
    const vx0 = this.vx0, X0 = this.labelW, X1 = this.labelW + this.trackW;
    const searching = !!this.search.regex;
    const hits = searching && m.searched === this.search.regex ? m.hits : null;
    // One pass per colour (few fillStyle changes): blocks faint, raw events solid.
    if (!m.order) {
      const buckets = PALETTE.map(() => []);
      for (let i = 0; i < n; i++) buckets[this.colorOf.get(m.name[i]) ?? 0].push(i);
      m.order = buckets.map((b) => Int32Array.from(b));
    }
    const H = this.H;
    const drawn = [];
    for (let pass = 0; pass < 2; pass++) {
      for (let c = 0; c < PALETTE.length; c++) {
        const idx = m.order[c];
        if (!idx.length) continue;
        ctx.fillStyle = PALETTE[c];
        for (let k = 0; k < idx.length; k++) {
          const i = idx[k];
          const raw = m.row[i] >= 0;
          if (raw !== (pass === 1)) continue;
          let xa = (m.start[i] - vx0) * scale + X0;
          let xb = (m.end[i] - vx0) * scale + X0;
          if (xb < X0 || xa > X1) continue;
          const [y, h] = this.laneScreen(m.lane[i], m.depth[i]);
          if (y > H || y + h < RULER_H) continue;
          let w = xb - xa;
          if (w < 1) { w = 1; }
          let alpha = raw ? 1 : th.block;
          if (searching) {
            const hit = hits ? hits[i] > 0 : this.matches(m.name[i]);
            if (!hit) alpha *= th.dim;
          }
          ctx.globalAlpha = alpha;
          ctx.fillRect(xa, y, w, h);
          if (labels && w > 26 && this.laneY[m.lane[i]] >= 0) drawn.push(i);
        }
      }
    }
    ctx.globalAlpha = 1;
    if (hits) {  // outline what matches
      ctx.strokeStyle = th.select;
      ctx.lineWidth = 1;
      for (let i = 0; i < n; i++) {
        if (!(hits[i] > 0)) continue;
        const xa = Math.max((m.start[i] - vx0) * scale + X0, X0 - 2);
        const xb = Math.min((m.end[i] - vx0) * scale + X0, X1 + 2);
        if (xb < X0 || xa > X1) continue;
        const [y, h] = this.laneScreen(m.lane[i], m.depth[i]);
        if (y > H || y + h < RULER_H) continue;
        ctx.strokeRect(xa + 0.5, y + 0.5, Math.max(1, xb - xa - 1), h - 1);
      }
    }
    if (!labels) return;
    // Names inside bars wide enough, clipped to the visible part of the bar.
    ctx.font = FONT;
    ctx.textBaseline = "middle";
    const seen = [];
    for (const i of drawn) {
      const xa = Math.max((m.start[i] - vx0) * scale + X0, X0);
      const xb = Math.min((m.end[i] - vx0) * scale + X0, X1);
      const room = xb - xa - 6;
      if (room < 20) continue;
      const [y, h] = this.laneScreen(m.lane[i], m.depth[i]);
      const raw = m.row[i] >= 0;
      const full = raw ? this.nameOf(m.name[i]) : `${fmtNum(m.count[i], 0)} events`;
      const text = this.fit(ctx, full, room);
      if (!text) continue;
      ctx.fillStyle = raw ? TEXT_ON[this.colorOf.get(m.name[i]) ?? 0] : th.fg;
      ctx.globalAlpha = searching && !(hits ? hits[i] > 0 : this.matches(m.name[i])) ? 0.5 : 1;
      ctx.fillText(text, xa + 3, y + h / 2 + 0.5);
      if (seen.length < 4000) seen.push({ row: m.row[i], text, x: xa, w: xb - xa });
    }
    ctx.globalAlpha = 1;
    this.stats.labels = seen;
  }
  fit(ctx, name, room) {
    // The name if it fits, else its short form, else that cut with an ellipsis.
    this.widths = this.widths || new Map();
    const width = (s) => {
      let w = this.widths.get(s);
      if (w === undefined) {
        w = ctx.measureText(s).width;
        if (this.widths.size > 20000) this.widths.clear();
        this.widths.set(s, w);
      }
      return w;
    };
    if (width(name) <= room) return name;
    const short = shortName(name);
    if (short !== name && width(short) <= room) return short;
    const per = width(short) / short.length;
    let k = Math.floor(room / per) - 1;
    if (k < 3) return "";
    let s = short.slice(0, k) + "…";
    while (k > 3 && ctx.measureText(s).width > room) { k--; s = short.slice(0, k) + "…"; }
    return k >= 3 ? s : "";
  }
  drawSelection(ctx) {
    const sel = this.selected;
    if (!sel) return;
    const th = this.theme;
    const at = (ev) => {
      const [y, h] = this.laneScreen(ev.lane, ev.depth);
      return { xa: this.xOf(ev.start), xb: Math.max(this.xOf(ev.end), this.xOf(ev.start) + 1), y, h };
    };
    const s = at(sel);
    ctx.strokeStyle = th.select;
    ctx.lineWidth = 2;
    ctx.strokeRect(s.xa - 1, s.y - 1, s.xb - s.xa + 2, s.h + 2);
    // Flow arrows: launch -> kernel, producer -> consumer.
    const flows = (this.details && this.details.flows) || [];
    ctx.strokeStyle = th.flow;
    ctx.fillStyle = th.flow;
    ctx.lineWidth = 1.5;
    for (const f of flows) {
      if (f.kind === "derived") continue;  // a derived XLA event's kernel: a link, not a flow
      const o = at(f);
      let from, to;
      if (f.dir === "in") {
        from = { x: f.kind === "launch" ? o.xa : o.xb, y: o.y + o.h / 2 };
        to = { x: s.xa, y: s.y + s.h / 2 };
      } else {
        from = { x: f.kind === "launch" ? s.xa : s.xb, y: s.y + s.h / 2 };
        to = { x: o.xa, y: o.y + o.h / 2 };
      }
      for (const q of [from, to]) q.y = clamp(q.y, RULER_H + 2, this.H - 2);
      const mid = Math.max(30, Math.abs(to.x - from.x) / 2);
      ctx.beginPath();
      ctx.moveTo(from.x, from.y);
      ctx.bezierCurveTo(from.x + mid, from.y, to.x - mid, to.y, to.x, to.y);
      ctx.stroke();
      ctx.beginPath();  // arrow head pointing right, into the target
      ctx.moveTo(to.x, to.y);
      ctx.lineTo(to.x - 7, to.y - 4);
      ctx.lineTo(to.x - 7, to.y + 4);
      ctx.closePath();
      ctx.fill();
      ctx.beginPath();
      ctx.arc(from.x, from.y, 2.5, 0, Math.PI * 2);
      ctx.fill();
    }
  }
  drawRange(ctx, range, color, label) {
    if (!range) return;
    const a = this.xOf(Math.min(...range)), b = this.xOf(Math.max(...range));
    ctx.fillStyle = color;
    ctx.globalAlpha = 0.15;
    ctx.fillRect(a, RULER_H, b - a, this.H);
    ctx.globalAlpha = 1;
    ctx.fillRect(a, RULER_H, 1, this.H);
    ctx.fillRect(b, RULER_H, 1, this.H);
    if (label) {
      const text = `Δ ${fmtDur(Math.abs(range[1] - range[0]))}`;
      ctx.font = BOLD;
      const w = ctx.measureText(text).width + 10;
      const x = clamp((a + b) / 2 - w / 2, this.labelW, this.labelW + this.trackW - w);
      ctx.fillStyle = this.theme.bg;
      ctx.fillRect(x, RULER_H + 3, w, 17);
      ctx.fillStyle = color;
      ctx.textBaseline = "middle";
      ctx.fillText(text, x + 5, RULER_H + 12);
    }
  }
}
