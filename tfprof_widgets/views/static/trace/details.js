// Viewer methods for the selection: select an event, fetch its details
// (views/trace/details.py event_details(): name, times, stats, launch arguments, parents,
// flows [{kind, dir, row, ...}] and, on XLA captures, hlo [[field, value]]) and show them
// under the canvas, with links that jump to the other end of a flow.
import { esc, fmtAt, fmtDur, shortName } from "./format.js";
import { ROW_H, RULER_H } from "./style.js";

export class DetailsMethods {
  async select(ev) {
    this.selected = ev;
    this.details = null;
    this.requestDraw();
    if (!ev) { this.detailsEl.style.display = "none"; return; }
    this.renderDetails();
    try {
      const d = await this.source.details(ev.row);
      if (this.selected !== ev) return;
      this.details = d;
      this.renderDetails();
      this.requestDraw();
    } catch (err) { this.flash(`No details: ${err.message || err}`); }
  }
  jumpTo(ev) {
    // Show an event: scroll its lane into view (opening its group) and pan/zoom so that
    // it and the current selection are both visible where possible.
    const g = this.laneGroup[ev.lane];
    if (this.collapsed.has(g)) { this.collapsed.delete(g); this.layout(); this.resize(); }
    let a = ev.start, b = Math.max(ev.end, ev.start + 1e-3);
    const w = this.vx1 - this.vx0;
    if (b - a > w * 0.9) this.setView(a - (b - a) * 0.1, b + (b - a) * 0.1);
    else if (a < this.vx0 || b > this.vx1) {
      const sel = this.selected;
      if (sel && Math.max(b, sel.end) - Math.min(a, sel.start) < w * 0.9) {
        const c = (Math.max(b, sel.end) + Math.min(a, sel.start)) / 2;
        this.setView(c - w / 2, c + w / 2);
      } else this.setView((a + b) / 2 - w / 2, (a + b) / 2 + w / 2);
    }
    const y = this.laneY[ev.lane] + ev.depth * ROW_H;
    const viewH = this.H - RULER_H;
    if (y < this.scrollY || y + ROW_H > this.scrollY + viewH) this.scrollBy(y - this.scrollY - viewH / 3);
    this.select(ev);
  }
  renderDetails() {
    const ev = this.selected;
    const el = this.detailsEl;
    if (!ev) { el.style.display = "none"; return; }
    el.style.display = "block";
    const lane = this.meta.lanes[ev.lane];
    const origin = this.origin.t;
    const rows = (pairs) => `<table>${pairs.map(([k, v]) => `<tr><td>${esc(k)}</td><td>${esc(v)}</td></tr>`).join("")}</table>`;
    const link = (f, text) => `<a data-row="${f.row}" title="${esc(f.name)}" data-go='${esc(JSON.stringify(
      { row: f.row, lane: f.lane, depth: f.depth, start: f.start, end: f.end, name: f.name }))}'>${esc(shortName(text))}</a>`;
    const short = shortName(ev.name);
    let html = `<span class="x" title="Close (Esc)">✕</span><h4 title="${esc(ev.name)}">${esc(short)}</h4>` +
      (short !== ev.name ? `<div style="opacity:.75;overflow-wrap:anywhere">${esc(ev.name)}</div>` : "") +
      `<div>${esc(lane ? `${this.meta.groups[lane.group].label} · ${lane.label}` : "")} · ` +
      `start ${esc(fmtAt(ev.start - origin))} (from ${esc(this.origin.label)}) · ` +
      `duration ${esc(fmtDur(ev.end - ev.start))}</div>`;
    const d = this.details;
    if (!d) {
      html += this.source.live ? `<div class="sec">Loading details…</div>`
        : `<div class="sec">Stats and flows need the live kernel (this is an offline copy).</div>`;
      el.innerHTML = html;
      return;
    }
    let left = "", right = "";
    if (d.hlo && d.hlo.length) {
      // XLA: the event's HLO instruction (looked up on click), its HLO text on its own.
      const text = d.hlo.find(([k]) => k === "HLO text");
      left += `<div class="sec">XLA</div>${rows(d.hlo.filter(([k]) => k !== "HLO text"))}` +
        (text ? `<pre class="hlo">${esc(text[1])}</pre>` : "");
    }
    if (d.launch && d.launch.length) left += `<div class="sec">Launch arguments</div>${rows(d.launch)}`;
    if (d.flows && d.flows.length) {
      right += `<div class="sec">${d.flows.every((f) => f.kind === "derived") ? "Kernels" : "Flows"}</div><table>${d.flows.map((f) => {
        const dir = f.dir === "in" ? "from" : "to";
        const what = f.kind === "derived" ? "first kernel" : f.kind === "launch" ? (f.dir === "in" ? "launched by" : "launches")
          : (f.dir === "in" ? "consumes output of" : "produces for");
        const op = f.launched_by && f.launched_by.length ? f.launched_by[0] : null;
        const by = op ? `<br>inside op: <span title="${esc(op)}">${esc(shortName(op))}</span>` : "";
        return `<tr><td>${esc(what)}</td><td>${link(f, f.name)} <span style="opacity:.75">(${esc(dir)} ${esc(f.lane_label)}, at ${esc(fmtAt(f.start - origin))})</span>${by}</td></tr>`;
      }).join("")}</table>`;
    }
    if (d.parents && d.parents.length) {
      right += `<div class="sec">Inside</div><table>${d.parents.map((p) =>
        `<tr><td>depth ${p.depth}</td><td>${link(p, p.name)}</td></tr>`).join("")}</table>`;
    }
    left += `<div class="sec">Fields</div>${rows(d.fields)}`;
    if (d.stats && d.stats.length) left += `<div class="sec">Stats</div>${rows(d.stats)}`;
    html += `<div class="cols"><div>${left}</div><div>${right}</div></div>`;
    el.innerHTML = html;
  }

}
