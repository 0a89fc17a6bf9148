// The trace viewer's entry (views/_bundle.py joins the modules from here): the anywidget
// module's default export {render} (trace_esm(), the live widget's _esm), renderOffline for
// reports and pages (trace_esm() in a <script type="module">) and mountOutput for a
// notebook's JavaScript output (trace_script(), a classic script).

import { render } from "./widget.js";
import { renderOffline } from "./offline.js";
import { mountOutput } from "./notebook_output.js";

export default { render };
export { renderOffline, mountOutput };
