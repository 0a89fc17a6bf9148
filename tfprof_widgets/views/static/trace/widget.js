// The live widget's view (anywidget render): the first marks and the overview come as synced
// traits (_meta, _marks0 with _marks0_header, _overview with _overview_header, set by
// TraceViewerWidget in views/trace/viewer.py), later windows from the kernel; the view and
// the selection sync back as window_us and selected_row.
import { KernelSource } from "./kernel_source.js";
import { unpackMarks } from "./marks.js";
import { Viewer } from "./viewer.js";

function fromHeader(header, buf) { return header && buf ? unpackMarks(header, buf) : null; }

export function render({ model, el }) {
  const meta = { ...model.get("_meta") };
  const last = model.get("window_us");  // a view drawn again (scrolled back, a new tab)
  if (last && last[1] > last[0]) meta.initial = last;  // opens where the last one was
  const first = {
    marks: fromHeader(model.get("_marks0_header"), model.get("_marks0")),
    overview: fromHeader(model.get("_overview_header"), model.get("_overview")),
  };
  if (first.marks) first.marks.searched = "";
  const viewer = new Viewer(el, new KernelSource(model), meta, first);
  // Report the view back (debounced) so Python can read viewer.window_us / selected_row.
  let timer = null;
  const sync = () => {
    clearTimeout(timer);
    timer = setTimeout(() => {
      model.set("window_us", [viewer.vx0, viewer.vx1]);
      model.set("selected_row", viewer.selected ? viewer.selected.row : -1);
      model.save_changes();
    }, 300);
  };
  const draw = viewer.drawNow.bind(viewer);
  viewer.drawNow = () => { draw(); sync(); };
  return () => viewer.destroy();
}
