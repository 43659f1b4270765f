// @ts-check
// Renderers of a compiled frame's panes: code (bytecode, guards), graphs, graph breaks,
// recompile reasons, and the advisor's findings. Each is `render<Kind>(el, pane, ctx)`
// and returns a PaneHandle; they reach the rest of the explorer only through ctx.

/** @import { GraphView } from "../store.js" */
/** @import { Ctx, PaneHandle, Renderer } from "../util.js" */
/** @import { Block, CodePane, EvidenceLink, FindingsPane, GraphBreaksPane, RecompileReasonsPane, SuggestionPart } from "./typedefs.js" */
import { h, hlClass } from "../util.js";
import { appendHighlighted } from "../highlight.js";
import { CodeView } from "../code_view.js";
import { GraphCanvas } from "../graph/canvas.js";

/** @param {Ctx} ctx @param {string|null|undefined} key */
function toggleSrc(ctx, key) {
  if (key) ctx.select({ src: ctx.selection.src === key ? null : key, node: null, kernel: null });
}

/** @param {HTMLElement} el @param {Block[]} blocks @param {Ctx} ctx @returns {CodeView[]} */
function renderBlocks(el, blocks, ctx) {
  /** @type {CodeView[]} */
  const views = [];
  for (const block of blocks) {
    const box = h("div", { cls: "tce-block" }, [h("div", { cls: "tce-block-title", text: block.title })]);
    if (block.note) box.append(h("div", { cls: "tce-note", text: block.note }));
    if (block.text) {
      const src = block.line_src || [];
      const view = new CodeView(block.text, {
        language: block.language,
        lineClass: (i) => hlClass(ctx, src[i]),
        onLine: (i) => toggleSrc(ctx, src[i]),
      });
      views.push(view);
      box.append(view.el);
    }
    el.append(box);
  }
  return views;
}

/** @type {Renderer} */
function renderCode(el, pane, ctx) {
  const views = renderBlocks(el, /** @type {CodePane} */ (pane).blocks, ctx);
  if (!pane.blocks.length) el.append(h("div", { cls: "tce-note", text: "Nothing was recorded for this stage." }));
  return { update: () => views.forEach((v) => v.refresh()) };
}

/**
 * A graph: drawn by the GraphCanvas (module groups, layered layout of what is open), or
 * as its text, verbatim, with each node's line linked.
 * @type {Renderer}
 */
function renderGraph(el, pane, ctx) {
  const g = /** @type {GraphView} */ (pane);
  const nodes = g.nodes;
  const modeKey = `graph-mode|${ctx.selection.compile}|${g.id}`;
  const mode = ctx.state.get(modeKey) || (nodes.length ? "graph" : "text");
  const bar = h("div", { cls: "tce-toolbar" });
  const body = h("div", { cls: "tce-graph-body" });
  el.append(bar, body);
  /** @type {PaneHandle} */
  let inner = { update: () => {} };
  const show = (/** @type {string} */ m) => {
    ctx.state.set(modeKey, m);
    if (inner.destroy) inner.destroy();
    body.replaceChildren();
    for (const b of bar.querySelectorAll("[data-mode]")) b.classList.toggle("tce-current", b.getAttribute("data-mode") === m);
    inner = m === "graph" ? graphCanvas(body, g, ctx) : graphText(body, g, ctx);
  };
  for (const [m, label] of [["graph", "Graph"], ["text", "Text"]]) {
    bar.append(h("button", { cls: "tce-button", text: label, attrs: { "data-mode": m }, on: { click: () => show(m) } }));
  }
  bar.append(h("span", { cls: "tce-renderer", text: `${nodes.length.toLocaleString()} nodes` }));
  if (g.parse_error) bar.append(h("span", { cls: "tce-error", text: g.parse_error }));
  show(mode);
  return {
    update: (sel) => inner.update(sel),
    reveal: (i) => inner.reveal && inner.reveal(i),
    destroy: () => inner.destroy && inner.destroy(),
  };
}

/** @param {HTMLElement} body @param {GraphView} g @param {Ctx} ctx @returns {PaneHandle} */
function graphCanvas(body, g, ctx) {
  const canvas = new GraphCanvas(body, g, ctx);
  canvas.update(ctx.selection);
  return {
    update: (sel) => canvas.update(sel),
    reveal: (i) => canvas.reveal(i),
    destroy: () => canvas.destroy(),
  };
}

/** @param {HTMLElement} body @param {GraphView} g @param {Ctx} ctx @returns {PaneHandle} */
function graphText(body, g, ctx) {
  const nodes = g.nodes;
  /** @param {number} i */
  const nodeClass = (i) => {
    const n = nodes[i];
    const s = ctx.selection;
    let cls = hlClass(ctx, n.src);
    if (s.node === n.name) cls += " tce-selected";
    if (s.kernel && n.kernels.includes(s.kernel)) cls += " hl-kernel";
    return cls;
  };
  const view = new CodeView(g.text, {
    language: g.language,
    lineClass: (i) => {
      const ni = g.line_node[i];
      return ni !== null && ni !== undefined ? nodeClass(ni) : hlClass(ctx, g.line_src[i]);
    },
    onLine: (i) => {
      const ni = g.line_node[i];
      if (ni !== null && ni !== undefined) {
        const n = nodes[ni];
        ctx.select({ node: n.name, src: n.src, kernel: n.kernels[0] || null });
      } else {
        toggleSrc(ctx, g.line_src[i]);
      }
    },
  });
  body.append(view.el);
  /** @type {Map<number, number>} */
  const lineOf = new Map();
  g.line_node.forEach((ni, line) => { if (ni !== null && ni !== undefined) lineOf.set(ni, line); });
  return {
    update: () => view.refresh(),
    reveal: (i) => { const line = lineOf.get(i); if (line !== undefined) view.scrollTo(line); },
  };
}

