// @ts-check
/**
 * The live editor: a source editor whose edits recompile, with the compile controls,
 * the compiling indicator, the error at its line and the version history.
 *
 * Traits (from `explorer.editing.live.EditorWidget`): `code` `{text, n}` (set by
 * Python; `n` grows on every push), `options` `{mode, backend, dynamic, fullgraph}`,
 * `auto` (recompile on idle), `status` `{state, message, line, stale, version}`,
 * `versions` `[{version, label, source, summary}]`, `shown` (version on show),
 * `magic_line` (the `%%compile` line that "write back to cell" keeps on top).
 * Requests to Python are anywidget commands (`experimental.invoke`): `_edit` `{text}`,
 * `_recompile`, `_show` `{version}`. The idle pause is kept in Python (`debounce_ms`), so that setting
 * `.source` from Python and typing here behave the same.
 * Text reaches the DOM through textContent only.
 */

import { h, invoke } from "./util.js";
import { createEditor } from "./editor.js";
/** @import { Experimental, Model } from "./util.js" */

const CSS = `
.tce-live { font: 12px/1.4 var(--jp-ui-font-family, sans-serif); border: 1px solid #bbb; padding: 6px; }
.tce-live-bar { display: flex; gap: 8px; align-items: center; flex-wrap: wrap; margin-bottom: 4px; }
.tce-live-ed { margin-bottom: 4px; }
.tce-live-status { min-height: 18px; }
.tce-live-status.compiling::before { content: "⟳ "; }
.tce-live-status.error { color: #b00; white-space: pre-wrap; }
.tce-live-stale { color: #a66a00; }
.tce-live-history { display: flex; gap: 4px; flex-wrap: wrap; margin-top: 4px; }
.tce-live-history button.shown { font-weight: bold; }
.tce-live-stale-view { opacity: 0.55; outline: 2px dashed #d90; }
`;

/**
 * @param {{model: Model, el: HTMLElement, experimental?: Experimental}} ctx
 * @returns {() => void} cleanup
 */
