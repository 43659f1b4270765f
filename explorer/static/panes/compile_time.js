// @ts-check
// The compile-time pane: where the run's cold compile time went. Python sends a bar per
// compile (compiler.compile_time's buckets, in pipeline order, each with its legend slot),
// biggest first; this draws them and turns a click on a bar into the selection Python named.

/** @import { Ctx, PaneHandle } from "../util.js" */
/** @import { CompileTimePane, CompileTimeBar, PhaseSeconds, Selection } from "./typedefs.js" */
import { h } from "../util.js";

/** A bar's segment, as wide as its share of the longest compile (through the CSSOM: the
 * offline page's CSP forbids style attributes).
 * @param {PhaseSeconds} p @param {number} longest @returns {HTMLElement} */
function segment(p, longest) {
  const seg = h("span", {
    cls: `tce-ct-seg tce-ct-slot${p.slot}`,
    title: `${p.name}: ${p.seconds.toFixed(2)} s`,
    attrs: { "data-phase": p.name },
  });
  seg.style.width = `${longest > 0 ? (100 * p.seconds) / longest : 0}%`;
  return seg;
}

/** @param {CompileTimeBar} b @param {number} longest @param {Ctx} ctx @returns {HTMLElement} */
function barRow(b, longest, ctx) {
  const pick = () => ctx.select({ compile: b.compile, stage: b.stage || ctx.selection.stage, node: null, kernel: null });
  const bar = h("button", {
    cls: "tce-ct-bar", title: b.phases.map((p) => `${p.name} ${p.seconds.toFixed(2)} s`).join(" · "),
    attrs: { "aria-label": `select compile ${b.compile_id}` }, on: { click: pick },
  }, b.phases.map((p) => segment(p, longest)));
  const src = b.src;
  const frame = src
    ? h("button", { cls: "tce-link", text: ctx.srcLabel(src), on: { click: () => ctx.select({ src, node: null, kernel: null }) } })
    : h("span", { text: "" });
  const graph = b.graph;
  const graphLink = graph
    ? h("button", { cls: "tce-link", text: "graph", on: { click: () => ctx.select({ compile: b.compile, stage: graph, node: null, kernel: null }) } })
    : h("span", { cls: "tce-note", text: "no graph" });
  return h("tr", { cls: `tce-ct-row${b.recompile ? " tce-ct-recompile" : ""}`, attrs: { "data-compile": b.compile } }, [
    h("td", {}, [h("button", { cls: "tce-link", text: b.compile_id, on: { click: pick } })]),
    h("td", {}, [h("div", { text: b.name }), frame, " · ", graphLink]),
    h("td", { cls: "tce-num", text: `${b.seconds.toFixed(2)} s` }),
    h("td", { cls: "tce-ct-barcell" }, [
      bar,
      ...(b.recompile ? [h("div", { cls: "tce-ct-note tce-ct-recompile-note", text: b.recompile })] : []),
    ]),
  ]);
}

/** @param {HTMLElement} el @param {any} pane @param {Ctx} ctx @returns {PaneHandle} */
function renderCompileTime(el, pane, ctx) {
  const p = /** @type {CompileTimePane} */ (pane);
  el.append(h("div", { cls: "tce-note tce-ct-summary", text: p.summary }));
  if (!p.bars.length) return { update: () => {} };
  const shown = new Set(p.bars.flatMap((b) => b.phases.map((x) => x.slot)));
  el.append(h("div", { cls: "tce-ct-legend" }, p.legend.flatMap((name, slot) => shown.has(slot)
    ? [h("span", { cls: "tce-ct-key" }, [h("span", { cls: `tce-ct-swatch tce-ct-slot${slot}` }), name])]
    : [])));
  const head = h("tr", {}, ["compile", "frame and graph", "seconds", "phases (click a bar to open its compile)"].map((t) => h("th", { text: t })));
  el.append(h("table", { cls: "tce-table tce-ct" }, [
    h("thead", {}, [head]),
    h("tbody", {}, p.bars.map((b) => barRow(b, p.longest, ctx))),
  ]));
  el.append(h("table", { cls: "tce-table tce-ct-totals" }, [
    h("thead", {}, [h("tr", {}, [h("th", { text: "phase, over the run" }), h("th", { text: "seconds" })])]),
    h("tbody", {}, p.totals.map((t) => h("tr", {}, [
      h("td", {}, [h("span", { cls: `tce-ct-swatch tce-ct-slot${t.slot}` }), t.name]),
      h("td", { cls: "tce-num", text: t.seconds.toFixed(2) }),
    ]))),
  ]));
  el.append(h("div", { cls: "tce-ct-line tce-ct-recompiles", text: p.recompiles }));
  el.append(h("div", { cls: "tce-ct-line tce-ct-warm", text: p.warm }));
  /** @param {Selection} sel */
  const update = (sel) => {
    for (const tr of el.querySelectorAll("tr[data-compile]")) {
      tr.classList.toggle("tce-current", tr.getAttribute("data-compile") === sel.compile);
    }
  };
  update(ctx.selection);
  return { update };
}

export { renderCompileTime };
