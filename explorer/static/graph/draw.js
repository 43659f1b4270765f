// @ts-check
// Drawing helpers of the graph canvas (canvas.js, panel.js): elements, labels, paths.

/** @import { GcNode, GcMeta, GcGroup, GcUnit } from "./tree.js" */
/** @import { Point } from "./layout.js" */

const GC_SVG = "http://www.w3.org/2000/svg";
const GC_LABEL_MAX = 34;
const GC_SEARCH_MAX = 40;

/**
 * @template {keyof HTMLElementTagNameMap} K
 * @param {K} tag @param {string} [cls] @param {string} [text]
 * @returns {HTMLElementTagNameMap[K]}
 */
function gcEl(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
}

/** @param {string} tag @param {Object<string, string|number>} attrs @returns {SVGElement} */
function gcSvg(tag, attrs) {
  const e = /** @type {SVGElement} */ (document.createElementNS(GC_SVG, tag));
  for (const k in attrs) e.setAttribute(k, String(attrs[k]));
  return e;
}

/** @param {string} text @param {number} [max] */
function gcClip(text, max = GC_LABEL_MAX) {
  return text.length > max ? text.slice(0, max - 1) + "…" : text;
}

/** `torch.ops.aten.view.default` -> `view`; `operator.getitem` -> `getitem`. @param {GcNode} n */
function gcShortTarget(n) {
  if (n.op === "placeholder" || n.op === "output" || n.op === "get_attr") return n.op;
  const t = n.target || "";
  const m = /^torch\.ops\.[\w]+\.([\w]+)(?:\.[\w]+)?$/.exec(t);
  return m ? m[1] : t.split(".").pop() || t;
}

/** @param {GcMeta|undefined} m */
function gcMetaText(m) {
  return m ? `${m.dtype}[${(m.shape || []).join(", ")}]` : "";
}

/** A collapsed group's second line: its size, and where a run of nodes came from. @param {GcGroup} g */
function gcGroupNote(g) {
  const count = `${g.members.length.toLocaleString()} nodes`;
  return g.note ? `${count} · ${g.note}` : count;
}

/** @param {GcUnit} u */
function gcUnitKey(u) {
  return typeof u === "number" ? "n" + u : "g" + u.key;
}

/** An SVG path through points: vertical-tangent curves, so edges leave and enter boxes cleanly. @param {Point[]} pts */
function gcPathD(pts) {
  let d = `M${pts[0].x.toFixed(1)},${pts[0].y.toFixed(1)}`;
  for (let i = 1; i < pts.length; i++) {
    const a = pts[i - 1];
    const b = pts[i];
    const my = ((a.y + b.y) / 2).toFixed(1);
    d += ` C${a.x.toFixed(1)},${my} ${b.x.toFixed(1)},${my} ${b.x.toFixed(1)},${b.y.toFixed(1)}`;
  }
  return d;
}

export {
  GC_LABEL_MAX,
  GC_SEARCH_MAX,
  gcEl,
  gcSvg,
  gcClip,
  gcShortTarget,
  gcMetaText,
  gcGroupNote,
  gcUnitKey,
  gcPathD,
};
