// @ts-check
// The graph canvas: one FX/ATen graph pane, grouped by module, laid out when opened.
// Concatenated after graph_tree.js, graph_layout.js and graph_panel.js into one ES module.
// Only the visible units are laid out: a collapsed group is one box, an expanded group
// lays out its own children once (cached), so opening a block re-lays out that block and
// the few levels above it, never the whole graph.

/** @import { GcNode, GcGroup } from "./graph_tree.js" */
/** @import { Ctx } from "./util.js" */
import { GC_LABEL_MAX, gcEl, gcSvg, gcClip, gcShortTarget, gcMetaText, gcGroupNote, gcUnitKey, gcPathD } from "./graph_draw.js";
import { h } from "./util.js";
import { gcBuildTree, gcGroupEdges } from "./graph_tree.js";
import { gcLayeredLayout } from "./graph_layout.js";
import { gcRunSearch, gcSearchKey, gcRenderSide } from "./graph_panel.js";

const GC_OPEN_UNITS = 60; // at most this many boxes when a graph opens
const GC_OPEN_SCALE = 0.6; // smallest zoom a graph opens at
const GC_REPEAT_MIN = 4; // numbered siblings (h.0, h.1, ...) from this many are repeated blocks
const GC_NODE_H = 34;
const GC_GROUP_H = 40;
const GC_CHAR_W = 6.6; // monospace 11px
const GC_PAD = 10; // inside an expanded group's frame
const GC_HEAD = 20; // an expanded group's title bar

/**
 * One graph pane on a pannable, zoomable canvas with search and a details side panel.
 *
 * Example: `const c = new GraphCanvas(el, pane, ctx); c.update(ctx.selection); c.destroy();`
 */
class GraphCanvas {
  /**
   * @param {HTMLElement} host
   * @param {{kind: string, id: string, stage: string, label: string, text: string, nodes: GcNode[]}} pane
   * @param {Pick<Ctx, "selection"|"select"|"srcClass">} ctx
   */
  constructor(host, pane, ctx) {
    const t0 = performance.now();
    this.host = host;
    this.pane = pane;
    this.ctx = ctx;
    this.nodes = pane.nodes || [];
    this.byName = new Map();
    this.bySrc = new Map();
    this.byKernel = new Map();
    this.nodes.forEach((n, i) => {
      for (const k of n.kernels || []) {
        if (!this.byKernel.has(k)) this.byKernel.set(k, []);
        this.byKernel.get(k).push(i);
      }
      if (!this.byName.has(n.name)) this.byName.set(n.name, i);
      if (n.src) {
        if (!this.bySrc.has(n.src)) this.bySrc.set(n.src, []);
        this.bySrc.get(n.src).push(i);
      }
    });
    const tree = gcBuildTree(this.nodes);
    this.root = tree.root;
    this.chain = tree.chain;
    /** @type {Set<GcGroup>} */
    this.expanded = new Set([this.root]);
    this.view = { x: 0, y: 0, k: 1 };
    this.sel = -1;
    this.selection = ctx.selection || {};
    this.marked = [];
    this.listeners = [];
    this.stats = { nodes: this.nodes.length, units: 0, openMs: 0, layoutMs: 0 };
    this.buildDom();
    this.openDefault();
    this.render();
    this.fit(true);
    this.update(this.selection);
    this.stats.openMs = performance.now() - t0;
    if (!this.viewport.clientWidth && typeof ResizeObserver !== "undefined") {
      // Opened while hidden (a pane in a closed tab): fit once it gets a size.
      this.resizer = new ResizeObserver(() => {
        if (!this.viewport.clientWidth) return;
        this.resizer.disconnect();
        this.resizer = null;
        this.fit(true);
      });
      this.resizer.observe(this.viewport);
    }
  }

  // ---- structure -------------------------------------------------------------------------

