// @ts-check
// The unit tree of the graph canvas: nodes grouped by the nn.Module hierarchy torch
// recorded (Node.module_stack), so a 3,000-node joint graph opens as the model's blocks.
// Presentation only: the groups are the model's module paths; the view adds two kinds of
// box of its own, both labelled as such: "inputs" (placeholders no one module owns) and
// runs of consecutive nodes when one level would otherwise hold hundreds of boxes.

/**
 * @typedef {{dtype: string, shape: string[], stride: string[], device: string}} GcMeta
 * @typedef {{
 *   name: string, op: string, target: string,
 *   meta: GcMeta[], module_stack: string[], inputs: number[], users: number[],
 *   src: string|null, label: string, function: string, code: string, kernels: string[],
 *   line: number, runs?: GcSubgraphRef[], called_by?: GcSubgraphRef[],
 *   saved?: string,
 * }} GcNode  `saved`: what the forward saves of it for the backward (compiler.memory)
 * @typedef {{node: number, role: string, module: string, id: string}} GcSubgraphRef
 *   a higher-order op's link: from the op to the nested graph's first node, or back
 * @typedef {{
 *   key: string, label: string, depth: number, parent: GcGroup|null, path: GcGroup[],
 *   kids: GcUnit[], members: number[], first: number, synthetic: boolean,
 *   edges: [number, number][]|null, layout: GcLayout|null, note: string,
 * }} GcGroup
 * @typedef {number|GcGroup} GcUnit  a node index or a group
 * @typedef {LayeredLayout & {sizes: LayoutUnit[]}} GcLayout  a group's children laid out
 */
/** @import { LayeredLayout, LayoutUnit } from "./layout.js" */

const GC_MAX_KIDS = 60; // direct node children of one group before they are split in runs
const GC_MAX_LOOSE = 16; // the same for top-level nodes beside module groups
const GC_INPUTS_MIN = 4; // top-level placeholders gathered in one "inputs" box from this many
const GC_INPUTS_KEY = "\u0001inputs";
const GC_OPEN_UNITS = 60; // at most this many boxes when a graph opens
const GC_REPEAT_MIN = 4; // numbered siblings (h.0, h.1, ...) from this many are repeated blocks

/** @param {string} key @param {string} label @param {GcGroup|null} parent @param {boolean} synthetic */
function gcGroup(key, label, parent, synthetic) {
  /** @type {GcGroup} */
  const g = {
    key,
    label,
    depth: parent ? parent.depth + 1 : 0,
    parent,
    path: [],
    kids: [],
    members: [],
    first: Infinity,
    synthetic,
    edges: null,
    layout: null,
    note: "",
  };
  g.path = parent && parent.depth > 0 ? parent.path.concat([g]) : parent ? [g] : [];
  if (parent) parent.kids.push(g);
  return g;
}

/**
 * The label of a module path under its parent: `transformer.h.0` under `transformer` is `h.0`.
 * @param {string} key @param {string} parentKey
 */
function gcModuleLabel(key, parentKey) {
  if (parentKey && key.startsWith(parentKey + ".")) return key.slice(parentKey.length + 1);
  const parts = key.split(".");
  const last = parts[parts.length - 1];
  return /^\d+$/.test(last) && parts.length > 1 ? parts.slice(-2).join(".") : last;
}

/** Longest common prefix of module stacks. @param {string[][]} stacks */
function gcCommonStack(stacks) {
  if (!stacks.length) return [];
  let common = stacks[0];
  for (const s of stacks) {
    let k = 0;
    while (k < common.length && k < s.length && common[k] === s[k]) k++;
    common = common.slice(0, k);
    if (!common.length) break;
  }
  return common;
}

/**
 * Group the nodes of a graph pane into a tree of units.
 *
 * Placeholders and attributes carry no module stack of their own; they sit in the deepest
 * module that all their users share (a block's weights inside the block).
 *
 * Example: `gcBuildTree(pane.nodes).root.kids` are the top-level units.
 *
 * @param {GcNode[]} nodes
 * @returns {{root: GcGroup, chain: GcGroup[][]}} chain[i]: the groups holding node i, outermost first
 */
