// Viewer methods for input: wheel zoom and scroll, drag to pan, alt/ctrl-drag or Box zoom,
// shift-drag to measure, clicks on marks, group names, step labels and the ruler, hover
// tooltips, and the keys (w/s zoom, a/d pan, f fit, Esc) held for smooth motion. No payload
// of its own from Python: it moves the view, and fetching.js asks for what it then needs.
import { clamp, fmtAt, fmtDur, fmtNum } from "./format.js";
import { GROUP_H, LABEL_GRIP, ROW_H, RULER_H, SCROLL_W } from "./style.js";

export class InputMethods {
  local(e) {
    const r = this.canvas.getBoundingClientRect();
    return { x: e.clientX - r.left, y: e.clientY - r.top };
  }
  onWheel(e) {
    e.preventDefault();
    const { x } = this.local(e);
    const unit = e.deltaMode === 1 ? 16 : e.deltaMode === 2 ? 400 : 1;
    const dx = e.deltaX * unit, dy = e.deltaY * unit;
    if (e.shiftKey) { this.scrollBy(dy || dx); return; }
    if (Math.abs(dx) > Math.abs(dy) && !e.ctrlKey) {
      this.pan(dx * (this.vx1 - this.vx0) / this.trackW);
      return;
    }
    // A wheel notch (100 px) zooms 2x; a pinch (ctrl+wheel, small deltas) twice as fast.
    const factor = Math.exp(clamp(dy, -600, 600) * (e.ctrlKey ? 0.0139 : 0.00693));
    this.zoomAt(factor, clamp(x, this.labelW, this.labelW + this.trackW));
  }
  onDown(e) {
    if (e.button !== 0) return;
    const p = this.local(e);
    this.canvas.focus({ preventScroll: true });
    e.preventDefault();
    if (p.x >= this.W - SCROLL_W && this.maxScroll() > 0) {
      this.drag = { mode: "scrollbar", y: p.y, scroll: this.scrollY };
      return;
    }
    if (this.onLabelEdge(p)) { this.drag = { mode: "labelEdge", x: p.x, y: p.y, w: this.labelW }; return; }
    if (p.x < this.labelW) { this.drag = { mode: "label", x: p.x, y: p.y }; return; }
    if (p.y < RULER_H) { this.drag = { mode: "ruler", x: p.x, y: p.y }; return; }
    let mode = "pan";
    if (e.shiftKey) mode = "measure";
    else if (e.altKey || e.ctrlKey || e.metaKey || this.boxMode) mode = "box";
    this.drag = { mode, x: p.x, y: p.y, vx0: this.vx0, vx1: this.vx1, scroll: this.scrollY,
      t: this.tOf(p.x), moved: false };
  }
  onMove(e) {
    const p = this.local(e);
    const inside = p.x >= 0 && p.y >= 0 && p.x < this.W && p.y < this.H;
    this.mouse = inside ? p : null;
    const d = this.drag;
    if (!d) {
      this.canvas.style.cursor = inside && this.onLabelEdge(p) ? "col-resize" : "";
      if (inside) this.hover(p); else this.hideTip();
      return;
    }
    if (Math.abs(p.x - d.x) + Math.abs(p.y - d.y) > 3) d.moved = true;
    if (d.mode === "labelEdge") {
      this.setLabelWidth(d.w + p.x - d.x);
    } else if (d.mode === "scrollbar") {
      const viewH = this.H - RULER_H;
      this.scrollY = clamp(d.scroll + (p.y - d.y) * this.contentH / viewH, 0, this.maxScroll());
      this.requestDraw();
    } else if (d.mode === "pan" && d.moved) {
      const dt = (p.x - d.x) * (d.vx1 - d.vx0) / this.trackW;
      this.setView(d.vx0 - dt, d.vx1 - dt);
      this.scrollY = clamp(d.scroll - (p.y - d.y), 0, this.maxScroll());
      this.hideTip();
    } else if (d.mode === "measure" && d.moved) {
      this.measure = [d.t, this.tOf(clamp(p.x, this.labelW, this.labelW + this.trackW))];
      this.requestDraw();
    } else if (d.mode === "box" && d.moved) {
      this.box = [d.t, this.tOf(clamp(p.x, this.labelW, this.labelW + this.trackW))];
      this.requestDraw();
    }
  }
  onLabelEdge(p) {
    // The lane-name column's right edge, below the ruler: dragging it resizes the column.
    return p.y >= RULER_H && Math.abs(p.x - this.labelW) <= LABEL_GRIP;
  }
  onUp(e) {
    const d = this.drag;
    this.drag = null;
    if (!d) return;
    const p = this.local(e);
    if (d.mode === "box") {
      const box = this.box;
      this.box = null;
      if (box && Math.abs(this.xOf(box[1]) - this.xOf(box[0])) > 4) {
        this.setView(Math.min(...box), Math.max(...box));
        if (this.boxMode) this.action("box");
      } else this.requestDraw();
      if (d.moved) return;
    }
    if (d.mode === "labelEdge") { this.maybeFetch(); return; }
    if (d.moved) { this.requestDraw(); return; }
    if (d.mode === "label") this.clickLabel(p);
    else if (d.mode === "ruler") this.clickRuler(p);
    else if (d.mode === "pan" || d.mode === "box" || d.mode === "measure") this.clickTrack(p);
  }
  onKey(e, down) {
    const k = e.key.toLowerCase();
    if (e.ctrlKey || e.metaKey || e.altKey) return;
    if ("wasd".includes(k) && k.length === 1) {
      e.preventDefault();
      if (down && !this.keys.has(k)) {
        this.keys.set(k, performance.now());
        this.keyStep(k, 1 / 8);  // a tap moves at once; holding keeps moving
        this.lastFrame = 0;
        this.requestDraw();
      } else if (!down) this.keys.delete(k);
      return;
    }
    if (!down) return;
    if (k === "f") { e.preventDefault(); this.fitSelection(); }
    else if (k === "0") { e.preventDefault(); this.action("reset"); }
    else if (k === "escape") { this.measure = null; this.box = null; this.select(null); }
    else if (k === "/") { e.preventDefault(); this.input.focus(); }
  }
  keyStep(k, seconds) {
    // w/s: zoom ×3 per second around the mouse (or the centre); a/d: pan 1 view per second.
    const x = this.mouse && this.mouse.x > this.labelW ? this.mouse.x : this.labelW + this.trackW / 2;
    if (k === "w") this.zoomAt(Math.exp(-Math.log(3) * seconds), x);
    else if (k === "s") this.zoomAt(Math.exp(Math.log(3) * seconds), x);
    else if (k === "a") this.pan(-(this.vx1 - this.vx0) * seconds);
    else if (k === "d") this.pan((this.vx1 - this.vx0) * seconds);
  }