  /**
   * What is open when a graph opens: level by level, the biggest groups first, while the
   * view stays under GC_OPEN_UNITS boxes. Repeated blocks (h.0, h.1, ... four or more
   * numbered siblings) open or stay closed together, and stay closed: the model reads as
   * its blocks first. Boxes the view made (runs of nodes, the inputs) stay closed.
   */
  openDefault() {
    let frontier = this.root.kids.filter((k) => typeof k !== "number");
    let shown = this.root.kids.length;
    while (frontier.length) {
      const families = new Map();
      for (const g of frontier) {
        if (g.synthetic) continue; // runs and the inputs box exist to stay folded
        const m = /^(.*?)\.?\d+$/.exec(g.label);
        const key = m && !g.synthetic ? `${g.parent.key}\u0002${m[1]}` : g.key;
        if (!families.has(key)) families.set(key, []);
        families.get(key).push(g);
      }
      const size = (fam) => fam.reduce((s, g) => s + g.members.length, 0);
      const opened = [];
      for (const fam of [...families.values()].sort((a, b) => size(b) - size(a))) {
        const extra = fam.reduce((s, g) => s + g.kids.length - 1, 0);
        const repeated = fam.length >= GC_REPEAT_MIN;
        if (fam.every((g) => g.kids.length <= 1) || (!repeated && shown + extra <= GC_OPEN_UNITS)) {
          for (const g of fam) this.expanded.add(g);
          opened.push(...fam);
          shown += extra;
        }
      }
      frontier = opened.flatMap((g) => g.kids.filter((k) => typeof k !== "number"));
    }
  }

  isOpen(g) {
    return this.expanded.has(g);
  }

  /** The box that shows node i now: the node, or its outermost collapsed group. */
  repOf(i) {
    for (const g of this.chain[i]) if (!this.expanded.has(g)) return g;
    return i;
  }

  toggle(g, open = !this.expanded.has(g)) {
    if (open === this.expanded.has(g)) return false;
    if (open) this.expanded.add(g);
    else this.expanded.delete(g);
    for (let a = g.parent; a; a = a.parent) a.layout = null;
    return true;
  }

  // ---- layout ----------------------------------------------------------------------------

  sizeOf(u) {
    if (typeof u === "number") {
      const n = this.nodes[u];
      const second = `${gcShortTarget(n)} ${gcMetaText(n.meta && n.meta[0])}`;
      const chars = Math.min(GC_LABEL_MAX, Math.max(n.name.length, second.length));
      return { w: Math.max(70, chars * GC_CHAR_W + 16), h: GC_NODE_H };
    }
    if (this.expanded.has(u)) {
      const l = this.layoutOf(u);
      const head = (u.label.length + 12) * GC_CHAR_W;
      return { w: Math.max(l.width, head) + 2 * GC_PAD, h: l.height + GC_HEAD + 2 * GC_PAD };
    }
    const title = Math.min(GC_LABEL_MAX, u.label.length + 2) * 7.2;
    const second = Math.min(GC_LABEL_MAX, gcGroupNote(u).length) * 6.1;
    return { w: Math.max(title, second, 80) + 20, h: GC_GROUP_H };
  }

  layoutOf(g) {
    if (g.layout) return g.layout;
    const sizes = g.kids.map((k) => this.sizeOf(k));
    const edges = gcGroupEdges(g, this.nodes, this.chain);
    g.layout = gcLayeredLayout(sizes, edges);
    g.layout.sizes = sizes;
    return g.layout;
  }

  /** Absolute boxes of every visible unit, and each expanded group's inner origin. */
  place() {
    this.boxes = new Map();
    this.origins = new Map();
    const walk = (g, ox, oy) => {
      this.origins.set(g, { x: ox, y: oy });
      const l = this.layoutOf(g);
      g.kids.forEach((k, j) => {
        const s = l.sizes[j];
        const box = { x: ox + l.pos[j].x - s.w / 2, y: oy + l.pos[j].y - s.h / 2, w: s.w, h: s.h };
        this.boxes.set(gcUnitKey(k), box);
        if (typeof k !== "number" && this.expanded.has(k)) {
          const inner = this.layoutOf(k);
          walk(k, box.x + (box.w - inner.width) / 2, box.y + GC_HEAD + GC_PAD);
        }
      });
    };
    walk(this.root, 0, 0);
    const l = this.root.layout;
    this.world = { w: l.width, h: l.height };
  }