function gcBuildTree(nodes) {
  const root = gcGroup("", "", null, false);
  const stacks = nodes.map((n) => (Array.isArray(n.module_stack) ? n.module_stack : []));
  nodes.forEach((n, i) => {
    if (stacks[i].length || (n.op !== "placeholder" && n.op !== "get_attr")) return;
    const users = (n.users || []).map((u) => stacks[u]).filter((s) => s.length);
    if (users.length && users.length === (n.users || []).length) stacks[i] = gcCommonStack(users);
  });
  /** @type {Map<string, GcGroup>} */
  const groups = new Map();
  const deepest = stacks.map((stack) => {
    let g = root;
    for (const key of stack) {
      let next = groups.get(key);
      if (!next) {
        next = gcGroup(key, gcModuleLabel(key, g.key), g, false);
        groups.set(key, next);
      }
      g = next;
    }
    return g;
  });
  /** @type {number[]} */
  const rootInputs = [];
  nodes.forEach((n, i) => {
    if (deepest[i] === root && n.op === "placeholder") rootInputs.push(i);
  });
  if (rootInputs.length >= GC_INPUTS_MIN) {
    const inputs = gcGroup(GC_INPUTS_KEY, "inputs", root, true);
    for (const i of rootInputs) deepest[i] = inputs;
  }
  deepest.forEach((g, i) => g.kids.push(i));
  gcSplitRuns(root, nodes, deepest);
  const chain = deepest.map((g) => g.path);
  // A group's place in graph order is its first computing node: Dynamo lists every
  // parameter first, so counting placeholders would put a block's MLP (whose weights come
  // early) before the residual add that feeds it, and its edges would be drawn upwards.
  const sourceOnly = (/** @type {number} */ i) => nodes[i].op === "placeholder" || nodes[i].op === "get_attr";
  deepest.forEach((g, i) => {
    for (const a of g.path) a.members.push(i);
  });
  /** @param {GcGroup} g */
  const orderOf = (g) => {
    const computing = g.members.find((i) => !sourceOnly(i));
    g.first = computing === undefined ? g.members[0] : computing;
    for (const k of g.kids) if (typeof k !== "number") orderOf(k);
  };
  root.members = nodes.map((_, i) => i);
  for (const k of root.kids) if (typeof k !== "number") orderOf(k);
  root.first = 0;
  gcSortKids(root);
  return { root, chain };
}

/**
 * Split long lists of direct node children into runs of consecutive nodes.
 * @param {GcGroup} g @param {GcNode[]} nodes @param {GcGroup[]} deepest
 */
function gcSplitRuns(g, nodes, deepest) {
  const direct = g.kids.filter((k) => typeof k === "number");
  // Loose nodes beside the model's modules (RNG, masks, gradients torch recorded no module
  // for) would line up in one wide row under them: beside groups, runs start sooner.
  const beside = g.depth === 0 && direct.length < g.kids.length;
  const most = beside ? GC_MAX_LOOSE : GC_MAX_KIDS;
  if (direct.length > most) {
    const size = Math.max(beside ? GC_MAX_LOOSE : 40, Math.ceil(direct.length / 40));
    /** @type {GcUnit[]} */
    const kids = g.kids.filter((k) => typeof k !== "number");
    for (let s = 0; s < direct.length; s += size) {
      const run = direct.slice(s, s + size);
      const label = `${nodes[run[0]].name} … ${nodes[run[run.length - 1]].name}`;
      const r = gcGroup(`${g.key}\u0001${s}`, label, null, true);
      r.note = gcCommonSource(run, nodes) || "";
      r.parent = g;
      r.depth = g.depth + 1;
      r.path = g.depth > 0 ? g.path.concat([r]) : [r];
      r.kids = run;
      for (const i of run) deepest[i] = r;
      kids.push(r);
    }
    g.kids = kids;
  }
  for (const k of g.kids) if (typeof k !== "number") gcSplitRuns(k, nodes, deepest);
}

/** The source line most nodes of a run came from (`modeling_gpt2.py:191`), or "". @param {number[]} run @param {GcNode[]} nodes */
function gcCommonSource(run, nodes) {
  const counts = new Map();
  /** @type {Map<string, number>} a node of each source key, for its label */
  const first = new Map();
  for (const i of run) {
    const src = nodes[i].src;
    if (src) counts.set(src, (counts.get(src) || 0) + 1);
    if (src && !first.has(src)) first.set(src, i);
  }
  let best = "";
  let most = 0;
  for (const [src, c] of counts) if (c > most) [best, most] = [src, c];
  return best ? nodes[/** @type {number} */ (first.get(best))].label || "" : "";
}

