// @ts-check
// Renderers of Inductor's panes: output code with its kernels, the fused schedule, and
// a Triton kernel's lowering.

/** @import { OutputCodeView } from "../store.js" */
/** @import { Renderer } from "../util.js" */
/** @import { KernelInfo, LabResult, LoweredStageInfo, SchedulePane, TritonLoweringPane, VariantInfo } from "./typedefs.js" */
/** @import { Ctx } from "../util.js" */
import { PALETTE, h, showKernel, gridText, timingRows, detailTable, hlClass } from "../util.js";
import { CodeView } from "../code_view.js";
import { renderBlocks } from "./frame.js";

/**
 * Output code verbatim; a kernel's lines carry its colour when one of its source lines
 * is selected. Clicking a kernel line or chip selects the kernel; the selected kernel's
 * facts show below the chips.
 * @type {Renderer}
 */
function renderOutputCode(el, pane, ctx) {
  const p = /** @type {OutputCodeView} */ (pane);
  const byId = new Map(p.kernels.map((k) => [k.id, k]));
  const list = h("div", { cls: "tce-kernels" }, [h("span", { cls: "tce-key", text: "kernels" })]);
  const details = h("div", { cls: "tce-details" });
  /** @type {Map<string, HTMLElement>} */
  const chips = new Map();
  for (const k of p.kernels) {
    const chip = h("button", {
      cls: "tce-chip tce-kernel", text: k.name, title: `${k.language} kernel`, attrs: { "data-kernel": k.id },
      on: { click: () => { ctx.select({ kernel: ctx.selection.kernel === k.id ? null : k.id, src: null, node: null }); revealKernel(k.id); } },
    });
    chips.set(k.id, chip);
    list.append(chip);
  }
  if (!p.kernels.length) list.append(h("span", { cls: "tce-note", text: "no kernels in this output code" }));
  if (p.path) list.append(h("span", { cls: "tce-path", text: p.path, title: "where Inductor wrote this file" }));
  /** @param {string[]} keys */
  const anySrc = (keys) => { for (const k of keys) { const c = hlClass(ctx, k); if (c) return c; } return ""; };
  const view = new CodeView(p.text, {
    language: p.language,
    languageOf: (i) => p.kernel_language[i],
    lineClass: (i) => {
      const kid = p.line_kernel[i];
      if (!kid) return "";
      const k = byId.get(kid);
      let cls = " tce-in-kernel";
      if (k) cls += anySrc(k.src);
      if (kid === ctx.selection.kernel) cls += " hl-kernel";
      return cls;
    },
    onLine: (i) => {
      const kid = p.line_kernel[i];
      if (kid && kid !== ctx.selection.kernel) ctx.select({ kernel: kid, src: null, node: null });
    },
  });
  el.append(list, details, view.el);
  /** @param {string} kid */
  function revealKernel(kid) {
    const k = byId.get(kid);
    if (k) view.scrollTo((k.first_line || k.call_lines[0] || 1) - 1);
  }
  /** @param {KernelInfo} k */
  function kernelDetails(k) {
    const srcs = k.src.map((key) => h("button", {
      cls: "tce-link" + hlClass(ctx, key), text: ctx.srcLabel(key), title: key,
      on: { click: () => ctx.select({ src: key, kernel: k.id }) },
    }));
    const lines = k.first_line ? `lines ${k.first_line}–${k.last_line}` : "";
    const calls = k.call_lines.length ? `called at line ${k.call_lines.join(", ")}` : "";
    return h("div", { cls: "tce-detail" }, [
      h("div", { cls: "tce-detail-title", text: `kernel ${k.name}` }),
      detailTable([["language", k.language], ["in output code", [lines, calls].filter(Boolean).join(", ")],
        ["post-grad nodes", k.post_grad_nodes.join(", ")], ["source nodes", k.source_nodes.join(", ")],
        ["grid", gridText(k.grid)], ...timingRows(k.timing)].filter((r) => r[1])),
      srcs.length ? h("div", { cls: "tce-detail-row" }, [h("span", { cls: "tce-key", text: "source lines" }), ...srcs]) : null,
      k.lowering ? h("div", { cls: "tce-detail-row" }, [h("button", {
        cls: "tce-button", text: "Show Triton lowering", attrs: { "data-lowering": k.lowering },
        on: { click: () => ctx.select({ stage: k.lowering, kernel: k.id }) },
      })]) : null,
    ]);
  }
  const update = () => {
    view.refresh();
    const sel = ctx.selection;
    for (const [id, chip] of chips) {
      const k = /** @type {KernelInfo} */ (byId.get(id));
      chip.className = "tce-chip tce-kernel" + anySrc(k.src) + (id === sel.kernel ? " tce-selected" : "");
    }
    const k = sel.kernel ? byId.get(sel.kernel) : undefined;
    details.replaceChildren(...(k ? [kernelDetails(k)] : []));
    details.classList.toggle("tce-open", Boolean(k));
  };
  const first = ctx.selection.kernel && byId.has(ctx.selection.kernel)
    ? ctx.selection.kernel
    : (p.kernels.find((k) => anySrc(k.src)) || { id: null }).id;
  if (first) requestAnimationFrame(() => revealKernel(/** @type {string} */ (first)));
  return { update, revealKernel };
}