  // ---- DOM -------------------------------------------------------------------------------

  buildDom() {
    this.el = gcEl("div", "gc");
    const bar = gcEl("div", "gc-bar");
    this.search = gcEl("input", "gc-search");
    this.search.type = "search";
    this.search.placeholder = "find node (name or op)";
    this.search.setAttribute("aria-label", "find a node by name or target");
    this.results = gcEl("div", "gc-results");
    this.results.hidden = true;
    const searchBox = gcEl("div", "gc-searchbox");
    searchBox.append(this.search, this.results);
    this.info = gcEl("span", "gc-info");
    const zoomIn = gcEl("button", "gc-btn", "+");
    zoomIn.title = "zoom in (or Ctrl + wheel)";
    const zoomOut = gcEl("button", "gc-btn", "−");
    zoomOut.title = "zoom out (or Ctrl + wheel)";
    const fit = gcEl("button", "gc-btn", "fit");
    fit.title = "fit the graph in the view";
    const reset = gcEl("button", "gc-btn", "collapse");
    reset.title = "collapse every block";
    bar.append(searchBox, this.info, zoomIn, zoomOut, fit, reset);
    const body = gcEl("div", "gc-body");
    this.viewport = gcEl("div", "gc-view");
    this.svg = gcSvg("svg", { class: "gc-svg" });
    const defs = gcSvg("defs", {});
    const marker = gcSvg("marker", {
      id: "gc-arrow",
      viewBox: "0 0 8 8",
      refX: 7,
      refY: 4,
      markerWidth: 7,
      markerHeight: 7,
      orient: "auto-start-reverse",
    });
    marker.append(gcSvg("path", { d: "M0,0 L8,4 L0,8 z", class: "gc-arrowhead" }));
    defs.append(marker);
    this.worldEl = gcSvg("g", { class: "gc-world" });
    this.svg.append(defs, this.worldEl);
    this.viewport.append(this.svg);
    this.side = gcEl("div", "gc-side");
    body.append(this.viewport, this.side);
    this.el.append(bar, body);
    this.host.append(this.el);

    const zoomMiddle = (f) => this.zoomAt(this.viewport.clientWidth / 2, this.viewport.clientHeight / 2, f);
    this.on(zoomIn, "click", () => zoomMiddle(1.25));
    this.on(zoomOut, "click", () => zoomMiddle(0.8));
    this.on(fit, "click", () => this.fit(false));
    this.on(reset, "click", () => {
      this.expanded = new Set([this.root]);
      this.clearLayouts(this.root);
      this.openDefault();
      this.render();
      this.fit(true);
    });
    this.on(this.search, "input", () => this.runSearch());
    this.on(this.search, "keydown", (e) => this.searchKey(e));
    this.on(this.search, "blur", () => setTimeout(() => (this.results.hidden = true), 150));
    this.on(this.svg, "wheel", (e) => this.wheel(e), { passive: false });
    this.on(this.svg, "pointerdown", (e) => this.pointerDown(e));
    this.on(this.svg, "click", (e) => this.click(e));
  }

  on(target, type, fn, opts) {
    target.addEventListener(type, fn, opts);
    this.listeners.push([target, type, fn, opts]);
  }

  clearLayouts(g) {
    g.layout = null;
    for (const k of g.kids) if (typeof k !== "number") this.clearLayouts(k);
  }

