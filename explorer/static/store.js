// @ts-check
// The store: the index, the selection, and the panes, fetched when first opened. In the
// notebook a pane comes from Python (the widget's `_pane` anywidget command);
// in the exported page from the gzip+base64 blob the page carries, decompressed by the
// browser's DecompressionStream. Either way each pane is fetched once, and a graph or an
// output code is expanded once from the compact form Python sends (paneView) into what
// the renderers read: one object per graph node, and per-line tables of their texts.

/** @import { Experimental, Model } from "./util.js" */
/** @import { GcNode } from "./graph/tree.js" */
/** @import { GraphNodes, GraphPane, Index, OutputCodePane } from "./panes/typedefs.js" */
import { PALETTE, invokeReply } from "./util.js";

const PANE_KEY_SEP = "\n"; // as explorer/export.py joins compile key and pane id

/**
 * A graph pane as the renderers read it: one object per node (its columns and the pane's
 * tables expanded) and, per line of the text, the node on it and the source key it links.
 * @typedef {Omit<GraphPane, "nodes"|"file_comments"> & {
 *   nodes: GcNode[], line_node: (number|null)[], line_src: (string|null)[],
 * }} GraphView
 */

/**
 * An output code as the renderer reads it, with the kernel id and the highlighter's
 * language (null: the pane's) of each line of its text.
 * @typedef {OutputCodePane & {line_kernel: (string|null)[], kernel_language: (string|null)[]}} OutputCodeView
 */

/** A pane as it arrived, graphs and output code expanded. @param {any} pane @returns {any} */
function paneView(pane) {
  if (pane && pane.kind === "graph") return graphView(pane);
  if (pane && pane.kind === "output_code") return outputCodeView(pane);
  return pane;
}

/** @param {string} text @returns {number} the lines of `text.split("\n")` */
function lineCount(text) {
  let lines = 1;
  for (let at = text.indexOf("\n"); at >= 0; at = text.indexOf("\n", at + 1)) lines++;
  return lines;
}

/**
 * Mark each line of an output code with its kernel: a kernel's lines from `first_line` to
 * `last_line` and its `call_lines` (1-based; a later kernel wins a shared line), and a C++
 * kernel's own source (0-based lines first_line .. last_line - 2, inside the string
 * literal) as C++; Triton stays Python.
 *
 * Example: `outputCodeView(pane).line_kernel[k.first_line - 1] === k.id`.
 * @param {OutputCodePane} p @returns {OutputCodeView}
 */
function outputCodeView(p) {
  const n = lineCount(p.text);
  /** @type {(string|null)[]} */
  const lineKernel = new Array(n).fill(null);
  /** @type {(string|null)[]} */
  const language = new Array(n).fill(null);
  for (const k of p.kernels) {
    if (k.first_line && k.last_line) {
      lineKernel.fill(k.id, k.first_line - 1, Math.min(k.last_line, n));
      if (k.language === "cpp") language.fill("cpp", k.first_line, Math.min(k.last_line - 1, n));
    }
    for (const ln of k.call_lines) if (ln > 0 && ln <= n) lineKernel[ln - 1] = k.id;
  }
  return { ...p, line_kernel: lineKernel, kernel_language: language };
}

/**
 * Expand a GraphPane (explorer/panes/types.py GraphNodes): node i's fields are entry i of
 * each column, shared values looked up by index; nodes share the looked-up arrays (meta,
 * module_stack, kernels), which no renderer changes; users are the inputs inverted. A
 * node's line links to the node and, where it has one, its source; a `# File:` comment's
 * line to the location it names.
 *
 * Example: `graphView(pane).nodes[0].src` is the source key of the pane's first node.
 * @param {GraphPane} g @returns {GraphView}
 */
