// @ts-check
// The CUDA-graph pane: per compiled call site, recorded, partitioned or skipped, with
// torch's reason linked to its node and source line, one row per distinct shape with its
// recordings and timed calls, then the run's calls and the CUDA graph pool. Python made
// every id and every figure (explorer/panes/costs/cudagraphs.py); this only draws them.

/** @import { Renderer, Ctx } from "../util.js" */
/** @import { CudagraphsPane, CudagraphSite, EvidenceLink } from "./typedefs.js" */
import { h, fmt } from "../util.js";

/** A link that selects what it names (its compile, the graph's node, the source line).
 * @param {EvidenceLink} l @param {Ctx} ctx @param {string} cls */
function link(l, ctx, cls) {
  const go = l.compile || l.stage || l.src || l.node;
  if (!go) return h("span", { cls, text: l.text });
  return h("button", {
    cls: `tce-link ${cls}`, text: l.text,
    on: {
      click: () => ctx.select({
        compile: l.compile || ctx.selection.compile, stage: l.stage || ctx.selection.stage,
        src: l.src, node: l.node, kernel: null,
      }),
    },
  });
}

/** One call site: its status, torch's reason, the ops kept out, one row per shape.
 * @param {CudagraphSite} s @param {Ctx} ctx */
function site(s, ctx) {
  const box = h("div", { cls: `tce-block tce-cg-site tce-cg-${s.status}`, attrs: { "data-compile": s.compile } }, [
    h("div", { cls: "tce-block-title" }, [
      h("span", { cls: "tce-cg-status", text: s.status }), ` ${s.label} · ${s.summary}`,
    ]),
  ]);
  if (s.reason) box.append(h("div", { cls: "tce-detail-row" }, [
    h("span", { cls: "tce-key", text: "skipped because" }), link(s.reason, ctx, "tce-cg-reason"),
  ]));
  if (s.kept_out.length) {
    const list = h("ul", { cls: "tce-cg-kept-out" });
    for (const op of s.kept_out) list.append(h("li", {}, [link(op, ctx, "tce-cg-op")]));
    box.append(h("div", { cls: "tce-detail-row" }, [h("span", { cls: "tce-key", text: "kept out" }), list]));
  }
  if (s.shapes.length) {
    const t = h("table", { cls: "tce-table tce-cg-shapes" }, [h("tr", {}, [
      h("th", { text: "symint key" }), h("th", { cls: "tce-num", text: "trees" }),
      h("th", { cls: "tce-num", text: "warm-ups" }), h("th", { cls: "tce-num", text: "recordings" }),
      h("th", { text: "recorded for inputs" }), h("th", { text: "calls at this size (ms): warm-up, recording, replays" }),
    ])]);
    for (const sh of s.shapes) {
      t.append(h("tr", { cls: "tce-cg-shape", attrs: { "data-key": sh.key } }, [
        h("td", { text: sh.key }), h("td", { cls: "tce-num", text: String(sh.trees) }),
        h("td", { cls: "tce-num", text: String(sh.warmups) }),
        h("td", { cls: "tce-num", text: String(sh.recordings) }),
        h("td", { cls: "tce-muted", text: sh.sizes.slice(0, 2).map((x) => `[${x}]`).join(" ") }),
        h("td", { text: sh.calls_ms.map((ms) => fmt(ms)).join(", ") }),
      ]));
    }
    box.append(t);
  }
  for (const r of s.rerecords) box.append(h("div", { cls: "tce-note", text: `re-recorded: ${r}` }));
  return box;
}

/**
 * What CUDA graphs did in the whole exploration.
 * @type {Renderer}
 */
function renderCudagraphs(el, pane, ctx) {
  const p = /** @type {CudagraphsPane} */ (pane);
  el.append(h("div", { cls: "tce-note tce-cg-summary", text: p.summary }));
  for (const pr of p.problems) el.append(h("div", { cls: "tce-card tce-problem tce-cg-problem" }, [link(pr, ctx, "tce-cg-problem-link")]));
  for (const s of p.sites) el.append(site(s, ctx));
  if (p.calls.length) {
    const t = h("table", { cls: "tce-table tce-cg-calls" }, [h("tr", {}, [
      h("th", { cls: "tce-num", text: "call" }), h("th", { cls: "tce-num", text: "batch" }),
      h("th", { cls: "tce-num", text: "time (ms)" }), h("th", { cls: "tce-num", text: "pool (MiB)" }),
    ])]);
    p.calls.forEach((c, i) => t.append(h("tr", { cls: "tce-cg-call" }, [
      h("td", { cls: "tce-num", text: String(i + 1) }), h("td", { cls: "tce-num", text: String(c.batch) }),
      h("td", { cls: "tce-num", text: fmt(c.ms) }), h("td", { cls: "tce-num", text: fmt(c.pool_mib) }),
    ])));
    el.append(h("div", { cls: "tce-block" }, [h("div", { cls: "tce-block-title", text: "calls of the run" }), t]));
  }
  if (p.pool_mib) el.append(h("div", { cls: "tce-note tce-cg-pool", text: `CUDA graph pool: ${fmt(p.pool_mib)} MiB` }));
  return { update: () => {} };
}

export { renderCudagraphs };