  render() {
    const t0 = performance.now();
    this.place();
    this.stats.layoutMs = performance.now() - t0;
    this.worldEl.replaceChildren();
    this.unitEls = new Map();
    const frames = gcSvg("g", { class: "gc-frames" });
    const edges = gcSvg("g", { class: "gc-edges" });
    const units = gcSvg("g", { class: "gc-units" });
    this.overlay = gcSvg("g", { class: "gc-overlay" });
    let count = 0;
    const walk = (g) => {
      const origin = this.origins.get(g);
      const l = g.layout;
      for (const [e, [a, b]] of gcGroupEdges(g, this.nodes, this.chain).entries()) {
        const pts = l.routes[e].map((p) => ({ x: p.x + origin.x, y: p.y + origin.y }));
        const path = gcSvg("path", { d: gcPathD(pts), class: "gc-edge" });
        path.dataset.from = gcUnitKey(g.kids[a]);
        path.dataset.to = gcUnitKey(g.kids[b]);
        edges.append(path);
      }
      for (const k of g.kids) {
        const box = this.boxes.get(gcUnitKey(k));
        if (typeof k !== "number" && this.expanded.has(k)) {
          frames.append(this.frameEl(k, box));
          walk(k);
        } else {
          units.append(this.unitEl(k, box));
          count++;
        }
      }
    };
    walk(this.root);
    this.worldEl.append(frames, edges, units, this.overlay);
    this.stats.units = count;
    this.info.textContent = this.nodes.length
      ? `${this.nodes.length.toLocaleString()} nodes · ${count} boxes`
      : "this graph has no parsed nodes (its text is in the text view)";
    this.applyView();
    this.stats.renderMs = performance.now() - t0;
  }

  frameEl(g, box) {
    const el = gcSvg("g", { class: "gc-frame" + (g.synthetic ? " gc-synthetic" : "") });
    el.append(gcSvg("rect", { x: box.x, y: box.y, width: box.w, height: box.h, rx: 6 }));
    const head = gcSvg("g", { class: "gc-head" });
    head.append(gcSvg("rect", { x: box.x, y: box.y, width: box.w, height: GC_HEAD, rx: 6 }));
    const t = gcSvg("text", { x: box.x + 8, y: box.y + 14 });
    t.textContent = `▾ ${gcClip(g.label, 60)}  (${g.members.length})`;
    head.append(t);
    head.dataset.group = g.key;
    el.append(head);
    this.unitEls.set(gcUnitKey(g), el);
    return el;
  }

  unitEl(u, box) {
    const group = typeof u !== "number";
    const n = group ? null : this.nodes[u];
    const cls = group ? "gc-unit gc-group" + (u.synthetic ? " gc-synthetic" : "") : `gc-unit gc-node gc-op-${n.op}`;
    const el = gcSvg("g", { class: cls, transform: `translate(${box.x},${box.y})` });
    el.append(gcSvg("rect", { width: box.w, height: box.h, rx: group ? 6 : 4 }));
    const a = gcSvg("text", { x: 8, y: 14, class: "gc-t1" });
    const b = gcSvg("text", { x: 8, y: group ? 31 : 28, class: "gc-t2" });
    if (group) {
      a.textContent = `▸ ${gcClip(u.label)}`;
      b.textContent = gcClip(gcGroupNote(u));
      el.dataset.group = u.key;
    } else {
      a.textContent = gcClip(n.name);
      b.textContent = gcClip(`${gcShortTarget(n)} ${gcMetaText(n.meta && n.meta[0])}`);
      el.dataset.node = String(u);
      if (n.kernels && n.kernels.length) el.classList.add("gc-has-kernel");
    }
    const title = gcSvg("title", {});
    title.textContent = group ? u.key.replace(/\u0001.*/, "") || u.label : `${n.name} = ${n.target}`;
    el.append(title, a, b);
    this.unitEls.set(gcUnitKey(u), el);
    return el;
  }

  // ---- pan and zoom ----------------------------------------------------------------------

  applyView() {
    const v = this.view;
    this.worldEl.setAttribute("transform", `translate(${v.x},${v.y}) scale(${v.k})`);
  }

