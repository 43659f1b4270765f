// @ts-check
// The numerics pane (compiler.numerics): every post-grad node in graph order as a cell
// coloured by its error over tolerance, the first divergence linked to its node, kernel and
// source line, the error's growth along the graphs, the worst nodes and why others were not
// compared. Python sends every figure and word.

/** @import { Ctx, PaneHandle } from "../util.js" */
/** @import { NumericsPane, NumericsRow, FinalRow } from "./typedefs.js" */
import { h, showKernel } from "../util.js";
import { renderFindings } from "./frame.js";

const SVG = "http://www.w3.org/2000/svg";
const WIDTH = 640;
const HEIGHT = 120;
const DECADES = 6; // log10(error / tolerance) drawn from -6 to +6

/** @param {NumericsRow} r @param {Ctx} ctx */
function selectNode(r, ctx) {
  if (r.stage) ctx.select({ compile: r.compile, stage: r.stage, node: r.node, src: r.src, kernel: null });
  else if (r.src) ctx.select({ src: r.src, node: null, kernel: null });
}

/** Links to a row's node, kernel and line. @param {NumericsRow} r @param {Ctx} ctx @returns {HTMLElement[]} */
function links(r, ctx) {
  const out = [h("button", { cls: "tce-link tce-num-node", text: `${r.node} (${r.graph})`, on: { click: () => selectNode(r, ctx) } })];
  const kid = r.kernel;
  if (kid) out.push(h("button", { cls: "tce-link tce-num-kernel", text: r.kernel_name, on: { click: () => showKernel(ctx, kid) } }));
  else out.push(h("span", { text: r.kernel_name }));
  const src = r.src;
  if (src) out.push(h("button", { cls: "tce-link", text: ctx.srcLabel(src), on: { click: () => ctx.select({ src, node: null, kernel: null }) } }));
  else out.push(h("span", { text: "" }));
  return out;
}

/** Graph order as a strip of cells, one per node. @param {NumericsPane} p @param {Ctx} ctx */
function strip(p, ctx) {
  return h("div", { cls: "tce-num-strip" }, p.nodes.map((r) => h("button", {
    cls: `tce-num-cell tce-num-${r.level}${p.first && p.first.order === r.order ? " tce-num-first" : ""}`,
    title: `${r.node} (${r.target}, ${r.graph}): ${r.figures || r.reason}`,
    attrs: { "data-node": r.node, "data-level": r.level },
    on: { click: () => selectNode(r, ctx) },
  })));
}

/** log10(error / tolerance) of the compared nodes along graph order. @param {NumericsPane} p */
function growth(p) {
  const rows = p.nodes.filter((r) => r.ratio !== null);
  const svg = document.createElementNS(SVG, "svg");
  svg.setAttribute("class", "tce-num-growth");
  svg.setAttribute("viewBox", `0 0 ${WIDTH} ${HEIGHT}`);
  const y = (/** @type {number} */ ratio) => {
    const v = Math.max(-DECADES, Math.min(DECADES, Math.log10(Math.max(ratio, 1e-30))));
    return HEIGHT / 2 - (v / DECADES) * (HEIGHT / 2 - 4);
  };
  const limit = document.createElementNS(SVG, "line");
  for (const [k, v] of [["x1", "0"], ["x2", `${WIDTH}`], ["y1", `${y(1)}`], ["y2", `${y(1)}`], ["class", "tce-num-limit"]]) limit.setAttribute(k, v);
  svg.append(limit);
  const step = rows.length > 1 ? WIDTH / (rows.length - 1) : 0;
  const line = document.createElementNS(SVG, "polyline");
  line.setAttribute("class", "tce-num-line");
  line.setAttribute("points", rows.map((r, i) => `${(i * step).toFixed(1)},${y(/** @type {number} */ (r.ratio)).toFixed(1)}`).join(" "));
  svg.append(line);
  return h("div", { cls: "tce-block" }, [
    h("div", { cls: "tce-block-title", text: "Error over tolerance along graph order (log scale, the line at 1 is the tolerance)" }),
    /** @type {any} */ (svg),
  ]);
}

