// The live data source: asks the kernel (TraceViewerWidget._answer in
// views/trace/viewer.py) over the anywidget's custom messages for a window's marks
// ({type: "window", x0, x1, cols, search} -> {type: "marks", marks: header, names} + one
// binary buffer), an event's details, a search count and the next match. Each request carries
// this view's id and a sequence number; stale answers are dropped.
import { unpackMarks } from "./marks.js";

// The live source talks to the kernel; each request carries this view's id (several views
// of one widget share the kernel side) and a sequence number (stale answers are dropped).
export class KernelSource {
  constructor(model) {
    this.model = model;
    this.vid = Math.random().toString(36).slice(2);
    this.pending = new Map();
    this.seq = 0;
    this.live = true;
    this.onMsg = (msg, buffers) => {
      if (!msg || msg.vid !== this.vid) return;
      const p = this.pending.get(msg.seq);
      if (!p) return;
      this.pending.delete(msg.seq);
      if (msg.type === "error") p.reject(new Error(msg.message));
      else p.resolve([msg, buffers || []]);
    };
    model.on("msg:custom", this.onMsg);
  }
  close() { this.model.off("msg:custom", this.onMsg); }
  ask(content) {
    const seq = ++this.seq;
    return new Promise((resolve, reject) => {
      this.pending.set(seq, { resolve, reject });
      this.model.send({ ...content, vid: this.vid, seq });
    });
  }
  async window(x0, x1, cols, regex) {
    const [msg, buffers] = await this.ask({ type: "window", x0, x1, cols, search: regex || null });
    return { marks: unpackMarks(msg.marks, buffers[0]), names: msg.names || {} };
  }
  async details(row) { return (await this.ask({ type: "details", row }))[0].details; }
  async search(regex) { return (await this.ask({ type: "search", search: regex }))[0]; }
  async next(regex, t, row, direction) {
    return (await this.ask({ type: "next", search: regex, t, row, direction }))[0].event;
  }
}
