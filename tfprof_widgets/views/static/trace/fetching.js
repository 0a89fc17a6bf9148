// Viewer methods that keep marks coming: whether the view needs a new window (it left the
// fetched one, or zoomed in past its detail), one request in flight at a time, and the
// status line. The windows come from a source (kernel_source.js or static_source.js): marks
// of views/trace/model.py TraceModel.window(x0, x1, cols), with names {code: name} that
// the view has not had yet.
import { esc, fmtDur, fmtNum } from "./format.js";

export class FetchMethods {
  // At most one request in flight; a view change meanwhile asks again when it answers. The
  // canvas keeps drawing what it has at the new scale.
  needsFetch() {
    const m = this.marks;
    const pxUs = (this.vx1 - this.vx0) / this.trackW;
    const lo = Math.max(this.vx0, this.meta.t_min), hi = Math.min(this.vx1, this.meta.t_max);
    const covered = m.x0 <= lo + 1e-9 && m.x1 >= hi - 1e-9;
    if (!covered) return true;
    if (this.search.regex && m.searched !== this.search.regex) return true;
    if (m.complete) return false;
    // the resolution the window was asked for (the kernel may have used fewer columns to
    // keep within its budget; asking again would not change that)
    const colw = m.reqCols ? (m.x1 - m.x0) / m.reqCols : 0;
    return colw > pxUs * 1.6 || colw < pxUs / 6;
  }
  maybeFetch() {
    if (!this.needsFetch()) return;
    if (this.fetching) { this.wanted = true; return; }
    this.fetch();
  }
  async fetch() {
    this.fetching = true;
    this.wanted = false;
    const w = this.vx1 - this.vx0;
    const x0 = this.vx0 - w * 0.5, x1 = this.vx1 + w * 0.5;
    const cols = Math.round(this.trackW * 2);
    const regex = this.search.regex;
    const t0 = performance.now();
    this.stats.requests++;
    this.showBusy(true);
    try {
      const { marks, names } = await this.source.window(x0, x1, cols, regex);
      this.stats.roundTrips.push(performance.now() - t0);
      if (this.stats.roundTrips.length > 500) this.stats.roundTrips.shift();
      this.addNames(names);
      marks.searched = regex;
      this.setMarks(marks);
    } catch (err) {
      this.flash(`Could not load this window: ${err.message || err}`);
    } finally {
      this.fetching = false;
      this.showBusy(false);
    }
    if (this.wanted || this.needsFetch()) {
      if (this.needsFetch()) this.fetch();
    }
  }
  setMarks(m) {
    this.marks = m;
    this.tipStale = true;
    if (!this.overview) this.overview = m;
    this.requestDraw();
    this.updateStatus();
    if (!this.source.live) {
      this.note.style.display = m.short ? "block" : "none";
      const exact = this.source.tiles.find((t) => t.exact);
      // "{window}" in the note (a report's) is the window shown, as the (start_us, end_us)
      // that views/trace/viewer.py write_html(..., window_us=) takes.
      const win = `(${Math.max(this.meta.t_min, this.vx0).toFixed(1)}, ${Math.min(this.meta.t_max, this.vx1).toFixed(1)})`;
      const note = (this.meta.offline_note || "Offline copy: detail ends here.").replace("{window}", win);
      this.note.innerHTML = m.short ? esc(note) +
        (exact ? ' <a data-act="exact" style="cursor:pointer;text-decoration:underline">Show it</a>' : "") : "";
    }
  }
  showBusy(on) { this.root.dataset.busy = on ? "1" : "0"; this.updateStatus(); }
  updateStatus() {
    const m = this.marks;
    const busy = this.fetching ? " · loading…" : "";
    this.status.textContent = `${fmtNum(m.n, 0)} marks for ${fmtNum(m.nEvents, 0)} events ` +
      `in ${fmtDur(m.x1 - m.x0)}${busy}${this.source.live ? "" : " · offline"}`;
  }
  flash(text) {
    this.note.textContent = text;
    this.note.style.display = "block";
    clearTimeout(this.flashTimer);
    this.flashTimer = setTimeout(() => { this.note.style.display = "none"; }, 4000);
  }

}
