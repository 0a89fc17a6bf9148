// Viewer methods that draw a frame on the canvas: the frame loop (one draw per animation
// frame, timings in viewer.stats), group and lane rows, grid, step bands, lane labels, the
// ruler and the scrollbar. The marks themselves are draw_marks.js's. From Python: the lanes,
// groups and step bands of meta (views/trace/viewer.py TraceViewer.meta(); steps from
// _steps(): [step, start µs, duration µs] of the host with the most steps).
import { fmtDur, fmtNum } from "./format.js";
import { BOLD, FONT, GROUP_H, ROW_H, RULER_H, SCROLL_W } from "./style.js";

export class DrawMethods {
  requestDraw() {
    if (this.drawQueued) return;
    this.drawQueued = true;
    requestAnimationFrame((ts) => this.frame(ts));
  }
  frame(ts) {
    this.drawQueued = false;
    const held = this.keys.size > 0;
    if (held) {
      const dt = this.lastFrame ? Math.min(0.1, (ts - this.lastFrame) / 1000) : 0;
      if (this.lastFrame) {
        this.stats.frames.push(ts - this.lastFrame);
        if (this.stats.frames.length > 2000) this.stats.frames.shift();
      }
      this.lastFrame = ts;
      for (const [k, since] of this.keys) if (ts - since > 120) this.keyStep(k, dt);
    } else this.lastFrame = 0;
    this.drawNow();
    if (this.tipStale) {  // what is under the mouse changed: tooltip follows
      this.tipStale = false;
      if (this.mouse && !this.drag) this.hover(this.mouse); else this.hideTip();
    }
    if (held) this.requestDraw();
  }
  drawNow() {
    if (!this.W || !this.theme) return;
    const t0 = performance.now();
    this.draw();
    const t1 = performance.now();
    this.stats.draws.push(t1 - t0);
    if (this.stats.draws.length > 2000) this.stats.draws.shift();
    if (this.stats.firstDraw === null) this.stats.firstDraw = t1;
    this.root.dataset.window = `${this.vx0},${this.vx1}`;
  }
  draw() {
    const ctx = this.ctx, th = this.theme;
    ctx.setTransform(this.dpr, 0, 0, this.dpr, 0, 0);
    ctx.fillStyle = th.bg;
    ctx.fillRect(0, 0, this.W, this.H);
    const x0 = this.labelW, x1 = this.labelW + this.trackW;
    // Tracks: bands, groups, marks, flows, overlays; clipped so nothing leaves the area.
    ctx.save();
    ctx.beginPath();
    ctx.rect(x0, RULER_H, this.trackW, this.H - RULER_H);
    ctx.clip();
    this.drawSteps(ctx, false);
    this.drawGroupRows(ctx);
    this.drawGrid(ctx);
    const m = this.marks;
    if (this.overview && this.overview !== m) {
      // What the last answer does not cover, from the overview (until the kernel answers).
      const ax = this.xOf(m.x0), bx = this.xOf(m.x1);
      for (const [c0, c1] of [[x0, ax], [bx, x1]]) {
        if (c1 - c0 < 1) continue;
        ctx.save(); ctx.beginPath(); ctx.rect(c0, RULER_H, c1 - c0, this.H); ctx.clip();
        this.drawMarks(ctx, this.overview, false);
        ctx.restore();
      }
      ctx.save(); ctx.beginPath(); ctx.rect(Math.max(ax, x0), RULER_H, Math.min(bx, x1) - Math.max(ax, x0), this.H); ctx.clip();
      this.drawMarks(ctx, m, true);
      ctx.restore();
    } else this.drawMarks(ctx, m, true);
    this.drawSelection(ctx);
    this.drawRange(ctx, this.measure, th.accent, true);
    this.drawRange(ctx, this.box, th.accent, false);
    ctx.restore();
    this.drawLabels(ctx);
    this.drawRuler(ctx);
    this.drawScrollbar(ctx);
  }
  laneScreen(li, depth) {
    const ly = this.laneY[li];
    if (ly >= 0) return [this.screenY(ly + depth * ROW_H), ROW_H - 2];
    // collapsed group: everything in its header row
    const gy = this.screenY(this.groupY[this.laneGroup[li]]);
    return [gy + 5, GROUP_H - 10];
  }
  drawGroupRows(ctx) {
    const th = this.theme;
    ctx.fillStyle = th.panel;
    this.meta.groups.forEach((g, gi) => {
      const y = this.screenY(this.groupY[gi]);
      if (y > this.H || y + GROUP_H < RULER_H) return;
      ctx.globalAlpha = this.collapsed.has(gi) ? 0.6 : 0.9;
      ctx.fillRect(this.labelW, y, this.trackW, GROUP_H);
    });
    ctx.globalAlpha = 1;
    // lane separators
    ctx.fillStyle = th.grid;
    for (let li = 0; li < this.meta.lanes.length; li++) {
      const y = this.laneY[li];
      if (y < 0) continue;
      const sy = this.screenY(y + this.laneH[li]) - 1;
      if (sy < RULER_H || sy > this.H) continue;
      ctx.fillRect(this.labelW, sy, this.trackW, 1);
    }
  }
  ticks() {
    // Tick spacing 1, 2 or 5 × 10^k µs, at least 90 px apart; the unit follows the spacing.
    const pxUs = this.trackW / (this.vx1 - this.vx0);
    const raw = 90 / pxUs;
    const p10 = 10 ** Math.floor(Math.log10(raw));
    const step = [1, 2, 5, 10].map((k) => k * p10).find((s) => s >= raw) || 10 * p10;
    const unit = step < 1 ? ["ns", 1e-3] : step < 1e3 ? ["µs", 1] : step < 1e6 ? ["ms", 1e3] : ["s", 1e6];
    const digits = Math.max(0, Math.ceil(-Math.log10(step / unit[1]) - 1e-9));
    const o = this.origin.t;
    const first = Math.ceil((this.vx0 - o) / step) * step + o;
    const out = [];
    for (let t = first; t <= this.vx1; t += step) out.push(t);
    return { out, step, unit, digits };
  }
  drawGrid(ctx) {
    ctx.fillStyle = this.theme.grid;
    for (const t of this.ticks().out) ctx.fillRect(Math.round(this.xOf(t)), RULER_H, 1, this.H);
  }
  drawSteps(ctx, labels) {
    const steps = this.meta.steps || [];
    const th = this.theme;
    if (!labels) this.stepLabels = [];
    for (let i = 0; i < steps.length; i++) {
      const [step, start, dur] = steps[i];
      if (start + dur < this.vx0 || start > this.vx1) continue;
      const a = this.xOf(start), b = this.xOf(start + dur);
      if (!labels) {
        ctx.fillStyle = th.band;
        if (i % 2 === 0) ctx.fillRect(a, RULER_H, Math.max(1, b - a), this.H);
        ctx.fillStyle = th.grid;
        ctx.fillRect(Math.round(a), RULER_H, 1, this.H);
      } else {
        const la = Math.max(a, this.labelW), lb = Math.min(b, this.labelW + this.trackW);
        if (lb - la < 8) continue;
        ctx.fillStyle = this.origin.step === step ? th.accent : th.band;
        ctx.fillRect(la, 2, lb - la - 1, 15);
        const text = `step ${step}`;
        if (lb - la > 30) {
          ctx.fillStyle = this.origin.step === step ? "#fff" : th.bandLabel;
          ctx.fillText(text, la + 3, 13, lb - la - 6);
        }
        this.stepLabels.push({ x0: la, x1: lb, step, start });
      }
    }
  }
  drawLabels(ctx) {
    const th = this.theme;
    ctx.fillStyle = th.panel;
    ctx.fillRect(0, RULER_H, this.labelW, this.H - RULER_H);
    ctx.save();
    ctx.beginPath();
    ctx.rect(0, RULER_H, this.labelW, this.H - RULER_H);
    ctx.clip();
    ctx.textBaseline = "middle";
    this.meta.groups.forEach((g, gi) => {
      const y = this.screenY(this.groupY[gi]);
      if (y > this.H || y + GROUP_H < RULER_H) return;
      ctx.fillStyle = th.bg;
      ctx.fillRect(0, y, this.labelW, GROUP_H);
      ctx.fillStyle = th.grid;
      ctx.fillRect(0, y, this.W, 1);
      ctx.font = BOLD;
      ctx.fillStyle = th.fg;
      const arrow = this.collapsed.has(gi) ? "▸" : "▾";
      ctx.fillText(`${arrow} ${g.label}`, 6, y + GROUP_H / 2, this.labelW - 12);
    });
    ctx.font = FONT;
    const lanes = this.meta.lanes;
    for (let li = 0; li < lanes.length; li++) {
      const y = this.laneY[li];
      if (y < 0) continue;
      const sy = this.screenY(y);
      if (sy > this.H || sy + this.laneH[li] < RULER_H) continue;
      ctx.fillStyle = th.fg;
      const text = this.fit(ctx, lanes[li].label, this.labelW - 26);
      ctx.fillText(text, 16, sy + ROW_H / 2);
      ctx.fillStyle = th.grid;
      ctx.fillRect(0, sy + this.laneH[li] - 1, this.labelW, 1);
    }
    ctx.restore();
    ctx.fillStyle = th.border;
    ctx.fillRect(this.labelW - 1, RULER_H, 1, this.H - RULER_H);
  }
  drawRuler(ctx) {
    const th = this.theme;
    ctx.fillStyle = th.panel;
    ctx.fillRect(0, 0, this.W, RULER_H);
    ctx.fillStyle = th.border;
    ctx.fillRect(0, RULER_H - 1, this.W, 1);
    ctx.save();
    ctx.beginPath();
    ctx.rect(this.labelW, 0, this.trackW, RULER_H);
    ctx.clip();
    ctx.font = FONT;
    ctx.textBaseline = "alphabetic";
    this.drawSteps(ctx, true);
    const { out, unit, digits } = this.ticks();
    ctx.fillStyle = th.fg;
    for (const t of out) {
      const x = Math.round(this.xOf(t));
      ctx.fillStyle = th.muted;
      ctx.fillRect(x, RULER_H - 8, 1, 7);
      ctx.fillStyle = th.fg;
      ctx.fillText(fmtNum((t - this.origin.t) / unit[1], digits), x + 3, RULER_H - 6);
    }
    ctx.restore();
    // the corner: unit and origin, and the view's span
    ctx.font = FONT;
    ctx.fillStyle = th.muted;
    ctx.fillText(`${unit[0]} from ${this.origin.label}`, 6, RULER_H - 6, this.labelW - 12);
    ctx.fillText(`view: ${fmtDur(this.vx1 - this.vx0)}`, 6, 14, this.labelW - 12);
  }
  drawScrollbar(ctx) {
    const max = this.maxScroll();
    const th = this.theme;
    ctx.fillStyle = th.panel;
    ctx.fillRect(this.W - SCROLL_W, RULER_H, SCROLL_W, this.H - RULER_H);
    if (max <= 0) return;
    const viewH = this.H - RULER_H;
    const h = Math.max(24, viewH * viewH / this.contentH);
    const y = RULER_H + (viewH - h) * this.scrollY / max;
    ctx.fillStyle = th.muted;
    ctx.globalAlpha = 0.5;
    ctx.fillRect(this.W - SCROLL_W + 2, y, SCROLL_W - 4, h);
    ctx.globalAlpha = 1;
  }
}