/** @type {Renderer} */
function renderGraphBreaks(el, pane, ctx) {
  /** @type {[HTMLElement, string|null][]} */
  const items = [];
  for (const gb of /** @type {GraphBreaksPane} */ (pane).items) {
    const loc = gb.src
      ? h("button", { cls: "tce-link", text: gb.location, on: { click: () => ctx.select({ src: gb.src, node: null, kernel: null }) } })
      : h("span", { text: gb.location || "unknown location" });
    const card = h("div", { cls: "tce-card" }, [
      h("div", { cls: "tce-card-title", text: gb.summary || "graph break" }),
      h("div", { cls: "tce-detail-row" }, [h("span", { cls: "tce-key", text: "where" }), loc,
        gb.code ? h("code", { cls: "tce-inline", text: gb.code }) : null]),
      h("pre", { cls: "tce-pre", text: gb.reason }),
      gb.hints.length ? h("ul", { cls: "tce-hints" }, gb.hints.map((x) => h("li", { text: x }))) : null,
      gb.user_stack.length ? h("div", { cls: "tce-detail-row tce-stack" }, [h("span", { cls: "tce-key", text: "user stack" }),
        ...gb.user_stack.map((f) => f.src
          ? h("button", { cls: "tce-link", text: f.text, on: { click: () => ctx.select({ src: f.src, node: null, kernel: null }) } })
          : h("span", { text: f.text }))]) : null,
      gb.documentation ? docLink(gb.documentation) : null,
    ]);
    items.push([card, gb.src]);
    el.append(card);
  }
  return { update: () => items.forEach(([card, src]) => { card.className = "tce-card" + hlClass(ctx, src); }) };
}

/** @param {string} url */
function docLink(url) {
  const row = h("div", { cls: "tce-detail-row" }, [h("span", { cls: "tce-key", text: "docs" })]);
  if (/^https:\/\//.test(url)) {
    row.append(h("a", { text: url, attrs: { href: url, target: "_blank", rel: "noopener noreferrer" } }));
  } else {
    row.append(h("span", { text: url }));
  }
  return row;
}

/** @type {Renderer} */
function renderRecompileReasons(el, pane) {
  for (const r of /** @type {RecompileReasonsPane} */ (pane).items) {
    el.append(h("div", { cls: "tce-card" }, [
      h("div", { cls: "tce-card-title", text: r.reason }),
      r.previous ? h("div", { cls: "tce-detail-row" }, [h("span", { cls: "tce-key", text: "failed guard of" }), h("span", { text: r.previous })]) : null,
      r.text && r.text !== r.reason ? h("pre", { cls: "tce-pre", text: r.text }) : null,
    ]));
  }
  return { update: () => {} };
}

/**
 * The advisor's findings, most important first; each piece of evidence is a link that
 * selects what it points at (compile, stage, source line, node, kernel).
 * @type {Renderer}
 */
function renderFindings(el, pane, ctx) {
  const items = /** @type {FindingsPane} */ (pane).items;
  if (!items.length) el.append(h("div", { cls: "tce-note", text: "The advisor found nothing to report." }));
  for (const f of items) {
    const row = (/** @type {string} */ key, /** @type {any} */ body) =>
      h("div", { cls: "tce-detail-row" }, [h("span", { cls: "tce-key", text: key }), body]);
    el.append(h("div", { cls: `tce-card tce-finding tce-${f.severity}`, attrs: { "data-kind": f.kind } }, [
      h("div", { cls: "tce-card-title" }, [h("span", { cls: "tce-severity", text: f.severity }), " ", f.title]),
      f.impact ? row("impact", h("span", { text: f.impact })) : null,
      f.chain.length ? row("reached from", evidenceList(f.chain, ctx, "tce-chain")) : null,
      f.suggestion.length ? row("try", suggestion(f.suggestion)) : null,
      f.tried ? row("tried", h("span", { cls: "tce-tried", text: f.tried })) : null,
      evidenceList(f.evidence, ctx, "tce-evidence"),
    ]));
  }
  return { update: () => {} };
}

/** Evidence as links that select what they point at. @param {EvidenceLink[]} links @param {Ctx} ctx @param {string} cls */
function evidenceList(links, ctx, cls) {
  const list = h(cls === "tce-chain" ? "ol" : "ul", { cls });
  for (const e of links) {
    const target = e.compile || e.stage || e.src || e.node || e.kernel;
    list.append(h("li", {}, [target
      ? h("button", {
        cls: "tce-link tce-evidence-link", text: e.text,
        on: {
          click: () => ctx.select({
            compile: e.compile || ctx.selection.compile, stage: e.stage || ctx.selection.stage,
            src: e.src, node: e.node, kernel: e.kernel,
          }),
        },
      })
      : h("span", { text: e.text })]));
  }
  return list;
}

/** A suggestion: prose, inline code and highlighted code blocks (split in Python). @param {SuggestionPart[]} parts */
function suggestion(parts) {
  const box = h("div", { cls: "tce-suggestion" });
  for (const p of parts) {
    if (p.kind === "block") {
      const pre = h("pre", { cls: "tce-pre tce-suggestion-code", attrs: { "data-language": p.language } });
      p.text.split("\n").forEach((line, i) => {
        if (i) pre.append("\n");
        appendHighlighted(line, p.language, pre);
      });
      box.append(pre);
    } else if (p.kind === "code") {
      box.append(h("code", { cls: "tce-inline-code", text: p.text }));
    } else {
      box.append(h("span", { text: p.text }));
    }
  }
  return box;
}

export {
  renderBlocks,
  renderCode,
  renderGraph,
  renderGraphBreaks,
  renderRecompileReasons,
  renderFindings,
};
