// The offline viewer: renderOffline(el, payload) draws the payload that
// views/trace/viewer.py TraceViewer.offline_payload() embeds (an exported notebook, a report,
// write_html), zoomable down to where the embedded detail ends.
import { StaticSource } from "./static_source.js";
import { Viewer } from "./viewer.js";

export function renderOffline(el, payload) {
  const source = new StaticSource(payload);
  const viewer = new Viewer(el, source, payload.meta, { marks: null, overview: null });
  source.ready.then(() => {
    source.window(payload.meta.t_min, payload.meta.t_max, 2048).then(({ marks }) => {
      viewer.overview = marks;
      viewer.fetch();
    });
  }).catch((err) => viewer.flash(`Could not read the embedded trace: ${err}`));
  return viewer;
}