/** @type {Renderer} */
function renderSchedule(el, pane, ctx) {
  const p = /** @type {SchedulePane} */ (pane);
  if (p.fused.length) {
    const t = h("table", { cls: "tce-table tce-fused" }, [
      h("tr", {}, ["scheduler node", "kind", "members", "buffers"].map((x) => h("th", { text: x }))),
    ]);
    for (const f of p.fused) {
      t.append(h("tr", {}, [h("td", { text: f.name }), h("td", { text: f.kind + (f.extern_kernel ? ` (${f.extern_kernel})` : "") }),
        h("td", { text: f.members.join(", ") }), h("td", { text: f.buffers.join(", ") })]));
    }
    el.append(h("div", { cls: "tce-block" }, [h("div", { cls: "tce-block-title", text: "Fused nodes" }), t]));
  }
  const views = renderBlocks(el, p.blocks, ctx);
  return { update: () => views.forEach((v) => v.refresh()) };
}

/**
 * Triton's lowering of one kernel: the kernel source (left) beside one stage of one
 * compiled variant (right), lines linked through the compiler's `source_line` map. The
 * chosen line, stage and variant are pane state (ctx.state), not the shared selection.
 * @type {Renderer}
 */
function renderTritonLowering(el, pane, ctx) {
  const p = /** @type {TritonLoweringPane} */ (pane);
  const key = `lowered|${ctx.selection.compile}|${p.id}`;
  /** @type {{variant: number, stage: string, line: number|null}} */
  const state = ctx.state.get(key) || { variant: p.default_variant, stage: "ttir", line: null };
  ctx.state.set(key, state);
  if (!p.variants[state.variant]) state.variant = 0;
  /** @type {VariantInfo[]} the captured variants, then the kernel lab's latest lowering */
  let variants = [...p.variants];
  /** @type {LabResult|null} */
  let labResult = null;
  /** @type {{destroy(): void}|null} */
  let lab = null;
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
  /** @type {LoweredStageInfo|null} */
  let stage = null;
  const status = h("span", { cls: "tce-count" });

  const sourceView = new CodeView(p.source, {
    language: "python",
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
  const labButton = ctx.ask && p.variants.length ? h("button", {
    cls: "tce-link", text: "edit in kernel lab", attrs: { "data-lab-open": "" },
    title: "edit this kernel, its launch config or target and see it lowered again (needs Triton installed)",
    on: { click: () => openLab() },
  }) : null;
  const sourceHead = h("div", { cls: "tce-lowering-head" }, [
    h("span", { cls: "tce-block-title", text: `${ctx.labels.triton_source || "Triton source"} · ${p.kernel_name}` }),
    h("button", {
      cls: "tce-link", text: "in output code", title: "show this kernel in the output code",
      on: { click: () => showKernel(ctx, p.kernel) },
    }),
    labButton,
  ]);
  const labMessage = h("div", { cls: "tce-error tce-lowering-msg" });
  sourceCol.append(sourceHead, labMessage, sourceView.el);

  async function openLab() {
    const ask = ctx.ask;
    if (lab || !ask) return;
    labMessage.textContent = "";
    let mod;
    try {
      mod = await labModule(ctx);
    } catch (exc) {
      labMessage.textContent = String(/** @type {any} */ (exc).message || exc);
      return;
    }
    const recorded = p.variants[p.default_variant] || p.variants[0];
    /** @type {Object<string, string>} */
    const config = {};
    for (const [k, v] of Object.entries(recorded.config)) if (k !== "num_ctas") config[k] = v;
    const arch = /sm(\d+)/.exec(recorded.target);
    // (not `hidden`: the stylesheet's display rules outrank that attribute)
    sourceHead.style.display = "none";
    sourceView.el.style.display = "none";
    lab = mod.mountLab(sourceCol, {
      source: p.source, config, target: arch ? `sm_${arch[1]}` : "sm_90",
      ask: (/** @type {any} */ msg, /** @type {AbortSignal} */ signal) =>
        ask("_relower", { ...msg, compile: ctx.selection.compile, kernel: p.kernel }, signal),
      onResult: (/** @type {LabResult} */ r) => {
        labResult = r;
        variants = [...p.variants, r.variant];
        state.variant = variants.length - 1;
        renderVariants(); renderInfo(); renderStage();
      },
      onClose: closeLab,
    });
  }

  function closeLab() {
    if (lab) lab.destroy();
    lab = null;
    labResult = null;
    variants = [...p.variants];
    state.variant = Math.min(state.variant, variants.length - 1);
    sourceHead.style.display = "";
    sourceView.el.style.display = "";
    renderVariants(); renderInfo(); renderStage();
  }

  function renderVariants() {
    variantBar.replaceChildren(h("span", { cls: "tce-key", text: "variant" }));
    variants.forEach((v, i) => {
      const config = Object.entries(v.config).map(([k, x]) => `${k}=${x}`).join(" · ");
      const edited = labResult !== null && i === variants.length - 1;
      variantBar.append(h("button", {
        cls: "tce-button tce-variant" + (i === state.variant ? " tce-current" : ""),
        title: `hash ${v.hash}${v.cache_key ? `\nTriton cache folder ${v.cache_key}` : ""}`,
        attrs: { "data-variant": edited ? "lab" : String(i), "aria-pressed": String(i === state.variant) },
        on: { click: () => { state.variant = i; renderVariants(); renderInfo(); renderStage(); } },
      }, [edited ? h("span", { cls: "tce-chosen", text: "lab" }) : null, config || `variant ${i + 1}`,
        v.chosen ? h("span", { cls: "tce-chosen", text: "chosen" }) : null]));
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
    for (const [k, x] of p.info) facts.push([k, x]);
    info.replaceChildren(...facts.map(([k, x]) => h("span", { cls: "tce-fact" }, [
      h("span", { cls: "tce-key", text: k }), h("span", { cls: "tce-fact-value", text: x }),
    ])));
  }

  function renderStage() {
    const v = variants[state.variant];
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
    } else if (stage && stage.text) {
      const sl = stage.source_line;
      for (const n of sl) if (n !== null) linked.add(n);
      // the kernel lab's lowering: lines that differ from the captured stage
      const changed = new Set(labResult && state.variant === variants.length - 1 ? labResult.changed[stage.stage] || [] : []);
      if (stage.note) stageCol.append(h("div", { cls: "tce-note tce-lowering-msg", text: stage.note }));
      stageView = new CodeView(stage.text, {
        language: stage.language,
        lineClass: (i) => {
          const n = sl[i];
          const diff = changed.has(i) ? " tce-lab-changed" : "";
          return diff + (n === null || n === undefined ? "" : mark(n) + (n === state.line ? hl(n) : ""));
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
    const count = stage.source_line.filter((n) => n === state.line).length;
    status.textContent = count
      ? `line ${state.line}: ${count.toLocaleString()} ${stage.label} line${count === 1 ? "" : "s"}`
      : `line ${state.line}: no ${stage.label} lines`;
  }

  function revealLowered() {
    if (!stageView || state.line === null || !stage) return;
    const first = stage.source_line.indexOf(state.line);
    if (first >= 0) stageView.scrollTo(first);
  }

  renderVariants();
  renderInfo();
  renderStage();
  requestAnimationFrame(() => {
    sourceView.scrollTo(state.line !== null ? state.line - 1 : Math.max(0, (p.def_line || 1) - 4));
    revealLowered();
  });
  return { update: () => refresh(), destroy: () => { if (lab) lab.destroy(); } };
}

/**
 * The kernel lab's module (dist/editors.js, the editors' bundle), fetched from Python
 * once per widget and imported from a blob URL, as anywidget imports a widget's `_esm`.
 * @param {Ctx} ctx @returns {Promise<any>}
 */
function labModule(ctx) {
  let mod = ctx.state.get("labModule");
  if (!mod) {
    const ask = /** @type {NonNullable<Ctx["ask"]>} */ (ctx.ask);
    mod = ask("_lab_module", {}).then((code) => {
      const url = URL.createObjectURL(new Blob([code], { type: "text/javascript" }));
      return import(/* webpackIgnore: true */ url).finally(() => URL.revokeObjectURL(url));
    });
    mod.catch(() => ctx.state.delete("labModule")); // a later click tries again
    ctx.state.set("labModule", mod);
  }
  return mod;
}

export { renderOutputCode, renderSchedule, renderTritonLowering };
