// @ts-check
/**
 * The torch.compile explorer front-end, helpers and the types the modules share. The
 * explorer is ES modules bundled by esbuild (js/build.mjs) into explorer/static/dist/.
 *
 * Safety: every piece of data goes into the DOM through `textContent` or `setAttribute`
 * on attributes we name; nothing is ever parsed as markup.
 */

/** @import { KernelRef, KernelTiming, Selection } from "./panes/typedefs.js" */

/**
 * @typedef {{get(name: string): any, set(name: string, value: any): void,
 *            on(event: string, cb: Function): void, off(event: string, cb: Function): void,
 *            save_changes(): void, send(msg: any): void}} Model
 * @typedef {{invoke(name: string, msg?: any, options?: {buffers?: DataView[],
 *            signal?: AbortSignal}): Promise<[any, DataView[]]>}} Experimental  anywidget's
 *            command API: `invoke` calls a widget method marked `@anywidget.experimental.command`
 * @typedef {{selection: Selection, select: (change: Partial<Selection>) => void,
 *            srcClass: (key: string|null|undefined) => string,
 *            state: Map<string, any>, labels: Object<string, string>,
 *            kernel: (id: string) => KernelRef|null, srcLabel: (key: string) => string,
 *            ask?: (name: string, msg: any, signal?: AbortSignal) => Promise<any>}} Ctx
 *            `ask` calls Python (an anywidget command) where there is a kernel to answer:
 *            absent in an exported page
 * @typedef {{update(selection: Selection): void, reveal?: (i: number) => void,
 *            revealKernel?: (id: string) => void, destroy?: () => void}} PaneHandle
 */

/**
 * @callback Renderer
 * @param {HTMLElement} el
 * @param {any} pane
 * @param {Ctx} ctx
 * @returns {PaneHandle}
 */

const PALETTE = 8;
const LINE_H = 18; // px; must match .tce-row in explorer.css
const VIRTUAL_MIN_LINES = 1500; // longer code panes render only the rows in view
const SEL_KEYS = /** @type {(keyof Selection)[]} */ (["compile", "stage", "src", "node", "kernel"]);
const MARKER_TEXT = { graph_break: "graph break", recompile: "recompile", failed: "failed" };

/**
 * Build an HTML element. Text always goes through textContent.
 * @param {string} tag
 * @param {{cls?: string, text?: string, title?: string, attrs?: Object<string,string>,
 *          on?: Object<string, EventListener>}} [opts]
 * @param {(Node|string|null|undefined|false)[]} [children]
 * @returns {HTMLElement}
 */
function h(tag, opts = {}, children = []) {
  const el = document.createElement(tag);
  if (opts.cls) el.className = opts.cls;
  if (opts.text !== undefined) el.textContent = opts.text;
  if (opts.title) el.title = opts.title;
  for (const [k, v] of Object.entries(opts.attrs || {})) el.setAttribute(k, v);
  for (const [k, v] of Object.entries(opts.on || {})) el.addEventListener(k, v);
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue;
    el.append(typeof c === "string" ? document.createTextNode(c) : c);
  }
  return el;
}

/** @param {Blob} blob @param {string} name */
function download(blob, name) {
  const a = /** @type {HTMLAnchorElement} */ (h("a"));
  a.href = URL.createObjectURL(blob);
  a.download = name;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(a.href), 10000);
}

/**
 * Ask Python through an anywidget command (a method marked
 * `@anywidget.experimental.command` on the widget), which answers `{data}` or `{error}`;
 * an error rejects. `signal` ends the wait (anywidget's own default gives up after 3 s,
 * less than building a large pane or the HTML export can take).
 *
 * Example: `const pane = await invoke(experimental, "_pane", {compile, pane}, signal);`
 * @param {Experimental|undefined} experimental @param {string} name @param {any} msg
 * @param {AbortSignal} signal
 * @returns {Promise<any>}
 */
async function invoke(experimental, name, msg, signal) {
  return (await invokeReply(experimental, name, msg, signal)).data;
}

