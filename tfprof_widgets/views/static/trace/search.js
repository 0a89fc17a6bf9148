// Viewer methods for search: a regular expression over event names; the count over every
// event of the run (the kernel's Python re, as run.events["name"].str.contains; offline,
// JavaScript's over the embedded names with payload.name_counts), matches highlighted in the
// marks (their "hits" column) and Enter / shift+Enter for the next / previous match.
import { fmtNum } from "./format.js";

export class SearchMethods {
  async runSearch(regex) {
    this.search = { regex: "", count: null, error: null };
    this.input.classList.remove("bad");
    if (!regex) { this.countEl.textContent = ""; this.requestDraw(); this.maybeFetch(); return; }
    if (!this.source.live) {  // offline, JavaScript's regex engine does the matching
      try { new RegExp(regex); } catch {
        this.input.classList.add("bad"); this.countEl.textContent = "bad regex"; return;
      }
    }  // live, Python's re decides (as pandas' str.contains does)
    this.countEl.textContent = "…";
    try {
      const res = await this.source.search(regex);
      if (this.input.value !== regex && this.input.value !== "") return;
      if (res.error) { this.input.classList.add("bad"); this.countEl.textContent = "bad regex"; return; }
      this.search = { regex, count: res.count, error: null };
      this.nameMatch = new Map();
      this.countEl.textContent = `${fmtNum(res.count, 0)} match${res.count === 1 ? "" : "es"}` +
        (res.offline ? " (offline)" : "");
      this.countEl.dataset.count = String(res.count);
      this.maybeFetch();
      this.requestDraw();
    } catch (err) { this.countEl.textContent = "error"; this.countEl.title = String(err); }
  }
  matches(nameId) {
    let ok = this.nameMatch.get(nameId);
    if (ok === undefined) {
      try { ok = new RegExp(this.search.regex).test(this.nameOf(nameId)); } catch { ok = false; }
      this.nameMatch.set(nameId, ok);
    }
    return ok;
  }
  async nextMatch(direction) {
    if (!this.search.regex) return;
    const cur = this.selected;
    const t = cur ? cur.start : this.vx0;
    const row = cur ? cur.row : -1;
    const ev = await this.source.next(this.search.regex, t, row, direction);
    if (ev) this.jumpTo(ev);
  }

}
