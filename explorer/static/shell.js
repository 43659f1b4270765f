// @ts-check
// The shell: header, compile tree, stage tabs, source pane. It routes the selection to
// the open pane's renderer (`RENDERERS[kind](el, pane, ctx)`, generated from
// explorer/panes/kinds.py) and colours every view by the selected source line (or the
// selected kernel's lines). anywidget calls `render`; requests to Python (a pane, the
// HTML export) are anywidget commands (`experimental.invoke`).

/** @import { Model, Ctx, Experimental, PaneHandle } from "./util.js" */
/** @import { GcNode } from "./graph/tree.js" */
/** @import { CompileEntry, Index, OutputCodePane, PaneError, Selection } from "./panes/typedefs.js" */
import { SEL_KEYS, MARKER_TEXT, h, download, invoke, scrollWithin, hlClass } from "./util.js";
import { appendHighlighted } from "./highlight.js";
import { RENDERERS } from "./panes/renderers.js";
import { renderUnknown } from "./panes/runtime.js";
import { Store } from "./store.js";

class Shell {
  /** @param {Model} model @param {HTMLElement} el @param {Experimental|undefined} experimental */
  constructor(model, el, experimental) {
    this.model = model;
    this.experimental = experimental;
    /** ends the requests to Python still waiting when the view goes */
    this.aborted = new AbortController();
    this.store = new Store(model, experimental, this.aborted.signal);
    this.standalone = this.store.standalone;
    /** @type {Map<string, any>} pane state kept across re-renders (graph mode, lowering) */
    this.state = new Map();
    /** @type {PaneHandle|null} */
    this.handle = null;
    /** @type {any} the open pane's data */
    this.open = null;
    /** @type {Map<string, string[]>} kernel id -> its source keys, from opened output code */
    this.kernelSrc = new Map();
    this.renderCount = 0;
    this.root = h("div", { cls: "tce-root" + (this.standalone ? " tce-standalone" : "") });
    el.append(this.root);
    // the shell's parts, filled (and put in place again) by buildShell on every index
    this.status = h("span", { cls: "tce-status" });
    this.tree = h("nav", { cls: "tce-compiles", attrs: { "aria-label": "compiles" } });
    this.sourcePane = h("section", { cls: "tce-source", attrs: { "aria-label": "source" } });
    this.tabs = h("div", { cls: "tce-tabs", attrs: { role: "tablist", "aria-orientation": "vertical" } });
    this.paneErrors = h("div", { cls: "tce-pane-errors" });
    this.pane = h("div", { cls: "tce-pane" });
    this.paneTitle = h("div", { cls: "tce-pane-title" });
    /** @type {Map<string, HTMLElement>} source key -> its row in the source pane */
    this.sourceRows = new Map();
    this.onIndex = () => { this.store.readIndex(); this.setIndex(); };
    this.onSelection = () => this.applySelection(this.model.get("selection"));
    model.on("change:index", this.onIndex);
    model.on("change:selection", this.onSelection);
    /** @type {Ctx} */
    this.ctx = {
      selection: /** @type {Selection} */ ({}),
      select: (change) => this.select(change),
      srcClass: (key) => this.srcClass(key),
      state: this.state,
      labels: {},
      kernel: (kid) => {
        const c = this.index && this.index.compiles ? this.compile : undefined;
        return (c && c.kernels && c.kernels[kid]) || null;
      },
      srcLabel: (key) => this.store.srcLabels.get(key) || key,
      ask: experimental
        ? (name, msg, signal) => invoke(experimental, name, msg, signal || this.aborted.signal)
        : undefined,
    };
    this.setIndex();
  }

  destroy() {
    this.aborted.abort();
    this.model.off("change:index", this.onIndex);
    this.model.off("change:selection", this.onSelection);
    if (this.handle && this.handle.destroy) this.handle.destroy();
    this.root.remove();
  }

  get index() {
    return /** @type {Index} */ (this.store.index);
  }

  setIndex() {
    this.root.replaceChildren();
    this.sel = undefined;
    const index = this.index;
    if (!index || !index.compiles) {
      this.root.append(h("div", { cls: "tce-empty", text: "Nothing to show yet." }));
      return;
    }
    this.ctx.labels = index.labels;
    this.kernelSrc.clear();
    this.sel = this.normalise(this.model.get("selection"));
    this.ctx.selection = this.sel;
    this.buildShell();
    this.renderCompile();
  }

