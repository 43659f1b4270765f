// @ts-check
// Renderers of choices and costs: compile time, kernel time, autotuning.

/** @import { Renderer } from "../util.js" */
/** @import { ProfilePane, ProfileRow } from "./typedefs.js" */
import { h, showKernel, kernelName, fmt, detailTable, hlClass } from "../util.js";

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
function renderKernelTiming(el, pane, ctx) {
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
  /** @type {[HTMLElement, any][]} */
  const trs = [];
  for (const r of rows) {
    const name = h("button", {
      cls: "tce-link tce-kt-name", text: r.name, title: `${r.name}: show its code`,
      on: { click: (e) => { e.stopPropagation(); showKernel(ctx, r.kernel); } },
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
      on: { click: () => ctx.select({ kernel: ctx.selection.kernel === r.kernel ? null : r.kernel, src: null, node: null }) },
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
    trs.push([tr, r]);
    t.append(tr);
  }
  const call = pane.call;
  if (call) {
    // the whole call first: "compiled is slower than eager" is what a user needs to see
    el.append(h("div", { cls: "tce-block tce-call" + (call.slower ? " tce-call-slower" : "") }, [
      h("div", { cls: "tce-block-title", text: call.headline }),
      detailTable(call.rows),
      ...call.notes.map((/** @type {string} */ n) => h("div", { cls: "tce-note", text: n })),
    ]));
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
      for (const [tr, r] of trs) {
        const hit = r.src.map((/** @type {string} */ s) => hlClass(ctx, s)).find(Boolean);
        tr.className = "tce-kt-row" + (hit || "") + (r.kernel === ctx.selection.kernel ? " tce-selected" : "");
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
function renderAutotuning(el, pane, ctx) {
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
          cls: "tce-link tce-at-name", text: r.name, title: `runs as ${kernelName(ctx, r.kernel)}: show its code`,
          on: { click: () => showKernel(ctx, r.kernel) },
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
    const note = op.kernel ? `chosen ${op.chosen} runs as ${kernelName(ctx, op.kernel)} in the output code`
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
      for (const [tr, kid] of linked) tr.classList.toggle("tce-selected", kid === ctx.selection.kernel);
    },
  };
}

/** @type {Renderer} */
function renderUnknown(el, pane) {
  el.append(h("div", { cls: "tce-note", text: `No view for stage kind ${pane.kind}.` }));
  return { update: () => {} };
}

/**
 * The user's own profiled run: what linked, then kernels, source lines and modules by time,
 * each a link to what it names (Python made every link; this only draws them).
 * @type {Renderer}
 */
function renderProfile(el, pane, ctx) {
  const p = /** @type {ProfilePane} */ (pane);
  el.append(h("div", { cls: "tce-note tce-profile-summary", text: p.summary }));
  if (p.unlinked.length) el.append(h("div", { cls: "tce-note", text: `not linked: ${p.unlinked.join(", ")}` }));
  /** @param {string} title @param {string} unit @param {ProfileRow[]} rows */
  const table = (title, unit, rows) => {
    if (!rows.length) return;
    const t = h("table", { cls: "tce-table tce-profile" }, [h("tr", {}, [
      h("th", { text: title }), h("th", { text: "" }), h("th", { cls: "tce-num", text: unit }),
      h("th", { text: "time" }), h("th", { cls: "tce-num", text: "share" }),
    ])]);
    const top = Math.max(...rows.map((r) => r.total_us), 1e-9);
    for (const r of rows) {
      const l = r.link;
      const go = l.compile || l.stage || l.src || l.kernel;
      const name = go
        ? h("button", {
          cls: "tce-link", text: l.text,
          on: { click: () => ctx.select({ compile: l.compile || ctx.selection.compile, stage: l.stage || ctx.selection.stage, src: l.src, node: null, kernel: l.kernel }) },
        })
        : h("span", { text: l.text });
      t.append(h("tr", { cls: "tce-profile-row" }, [
        h("td", {}, [name]), h("td", { cls: "tce-muted", text: r.detail }),
        h("td", { cls: "tce-num", text: String(r.events) }),
        barCell(r.total_us / top, `${fmt(r.total_us)} µs`, "time", `${r.total_us} µs in the profiled run`),
        h("td", { cls: "tce-num", text: `${fmt(100 * r.share)}%` }),
      ]));
    }
    el.append(h("div", { cls: "tce-block" }, [h("div", { cls: "tce-block-title", text: title }), t]));
  };
  table("kernels", "events", p.kernels);
  table("source lines", "kernels", p.lines);
  table("modules", "kernels", p.modules);
  for (const n of p.notes) el.append(h("div", { cls: "tce-note", text: n }));
  return { update: () => {} };
}

export { renderMetrics, renderKernelTiming, renderAutotuning, renderUnknown, renderProfile };
