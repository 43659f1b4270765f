// @ts-check
/**
 * The kernel lab's front-end: the Triton kernel in the shared CodeMirror editor
 * (editor.js, the one live recompile uses), its launch config and target, and what the
 * latest lowering said (ptxas's registers, spills, shared memory; the diff against the
 * captured stages; an error at its line). It is in the editors' bundle (dist/editors.js, with
 * the live editor), which the Triton lowering pane imports when the user opens the lab
 * (explorer/editing/lab.py says why);
 * the pane shows the lowered stages as one more variant.
 *
 * Every edit (debounced) asks Python to lower the kernel again (`_relower`); a reply to
 * an older edit is dropped. SASS follows in a second request: cuobjdump costs more than
 * the lowering, and the worker's Triton cache makes that request pay for SASS only.
 *
 * Example: `const lab = mountLab(host, { source, config, ask, onResult, onClose });`
 */

import { createEditor } from "./editor.js";
import { h } from "./util.js";
/** @import { LabFailure, LabResult } from "./panes/typedefs.js" */

const DEBOUNCE_MS = 350;
const TARGETS = ["sm_75", "sm_80", "sm_86", "sm_89", "sm_90", "sm_100", "sm_120"]; // all lower with Triton 3.6.0
const POWERS = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096];
const WARPS = [1, 2, 4, 8, 16, 32];
const STAGES = [1, 2, 3, 4, 5, 6];

/**
 * @typedef {{source: string, config: Object<string, string>, target: string,
 *            ask: (msg: any, signal: AbortSignal) => Promise<any>,
 *            onResult: (result: LabResult) => void, onClose: () => void}} LabOptions
 *   `ask` sends one request to Python's `_relower` (compile and kernel ids added by the pane)
 * @typedef {{el: HTMLElement, destroy(): void}} Lab
 */

/**
 * The lab in `host`: editor, config controls, status line.
 * @param {HTMLElement} host @param {LabOptions} options @returns {Lab}
 */
