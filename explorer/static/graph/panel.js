// @ts-check
// The graph canvas's search box and side panel (a node's details, kernels, inputs, users):
// functions of a GraphCanvas `c`, called by its methods.

import { GC_SEARCH_MAX, gcEl, gcSvg, gcClip, gcShortTarget, gcMetaText, gcPathD } from "./draw.js";
import { gcLayeredLayout } from "./layout.js";
/** @import { GraphCanvas } from "./canvas.js" */

/** Fill the search results: exact name, then name prefix, then name or target substring. @param {GraphCanvas} c */
function gcRunSearch(c) {
  const q = c.search.value.trim().toLowerCase();
  c.results.replaceChildren();
  c.hits = [];
  c.hitAt = 0;
  if (!q) {
    c.results.hidden = true;
    return;
  }
  /** @type {number[]} */
  const exact = [];
  /** @type {number[]} */
  const prefix = [];
  /** @type {number[]} */
  const rest = [];
  c.nodes.forEach((n, i) => {
    const name = n.name.toLowerCase();
    if (name === q) exact.push(i);
    else if (name.startsWith(q)) prefix.push(i);
    else if (name.includes(q) || (n.target || "").toLowerCase().includes(q)) rest.push(i);
  });
  const all = exact.concat(prefix, rest);
  c.hits = all.slice(0, GC_SEARCH_MAX);
  const head = gcEl("div", "gc-hits", `${all.length.toLocaleString()} match${all.length === 1 ? "" : "es"}`);
  c.results.append(head);
  c.hits.forEach((i, j) => {
    const n = c.nodes[i];
    const row = gcEl("div", "gc-hit" + (j === 0 ? " gc-hit-on" : ""));
    const stack = n.module_stack && n.module_stack.length ? n.module_stack[n.module_stack.length - 1] : "";
    row.append(gcEl("span", "gc-hit-name", n.name), gcEl("span", "gc-hit-op", gcShortTarget(n)));
    if (stack) row.append(gcEl("span", "gc-hit-mod", stack));
    row.addEventListener("mousedown", (e) => {
      e.preventDefault();
      c.pick(i);
    });
    c.results.append(row);
  });
  c.results.hidden = false;
}

/** Arrow keys move in the results, Enter picks, Escape closes. @param {GraphCanvas} c @param {KeyboardEvent} e */
function gcSearchKey(c, e) {
  const rows = c.results.querySelectorAll(".gc-hit");
  if (e.key === "ArrowDown" || e.key === "ArrowUp") {
    e.preventDefault();
    if (!rows.length) return;
    rows[c.hitAt].classList.remove("gc-hit-on");
    c.hitAt = (c.hitAt + (e.key === "ArrowDown" ? 1 : rows.length - 1)) % rows.length;
    rows[c.hitAt].classList.add("gc-hit-on");
  } else if (e.key === "Enter" && c.hits && c.hits.length) {
    e.preventDefault();
    c.pick(c.hits[c.hitAt]);
  } else if (e.key === "Escape") {
    c.results.hidden = true;
  }
}

/** The selected node: what it is, where it came from, its kernels, inputs and users. @param {GraphCanvas} c */
function gcRenderSide(c) {
  c.side.replaceChildren();
  if (c.sel < 0) {
    c.side.append(
      gcEl("div", "gc-hint", "Boxes are the model's modules: click one to open it. Click a node, or search, to see its inputs and users."),
    );
    return;
  }
  const n = c.nodes[c.sel];
  c.side.append(gcEl("div", "gc-side-name", n.name), gcEl("div", "gc-side-target", `${n.op} ${n.target}`));
  if (n.saved) c.side.append(gcEl("div", "gc-side-saved", n.saved));
  c.side.append(gcNeighbourhood(c, c.sel));
  for (const m of n.meta || []) {
    c.side.append(gcEl("div", "gc-side-meta", `${gcMetaText(m)} ${m.device || ""}`.trim()));
  }
  if (n.module_stack && n.module_stack.length) {
    c.side.append(gcEl("div", "gc-side-mod", n.module_stack[n.module_stack.length - 1]));
  }
  if (n.src) c.side.append(gcEl("div", "gc-side-src", n.function ? `${n.src} in ${n.function}` : n.src));
  if (n.code) c.side.append(gcEl("pre", "gc-side-code", n.code));
  if (n.kernels && n.kernels.length) {
    c.side.append(gcEl("div", "gc-side-h", "kernels"));
    for (const id of n.kernels) {
      const b = gcEl("button", "gc-kernel", id);
      b.addEventListener("click", () => c.ctx.select({ kernel: id }));
      c.side.append(b);
    }
  }
  gcSubgraphList(c, "runs", n.runs || []);
  gcSubgraphList(c, "called by", n.called_by || []);
  gcSideList(c, "inputs", n.inputs || [], "gc-nb-in");
  gcSideList(c, "users", n.users || [], "gc-nb-out");
}