function graphView(g) {
  const c = g.nodes;
  const { ops, targets, sources, metas, stacks, kernel_sets: kernelSets } = g;
  const count = c.name.length;
  /** @type {GcNode[]} */
  const nodes = new Array(count);
  const lines = lineCount(g.text);
  /** @type {(string|null)[]} */
  const lineSrc = new Array(lines).fill(null);
  /** @type {(number|null)[]} */
  const lineNode = new Array(lines).fill(null);
  for (const [line, s] of g.file_comments) lineSrc[line - 1] = sources[s].src;
  /** @type {number[][]} the nodes reading each node, in node order */
  const users = Array.from({ length: count }, () => []);
  for (let i = 0; i < count; i++) for (const j of c.inputs[i]) users[j].push(i);
  for (let i = 0; i < count; i++) {
    const s = c.source[i];
    const loc = s === null ? null : sources[s];
    const node = {
      name: c.name[i],
      op: ops[c.op[i]],
      target: targets[c.target[i]],
      meta: metas[c.meta[i]],
      module_stack: stacks[c.module_stack[i]],
      inputs: c.inputs[i],
      users: users[i],
      src: loc ? loc.src : null,
      label: loc ? loc.label : "",
      function: loc ? loc.function : "",
      code: loc ? loc.code : "",
      kernels: kernelSets[c.kernels[i]],
      line: c.line[i],
    };
    nodes[i] = node;
    const at = node.line - 1;
    if (at >= 0 && at < lines) {
      lineNode[at] = i;
      if (node.src !== null) lineSrc[at] = node.src;
    }
  }
  // a higher-order op runs nested graphs (cond branches, a while_loop body, an
  // invoke_subgraph region): the op links to each one's first node, each of their nodes back
  for (const s of g.subgraphs || []) {
    const caller = nodes[s.caller];
    (caller.runs ||= []).push({ node: s.first, role: s.role, module: s.module, id: s.id });
    for (let i = s.first; i <= s.last && i < count; i++) {
      (nodes[i].called_by ||= []).push({ node: s.caller, role: s.role, module: s.module, id: s.id });
    }
  }
  for (const [i, text] of g.saved || []) if (i < count) nodes[i].saved = text;
  const { file_comments: _, ...rest } = g;
  return { ...rest, nodes, line_node: lineNode, line_src: lineSrc };
}

class Store {
  /**
   * @param {Model} model @param {Experimental|undefined} experimental
   * @param {AbortSignal} signal ends the requests to Python still waiting
   */
  constructor(model, experimental, signal) {
    this.model = model;
    this.experimental = experimental;
    this.signal = signal;
    this.standalone = Boolean(model.get("_standalone"));
    /** @type {Map<string, Promise<any>>} */
    this.panes = new Map();
    /** @type {Map<string, {digest: string, view: any}>} the panes received for this index */
    this.received = new Map();
    /** @type {Map<string, {digest: string, view: any}>} and for the index before it: a live
     * recompile's pane that did not change is not sent again (Python answers `unchanged`) */
    this.before = new Map();
    /** @type {Index} */
    this.index = model.get("index");
    /** @type {Map<string, number>} source key -> its colour */
    this.palette = new Map();
    /** @type {Map<string, string>} source key -> its short label, as Python made it */
    this.srcLabels = new Map();
    this.readIndex();
  }

  readIndex() {
    this.index = this.model.get("index");
    this.panes.clear();
    this.before = this.received;
    this.received = new Map();
    this.palette = new Map((this.index ? this.index.src_keys : []).map((k, i) => [k, i % PALETTE]));
    this.srcLabels = new Map((this.index ? this.index.src_keys : []).map((k, i) => [k, this.index.src_labels[i]]));
  }

  /** @param {string|null} compile @param {string} pane */
  key(compile, pane) {
    const shared = this.index ? this.index.exploration_panes.includes(pane) : false;
    return (shared ? "" : compile || "") + PANE_KEY_SEP + pane;
  }

  /**
   * The pane's data, built (or decompressed) on first use.
   * @param {string|null} compile @param {string} pane @returns {Promise<any>}
   */
  pane(compile, pane) {
    const key = this.key(compile, pane);
    let got = this.panes.get(key);
    if (!got) {
      got = this.standalone ? this.fromPage(key).then(paneView) : this.fromKernel(compile, pane, key);
      this.panes.set(key, got);
      got.catch(() => this.panes.delete(key));
    }
    return got;
  }

  /** @param {string} key @returns {Promise<any>} */
  async fromPage(key) {
    const blob = this.model.get("_blobs")[key];
    if (blob === undefined) throw new Error(`this page has no pane ${key.replace(PANE_KEY_SEP, " ")}`);
    const bytes = Uint8Array.from(atob(blob), (c) => c.charCodeAt(0));
    const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
    return JSON.parse(await new Response(stream).text());
  }

  /**
   * The pane from Python: the widget's `_pane` command builds it (and caches it there);
   * the one held from the index before is kept when Python says it did not change.
   * @param {string|null} compile @param {string} pane @param {string} key @returns {Promise<any>}
   */
  async fromKernel(compile, pane, key) {
    const held = this.before.get(key);
    const reply = await invokeReply(this.experimental, "_pane", { compile, pane, have: held ? held.digest : null }, this.signal);
    const view = reply.unchanged && held ? held.view : paneView(reply.data);
    this.received.set(key, { digest: reply.digest, view });
    return view;
  }
}

export { Store, graphView };
