// The entry of every view but the trace viewer (views/_bundle.py views_script() joins these
// modules into the classic script that views/_display.py viewer_lib() puts into a notebook
// once and a report at its top): defines window.__tfprof = {version, mount, mountAll,
// mountCount, hideOutput, warmUp, Plotly, theme, Table} once per page, then mounts the views whose outputs
// ran before it (window.__tfprofPending, filled by views/_display.py viewer_js()).
import { Plotly } from "./plotly_ref.js";
import { theme } from "./theme.js";
import { Table } from "./table.js";
import { hideOutput, mount, mountAll, mountCount, warmUp } from "./outputs.js";

const VERSION = 1;

export function install() {
  if (window.__tfprof && window.__tfprof.version >= VERSION) return;
  window.__tfprof = {version: VERSION, mount, mountAll, mountCount, hideOutput, warmUp, Plotly,
                    theme, Table};
  const pending = window.__tfprofPending || [];
  window.__tfprofPending = [];
  for (const fn of pending) { try { fn(); } catch (e) { console.error(e); } }
}
install();
