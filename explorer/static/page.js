// @ts-check
// The exported page's entry (dist/page.js): a stand-in for the anywidget model over what
// the page carries, the index and each pane's gzip+base64 blob in the JSON elements
// export.py writes, and `mountPage`, which renders the explorer on it.
// Nothing is synced anywhere: the shell reads and sets the selection here as it would
// anywidget's, and Store reads `_standalone` and `_blobs` to open panes from the page.
// It bundles nothing of the explorer: the page's CSP lets no module load another, so
// explorer/export.py inlines the widget's own bundle (dist/explorer.js) and this one in
// one script and hands the first to `mountPage`, and the package holds one copy of each.

/** @import { Experimental, Model } from "./util.js" */
/** @import { Index } from "./panes/typedefs.js" */
/**
 * @typedef {{render(ctx: {model: Model, el: HTMLElement, experimental?: Experimental}): any}} Widget
 *   an anywidget module's default export: the explorer's (shell.js)
 */

// the ids of the elements explorer/export.py writes (INDEX_ELEMENT_ID, PANES_ELEMENT_ID,
// MOUNT_ELEMENT_ID there)
const INDEX_ELEMENT_ID = "tce-index";
const PANES_ELEMENT_ID = "tce-panes";
const MOUNT_ELEMENT_ID = "tce-app";

/** @param {string} id @returns {HTMLElement} */
function element(id) {
  const el = document.getElementById(id);
  if (!el) throw new Error(`this page has no element #${id}`);
  return el;
}

/** @param {string} id @returns {any} the JSON data of a `<script type="application/json">` */
function readJson(id) {
  return JSON.parse(element(id).textContent || "null");
}

/**
 * A model that keeps `state` in memory and tells its listeners of each `set`, as
 * anywidget's tells the views of a change.
 * @param {Object<string, any>} state @returns {Model}
 */
function pageModel(state) {
  /** @type {Map<string, Function[]>} */
  const listeners = new Map();
  return {
    get: (key) => state[key],
    set: (key, value) => {
      state[key] = value;
      for (const cb of (listeners.get("change:" + key) || []).slice()) cb();
    },
    on: (event, cb) => {
      const list = listeners.get(event);
      if (list) list.push(cb);
      else listeners.set(event, [cb]);
    },
    off: (event, cb) => {
      const list = listeners.get(event) || [];
      const i = list.indexOf(cb);
      if (i >= 0) list.splice(i, 1);
    },
    save_changes: () => {},
    send: () => {},
  };
}

/**
 * Render `explorer` on the page's data, from the default selection the index names.
 * @param {Widget} explorer
 */
function mountPage(explorer) {
  /** @type {Index} */
  const index = readJson(INDEX_ELEMENT_ID);
  const model = pageModel({
    index, selection: index.default_selection, _standalone: true, _blobs: readJson(PANES_ELEMENT_ID),
  });
  const mount = element(MOUNT_ELEMENT_ID);
  mount.replaceChildren(); // a page saved by its own Export button holds the view drawn then
  explorer.render({ model, el: mount });
}

export { mountPage, pageModel };