/**
 * As `invoke`, the whole reply (`data` and what else the command answers).
 * @param {Experimental|undefined} experimental @param {string} name @param {any} msg
 * @param {AbortSignal} [signal] @returns {Promise<any>}
 */
async function invokeReply(experimental, name, msg, signal) {
  if (!experimental) {
    throw new Error(`cannot ask Python for ${name}: this front-end has no anywidget command API (anywidget >= 0.9.8 has it)`);
  }
  const [reply] = await experimental.invoke(name, msg, { signal });
  if (reply && typeof reply.error === "string") throw new Error(reply.error);
  return reply;
}

/**
 * Scroll `box` (only it, never the notebook around it) so that `el` is in view.
 * @param {HTMLElement} box @param {Element} el @param {boolean} [center]
 */
function scrollWithin(box, el, center = false) {
  const b = box.getBoundingClientRect();
  const r = el.getBoundingClientRect();
  if (!center && r.top >= b.top && r.bottom <= b.bottom) return;
  box.scrollTop += r.top - b.top - (center ? (b.height - r.height) / 2 : 8);
  if (center) box.scrollLeft += r.left - b.left - (b.width - r.width) / 2;
}

/**
 * Select a kernel and open the output code that holds it (the index says which pane).
 * @param {Ctx} ctx @param {string} kid
 */
function showKernel(ctx, kid) {
  const ref = ctx.kernel(kid);
  ctx.select(ref && ref.pane ? { kernel: kid, src: null, node: null, stage: ref.pane } : { kernel: kid, src: null, node: null });
}

/** A kernel's name, as the index records it. @param {Ctx} ctx @param {string} kid */
function kernelName(ctx, kid) {
  const ref = ctx.kernel(kid);
  return ref ? ref.name : kid;
}

/**
 * @param {number|null|undefined} x @param {number} [digits]
 * @returns {string}
 */
function fmt(x, digits = 1) {
  if (x === null || x === undefined) return "–";
  return x.toLocaleString("en-US", { minimumFractionDigits: digits, maximumFractionDigits: digits });
}

/** @param {KernelTiming|null} t @returns {string[][]} */
function timingRows(t) {
  if (!t) return [];
  const pct = t.achieved_gbps !== null && t.peak_gbps ? ` (${fmt((100 * t.achieved_gbps) / t.peak_gbps)}% of copy peak)` : "";
  const rows = [["median time", `${fmt(t.median_us)} µs (min ${fmt(t.min_us)}, ${t.calls} calls)`],
    ["bandwidth", t.bytes === null ? "shape not static" : `${fmt(t.bytes / 1e6)} MB at ${fmt(t.achieved_gbps, 0)} GB/s${pct}`]];
  if (typeof t.flops === "number") {
    rows.push(["matmul", `${fmt(t.flops / 1e9, 2)} GFLOP at ${fmt(t.achieved_tflops, 2)} TFLOP/s`]);
  }
  return rows;
}

/**
 * A Triton launch grid as Python writes the tuple: `(8192,)`; "" when unknown.
 * @param {number[]|undefined} grid
 */
function gridText(grid) {
  if (!grid || !grid.length) return "";
  return `(${grid.join(", ")}${grid.length === 1 ? "," : ""})`;
}

/** @param {string[][]} rows */
function detailTable(rows) {
  const t = h("table", { cls: "tce-table" });
  for (const [k, v] of rows) t.append(h("tr", {}, [h("th", { text: k }), h("td", { text: v })]));
  return t;
}

/** " hl hl-N" when `key` is a selected source line (N its colour), else "". @param {Ctx} ctx @param {string|null|undefined} key */
function hlClass(ctx, key) {
  const c = ctx.srcClass(key);
  return c ? ` hl ${c}` : "";
}

export {
  PALETTE,
  LINE_H,
  VIRTUAL_MIN_LINES,
  SEL_KEYS,
  MARKER_TEXT,
  h,
  download,
  invoke,
  invokeReply,
  scrollWithin,
  showKernel,
  kernelName,
  fmt,
  timingRows,
  gridText,
  detailTable,
  hlClass,
};