  /**
   * The selection to show. Python decides it (the index's default selection, and the
   * widget's repair after a new index, explorer.panes.kept_selection); a click that names
   * a compile and not one of its panes opens `paneFor` there, and a selection naming no
   * compile of this index shows the index's default.
   * @param {any} raw @returns {Selection}
   */
  normalise(raw) {
    const index = this.index;
    const s = Object.assign({ compile: null, stage: null, src: null, node: null, kernel: null }, raw || {});
    const c = index.compiles.find((x) => x.key === s.compile);
    if (!c) return Object.assign(s, index.default_selection);
    if (!c.panes.some((p) => p.id === s.stage)) {
      s.stage = this.paneFor(c, s.stage);
      s.node = null;
    }
    if (s.src && !this.store.palette.has(s.src)) s.src = null;
    return s;
  }

  /**
   * The pane of compile `c` to open from pane `wanted` of another: the one showing the
   * same stage (forward/x -> inference/x), else the one the index names, `default_stage`.
   * @param {CompileEntry} c @param {string|null} wanted @returns {string|null}
   */
  paneFor(c, wanted) {
    const was = wanted ? this.index.compiles.flatMap((x) => x.panes).find((p) => p.id === wanted) : undefined;
    const same = was && c.panes.find((p) => p.stage === was.stage);
    return same ? same.id : c.default_stage;
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
    if (!this.index || !this.index.compiles) return;
    const next = this.normalise(raw);
    const prev = this.sel;
    if (prev && SEL_KEYS.every((k) => prev[k] === next[k])) return;
    this.sel = next;
    this.ctx.selection = next;
    if (!prev || prev.compile !== next.compile || prev.stage !== next.stage) {
      this.renderCompile();
    } else {
      this.updateHighlights();
      if (next.node && next.node !== prev.node) this.revealNode(next.node);
      if (next.kernel && next.kernel !== prev.kernel && this.handle && this.handle.revealKernel) this.handle.revealKernel(next.kernel);
    }
  }

  exportName() {
    const base = String(this.index.target || "exploration").replace(/[^\w.-]+/g, "_");
    return `torch-compile-explorer-${base}.html`;
  }

  exportHtml() {
    if (this.standalone) {
      const html = "<!DOCTYPE html>\n" + document.documentElement.outerHTML;
      download(new Blob([html], { type: "text/html" }), this.exportName());
      return;
    }
    const status = this.status;
    status.textContent = "exporting…";
    invoke(this.experimental, "_export_html", {}, this.aborted.signal).then((html) => {
      download(new Blob([html], { type: "text/html" }), this.exportName());
      status.textContent = "exported";
    }, (/** @type {Error} */ err) => {
      status.textContent = `export failed: ${err.message}`;
    });
  }
  buildShell() {
    const view = this.index;
    const env = view.environment || {};
    const opts = view.options || {};
    const facts = [
      env.torch && `torch ${env.torch}`,
      env.device && `device ${env.device}`,
      opts.backend && `backend ${opts.backend}`,
      opts.mode && `mode ${opts.mode}`,
      view.source === "trace" ? "loaded from a trace" : "",
    ].filter(Boolean).join(" · ");
    this.status.textContent = "";
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
    for (const e of view.errors || []) notes.append(stageError(e, e.stage));
    const stage = h("section", { cls: "tce-stage" }, [this.paneTitle, this.paneErrors, this.pane]);
    const nav = h("div", { cls: "tce-nav" }, [this.tree, h("div", { cls: "tce-stages" }, [
      h("div", { cls: "tce-heading", text: "Stages" }), this.tabs])]);
    this.root.append(header, notes, h("div", { cls: "tce-main" }, [nav, this.sourcePane, stage]));
    this.renderTree();
    this.renderSource();
  }