export function mountLab(host, options) {
  const { source, ask, onResult, onClose } = options;
  /** @type {Object<string, string>} */
  const config = { ...options.config };
  let target = options.target;
  let latest = 0;
  /** @type {AbortController|null} */
  let inflight = null;
  /** @type {ReturnType<typeof setTimeout>|undefined} */
  let timer;

  const status = h("div", { cls: "tce-lab-status", attrs: { "data-lab-status": "idle" } });
  const stats = h("div", { cls: "tce-lab-stats" });
  const error = h("div", { cls: "tce-error tce-lab-error" });
  const controls = h("div", { cls: "tce-toolbar tce-lab-controls" });
  const editorBox = h("div", { cls: "tce-lab-editor" });
  const el = h("div", { cls: "tce-lab" }, [
    h("div", { cls: "tce-lowering-head" }, [
      h("span", { cls: "tce-block-title", text: "Kernel lab · edit the kernel, its config or target" }),
      h("button", { cls: "tce-link", text: "close lab", attrs: { "data-lab-close": "" }, on: { click: () => onClose() } }),
      h("button", { cls: "tce-link", text: "reset", title: "the kernel and config as recorded", attrs: { "data-lab-reset": "" },
        on: { click: () => { editor.setText(source); Object.assign(config, options.config); target = options.target; renderControls(); schedule(0); } } }),
    ]),
    controls, editorBox, status, stats, error,
  ]);
  host.append(el);

  const editor = createEditor(editorBox, {
    doc: source, language: "python", maxHeight: "520px",
    onChange: () => schedule(DEBOUNCE_MS), onRun: () => schedule(0),
  });

  /** @param {string} key @param {number[]} values @param {string} current @param {(v: string) => void} set */
  function select(key, values, current, set) {
    const options = values.map(String);
    if (!options.includes(current)) options.push(current);
    const sel = /** @type {HTMLSelectElement} */ (h("select", { cls: "tce-lab-select", attrs: { "data-lab-config": key, "aria-label": key } },
      options.map((v) => {
        const o = /** @type {HTMLOptionElement} */ (h("option", { text: v, attrs: { value: v } }));
        o.selected = v === current;
        return o;
      })));
    sel.addEventListener("change", () => { set(sel.value); schedule(0); });
    return h("label", { cls: "tce-fact" }, [h("span", { cls: "tce-key", text: key }), sel]);
  }

  function renderControls() {
    controls.replaceChildren();
    for (const key of Object.keys(config)) {
      const values = key.endsWith("BLOCK") ? POWERS : key === "num_warps" ? WARPS : key === "num_stages" ? STAGES : null;
      if (!values) continue;
      controls.append(select(key, values, config[key], (v) => { config[key] = v; }));
    }
    controls.append(select("target", /** @type {any} */ (TARGETS), target, (v) => { target = v; }));
  }

  /** @param {number} ms */
  function schedule(ms) {
    clearTimeout(timer);
    timer = setTimeout(() => lower(false), ms);
  }

  /** @param {boolean} sass */
  async function lower(sass) {
    const id = ++latest;
    if (inflight) inflight.abort();
    const controller = new AbortController();
    inflight = controller;
    setStatus(sass ? "disassembling SASS…" : "lowering…", "busy");
    /** @type {any} */
    let reply;
    try {
      reply = await ask({ source: editor.getText(), config, target, sass }, controller.signal);
    } catch (exc) {
      if (id !== latest) return;
      setStatus("", "error");
      error.textContent = String(/** @type {any} */ (exc).message || exc);
      return;
    }
    if (id !== latest) return; // a newer edit is on its way
    inflight = null;
    if (reply && "variant" in reply) {
      const result = /** @type {LabResult} */ (reply);
      editor.setDiagnostics([]);
      error.textContent = "";
      stats.classList.remove("tce-lab-stale");
      showStats(result, sass);
      onResult(result);
      setStatus(`lowered in ${result.seconds.toFixed(2)} s${sass ? " with SASS" : ""}`, sass ? "done" : "lowered");
      if (!sass) lower(true);
    } else {
      const failure = /** @type {LabFailure} */ (reply);
      error.textContent = failure.line ? `line ${failure.line}: ${failure.message}` : failure.message;
      editor.setDiagnostics(failure.line ? [{ line: failure.line, message: failure.message }] : []);
      stats.classList.add("tce-lab-stale"); // the last lowering that worked, until the next one
      setStatus(`did not lower (${failure.kind})`, "error");
    }
  }

  /** @param {string} text @param {string} state */
  function setStatus(text, state) {
    status.textContent = text;
    status.setAttribute("data-lab-status", state);
  }

  /** @param {LabResult} r @param {boolean} sass */
  function showStats(r, sass) {
    /** @type {[string, string][]} */
    const facts = [];
    facts.push(["registers", r.registers === null ? "?" : String(r.registers)]);
    facts.push(["spills", r.spill_stores === null ? "?" : `${r.spill_stores} B stored · ${r.spill_loads} B loaded`]);
    if (r.stack_bytes !== null) facts.push(["stack", `${r.stack_bytes} B`]);
    facts.push(["shared memory", `${r.variant.shared_memory.toLocaleString()} B`]);
    const ptx = r.changed.ptx;
    if (r.reproduced === true) facts.push(["PTX", "same instructions as captured"]);
    else if (ptx) facts.push(["PTX", `${ptx.length} lines changed, ${r.removed.ptx || 0} removed`]);
    stats.replaceChildren(
      ...facts.map(([k, v]) => h("span", { cls: "tce-fact", attrs: { "data-lab-fact": k } }, [
        h("span", { cls: "tce-key", text: k }), h("span", { cls: "tce-fact-value", text: v })])),
      h("div", { cls: "tce-note", text: r.note + (sass ? "" : " SASS follows.") }),
    );
  }

  renderControls();
  schedule(0);
  return {
    el,
    destroy() {
      clearTimeout(timer);
      latest++;
      if (inflight) inflight.abort();
      editor.destroy();
      el.remove();
    },
  };
}
