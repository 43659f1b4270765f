// @ts-check
/**
 * The torch.compile explorer front-end: one ES module, no bundler, no network imports.
 *
 * anywidget calls `render({ model, el })`. `model.get("view")` is the dict from
 * `explorer.view_model.build_view` (its shape is documented there) and
 * `model.get("selection")` is `{compile, stage, src, node, kernel}`. The offline
 * HTML export inlines this file and calls `render` with a small fake model.
 *
 * Safety: every piece of data goes into the DOM through `textContent` or
 * `setAttribute` on attributes we name; the only raw markup is Graphviz's SVG, which
 * goes through `insertTrustedSvg` alone.
 */

/**
 * @typedef {{compile: string|null, stage: string|null, src: string|null,
 *            node: string|null, kernel: string|null}} Selection
 * @typedef {[string, string]} Token
 * @typedef {{language: string, lines: Token[][], line_src: (string|null)[],
 *            line_node?: (number|null)[], line_kernel?: (string|null)[]}} Text
 * @typedef {{name: string, op: string, target: string, args: string[],
 *            kwargs: Object<string,string>, meta: {dtype: string, shape: string[],
 *            stride: string[], device: string}[], module: string, line: number,
 *            group: string[], inputs: number[], users: number[], src: string|null,
 *            loc: string, code: string, kernels: string[]}} GNode
 * @typedef {{id: string, name: string, language: string, first_line: number,
 *            last_line: number, call_lines: number[], post_grad_nodes: string[],
 *            source_nodes: string[], src: string[], timing?: any, grid?: number[]}} KernelInfo
 * @typedef {{id: string, stage: string, label: string, kind: string,
 *            errors: {stage: string, message: string}[], [key: string]: any}} Pane
 * @typedef {{id: string, compile_id: string, rank: number|null, label: string,
 *            code_name: string, status: string, is_resume: boolean, attempts: number,
 *            markers: string[], parent: string|null, src: string|null,
 *            errors: {stage: string, message: string}[], panes: Pane[]}} CompileView
 * @typedef {{get(name: string): any, set(name: string, value: any): void,
 *            on(event: string, cb: Function): void, off(event: string, cb: Function): void,
 *            save_changes(): void, send(msg: any): void}} Model
 * @typedef {{update(): void, destroy?: () => void}} PaneHandle
 */

const PALETTE = 8;
const LINE_H = 18; // px; must match .tce-row in explorer.css
const VIRTUAL_MIN_LINES = 1500; // longer code panes render only the rows in view
const GROUP_EXPAND_LIMIT = 200; // built-in graphs show at most this many boxes at first
const SVGNS = "http://www.w3.org/2000/svg";
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

/**
 * @param {string} tag
 * @param {Object<string, string|number>} [attrs]
 * @returns {SVGElement}
 */
function svgEl(tag, attrs = {}) {
  const el = document.createElementNS(SVGNS, tag);
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, String(v));
  return /** @type {SVGElement} */ (el);
}

/**
 * Insert the SVG that Graphviz made for us. This is the only raw-markup insertion.
 * It is safe because the SVG comes from our own `dot -Tsvg` run on a DOT source whose
 * labels were quoted and escaped in Python (`_graph_view.dot_source`), and Graphviz
 * escapes text in its SVG output. It is parsed as XML (never as HTML), and we still
 * drop anything active defensively: script/foreignObject/iframe elements, on*
 * attributes and non-fragment links.
 * @param {HTMLElement} host
 * @param {string} svgText
 * @returns {SVGSVGElement|null}
 */
function insertTrustedSvg(host, svgText) {
  const doc = new DOMParser().parseFromString(svgText, "image/svg+xml");
  const svg = doc.documentElement;
  if (!svg || svg.nodeName !== "svg" || doc.getElementsByTagName("parsererror").length) {
    return null;
  }
  for (const bad of Array.from(svg.querySelectorAll("script, foreignObject, iframe, object, embed"))) {
    bad.remove();
  }
  for (const el of [svg, ...Array.from(svg.querySelectorAll("*"))]) {
    for (const attr of Array.from(el.attributes)) {
      const name = attr.name.toLowerCase();
      const isLink = name === "href" || name.endsWith(":href");
      if (name.startsWith("on") || (isLink && !attr.value.startsWith("#"))) {
        el.removeAttribute(attr.name);
      }
    }
  }
  const node = /** @type {SVGSVGElement} */ (document.importNode(svg, true));
  host.append(node);
  return node;
}

/** @param {Token[]} tokens @param {HTMLElement} into */
function appendTokens(tokens, into) {
  for (const [cls, text] of tokens) {
    if (cls) into.append(h("span", { cls: "t-" + cls, text }));
    else into.append(document.createTextNode(text));
  }
}