  renderTree() {
    const view = this.index;
    /** @type {Map<string|null, CompileEntry[]>} */
    const children = new Map();
    const ids = new Set(view.compiles.map((c) => c.key));
    for (const c of view.compiles) {
      const parent = c.parent && ids.has(c.parent) ? c.parent : null;
      if (!children.has(parent)) children.set(parent, []);
      /** @type {CompileEntry[]} */ (children.get(parent)).push(c);
    }
    /** @param {string|null} parent @returns {HTMLElement} */
    const list = (parent) => {
      const ul = h("ul", { cls: "tce-tree" });
      for (const c of children.get(parent) || []) {
        const badges = c.markers.map((m) =>
          h("span", { cls: `tce-badge tce-badge-${m}`, text: MARKER_TEXT[/** @type {keyof MARKER_TEXT} */ (m)] || m }),
        );
        const item = h("button", {
          cls: "tce-compile", attrs: { "data-compile": c.key },
          title: `${c.label} (${c.status})`,
          on: { click: () => this.select({ compile: c.key, stage: this.paneFor(c, /** @type {Selection} */ (this.sel).stage) }) },
        }, [
          h("span", { cls: "tce-cid", text: c.compile_id + (c.rank !== null ? ` r${c.rank}` : "") }),
          h("span", { cls: "tce-cname", text: c.name || "(unknown frame)" }),
          ...badges,
        ]);
        const li = h("li", {}, [item]);
        if (children.has(c.key)) li.append(list(c.key));
        ul.append(li);
      }
      return ul;
    };
    this.tree.replaceChildren(h("div", { cls: "tce-heading", text: "Compiles" }), list(null));
  }