  /** Fit the graph in the view; on open, keep text readable (full width, from the top). */
  fit(onOpen) {
    const vw = this.viewport.clientWidth || 800;
    const vh = this.viewport.clientHeight || 560;
    const w = this.world.w + 40;
    const h = this.world.h + 40;
    let k = Math.min(vw / w, vh / h, 1.2);
    // Opening: fit if the text stays readable, else readable from the top, centred.
    if (onOpen) k = Math.max(Math.min(k, 1), Math.min(1, Math.max(GC_OPEN_SCALE, vw / w)));
    this.view.k = k;
    this.view.x = (vw - this.world.w * k) / 2;
    this.view.y = h * k <= vh ? (vh - this.world.h * k) / 2 : 20 * k;
    this.applyView();
  }

  /** Wheel and trackpad scroll pan; with Ctrl or Cmd (and trackpad pinch) they zoom. */
  wheel(e) {
    e.preventDefault();
    if (!(e.ctrlKey || e.metaKey)) {
      this.view.x -= e.deltaX;
      this.view.y -= e.deltaY;
      this.applyView();
      return;
    }
    const r = this.svg.getBoundingClientRect();
    this.zoomAt(e.clientX - r.left, e.clientY - r.top, Math.exp(-e.deltaY * 0.01));
  }

  zoomAt(px, py, factor) {
    const v = this.view;
    const k = Math.min(3, Math.max(0.05, v.k * factor));
    v.x = px - ((px - v.x) * k) / v.k;
    v.y = py - ((py - v.y) * k) / v.k;
    v.k = k;
    this.applyView();
  }

  pointerDown(e) {
    if (e.button !== 0) return;
    const start = { x: e.clientX, y: e.clientY, vx: this.view.x, vy: this.view.y };
    this.dragged = false;
    const move = (m) => {
      const dx = m.clientX - start.x;
      const dy = m.clientY - start.y;
      if (!this.dragged && Math.abs(dx) + Math.abs(dy) < 4) return;
      this.dragged = true;
      this.view.x = start.vx + dx;
      this.view.y = start.vy + dy;
      this.applyView();
    };
    const up = () => {
      window.removeEventListener("pointermove", move);
      window.removeEventListener("pointerup", up);
      this.endDrag = null;
    };
    window.addEventListener("pointermove", move);
    window.addEventListener("pointerup", up);
    this.endDrag = up;
  }

  /** Pan so that a unit's box is in the middle of the view, zooming in if it is tiny. */
  centre(u) {
    const box = this.boxes.get(gcUnitKey(u));
    if (!box) return;
    const vw = this.viewport.clientWidth || 800;
    const vh = this.viewport.clientHeight || 560;
    const v = this.view;
    if (v.k < 0.7) v.k = 0.9;
    v.x = vw / 2 - (box.x + box.w / 2) * v.k;
    v.y = vh / 2 - (box.y + box.h / 2) * v.k;
    this.applyView();
  }

  // ---- interaction -----------------------------------------------------------------------

  click(e) {
    if (this.dragged) return;
    const hit = e.target.closest("[data-node], [data-group]");
    if (!hit) return;
    if (hit.dataset.node !== undefined) {
      this.choose(Number(hit.dataset.node), false);
      return;
    }
    const g = this.findGroup(hit.dataset.group);
    if (!g) return;
    // Keep the clicked box where it was on screen while the layout changes around it.
    const before = this.boxes.get(gcUnitKey(g));
    this.toggle(g);
    this.render();
    const after = this.boxes.get(gcUnitKey(g));
    this.view.x += (before.x - after.x) * this.view.k;
    this.view.y += (before.y - after.y) * this.view.k;
    this.applyView();
    this.update(this.selection);
  }

  findGroup(key) {
    const walk = (g) => {
      if (g.key === key) return g;
      for (const k of g.kids) {
        if (typeof k === "number") continue;
        const hit = walk(k);
        if (hit) return hit;
      }
      return null;
    };
    return walk(this.root);
  }