/** @param {GcUnit} u */
function gcFirst(u) {
  return typeof u === "number" ? u : u.first;
}

/** @param {GcGroup} g */
function gcSortKids(g) {
  g.kids.sort((a, b) => gcFirst(a) - gcFirst(b));
  for (const k of g.kids) if (typeof k !== "number") gcSortKids(k);
}

/** Is node i inside group g? @param {GcGroup[][]} chain @param {GcGroup} g @param {number} i */
function gcContains(chain, g, i) {
  return g.depth === 0 || chain[i][g.depth - 1] === g;
}

/**
 * The direct child of g that holds node i (i itself when it is a direct child).
 * @param {GcGroup[][]} chain @param {GcGroup} g @param {number} i @returns {GcUnit}
 */
function gcChildOf(chain, g, i) {
  const p = chain[i];
  return p.length > g.depth ? p[g.depth] : i;
}

/**
 * The edges between g's direct children, lifted from the node edges inside g; each
 * pair once, as indices into g.kids. Cached on the group (it does not depend on what
 * is expanded).
 * @param {GcGroup} g @param {GcNode[]} nodes @param {GcGroup[][]} chain
 * @returns {[number, number][]}
 */
function gcGroupEdges(g, nodes, chain) {
  if (g.edges) return g.edges;
  const index = new Map(g.kids.map((k, j) => [k, j]));
  const seen = new Set();
  /** @type {[number, number][]} */
  const out = [];
  const width = g.kids.length;
  for (const i of g.members) {
    const b = index.get(gcChildOf(chain, g, i));
    for (const j of nodes[i].inputs || []) {
      if (!gcContains(chain, g, j)) continue;
      const from = gcChildOf(chain, g, j);
      // The inputs box feeds nearly everything: routing those edges would fill the view
      // with parallel lanes. They show when a node is selected (its neighbourhood).
      if (typeof from !== "number" && from.key === GC_INPUTS_KEY) continue;
      const a = index.get(from);
      if (a === b || a === undefined || b === undefined) continue;
      const key = a * width + b;
      if (seen.has(key)) continue;
      seen.add(key);
      out.push([a, b]);
    }
  }
  g.edges = out;
  return out;
}

/**
 * What is open when a graph opens: level by level, the biggest groups first, while the
 * view stays under GC_OPEN_UNITS boxes. Repeated blocks (h.0, h.1, ... four or more
 * numbered siblings) open or stay closed together, and stay closed: the model reads as
 * its blocks first. Boxes the view made (runs of nodes, the inputs) stay closed.
 * @param {GcGroup} root @param {Set<GcGroup>} expanded  what is open, added to
 */
function gcOpenDefault(root, expanded) {
  let frontier = root.kids.filter((k) => typeof k !== "number");
  let shown = root.kids.length;
  while (frontier.length) {
    /** @type {Map<string, GcGroup[]>} */
    const families = new Map();
    for (const g of frontier) {
      if (g.synthetic) continue; // runs and the inputs box exist to stay folded
      const m = /^(.*?)\.?\d+$/.exec(g.label);
      const key = m && g.parent ? `${g.parent.key}\u0002${m[1]}` : g.key;
      const family = families.get(key);
      if (family) family.push(g);
      else families.set(key, [g]);
    }
    const size = (/** @type {GcGroup[]} */ fam) => fam.reduce((s, g) => s + g.members.length, 0);
    /** @type {GcGroup[]} */
    const opened = [];
    for (const fam of [...families.values()].sort((a, b) => size(b) - size(a))) {
      const extra = fam.reduce((s, g) => s + g.kids.length - 1, 0);
      const repeated = fam.length >= GC_REPEAT_MIN;
      if (fam.every((g) => g.kids.length <= 1) || (!repeated && shown + extra <= GC_OPEN_UNITS)) {
        for (const g of fam) expanded.add(g);
        opened.push(...fam);
        shown += extra;
      }
    }
    frontier = opened.flatMap((g) => g.kids.filter((k) => typeof k !== "number"));
  }
}

export { gcBuildTree, gcGroupEdges, gcOpenDefault };