  renderSource() {
    const view = this.index;
    const box = h("div", { cls: "tce-source-body" });
    /** @type {Map<string, HTMLElement>} */
    this.sourceRows = new Map();
    for (const file of view.sources) {
      box.append(h("div", { cls: "tce-file", text: file.short_name, title: file.filename }));
      if (file.note) box.append(h("div", { cls: "tce-note", text: file.note }));
      file.windows.forEach((w, wi) => {
        if (wi > 0) box.append(h("div", { cls: "tce-gap", text: "⋮" }));
        const code = h("div", { cls: "tce-code" });
        code.style.setProperty("--tce-gutter", `${String(w.start + w.lines.length).length + 1}ch`);
        w.lines.forEach((text, i) => {
          const line = w.start + i;
          const key = w.src[i];
          const row = h("div", { cls: "tce-row", attrs: key !== null ? { "data-src": key } : {} });
          row.append(h("span", { cls: "tce-ln", text: String(line) }));
          const src = h("span", { cls: "tce-src" });
          appendHighlighted(text, "python", src);
          row.append(src);
          if (key !== null && this.store.palette.has(key)) {
            row.dataset.linked = "1";
            row.title = `${this.ctx.srcLabel(key)}: click to see what it became`;
            row.addEventListener("click", () => this.select({ src: /** @type {Selection} */ (this.sel).src === key ? null : key, node: null, kernel: null }));
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
    return this.index.compiles.find((c) => c.key === /** @type {Selection} */ (this.sel).compile);
  }

  renderCompile() {
    if (this.handle && this.handle.destroy) this.handle.destroy();
    this.handle = null;
    this.open = null;
    const sel = /** @type {Selection} */ (this.sel);
    const c = this.compile;
    for (const b of this.tree.querySelectorAll(".tce-compile")) {
      b.classList.toggle("tce-current", b.getAttribute("data-compile") === sel.compile);
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
        this.tabs.append(h("div", { cls: "tce-tabgroup", text: this.index.labels[group] || group }));
      }
      this.tabs.append(h("button", {
        cls: "tce-tab" + (p.id === sel.stage ? " tce-current" : ""), text: p.label,
        attrs: { role: "tab", "data-stage": p.id, "aria-selected": String(p.id === sel.stage) },
        on: { click: () => this.select({ stage: p.id }) },
      }));
    }
    const ref = c.panes.find((p) => p.id === sel.stage);
    this.paneTitle.replaceChildren(
      h("span", { cls: "tce-pane-group", text: ref ? this.index.labels[ref.group] || ref.group : "" }),
      h("span", { text: ref ? ref.label : "" }),
      h("span", { cls: "tce-pane-compile", text: c.label }),
    );
    for (const e of c.errors) this.paneErrors.append(stageError(e, this.index.labels[e.stage] || e.stage));
    if (!this.activeKeys().size) this.scrollSourceTo(c.src);
    this.updateHighlights();
    if (!ref) return;
    const ticket = ++this.renderCount;
    const loading = h("div", { cls: "tce-note tce-loading", text: `opening ${ref.label}…` });
    this.pane.append(loading);
    this.store.pane(c.key, ref.id).then((pane) => {
      if (ticket !== this.renderCount) return;
      loading.remove();
      this.showPane(pane);
    }, (err) => {
      if (ticket !== this.renderCount) return;
      loading.remove();
      this.paneErrors.append(h("div", { cls: "tce-error", text: String(err.message || err) }));
    });
  }

  /** @param {any} pane */
  showPane(pane) {
    this.open = pane;
    if (pane.kind === "output_code") {
      for (const k of /** @type {OutputCodePane} */ (pane).kernels) this.kernelSrc.set(k.id, k.src);
    }
    for (const e of pane.errors || []) this.paneErrors.append(stageError(e, this.index.labels[e.stage] || e.stage));
    const renderer = RENDERERS[pane.kind] || renderUnknown;
    this.handle = renderer(this.pane, pane, this.ctx);
    this.updateHighlights();
    const sel = /** @type {Selection} */ (this.sel);
    if (sel.node) this.revealNode(sel.node);
    if (sel.kernel && this.handle.revealKernel) this.handle.revealKernel(sel.kernel);
    const w = /** @type {any} */ (window);
    requestAnimationFrame(() => setTimeout(() => {
      w.__explorerPanesShown = (w.__explorerPanesShown || 0) + 1;
      // a marker tests and benchmarks can wait for without evaluating code in the page
      this.root.dataset.shown = String(w.__explorerPanesShown);
      if (w.__explorerFirstPaint === undefined) {
        w.__explorerFirstPaint = performance.now();
        performance.mark("tce-first-paint");
      }
    }, 0));
  }

  /** @param {string} name */
  revealNode(name) {
    if (!this.open || this.open.kind !== "graph" || !this.handle || !this.handle.reveal) return;
    const i = this.open.nodes.findIndex((/** @type {GcNode} */ n) => n.name === name);
    if (i >= 0) this.handle.reveal(i);
  }

  /** The source keys to colour now: the selected line, or the selected kernel's lines. */
  activeKeys() {
    const s = /** @type {Selection} */ (this.sel);
    if (s.src) return new Set([s.src]);
    if (s.kernel) return new Set(this.kernelSrc.get(s.kernel) || []);
    return new Set();
  }

  /** @param {string|null|undefined} key */
  srcClass(key) {
    if (!key || !this.activeKeys().has(key)) return "";
    const colour = this.store.palette.get(key);
    return `hl-${colour === undefined ? 0 : colour}`;
  }

  updateHighlights() {
    for (const [key, row] of this.sourceRows || []) {
      row.className = `tce-row tce-linked tce-mark-${this.store.palette.get(key)}` + hlClass(this.ctx, key);
    }
    this.scrollSourceTo([...this.activeKeys()][0]);
    if (this.handle) this.handle.update(/** @type {Selection} */ (this.sel));
  }

  /** @param {string|null|undefined} first */
  scrollSourceTo(first) {
    const body = this.sourcePane.querySelector(".tce-source-body");
    if (first && body && this.sourceRows && this.sourceRows.has(first)) {
      scrollWithin(/** @type {HTMLElement} */ (body), /** @type {HTMLElement} */ (this.sourceRows.get(first)));
    }
  }
}

/**
 * anywidget entry point.
 * @param {{model: Model, el: HTMLElement, experimental?: Experimental}} ctx
 * @returns {() => void} cleanup
 */
function render({ model, el, experimental }) {
  const shell = new Shell(model, el, experimental);
  return () => shell.destroy();
}

export default { render };
// for pages that inline the bundle and draw one graph (tests/graph_fixtures.py)
export { GraphCanvas } from "./graph/canvas.js";
export { graphView } from "./store.js";

/**
 * A stage that failed, as one line; where the explorer's own code failed, its traceback
 * folded under the line (for a bug report).
 * @param {PaneError} e
 * @param {string} label
 * @returns {HTMLElement}
 */
function stageError(e, label) {
  const text = `${label}: ${e.message}`;
  if (!e.traceback) return h("div", { cls: "tce-error", text });
  return h("details", { cls: "tce-error" }, [
    h("summary", { text }),
    h("pre", { cls: "tce-traceback", text: e.traceback }),
  ]);
}
