// @ts-check
// The ranks pane: every rank of a multi-rank run side by side. Python sends the rows, the
// cells and the places where ranks differ (compiler.divergence); this only draws them and
// turns a click into a selection of the compile and pane Python named.

/** @import { Ctx, PaneHandle } from "../util.js" */
/** @import { RanksPane, RankCell, Selection } from "./typedefs.js" */
import { h } from "../util.js";

/** A compile-time bar, scaled to the longest compile of any cell (Python sends it).
 * @param {number} seconds @param {number} longest @param {string} cache @returns {HTMLElement} */
function timeBar(seconds, longest, cache) {
  const bar = h("span", { cls: `tce-rank-bar${cache ? ` tce-cache-${cache}` : ""}` });
  // through the CSSOM, not a style attribute: the offline page's CSP forbids those
  bar.style.width = `${longest > 0 ? Math.max(1, (100 * seconds) / longest) : 0}%`;
  return h("span", { cls: "tce-rank-time", attrs: { "data-seconds": String(seconds) } }, [
    bar,
    h("span", { cls: "tce-rank-seconds", text: `${seconds.toFixed(2)} s${cache ? ` · ${cache}` : ""}` }),
  ]);
}

/** @param {RankCell} cell @param {number} longest @param {Ctx} ctx @returns {HTMLElement} */
function cellOf(cell, longest, ctx) {
  const cls = `tce-rank-cell${cell.diverges ? " tce-diverges" : ""}${cell.compile ? "" : " tce-absent"}`;
  if (!cell.compile) return h("td", { cls, text: cell.text });
  const compile = cell.compile;
  return h("td", { cls, attrs: { "data-compile": compile } }, [
    h("button", {
      cls: "tce-link", text: cell.text,
      on: { click: () => ctx.select({ compile, stage: cell.stage || ctx.selection.stage, node: null, kernel: null }) },
    }),
    ...(cell.seconds === null ? [] : [timeBar(cell.seconds, longest, cell.cache)]),
  ]);
}

/** @param {HTMLElement} el @param {any} pane @param {Ctx} ctx @returns {PaneHandle} */
function renderRanks(el, pane, ctx) {
  const p = /** @type {RanksPane} */ (pane);
  el.append(h("div", { cls: `tce-note tce-ranks-summary${p.divergences.length ? " tce-diverges" : ""}`, text: p.summary }));
  for (const d of p.divergences) {
    const sides = h("ul", { cls: "tce-evidence" });
    for (const s of d.sides) {
      const compile = s.compile;
      sides.append(h("li", {}, [compile
        ? h("button", {
          cls: "tce-link tce-evidence-link", text: s.text,
          on: { click: () => ctx.select({ compile, stage: s.stage || ctx.selection.stage, node: null, kernel: null }) },
        })
        : h("span", { text: s.text })]));
    }
    el.append(h("div", { cls: "tce-card tce-finding tce-problem tce-divergence", attrs: { "data-kind": d.kind } }, [
      h("div", { cls: "tce-card-title" }, [h("span", { cls: "tce-severity", text: d.kind }), " ", d.text]),
      sides,
    ]));
  }
  const head = h("tr", {}, [h("th", { text: "compile" }), h("th", { text: "frame" }), ...p.ranks.map((r) => h("th", { text: r }))]);
  const body = p.rows.map((row) => h("tr", {
    cls: row.kinds.length ? "tce-diverges" : "",
    attrs: { "data-compile-id": row.compile_id },
    title: row.kinds.length ? `ranks differ here: ${row.kinds.join(", ")}` : "",
  }, [h("td", { text: row.compile_id }), h("td", { text: row.name }), ...row.cells.map((c) => cellOf(c, p.longest, ctx))]));
  // each rank's compile seconds over the compile ids every rank made: the skew at a glance
  const most = Math.max(0, ...p.totals);
  const foot = h("tr", { cls: "tce-rank-totals" }, [
    h("td", { text: "total" }), h("td", { text: "compile time, compiles every rank made" }),
    ...p.totals.map((t, i) => h("td", { cls: `tce-rank-cell${p.slow[i] ? " tce-diverges tce-slow" : ""}` }, [timeBar(t, most, "")])),
  ]);
  el.append(h("table", { cls: "tce-table tce-ranks" }, [h("thead", {}, [head]), h("tbody", {}, body), h("tfoot", {}, [foot])]));
  /** @param {Selection} sel */
  const update = (sel) => {
    for (const td of el.querySelectorAll("td[data-compile]")) {
      td.classList.toggle("tce-current", td.getAttribute("data-compile") === sel.compile);
    }
  };
  update(ctx.selection);
  return { update };
}

export { renderRanks };