  /** Select node i (through ctx) and show it; `follow` also brings it into view. */
  choose(i, follow) {
    const n = this.nodes[i];
    this.selection = { ...this.selection, node: n.name, src: n.src };
    if (follow) this.reveal(i);
    this.update(this.selection);
    this.ctx.select({ node: n.name, src: n.src });
  }

  /**
   * Open every group around node i, lay out what changed, and pan to the node.
   * @param {number} i
   */
  reveal(i) {
    if (!(i >= 0 && i < this.nodes.length)) return;
    let changed = false;
    for (const g of this.chain[i]) changed = this.toggle(g, true) || changed;
    if (changed) this.render();
    this.centre(i);
    this.update(this.selection);
  }

  runSearch() {
    gcRunSearch(this);
  }

  searchKey(e) {
    gcSearchKey(this, e);
  }

  pick(i) {
    this.results.hidden = true;
    this.choose(i, true);
  }

  // ---- highlighting ----------------------------------------------------------------------

  /**
   * Re-highlight for a selection ({compile, stage, src, node, kernel}) without relayout:
   * the selected source line's nodes in its colour, the selected node and its neighbours,
   * the nodes that went into the selected kernel; a collapsed block stands in for its nodes.
   * @param {{src?: string|null, node?: string|null, kernel?: string|null}} selection
   */
  update(selection) {
    this.selection = selection || {};
    for (const [el, cls] of this.marked) el.classList.remove(...cls);
    this.marked = [];
    const mark = (u, ...cls) => {
      const el = this.unitEls.get(gcUnitKey(u));
      if (el && cls.every(Boolean)) {
        el.classList.add(...cls);
        this.marked.push([el, cls]);
      }
    };
    const src = this.selection.src;
    if (src && this.bySrc.has(src)) {
      const cls = this.ctx.srcClass(src);
      const seen = new Set();
      for (const i of this.bySrc.get(src)) {
        const rep = this.repOf(i);
        if (seen.has(rep)) continue;
        seen.add(rep);
        mark(rep, "gc-src", ...(cls ? [cls] : []));
      }
    }
    // The nodes that went into the selected kernel (and the blocks holding them).
    const kernel = this.selection.kernel;
    if (kernel && this.byKernel.has(kernel)) {
      const seen = new Set();
      for (const i of this.byKernel.get(kernel)) {
        const rep = this.repOf(i);
        if (!seen.has(rep)) mark(rep, "gc-kin");
        seen.add(rep);
      }
    }
    const name = this.selection.node;
    this.sel = name != null && this.byName.has(name) ? this.byName.get(name) : -1;
    this.overlay.replaceChildren();
    if (this.sel >= 0) {
      const n = this.nodes[this.sel];
      const rep = this.repOf(this.sel);
      mark(rep, typeof rep === "number" ? "gc-sel" : "gc-sel-in");
      for (const j of n.inputs || []) this.neighbour(rep, this.repOf(j), true, mark);
      for (const j of n.users || []) this.neighbour(rep, this.repOf(j), false, mark);
    }
    this.renderSide();
  }

  neighbour(rep, other, isInput, mark) {
    if (other === rep) return;
    mark(other, isInput ? "gc-nb-in" : "gc-nb-out");
    const a = this.boxes.get(gcUnitKey(isInput ? other : rep));
    const b = this.boxes.get(gcUnitKey(isInput ? rep : other));
    if (!a || !b) return;
    const p = { x: a.x + a.w / 2, y: a.y + a.h };
    const q = { x: b.x + b.w / 2, y: b.y };
    this.overlay.append(
      gcSvg("path", { d: gcPathD([p, q]), class: `gc-nb-edge ${isInput ? "gc-nb-in" : "gc-nb-out"}` }),
    );
  }

  renderSide() {
    gcRenderSide(this);
  }

  destroy() {
    for (const [target, type, fn, opts] of this.listeners) target.removeEventListener(type, fn, opts);
    this.listeners = [];
    if (this.endDrag) this.endDrag();
    if (this.resizer) this.resizer.disconnect();
    this.el.remove();
  }
}

export { GraphCanvas };
