// @ts-check
// The memory pane: per compile the tensors saved for backward (compiler.memory), each node
// a link to its graph node and each line a link to the user's source; the peaks measured on
// CUDA, eager against compiled; the advisor's memory findings. Python sends every figure.

/** @import { Ctx, PaneHandle } from "../util.js" */
/** @import { MemoryPane, CompileSaved, SavedRow } from "./typedefs.js" */
import { h } from "../util.js";
import { renderFindings } from "./frame.js";

const PEAK_COLUMNS = ["run", "forward peak", "backward peak", "held for backward", "CUDA graph pool"];

/** @param {CompileSaved} c @param {SavedRow} r @param {Ctx} ctx @returns {HTMLElement} */
function savedRow(c, r, ctx) {
  const stage = r.stage;
  const node = stage
    ? h("button", {
      cls: "tce-link tce-mem-node", text: r.node,
      on: { click: () => ctx.select({ compile: c.compile, stage, node: r.node, src: r.src, kernel: null }) },
    })
    : h("span", { text: r.node });
  const src = r.src;
  const place = src
    ? h("button", { cls: "tce-link", text: ctx.srcLabel(src), on: { click: () => ctx.select({ src, node: null, kernel: null }) } })
    : h("span", { text: "" });
  return h("tr", { cls: `tce-mem-row tce-mem-${r.kind}`, attrs: { "data-node": r.node } }, [
    h("td", {}, [node]),
    h("td", { text: r.kind }),
    h("td", { text: r.shape }),
    h("td", { text: r.dtype }),
    h("td", { cls: "tce-num", text: r.size }),
    h("td", {}, [place]),
    h("td", { text: r.module }),
  ]);
}

/** @param {HTMLElement} el @param {any} pane @param {Ctx} ctx @returns {PaneHandle} */
function renderMemory(el, pane, ctx) {
  const p = /** @type {MemoryPane} */ (pane);
  el.append(h("div", { cls: "tce-note tce-mem-summary", text: p.summary }));
  if (p.peaks.length) {
    el.append(h("div", { cls: "tce-block" }, [
      h("div", { cls: "tce-block-title", text: "Peak memory of one call after a warm one, above what was allocated before it" }),
      h("table", { cls: "tce-table tce-mem-peaks" }, [
        h("thead", {}, [h("tr", {}, PEAK_COLUMNS.map((t) => h("th", { text: t })))]),
        h("tbody", {}, p.peaks.map((r) => h("tr", { cls: r.above_eager ? "tce-mem-above" : "", attrs: { "data-run": r.label } }, [
          h("td", { text: r.label }), ...r.cells.map((t) => h("td", { cls: "tce-num", text: t })),
        ]))),
      ]),
    ]));
  }
  for (const c of p.compiles) {
    const head = ["node", "kind", "shape", "dtype", "size", "source line", "module"].map((t) => h("th", { text: t }));
    el.append(h("div", { cls: "tce-block tce-mem-compile", attrs: { "data-compile": c.compile } }, [
      h("div", { cls: "tce-block-title" }, [
        h("button", {
          cls: "tce-link", text: `compile ${c.compile_id}`,
          on: { click: () => ctx.select({ compile: c.compile, node: null, kernel: null }) },
        }),
        ` ${c.title}`,
      ]),
      h("table", { cls: "tce-table tce-mem-saved" }, [
        h("thead", {}, [h("tr", {}, head)]),
        h("tbody", {}, c.rows.map((r) => savedRow(c, r, ctx))),
      ]),
    ]));
  }
  if (p.advice.length) {
    const box = h("div", { cls: "tce-block tce-mem-advice" }, [h("div", { cls: "tce-block-title", text: "Advice" })]);
    renderFindings(box, { items: p.advice }, ctx);
    el.append(box);
  }
  return { update: () => {} };
}

export { renderMemory };