/** @param {string} text */
function truncate(text, n = 26) {
  return text.length > n ? text.slice(0, n - 1) + "…" : text;
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

/** @param {string} key */
function shortSrc(key) {
  const i = key.lastIndexOf(":");
  const file = key.slice(0, i);
  return file.slice(file.lastIndexOf("/") + 1) + ":" + key.slice(i + 1);
}

// ---------------------------------------------------------------------------------
// Code view: line numbers, tokens, per-line classes; virtualised when long.

class CodeView {
  /**
   * @param {Text} text
   * @param {{lineClass: (i: number) => string, onLine?: (i: number) => void,
   *          firstLine?: number}} opts
   */
  constructor(text, opts) {
    this.text = text;
    this.opts = opts;
    this.n = text.lines.length;
    this.virtual = this.n > VIRTUAL_MIN_LINES;
    this.el = h("div", { cls: "tce-code" + (this.virtual ? " tce-virtual" : "") });
    this.rows = h("div", { cls: "tce-rows" });
    /** @type {Map<number, HTMLElement>} */
    this.rendered = new Map();
    this.digits = String(this.n + (opts.firstLine || 1)).length;
    this.el.style.setProperty("--tce-gutter", `${this.digits + 1}ch`);
    if (this.virtual) {
      const spacer = h("div", { cls: "tce-spacer" });
      spacer.style.height = `${this.n * LINE_H}px`;
      this.el.append(spacer, this.rows);
      this.pending = false;
      this.el.addEventListener("scroll", () => {
        if (this.pending) return;
        this.pending = true;
        requestAnimationFrame(() => {
          this.pending = false;
          this.drawWindow();
        });
      });
      requestAnimationFrame(() => this.drawWindow());
      this.drawWindow(40);
    } else {
      for (let i = 0; i < this.n; i++) this.rows.append(this.row(i));
      this.el.append(this.rows);
    }
    this.el.addEventListener("click", (ev) => {
      const row = /** @type {HTMLElement|null} */ (
        /** @type {HTMLElement} */ (ev.target).closest(".tce-row")
      );
      if (row && opts.onLine) opts.onLine(Number(row.dataset.i));
    });
  }

  /** @param {number} i */
  row(i) {
    const row = h("div", { cls: "tce-row " + this.opts.lineClass(i), attrs: { "data-i": String(i) } });
    row.append(h("span", { cls: "tce-ln", text: String(i + (this.opts.firstLine || 1)) }));
    const code = h("span", { cls: "tce-src" });
    appendTokens(this.text.lines[i], code);
    row.append(code);
    if (this.virtual) {
      row.style.top = `${i * LINE_H}px`;
    }
    this.rendered.set(i, row);
    return row;
  }

  /** @param {number} [minRows] */
  drawWindow(minRows = 0) {
    const top = this.el.scrollTop;
    const height = Math.max(this.el.clientHeight, minRows * LINE_H);
    const first = Math.max(0, Math.floor(top / LINE_H) - 20);
    const last = Math.min(this.n - 1, Math.ceil((top + height) / LINE_H) + 20);
    for (const [i, row] of this.rendered) {
      if (i < first || i > last) {
        row.remove();
        this.rendered.delete(i);
      }
    }
    for (let i = first; i <= last; i++) {
      if (!this.rendered.has(i)) this.rows.append(this.row(i));
    }
  }

  refresh() {
    for (const [i, row] of this.rendered) row.className = "tce-row " + this.opts.lineClass(i);
  }

  /** @param {number} i 0-based line */
  scrollTo(i) {
    this.el.scrollTop = Math.max(0, i * LINE_H - this.el.clientHeight / 3);
    if (this.virtual) this.drawWindow();
  }
}

// ---------------------------------------------------------------------------------
// Built-in graph renderer: layered layout, module groups, viewport virtualisation.

const NODE_W = 190;
const NODE_H = 34;
const GAP_X = 24;
const GAP_Y = 26;
const ROW_MAX = 6;

class BuiltinGraph {
  /**
   * @param {GNode[]} nodes
   * @param {Set<string>|null} expanded (null: choose the initial expansion)
   * @param {{nodeClass: (i: number) => string, groupClass: (members: number[]) => string,
   *          onNode: (i: number) => void, onExpand: (expanded: Set<string>) => void}} opts
   */
  constructor(nodes, expanded, opts) {
    this.nodes = nodes;
    this.opts = opts;
    /** @type {Map<string, number[]>} group key -> member node indices */
    this.groups = new Map();
    nodes.forEach((n, i) => {
      for (let d = 1; d <= n.group.length; d++) {
        const key = n.group.slice(0, d).join("/");
        let list = this.groups.get(key);
        if (!list) this.groups.set(key, (list = []));
        list.push(i);
      }
    });
    this.expanded = expanded || this.initialExpansion();
    this.el = h("div", { cls: "tce-gscroll" });
    this.space = h("div", { cls: "tce-gspace" });
    this.svg = svgEl("svg", { class: "tce-gsvg" });
    const defs = svgEl("defs");
    const marker = svgEl("marker", {
      id: "tce-arrow", viewBox: "0 0 10 10", refX: 10, refY: 5, markerWidth: 7, markerHeight: 7,
      orient: "auto-start-reverse",
    });
    marker.append(svgEl("path", { d: "M 0 0 L 10 5 L 0 10 z", class: "tce-arrowhead" }));
    defs.append(marker);
    this.layer = svgEl("g");
    this.svg.append(defs, this.layer);
    this.el.append(this.space, this.svg);
    this.pending = false;
    this.el.addEventListener("scroll", () => this.schedule());
    this.el.addEventListener("click", (ev) => {
      const g = /** @type {Element} */ (ev.target).closest("[data-unit]");
      if (!g) return;
      const unit = this.units[Number(g.getAttribute("data-unit"))];
      if (unit.kind === "group") {
        this.expanded.add(unit.key);
        this.relayout();
        opts.onExpand(this.expanded);
      } else {
        opts.onNode(unit.nodes[0]);
      }
    });
    this.layout();
  }

  /** Expand groups breadth-first while the number of boxes stays small. */
  initialExpansion() {
    const all = new Set(this.groups.keys());
    if (this.nodes.length <= GROUP_EXPAND_LIMIT) return all;
    /** @type {Set<string>} */
    const expanded = new Set();
    const top = new Set();
    this.nodes.forEach((n, i) => top.add(n.group.length ? "g:" + n.group[0] : "n:" + i));
    let count = top.size;
    const depth = (/** @type {string} */ k) => k.split("/").length;
    const keys = [...all].sort((a, b) => depth(a) - depth(b) ||
      (this.groups.get(a) || []).length - (this.groups.get(b) || []).length);
    for (const key of keys) {
      const parent = key.includes("/") ? key.slice(0, key.lastIndexOf("/")) : null;
      if (parent !== null && !expanded.has(parent)) continue;
      const next = count - 1 + this.childCount(key);
      if (next <= GROUP_EXPAND_LIMIT) {
        expanded.add(key);
        count = next;
      }
    }
    return expanded;
  }

  /** How many boxes a group becomes when expanded. @param {string} key */
  childCount(key) {
    const d = key.split("/").length;
    const seen = new Set();
    for (const i of this.groups.get(key) || []) {
      const path = this.nodes[i].group;
      seen.add(path.length > d ? "g:" + path.slice(0, d + 1).join("/") : "n:" + i);
    }
    return seen.size;
  }

  /** @param {GNode} n @param {number} i @param {Set<string>} expanded */
  unitKey(n, i, expanded) {
    for (let d = 1; d <= n.group.length; d++) {
      const key = n.group.slice(0, d).join("/");
      if (!expanded.has(key)) return "g:" + key;
    }
    return "n:" + i;
  }

  layout() {
    /** @type {{key: string, kind: string, nodes: number[], label: string, x: number, y: number}[]} */
    const units = [];
    /** @type {Map<string, number>} */
    const index = new Map();
    const unitOf = new Int32Array(this.nodes.length);
    this.nodes.forEach((n, i) => {
      const key = this.unitKey(n, i, this.expanded);
      let u = index.get(key);
      if (u === undefined) {
        u = units.length;
        index.set(key, u);
        const kind = key.startsWith("g:") ? "group" : "node";
        units.push({ key: key.slice(2), kind, nodes: [], label: "", x: 0, y: 0 });
      }
      units[u].nodes.push(i);
      unitOf[i] = u;
    });
    /** @type {number[][]} */
    const incoming = units.map(() => []);
    const edgeSet = new Set();
    /** @type {[number, number][]} */
    const edges = [];
    this.nodes.forEach((n, i) => {
      const b = unitOf[i];
      for (const j of n.inputs) {
        const a = unitOf[j];
        if (a === b) continue;
        const k = a * 1e6 + b;
        if (edgeSet.has(k)) continue;
        edgeSet.add(k);
        edges.push([a, b]);
        if (a < b) incoming[b].push(a);
      }
    });
    const rank = new Int32Array(units.length);
    for (let u = 0; u < units.length; u++) {
      for (const a of incoming[u]) rank[u] = Math.max(rank[u], rank[a] + 1);
    }
    /** @type {number[][]} */
    const byRank = [];
    for (let u = 0; u < units.length; u++) (byRank[rank[u]] ||= []).push(u);
    const width = Math.min(ROW_MAX, Math.max(1, ...byRank.map((r) => (r ? r.length : 0))));
    const totalW = width * (NODE_W + GAP_X) + GAP_X;
    let y = GAP_Y;
    for (const row of byRank) {
      if (!row) continue;
      // barycentre ordering: place each box under the boxes it reads from
      const bary = new Map(row.map((u) => {
        const ins = incoming[u];
        return [u, ins.length ? ins.reduce((acc, a) => acc + units[a].x, 0) / ins.length : 1e9 + u];
      }));
      if (y > GAP_Y) row.sort((p, q) => /** @type {number} */ (bary.get(p)) - /** @type {number} */ (bary.get(q)));
      for (let s = 0; s < row.length; s += ROW_MAX) {
        const chunk = row.slice(s, s + ROW_MAX);
        const rowW = chunk.length * (NODE_W + GAP_X) - GAP_X;
        let x = (totalW - rowW) / 2;
        for (const u of chunk) {
          units[u].x = x;
          units[u].y = y;
          x += NODE_W + GAP_X;
        }
        y += NODE_H + GAP_Y;
      }
    }
    for (const u of units) {
      if (u.kind === "group") {
        u.label = `▸ ${u.key.split("/").pop()} (${u.nodes.length.toLocaleString()} nodes)`;
      }
    }
    this.units = units;
    this.unitOf = unitOf;
    this.edges = edges;
    this.order = units.map((_, i) => i).sort((a, b) => units[a].y - units[b].y);
    this.width = totalW;
    this.height = y + GAP_Y;
    this.space.style.width = `${this.width}px`;
    this.space.style.height = `${this.height}px`;
    this.draw();
  }

  relayout() {
    this.layout();
  }

  schedule() {
    if (this.pending) return;
    this.pending = true;
    requestAnimationFrame(() => {
      this.pending = false;
      this.draw();
    });
  }

  draw() {
    const vw = this.el.clientWidth || 800;
    const vh = this.el.clientHeight || 600;
    const left = this.el.scrollLeft;
    const top = this.el.scrollTop;
    const margin = 200;
    const lo = top - margin;
    const hi = top + vh + margin;
    this.svg.setAttribute("width", String(vw));
    this.svg.setAttribute("height", String(vh));
    this.svg.style.left = `${left}px`;
    this.svg.style.top = `${top}px`;
    this.layer.setAttribute("transform", `translate(${-left},${-top})`);
    this.layer.replaceChildren();
    const units = this.units;
    const edgeG = svgEl("g", { class: "tce-edges" });
    for (const [a, b] of this.edges) {
      const ua = units[a];
      const ub = units[b];
      const y1 = ua.y + NODE_H;
      const y2 = ub.y;
      if (Math.max(y1, y2) < lo || Math.min(y1, y2) > hi) continue;
      const x1 = ua.x + NODE_W / 2;
      const x2 = ub.x + NODE_W / 2;
      const dy = Math.max(20, Math.abs(y2 - y1) / 2);
      const back = y2 <= y1;
      const d = back
        ? `M${x1},${y1} C${x1 + 80},${y1 + dy} ${x2 + 80},${y2 - dy} ${x2},${y2}`
        : `M${x1},${y1} C${x1},${y1 + dy} ${x2},${y2 - dy} ${x2},${y2}`;
      edgeG.append(svgEl("path", { d, class: "tce-edge", "marker-end": "url(#tce-arrow)" }));
    }
    this.layer.append(edgeG);
    /** @type {Map<number, SVGElement>} */
    this.drawn = new Map();
    // binary search the first unit at or below `lo`
    const order = this.order;
    let a = 0;
    let b = order.length;
    while (a < b) {
      const m = (a + b) >> 1;
      if (units[order[m]].y + NODE_H < lo) a = m + 1;
      else b = m;
    }
    for (let k = a; k < order.length && units[order[k]].y <= hi; k++) {
      const u = order[k];
      const unit = units[u];
      if (unit.x + NODE_W < left - margin || unit.x > left + vw + margin) continue;
      const g = svgEl("g", { "data-unit": u, transform: `translate(${unit.x},${unit.y})` });
      g.append(svgEl("rect", { width: NODE_W, height: NODE_H, rx: 5, ry: 5 }));
      if (unit.kind === "group") {
        const t = svgEl("text", { x: 8, y: 21 });
        t.textContent = truncate(unit.label, 30);
        g.append(t);
        const title = svgEl("title");
        title.textContent = `${unit.key}: click to expand`;
        g.append(title);
      } else {
        const n = this.nodes[unit.nodes[0]];
        g.setAttribute("id", `b-${unit.nodes[0]}`);
        const t1 = svgEl("text", { x: 8, y: 14, class: "tce-gname" });
        t1.textContent = truncate(n.name);
        const shape = n.meta.length ? `${n.meta[0].dtype}[${n.meta[0].shape.join(", ")}]` : "";
        const t2 = svgEl("text", { x: 8, y: 28, class: "tce-gtarget" });
        t2.textContent = truncate(n.op === "placeholder" || n.op === "output" ? n.op + " " + shape : shortTarget(n.target) + " " + shape, 30);
        const title = svgEl("title");
        title.textContent = `${n.name} = ${n.target}${n.group.length ? "  [" + n.group.join("/") + "]" : ""}`;
        g.append(t1, t2, title);
      }
      this.drawn.set(u, g);
      this.layer.append(g);
    }
    this.update();
  }

  update() {
    if (!this.drawn) return;
    for (const [u, g] of this.drawn) {
      const unit = this.units[u];
      const base = unit.kind === "group" ? "tce-gunit tce-ggroup" : `tce-gunit op-${this.nodes[unit.nodes[0]].op}`;
      const extra = unit.kind === "group" ? this.opts.groupClass(unit.nodes) : this.opts.nodeClass(unit.nodes[0]);
      g.setAttribute("class", `${base} ${extra}`);
    }
  }

  /** @param {number} i */
  reveal(i) {
    const n = this.nodes[i];
    let changed = false;
    for (let d = 1; d <= n.group.length; d++) {
      const key = n.group.slice(0, d).join("/");
      if (!this.expanded.has(key)) {
        this.expanded.add(key);
        changed = true;
      }
    }
    if (changed) {
      this.layout();
      this.opts.onExpand(this.expanded);
    }
    const unit = this.units[this.unitOf[i]];
    this.el.scrollTop = Math.max(0, unit.y - this.el.clientHeight / 2);
    this.el.scrollLeft = Math.max(0, unit.x - this.el.clientWidth / 2 + NODE_W / 2);
    this.draw();
  }

  /** @param {boolean} all */
  setAll(all) {
    this.expanded = all ? new Set(this.groups.keys()) : new Set();
    this.layout();
    this.opts.onExpand(this.expanded);
  }

  /** @returns {string[]} expanded group keys that can be collapsed */
  collapsible() {
    return [...this.expanded].filter((k) => (this.groups.get(k) || []).length > 1);
  }

  /** @param {string} key */
  collapse(key) {
    for (const k of [...this.expanded]) if (k === key || k.startsWith(key + "/")) this.expanded.delete(k);
    this.layout();
    this.opts.onExpand(this.expanded);
  }
}

/** @param {string} target */
function shortTarget(target) {
  if (target.startsWith("torch.ops.")) {
    const parts = target.split(".");
    return parts.length >= 4 ? parts.slice(2, 4).join(".") : target;
  }
  return target;
}

// ---------------------------------------------------------------------------------
// The app: shell, selection routing, and one render function per stage kind.

class App {
  /** @param {Model} model @param {HTMLElement} el */
  constructor(model, el) {
    this.model = model;
    this.host = el;
    this.standalone = Boolean(model.get("_standalone"));
    /** @type {Map<string, Set<string>>} expanded groups per graph pane */
    this.expandedGroups = new Map();
    /** @type {Map<string, string>} graph pane -> "graph" | "text" */
    this.graphMode = new Map();
    /** @type {Map<string, {variant: number, stage: string, line: number|null}>} lowering pane state */
    this.lowered = new Map();
    /** @type {PaneHandle[]} */
    this.handles = [];

    this.root = h("div", { cls: "tce-root" + (this.standalone ? " tce-standalone" : "") });
    el.append(this.root);
    this.onView = () => this.setView(this.model.get("view"));
    this.onSelection = () => this.applySelection(this.model.get("selection"));
    /** @param {any} msg @param {any} [buffers] */
    this.onMsg = (msg, buffers) => this.handleMessage(msg, buffers);
    model.on("change:view", this.onView);
    model.on("change:selection", this.onSelection);
    model.on("msg:custom", this.onMsg);
    this.setView(model.get("view"));
    const w = /** @type {any} */ (window);
    requestAnimationFrame(() =>
      setTimeout(() => {
        if (w.__explorerFirstPaint === undefined) {
          w.__explorerFirstPaint = performance.now();
          performance.mark("tce-first-paint");
        }
      }, 0),
    );
  }

  destroy() {
    this.model.off("change:view", this.onView);
    this.model.off("change:selection", this.onSelection);
    this.model.off("msg:custom", this.onMsg);
    this.root.remove();
  }

  /** @param {any} view */
  setView(view) {
    this.view = view;
    this.root.replaceChildren();
    if (!view || !view.compiles) {
      this.root.append(h("div", { cls: "tce-empty", text: "Nothing to show yet." }));
      return;
    }
    /** @type {Map<string, number>} */
    this.palette = new Map(view.src_keys.map((/** @type {string} */ k, /** @type {number} */ i) => [k, i % PALETTE]));
    this.expandedGroups.clear();
    this.sel = this.normalise(this.model.get("selection"));
    this.buildShell();
    this.renderCompile();
  }

  /** @param {any} raw @returns {Selection} */
  normalise(raw) {
    const view = this.view;
    const def = view.default_selection;
    const s = Object.assign({ compile: null, stage: null, src: null, node: null, kernel: null }, raw || {});
    let c = view.compiles.find((/** @type {CompileView} */ x) => x.id === s.compile);
    if (!c) {
      c = view.compiles.find((/** @type {CompileView} */ x) => x.id === def.compile) || view.compiles[0];
      s.node = null;
    }
    s.compile = c ? c.id : null;
    if (!c || !c.panes.some((p) => p.id === s.stage)) {
      s.stage = c ? this.defaultStage(c, s.stage) : null;
      s.node = null;
    }
    if (s.src && !this.palette.has(s.src)) s.src = null;
    if (s.kernel && !(c && this.kernelInfo(c, s.kernel))) s.kernel = null;
    return s;
  }

  /** @param {CompileView} c @param {string|null} wanted */
  defaultStage(c, wanted) {
    const ids = c.panes.map((p) => p.id);
    if (wanted) {
      // keep the kind of stage when switching compiles: forward/x -> inference/x
      const tail = wanted.split("/").pop();
      const same = ids.find((id) => id.split("/").pop() === tail);
      if (same) return same;
    }
    return ids.includes("dynamo_output_graph") ? "dynamo_output_graph" : ids[0];
  }

  /** @param {Partial<Selection>} change */
  select(change) {
    const next = this.normalise(Object.assign({}, this.sel, change));
    this.model.set("selection", next);
    this.model.save_changes();
    this.applySelection(next);
  }

  /** @param {any} raw */
  applySelection(raw) {
    if (!this.view || !this.view.compiles) return;
    const next = this.normalise(raw);
    const prev = this.sel;
    if (prev && SEL_KEYS.every((k) => prev[k] === next[k])) return;
    this.sel = next;
    if (!prev || prev.compile !== next.compile || prev.stage !== next.stage) {
      this.renderCompile();
    } else {
      this.updateHighlights();
    }
  }

  /** @param {any} msg */
  handleMessage(msg, _buffers = undefined) {
    if (msg && msg.type === "export_html" && typeof msg.html === "string") {
      download(new Blob([msg.html], { type: "text/html" }), this.exportName());
      this.status.textContent = "exported";
    } else if (msg && msg.type === "export_html" && msg.error) {
      this.status.textContent = `export failed: ${msg.error}`;
    }
  }

  exportName() {
    const base = String(this.view.target || "exploration").replace(/[^\w.-]+/g, "_");
    return `torch-compile-explorer-${base}.html`;
  }

  exportHtml() {
    if (this.standalone) {
      const html = "<!DOCTYPE html>\n" + document.documentElement.outerHTML;
      download(new Blob([html], { type: "text/html" }), this.exportName());
      return;
    }
    this.status.textContent = "exporting…";
    this.model.send({ type: "export_html" });
  }

  // --- shell ---------------------------------------------------------------------

  buildShell() {
    const view = this.view;
    const env = view.environment || {};
    const opts = view.options || {};
    const facts = [
      env.torch && `torch ${env.torch}`,
      env.device && `device ${env.device}`,
      opts.backend && `backend ${opts.backend}`,
      opts.mode && `mode ${opts.mode}`,
      view.source === "trace" ? "loaded from a trace" : "",
    ].filter(Boolean).join(" · ");
    this.status = h("span", { cls: "tce-status" });
    const header = h("div", { cls: "tce-header" }, [
      h("span", { cls: "tce-title", text: view.title }),
      h("span", { cls: "tce-facts", text: facts }),
      this.status,
      h("button", {
        cls: "tce-button tce-export", text: "Export HTML",
        title: "Save this view as one self-contained offline HTML file",
        on: { click: () => this.exportHtml() },
      }),
    ]);
    const notes = h("div", { cls: "tce-notes" });
    for (const n of view.notes || []) notes.append(h("div", { cls: "tce-note", text: n }));
    for (const e of view.errors || []) notes.append(h("div", { cls: "tce-error", text: `${e.stage}: ${e.message}` }));
    this.tree = h("nav", { cls: "tce-compiles", attrs: { "aria-label": "compiles" } });
    this.sourcePane = h("section", { cls: "tce-source", attrs: { "aria-label": "source" } });
    this.tabs = h("div", { cls: "tce-tabs", attrs: { role: "tablist", "aria-orientation": "vertical" } });
    this.paneErrors = h("div", { cls: "tce-pane-errors" });
    this.pane = h("div", { cls: "tce-pane" });
    this.details = h("div", { cls: "tce-details" });
    this.paneTitle = h("div", { cls: "tce-pane-title" });
    const stage = h("section", { cls: "tce-stage" }, [this.paneTitle, this.paneErrors, this.pane, this.details]);
    const nav = h("div", { cls: "tce-nav" }, [this.tree, h("div", { cls: "tce-stages" }, [
      h("div", { cls: "tce-heading", text: "Stages" }), this.tabs])]);
    this.root.append(header, notes, h("div", { cls: "tce-main" }, [nav, this.sourcePane, stage]));
    this.renderTree();
    this.renderSource();
  }

  renderTree() {
    const view = this.view;
    /** @type {Map<string|null, CompileView[]>} */
    const children = new Map();
    const ids = new Set(view.compiles.map((/** @type {CompileView} */ c) => c.id));
    for (const c of view.compiles) {
      const parent = c.parent && ids.has(c.parent) ? c.parent : null;
      if (!children.has(parent)) children.set(parent, []);
      /** @type {CompileView[]} */ (children.get(parent)).push(c);
    }
    /** @param {string|null} parent @returns {HTMLElement} */
    const list = (parent) => {
      const ul = h("ul", { cls: "tce-tree" });
      for (const c of children.get(parent) || []) {
        const badges = c.markers.map((m) =>
          h("span", { cls: `tce-badge tce-badge-${m}`, text: MARKER_TEXT[/** @type {keyof MARKER_TEXT} */ (m)] || m }),
        );
        const item = h("button", {
          cls: "tce-compile", attrs: { "data-compile": c.id },
          title: `${c.label} (${c.status})`,
          on: { click: () => this.select({ compile: c.id, stage: this.defaultStage(c, this.sel.stage) }) },
        }, [
          h("span", { cls: "tce-cid", text: c.compile_id + (c.rank !== null ? ` r${c.rank}` : "") }),
          h("span", { cls: "tce-cname", text: c.is_resume ? resumeLabel(c.code_name) : c.code_name || "(unknown frame)" }),
          ...badges,
        ]);
        const li = h("li", {}, [item]);
        if (children.has(c.id)) li.append(list(c.id));
        ul.append(li);
      }
      return ul;
    };
    this.tree.replaceChildren(h("div", { cls: "tce-heading", text: "Compiles" }), list(null));
  }

  renderSource() {
    const view = this.view;
    const box = h("div", { cls: "tce-source-body" });
    /** @type {Map<string, HTMLElement>} */
    this.sourceRows = new Map();
    for (const file of view.sources) {
      const parts = file.filename.split("/");
      const shown = parts.length > 3 ? "…/" + parts.slice(-3).join("/") : file.filename;
      box.append(h("div", { cls: "tce-file", text: shown, title: file.filename }));
      if (file.note) box.append(h("div", { cls: "tce-note", text: file.note }));
      file.windows.forEach((/** @type {{start: number, lines: Token[][]}} */ w, /** @type {number} */ wi) => {
        if (wi > 0) box.append(h("div", { cls: "tce-gap", text: "⋮" }));
        const code = h("div", { cls: "tce-code" });
        code.style.setProperty("--tce-gutter", `${String(w.start + w.lines.length).length + 1}ch`);
        w.lines.forEach((tokens, i) => {
          const line = w.start + i;
          const key = `${file.filename}:${line}`;
          const linked = this.palette.has(key);
          const row = h("div", { cls: "tce-row", attrs: { "data-src": key } });
          row.append(h("span", { cls: "tce-ln", text: String(line) }));
          const src = h("span", { cls: "tce-src" });
          appendTokens(tokens, src);
          row.append(src);
          if (linked) {
            row.dataset.linked = "1";
            row.title = `${shortSrc(key)}: click to see what it became`;
            row.addEventListener("click", () => this.select({ src: this.sel.src === key ? null : key, node: null, kernel: null }));
            this.sourceRows.set(key, row);
          }
          code.append(row);
        });
        box.append(code);
      });
    }
    if (!view.sources.length) box.append(h("div", { cls: "tce-note", text: "No user source lines were recorded." }));
    this.sourcePane.replaceChildren(h("div", { cls: "tce-heading", text: "Source" }), box);
  }

  // --- stage pane ------------------------------------------------------------------

  get compile() {
    return /** @type {CompileView} */ (this.view.compiles.find((/** @type {CompileView} */ c) => c.id === this.sel.compile));
  }

  renderCompile() {
    for (const hd of this.handles) hd.destroy && hd.destroy();
    this.handles = [];
    const c = this.compile;
    for (const b of this.tree.querySelectorAll(".tce-compile")) {
      b.classList.toggle("tce-current", b.getAttribute("data-compile") === this.sel.compile);
    }
    this.tabs.replaceChildren();
    this.pane.replaceChildren();
    this.paneErrors.replaceChildren();
    if (!c) return;
    // the stage navigator: every stage this compile has, under its compiler group
    let group = "";
    for (const p of c.panes) {
      if (p.group !== group) {
        group = p.group;
        this.tabs.append(h("div", { cls: "tce-tabgroup", text: p.group_label || group }));
      }
      this.tabs.append(h("button", {
        cls: "tce-tab" + (p.id === this.sel.stage ? " tce-current" : ""), text: p.label,
        attrs: { role: "tab", "data-stage": p.id, "aria-selected": String(p.id === this.sel.stage) },
        on: { click: () => this.select({ stage: p.id }) },
      }));
    }
    const pane = c.panes.find((p) => p.id === this.sel.stage);
    this.paneTitle.replaceChildren(
      h("span", { cls: "tce-pane-group", text: pane ? pane.group_label : "" }),
      h("span", { text: pane ? pane.label : "" }),
      h("span", { cls: "tce-pane-compile", text: c.label }),
    );
    for (const e of [...c.errors, ...(pane ? pane.errors : [])]) {
      this.paneErrors.append(h("div", { cls: "tce-error", text: `${this.view.labels[e.stage] || e.stage}: ${e.message}` }));
    }
    if (pane) {
      const renderer = RENDERERS[pane.kind] || renderUnknown;
      this.handles.push(renderer(this.pane, pane, this));
    }
    if (!this.activeKeys().size) this.scrollSourceTo(c.src);
    this.updateHighlights();
  }

  /** The source keys to highlight now, each in its own colour. @returns {Set<string>} */
  activeKeys() {
    const s = this.sel;
    if (s.src) return new Set([s.src]);
    if (s.kernel) {
      const k = this.kernelInfo(this.compile, s.kernel);
      if (k) return new Set(k.src);
    }
    return new Set();
  }

  /** @param {string|null|undefined} key @param {Set<string>} [active] */
  hlClass(key, active = this.activeKeys()) {
    return key && active.has(key) ? ` hl hl-${this.palette.get(key)}` : "";
  }

  /** @param {string[]} keys @param {Set<string>} [active] */
  hlAny(keys, active = this.activeKeys()) {
    for (const k of keys) if (active.has(k)) return this.hlClass(k, active);
    return "";
  }

  /** @param {CompileView} c @param {string} id @returns {KernelInfo|undefined} */
  kernelInfo(c, id) {
    for (const p of c.panes) {
      if (p.kind !== "output_code") continue;
      const k = p.kernels.find((/** @type {KernelInfo} */ k) => k.id === id);
      if (k) return k;
    }
    return undefined;
  }

  updateHighlights() {
    const active = this.activeKeys();
    for (const [key, row] of this.sourceRows || []) {
      row.className = "tce-row tce-linked tce-mark-" + this.palette.get(key) + this.hlClass(key, active);
    }
    this.scrollSourceTo([...active][0]);
    for (const hd of this.handles) hd.update();
    this.renderDetails();
  }

  /** @param {string|null|undefined} first */
  scrollSourceTo(first) {
    const body = this.sourcePane.querySelector(".tce-source-body");
    if (first && body && this.sourceRows && this.sourceRows.has(first)) {
      scrollWithin(/** @type {HTMLElement} */ (body), /** @type {HTMLElement} */ (this.sourceRows.get(first)));
    }
  }

  // --- details panel -----------------------------------------------------------------

  renderDetails() {
    const c = this.compile;
    const pane = c && c.panes.find((p) => p.id === this.sel.stage);
    this.details.replaceChildren();
    if (!c || !pane) return;
    if (this.sel.node && pane.kind === "graph") {
      const nodes = /** @type {GNode[]} */ (pane.graph.nodes);
      const i = nodes.findIndex((n) => qualified(n) === this.sel.node);
      if (i >= 0) this.details.append(this.nodeDetails(nodes, i));
    } else if (this.sel.kernel) {
      const k = this.kernelInfo(c, this.sel.kernel);
      if (k) this.details.append(this.kernelDetails(k));
    }
    this.details.classList.toggle("tce-open", this.details.childElementCount > 0);
  }

  /** @param {GNode[]} nodes @param {number} i */
  nodeDetails(nodes, i) {
    const n = nodes[i];
    const rows = [
      ["op", n.op], ["target", n.target],
      ["args", n.args.join(", ")],
      ["kwargs", Object.entries(n.kwargs).map(([k, v]) => `${k}=${v}`).join(", ")],
    ];
    n.meta.forEach((m, j) => {
      const tag = n.meta.length > 1 ? ` [${j}]` : "";
      rows.push([`shape${tag}`, `[${m.shape.join(", ")}]`], [`dtype${tag}`, m.dtype],
        [`stride${tag}`, `[${m.stride.join(", ")}]`], [`device${tag}`, m.device]);
    });
    if (n.module) rows.push(["module", n.module]);
    if (n.group.length) rows.push(["group", n.group.join(" / ")]);
    const table = detailTable(rows.filter((r) => r[1]));
    /** @param {number[]} list */
    const nodeLinks = (list) => list.map((j) => h("button", {
      cls: "tce-link", text: nodes[j].name, on: { click: () => this.selectNode(nodes, j) },
    }));
    const kernels = n.kernels.map((kid) => h("button", {
      cls: "tce-link" + (kid === this.sel.kernel ? " tce-current" : ""), text: kid.split("/").pop() || kid,
      title: "show this kernel's code", on: { click: () => this.showKernel(kid) },
    }));
    return h("div", { cls: "tce-detail" }, [
      h("div", { cls: "tce-detail-title", text: `node ${n.name}` }),
      table,
      n.src ? h("div", { cls: "tce-detail-row" }, [
        h("span", { cls: "tce-key", text: "source" }),
        h("button", { cls: "tce-link" + this.hlClass(n.src), text: n.loc || n.src, on: { click: () => this.select({ src: n.src }) } }),
        n.code ? h("code", { cls: "tce-inline", text: n.code }) : null,
      ]) : null,
      n.inputs.length ? h("div", { cls: "tce-detail-row" }, [h("span", { cls: "tce-key", text: "inputs" }), ...nodeLinks(n.inputs)]) : null,
      n.users.length ? h("div", { cls: "tce-detail-row" }, [h("span", { cls: "tce-key", text: "users" }), ...nodeLinks(n.users)]) : null,
      kernels.length ? h("div", { cls: "tce-detail-row" }, [h("span", { cls: "tce-key", text: "kernel" }), ...kernels]) : null,
    ]);
  }

  /** @param {KernelInfo} k */
  kernelDetails(k) {
    const srcs = k.src.map((key) => h("button", {
      cls: "tce-link" + this.hlClass(key, new Set(k.src)), text: shortSrc(key), title: key,
      on: { click: () => this.select({ src: key, kernel: k.id }) },
    }));
    const lines = k.first_line ? `lines ${k.first_line}–${k.last_line}` : "";
    const calls = k.call_lines.length ? `called at line ${k.call_lines.join(", ")}` : "";
    const lowering = this.compile.panes.find((p) => p.kind === "triton_lowering" && p.kernel === k.id);
    return h("div", { cls: "tce-detail" }, [
      h("div", { cls: "tce-detail-title", text: `kernel ${k.name}` }),
      detailTable([["language", k.language], ["in output code", [lines, calls].filter(Boolean).join(", ")],
        ["post-grad nodes", k.post_grad_nodes.join(", ")], ["source nodes", k.source_nodes.join(", ")],
        ["grid", gridText(k.grid)], ...timingRows(k.timing)].filter((r) => r[1])),
      srcs.length ? h("div", { cls: "tce-detail-row" }, [h("span", { cls: "tce-key", text: "source lines" }), ...srcs]) : null,
      h("div", { cls: "tce-detail-row" }, [h("button", {
        cls: "tce-button", text: "Show code", on: { click: () => this.showKernel(k.id) },
      }), lowering ? h("button", {
        cls: "tce-button", text: "Show Triton lowering", attrs: { "data-lowering": lowering.id },
        on: { click: () => this.select({ stage: lowering.id, kernel: k.id }) },
      }) : null]),
    ]);
  }

  /** @param {GNode[]} nodes @param {number} i */
  selectNode(nodes, i) {
    const n = nodes[i];
    this.select({ node: qualified(n), src: n.src, kernel: n.kernels[0] || null });
    for (const hd of this.handles) if ("reveal" in hd) /** @type {any} */ (hd).reveal(i);
  }

  /** @param {string} kid */
  showKernel(kid) {
    const c = this.compile;
    const pane = c.panes.find((p) => p.kind === "output_code" && p.kernels.some((/** @type {KernelInfo} */ k) => k.id === kid));
    this.select({ kernel: kid, src: null, stage: pane ? pane.id : this.sel.stage });
    for (const hd of this.handles) if ("revealKernel" in hd) /** @type {any} */ (hd).revealKernel(kid);
  }
}

/** @param {GNode} n */
function qualified(n) {
  return n.module ? `${n.module}.${n.name}` : n.name;
}

/** @param {string} name */
function resumeLabel(name) {
  const m = /^torch_dynamo_resume_in_(.+)_at_(\d+)$/.exec(name);
  return m ? `resume ${m[1]} at line ${m[2]}` : name;
}

/** @param {any} t @returns {string[][]} */
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

// --- one renderer per stage kind, all with the same signature -------------------------

/**
 * @callback Renderer
 * @param {HTMLElement} el
 * @param {Pane} pane
 * @param {App} app
 * @returns {PaneHandle}
 */

/** @type {Renderer} */
function renderCode(el, pane, app) {
  /** @type {CodeView[]} */
  const views = [];
  for (const block of pane.blocks) {
    const box = h("div", { cls: "tce-block" }, [h("div", { cls: "tce-block-title", text: block.title })]);
    if (block.note) box.append(h("div", { cls: "tce-note", text: block.note }));
    if (block.text.lines.length && !(block.text.lines.length === 1 && !block.text.lines[0].length)) {
      const view = new CodeView(block.text, {
        lineClass: (i) => app.hlClass(block.text.line_src[i]),
        onLine: (i) => {
          const key = block.text.line_src[i];
          if (key) app.select({ src: app.sel.src === key ? null : key, node: null, kernel: null });
        },
      });
      views.push(view);
      box.append(view.el);
    }
    el.append(box);
  }
  if (!pane.blocks.length) el.append(h("div", { cls: "tce-note", text: "Nothing was recorded for this stage." }));
  return { update: () => views.forEach((v) => v.refresh()) };
}

/** @type {Renderer} */
function renderGraph(el, pane, app) {
  const graph = pane.graph;
  /** @type {GNode[]} */
  const nodes = graph.nodes;
  const key = `${app.sel.compile}|${pane.id}`;
  const mode = app.graphMode.get(key) || (nodes.length ? "graph" : "text");
  const bar = h("div", { cls: "tce-toolbar" });
  const body = h("div", { cls: "tce-graph-body" });
  el.append(bar, body);
  const modeButton = (/** @type {string} */ m, /** @type {string} */ label) => h("button", {
    cls: "tce-button" + (m === mode ? " tce-current" : ""), text: label,
    on: { click: () => { app.graphMode.set(key, m); app.renderCompile(); } },
  });
  bar.append(modeButton("graph", "Graph"), modeButton("text", "Text"));
  bar.append(h("span", { cls: "tce-renderer", text: `${nodes.length.toLocaleString()} nodes · ${graph.renderer_note}` }));
  if (graph.parse_error) bar.append(h("span", { cls: "tce-error", text: graph.parse_error }));

  /** @param {number} i */
  const nodeClass = (i) => {
    const n = nodes[i];
    let cls = app.hlClass(n.src);
    if (app.sel.node === qualified(n)) cls += " tce-selected";
    if (app.sel.kernel && n.kernels.includes(app.sel.kernel)) cls += " hl-kernel";
    if (matches.has(i)) cls += " tce-match";
    return cls;
  };
  /** @type {Set<number>} */
  let matches = new Set();
  let matchList = /** @type {number[]} */ ([]);
  let matchAt = -1;
  /** @type {(i: number) => void} */
  let reveal = () => {};

  if (mode === "text") {
    const line_node = pane.text.line_node || [];
    const view = new CodeView(pane.text, {
      lineClass: (i) => {
        const ni = line_node[i];
        return ni !== null && ni !== undefined ? nodeClass(ni) : app.hlClass(pane.text.line_src[i]);
      },
      onLine: (i) => {
        const ni = line_node[i];
        if (ni !== null && ni !== undefined) app.selectNode(nodes, ni);
        else if (pane.text.line_src[i]) app.select({ src: pane.text.line_src[i], node: null, kernel: null });
      },
    });
    body.append(view.el);
    const lineOf = new Map();
    line_node.forEach((ni, line) => { if (ni !== null && ni !== undefined) lineOf.set(ni, line); });
    reveal = (i) => { if (lineOf.has(i)) view.scrollTo(lineOf.get(i)); };
    addSearch();
    return { update: () => view.refresh(), reveal: (/** @type {number} */ i) => reveal(i) };
  }

  /** @type {() => void} */
  let update = () => {};
  if (graph.svg) {
    const wrap = h("div", { cls: "tce-svgwrap" });
    body.append(wrap);
    const svg = insertTrustedSvg(wrap, graph.svg);
    /** @type {Element[]} */
    const els = [];
    if (svg) {
      svg.classList.add("tce-dot");
      for (const g of svg.querySelectorAll("g.node")) {
        const m = /^n-(\d+)$/.exec(g.id);
        if (!m) continue;
        const i = Number(m[1]);
        els[i] = g;
        const title = g.querySelector("title");
        if (title && nodes[i]) title.textContent = `${nodes[i].name} = ${nodes[i].target}`;
      }
      const w = parseFloat(svg.getAttribute("width") || "0");
      const hgt = parseFloat(svg.getAttribute("height") || "0");
      let zoom = 1;
      const setZoom = (/** @type {number} */ z) => {
        zoom = z;
        svg.setAttribute("width", `${w * z}pt`);
        svg.setAttribute("height", `${hgt * z}pt`);
      };
      bar.append(
        h("button", { cls: "tce-button", text: "−", title: "zoom out", on: { click: () => setZoom(zoom / 1.25) } }),
        h("button", { cls: "tce-button", text: "+", title: "zoom in", on: { click: () => setZoom(zoom * 1.25) } }),
      );
      wrap.addEventListener("click", (ev) => {
        const g = /** @type {Element} */ (ev.target).closest("g.node");
        const m = g && /^n-(\d+)$/.exec(g.id);
        if (m) app.selectNode(nodes, Number(m[1]));
      });
    } else {
      wrap.append(h("div", { cls: "tce-error", text: "The Graphviz SVG could not be read." }));
    }
    update = () => {
      els.forEach((g, i) => g && g.setAttribute("class", `node op-${nodes[i].op}${nodeClass(i)}`));
    };
    reveal = (i) => {
      const g = els[i];
      if (g) scrollWithin(wrap, g, true);
    };
  } else {
    const expanded = app.expandedGroups.get(key) || null;
    const chips = h("span", { cls: "tce-chips" });
    const bg = new BuiltinGraph(nodes, expanded, {
      nodeClass,
      groupClass: (members) => {
        const active = app.activeKeys();
        for (const i of members) {
          const c = app.hlClass(nodes[i].src, active);
          if (c) return c;
        }
        return members.some((i) => matches.has(i)) ? " tce-match" : "";
      },
      onNode: (i) => app.selectNode(nodes, i),
      onExpand: (set) => { app.expandedGroups.set(key, set); renderChips(); },
    });
    app.expandedGroups.set(key, bg.expanded);
    const renderChips = () => {
      const keys = bg.collapsible().sort();
      chips.replaceChildren(...keys.slice(0, 40).map((k) => h("button", {
        cls: "tce-chip", text: `▾ ${k}`, title: "collapse this group", on: { click: () => bg.collapse(k) },
      })), keys.length > 40 ? h("span", { text: `+${keys.length - 40} more` }) : "");
    };
    if (bg.groups.size) {
      bar.append(
        h("button", { cls: "tce-button", text: "Expand all", on: { click: () => bg.setAll(true) } }),
        h("button", { cls: "tce-button", text: "Collapse all", on: { click: () => bg.setAll(false) } }),
      );
    }
    body.append(bg.el);
    const groupBar = h("div", { cls: "tce-groupbar" }, [chips]);
    el.insertBefore(groupBar, body);
    renderChips();
    update = () => bg.update();
    reveal = (i) => bg.reveal(i);
    /** @type {any} */ (app).__graph = bg;
  }
  addSearch();
  return { update: () => update(), reveal: (/** @type {number} */ i) => reveal(i) };

  function addSearch() {
    const count = h("span", { cls: "tce-count" });
    const input = /** @type {HTMLInputElement} */ (h("input", {
      cls: "tce-search", attrs: { type: "search", placeholder: "find node (name or target)", "aria-label": "find node" },
    }));
    input.addEventListener("input", () => {
      const q = input.value.trim().toLowerCase();
      matchList = [];
      if (q) nodes.forEach((n, i) => { if (n.name.toLowerCase().includes(q) || n.target.toLowerCase().includes(q)) matchList.push(i); });
      matches = new Set(matchList);
      matchAt = -1;
      count.textContent = q ? `${matchList.length.toLocaleString()} match${matchList.length === 1 ? "" : "es"}` : "";
      app.updateHighlights();
    });
    input.addEventListener("keydown", (ev) => {
      if (ev.key !== "Enter" || !matchList.length) return;
      matchAt = (matchAt + (ev.shiftKey ? -1 : 1) + matchList.length) % matchList.length;
      app.selectNode(nodes, matchList[matchAt]);
    });
    bar.append(input, count);
  }
}

/** @type {Renderer} */
function renderOutputCode(el, pane, app) {
  const text = /** @type {Text} */ (pane.text);
  /** @type {KernelInfo[]} */
  const kernels = pane.kernels;
  const byId = new Map(kernels.map((k) => [k.id, k]));
  const list = h("div", { cls: "tce-kernels" }, [h("span", { cls: "tce-key", text: "kernels" })]);
  /** @type {Map<string, HTMLElement>} */
  const chips = new Map();
  for (const k of kernels) {
    const chip = h("button", {
      cls: "tce-chip tce-kernel", text: k.name, title: `${k.language} kernel`, attrs: { "data-kernel": k.id },
      on: { click: () => { app.select({ kernel: app.sel.kernel === k.id ? null : k.id, src: null, node: null }); revealKernel(k.id); } },
    });
    chips.set(k.id, chip);
    list.append(chip);
  }
  if (!kernels.length) list.append(h("span", { cls: "tce-note", text: "no kernels in this output code" }));
  if (pane.path) list.append(h("span", { cls: "tce-path", text: pane.path, title: "where Inductor wrote this file" }));
  const lk = text.line_kernel || [];
  const view = new CodeView(text, {
    lineClass: (i) => {
      const kid = lk[i];
      if (!kid) return "";
      const k = byId.get(kid);
      let cls = " tce-in-kernel";
      if (k) cls += app.hlAny(k.src);
      if (kid === app.sel.kernel) cls += " hl-kernel";
      return cls;
    },
    onLine: (i) => {
      const kid = lk[i];
      if (kid && kid !== app.sel.kernel) app.select({ kernel: kid, src: null, node: null });
    },
  });
  el.append(list, view.el);
  /** @param {string} kid */
  function revealKernel(kid) {
    const k = byId.get(kid);
    if (k) view.scrollTo((k.first_line || k.call_lines[0] || 1) - 1);
  }
  const active = app.activeKeys();
  const first = app.sel.kernel && byId.has(app.sel.kernel)
    ? app.sel.kernel
    : (kernels.find((k) => k.src.some((s) => active.has(s))) || { id: null }).id;
  if (first) requestAnimationFrame(() => revealKernel(/** @type {string} */ (first)));
  return {
    update: () => {
      view.refresh();
      const active = app.activeKeys();
      for (const [id, chip] of chips) {
        const k = /** @type {KernelInfo} */ (byId.get(id));
        chip.className = "tce-chip tce-kernel" + app.hlAny(k.src, active) + (id === app.sel.kernel ? " tce-selected" : "");
      }
    },
    revealKernel,
  };
}

/** @type {Renderer} */
function renderSchedule(el, pane, app) {
  const handle = renderCode(el, pane, app);
  if (pane.fused.length) {
    const t = h("table", { cls: "tce-table tce-fused" }, [
      h("tr", {}, ["scheduler node", "kind", "members", "buffers"].map((x) => h("th", { text: x }))),
    ]);
    for (const f of pane.fused) {
      t.append(h("tr", {}, [h("td", { text: f.name }), h("td", { text: f.kind + (f.extern_kernel ? ` (${f.extern_kernel})` : "") }),
        h("td", { text: f.members.join(", ") }), h("td", { text: f.buffers.join(", ") })]));
    }
    el.prepend(h("div", { cls: "tce-block" }, [h("div", { cls: "tce-block-title", text: "Fused nodes" }), t]));
  }
  return handle;
}

/** @type {Renderer} */
function renderGraphBreaks(el, pane, app) {
  /** @type {[HTMLElement, string|null][]} */
  const items = [];
  for (const gb of pane.items) {
    const loc = gb.src
      ? h("button", { cls: "tce-link", text: gb.location, on: { click: () => app.select({ src: gb.src, node: null, kernel: null }) } })
      : h("span", { text: gb.location || "unknown location" });
    const card = h("div", { cls: "tce-card" }, [
      h("div", { cls: "tce-card-title", text: gb.summary || "graph break" }),
      h("div", { cls: "tce-detail-row" }, [h("span", { cls: "tce-key", text: "where" }), loc,
        gb.code ? h("code", { cls: "tce-inline", text: gb.code }) : null]),
      h("pre", { cls: "tce-pre", text: gb.reason }),
      gb.hints.length ? h("ul", { cls: "tce-hints" }, gb.hints.map((/** @type {string} */ x) => h("li", { text: x }))) : null,
      gb.user_stack.length ? h("div", { cls: "tce-detail-row tce-stack" }, [h("span", { cls: "tce-key", text: "user stack" }),
        ...gb.user_stack.map((/** @type {{src: string|null, text: string}} */ f) => f.src
          ? h("button", { cls: "tce-link", text: f.text, on: { click: () => app.select({ src: f.src, node: null, kernel: null }) } })
          : h("span", { text: f.text }))]) : null,
      gb.documentation ? docLink(gb.documentation) : null,
    ]);
    items.push([card, gb.src]);
    el.append(card);
  }
  return { update: () => items.forEach(([card, src]) => { card.className = "tce-card" + app.hlClass(src); }) };
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
  for (const r of pane.items) {
    el.append(h("div", { cls: "tce-card" }, [
      h("div", { cls: "tce-card-title", text: r.reason }),
      r.previous ? h("div", { cls: "tce-detail-row" }, [h("span", { cls: "tce-key", text: "failed guard of" }), h("span", { text: r.previous })]) : null,
      r.text && r.text !== r.reason ? h("pre", { cls: "tce-pre", text: r.text }) : null,
    ]));
  }
  return { update: () => {} };
}

/** @type {Renderer} */
function renderMetrics(el, pane) {
  el.append(h("div", { cls: "tce-block" }, [h("div", { cls: "tce-block-title", text: "Summary" }), detailTable(pane.summary)]));
  if (pane.phases.length) {
    const max = Math.max(...pane.phases.map((/** @type {{seconds: number}} */ p) => p.seconds), 1e-9);
    const minDepth = Math.min(...pane.phases.map((/** @type {{depth: number}} */ p) => p.depth));
    const t = h("table", { cls: "tce-table tce-phases" }, [h("tr", {}, [h("th", { text: "phase" }), h("th", { text: "seconds" }), h("th", { text: "" })])]);
    for (const p of pane.phases) {
      const bar = h("span", { cls: "tce-bar" });
      bar.style.width = `${(100 * p.seconds) / max}%`;
      const name = h("td", { text: p.name });
      name.style.paddingLeft = `${0.4 + (p.depth - minDepth) * 0.9}em`;
      t.append(h("tr", {}, [name, h("td", { cls: "tce-num", text: p.seconds.toFixed(4) }), h("td", { cls: "tce-barcell" }, [bar])]));
    }
    el.append(h("div", { cls: "tce-block" }, [h("div", { cls: "tce-block-title", text: "Phases (from torch's chromium events)" }), t]));
  }
  if (pane.cache_events.length) {
    el.append(h("div", { cls: "tce-block" }, [h("div", { cls: "tce-block-title", text: "Cache events" }),
      h("div", { text: pane.cache_events.join(", ") })]));
  }
  if (pane.counters && pane.counters.length) {
    el.append(h("div", { cls: "tce-block tce-counters" }, [h("div", { cls: "tce-block-title", text: "Counters (growth over the whole capture)" }),
      detailTable(pane.counters.map((/** @type {[string, number]} */ [k, n]) => [k, String(n)]))]));
  }
  return { update: () => {} };
}

/**
 * @param {number|null|undefined} x @param {number} [digits]
 * @returns {string}
 */
function fmt(x, digits = 1) {
  if (x === null || x === undefined) return "–";
  return x.toLocaleString("en-US", { minimumFractionDigits: digits, maximumFractionDigits: digits });
}

/**
 * A bar drawn with two divs: `fraction` of the track (clipped to 0..1), beside its number.
 * @param {number} fraction @param {string} text @param {string} kind @param {string} [title]
 */
function barCell(fraction, text, kind, title = "") {
  const fill = h("div", { cls: "tce-kt-fill" });
  const f = Math.max(0, Math.min(1, fraction));
  fill.style.width = `${100 * f}%`;
  return h("td", { cls: `tce-kt-barcell tce-kt-${kind}`, title }, [
    h("div", { cls: "tce-kt-track" + (fraction > 1 ? " tce-kt-over" : "") }, [fill]),
    h("span", { cls: "tce-kt-value", text }),
  ]);
}

/**
 * A measured kernel's GFLOP and TFLOP/s cells, the latter with its share of the measured
 * fp32 matmul peak beside it; "—" for a kernel without matrix products.
 * @param {any} r @returns {HTMLElement[]}
 */
function flopCells(r) {
  if (r.flops === null) {
    const none = "no matrix products counted";
    return [h("td", { cls: "tce-num tce-kt-missing tce-kt-gflop", text: "—", title: none }),
      h("td", { cls: "tce-num tce-kt-missing tce-kt-tflops", text: "—", title: none })];
  }
  const tf = h("td", { cls: "tce-num tce-kt-tflops", title: `${r.flops.toLocaleString("en-US")} FLOP per run` }, [
    h("span", { text: r.achieved_tflops === null ? "—" : fmt(r.achieved_tflops) }),
  ]);
  if (r.matmul_peak_pct !== null) {
    tf.append(h("span", { cls: "tce-kt-mmpct", text: ` (${fmt(r.matmul_peak_pct, 0)}%)`, title: `${fmt(r.matmul_peak_pct)}% of the measured fp32 matmul peak` }));
  }
  return [h("td", { cls: "tce-num tce-kt-gflop", text: fmt(r.gflop, 2), title: `${fmt(r.gflop, 4)} GFLOP per run` }), tf];
}

/**
 * Measured kernels, slowest first: time (bar relative to the slowest) and achieved
 * bandwidth (bar against the device's measured copy bandwidth, drawn capped at 100%).
 * Clicking a row selects its kernel, as a kernel chip does; its name opens its code.
 * @type {Renderer}
 */
function renderKernelTiming(el, pane, app) {
  const rows = /** @type {any[]} */ (pane.rows);
  const slowest = Math.max(...rows.map((r) => r.median_us), 1e-9);
  const several = pane.outputs.length > 1;
  const flops = Boolean(pane.has_flops);
  const mmPeak = pane.peak_matmul_tflops;
  /** @type {[string, boolean, string][]} header text, numeric, title */
  const head = [["kernel", false, ""], ["calls", true, ""], ["median µs", false, ""], ["min µs", true, ""],
    ["MB moved", true, ""], ["GB/s", true, ""], ["% of copy peak", false, ""]];
  if (flops) {
    head.push(["GFLOP", true, "2·M·N·K of the kernel's matrix products, over its calls in one run"],
      ["TFLOP/s", true, mmPeak ? `achieved; in brackets, % of the measured fp32 matmul peak (${fmt(mmPeak)} TFLOP/s)` : "achieved"]);
  }
  head.push(["share", true, "share of the measured kernels' total time"]);
  const t = h("table", { cls: "tce-table tce-kt" + (flops ? " tce-kt-flops" : "") }, [
    h("tr", {}, head.map(([x, num, title]) => h("th", { cls: num ? "tce-num" : "", text: x, title }))),
  ]);
  /** @type {[HTMLElement, string][]} */
  const trs = [];
  for (const r of rows) {
    const name = h("button", {
      cls: "tce-link tce-kt-name", text: r.name, title: `${r.name}: show its code`,
      on: { click: (e) => { e.stopPropagation(); app.showKernel(r.kernel); } },
    });
    const lang = h("span", { cls: "tce-kt-lang", text: several ? `${r.language} · ${r.output}` : r.language });
    const mb = r.mb === null ? h("td", { cls: "tce-kt-missing", text: r.note, title: "bytes moved are estimated from static shapes only" })
      : h("td", { cls: "tce-num", text: fmt(r.mb), title: `${r.bytes.toLocaleString("en-US")} bytes` });
    const pct = r.peak_pct === null
      ? h("td", { cls: "tce-kt-missing", text: r.note || "no peak measured" })
      : barCell(r.peak_pct / 100, `${fmt(r.peak_pct)}%`, "peak",
        `${r.peak_pct}% of ${fmt(r.peak_gbps, 0)} GB/s${r.peak_pct > 100 ? " (above the copy peak)" : ""}`);
    const tr = h("tr", {
      cls: "tce-kt-row", attrs: { "data-kernel": r.kernel },
      on: { click: () => app.select({ kernel: app.sel.kernel === r.kernel ? null : r.kernel, src: null, node: null }) },
    }, [
      h("td", { cls: "tce-kt-kernel" }, [name, lang]),
      h("td", { cls: "tce-num", text: String(r.calls) }),
      barCell(r.median_us / slowest, fmt(r.median_us), "time", `${r.median_us} µs median over ${r.calls} calls`),
      h("td", { cls: "tce-num", text: fmt(r.min_us) }),
      mb,
      r.achieved_gbps === null ? h("td", { cls: "tce-kt-missing", text: r.note })
        : h("td", { cls: "tce-num", text: fmt(r.achieved_gbps, 0) }),
      pct,
      ...(flops ? flopCells(r) : []),
      h("td", { cls: "tce-num", text: `${fmt(100 * r.share)}%`, title: `${fmt(r.total_us)} of ${fmt(pane.total_us)} µs` }),
    ]);
    trs.push([tr, r.kernel]);
    t.append(tr);
  }
  el.append(h("div", { cls: "tce-block" }, [
    h("div", { cls: "tce-block-title", text: "Measured kernels, slowest first" }),
    h("div", { cls: "tce-note tce-kt-peakline", text: pane.peak_line }),
    pane.cudagraph_line ? h("div", { cls: "tce-note tce-kt-cudagraphs", text: pane.cudagraph_line }) : null,
    t,
    pane.untimed.length ? h("div", { cls: "tce-note", text: `not measured: ${pane.untimed.join(", ")}; the share is of the measured kernels' ${fmt(pane.total_us)} µs` }) : null,
  ]));
  return {
    update: () => {
      const active = app.activeKeys();
      for (const [tr, kid] of trs) {
        const k = app.kernelInfo(app.compile, kid);
        tr.className = "tce-kt-row" + (k ? app.hlAny(k.src, active) : "") + (kid === app.sel.kernel ? " tce-selected" : "");
      }
    },
  };
}

/**
 * Max-autotune results: per op, every candidate fastest first with its time, a bar
 * relative to the slowest candidate, its speed against the fastest and its config.
 * The chosen row is marked; its name selects its output-code kernel where the view
 * model proved which kernel that is.
 * @type {Renderer}
 */
function renderAutotuning(el, pane, app) {
  /** @type {[HTMLElement, string][]} */
  const linked = [];
  for (const op of /** @type {any[]} */ (pane.ops)) {
    const slowest = op.slowest_ms || 1e-12;
    const head = ["", "candidate", "ms", "time (vs slowest)", "vs fastest", "config"];
    const t = h("table", { cls: "tce-table tce-kt tce-at" }, [
      h("tr", {}, head.map((x, i) => h("th", { cls: i === 2 || i === 4 ? "tce-num" : "", text: x }))),
    ]);
    for (const r of /** @type {any[]} */ (op.rows)) {
      const name = r.kernel
        ? h("button", {
          cls: "tce-link tce-at-name", text: r.name, title: `runs as ${r.kernel.split("/").pop()}: show its code`,
          on: { click: () => app.showKernel(r.kernel) },
        })
        : h("span", { cls: "tce-at-name", text: r.name });
      const fill = h("div", { cls: "tce-kt-fill" });
      fill.style.width = r.ms === null ? "0" : `${(100 * Math.min(1, r.ms / slowest)).toFixed(2)}%`;
      const config = r.config_text || (r.kind === "extern" ? "library call (extern kernel)" : "");
      const tr = h("tr", { cls: "tce-at-row" + (r.chosen ? " tce-at-chosen" : ""), attrs: { "data-choice": r.name } }, [
        h("td", { cls: "tce-at-mark", text: r.chosen ? "✓" : "", title: r.chosen ? "chosen: the fastest" : "" }),
        h("td", { cls: "tce-at-cand" }, [name, r.chosen ? h("span", { cls: "tce-chosen", text: "chosen" }) : null]),
        h("td", { cls: "tce-num", text: r.ms_text, title: r.ms === null ? "not timed" : `${r.ms} ms` }),
        h("td", { cls: "tce-kt-barcell tce-at-bar" }, [h("div", { cls: "tce-kt-track" }, [fill])]),
        h("td", { cls: "tce-num tce-at-rel", text: r.relative_text }),
        h("td", { cls: "tce-at-config" + (r.config_text ? "" : " tce-kt-missing"), text: config, title: r.description }),
      ]);
      if (r.kernel) linked.push([tr, r.kernel]);
      t.append(tr);
    }
    const sizes = op.input_sizes.length ? ` · inputs ${op.input_sizes.join(", ")}` : "";
    const note = op.kernel ? `chosen ${op.chosen} runs as ${op.kernel.split("/").pop()} in the output code`
      : `chosen ${op.chosen}; no output-code kernel is proven to be it`;
    el.append(h("div", { cls: "tce-block" }, [
      h("div", { cls: "tce-block-title", text: `${op.op}${sizes} · ${op.rows.length} candidates, fastest first` }),
      h("div", { cls: "tce-note tce-kt-peakline", text: note }),
      op.common_text ? h("div", { cls: "tce-note tce-at-common", text: `every Triton candidate: ${op.common_text}` }) : null,
      t,
    ]));
  }
  return {
    update: () => {
      for (const [tr, kid] of linked) tr.classList.toggle("tce-selected", kid === app.sel.kernel);
    },
  };
}

/** @type {Renderer} */
function renderUnknown(el, pane) {
  el.append(h("div", { cls: "tce-note", text: `No view for stage kind ${pane.kind}.` }));
  return { update: () => {} };
}

/**
 * Triton's lowering of one kernel: the kernel source (left) beside one stage of one
 * compiled variant (right). Lines are linked by the kernel-source line each lowered
 * line came from (`source_line`); the chosen line, stage and variant are pane state
 * kept in `app.lowered`, like `app.graphMode`, so the shared selection is unchanged.
 * @type {Renderer}
 */
function renderTritonLowering(el, pane, app) {
  const key = `${app.sel.compile}|${pane.id}`;
  /** @type {{variant: number, stage: string, line: number|null}} */
  const state = app.lowered.get(key) || { variant: pane.default_variant, stage: "ttir", line: null };
  app.lowered.set(key, state);
  if (!pane.variants[state.variant]) state.variant = 0;
  const variants = /** @type {any[]} */ (pane.variants);
  /** @param {number} n */
  const mark = (n) => ` tce-linked tce-mark-${n % PALETTE}`;
  /** @param {number} n */
  const hl = (n) => ` hl hl-${n % PALETTE}`;

  const variantBar = h("div", { cls: "tce-toolbar tce-variants" }, [h("span", { cls: "tce-key", text: "variant" })]);
  const info = h("div", { cls: "tce-lowering-info" });
  const sourceCol = h("div", { cls: "tce-lowering-col tce-lowering-source" });
  const stageCol = h("div", { cls: "tce-lowering-col tce-lowering-stage" });
  el.append(variantBar, info, h("div", { cls: "tce-lowering-body" }, [sourceCol, stageCol]));

  /** @type {Set<number>} kernel-source lines the current stage links to */
  let linked = new Set();
  /** @type {CodeView|null} */
  let stageView = null;
  /** @type {any} */
  let stage = null;
  const status = h("span", { cls: "tce-count" });

  const sourceView = new CodeView(pane.source, {
    lineClass: (i) => {
      const n = i + 1;
      return (linked.has(n) ? mark(n) : "") + (n === state.line ? hl(n) : "");
    },
    onLine: (i) => {
      const n = i + 1;
      if (!linked.has(n) && n !== state.line) return;
      state.line = state.line === n ? null : n;
      refresh();
      revealLowered();
    },
  });
  sourceCol.append(
    h("div", { cls: "tce-lowering-head" }, [
      h("span", { cls: "tce-block-title", text: `${app.view.labels.triton_source || "Triton source"} · ${pane.kernel_name}` }),
      h("button", {
        cls: "tce-link", text: "in output code", title: "show this kernel in the output code",
        on: { click: () => app.showKernel(pane.kernel) },
      }),
    ]),
    sourceView.el,
  );

  function renderVariants() {
    variantBar.replaceChildren(h("span", { cls: "tce-key", text: "variant" }));
    variants.forEach((v, i) => {
      const config = Object.entries(v.config).map(([k, x]) => `${k}=${x}`).join(" · ");
      variantBar.append(h("button", {
        cls: "tce-button tce-variant" + (i === state.variant ? " tce-current" : ""),
        title: `hash ${v.hash}${v.cache_key ? `\nTriton cache folder ${v.cache_key}` : ""}`,
        attrs: { "data-variant": String(i), "aria-pressed": String(i === state.variant) },
        on: { click: () => { state.variant = i; renderVariants(); renderInfo(); renderStage(); } },
      }, [config || `variant ${i + 1}`, v.chosen ? h("span", { cls: "tce-chosen", text: "chosen" }) : null]));
    });
  }

  function renderInfo() {
    const v = variants[state.variant];
    /** @type {[string, string][]} */
    const facts = [];
    if (v.target) facts.push(["target", v.target]);
    if (v.triton_version) facts.push(["Triton", v.triton_version]);
    facts.push(["shared memory", `${v.shared_memory.toLocaleString()} B`]);
    facts.push(["hash", v.hash.slice(0, 12)]);
    for (const [k, x] of /** @type {[string, string][]} */ (pane.info)) facts.push([k, x]);
    info.replaceChildren(...facts.map(([k, x]) => h("span", { cls: "tce-fact" }, [
      h("span", { cls: "tce-key", text: k }), h("span", { cls: "tce-fact-value", text: x }),
    ])));
    if (v.module_file) {
      const base = v.module_file.slice(v.module_file.lastIndexOf("/") + 1);
      const off = v.line_offset;
      const shift = off === null ? "line offset unknown"
        : off === 0 ? "same line numbers" : `module line N is source line N${off > 0 ? "+" : "−"}${Math.abs(off)}`;
      info.append(h("span", { cls: "tce-fact", title: v.module_file }, [
        h("span", { cls: "tce-key", text: "locations in" }), h("span", { cls: "tce-fact-value", text: `${base} (${shift})` }),
      ]));
    }
  }

  function renderStage() {
    const v = variants[state.variant];
    /** @type {any[]} */
    const stages = v.stages;
    if (!stages.some((s) => s.stage === state.stage)) state.stage = stages.length ? stages[0].stage : "";
    stage = stages.find((s) => s.stage === state.stage) || null;
    const tabs = h("div", { cls: "tce-toolbar tce-lowering-tabs", attrs: { role: "tablist" } });
    for (const s of stages) {
      tabs.append(h("button", {
        cls: "tce-button tce-lstage" + (s === stage ? " tce-current" : "") + (s.error ? " tce-lstage-error" : ""),
        text: s.label, title: s.error ? `${s.label}: ${s.error}` : `${s.label} of this variant`,
        attrs: { role: "tab", "data-lstage": s.stage, "aria-selected": String(s === stage) },
        on: { click: () => { state.stage = s.stage; renderStage(); } },
      }));
    }
    tabs.append(status);
    stageCol.replaceChildren(tabs);
    stageView = null;
    linked = new Set();
    if (stage && stage.error) {
      stageCol.append(h("div", { cls: "tce-error tce-lowering-msg", text: `${stage.label}: ${stage.error}` }));
    } else if (stage && stage.text.lines.length && !(stage.text.lines.length === 1 && !stage.text.lines[0].length)) {
      /** @type {(number|null)[]} */
      const sl = stage.source_line;
      for (const n of sl) if (n !== null) linked.add(n);
      if (stage.note) stageCol.append(h("div", { cls: "tce-note tce-lowering-msg", text: stage.note }));
      stageView = new CodeView(stage.text, {
        lineClass: (i) => {
          const n = sl[i];
          return n === null || n === undefined ? "" : mark(n) + (n === state.line ? hl(n) : "");
        },
        onLine: (i) => {
          const n = sl[i];
          if (n === null || n === undefined) return;
          state.line = n;
          refresh();
          sourceView.scrollTo(n - 1);
        },
      });
      stageCol.append(stageView.el);
    } else {
      stageCol.append(h("div", { cls: "tce-note tce-lowering-msg", text: `No ${stage ? stage.label : "stage"} text was recorded for this variant.` }));
    }
    refresh();
    revealLowered();
  }

  function refresh() {
    sourceView.refresh();
    if (stageView) stageView.refresh();
    if (state.line === null || !stage || stage.error) {
      status.textContent = "";
      return;
    }
    const count = stage.source_line.filter((/** @type {number|null} */ n) => n === state.line).length;
    status.textContent = count
      ? `line ${state.line}: ${count.toLocaleString()} ${stage.label} line${count === 1 ? "" : "s"}`
      : `line ${state.line}: no ${stage.label} lines`;
  }

  function revealLowered() {
    if (!stageView || state.line === null) return;
    const first = stage.source_line.indexOf(state.line);
    if (first >= 0) stageView.scrollTo(first);
  }

  renderVariants();
  renderInfo();
  renderStage();
  requestAnimationFrame(() => {
    sourceView.scrollTo(state.line !== null ? state.line - 1 : Math.max(0, (pane.def_line || 1) - 4));
    revealLowered();
  });
  return { update: () => refresh() };
}

/** @type {Object<string, Renderer>} */
const RENDERERS = {
  code: renderCode,
  graph: renderGraph,
  output_code: renderOutputCode,
  schedule: renderSchedule,
  graph_breaks: renderGraphBreaks,
  recompile_reasons: renderRecompileReasons,
  metrics: renderMetrics,
  kernel_timing: renderKernelTiming,
  autotuning: renderAutotuning,
  triton_lowering: renderTritonLowering,
};

/**
 * anywidget entry point.
 * @param {{model: Model, el: HTMLElement}} ctx
 * @returns {() => void} cleanup
 */
function render({ model, el }) {
  const app = new App(model, el);
  return () => app.destroy();
}

export default { render };