function render({ model, el, experimental }) {
  const aborted = new AbortController();
  /** A request to Python; a failed one shows in the status line. @param {string} name @param {any} msg */
  const ask = (name, msg) => {
    invoke(experimental, name, msg, aborted.signal).catch((/** @type {Error} */ err) => {
      if (!aborted.signal.aborted) status.textContent = `${name.slice(1)} failed: ${err.message}`;
    });
  };
  const style = h("style");
  style.textContent = CSS;
  const root = h("div", { cls: "tce-live" });
  // JupyterLab's keyboard shortcuts (Enter, arrows, A/B, ...) must not see the editor's keys
  root.setAttribute("data-lm-suppress-shortcuts", "true");
  el.replaceChildren(style, root);

  // -- controls ------------------------------------------------------------------------
  const bar = h("div", { cls: "tce-live-bar" });
  /** @param {string} name @param {string[]} values */
  const choice = (name, values) => {
    const sel = /** @type {HTMLSelectElement} */ (h("select", { cls: `tce-live-${name}` }));
    for (const v of values) {
      const o = /** @type {HTMLOptionElement} */ (h("option", { text: v || "default" }));
      o.value = v;
      sel.append(o);
    }
    return sel;
  };
  const backend = choice("backend", ["inductor", "aot_eager", "eager"]);
  const mode = choice("mode", ["", "reduce-overhead", "max-autotune", "max-autotune-no-cudagraphs"]);
  const dynamic = choice("dynamic", ["", "true", "false"]);
  const fullgraph = /** @type {HTMLInputElement} */ (h("input", { cls: "tce-live-fullgraph" }));
  fullgraph.type = "checkbox";
  const auto = /** @type {HTMLInputElement} */ (h("input", { cls: "tce-live-auto" }));
  auto.type = "checkbox";
  const recompile = h("button", { cls: "tce-live-recompile", text: "Recompile" });
  /** @param {string} text @param {HTMLElement} input */
  const labelled = (text, input) => {
    const l = h("label", { text: `${text} ` });
    l.append(input);
    return l;
  };
  bar.append(labelled("backend", backend), labelled("mode", mode), labelled("dynamic", dynamic),
    labelled("fullgraph", fullgraph), labelled("recompile on edit", auto), recompile);

  // -- the editor: CodeMirror 6 (editor.js) ------------------------------------------
  const ed = h("div", { cls: "tce-live-ed" });
  const editor = createEditor(ed, {
    onChange: (text) => ask("_edit", { text }),
    onRun: () => ask("_recompile", {}),
  });

  const status = h("div", { cls: "tce-live-status" });
  const history = h("div", { cls: "tce-live-history" });
  root.append(bar, ed, status, history);

  let pushed = -1;

  /** The error, if the last compile failed and no edit superseded it, as a diagnostic at its line. */
  function paint() {
    const st = model.get("status") || {};
    const line = st.state === "error" && !st.superseded ? st.line || 1 : null;
    editor.setDiagnostics(line ? [{ line, message: st.message || "error" }] : []);
  }

  function pullCode() {
    const code = model.get("code") || {};
    if (code.n === pushed) return;
    pushed = code.n;
    editor.setText(code.text || "");
    paint();
  }

  function pullOptions() {
    const o = model.get("options") || {};
    backend.value = o.backend || "inductor";
    mode.value = o.mode || "";
    dynamic.value = o.dynamic === true ? "true" : o.dynamic === false ? "false" : "";
    fullgraph.checked = !!o.fullgraph;
    auto.checked = !!model.get("auto");
    recompile.toggleAttribute("disabled", false);
  }

  function pushOptions() {
    model.set("options", {
      backend: backend.value,
      mode: mode.value || null,
      dynamic: dynamic.value === "" ? null : dynamic.value === "true",
      fullgraph: fullgraph.checked,
    });
    model.save_changes();
  }
  for (const c of [backend, mode, dynamic, fullgraph]) c.addEventListener("change", pushOptions);
  auto.addEventListener("change", () => {
    model.set("auto", auto.checked);
    model.save_changes();
  });
  recompile.addEventListener("click", () => ask("_recompile", {}));

  function pullStatus() {
    const st = model.get("status") || {};
    status.className = `tce-live-status ${st.state || ""}`;
    status.textContent = st.message || "";
    if (st.stale) status.append(h("div", { cls: "tce-live-stale", text: `showing the last good result (version ${st.version}), marked stale` }));
    root.dataset.state = st.state || "";
    paint();
  }

  function pullVersions() {
    const versions = model.get("versions") || [];
    const shown = model.get("shown");
    history.replaceChildren(h("span", { text: versions.length ? "versions:" : "" }));
    for (const v of versions) {
      const b = h("button", { cls: v.version === shown ? "shown" : "", text: v.label });
      b.title = v.summary || "";
      b.addEventListener("click", () => ask("_show", { version: v.version }));
      history.append(b);
    }
    if (versions.length) {
      const back = h("button", { cls: "tce-live-writeback", text: "write back to cell" });
      back.addEventListener("click", () => writeBack(back));
      history.append(back);
    }
  }

  /** @param {HTMLElement} button */
  async function writeBack(button) {
    const magic = model.get("magic_line") || "";
    // the version on show, else what the editor holds
    const shown = (model.get("versions") || []).find((/** @type {{version: number, source: string}} */ v) => v.version === model.get("shown"));
    const source = shown ? shown.source : editor.getText();
    const cell = el.closest(".jp-Cell, .jp-CodeCell");
    const content = cell && cell.querySelector(".jp-InputArea-editor .cm-content");
    // CodeMirror 6 keeps its view on the content element; JupyterLab 4 uses CodeMirror 6.
    const view = content && /** @type {any} */ (content).cmView && /** @type {any} */ (content).cmView.view;
    if (magic && view) {
      const text = `${magic}\n${source}`;
      view.dispatch({ changes: { from: 0, to: view.state.doc.length, insert: text } });
      button.textContent = "written back";
      return;
    }
    try {
      await navigator.clipboard.writeText(source);
      button.textContent = "copied (no %%compile cell to write to)";
    } catch (_err) {
      button.textContent = "could not reach the cell";
    }
  }

  pullCode();
  pullOptions();
  pullStatus();
  pullVersions();
  // one table for subscribing and unsubscribing, so the two cannot drift apart
  /** @type {[string, () => void][]} */
  const listeners = [
    ["change:code", pullCode],
    ["change:options", pullOptions],
    ["change:auto", pullOptions],
    ["change:status", pullStatus],
    ["change:versions", pullVersions],
    ["change:shown", pullVersions],
  ];
  for (const [event, pull] of listeners) model.on(event, pull);
  return () => {
    aborted.abort();
    editor.destroy();
    for (const [event, pull] of listeners) model.off(event, pull);
  };
}

export default { render };