  hit(p) {
    // The mark under a point: raw events before blocks, the narrowest first.
    const m = this.marks;
    const t = this.tOf(p.x);
    const slack = 2 * (this.vx1 - this.vx0) / this.trackW;
    let best = -1, bestW = Infinity, bestRaw = false;
    for (let i = 0; i < m.n; i++) {
      const li = m.lane[i];
      const ly = this.laneY[li];
      if (ly < 0) continue;
      const y = this.screenY(ly + m.depth[i] * ROW_H);
      if (p.y < y || p.y >= y + ROW_H - 1) continue;
      if (t < m.start[i] - slack || t > m.end[i] + slack) continue;
      const raw = m.row[i] >= 0;
      const w = m.end[i] - m.start[i];
      if ((raw && !bestRaw) || (raw === bestRaw && w < bestW)) { best = i; bestW = w; bestRaw = raw; }
    }
    return best;
  }
  markEvent(i) {
    const m = this.marks;
    return { row: m.row[i], lane: m.lane[i], depth: m.depth[i], start: m.start[i],
      end: m.end[i], name: this.nameOf(m.name[i]) };
  }
  clickTrack(p) {
    if (this.measure) {  // a click inside the measured range keeps it (double-click: fit it)
      const t = this.tOf(p.x);
      if (t >= Math.min(...this.measure) && t <= Math.max(...this.measure)) return;
      this.measure = null;
      this.requestDraw();
    }
    const i = this.hit(p);
    if (i < 0) { this.select(null); return; }
    const m = this.marks;
    if (m.row[i] < 0) {  // a block: zoom into it
      const a = m.start[i], b = Math.max(m.end[i], a + 1e-3);
      this.setView(a - (b - a) * 0.1, b + (b - a) * 0.1);
      return;
    }
    this.select(this.markEvent(i));
  }
  clickLabel(p) {
    if (p.y < RULER_H) return;
    const cy = p.y - RULER_H + this.scrollY;
    this.meta.groups.forEach((g, gi) => {
      const y = this.groupY[gi];
      if (cy >= y && cy < y + GROUP_H) {
        if (this.collapsed.has(gi)) this.collapsed.delete(gi); else this.collapsed.add(gi);
        this.layout();
        this.resize();
        this.scrollY = clamp(this.scrollY, 0, this.maxScroll());
        this.requestDraw();
      }
    });
  }
  clickRuler(p) {
    // A step label sets the ruler's origin to that step (again: back to the capture start).
    for (const s of this.stepLabels || []) {
      if (p.x >= s.x0 && p.x <= s.x1 && p.y < 18) {
        if (this.origin.step === s.step) this.origin = { t: 0, label: "capture start" };
        else this.origin = { t: s.start, label: `step ${s.step}`, step: s.step };
        this.renderDetails();
        this.requestDraw();
        return;
      }
    }
  }
  hover(p) {
    if (p.x < this.labelW && p.y >= RULER_H) {
      const cy = p.y - RULER_H + this.scrollY;
      const lanes = this.meta.lanes;
      for (let li = 0; li < lanes.length; li++) {
        const y = this.laneY[li];
        if (y >= 0 && cy >= y && cy < y + this.laneH[li]) {
          const l = lanes[li];
          this.showTip(p, `${l.label}\n${l.tooltip}`);
          return;
        }
      }
      this.meta.groups.forEach((g, gi) => {
        if (cy >= this.groupY[gi] && cy < this.groupY[gi] + GROUP_H) {
          this.showTip(p, `${g.label}\n${fmtNum(g.n, 0)} events · ${g.lanes.length} lanes · click to ${this.collapsed.has(gi) ? "expand" : "collapse"}`);
        }
      });
      return;
    }
    if (p.y < RULER_H || p.x >= this.W - SCROLL_W) { this.hideTip(); return; }
    const i = this.hit(p);
    if (i < 0) { this.hideTip(); return; }
    const m = this.marks;
    let name = this.nameOf(m.name[i]);
    if (name.length > 300) name = `${name.slice(0, 300)}…`;
    const lane = this.meta.lanes[m.lane[i]];
    const dur = m.end[i] - m.start[i];
    let text;
    if (m.row[i] < 0) {
      text = `${fmtNum(m.count[i], 0)} events (click to zoom in)\nfirst: ${name}\n` +
        `${fmtAt(m.start[i] - this.origin.t)} … ${fmtAt(m.end[i] - this.origin.t)}`;
    } else {
      text = `${name}\n${fmtDur(dur)} · starts ${fmtAt(m.start[i] - this.origin.t)} from ` +
        `${this.origin.label}\n${lane ? lane.label : ""}`;
    }
    if (this.search.regex && m.hits) text += `\n${m.hits[i]} match${m.hits[i] === 1 ? "" : "es"}`;
    this.showTip(p, text);
  }
  showTip(p, text) {
    const tip = this.tip;
    tip.textContent = text;
    tip.style.display = "block";
    const tw = tip.offsetWidth, th = tip.offsetHeight;
    let x = p.x + 14, y = p.y + 16;
    if (x + tw > this.W) x = Math.max(0, p.x - tw - 10);
    if (y + th > this.H) y = Math.max(0, p.y - th - 10);
    tip.style.left = `${x}px`;
    tip.style.top = `${y}px`;
  }
  hideTip() { this.tip.style.display = "none"; }

}
