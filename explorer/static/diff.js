// @ts-check
/**
 * The diff view: two versions of a live cell compared, side by side.
 *
 * `model.get("labels")` lists the versions, `model.get("pick")` is `{a, b}` (two labels,
 * set here when the user picks), `model.get("view")` is `explorer.editing.diff_view.diff_view`:
 * `{summary, a, b, stages: [{compile, stage, kind, changed, presence, a_lines, b_lines,
 * ops: [tag, a0, a1, b0, b1][], nodes: [{status, name, detail}], a_marks, b_marks}]}`.
 * Every piece of data reaches the DOM through textContent.
 */

import { h } from "./util.js";
/** @import { Model } from "./util.js" */

const CSS = `
.tce-diff { font: 12px/1.4 var(--jp-ui-font-family, sans-serif); border: 1px solid #ccc;
  padding: 6px; margin-top: 6px; }
.tce-diff-summary { font-weight: bold; margin: 4px 0; }
.tce-diff-bar { display: flex; gap: 6px; align-items: center; flex-wrap: wrap; }
.tce-diff-stage { margin-top: 8px; }
.tce-diff-stage > summary { cursor: pointer; font-family: monospace; }
.tce-diff-cols { display: grid; grid-template-columns: 1fr 1fr; gap: 4px;
  max-height: 360px; overflow: auto; }
.tce-diff-col { font: 11px/16px var(--jp-code-font-family, monospace); white-space: pre;
  overflow-x: auto; }
.tce-diff-line { min-height: 16px; }
.tce-diff-line.del { background: #fdd; }
.tce-diff-line.ins { background: #dfd; }
.tce-diff-line.rep { background: #ffe9b3; }
.tce-diff-line.node-added { border-left: 4px solid #2a2; }
.tce-diff-line.node-removed { border-left: 4px solid #c22; }
.tce-diff-line.node-changed { border-left: 4px solid #d90; }
.tce-diff-nodes { margin: 4px 0; }
.tce-diff-node.added { color: #1a7f1a; }
.tce-diff-node.removed { color: #b00; }
.tce-diff-node.changed { color: #a66a00; }
`;

/**
 * @param {{model: Model, el: HTMLElement}} ctx
 */
function render({ model, el }) {
  const style = h("style");
  style.textContent = CSS;
  const root = h("div", { cls: "tce-diff" });
  el.replaceChildren(style, root);
  const bar = h("div", { cls: "tce-diff-bar" });
  const pickA = /** @type {HTMLSelectElement} */ (h("select", { cls: "tce-diff-a" }));
  const pickB = /** @type {HTMLSelectElement} */ (h("select", { cls: "tce-diff-b" }));
  const showAll = /** @type {HTMLInputElement} */ (h("input"));
  showAll.type = "checkbox";
  const allLabel = h("label", { text: " unchanged stages too" });
  allLabel.prepend(showAll);
  bar.append(h("span", { text: "Diff" }), pickA, h("span", { text: "→" }), pickB, allLabel);
  const summary = h("div", { cls: "tce-diff-summary" });
  const body = h("div", { cls: "tce-diff-body" });
  root.append(bar, summary, body);

  function fillPickers() {
    const labels = /** @type {string[]} */ (model.get("labels") || []);
    const pick = model.get("pick") || {};
    for (const [sel, key] of /** @type {[HTMLSelectElement, string][]} */ ([[pickA, "a"], [pickB, "b"]])) {
      sel.replaceChildren(...labels.map((l) => {
        const o = /** @type {HTMLOptionElement} */ (h("option", { text: l }));
        o.value = l;
        return o;
      }));
      if (pick[key] !== undefined) sel.value = pick[key];
    }
    root.style.display = labels.length >= 2 ? "" : "none";
  }

  function onPick() {
    model.set("pick", { a: pickA.value, b: pickB.value });
    model.save_changes();
  }
  pickA.addEventListener("change", onPick);
  pickB.addEventListener("change", onPick);
  showAll.addEventListener("change", draw);

  /**
   * @param {string[]} lines
   * @param {Map<number, string>} cls  0-based line -> class
   * @param {Object<string, string>} marks  1-based line -> node status
   */
  function column(lines, cls, marks) {
    const col = h("div", { cls: "tce-diff-col" });
    lines.forEach((text, i) => {
      const row = h("div", { cls: "tce-diff-line", text: text || " " });
      const c = cls.get(i);
      if (c) row.classList.add(c);
      const mark = marks[String(i + 1)];
      if (mark) row.classList.add(`node-${mark}`);
      col.append(row);
    });
    return col;
  }

  function draw() {
    const view = model.get("view") || {};
    summary.textContent = view.summary ? `${view.a} → ${view.b}: ${view.summary}` : "";
    body.replaceChildren();
    for (const st of view.stages || []) {
      if (!st.changed && !showAll.checked) continue;
      const box = /** @type {HTMLDetailsElement} */ (h("details", { cls: "tce-diff-stage" }));
      box.dataset.stage = st.stage;
      box.open = st.changed;
      const extra = st.presence !== "both" ? ` (${st.presence})` : st.changed ? "" : " (same)";
      box.append(h("summary", { text: `${st.compile} ${st.stage}${extra}` }));
      if (st.nodes.length) {
        const list = h("div", { cls: "tce-diff-nodes" });
        for (const n of st.nodes) {
          const detail = n.detail ? `: ${n.detail}` : "";
          list.append(h("div", { cls: `tce-diff-node ${n.status}`, text: `${n.status} ${n.name}${detail}` }));
        }
        box.append(list);
      }
      /** @type {Map<number, string>} */
      const aCls = new Map();
      /** @type {Map<number, string>} */
      const bCls = new Map();
      for (const [tag, a0, a1, b0, b1] of st.ops) {
        if (tag === "equal") continue;
        const c = tag === "replace" ? "rep" : tag === "delete" ? "del" : "ins";
        for (let i = a0; i < a1; i++) aCls.set(i, c === "ins" ? "" : c === "rep" ? "rep" : "del");
        for (let j = b0; j < b1; j++) bCls.set(j, c === "del" ? "" : c === "rep" ? "rep" : "ins");
      }
      const cols = h("div", { cls: "tce-diff-cols" });
      cols.append(column(st.a_lines, aCls, st.a_marks || {}), column(st.b_lines, bCls, st.b_marks || {}));
      box.append(cols);
      body.append(box);
    }
  }

  fillPickers();
  draw();
  model.on("change:labels", fillPickers);
  model.on("change:pick", fillPickers);
  model.on("change:view", draw);
}

export default { render };
