// @ts-check
// The graph canvas: one FX/ATen graph pane, grouped by module, laid out when opened.
// The tree (tree.js), the layout (layout.js), the drawing helpers (draw.js) and the
// search and side panel (panel.js), all in this folder, are its parts.
// Only the visible units are laid out: a collapsed group is one box, an expanded group
// lays out its own children once (cached), so opening a block re-lays out that block and
// the few levels above it, never the whole graph.

/** @import { GcNode, GcGroup, GcUnit } from "./tree.js" */
/** @import { LayeredLayout, LayoutUnit, Point } from "./layout.js" */
/** @import { Selection } from "../panes/typedefs.js" */

/** @typedef {{x: number, y: number, w: number, h: number}} GcBox  a unit's box in the world */
/** @typedef {Partial<Pick<Selection, "src"|"node"|"kernel">>} GcSelection  what the canvas shows */
/** @import { Ctx } from "../util.js" */
import { GC_LABEL_MAX, gcEl, gcSvg, gcClip, gcShortTarget, gcMetaText, gcGroupNote, gcUnitKey, gcPathD } from "./draw.js";
import { gcBuildTree, gcGroupEdges, gcOpenDefault } from "./tree.js";
import { gcLayeredLayout } from "./layout.js";
import { gcRunSearch, gcSearchKey, gcRenderSide } from "./panel.js";