/**
 * A higher-order op's nested graphs, or the ops that run the selected node's nested graph
 * (a reused compiled region has one per call site); clicking one selects its node.
 * @param {GraphCanvas} c @param {string} title @param {import("./tree.js").GcSubgraphRef[]} refs
 */
function gcSubgraphList(c, title, refs) {
  if (!refs.length) return;
  c.side.append(gcEl("div", "gc-side-h", `${title} (${refs.length})`));
  const box = gcEl("div", "gc-side-list gc-subgraphs");
  for (const r of refs) {
    const b = gcEl("button", "gc-follow");
    b.dataset.subgraph = r.id;
    b.append(gcEl("span", "gc-follow-name", r.module), gcEl("span", "gc-follow-op", r.role));
    b.addEventListener("click", () => c.choose(r.node, true));
    box.append(b);
  }
  c.side.append(box);
}

const GC_HOOD_MAX = 6; // inputs or users drawn around the selected node
const GC_HOOD_CHARS = 16;

/**
 * The selected node with its inputs above and its users below, laid out as a small layered
 * graph; clicking a neighbour follows that edge. Long lists are cut (the lists below are not).
 * @param {GraphCanvas} c @param {number} i
 */
function gcNeighbourhood(c, i) {
  const n = c.nodes[i];
  const ins = [...new Set(n.inputs || [])];
  const outs = [...new Set(n.users || [])];
  const ids = [...ins.slice(0, GC_HOOD_MAX), i, ...outs.slice(0, GC_HOOD_MAX)];
  const at = ids.indexOf(i);
  const units = ids.map((j) => ({ w: Math.min(GC_HOOD_CHARS, c.nodes[j].name.length) * 6.6 + 14, h: 22 }));
  const edges = ids.flatMap((_, k) => /** @type {[number, number][]} */ (k < at ? [[k, at]] : k > at ? [[at, k]] : []));
  const l = gcLayeredLayout(units, edges);
  const box = gcEl("div", "gc-hood");
  const svg = gcSvg("svg", { class: "gc-hood-svg", viewBox: `-4 -4 ${l.width + 8} ${l.height + 8}` });
  svg.style.maxHeight = `${Math.min(160, l.height + 8)}px`;
  l.routes.forEach((pts) => svg.append(gcSvg("path", { d: gcPathD(pts), class: "gc-edge" })));
  ids.forEach((j, k) => {
    const u = units[k];
    const cls = k === at ? "gc-hood-self" : k < at ? "gc-nb-in" : "gc-nb-out";
    const g = gcSvg("g", { class: `gc-hood-unit ${cls}`, transform: `translate(${l.pos[k].x - u.w / 2},${l.pos[k].y - u.h / 2})` });
    g.append(gcSvg("rect", { width: u.w, height: u.h, rx: 3 }));
    const t = gcSvg("text", { x: 7, y: 15 });
    t.textContent = gcClip(c.nodes[j].name, GC_HOOD_CHARS);
    const title = gcSvg("title", {});
    title.textContent = `${c.nodes[j].name} = ${c.nodes[j].target}`;
    g.append(title, t);
    if (k !== at) {
      g.dataset.node = c.nodes[j].name;
      g.addEventListener("click", () => c.choose(j, true));
    }
    svg.append(g);
  });
  box.append(svg);
  const cut = Math.max(0, ins.length - GC_HOOD_MAX) + Math.max(0, outs.length - GC_HOOD_MAX);
  if (cut) box.append(gcEl("div", "gc-hint", `${cut} more in the lists below`));
  return box;
}

/**
 * Neighbours as buttons; clicking one follows the edge to it.
 * @param {GraphCanvas} c @param {string} title @param {number[]} list @param {string} cls
 */
function gcSideList(c, title, list, cls) {
  c.side.append(gcEl("div", "gc-side-h", `${title} (${list.length})`));
  const box = gcEl("div", `gc-side-list ${cls}`);
  for (const j of list) {
    const m = c.nodes[j];
    const b = gcEl("button", "gc-follow");
    b.dataset.node = m.name;
    b.append(gcEl("span", "gc-follow-name", m.name), gcEl("span", "gc-follow-op", gcShortTarget(m)));
    b.addEventListener("click", () => c.choose(j, true));
    box.append(b);
  }
  c.side.append(box);
}

export { gcRunSearch, gcSearchKey, gcRenderSide };