/** The whole target's outputs and gradients against an eager rerun. @param {NumericsPane} p */
function endToEnd(p) {
  const head = ["value", "dtype", "error / tolerance", "figures"].map((t) => h("th", { text: t }));
  return h("div", { cls: "tce-block tce-num-end" }, [
    h("div", { cls: "tce-block-title", text: "End to end: the whole target, compiled against an eager rerun" }),
    h("div", { cls: "tce-note", text: p.end_to_end_summary }),
    h("table", { cls: "tce-table tce-num-final" }, [
      h("thead", {}, [h("tr", {}, head)]),
      h("tbody", {}, p.end_to_end.map((/** @type {FinalRow} */ r) => h("tr", { cls: `tce-num-${r.level}`, attrs: { "data-final": r.name } }, [
        h("td", { text: `${r.kind} ${r.name}` }),
        h("td", { text: r.dtype }),
        h("td", { cls: "tce-num", text: r.ratio === null ? "" : r.ratio.toPrecision(3) }),
        h("td", { text: r.figures || r.reason }),
      ]))),
    ]),
  ]);
}

/** @param {HTMLElement} el @param {any} pane @param {Ctx} ctx @returns {PaneHandle} */
function renderNumerics(el, pane, ctx) {
  const p = /** @type {NumericsPane} */ (pane);
  el.append(h("div", { cls: "tce-note tce-num-summary", text: p.summary }));
  const first = p.first;
  if (first) {
    el.append(h("div", { cls: "tce-block tce-num-first-block" }, [
      h("div", { cls: "tce-block-title", text: "First divergence" }),
      h("div", {}, links(first, ctx).flatMap((e) => [e, " "])),
      h("div", { cls: "tce-note", text: first.figures }),
    ]));
  }
  if (p.end_to_end.length) el.append(endToEnd(p));
  if (p.nodes.length) {
    el.append(h("div", { cls: "tce-block" }, [h("div", { cls: "tce-block-title", text: "Post-grad nodes in graph order" }), strip(p, ctx)]));
    el.append(growth(p));
  }
  if (p.worst.length) {
    const head = ["node", "kernel", "line", "dtype", "error / tolerance", "figures"].map((t) => h("th", { text: t }));
    el.append(h("div", { cls: "tce-block" }, [
      h("div", { cls: "tce-block-title", text: "Worst nodes" }),
      h("table", { cls: "tce-table tce-num-worst" }, [
        h("thead", {}, [h("tr", {}, head)]),
        h("tbody", {}, p.worst.map((r) => h("tr", { cls: `tce-num-${r.level}`, attrs: { "data-node": r.node } }, [
          ...links(r, ctx).map((e) => h("td", {}, [e])),
          h("td", { text: r.dtype }),
          h("td", { cls: "tce-num", text: r.ratio === null ? "" : r.ratio.toPrecision(3) }),
          h("td", { text: r.figures }),
        ]))),
      ]),
    ]));
  }
  if (p.not_compared.length) {
    el.append(h("div", { cls: "tce-block" }, [
      h("div", { cls: "tce-block-title", text: "Not compared" }),
      h("ul", {}, p.not_compared.map(([reason, count]) => h("li", { text: `${reason} (${count})` }))),
    ]));
  }
  if (p.notes.length) el.append(h("ul", { cls: "tce-note" }, p.notes.map((n) => h("li", { text: n }))));
  if (p.advice.length) {
    const box = h("div", { cls: "tce-block" }, [h("div", { cls: "tce-block-title", text: "Advice" })]);
    renderFindings(box, { items: p.advice }, ctx);
    el.append(box);
  }
  return { update: () => {} };
}

export { renderNumerics };