const GC_OPEN_SCALE = 0.6; // smallest zoom a graph opens at
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
    /** @type {Map<string, number>} */
    this.byName = new Map();
    /** @type {Map<string, number[]>} */
    this.bySrc = new Map();
    /** @type {Map<string, number[]>} */
    this.byKernel = new Map();
    this.nodes.forEach((n, i) => {
      for (const k of n.kernels || []) {
        const list = this.byKernel.get(k);
        if (list) list.push(i);
        else this.byKernel.set(k, [i]);
      }
      if (!this.byName.has(n.name)) this.byName.set(n.name, i);
      if (n.src) {
        const list = this.bySrc.get(n.src);
        if (list) list.push(i);
        else this.bySrc.set(n.src, [i]);
      }
    });
    const tree = gcBuildTree(this.nodes);
    this.root = tree.root;
    this.chain = tree.chain;
    /** @type {Set<GcGroup>} */
    this.expanded = new Set([this.root]);
    this.view = { x: 0, y: 0, k: 1 };
    this.sel = -1;
    /** @type {GcSelection} */
    this.selection = ctx.selection || {};
    /** @type {[Element, string[]][]} the highlighted units and their classes */
    this.marked = [];
    /** @type {[EventTarget, string, (e: any) => void, AddEventListenerOptions|undefined][]} */
    this.listeners = [];
    this.stats = { nodes: this.nodes.length, units: 0, openMs: 0, layoutMs: 0, renderMs: 0 };
    /** @type {number[]} the search's hits, and the one the arrow keys are on */
    this.hits = [];
    this.hitAt = 0;
    this.dragged = false;
    /** @type {(() => void)|null} ends a drag in progress */
    this.endDrag = null;
    /** @type {ResizeObserver|null} */
    this.resizer = null;
    /** @type {Map<string, GcBox>} every visible unit's box, by gcUnitKey */
    this.boxes = new Map();
    /** @type {Map<GcGroup, Point>} each expanded group's inner origin */
    this.origins = new Map();
    /** @type {Map<string, SVGElement>} */
    this.unitEls = new Map();
    this.world = { w: 0, h: 0 };
    this.el = gcEl("div", "gc");
    this.search = gcEl("input", "gc-search");
    this.results = gcEl("div", "gc-results");
    this.viewport = gcEl("div", "gc-view");
    this.info = gcEl("span", "gc-info");
    this.side = gcEl("div", "gc-side");
    this.svg = gcSvg("svg", { class: "gc-svg" });
    this.worldEl = gcSvg("g", { class: "gc-world" });
    this.overlay = gcSvg("g", { class: "gc-overlay" });
    this.buildDom();
    gcOpenDefault(this.root, this.expanded);
    this.render();
    this.fit(true);
    this.update(this.selection);
    this.stats.openMs = performance.now() - t0;
    if (!this.viewport.clientWidth && typeof ResizeObserver !== "undefined") {
      // Opened while hidden (a pane in a closed tab): fit once it gets a size.
      const resizer = new ResizeObserver(() => {
        if (!this.viewport.clientWidth) return;
        resizer.disconnect();
        this.resizer = null;
        this.fit(true);
      });
      this.resizer = resizer;
      resizer.observe(this.viewport);
    }
  }

  // ---- structure -------------------------------------------------------------------------

  /** The box that shows node i now: the node, or its outermost collapsed group. @param {number} i @returns {GcUnit} */
  repOf(i) {
    for (const g of this.chain[i]) if (!this.expanded.has(g)) return g;
    return i;
  }

  /** @param {GcGroup} g @param {boolean} [open] @returns {boolean} whether it changed */
  toggle(g, open = !this.expanded.has(g)) {
    if (open === this.expanded.has(g)) return false;
    if (open) this.expanded.add(g);
    else this.expanded.delete(g);
    for (let a = g.parent; a; a = a.parent) a.layout = null;
    return true;
  }

  // ---- layout ----------------------------------------------------------------------------

  /** @param {GcUnit} u @returns {LayoutUnit} */
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

  /** @param {GcGroup} g @returns {LayeredLayout & {sizes: LayoutUnit[]}} */
  layoutOf(g) {
    if (g.layout) return g.layout;
    const sizes = g.kids.map((k) => this.sizeOf(k));
    const edges = gcGroupEdges(g, this.nodes, this.chain);
    const layout = { ...gcLayeredLayout(sizes, edges), sizes };
    g.layout = layout;
    return layout;
  }

  /** Absolute boxes of every visible unit, and each expanded group's inner origin. */
  place() {
    this.boxes = new Map();
    this.origins = new Map();
    /** @param {GcGroup} g @param {number} ox @param {number} oy */
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
    const l = this.layoutOf(this.root);
    this.world = { w: l.width, h: l.height };
  }

  // ---- DOM -------------------------------------------------------------------------------

  buildDom() {
    const bar = gcEl("div", "gc-bar");
    this.search.type = "search";
    this.search.placeholder = "find node (name or op)";
    this.search.setAttribute("aria-label", "find a node by name or target");
    this.results.hidden = true;
    const searchBox = gcEl("div", "gc-searchbox");
    searchBox.append(this.search, this.results);
    const zoomIn = gcEl("button", "gc-btn", "+");
    zoomIn.title = "zoom in (or Ctrl + wheel)";
    const zoomOut = gcEl("button", "gc-btn", "−");
    zoomOut.title = "zoom out (or Ctrl + wheel)";
    const fit = gcEl("button", "gc-btn", "fit");
    fit.title = "fit the graph in the view";
    const reset = gcEl("button", "gc-btn", "collapse");
    reset.title = "collapse every block";
    bar.append(searchBox, this.info, zoomIn, zoomOut, fit, reset);
    const saved = this.nodes.filter((n) => n.saved).length;
    if (saved) bar.append(gcEl("span", "gc-legend gc-legend-saved", `● saved for backward (${saved})`));
    const body = gcEl("div", "gc-body");
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
    this.svg.append(defs, this.worldEl);
    this.viewport.append(this.svg);
    body.append(this.viewport, this.side);
    this.el.append(bar, body);
    this.host.append(this.el);

    const zoomMiddle = (/** @type {number} */ f) => this.zoomAt(this.viewport.clientWidth / 2, this.viewport.clientHeight / 2, f);
    this.on(zoomIn, "click", () => zoomMiddle(1.25));
    this.on(zoomOut, "click", () => zoomMiddle(0.8));
    this.on(fit, "click", () => this.fit(false));
    this.on(reset, "click", () => {
      this.expanded = new Set([this.root]);
      this.clearLayouts(this.root);
      gcOpenDefault(this.root, this.expanded);
      this.render();
      this.fit(true);
    });
    this.on(this.search, "input", () => gcRunSearch(this));
    this.on(this.search, "keydown", (e) => gcSearchKey(this, e));
    this.on(this.search, "blur", () => setTimeout(() => (this.results.hidden = true), 150));
    this.on(this.svg, "wheel", (e) => this.wheel(e), { passive: false });
    this.on(this.svg, "pointerdown", (e) => this.pointerDown(e));
    this.on(this.svg, "click", (e) => this.click(e));
  }

  /**
   * addEventListener, undone by destroy().
   * @param {EventTarget} target @param {string} type @param {(e: any) => void} fn
   * @param {AddEventListenerOptions} [opts]
   */
  on(target, type, fn, opts) {
    target.addEventListener(type, fn, opts);
    this.listeners.push([target, type, fn, opts]);
  }

  /** @param {GcGroup} g */
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
    /** @param {GcGroup} g */
    const walk = (g) => {
      const origin = /** @type {Point} */ (this.origins.get(g));
      const l = this.layoutOf(g);
      for (const [e, [a, b]] of gcGroupEdges(g, this.nodes, this.chain).entries()) {
        const pts = l.routes[e].map((p) => ({ x: p.x + origin.x, y: p.y + origin.y }));
        const path = gcSvg("path", { d: gcPathD(pts), class: "gc-edge" });
        path.dataset.from = gcUnitKey(g.kids[a]);
        path.dataset.to = gcUnitKey(g.kids[b]);
        edges.append(path);
      }
      for (const k of g.kids) {
        const box = /** @type {GcBox} */ (this.boxes.get(gcUnitKey(k)));
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

  /** @param {GcGroup} g @param {GcBox} box */
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

  /** @param {GcUnit} u @param {GcBox} box */
  unitEl(u, box) {
    const group = typeof u !== "number";
    const cls = typeof u !== "number"
      ? "gc-unit gc-group" + (u.synthetic ? " gc-synthetic" : "")
      : `gc-unit gc-node gc-op-${this.nodes[u].op}`;
    const el = gcSvg("g", { class: cls, transform: `translate(${box.x},${box.y})` });
    el.append(gcSvg("rect", { width: box.w, height: box.h, rx: group ? 6 : 4 }));
    const a = gcSvg("text", { x: 8, y: 14, class: "gc-t1" });
    const b = gcSvg("text", { x: 8, y: group ? 31 : 28, class: "gc-t2" });
    const title = gcSvg("title", {});
    if (typeof u !== "number") {
      a.textContent = `▸ ${gcClip(u.label)}`;
      b.textContent = gcClip(gcGroupNote(u));
      el.dataset.group = u.key;
      title.textContent = u.key.replace(/\u0001.*/, "") || u.label;
    } else {
      const n = this.nodes[u];
      a.textContent = gcClip(n.name);
      b.textContent = gcClip(`${gcShortTarget(n)} ${gcMetaText(n.meta && n.meta[0])}`);
      el.dataset.node = String(u);
      if (n.kernels && n.kernels.length) el.classList.add("gc-has-kernel");
      // an outline and a dot: the dot stays when the selection recolours the outline
      if (n.saved) {
        el.classList.add("gc-saved");
        el.append(gcSvg("circle", { cx: box.w - 7, cy: 7, r: 4, class: "gc-saved-dot" }));
      }
      title.textContent = `${n.name} = ${n.target}`;
    }
    el.append(title, a, b);
    this.unitEls.set(gcUnitKey(u), el);
    return el;
  }

  // ---- pan and zoom ----------------------------------------------------------------------

  applyView() {
    const v = this.view;
    this.worldEl.setAttribute("transform", `translate(${v.x},${v.y}) scale(${v.k})`);
  }

  /** Fit the graph in the view; on open, keep text readable (full width, from the top). @param {boolean} onOpen */
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

  /** Wheel and trackpad scroll pan; with Ctrl or Cmd (and trackpad pinch) they zoom. @param {WheelEvent} e */
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

  /** @param {number} px @param {number} py @param {number} factor */
  zoomAt(px, py, factor) {
    const v = this.view;
    const k = Math.min(3, Math.max(0.05, v.k * factor));
    v.x = px - ((px - v.x) * k) / v.k;
    v.y = py - ((py - v.y) * k) / v.k;
    v.k = k;
    this.applyView();
  }

  /** @param {PointerEvent} e */
  pointerDown(e) {
    if (e.button !== 0) return;
    const start = { x: e.clientX, y: e.clientY, vx: this.view.x, vy: this.view.y };
    this.dragged = false;
    const move = (/** @type {PointerEvent} */ m) => {
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

  /** Pan so that a unit's box is in the middle of the view, zooming in if it is tiny. @param {GcUnit} u */
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

  /** @param {MouseEvent} e */
  click(e) {
    if (this.dragged) return;
    const hit = /** @type {Element} */ (e.target).closest("[data-node], [data-group]");
    if (!(hit instanceof HTMLElement || hit instanceof SVGElement)) return;
    if (!hit) return;
    if (hit.dataset.node !== undefined) {
      this.choose(Number(hit.dataset.node), false);
      return;
    }
    const g = this.findGroup(hit.dataset.group || "");
    if (!g) return;
    // Keep the clicked box where it was on screen while the layout changes around it.
    const before = this.boxes.get(gcUnitKey(g));
    this.toggle(g);
    this.render();
    const after = this.boxes.get(gcUnitKey(g));
    if (!before || !after) return;
    this.view.x += (before.x - after.x) * this.view.k;
    this.view.y += (before.y - after.y) * this.view.k;
    this.applyView();
    this.update(this.selection);
  }

  /** @param {string} key @returns {GcGroup|null} */
  findGroup(key) {
    /** @param {GcGroup} g @returns {GcGroup|null} */
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

  /** Select node i (through ctx) and show it; `follow` also brings it into view. @param {number} i @param {boolean} follow */
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

  /** @param {number} i */
  pick(i) {
    this.results.hidden = true;
    this.choose(i, true);
  }

  // ---- highlighting ----------------------------------------------------------------------

  /**
   * Re-highlight for a selection ({compile, stage, src, node, kernel}) without relayout:
   * the selected source line's nodes in its colour, the selected node and its neighbours,
   * the nodes that went into the selected kernel; a collapsed block stands in for its nodes.
   * @param {GcSelection} selection
   */
  update(selection) {
    this.selection = selection || {};
    for (const [el, cls] of this.marked) el.classList.remove(...cls);
    this.marked = [];
    /** @param {GcUnit} u @param {string[]} cls */
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
      for (const i of this.bySrc.get(src) || []) {
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
      for (const i of this.byKernel.get(kernel) || []) {
        const rep = this.repOf(i);
        if (!seen.has(rep)) mark(rep, "gc-kin");
        seen.add(rep);
      }
    }
    const name = this.selection.node;
    const at = name != null ? this.byName.get(name) : undefined;
    this.sel = at === undefined ? -1 : at;
    this.overlay.replaceChildren();
    if (this.sel >= 0) {
      const n = this.nodes[this.sel];
      const rep = this.repOf(this.sel);
      mark(rep, typeof rep === "number" ? "gc-sel" : "gc-sel-in");
      for (const j of n.inputs || []) this.neighbour(rep, this.repOf(j), true, mark);
      for (const j of n.users || []) this.neighbour(rep, this.repOf(j), false, mark);
    }
    gcRenderSide(this);
  }

  /**
   * @param {GcUnit} rep @param {GcUnit} other @param {boolean} isInput
   * @param {(u: GcUnit, ...cls: string[]) => void} mark
   */
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

  destroy() {
    for (const [target, type, fn, opts] of this.listeners) target.removeEventListener(type, fn, opts);
    this.listeners = [];
    if (this.endDrag) this.endDrag();
    if (this.resizer) this.resizer.disconnect();
    this.el.remove();
  }
}

export { GraphCanvas };
